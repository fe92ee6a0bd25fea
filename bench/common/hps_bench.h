/* SPDX-License-Identifier: MIT */
/*
 * hps_bench.h - the tiny harness every hpsync benchmark and probe shares.
 *
 * Promise: a program built on it prints exactly one JSON document on stdout
 * (the only thing the Python CLI reads), or writes JSON Lines (one complete
 * object a line, each flushed) to a file it is given, and writes every human
 * message to stderr.  The JSON writer is a streaming one with a small
 * nesting stack, so a benchmark emits rows as it measures them and never
 * builds a tree in memory.  Keys are given by the caller; pass NULL as the
 * key inside arrays.
 */
#ifndef HPS_BENCH_H
#define HPS_BENCH_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "prim/tsc.h"

#define HPS_BENCH_SCHEMA_VERSION 1

/* ---- JSON writer (stdout) ---------------------------------------------- */

/* Write the next documents to f (NULL: stdout), indented or, with compact,
 * each on one line (a JSON Lines record); hps_json_finish() ends each. */
void hps_json_open(FILE *f, int compact);
void hps_json_begin_object(const char *key);
void hps_json_end_object(void);
void hps_json_begin_array(const char *key);
void hps_json_end_array(void);
void hps_json_str(const char *key, const char *val);     /* NULL val -> null */
void hps_json_int(const char *key, int64_t val);
void hps_json_uint(const char *key, uint64_t val);
void hps_json_num(const char *key, double val);          /* NaN/inf -> null */
void hps_json_bool(const char *key, int val);
void hps_json_null(const char *key);
/* An array of n numbers under key (one entry per repetition, say). */
void hps_json_num_array(const char *key, const double *v, int n);
/*
 * Start a value the caller writes itself (e.g. a JSON array produced by
 * another module); returns the stream to write it to.  The caller must write
 * exactly one complete JSON value.
 */
FILE *hps_json_raw(const char *key);
/* Finish the document: newline and flush; returns nonzero on a write error. */
int hps_json_finish(void);

/* ---- timing ------------------------------------------------------------ */

/* Any clock in nanoseconds. */
static inline uint64_t hps_bench_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t hps_bench_now_ns(void) { return hps_bench_clock_ns(CLOCK_MONOTONIC); }

/* 1 when hps_bench_rdtsc() reads a real time-stamp counter (x86 only). */
#define HPS_BENCH_HAVE_TSC HPS_HAVE_TSC
static inline uint64_t hps_bench_rdtsc(void) { return hps_tsc_read(); }

typedef struct hps_clock_cost {
    double call_ns;          /* mean cost of one clock_gettime(CLOCK_MONOTONIC) */
    uint64_t step_ns;        /* smallest nonzero difference between two calls */
} hps_clock_cost_t;
void hps_bench_clock_cost(hps_clock_cost_t *out);             /* CLOCK_MONOTONIC */
void hps_bench_clock_cost_of(clockid_t id, hps_clock_cost_t *out);

/* CPUID 0x80000007 EDX bit 8 (the TSC runs at a constant rate): 1, 0, or -1
 * when the leaf is missing or the CPU has no TSC. */
int hps_bench_tsc_invariant(void);
/* TSC ticks per ns against CLOCK_MONOTONIC over one window of ms. */
double hps_bench_tsc_window(long ms);

/* The smallest nonzero difference that recurs among n back-to-back timer
 * differences (sorts diffs in place); 0 if none. */
uint64_t hps_bench_step(uint64_t *diffs, size_t n);
/* The most frequent nonzero difference (sorts diffs in place); 0 if none. */
uint64_t hps_bench_mode(uint64_t *diffs, size_t n);

/* The kernel's clock source ("tsc", "kvm-clock", ...) or "unknown". */
const char *hps_bench_clocksource(void);

/* Sort helper and order statistics over doubles (sorts in place). */
void hps_bench_sort(double *v, size_t n);
double hps_bench_median(double *v, size_t n);

/*
 * Time iters rounds of LOCK; <compiler barrier>; UNLOCK and return the mean ns
 * per round.  A macro, not a function taking callbacks, so each benchmark's
 * loop keeps its lock calls inline exactly as a user's code has them; the
 * barrier keeps the pair from being treated as empty by any future inliner.
 * Use as the body of a (noinline) batch function:
 *     return HPS_BENCH_TIME_PAIRS(iters, lock(l), unlock(l));
 */
