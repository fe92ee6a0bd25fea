// SPDX-License-Identifier: MIT
/*
 * hps-bench-locks: pthread_mutex_lock/unlock as an unmodified program sees it.
 *
 * The program calls plain pthread functions, so run bare it measures glibc
 * and run under LD_PRELOAD=libhpsync-preload.so it measures whichever hpsync
 * algorithm HPSYNC_LOCK selects.  It reports which shared object actually
 * provides pthread_mutex_lock, so the caller can check the preload took.
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
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hps_bench.h"

#define MAX_THREADS 4096

/* The mutex and the data it protects share a line, as in most real code. */
static struct shared {
    pthread_mutex_t mutex;
    uint64_t counter;
    uint64_t sum;
    uint64_t mix;
} __attribute__((aligned(64))) g_shared = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 };

static void usage(void)
{
    fprintf(stderr,
            "usage: hps-bench-locks --mode uncontended --iters N [--reps R]\n"
            "       hps-bench-locks --mode throughput --threads T --duration-ms D\n");
}

/* A whole number in lo..hi, or exit 2 with one line naming the option. */
static long parse_num(const char *opt, const char *s, long lo, long hi)
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

/* Which object provides pthread_mutex_lock: libc, or the hpsync preload. */
static const char *mutex_provider(void)
{
    Dl_info di;
    void *f = dlsym(RTLD_DEFAULT, "pthread_mutex_lock");
    if (f && dladdr(f, &di) && di.dli_fname)
        return di.dli_fname;
    return "unknown";
}

/* ---- uncontended --------------------------------------------------------- */

#define MAX_REPS 1000

struct phase {
    const char *name;
    int reps;
    double ns[MAX_REPS];
};

static double time_batch(long iters)
{
    pthread_mutex_t *m = &g_shared.mutex;
    uint64_t t0 = hps_bench_now_ns();
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(m);
        /* Keep the pair from being treated as empty by any future inliner. */
        __asm__ __volatile__("" ::: "memory");
        pthread_mutex_unlock(m);
    }
    return (double)(hps_bench_now_ns() - t0) / (double)iters;
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
    hps_json_begin_array("ns_per_op_reps");
    for (int r = 0; r < p->reps; r++)
        hps_json_num(NULL, p->ns[r]);
    hps_json_end_array();
    double med = hps_bench_median(p->ns, (size_t)p->reps);   /* sorts ns */
    hps_json_num("ns_per_op_min", p->ns[0]);
    hps_json_num("ns_per_op_median", med);
    hps_json_end_object();
}

static void *noop_thread(void *arg) { return arg; }

static struct phase g_single, g_multi;

static int run_uncontended(long iters, int reps)
{
    /* Must come before any pthread_create: glibc tracks single-threadedness. */
    measure_phase(&g_single, "single_threaded_process", iters, reps);
    pthread_t t;
    if (pthread_create(&t, NULL, noop_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
        hps_bench_log("cannot create a thread");
        return 1;
    }
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
    pthread_t tid;
    uint64_t ops;
    uint64_t end_ns;
} __attribute__((aligned(64)));

static atomic_int g_go, g_stop, g_ready;

static struct tp_result {
    int threads;
    long duration_ms;
    double secs;
    uint64_t total, min_ops, max_ops;
} g_tp;

static void *hammer(void *arg)
{
    struct worker *w = arg;
    struct shared *s = &g_shared;
    uint64_t ops = 0;
    /* Release/acquire on the flags only order the start and stop handshake. */
    atomic_fetch_add_explicit(&g_ready, 1, memory_order_release);
    while (!atomic_load_explicit(&g_go, memory_order_acquire))
        ;
    while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
        pthread_mutex_lock(&s->mutex);
        /* The critical section: a few dependent, non-atomic updates. */
        s->counter++;
        s->sum += s->counter;
        s->mix = (s->mix ^ s->sum) * 0x9E3779B97F4A7C15ull;
        pthread_mutex_unlock(&s->mutex);
        ops++;
    }
    w->end_ns = hps_bench_now_ns();
    w->ops = ops;
    return NULL;
}

