// SPDX-License-Identifier: MIT
/*
 * hps-workload-histogram: N random keys counted into B bins by T threads,
 * each thread a contiguous share of the keys.  B sets the conflict rate:
 * with 16 bins two threads' updates collide all the time, with 1 Mi almost
 * never (and the bins no longer fit in cache).  Each update is one tiny
 * critical section, the case transactional coarsening is for.
 *
 * Variants: atomic (one atomic add per key), private (per-thread bins,
 * then a parallel reduction, both timed), mutex (one global lock around
 * each update: the reference for speed-ups), and the harness's tm-k<K> and
 * tm-dyn (each update a TM read and write, K updates a section).
 * Validation: every bin equals a sequential histogram of the same keys
 * (so the counts also sum to N).  Options: harness.h.
 *
 * Row b1m-b16 changes its conflict rate mid-run (issue 16: the dynamic
 * controller must adapt again): each thread's first half of keys spreads
 * over 1 Mi bins, its second half over 16 hot ones, so the best static k
 * differs between the halves and tm-dyn has to move; the harness writes
 * the k each thread's controller ran at the switch (k_phase) beside the
 * one it ended on (k_end).  Not in --quick's rows (the tests name it).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "hps_rand.h"

enum { V_ATOMIC, V_PRIVATE, V_MUTEX };
static const char *const k_variants[] = { "atomic", "private", "mutex" };

/* a: bins; b: 0, or the hot bins of each thread's second half of keys;
 * n: keys.  8 M keys: with 2 M (until 2026-11-29) the coarsened variants'
 * runs lasted 4-10 ms, less than a time slice and the 2-3 ms by which a
 * second thread often starts late here, and the dynamic granularity's
 * search took a good part of them (scatter.c has the figures). */
static const wl_row_t k_rows[] = {
    { "b16", 16, 0, 8000000, 1, "high" },
    { "b1k", 1024, 0, 8000000, 0, "high" },
    { "b64k", 65536, 0, 8000000, 0, "low" },
    { "b1m", 1048576, 0, 8000000, 1, "low" },
    { "b1m-b16", 1048576, 16, 8000000, 0, "changing" },
};

typedef struct hist {
    long bins, hot, n;
    int threads;
    uint32_t *keys;
    uint64_t *hist, *ref;
    uint64_t **priv;                 /* per thread */
    pthread_mutex_t mu;
} hist_t;

static void *setup(const wl_row_t *row, int threads, long n)
{
    hist_t *h = wl_alloc(sizeof *h);
    h->bins = row->a;
    h->n = n;
    h->threads = threads;
    h->keys = wl_alloc(sizeof(uint32_t) * (size_t)h->n);
    h->hist = wl_alloc(sizeof(uint64_t) * (size_t)h->bins);
    h->ref = wl_alloc(sizeof(uint64_t) * (size_t)h->bins);
    h->priv = wl_alloc(sizeof(uint64_t *) * (size_t)threads);
    for (int t = 0; t < threads; t++)
        h->priv[t] = wl_alloc(sizeof(uint64_t) * (size_t)h->bins);
    h->hot = row->b;
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)h->bins;
    for (int t = 0; t < threads; t++) {
        /* The thread's share, as run() splits it; with hot bins its second
         * half draws from those only. */
        long lo = h->n * t / threads, hi = h->n * (t + 1) / threads, mid = h->hot ? lo + (hi - lo) / 2 : hi;
        for (long i = lo; i < hi; i++) {
            h->keys[i] = (uint32_t)(hps_xorshift64(&rng) % (uint64_t)(i < mid ? h->bins : h->hot));
            h->ref[h->keys[i]]++;
        }
    }
    pthread_mutex_init(&h->mu, NULL);
    return h;
}

static uint64_t ops(void *ctx)
{
    return (uint64_t)((hist_t *)ctx)->n;
}

static void params_json(void *ctx)
{
    hist_t *h = ctx;
    hps_json_int("bins", h->bins);
    if (h->hot)
        hps_json_int("hot_bins_second_half", h->hot);
    hps_json_int("keys", h->n);
}

static void reset(void *ctx)
{
    hist_t *h = ctx;
    memset(h->hist, 0, sizeof(uint64_t) * (size_t)h->bins);
    for (int t = 0; t < h->threads; t++)
        memset(h->priv[t], 0, sizeof(uint64_t) * (size_t)h->bins);
}

static void tm_update(long i, void *ctx)
{
    hist_t *h = ctx;
    uint64_t *b = &h->hist[h->keys[i]];
    HPS_TM_WRITE(b, HPS_TM_READ(b) + 1);
}

static void run(void *ctx, const wl_variant_t *v, int tid, int n)
{
    hist_t *h = ctx;
    long lo = h->n * tid / n, hi = h->n * (tid + 1) / n;
    switch (v->id) {
    case V_ATOMIC:
        /* acq_rel is what pr.h offers on plain words; on x86 it is the same
         * LOCK ADD a relaxed add would be. */
        for (long i = lo; i < hi; i++)
            hps_plain_add_acq_rel_void(&h->hist[h->keys[i]], 1);
        break;
    case V_PRIVATE: {
        uint64_t *mine = h->priv[tid];
        for (long i = lo; i < hi; i++)
            mine[h->keys[i]]++;
        wl_barrier();
        long blo = h->bins * tid / n, bhi = h->bins * (tid + 1) / n;
        for (int t = 0; t < n; t++)
            for (long b = blo; b < bhi; b++)
                h->hist[b] += h->priv[t][b];
        break;
    }
    case V_MUTEX:
        for (long i = lo; i < hi; i++) {
            pthread_mutex_lock(&h->mu);
            h->hist[h->keys[i]]++;
            pthread_mutex_unlock(&h->mu);
        }
        break;
    default:
        if (h->hot) {
            long mid = lo + (hi - lo) / 2;
            wl_tm_for(v, lo, mid, tm_update, h);
            wl_phase(v);
            wl_tm_for(v, mid, hi, tm_update, h);
        } else {
            wl_tm_for(v, lo, hi, tm_update, h);
        }
        break;
    }
}

static int validate(void *ctx, char *why, size_t len)
{
    hist_t *h = ctx;
    uint64_t sum = 0;
    for (long b = 0; b < h->bins; b++) {
        sum += h->hist[b];
        if (h->hist[b] != h->ref[b]) {
            snprintf(why, len, "bin %ld counts %llu, the sequential histogram %llu", b,
                     (unsigned long long)h->hist[b], (unsigned long long)h->ref[b]);
            return -1;
        }
    }
    snprintf(why, len, "%ld bins equal the sequential histogram, sum %llu", h->bins,
             (unsigned long long)sum);
    return 0;
}

static void corrupt(void *ctx)
{
    ((hist_t *)ctx)->hist[0]++;
}

static void teardown(void *ctx)
{
    hist_t *h = ctx;
    for (int t = 0; t < h->threads; t++)
        free(h->priv[t]);
    free(h->priv);
    free(h->keys);
    free(h->hist);
    free(h->ref);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* A row with hot bins turns hot halfway through each thread's share. */
static int whole_row(const wl_row_t *row)
{
    return row->b != 0;
}

static const wl_workload_t k_histogram = {
    .name = "histogram",
    .seconds = 1.71,
    .title = "histogram: threads add samples into shared bins (16 to 1 Mi bins; atomics, private copies, a mutex, TM)",
    WL_TABLES(k_rows, k_variants),
    .mutex_variant = V_MUTEX,
    WL_HOOKS,
    .whole_row = whole_row,
};

int main(int argc, char **argv)
{
    return wl_main(&k_histogram, argc, argv);
}
