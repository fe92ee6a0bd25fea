#!/bin/sh
# SPDX-License-Identifier: MIT
# corrupt.sh PROGRAM: every row of a TM benchmark binary must catch a
# damaged result (--selftest-corrupt): exit status 1 and one line
# "<row>: wrong result: ..." on stderr; and the same row without the damage
# must pass (so the failure is the damage's, not the row's).
prog=$1
rows="bank hashset-90 hashset-50 list tree-1k tree-64k counter"
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
status=0
for row in $rows; do
  timeout 30 "$prog" --rows "$row" --duration-ms 5 --selftest-corrupt >/dev/null 2>"$err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q "$row: wrong result: " "$err"; then
    echo "FAIL $row: corrupted result not caught (exit $rc): $(tail -n 1 "$err")"
    status=1
    continue
  fi
  timeout 30 "$prog" --rows "$row" --duration-ms 5 >/dev/null 2>"$err" || {
    echo "FAIL $row: the undamaged run fails: $(tail -n 1 "$err")"
    status=1
    continue
  }
  echo "ok $row: the damage is caught"
done
exit $status