#define HPS_BENCH_TIME_PAIRS(iters, LOCK, UNLOCK)                              \
    __extension__({                                                            \
        long hps_n_ = (iters);                                                 \
        uint64_t hps_t0_ = hps_bench_now_ns();                                 \
        for (long hps_i_ = 0; hps_i_ < hps_n_; hps_i_++) {                     \
            LOCK;                                                              \
            __asm__ __volatile__("" ::: "memory");                             \
            UNLOCK;                                                            \
        }                                                                      \
        (double)(hps_bench_now_ns() - hps_t0_) / (double)hps_n_;               \
    })

/* ---- command line ------------------------------------------------------ */

#define HPS_BENCH_MAX_REPS 1000
#define HPS_BENCH_MAX_THREADS 4096

/* The options every timing benchmark takes, with their defaults. */
typedef struct hps_bench_args {
    long iters, reps, threads, duration_ms;
} hps_bench_args_t;
#define HPS_BENCH_ARGS_INIT { 1000000, 5, 1, 200 }

/* A whole number in lo..hi, or exit 2 with one line naming the option. */
long hps_bench_parse_num(const char *opt, const char *s, long lo, long hi);
/*
 * If opt is --iters, --reps, --threads or --duration-ms, parse its value v
 * (NULL when missing: exit 2 as for a bad value) into *a and return 1;
 * otherwise return 0 and leave *a alone.
 */
int hps_bench_parse_common(hps_bench_args_t *a, const char *opt, const char *v);

/* ---- threads ------------------------------------------------------------ */

/* Create and join one thread, so the process counts as multithreaded (as
 * every real user of a lock is); returns 0, or 1 after logging. */
int hps_bench_become_multithreaded(void);

/*
 * The start/stop handshake of a timed multi-threaded run.  Each program keeps
 * its own (static) gate, so the stop check in its hot loop reads a flag the
 * compiler can address directly.  Release/acquire on the flags only order
 * the start and stop handshake.
 */
typedef struct hps_bench_gate {
    atomic_int go, stop, ready, started;   /* go, started: an opener's gate only */
    /* 0: the thread running the workers opens the gate (it times the run
     * from there).  n > 0: the workers meet there, n of them, and time
     * themselves by their own clocks (the ART's phases); see
     * hps_bench_gate_meet. */
    int open_at;
    uint64_t open_ns;            /* open_at > 0: when the last worker arrived */
} hps_bench_gate_t;

/* Before creating a run's workers (a program may run several on one gate). */
void hps_bench_gate_reset(hps_bench_gate_t *g, int open_at);

/* Worker side of a gate with open_at > 0: wait, napping, until all
 * open_at workers have arrived.  Napping, not spinning or yielding: a new
 * thread is often queued on its creator's sibling's CPU while another CPU
 * sits idle, and the idle one only pulls it at the next balancing tick
 * (4 ms here).  The ART's two workers (a pthread barrier, then a spinning
 * gate) started 0.5-4.6 ms apart in most of their 20-200 ms phases on the
 * 2-vCPU guest, often both on one CPU: the second one kept the first one's
 * CPU until the tick.  A napping waiter leaves the runqueue, and the
 * wake-up after its nap places it on an idle CPU: more than 0.5 ms apart
 * in 14 of 80 phases, from 66. */
void hps_bench_gate_meet(hps_bench_gate_t *g);

/* Worker side: announce readiness, wait until the run starts, then say it
 * has started (the run lasts at least its duration after the last worker
 * did, so a worker the scheduler kept off the CPU is not stopped before its
 * first operation).  The wait yields the CPU every 256 polls: with more
 * threads than CPUs, workers that only spun held the CPUs from the thread
 * creating the others, and each run of 8 threads on the 2-vCPU guest spent
 * ~20 ms before its start (histogram b16, the suite's 11 variants in 8
 * slices: 4.0 s wall for 1.7 s timed; 2.2 s in one slice).  Alone on its
 * CPU a yield returns at once, so the wait still spins there. */
