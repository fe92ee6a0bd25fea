// SPDX-License-Identifier: MIT
/*
 * hps-probe-condvar: what pthread_cond_signal and pthread_cond_broadcast cost
 * the caller, and how long until the waiters run.
 *
 * Waiters sit in pthread_cond_wait on a predicate (a generation number).  Per
 * sample the signaller makes sure every waiter is inside pthread_cond_wait
 * (each counts itself in under the mutex, which it releases only inside the
 * wait), lets them settle for --settle-us so they are asleep in the kernel,
 * bumps the generation under the mutex, releases it, then stamps, signals or
 * broadcasts, and stamps again: "call" is the call's duration, "wake" the
 * time from before the call until a waiter's first statement after its wait
 * returned (one value per waiter per sample).  Signalling after the unlock
 * keeps the signaller's own unlock out of the wake figure.  With several
 * waiters, "wake_first" and "wake_last" are the first and the last waiter of
 * each sample, so the spread of a broadcast's herd is visible.
 *
 * Variants: signal (1 waiter), broadcast_1 (1 waiter), broadcast_N (N =
 * --waiters).  The signaller is pinned to one CPU and the waiters to the
 * others in turn (all on the same other CPU on a 2-PU machine).
 *
 *   hps-probe-condvar [--quick] [--samples N] [--waiters N] [--settle-us US]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "hps_probe.h"

#define USAGE "hps-probe-condvar [--quick] [--samples N] [--waiters N] [--settle-us US]"
#define MAX_WAITERS 64

static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    uint64_t gen;                /* the predicate (under m) */
    uint64_t total;              /* last generation: waiters leave (set before start) */
    _Atomic int waiting;         /* waiters inside cond_wait (changed under m) */
} __attribute__((aligned(64))) g_cv = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };

static struct {
    _Atomic uint64_t done;       /* waiters finished, over all samples */
} __attribute__((aligned(64))) g_done;

/* Per waiter, its own line: the stamp of its latest wake-up. */
static struct waiter {
    pthread_t tid;
    int cpu;
    uint64_t stamp;              /* published by g_done.done */
} __attribute__((aligned(64))) g_w[MAX_WAITERS];

static void *waiter(void *arg)
{
    struct waiter *w = arg;
    hps_pin_self(w->cpu);
    pthread_mutex_lock(&g_cv.m);
    for (;;) {
        uint64_t my = g_cv.gen;
        if (my == g_cv.total)
            break;
        atomic_fetch_add_explicit(&g_cv.waiting, 1, memory_order_relaxed);
        while (g_cv.gen == my)
            pthread_cond_wait(&g_cv.c, &g_cv.m);
        w->stamp = hps_probe_now();
        /* Release: publishes stamp to the signaller. */
        atomic_fetch_add_explicit(&g_done.done, 1, memory_order_release);
    }
    pthread_mutex_unlock(&g_cv.m);
    return NULL;
}

struct variant {
    char name[32];
    int broadcast, waiters;
    double *call, *wake, *first, *last;
};

