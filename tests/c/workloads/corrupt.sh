#!/bin/sh
# SPDX-License-Identifier: MIT
# corrupt.sh NAME PROGRAM ARGS...: a workload must catch a damaged result
# (--selftest-corrupt): exit status 1, one line "<NAME>: <variant> ...:
# wrong result: ..." on stderr and nothing on stdout (a failed run stores
# nothing); and the same run without the damage must pass, so the failure
# is the damage's.
name=$1
shift
out=$(mktemp) && err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
timeout 60 "$@" --selftest-corrupt >"$out" 2>"$err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "$name: .*: wrong result: " "$err" || [ -s "$out" ]; then
  echo "FAIL: corrupted result not caught (exit $rc, $(wc -c <"$out") bytes on stdout): $(tail -n 1 "$err")"
  exit 1
fi
echo "caught: $(tail -n 1 "$err")"
timeout 60 "$@" >"$out" 2>"$err" || {
  echo "FAIL: the undamaged run fails: $(tail -n 1 "$err")"
  exit 1
}
echo "ok: the undamaged run validates"
