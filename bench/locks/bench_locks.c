// SPDX-License-Identifier: MIT
/*
 * hps-bench-locks: the one program that measures what a lock costs.
 *
 * Its bench modes call plain pthread functions, so run bare it measures glibc
 * and run under LD_PRELOAD=libhpsync-preload.so it measures whichever hpsync
 * algorithm HPSYNC_LOCK selects (`hpsync bench locks`).  It reports which
 * shared object actually provides pthread_mutex_lock, so the caller can
 * check the preload took.
 *
 *   --mode uncontended --iters N [--reps R]
 *       ns per lock+unlock pair in one thread.  Measured twice: while the
 *       process is still single-threaded (glibc may skip atomics then) and
 *       after one thread has been created and joined (the figure that
 *       matters for any real multithreaded program).  Each repetition times
 *       a batch of N pairs with CLOCK_MONOTONIC, so the ~10 ns timer step
 *       and the call's own cost vanish in the batch.
 *   --mode throughput --threads T --duration-ms D
 *       T threads hammer one mutex around a short critical section for D ms;
 *       total ops/s.  The protected counter must equal the operations the
 *       threads counted, or the program fails (exit 1): a lock that lets two
 *       threads in at once shows up here, not as a fast figure.
 *   --probe [--quick] [--samples BATCHES] [--batch PAIRS]
 *       The characterization's "mutex" probe (`hpsync characterize`): the
 *       same uncontended batches, in one process, for glibc's default mutex,
 *       glibc's PTHREAD_MUTEX_ADAPTIVE_NP and every hpsync algorithm through
 *       the hps_lock_t API, batches of all variants interleaved (so a noisy
 *       neighbour slows every variant alike); one sample is a batch, ns per
 *       pair, and each variant's distribution over batches is printed in the
 *       probe schema (docs/characterize.md).  --probe must come first.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "hps_probe.h"
#include "hps_probe_locks.h"

/* The mutex and the data it protects share a line, as in most real code. */
static struct shared {
    pthread_mutex_t mutex;
    uint64_t counter;
    uint64_t sum;
    uint64_t mix;
} __attribute__((aligned(64))) g_shared = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 };

#define PROBE_USAGE "hps-bench-locks --probe [--quick] [--samples BATCHES] [--batch PAIRS]"

static void usage(void)
{
    fprintf(stderr,
            "usage: hps-bench-locks --mode uncontended --iters N [--reps R]\n"
            "       hps-bench-locks --mode throughput --threads T --duration-ms D\n"
            "       %s\n", PROBE_USAGE);
}

/* ---- uncontended --------------------------------------------------------- */

struct phase {
    const char *name;
    int reps;
    double ns[HPS_BENCH_MAX_REPS];
};

/* The timed loops: one per API, noinline so every variant's loop is
 * compiled alike, the lock calls inline in it as in a user's code. */
static __attribute__((noinline)) double batch_pthread(pthread_mutex_t *m, long iters)
{
    return HPS_BENCH_TIME_PAIRS(iters, pthread_mutex_lock(m), pthread_mutex_unlock(m));
}

static __attribute__((noinline)) double batch_hps(hps_lock_t *l, long iters)
{
    return HPS_BENCH_TIME_PAIRS(iters, hps_lock_lock(l), hps_lock_unlock(l));
}

static double time_batch(long iters)
{
    return batch_pthread(&g_shared.mutex, iters);
}

static void measure_phase(struct phase *p, const char *name, long iters, int reps)
{
    p->name = name;
    p->reps = reps;
    time_batch(iters / 10 + 1);          /* warm caches, branch predictors, PLT */
    for (int r = 0; r < reps; r++)
        p->ns[r] = time_batch(iters);
}

static void emit_phase(struct phase *p, long iters)
{
    hps_json_begin_object(NULL);
    hps_json_str("mode", "uncontended");
    hps_json_str("phase", p->name);
    hps_json_int("threads", 1);
    hps_json_int("iters", iters);
    hps_json_int("reps", p->reps);
    hps_json_num_array("ns_per_op_reps", p->ns, p->reps);
    double med = hps_bench_median(p->ns, (size_t)p->reps);   /* sorts ns */
    hps_json_num("ns_per_op_min", p->ns[0]);
    hps_json_num("ns_per_op_median", med);
    hps_json_end_object();
}

static struct phase g_single, g_multi;

static int run_uncontended(long iters, int reps)
{
    /* Must come before any pthread_create: glibc tracks single-threadedness. */
    measure_phase(&g_single, "single_threaded_process", iters, reps);
    if (hps_bench_become_multithreaded())
        return 1;
    measure_phase(&g_multi, "multi_threaded_process", iters, reps);
    return 0;
}

