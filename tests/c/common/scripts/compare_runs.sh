#!/bin/sh
# SPDX-License-Identifier: MIT
# Run a program bare (glibc) and under the interposer for each algorithm;
# fail on any difference in stdout or exit status.
#   compare_runs.sh PRELOAD_SO ALGO[,ALGO...] [-i INPUT_FILE] -- PROGRAM [ARGS...]
# Outputs are compared by SHA-256 (they may be megabytes); on a mismatch the
# head of a unified diff says where.  LD_PRELOAD is set for PROGRAM only, not
# for the tools of this script.
set -u
so=$1; algos=$2; shift 2
input=/dev/null
if [ "${1:-}" = "-i" ]; then input=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

env -u LD_PRELOAD -u HPSYNC_LOCK "$@" <"$input" >"$tmp/base.out" 2>"$tmp/base.err"
base_rc=$?
if [ $base_rc -ne 0 ]; then
    echo "compare_runs: FAIL baseline (no preload) exited $base_rc: $*" >&2
    tail -5 "$tmp/base.err" >&2
    exit 1
fi
base_sum=$(sha256sum <"$tmp/base.out" | cut -d' ' -f1)
echo "baseline (glibc): $(wc -l <"$tmp/base.out") lines, sha256 $base_sum"

fail=0
for a in $(echo "$algos" | tr ',' ' '); do
    env LD_PRELOAD="$so" HPSYNC_LOCK="$a" "$@" <"$input" >"$tmp/$a.out" 2>"$tmp/$a.err"
    rc=$?
    sum=$(sha256sum <"$tmp/$a.out" | cut -d' ' -f1)
    if [ $rc -ne $base_rc ]; then
        echo "compare_runs: FAIL HPSYNC_LOCK=$a: exit status $rc, baseline $base_rc" >&2
        tail -5 "$tmp/$a.err" >&2
        fail=1
    elif [ "$sum" != "$base_sum" ]; then
        echo "compare_runs: FAIL HPSYNC_LOCK=$a: output differs from glibc (sha256 $sum)" >&2
        diff -u "$tmp/base.out" "$tmp/$a.out" | head -40 >&2
        fail=1
    elif grep -q '^hpsync:' "$tmp/$a.err"; then
        echo "compare_runs: FAIL HPSYNC_LOCK=$a: interposer complained:" >&2
        grep '^hpsync:' "$tmp/$a.err" | head -3 >&2
        fail=1
    else
        echo "HPSYNC_LOCK=$a: same output"
    fi
done
exit $fail
