#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks of the TM settings' effect on stderr.
#   tm_checks.sh oneline PATTERN PROGRAM [ARGS...]
#       PROGRAM succeeds and prints exactly one "hpsync:" line, containing
#       PATTERN (no line at all when PATTERN is empty).
#   tm_checks.sh summary PROGRAM [ARGS...]
#       PROGRAM succeeds and HPSYNC_TM_STATS=1's summary names the backend
#       and the counts of commits and aborts by cause.
set -u
mode=$1
shift
err=$(mktemp) || exit 2
trap 'rm -f "$err"' EXIT
case $mode in
oneline)
    pat=$1
    shift
    "$@" 2>"$err"
    rc=$?
    cat "$err" >&2
    [ $rc -eq 0 ] || { echo "tm_checks: FAIL program exited $rc" >&2; exit 1; }
    n=$(grep -c '^hpsync:' "$err")
    want=1
    [ -n "$pat" ] || want=0
    [ "$n" -eq $want ] || { echo "tm_checks: FAIL $n 'hpsync:' lines, expected $want" >&2; exit 1; }
    [ -z "$pat" ] || grep '^hpsync:' "$err" | grep -qF -- "$pat" ||
        { echo "tm_checks: FAIL the line does not contain '$pat'" >&2; exit 1; }
    ;;
summary)
    "$@" 2>"$err"
    rc=$?
    cat "$err" >&2
    [ $rc -eq 0 ] || { echo "tm_checks: FAIL program exited $rc" >&2; exit 1; }
    grep -q '^hpsync tm: backend norec' "$err" || { echo "tm_checks: FAIL no backend line" >&2; exit 1; }
    grep -q '^hpsync tm: commits 116 (read-only 5), aborts 5' "$err" ||
        { echo "tm_checks: FAIL commit/abort counts missing or wrong" >&2; exit 1; }
    grep -q '^hpsync tm: aborts by cause: .*explicit 4 ro_write 1' "$err" ||
        { echo "tm_checks: FAIL causes missing or wrong" >&2; exit 1; }
    ;;
*)
    echo "tm_checks: unknown mode $mode" >&2
    exit 2
    ;;
esac
