#!/bin/sh
# SPDX-License-Identifier: MIT
# itm_same.sh LIB BACKEND PROG ARGS...: run a GCC TM test program on libitm
# (as linked) and on libhpsync-itm with HPSYNC_TM=BACKEND, and compare.
# Both runs must pass and print the same result lines; the second must
# really run on hpsync (HPSYNC_TM_STATS's summary names the backend).
# LIB is the library's path; with "libpath:DIR" the program finds it as
# libitm.so.1 through LD_LIBRARY_PATH=DIR instead of LD_PRELOAD.
# With ITM_WANT_BACKEND set (the suites on real RTM), a run whose summary
# names another backend (this machine has no RTM) is skipped: exit 77.
set -u
lib=$1 backend=$2
shift 2
tmp=${TMPDIR:-/tmp}/itm_same.$$
trap 'rm -f "$tmp".*' EXIT
# libitm itself calls abort() now and then (1-3 runs in 100 of the cases
# that cancel under contention, on the 2-vCPU EPYC of 2026-11-28): its
# retry policy may make a transaction serial-irrevocable, and
# _ITM_abortTransaction aborts the process when an irrevocable transaction
# cancels (libitm/beginend.cc).  The reference run is only there for its
# result lines, so a run that libitm killed with SIGABRT (status 134) is
# tried again, up to 3 times; any other failure, or a third abort, fails.
ref_try=1
while :; do
    env -u LD_PRELOAD "$@" >"$tmp.ref" 2>"$tmp.referr" && break
    rc=$?
    if [ "$rc" -ne 134 ] || [ "$ref_try" -ge 3 ]; then
        echo "itm_same: FAIL on libitm (exit $rc, attempt $ref_try):"; cat "$tmp.referr"; exit 1
    fi
    ref_try=$((ref_try + 1))
done
case $lib in
libpath:*) set -- env LD_LIBRARY_PATH="${lib#libpath:}" "$@" ;;
*) set -- env LD_PRELOAD="$lib" "$@" ;;
esac
if ! HPSYNC_TM=$backend HPSYNC_TM_STATS=1 "$@" >"$tmp.out" 2>"$tmp.err"; then
    echo "itm_same: FAIL on hpsync ($backend):"; cat "$tmp.err"; exit 1
fi
if ! grep -q "^hpsync tm: backend" "$tmp.err"; then
    echo "itm_same: FAIL: the program did not run on libhpsync-itm (no TM summary)"; cat "$tmp.err"; exit 1
fi
if [ -n "${ITM_WANT_BACKEND:-}" ] && ! grep -q "^hpsync tm: backend $ITM_WANT_BACKEND\b" "$tmp.err"; then
    echo "itm_same: skipped: backend $ITM_WANT_BACKEND wanted, this machine ran:"
    grep "^hpsync tm: backend" "$tmp.err"; exit 77
fi
if ! cmp -s "$tmp.ref" "$tmp.out"; then
    echo "itm_same: FAIL: results differ (libitm, then hpsync $backend):"
    cat "$tmp.ref" "$tmp.out"; exit 1
fi
cat "$tmp.out"
grep "^hpsync tm:" "$tmp.err"
