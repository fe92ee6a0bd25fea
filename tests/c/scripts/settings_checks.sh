#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks of the interposer's settings on a small program (stats_global).
#   settings_checks.sh stats PRELOAD_SO PROGRAM SYMBOL
#       HPSYNC_STATS=1: the table on stderr names the global mutex SYMBOL.
#   settings_checks.sh bogus PRELOAD_SO PROGRAM
#       HPSYNC_LOCK=bogus: exactly one "hpsync:" line, and the program succeeds.
#   settings_checks.sh elide-stats PRELOAD_SO PROGRAM SYMBOL
#       HPSYNC_STATS=1 HPSYNC_ELIDE=1 HPSYNC_ELIDE_BACKEND=inject:commit: the
#       elision table names SYMBOL, with commits, attempts = commits + aborts.
#   settings_checks.sh oneline PATTERN PROGRAM [ARGS...]
#       PROGRAM as the environment has it (a bad setting set by the caller):
#       it succeeds and prints exactly one "hpsync:" line, containing PATTERN.
set -u
mode=$1
err=$(mktemp) || exit 2
trap 'rm -f "$err"' EXIT

# After a run into $err with status $rc: success, and one line naming $1.
expect_one_line() {
    n=$(grep -c '^hpsync:' "$err")
    [ $rc -eq 0 ] || { echo "settings_checks: FAIL program exited $rc with $1" >&2; exit 1; }
    [ "$n" -eq 1 ] || { echo "settings_checks: FAIL $n 'hpsync:' lines on stderr, expected exactly 1" >&2; exit 1; }
    grep '^hpsync:' "$err" | grep -qF "$1" || { echo "settings_checks: FAIL the line does not name $1" >&2; exit 1; }
}

case $mode in
stats)
    so=$2 prog=$3 sym=$4
    env LD_PRELOAD="$so" HPSYNC_STATS=1 "$prog" 2>"$err" >/dev/null
    rc=$?
    cat "$err"
    [ $rc -eq 0 ] || { echo "settings_checks: FAIL program exited $rc under HPSYNC_STATS=1" >&2; exit 1; }
    grep -q '^hpsync stats:' "$err" || { echo "settings_checks: FAIL no statistics table on stderr" >&2; exit 1; }
    grep -q "$sym" "$err" || {
        echo "settings_checks: FAIL the table does not name the global mutex '$sym'" >&2; exit 1; }
    ;;
bogus)
    so=$2 prog=$3
    env LD_PRELOAD="$so" HPSYNC_LOCK=bogus "$prog" 2>"$err" >/dev/null
    rc=$?
    cat "$err"
    expect_one_line "HPSYNC_LOCK='bogus'"
    ;;
elide-stats)
    so=$2 prog=$3 sym=$4
    env LD_PRELOAD="$so" HPSYNC_STATS=1 HPSYNC_ELIDE=1 HPSYNC_ELIDE_BACKEND=inject:commit "$prog" 2>"$err" >/dev/null
    rc=$?
    cat "$err"
    [ $rc -eq 0 ] || { echo "settings_checks: FAIL program exited $rc with elision statistics" >&2; exit 1; }
    grep -q '^hpsync elision (backend inject)' "$err" || {
        echo "settings_checks: FAIL no 'hpsync elision (backend inject)' table on stderr" >&2; exit 1; }
    # The row of SYMBOL in the elision table (after its header line).
    row=$(awk -v s="$sym" '/^hpsync elision/ {t = 1; next} t && /^lock / {next} t && index($0, s) {print; exit}' "$err")
    [ -n "$row" ] || { echo "settings_checks: FAIL the elision table does not name '$sym'" >&2; exit 1; }
    set -- $row
    [ "$3" -gt 0 ] 2>/dev/null || { echo "settings_checks: FAIL no commits for '$sym': $row" >&2; exit 1; }
    # Every transaction begun either committed or aborted.
    [ "$2" -eq $(($3 + $4 + $5 + $6 + $7 + $8)) ] || {
        echo "settings_checks: FAIL attempts != commits + aborts: $row" >&2; exit 1; }
    ;;
oneline)
    pat=$2; shift 2
    "$@" 2>"$err"
    rc=$?
    cat "$err"
    expect_one_line "$pat"
    ;;
*)
    echo "usage: $0 stats|bogus|elide-stats|oneline ..." >&2; exit 2 ;;
esac
echo "settings_checks $mode: ok"
