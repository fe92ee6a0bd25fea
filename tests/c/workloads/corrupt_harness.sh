#!/bin/sh
# SPDX-License-Identifier: MIT
# corrupt_harness.sh PROGRAM WORKLOAD [VARIANT...]: a workload program must
# catch a damaged result (--selftest-corrupt) on every kind of variant (by
# default the first of its own, a static TM one, the dynamic one; or the
# VARIANTs named, for a workload whose own variants differ in kind, such as
# graph's lock, elided and lockset paths): exit status 1 and one line
# "<workload>: <row>: variant <v> (...): wrong result: ..." on stderr; and
# the same run without the damage must pass (so the failure is the damage's).
prog=$1
wl=$2
shift 2
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
status=0
# The first of the workload's own variants, a static k, the dynamic form.
own=$("$prog" --variants '?' 2>&1 | sed -n 's/.*choose from \([^,]*\),.*/\1/p')
[ $# -gt 0 ] || set -- "$own" tm-k4 tm-dyn
for v in "$@"; do
  args="--quick --scale 0.01 --reps 1 --threads 2 --variants $v"
  timeout 60 "$prog" $args --selftest-corrupt >/dev/null 2>"$err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q "^hps-workload-$wl: $wl: .*: variant $v (.*): wrong result: " "$err"; then
    echo "FAIL $v: corrupted result not caught (exit $rc): $(tail -n 1 "$err")"
    status=1
    continue
  fi
  timeout 60 "$prog" $args >/dev/null 2>"$err" || {
    echo "FAIL $v: the undamaged run fails: $(tail -n 1 "$err")"
    status=1
    continue
  }
  echo "ok $v: the damage is caught"
done
exit $status
