#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks of the interposer's settings on a small program (stats_global).
#   settings_checks.sh stats PRELOAD_SO PROGRAM SYMBOL
#       HPSYNC_STATS=1: the table on stderr names the global mutex SYMBOL.
#   settings_checks.sh bogus PRELOAD_SO PROGRAM
#       HPSYNC_LOCK=bogus: exactly one "hpsync:" line, and the program succeeds.
set -u
mode=$1 so=$2 prog=$3
err=$(mktemp) || exit 2
trap 'rm -f "$err"' EXIT
case $mode in
stats)
    sym=$4
    env LD_PRELOAD="$so" HPSYNC_STATS=1 "$prog" 2>"$err" >/dev/null
    rc=$?
    cat "$err"
    [ $rc -eq 0 ] || { echo "settings_checks: FAIL program exited $rc under HPSYNC_STATS=1" >&2; exit 1; }
    grep -q '^hpsync stats:' "$err" || { echo "settings_checks: FAIL no statistics table on stderr" >&2; exit 1; }
    grep -q "$sym" "$err" || {
        echo "settings_checks: FAIL the table does not name the global mutex '$sym'" >&2; exit 1; }
    ;;
bogus)
    env LD_PRELOAD="$so" HPSYNC_LOCK=bogus "$prog" 2>"$err" >/dev/null
    rc=$?
    cat "$err"
    n=$(grep -c '^hpsync:' "$err")
    [ $rc -eq 0 ] || { echo "settings_checks: FAIL program exited $rc with HPSYNC_LOCK=bogus" >&2; exit 1; }
    [ "$n" -eq 1 ] || { echo "settings_checks: FAIL $n 'hpsync:' lines on stderr, expected exactly 1" >&2; exit 1; }
    grep -q "HPSYNC_LOCK='bogus'" "$err" || { echo "settings_checks: FAIL the line does not name HPSYNC_LOCK='bogus'" >&2; exit 1; }
    ;;
*)
    echo "usage: $0 stats|bogus PRELOAD_SO PROGRAM [SYMBOL]" >&2; exit 2 ;;
esac
echo "settings_checks $mode: ok"
