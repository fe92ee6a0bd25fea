// SPDX-License-Identifier: MIT
/*
 * hps-probe-handoff: the contended hand-off of a lock from one thread to a
 * waiting one.
 *
 * Thread A (pinned to one CPU) takes the lock and lets thread B (pinned to
 * another CPU, as far from A as the topology allows) call lock on it.  After
 * --hold-us, long enough for a blocking lock's waiter to be asleep in the
 * kernel, A stamps the time, unlocks and stamps again: "unlock" is the
 * unlock call's own duration, "wake" the time from the start of the unlock
 * until B's first statement after its lock call returned.  The pairs row
 * shows whether a slow wake goes with a slow unlock (the waker's system
 * call) or not (the sleeper's way back onto its CPU).  Variants are glibc's
 * default and adaptive mutexes and every hpsync algorithm; samples of all
 * variants are interleaved so noise hits them alike.  Spinning algorithms
 * (ttas, ticket, mcs, hemlock) have B spinning on its CPU, so their "wake" is
 * a cache-line transfer; the blocking ones have B parked, so theirs is a
 * futex wake-up and a vCPU coming out of idle.
 *
 *   hps-probe-handoff [--quick] [--samples N] [--hold-us US]
 */
#define _GNU_SOURCE
#include "hps_probe.h"
#include "hps_probe_locks.h"

#define USAGE "hps-probe-handoff [--quick] [--samples N] [--hold-us US]"

enum { NVAR = HPS_PROBE_NLOCKS };

/* The handshake, one line per writer so the flags do not share a line with
 * the lock being measured or with each other. */
static struct {
    _Atomic uint64_t go;         /* A: sample number B should run */
    _Atomic int var;             /* A: its variant (published by go) */
} __attribute__((aligned(64))) g_a;
static struct {
    _Atomic uint64_t armed;      /* B: about to call lock for this sample */
    _Atomic uint64_t done;       /* B: finished this sample */
    uint64_t stamp;              /* B: when its lock call returned (published by done) */
} __attribute__((aligned(64))) g_b;

static int g_cpu_b;
static uint64_t g_total;

static void *waiter(void *arg)
{
    (void)arg;
    hps_pin_self(g_cpu_b);
    for (uint64_t s = 1; s <= g_total; s++) {
        /* Acquire: the variant A chose for this sample. */
        while (atomic_load_explicit(&g_a.go, memory_order_acquire) != s)
            hps_cpu_relax();
        int v = atomic_load_explicit(&g_a.var, memory_order_relaxed);
        atomic_store_explicit(&g_b.armed, s, memory_order_relaxed);
        hps_probe_lock(v);
        uint64_t t = hps_probe_now();
        hps_probe_unlock(v);
        g_b.stamp = t;
        /* Release: publishes stamp to A. */
        atomic_store_explicit(&g_b.done, s, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long samples, hold_us;
    const hps_probe_opt_t opts[] = { HPS_PROBE_OPT_SAMPLES(samples, 200, 2000),
                                     { "--hold-us", &hold_us, 0, 1000000L, 50, 100 },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .opts = opts };
    hps_probe_parse(&cli, argc, argv);
    size_t n = (size_t)samples;

    const char *names[NVAR];
    hps_probe_locks_init(names);

    int cpus[2];
    if (hps_map_cpus(HPS_MAP_SCATTER, 2, cpus) != 0) {
        hps_bench_log("cannot read the topology; threads are not pinned");
        cpus[0] = cpus[1] = -1;
    } else if (cpus[0] == cpus[1]) {
        hps_bench_log("only one CPU: A and B share it, wake includes a context switch");
    }
    hps_pin_self(cpus[0]);
    g_cpu_b = cpus[1];

    size_t warm = 10;
    g_total = (uint64_t)(n + warm) * NVAR;
    uint64_t *t0 = calloc(g_total, sizeof *t0), *t1 = calloc(g_total, sizeof *t1),
             *tb = calloc(g_total, sizeof *tb);
    if (!t0 || !t1 || !tb) {
        hps_bench_log("out of memory");
        return 1;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, waiter, NULL) != 0) {
        hps_bench_log("cannot create the waiter thread");
        return 1;
    }
    hps_probe_clock_start();
    uint64_t hold_ns = (uint64_t)hold_us * 1000;
    for (uint64_t s = 1; s <= g_total; s++) {
        size_t round = (size_t)((s - 1) / NVAR);
        int v = (int)((round + (s - 1) % NVAR) % NVAR);     /* rotate the order */
        hps_probe_lock(v);
        atomic_store_explicit(&g_a.var, v, memory_order_relaxed);
        /* Release: publishes var. */
        atomic_store_explicit(&g_a.go, s, memory_order_release);
        while (atomic_load_explicit(&g_b.armed, memory_order_relaxed) != s)
            hps_cpu_relax();
        hps_probe_spin_ns(hold_ns);
        uint64_t a0 = hps_probe_now();
        hps_probe_unlock(v);
        uint64_t a1 = hps_probe_now();
        /* Acquire: B's stamp. */
        while (atomic_load_explicit(&g_b.done, memory_order_acquire) != s)
            hps_cpu_relax();
        t0[s - 1] = a0;
        t1[s - 1] = a1;
        tb[s - 1] = g_b.stamp;
    }
    pthread_join(th, NULL);
    hps_probe_clock_finish();

    double *un[NVAR], *wk[NVAR];
    size_t cnt[NVAR] = { 0 };
    for (int v = 0; v < NVAR; v++) {
        un[v] = hps_probe_alloc(n);
        wk[v] = hps_probe_alloc(n);
    }
    for (uint64_t s = 1; s <= g_total; s++) {
        size_t round = (size_t)((s - 1) / NVAR);
        int v = (int)((round + (s - 1) % NVAR) % NVAR);
        if (round < warm)
            continue;
        un[v][cnt[v]] = hps_probe_ns(t0[s - 1], t1[s - 1]);
        wk[v][cnt[v]] = hps_probe_ns(t0[s - 1], tb[s - 1]);
        cnt[v]++;
    }

    hps_probe_doc_begin("handoff");
    hps_json_uint("samples", n);
    hps_json_uint("warmup", warm);
    hps_json_int("hold_us", hold_us);
    hps_json_int("cpu_a", cpus[0]);
    hps_json_int("cpu_b", cpus[1]);
    hps_json_str("mapping", "scatter");
    hps_probe_doc_results();
    for (int v = 0; v < NVAR; v++) {
        hps_probe_row_latency("unlock", names[v], un[v], cnt[v]);
        hps_probe_row_latency("wake", names[v], wk[v], cnt[v]);
        hps_probe_row_pairs("unlock_vs_wake", names[v], "unlock", "wake", un[v], wk[v], cnt[v]);
    }
    return hps_probe_doc_end();
}