/* Run one variant's samples (after warm); returns 0 or -1 after logging. */
static int run_variant(struct variant *v, size_t n, size_t warm, uint64_t settle_ns,
                       const int *cpus, int ncpu)
{
    g_cv.gen = 0;
    g_cv.total = n + warm;
    atomic_store(&g_cv.waiting, 0);
    atomic_store(&g_done.done, 0);
    for (int k = 0; k < v->waiters; k++) {
        g_w[k].cpu = ncpu > 1 ? cpus[1 + k % (ncpu - 1)] : -1;
        if (pthread_create(&g_w[k].tid, NULL, waiter, &g_w[k]) != 0) {
            hps_bench_log("cannot create waiter %d", k);
            return -1;
        }
    }
    size_t nw = 0;
    for (uint64_t s = 1; s <= n + warm; s++) {
        /* All waiters inside pthread_cond_wait: each counted itself under
         * the mutex, which it gives up only inside the wait. */
        for (;;) {
            while (atomic_load_explicit(&g_cv.waiting, memory_order_relaxed) != v->waiters)
                hps_cpu_relax();
            pthread_mutex_lock(&g_cv.m);
            int all = atomic_load_explicit(&g_cv.waiting, memory_order_relaxed) == v->waiters;
            pthread_mutex_unlock(&g_cv.m);
            if (all)
                break;
        }
        hps_probe_spin_ns(settle_ns);
        pthread_mutex_lock(&g_cv.m);
        g_cv.gen = s;
        atomic_store_explicit(&g_cv.waiting, 0, memory_order_relaxed);
        pthread_mutex_unlock(&g_cv.m);
        uint64_t t0 = hps_probe_now();
        if (v->broadcast)
            pthread_cond_broadcast(&g_cv.c);
        else
            pthread_cond_signal(&g_cv.c);
        uint64_t t1 = hps_probe_now();
        /* Acquire: the waiters' stamps. */
        while (atomic_load_explicit(&g_done.done, memory_order_acquire) != s * (uint64_t)v->waiters)
            hps_cpu_relax();
        if (s <= warm)
            continue;
        size_t i = (size_t)(s - 1 - warm);
        /* Raw ticks until the tick rate is known. */
        v->call[i] = (double)(t1 - t0);
        double lo = 1e300, hi = 0;
        for (int k = 0; k < v->waiters; k++) {
            double d = g_w[k].stamp >= t0 ? (double)(g_w[k].stamp - t0) : 0.0;
            v->wake[nw++] = d;
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
        }
        v->first[i] = lo;
        v->last[i] = hi;
    }
    for (int k = 0; k < v->waiters; k++)
        pthread_join(g_w[k].tid, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    long samples, nwait, settle_us;
    const hps_probe_opt_t opts[] = { HPS_PROBE_OPT_SAMPLES(samples, 200, 2000),
                                     { "--waiters", &nwait, 2, MAX_WAITERS, 4, 4 },
                                     { "--settle-us", &settle_us, 0, 1000000L, 30, 50 },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .opts = opts };
    hps_probe_parse(&cli, argc, argv);
    size_t n = (size_t)samples;
    size_t warm = 10;

    int ncpu = 0, cpus[MAX_WAITERS + 1];
    hps_topo_t topo;
    if (hps_bench_topo(&topo) == 0 && topo.pus > 1) {
        ncpu = topo.pus < MAX_WAITERS + 1 ? topo.pus : MAX_WAITERS + 1;
        if (hps_map_cpus(HPS_MAP_COMPACT, ncpu, cpus) != 0)
            ncpu = 0;
    }
    if (ncpu > 1)
        hps_pin_self(cpus[0]);
    else
        hps_bench_log("one CPU or no topology: threads are not pinned");

    struct variant vs[3] = { { .name = "signal", .broadcast = 0, .waiters = 1 },
                             { .name = "broadcast_1", .broadcast = 1, .waiters = 1 },
                             { .name = "", .broadcast = 1, .waiters = (int)nwait } };
    snprintf(vs[2].name, sizeof vs[2].name, "broadcast_%ld", nwait);
    for (int k = 0; k < 3; k++) {
        vs[k].call = hps_probe_alloc(n);
        vs[k].first = hps_probe_alloc(n);
        vs[k].last = hps_probe_alloc(n);
        vs[k].wake = hps_probe_alloc(n * (size_t)vs[k].waiters);
    }
    hps_probe_clock_start();
    for (int k = 0; k < 3; k++)
        if (run_variant(&vs[k], n, warm, (uint64_t)settle_us * 1000, cpus, ncpu) != 0)
            return 1;
    hps_probe_clock_finish();
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < n; i++) {
            vs[k].call[i] *= hps_probe_ns_per_tick;
            vs[k].first[i] *= hps_probe_ns_per_tick;
            vs[k].last[i] *= hps_probe_ns_per_tick;
        }
        for (size_t i = 0; i < n * (size_t)vs[k].waiters; i++)
            vs[k].wake[i] *= hps_probe_ns_per_tick;
    }

    hps_probe_doc_begin("condvar");
    hps_json_uint("samples", n);
    hps_json_uint("warmup", warm);
    hps_json_int("waiters", nwait);
    hps_json_int("settle_us", settle_us);
    hps_json_int("cpu_signaller", ncpu > 1 ? cpus[0] : -1);
    hps_json_str("mapping", ncpu > 1 ? "compact" : "os");
    hps_probe_doc_results();
    for (int k = 0; k < 3; k++) {
        struct variant *v = &vs[k];
        hps_probe_row_latency("call", v->name, v->call, n);
        hps_probe_row_latency("wake", v->name, v->wake, n * (size_t)v->waiters);
        if (v->waiters > 1) {
            hps_probe_row_latency("wake_first", v->name, v->first, n);
            hps_probe_row_latency("wake_last", v->name, v->last, n);
            hps_probe_row_pairs("call_vs_wake_last", v->name, "call", "wake_last", v->call, v->last, n);
        } else {
            hps_probe_row_pairs("call_vs_wake", v->name, "call", "wake", v->call, v->wake, n);
        }
    }
    return hps_probe_doc_end();
}
