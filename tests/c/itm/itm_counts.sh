#!/bin/sh
# SPDX-License-Identifier: MIT
# itm_counts.sh LIB BACKEND PROG: `PROG counts` runs 300 writing and 200
# read-only (pr_readOnly) transactions on one thread; on libhpsync-itm with
# HPSYNC_TM=BACKEND the statistics must count 500 commits, 200 of them
# read-only.  Plain (uninstrumented) code logs no write, so without the
# compiler's word every such transaction would count as read-only.
set -u
lib=$1 backend=$2 prog=$3
out=$(LD_PRELOAD="$lib" HPSYNC_TM=$backend HPSYNC_TM_STATS=1 "$prog" counts 2>&1) || {
    echo "itm_counts: FAIL: the program failed:"; echo "$out"; exit 1; }
line=$(echo "$out" | grep "^hpsync tm: commits")
case $line in
"hpsync tm: commits 500 (read-only 200),"*) echo "$line"; exit 0 ;;
esac
echo "itm_counts: FAIL: expected 500 commits, 200 read-only:"; echo "$out"; exit 1