static inline void hps_bench_gate_enter(hps_bench_gate_t *g)
{
    if (g->open_at > 0) {
        hps_bench_gate_meet(g);
        return;
    }
    atomic_fetch_add_explicit(&g->ready, 1, memory_order_release);
    for (unsigned polls = 1; !atomic_load_explicit(&g->go, memory_order_acquire); polls++)
        if (polls % 256 == 0)
            sched_yield();
    atomic_fetch_add_explicit(&g->started, 1, memory_order_relaxed);
}

/* Worker side, once per operation: nonzero once the run is over. */
static inline int hps_bench_gate_stopped(hps_bench_gate_t *g)
{
    return atomic_load_explicit(&g->stop, memory_order_relaxed);
}

/* What every worker of a timed run records; a benchmark's own worker type
 * starts with it. */
typedef struct hps_bench_worker {
    pthread_t tid;
    int index;                   /* 0..n-1 */
    uint64_t ops, end_ns;        /* set by the worker when it stops */
} hps_bench_worker_t;

/* Worker side, on leaving its loop: record what it did and when it stopped. */
static inline void hps_bench_worker_done(hps_bench_worker_t *w, uint64_t ops)
{
    w->end_ns = hps_bench_now_ns();
    w->ops = ops;
}

typedef struct hps_bench_totals {
    double secs;                 /* start to the last worker's stop */
    uint64_t total, min_ops, max_ops;
} hps_bench_totals_t;

/*
 * Reset the gate, allocate n workers of size bytes each (64-byte aligned,
 * zeroed, index set), start fn on each, wait until all are at the gate, release them, sleep
 * duration_ms once all have started, stop and join them, and fill *out.  Returns the workers (the
 * caller reads what else they counted, then frees them), or NULL after
 * logging.  Elapsed runs to the last thread's exit: a preempted holder is
 * charged.  duration_ms 0: fixed work (the workers ignore the stop flag and
 * end when their work is done): the workers meet at the gate
 * (hps_bench_gate_meet) and elapsed runs from the last one's arrival.
 */
void *hps_bench_run_workers(hps_bench_gate_t *g, int n, size_t size, void *(*fn)(void *),
                            long duration_ms, hps_bench_totals_t *out);

/* bytes rounded up to whole 64-byte lines. */
static inline size_t hps_bench_lines(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}
/* Zeroed memory on lines of its own, bytes rounded up to whole lines (as
 * aligned_alloc requires: glibc does not care, TSan's interceptor
 * refuses); NULL when out of memory. */
void *hps_bench_lines_alloc(size_t bytes);

/* Write elapsed_s, ops, ops_per_sec, ops_min_thread, ops_max_thread and
 * counter_ok (true: call it once the count was checked). */
void hps_bench_totals_json(const hps_bench_totals_t *t);

/* ---- machine topology (hwloc) ------------------------------------------ */

typedef struct hps_cache_info {
    uint64_t size;           /* bytes; 0 when unknown */
    int ways;                /* -1 fully associative, 0 unknown */
    unsigned line;           /* bytes; 0 when unknown */
} hps_cache_info_t;

typedef struct hps_topo {
    int packages, cores, pus, numa_nodes;
    hps_cache_info_t l1d, l2, l3;
    char cpu_model[128];     /* hwloc's CPUModel, "unknown" when absent */
} hps_topo_t;

/* Fills *t; returns 0, or -1 (fields zero) when hwloc cannot load a topology. */
int hps_bench_topo(hps_topo_t *t);
/* Write a cache as {size, ways, line, sets} under key. */
void hps_bench_cache_json(const char *key, const hps_cache_info_t *c);
/* A cache's sets (size / (ways x line)), or 0 when its shape is unknown. */
uint64_t hps_bench_cache_sets(const hps_cache_info_t *c);

/* ---- the context block -------------------------------------------------- */

/*
 * Write "schema_version" and "context": {host, cpu_model, topology, l1d,
 * timer, compiler, compile_flags, git_commit, kernel, glibc} into the object
 * currently open.  Every benchmark calls this once, first.
 */
void hps_bench_context(void);
/* The path of the shared object that supplies symbol to this program (libc,
 * or a preloaded library), or "unknown": which malloc or mutex ran. */
const char *hps_bench_provider(const char *symbol);

/* One line on stderr, prefixed with the program name. */
void hps_bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
