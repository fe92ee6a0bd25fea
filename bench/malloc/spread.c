// SPDX-License-Identifier: MIT
/*
 * Index spread: where 128 back-to-back blocks of one size start.
 *
 * Only the addresses are recorded; the CLI turns them into L1 set indices
 * ((address / line) % sets) for this machine's L1 and for any other
 * geometry, so the counting lives in one (tested) place.  All 128 blocks of
 * a size are live while their addresses are taken, as a ring or an array of
 * nodes would be; they are freed before the next size.
 *
 * Two states: "fresh" (the process has done nothing but start: what a
 * benchmark usually sees) and "warm" (after a mixed malloc/free churn that
 * leaves every 8th block live: what a long-running program's heap looks
 * like, with holes an allocator may reuse).
 */
#include <stdlib.h>
#include "malloc_bench.h"

enum { FRESH, WARM, NSTATES };
static const char *const k_state[NSTATES] = { "fresh", "warm" };

static struct {
    int nsizes;
    long warmup, kept;
    size_t sizes[MB_MAX_SIZES];
    void *addr[NSTATES][MB_MAX_SIZES][MB_BLOCKS];
} g_spread;

/* 64 B .. 64 KiB: every 2^k, 2^k - 16 and 3 * 2^(k-1), ascending; returns n. */
static int spread_sizes(size_t *sizes)
{
    int n = 0;
    for (size_t p = 64; p <= 65536; p *= 2) {
        if (p > 64)
            sizes[n++] = p - 16;
        sizes[n++] = p;
        /* 3 * 2^(k-1) lies between 2^k and 2^(k+1). */
        if (p < 65536)
            sizes[n++] = p + p / 2;
    }
    return n;
}

/* Allocate the 128 blocks of every size in turn; the addresses are kept
 * (pointers are never dereferenced after the free). */
static int take_addresses(int state)
{
    for (int s = 0; s < g_spread.nsizes; s++) {
        void **a = g_spread.addr[state][s];
        for (int i = 0; i < MB_BLOCKS; i++) {
            a[i] = malloc(g_spread.sizes[s]);
            if (!a[i]) {
                hps_bench_log("malloc(%zu) failed", g_spread.sizes[s]);
                return 1;
            }
            /* Written, as a program initialising its object would. */
            *(volatile char *)a[i] = 1;
        }
        for (int i = 0; i < MB_BLOCKS; i++)
            free(a[i]);
    }
    return 0;
}

int mb_spread_run(long warmup)
{
    g_spread.nsizes = spread_sizes(g_spread.sizes);
    g_spread.warmup = warmup;
    if (take_addresses(FRESH))
        return 1;
    mb_window_t kept;
    g_spread.kept = mb_warm_up(warmup, 4096, &kept);
    if (g_spread.kept < 0)
        return 1;
    int rc = take_addresses(WARM);
    if (mb_window_free(&kept)) {
        hps_bench_log("warm-up: a kept block was overwritten");
        return 1;
    }
    return rc;
}

void mb_spread_emit(void)
{
    for (int st = 0; st < NSTATES; st++) {
        for (int s = 0; s < g_spread.nsizes; s++) {
            hps_json_begin_object(NULL);
            hps_json_str("state", k_state[st]);
            hps_json_uint("size", g_spread.sizes[s]);
            hps_json_int("blocks", MB_BLOCKS);
            if (st == WARM) {
                hps_json_int("warmup_ops", g_spread.warmup);
                hps_json_int("warmup_kept", g_spread.kept);
            }
            mb_addresses_json("addresses", g_spread.addr[st][s], MB_BLOCKS);
            hps_json_end_object();
        }
    }
}
