#!/bin/sh
# SPDX-License-Identifier: MIT
# itm_plain.sh LIB PROG: `PROG plainro` (2 threads, 400 ms of read-only
# transactions beside transfers) on libhpsync-itm with norec runs some of
# its read-only transactions on their plain code (HPSYNC_TM_STATS counts
# them; the trial opens for 10 ms at least), every snapshot whole (the
# program checks); with HPSYNC_ITM_PLAIN_RO=0 it runs none there.
set -u
lib=$1 prog=$2
out=$(LD_PRELOAD="$lib" HPSYNC_TM=norec HPSYNC_TM_STATS=1 "$prog" plainro 2>&1) || {
    echo "itm_plain: FAIL: the program failed:"; echo "$out"; exit 1; }
n=$(echo "$out" | sed -n 's/^hpsync tm: GCC TM read-only transactions on plain code \([0-9]*\);.*/\1/p')
if [ -z "$n" ] || [ "$n" -eq 0 ]; then
    echo "itm_plain: FAIL: no read-only transaction ran on plain code:"; echo "$out"; exit 1
fi
echo "$out" | grep "on plain code"
out=$(LD_PRELOAD="$lib" HPSYNC_TM=norec HPSYNC_TM_STATS=1 HPSYNC_ITM_PLAIN_RO=0 "$prog" plainro 2>&1) || {
    echo "itm_plain: FAIL: the program failed with HPSYNC_ITM_PLAIN_RO=0:"; echo "$out"; exit 1; }
n=$(echo "$out" | sed -n 's/^hpsync tm: GCC TM read-only transactions on plain code \([0-9]*\);.*/\1/p')
if [ -n "$n" ] && [ "$n" -ne 0 ]; then
    echo "itm_plain: FAIL: HPSYNC_ITM_PLAIN_RO=0 yet $n ran on plain code"; exit 1
fi
exit 0
