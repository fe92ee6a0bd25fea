#!/bin/sh
# SPDX-License-Identifier: MIT
# run_job.sh OSHRUN NP STATUS REGEX PROGRAM ARGS...
# Runs PROGRAM as NP PEs under OSHRUN and checks:
#  - the exit status: STATUS is a number, or "nonzero";
#  - stderr: with REGEX not "-", at least one line starts "hpsync" (the
#    library's "hpsync-shmem:" or the settings parser's "hpsync:") and every
#    such line matches REGEX (the error's one line; each PE that hit it may
#    say so), and no line reports a crash;
#  - nothing of the job is left in /dev/shm (oshrun names its jobs
#    o<its pid>x..., so the job's files are hpsync-shmem-o<pid>x*; names
#    there before the job are a killed job's of old whose pid came round
#    again, not this one's: a fresh-clone run failed on one).
oshrun=$1 np=$2 want=$3 regex=$4
shift 4
err=$(mktemp)
trap 'rm -f "$err"' EXIT
before=$(ls /dev/shm 2>/dev/null | grep '^hpsync-shmem-o')
"$oshrun" -np "$np" "$@" 2>"$err" &
pid=$!
wait $pid
rc=$?
cat "$err" >&2
fail() { echo "run_job: FAIL $*" >&2; exit 1; }
if [ "$want" = nonzero ]; then
    [ $rc -ne 0 ] || fail "exit status 0, expected non-zero"
else
    [ $rc -eq "$want" ] || fail "exit status $rc, expected $want"
fi
if [ "$regex" != - ]; then
    lines=$(grep '^hpsync' "$err")
    [ -n "$lines" ] || fail "no line starting with hpsync on stderr"
    bad=$(printf '%s\n' "$lines" | grep -Ev -- "$regex")
    [ -z "$bad" ] || fail "a line does not match '$regex': $bad"
    grep -Eq 'Segmentation|Aborted|core dumped|signal 11|signal 6' "$err" &&
        fail "a PE crashed instead of reporting"
    grep -q 'was not caught' "$err" && fail "a PE went on past the error"
fi
left=$(ls /dev/shm 2>/dev/null | grep "^hpsync-shmem-o${pid}x" | grep -vxF -e "$before")
[ -z "$left" ] || fail "left in /dev/shm: $left"
exit 0
