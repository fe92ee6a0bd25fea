#!/bin/sh
# SPDX-License-Identifier: MIT
# glibc's semaphores against the interposer's, as ratios from one process:
#   sem_ratio.sh PRELOAD_SO SEM_PINGPONG [busy] [ARGS...]
# Runs SEM_PINGPONG (bench/preload/sem_pingpong.c), which measures both
# implementations in alternating repetitions and prints medians and the
# ratio hpsync/glibc (below 1: the interposer is faster).  With "busy", a
# process spinning on one core competes for the CPUs throughout.  ARGS go
# to SEM_PINGPONG after the library.  A measurement, not a test: the
# figures go to docs/preload.md.
set -u
so=$1 prog=$2
shift 2
busy=
if [ "${1:-}" = busy ]; then busy=1; shift; fi
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null' EXIT
if [ -n "$busy" ]; then
    sh -c 'while :; do :; done' &
    hog=$!
fi
echo "sem_ratio: $(date +%T)${busy:+, with a busy process}"
env -u LD_PRELOAD "$prog" "$so" "$@"