static int run_throughput(int nthreads, long duration_ms)
{
    struct worker *w = aligned_alloc(64, sizeof *w * (size_t)nthreads);
    if (!w) {
        hps_bench_log("out of memory");
        return 1;
    }
    memset(w, 0, sizeof *w * (size_t)nthreads);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&w[i].tid, NULL, hammer, &w[i]);
        if (rc != 0) {
            hps_bench_log("cannot create thread %d of %d: %s", i + 1, nthreads, strerror(rc));
            return 1;
        }
    }
    /* Start the clock only once every thread exists, so creation is not timed. */
    while (atomic_load_explicit(&g_ready, memory_order_acquire) != nthreads) {
        struct timespec nap = { 0, 100000 };
        nanosleep(&nap, NULL);
    }
    uint64_t t0 = hps_bench_now_ns();
    atomic_store_explicit(&g_go, 1, memory_order_release);
    struct timespec d = { duration_ms / 1000, (duration_ms % 1000) * 1000000L };
    while (nanosleep(&d, &d) != 0 && errno == EINTR)
        ;
    atomic_store_explicit(&g_stop, 1, memory_order_relaxed);
    uint64_t total = 0, min_ops = UINT64_MAX, max_ops = 0, t1 = t0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(w[i].tid, NULL);
        total += w[i].ops;
        min_ops = w[i].ops < min_ops ? w[i].ops : min_ops;
        max_ops = w[i].ops > max_ops ? w[i].ops : max_ops;
        t1 = w[i].end_ns > t1 ? w[i].end_ns : t1;
    }
    free(w);
    if (g_shared.counter != total) {
        hps_bench_log("mutual exclusion violated: protected counter %llu != %llu operations",
                      (unsigned long long)g_shared.counter, (unsigned long long)total);
        return 1;
    }
    /* Elapsed runs to the last thread's exit: a preempted holder is charged. */
    g_tp = (struct tp_result){ nthreads, duration_ms, (double)(t1 - t0) / 1e9,
                               total, min_ops, max_ops };
    return 0;
}

static void emit_throughput(void)
{
    hps_json_begin_object(NULL);
    hps_json_str("mode", "throughput");
    hps_json_int("threads", g_tp.threads);
    hps_json_int("duration_ms", g_tp.duration_ms);
    hps_json_num("elapsed_s", g_tp.secs);
    hps_json_uint("ops", g_tp.total);
    hps_json_num("ops_per_sec", g_tp.secs > 0 ? (double)g_tp.total / g_tp.secs : 0.0);
    hps_json_uint("ops_min_thread", g_tp.min_ops);
    hps_json_uint("ops_max_thread", g_tp.max_ops);
    hps_json_bool("counter_ok", 1);
    hps_json_end_object();
}

int main(int argc, char **argv)
{
    const char *mode = NULL;
    long iters = 1000000, reps = 5, threads = 1, duration_ms = 200;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mode") && v) {
            mode = v;
        } else if (!strcmp(a, "--iters")) {
            iters = parse_num(a, v, 1, 1000000000L);
        } else if (!strcmp(a, "--reps")) {
            reps = parse_num(a, v, 1, MAX_REPS);
        } else if (!strcmp(a, "--threads")) {
            threads = parse_num(a, v, 1, MAX_THREADS);
        } else if (!strcmp(a, "--duration-ms")) {
            duration_ms = parse_num(a, v, 1, 3600L * 1000);
        } else {
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
    int rc = uncontended ? run_uncontended(iters, (int)reps) : run_throughput((int)threads, duration_ms);
    if (rc != 0)
        return rc;
    hps_json_begin_object(NULL);
    hps_json_str("program", "hps-bench-locks");
    hps_json_str("mode", mode);
    hps_json_str("mutex_provider", mutex_provider());
    hps_json_str("hpsync_lock_env", getenv("HPSYNC_LOCK"));
    hps_bench_context();
    hps_json_begin_array("rows");
    if (uncontended)
        emit_uncontended(iters);
    else
        emit_throughput();
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish();
}