static void emit_uncontended(long iters)
{
    emit_phase(&g_single, iters);
    emit_phase(&g_multi, iters);
}

/* ---- throughput ---------------------------------------------------------- */

struct worker {
    hps_bench_worker_t head;
} __attribute__((aligned(64)));

static hps_bench_gate_t g_gate;

static struct tp_result {
    int threads;
    long duration_ms;
    hps_bench_totals_t t;
} g_tp;

static void *hammer(void *arg)
{
    struct worker *w = arg;
    struct shared *s = &g_shared;
    uint64_t ops = 0;
    hps_bench_gate_enter(&g_gate);
    while (!hps_bench_gate_stopped(&g_gate)) {
        pthread_mutex_lock(&s->mutex);
        /* The critical section: a few dependent, non-atomic updates. */
        s->counter++;
        s->sum += s->counter;
        s->mix = (s->mix ^ s->sum) * 0x9E3779B97F4A7C15ull;
        pthread_mutex_unlock(&s->mutex);
        ops++;
    }
    hps_bench_worker_done(&w->head, ops);
    return NULL;
}

static int run_throughput(int nthreads, long duration_ms)
{
    hps_bench_totals_t t;
    struct worker *w = hps_bench_run_workers(&g_gate, nthreads, sizeof *w, hammer, duration_ms, &t);
    if (!w)
        return 1;
    free(w);
    if (g_shared.counter != t.total) {
        hps_bench_log("mutual exclusion violated: protected counter %llu != %llu operations",
                      (unsigned long long)g_shared.counter, (unsigned long long)t.total);
        return 1;
    }
    g_tp = (struct tp_result){ nthreads, duration_ms, t };
    return 0;
}

static void emit_throughput(void)
{
    hps_json_begin_object(NULL);
    hps_json_str("mode", "throughput");
    hps_json_int("threads", g_tp.threads);
    hps_json_int("duration_ms", g_tp.duration_ms);
    hps_bench_totals_json(&g_tp.t);
    hps_json_end_object();
}

/* ---- --probe: every variant in one process ----------------------------- */

enum { NVAR = HPS_PROBE_NLOCKS };

static double probe_batch(int v, long iters)
{
    return v < HPS_PROBE_NGLIBC ? batch_pthread(hps_probe_lock_glibc(v), iters)
                                : batch_hps(hps_probe_lock_hps(v), iters);
}

static int run_probe(int argc, char **argv)
{
    long samples, pairs;
    const hps_probe_opt_t opts[] = { HPS_PROBE_OPT_SAMPLES(samples, 400, 4000),
                                     { "--batch", &pairs, 1, 100000000L, 1000, 1000 },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = PROBE_USAGE, .opts = opts };
    /* argv[0] is "--probe" here: the parser starts after it. */
    hps_probe_parse(&cli, argc, argv);
    size_t n = (size_t)samples;

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
            probe_batch(v, pairs);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < NVAR; k++) {
            /* Rotate the order so no variant always follows the same one. */
            int v = (int)((i + (size_t)k) % NVAR);
            ns[v][i] = probe_batch(v, pairs);
        }
    hps_probe_clock_finish();

    hps_probe_doc_begin("mutex");
    hps_json_str("program", "hps-bench-locks");
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

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--probe"))
        return run_probe(argc - 1, argv + 1);
    const char *mode = NULL;
    hps_bench_args_t o = HPS_BENCH_ARGS_INIT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mode") && v) {
            mode = v;
        } else if (!hps_bench_parse_common(&o, a, v)) {
            hps_bench_log("unknown or incomplete argument '%s'", a);
            usage();
            return 2;
        }
        i++;
    }
    int uncontended = mode && !strcmp(mode, "uncontended");
    if (!uncontended && !(mode && !strcmp(mode, "throughput"))) {
        hps_bench_log("--mode must be uncontended or throughput");
        usage();
        return 2;
    }
    /*
     * Measure first, print afterwards: the context block's own timer probe
     * and hwloc scan would otherwise run between the figures.
     */
    int rc = uncontended ? run_uncontended(o.iters, (int)o.reps)
                         : run_throughput((int)o.threads, o.duration_ms);
    if (rc != 0)
        return rc;
    hps_json_begin_object(NULL);
    hps_json_str("program", "hps-bench-locks");
    hps_json_str("mode", mode);
    hps_json_str("mutex_provider", hps_bench_provider("pthread_mutex_lock"));
    hps_json_str("hpsync_lock_env", getenv("HPSYNC_LOCK"));
    hps_bench_context();
    hps_json_begin_array("rows");
    if (uncontended)
        emit_uncontended(o.iters);
    else
        emit_throughput();
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish();
}
