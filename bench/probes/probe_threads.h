/* SPDX-License-Identifier: MIT */
/*
 * probe_threads.h - what the thread/lock/condvar/atomic probes share.
 *
 * Promise: a probe built on it prints one document
 *   {schema_version, probe, context, params, steal_ms, results: [rows]}
 * and takes --quick and --samples N (anything else it does not know is one
 * line on stderr and exit 2).  Probes measure first and print afterwards,
 * so the context block's own timer probe and hwloc scan never run between
 * samples.
 *
 * The stamp clock: rdtsc when the kernel itself uses the TSC as its clock
 * source (it then vouches that the counters of all CPUs agree, which the
 * cross-thread intervals here need), else CLOCK_MONOTONIC.  Ticks are turned
 * into ns with a rate measured against CLOCK_MONOTONIC over the whole run,
 * so the conversion is exact to a few ppm without a separate calibration.
 */
#ifndef HPS_PROBE_THREADS_H
#define HPS_PROBE_THREADS_H

#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "hps_dist.h"

/* Samples kept raw in a latency row, and pairs kept in a pairs row. */
#define PROBE_KEEP_RAW 2000
#define PROBE_KEEP_PAIRS 2000

static int probe_use_tsc;
static uint64_t probe_t0_ticks, probe_t0_ns;
static double probe_ns_per_tick = 1.0;
static double probe_steal0;

/* A stamp: ticks of the chosen clock.  The lfence keeps rdtsc from being
 * executed ahead of the code before it (it is not ordered otherwise). */
static inline uint64_t probe_now(void)
{
#if HPS_BENCH_HAVE_TSC
    if (probe_use_tsc) {
        _mm_lfence();
        return hps_bench_rdtsc();
    }
#endif
    return hps_bench_now_ns();
}

/* Call once, before measuring: picks the clock and starts its rate window
 * and the steal-time reading. */
static inline void probe_clock_start(void)
{
    probe_use_tsc = HPS_BENCH_HAVE_TSC && !strcmp(hps_bench_clocksource(), "tsc");
    probe_t0_ns = hps_bench_now_ns();
    probe_t0_ticks = probe_now();
    probe_steal0 = hps_steal_ms();
}

/* Call once, after measuring: fixes the tick rate (waiting until the window
 * is at least 20 ms long, so the rate is good to well under 0.1%). */
static inline void probe_clock_finish(void)
{
    if (!probe_use_tsc)
        return;
    uint64_t ns, ticks;
    do {
        ns = hps_bench_now_ns();
        ticks = probe_now();
    } while (ns - probe_t0_ns < 20000000ull);
    probe_ns_per_tick = (double)(ns - probe_t0_ns) / (double)(ticks - probe_t0_ticks);
}

/* A stamp difference in ns (call after probe_clock_finish).  Stamps taken on
 * two CPUs may differ by a few ticks of skew; an interval that comes out
 * negative that way is reported as 0, never as a huge unsigned value. */
static inline double probe_ns(uint64_t from, uint64_t to)
{
    return to >= from ? (double)(to - from) * probe_ns_per_tick : 0.0;
}

/* ---- arguments ---------------------------------------------------------- */

typedef struct probe_args {
    int quick;
    long samples;            /* -1: the profile's default */
} probe_args_t;

/*
 * If argv[*i] is --quick or --samples N, consume it (and its value) and
 * return 1; else 0.  A bad --samples value exits 2 with one line.
 */
static inline int probe_parse_common(probe_args_t *a, int argc, char **argv, int *i)
{
    if (!strcmp(argv[*i], "--quick")) {
        a->quick = 1;
        return 1;
    }
    if (!strcmp(argv[*i], "--samples")) {
        const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
        a->samples = hps_bench_parse_num("--samples", v, 1, 10000000L);
        (*i)++;
        return 1;
    }
    return 0;
}

/* The one line for an argument nobody recognised, then exit 2. */
static inline void probe_bad_arg(const char *arg, const char *usage)
{
    hps_bench_log("unknown or incomplete argument '%s' (usage: %s)", arg, usage);
    exit(2);
}

/* ---- the document ------------------------------------------------------- */

/* Open the document and write probe and context; the caller writes params
 * into the object "params" it gets open, then calls probe_doc_results(). */
static inline void probe_doc_begin(const char *probe)
{
    hps_json_begin_object(NULL);
    hps_json_str("probe", probe);
    hps_bench_context();
    hps_json_begin_object("params");
    hps_json_str("timer", probe_use_tsc ? "rdtsc" : "CLOCK_MONOTONIC");
    hps_json_num("timer_ns_per_tick", probe_ns_per_tick);
}

/* Close params, write steal_ms and open "results". */
static inline void probe_doc_results(double steal1)
{
    hps_json_end_object();
    double s = probe_steal0 >= 0 && steal1 >= 0 ? steal1 - probe_steal0 : -1;
    hps_json_num("steal_ms", s);
    hps_json_begin_array("results");
}

/* Close results and the document; returns the program's exit status. */
static inline int probe_doc_end(void)
{
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish() ? 1 : 0;
}

/* A latency row.  v is not modified (the distribution sorts a copy), so the
 * same samples can still go into a pairs row in time order. */
static inline void probe_row_latency(const char *metric, const char *variant, const double *v,
                                     size_t n)
{
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        hps_bench_log("out of memory");
        exit(1);
    }
    memcpy(c, v, n * sizeof *c);
    hps_json_begin_object(NULL);
    hps_json_str("kind", "latency");
    hps_json_str("metric", metric);
    hps_json_str("variant", variant);
    hps_dist_json("dist", c, n, "ns", PROBE_KEEP_RAW);
    hps_json_end_object();
    free(c);
}

/* A pairs row: sample i's x and y, kept in time order. */
static inline void probe_row_pairs(const char *metric, const char *variant, const char *x,
                                   const char *y, const double *a, const double *b, size_t n)
{
    hps_json_begin_object(NULL);
    hps_json_str("kind", "pairs");
    hps_json_str("metric", metric);
    hps_json_str("variant", variant);
    hps_json_str("x", x);
    hps_json_str("y", y);
    hps_dist_pairs_json("pairs", a, b, n, PROBE_KEEP_PAIRS);
    hps_json_end_object();
}

static inline void probe_row_scalar(const char *metric, double value, const char *unit)
{
    hps_json_begin_object(NULL);
    hps_json_str("kind", "scalar");
    hps_json_str("metric", metric);
    hps_json_num("value", value);
    hps_json_str("unit", unit);
    hps_json_end_object();
}

/* Zeroed memory for n samples, or exit 1 after logging. */
static inline double *probe_alloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) {
        hps_bench_log("out of memory for %zu samples", n);
        exit(1);
    }
    return p;
}

/* A polite busy-wait step (lets an SMT sibling run). */
static inline void probe_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Spin (not sleep: a sleep's wake-up would itself be seconds of jitter on a
 * loaded guest) for about ns nanoseconds. */
static inline void probe_spin_ns(uint64_t ns)
{
    uint64_t t0 = hps_bench_now_ns();
    while (hps_bench_now_ns() - t0 < ns)
        probe_relax();
}

#endif
