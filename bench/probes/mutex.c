// SPDX-License-Identifier: MIT
/*
 * hps-probe-mutex: the uncontended cost of a lock+unlock pair.
 *
 * One sample is a batch of --batch pairs timed with CLOCK_MONOTONIC and
 * divided by the batch size (a pair is a few ns, below the timer's ~10 ns
 * step, so single pairs cannot be timed); the distribution is over batches.
 * Variants: glibc's default pthread_mutex, glibc's PTHREAD_MUTEX_ADAPTIVE_NP,
 * and every hpsync algorithm through the generic hps_lock_t API (its inline
 * switch included, as a library user calls it).  Batches of all variants are
 * interleaved, so a noisy neighbour slows every variant alike instead of
 * spoiling one.  The process is made multithreaded first: glibc may skip
 * atomics while it has a single thread, and no real lock user does.
 *
 *   hps-probe-mutex [--quick] [--samples BATCHES] [--batch PAIRS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "hpsync/lock.h"
#include "probe_threads.h"

#define USAGE "hps-probe-mutex [--quick] [--samples BATCHES] [--batch PAIRS]"

enum { NGLIBC = 2, NVAR = NGLIBC + HPS_LOCK_ALGO_MAX };

/* Each lock on its own line, as a lock alone in a hot structure would be. */
static struct {
    pthread_mutex_t m;
} __attribute__((aligned(64))) g_pm[NGLIBC];
static struct {
    hps_lock_t l;
} __attribute__((aligned(64))) g_hl[HPS_LOCK_ALGO_MAX + 1];

static __attribute__((noinline)) double batch_glibc(pthread_mutex_t *m, long iters)
{
    return HPS_BENCH_TIME_PAIRS(iters, pthread_mutex_lock(m), pthread_mutex_unlock(m));
}

static __attribute__((noinline)) double batch_hps(hps_lock_t *l, long iters)
{
    return HPS_BENCH_TIME_PAIRS(iters, hps_lock_lock(l), hps_lock_unlock(l));
}

static double batch(int v, long iters)
{
    return v < NGLIBC ? batch_glibc(&g_pm[v].m, iters)
                      : batch_hps(&g_hl[v - NGLIBC + 1].l, iters);
}

int main(int argc, char **argv)
{
    probe_args_t a = { 0, -1 };
    long pairs = 1000;
    for (int i = 1; i < argc; i++) {
        if (probe_parse_common(&a, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--batch")) {
            pairs = hps_bench_parse_num("--batch", i + 1 < argc ? argv[i + 1] : NULL, 1,
                                        100000000L);
            i++;
            continue;
        }
        probe_bad_arg(argv[i], USAGE);
    }
    size_t n = a.samples > 0 ? (size_t)a.samples : a.quick ? 400 : 4000;

    const char *names[NVAR];
    names[0] = "glibc";
    names[1] = "glibc_adaptive_np";
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutex_init(&g_pm[0].m, &ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&g_pm[1].m, &ma);
    for (int al = HPS_LOCK_TTAS; al <= HPS_LOCK_ALGO_MAX; al++) {
        hps_lock_init(&g_hl[al].l, (hps_lock_algo_t)al);
        names[NGLIBC + al - 1] = hps_lock_algo_name((hps_lock_algo_t)al);
    }
    double *ns[NVAR];
    for (int v = 0; v < NVAR; v++)
        ns[v] = probe_alloc(n);

    if (hps_bench_become_multithreaded())
        return 1;
    probe_clock_start();
    for (int v = 0; v < NVAR; v++)          /* warm caches, predictors, PLT */
        for (int w = 0; w < 20; w++)
            batch(v, pairs);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < NVAR; k++) {
            /* Rotate the order so no variant always follows the same one. */
            int v = (int)((i + (size_t)k) % NVAR);
            ns[v][i] = batch(v, pairs);
        }
    double steal1 = hps_steal_ms();
    probe_clock_finish();

    probe_doc_begin("mutex");
    hps_json_uint("samples", n);
    hps_json_int("batch", pairs);
    hps_json_str("timer_batches", "CLOCK_MONOTONIC");
    hps_json_begin_array("variants");
    for (int v = 0; v < NVAR; v++)
        hps_json_str(NULL, names[v]);
    hps_json_end_array();
    probe_doc_results(steal1);
    for (int v = 0; v < NVAR; v++)
        probe_row_latency("lock_unlock", names[v], ns[v], n);
    return probe_doc_end();
}
