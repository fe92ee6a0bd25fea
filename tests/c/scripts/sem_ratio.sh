#!/bin/sh
# SPDX-License-Identifier: MIT
# glibc's semaphores against the interposer's, as ratios from one session:
#   sem_ratio.sh PRELOAD_SO SEM_PINGPONG RUNS [busy]
# Runs SEM_PINGPONG (tests/c/progs/sem_pingpong.c) bare and under the
# interposer in turn, RUNS times each, and prints each metric's median per
# side and the ratio hpsync/glibc (below 1: the interposer is faster).  With
# "busy", a process spinning on one core competes for the CPUs throughout.
# A measurement, not a test: the figures go to docs/preload.md.
set -u
so=$1 prog=$2 runs=$3 busy=${4:-}
tmp=$(mktemp -d) || exit 2
hog=
cleanup() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
if [ "$busy" = busy ]; then
    sh -c 'while :; do :; done' &
    hog=$!
fi
i=0
while [ $i -lt "$runs" ]; do
    env -u LD_PRELOAD "$prog" >>"$tmp/glibc" || exit 1
    env LD_PRELOAD="$so" "$prog" >>"$tmp/hpsync" || exit 1
    i=$((i + 1))
done
median() { grep "^$1 " "$2" | cut -d' ' -f2 | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "sem_ratio: $runs runs each, interleaved${busy:+, with a busy process}"
for m in pair pingpong; do
    g=$(median $m "$tmp/glibc") h=$(median $m "$tmp/hpsync")
    awk -v m=$m -v g="$g" -v h="$h" 'BEGIN {printf "%-9s glibc %9.1f ns  hpsync %9.1f ns  ratio %.2f\n", m, g, h, h / g}'
done
