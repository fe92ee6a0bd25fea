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
#include "hps_probe.h"
#include "hps_probe_locks.h"

#define USAGE "hps-probe-mutex [--quick] [--samples BATCHES] [--batch PAIRS]"

enum { NVAR = HPS_PROBE_NLOCKS };

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
    return v < HPS_PROBE_NGLIBC ? batch_glibc(hps_probe_lock_glibc(v), iters)
                                : batch_hps(hps_probe_lock_hps(v), iters);
}

int main(int argc, char **argv)
{
    long samples = -1, pairs = 1000;
    const hps_probe_opt_t opts[] = { HPS_PROBE_OPT_SAMPLES(samples),
                                     { "--batch", &pairs, 1, 100000000L },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .opts = opts };
    int quick = hps_probe_parse(&cli, argc, argv);
    size_t n = samples > 0 ? (size_t)samples : quick ? 400 : 4000;

    const char *names[NVAR];
    hps_probe_locks_init(names);
    double *ns[NVAR];
    for (int v = 0; v < NVAR; v++)
        ns[v] = hps_probe_alloc(n);

    if (hps_bench_become_multithreaded())
        return 1;
    hps_probe_clock_start();
    for (int v = 0; v < NVAR; v++)          /* warm caches, predictors, PLT */
        for (int w = 0; w < 20; w++)
            batch(v, pairs);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < NVAR; k++) {
            /* Rotate the order so no variant always follows the same one. */
            int v = (int)((i + (size_t)k) % NVAR);
            ns[v][i] = batch(v, pairs);
        }
    hps_probe_clock_finish();

    hps_probe_doc_begin("mutex");
    hps_json_uint("samples", n);
    hps_json_int("batch", pairs);
    hps_json_str("timer_batches", "CLOCK_MONOTONIC");
    hps_json_begin_array("variants");
    for (int v = 0; v < NVAR; v++)
        hps_json_str(NULL, names[v]);
    hps_json_end_array();
    hps_probe_doc_results();
    for (int v = 0; v < NVAR; v++)
        hps_probe_row_latency("lock_unlock", names[v], ns[v], n);
    return hps_probe_doc_end();
}
