// SPDX-License-Identifier: MIT
/*
 * What the timing benchmarks share around their measurements: the common
 * command-line options and the start/stop of a timed multi-threaded run.
 * The timed loops themselves stay in each program (see HPS_BENCH_TIME_PAIRS).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hps_bench.h"

long hps_bench_parse_num(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || *end || end == s || v < lo || v > hi) {
        hps_bench_log("%s needs a whole number in %ld..%ld, got '%s'", opt, lo, hi, s ? s : "");
        exit(2);
    }
    return v;
}

int hps_bench_parse_common(hps_bench_args_t *a, const char *opt, const char *v)
{
    if (!strcmp(opt, "--iters"))
        a->iters = hps_bench_parse_num(opt, v, 1, 1000000000L);
    else if (!strcmp(opt, "--reps"))
        a->reps = hps_bench_parse_num(opt, v, 1, HPS_BENCH_MAX_REPS);
    else if (!strcmp(opt, "--threads"))
        a->threads = hps_bench_parse_num(opt, v, 1, HPS_BENCH_MAX_THREADS);
    else if (!strcmp(opt, "--duration-ms"))
        a->duration_ms = hps_bench_parse_num(opt, v, 1, 3600L * 1000);
    else
        return 0;
    return 1;
}

static void *noop_thread(void *arg) { return arg; }

int hps_bench_become_multithreaded(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, noop_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
        hps_bench_log("cannot create a thread");
        return 1;
    }
    return 0;
}

void *hps_bench_lines_alloc(size_t bytes)
{
    size_t sz = hps_bench_lines(bytes);
    void *p = aligned_alloc(64, sz);
    if (p)
        memset(p, 0, sz);
    return p;
}

void hps_bench_gate_reset(hps_bench_gate_t *g, int open_at)
{
    atomic_store(&g->go, 0);
    atomic_store(&g->stop, 0);
    atomic_store(&g->ready, 0);
    atomic_store(&g->started, 0);
    g->open_at = open_at;
}

void hps_bench_gate_meet(hps_bench_gate_t *g)
{
    if (atomic_fetch_add_explicit(&g->ready, 1, memory_order_acq_rel) + 1 == g->open_at)
        g->open_ns = hps_bench_now_ns();
    while (atomic_load_explicit(&g->ready, memory_order_acquire) < g->open_at) {
        struct timespec nap = { 0, 20000 };
        nanosleep(&nap, NULL);
    }
}

void *hps_bench_run_workers(hps_bench_gate_t *g, int n, size_t size, void *(*fn)(void *),
                            long duration_ms, hps_bench_totals_t *out)
{
    /* The callers index the records by their type: the stride stays `size`. */
    char *mem = hps_bench_lines_alloc(size * (size_t)n);
    if (!mem) {
        hps_bench_log("out of memory");
        return NULL;
    }
    const int fixed = duration_ms == 0;
    hps_bench_gate_reset(g, fixed ? n : 0);
    for (int i = 0; i < n; i++) {
        hps_bench_worker_t *w = (hps_bench_worker_t *)(mem + size * (size_t)i);
        w->index = i;
        int rc = pthread_create(&w->tid, NULL, fn, w);
        if (rc != 0) {
            hps_bench_log("cannot create thread %d of %d: %s", i + 1, n, strerror(rc));
            return NULL;
        }
    }
    uint64_t t0 = 0;
    if (!fixed) {
        /* Start the clock only once every thread exists, so creation is not timed. */
        while (atomic_load_explicit(&g->ready, memory_order_acquire) != n) {
            struct timespec nap = { 0, 100000 };
            nanosleep(&nap, NULL);
        }
        t0 = hps_bench_now_ns();
        atomic_store_explicit(&g->go, 1, memory_order_release);
        /* On a loaded machine a released worker may not run for a whole time
         * slice (tens of ms); a short run would then stop it before its first
         * operation and report 0 ops/s.  The delay stays in the elapsed time. */
        while (atomic_load_explicit(&g->started, memory_order_relaxed) != n) {
            struct timespec nap = { 0, 100000 };
            nanosleep(&nap, NULL);
        }
        struct timespec d = { duration_ms / 1000, (duration_ms % 1000) * 1000000L };
        while (nanosleep(&d, &d) != 0 && errno == EINTR)
            ;
        atomic_store_explicit(&g->stop, 1, memory_order_relaxed);
    }
    uint64_t total = 0, min_ops = UINT64_MAX, max_ops = 0, t1 = 0;
    for (int i = 0; i < n; i++) {
        hps_bench_worker_t *w = (hps_bench_worker_t *)(mem + size * (size_t)i);
        pthread_join(w->tid, NULL);
        total += w->ops;
        min_ops = w->ops < min_ops ? w->ops : min_ops;
        max_ops = w->ops > max_ops ? w->ops : max_ops;
        t1 = w->end_ns > t1 ? w->end_ns : t1;
    }
    if (fixed)
        t0 = g->open_ns;                 /* joined: the last arrival's stamp is visible */
    t1 = t1 > t0 ? t1 : t0;
    *out = (hps_bench_totals_t){ (double)(t1 - t0) / 1e9, total, min_ops, max_ops };
    return mem;
}

void hps_bench_totals_json(const hps_bench_totals_t *t)
{
    hps_json_num("elapsed_s", t->secs);
    hps_json_uint("ops", t->total);
    hps_json_num("ops_per_sec", t->secs > 0 ? (double)t->total / t->secs : 0.0);
    hps_json_uint("ops_min_thread", t->min_ops);
    hps_json_uint("ops_max_thread", t->max_ops);
    hps_json_bool("counter_ok", 1);
}
