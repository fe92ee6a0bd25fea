#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks of the interposer's settings on a small program (stats_global).
#   settings_checks.sh stats PRELOAD_SO PROGRAM SYMBOL
#       HPSYNC_STATS=1: the table on stderr names the global mutex SYMBOL.
#   settings_checks.sh sync-stats PRELOAD_SO PROGRAM
#       HPSYNC_STATS=1 on stats_global: the semaphore and barrier tables name
#       its globals with the exact counts it makes (3000 waits and posts;
#       300 barrier waits in 100 rounds).
#   settings_checks.sh sem-used PRELOAD_SO PROGRAM [ARGS...]
#       HPSYNC_STATS=1: some process of PROGRAM (it may start others, as
#       pyenv's python3 shim does) reports semaphores that it waited on and
#       posted through the interposer.
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
sync-stats)
    so=$2 prog=$3
    env LD_PRELOAD="$so" HPSYNC_STATS=1 "$prog" 2>"$err" >/dev/null
    rc=$?
    cat "$err"
    [ $rc -eq 0 ] || { echo "settings_checks: FAIL program exited $rc under HPSYNC_STATS=1" >&2; exit 1; }
    # A table's row for SYMBOL, with the units of the wait columns dropped
    # so that every column is one field.
    row() { awk -v t="$1" -v s="$2" '/^hpsync / {in_t = index($0, t) == 1; next} in_t && index($0, s) {print; exit}' "$err" |
            sed 's/ \(ns\|us\|ms\)\>//g'; }
    set -- $(row "hpsync semaphores:" hps_stats_global_sem)
    [ "${2:-}" = 3000 ] && [ "${6:-}" = 3000 ] || {
        echo "settings_checks: FAIL semaphore row wants 3000 waits and 3000 posts: $*" >&2; exit 1; }
    set -- $(row "hpsync barriers:" hps_stats_global_barrier)
    [ "${2:-}" = 300 ] && [ "${3:-}" = 100 ] || {
        echo "settings_checks: FAIL barrier row wants 300 waits in 100 rounds: $*" >&2; exit 1; }
    ;;
sem-used)
    so=$2; shift 2
    env LD_PRELOAD="$so" HPSYNC_STATS=1 HPSYNC_STATS_TOP=100000 "$@" 2>"$err" >/dev/null
    rc=$?
    [ $rc -eq 0 ] || { cat "$err"; echo "settings_checks: FAIL program exited $rc under HPSYNC_STATS=1" >&2; exit 1; }
    # Sum the waits and posts of every semaphore row (units dropped so
    # every column is one field).
    sums=$(sed 's/ \(ns\|us\|ms\)\>//g' "$err" |
           awk '/^hpsync semaphores:/ {t = 1; next} /^hpsync / {t = 0} t && $1 ~ /^0x/ {w += $2; p += $6; n++}
                END {print n + 0, w + 0, p + 0}')
    set -- $sums
    echo "semaphores $1, waits $2, posts $3"
    [ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] || {
        echo "settings_checks: FAIL no semaphore waited on and posted through the interposer" >&2; exit 1; }
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
    echo "usage: $0 stats|sync-stats|sem-used|bogus|elide-stats|oneline ..." >&2; exit 2 ;;
esac
echo "settings_checks $mode: ok"
