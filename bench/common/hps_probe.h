/* SPDX-License-Identifier: MIT */
/*
 * hps_probe.h - what every characterization probe (bench/probes) shares.
 *
 * Promise: a probe built on it prints one document
 *   {probe, schema_version, context, params: {...}, steal_ms, results: [rows]}
 * where the rows are objects with "kind" and "metric" (curve, scalar,
 * latency, pairs, or the probe's own kinds).  Probes measure first and print
 * afterwards, so the context block's own timer probe and hwloc scan never run
 * between samples.  Every argument error is one line on stderr and exit 2.
 *
 * The stamp clock (hps_probe_clock_start): rdtsc when the kernel itself uses
 * the TSC as its clock source (it then vouches that the counters of all CPUs
 * agree, which cross-thread intervals need), else CLOCK_MONOTONIC.  Ticks
 * are turned into ns with a rate measured against CLOCK_MONOTONIC over the
 * whole run, so the conversion is exact to a few ppm without a separate
 * calibration.
 */
#ifndef HPS_PROBE_H
#define HPS_PROBE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hpsync/pr.h"
#include "hps_bench.h"
#include "hps_dist.h"
#include "hps_pin.h"

#define HPS_PROBE_MAX_POINTS 64
#define HPS_PROBE_MAX_OPTS 32     /* whole-number options in one probe's table */
#define HPS_PROBE_MAX_REPS 100
/* Samples kept raw in a latency row, and pairs kept in a pairs row. */
#define HPS_PROBE_KEEP_RAW 2000
#define HPS_PROBE_KEEP_PAIRS 2000

/* ---- command line ------------------------------------------------------- */

typedef struct hps_probe_list {
    int n;
    int v[HPS_PROBE_MAX_POINTS];
} hps_probe_list_t;

typedef struct hps_probe_maps {
    int n;
    hps_map_t v[3];
} hps_probe_maps_t;

/* A whole-number option: "--name V" stores V (in lo..hi) into *val.  When
 * it is not given, the parser stores the profile's default, quick or full
 * (both 0: *val keeps what the caller set), so no probe repeats that choice. */
typedef struct hps_probe_opt {
    const char *name;
    long *val;
    long lo, hi;
    long quick, full;
} hps_probe_opt_t;

/* --samples as the thread probes take it, and the end of an option table. */
#define HPS_PROBE_OPT_SAMPLES(var, quick, full) { "--samples", &(var), 1, 10000000L, quick, full }
#define HPS_PROBE_OPT_END { NULL, NULL, 0, 0, 0, 0 }

/* What a probe's command line is made of.  --quick is always taken. */
typedef struct hps_probe_cli {
    const char *usage;            /* "hps-probe-x [--quick] ..." */
    /* Nonzero: --help prints "usage: ..." on stderr and exits 0, and an
     * unknown argument says "(try --help)"; zero: --help is unknown and an
     * unknown argument quotes the usage. */
    int help;
    hps_probe_list_t *threads;    /* takes --threads LIST when non-NULL (n 0 unless given) */
    hps_probe_maps_t *maps;       /* takes --mappings LIST when non-NULL (all three unless given) */
    const hps_probe_opt_t *opts;  /* whole-number options, ended by a NULL name; may be NULL */
} hps_probe_cli_t;

/* Parse argv[1..] by c (exits on --help or an error); returns 1 for --quick. */
int hps_probe_parse(const hps_probe_cli_t *c, int argc, char **argv);

/* Default thread counts: 1, then powers of two and the 1.5x steps between
 * them (2, 3, 4, 6, 8, 12, ...) up to twice the PUs, so oversubscription is
 * always on the curve.  1,2,3,4 on 2 PUs. */
void hps_probe_default_threads(int pus, hps_probe_list_t *l);

/* Load the topology into *topo (logging when hwloc cannot: 1 PU assumed) and,
 * when no --threads were given (threads->n == 0), set the default counts. */
void hps_probe_topo_threads(hps_topo_t *topo, hps_probe_list_t *threads);

/* ---- the stamp clock and the steal-time window --------------------------- */

extern int hps_probe_use_tsc;
extern double hps_probe_ns_per_tick;

/* A stamp: ticks of the chosen clock.  The TSC read is the ordered one, so
 * it is not executed ahead of the code before it. */
static inline uint64_t hps_probe_now(void)
{
#if HPS_BENCH_HAVE_TSC
    if (hps_probe_use_tsc)
        return hps_tsc_read_ordered();
#endif
    return hps_bench_now_ns();
}

/* Bracket the measurements: steal time is read at start and stop. */
void hps_probe_steal_start(void);
void hps_probe_steal_stop(void);

/* As steal_start/steal_stop, and also pick the stamp clock and fix its tick
 * rate (waiting until the window is at least 20 ms long, so the rate is good
 * to well under 0.1%).  A probe that uses stamps calls these instead; its
 * params then say which timer it used. */
void hps_probe_clock_start(void);
void hps_probe_clock_finish(void);

/* A stamp difference in ns (call after hps_probe_clock_finish).  Stamps
 * taken on two CPUs may differ by a few ticks of skew; an interval that
 * comes out negative that way is reported as 0, never as a huge value. */
static inline double hps_probe_ns(uint64_t from, uint64_t to)
{
    return to >= from ? (double)(to - from) * hps_probe_ns_per_tick : 0.0;
}

/* ---- the document ------------------------------------------------------- */

/* Open the document, write probe, schema_version and context, and open
 * "params" (with timer and timer_ns_per_tick when the stamp clock ran); the
 * caller writes its params, then calls hps_probe_doc_results(). */
void hps_probe_doc_begin(const char *probe);
/* "threads" and "mappings" arrays (inside params). */
void hps_probe_params_lists(const hps_probe_list_t *threads, const hps_probe_maps_t *maps);
/* Close params, write steal_ms (-1 when unknown) and open "results". */
void hps_probe_doc_results(void);
/* Close results and the document; returns the program's exit status. */
int hps_probe_doc_end(void);

/* ---- rows ----------------------------------------------------------------- */

/* Open a row {kind, metric[, variant]}; close it with hps_probe_row_end(). */
void hps_probe_row_begin(const char *kind, const char *metric, const char *variant);
void hps_probe_row_end(void);

/* Open a curve row; value is the median of the n <= HPS_PROBE_MAX_REPS
 * repetitions (so one preempted repetition cannot move the curve).  Extra
 * keys (a checksum, say) go before hps_probe_row_end(). */
void hps_probe_row_curve(const char *metric, hps_map_t m, int threads, const double *reps,
                         int n, const char *unit);
void hps_probe_row_scalar(const char *metric, double value, const char *unit);
/* A latency row.  v is not modified (the distribution sorts a copy), so the
 * same samples can still go into a pairs row in time order. */
void hps_probe_row_latency(const char *metric, const char *variant, const double *v, size_t n);
/* A pairs row: sample i's x and y, kept in time order. */
void hps_probe_row_pairs(const char *metric, const char *variant, const char *x, const char *y,
                         const double *a, const double *b, size_t n);

/* ---- small helpers -------------------------------------------------------- */

/* Zeroed memory for n samples, or exit 1 after logging. */
double *hps_probe_alloc(size_t n);

/* The transparent huge page mode in effect ("always", "madvise", "never"),
 * or "unknown" (a static buffer). */
const char *hps_probe_thp_mode(void);

/* Spin (not sleep: a sleep's wake-up would itself be seconds of jitter on a
 * loaded guest) for about ns nanoseconds. */
static inline void hps_probe_spin_ns(uint64_t ns)
{
    uint64_t t0 = hps_bench_now_ns();
    while (hps_bench_now_ns() - t0 < ns)
        hps_cpu_relax();
}

/* ---- a team of pinned threads running repetitions in lock step ---------- */

struct hps_probe_team;

typedef struct hps_probe_member {
    pthread_t tid;
    int index, cpu;
    struct hps_probe_team *team;
    uint64_t start_ns[HPS_PROBE_MAX_REPS], end_ns[HPS_PROBE_MAX_REPS];
    void *state;                  /* the probe's per-thread data */
    int failed;
} __attribute__((aligned(64))) hps_probe_member_t;

typedef struct hps_probe_team {
    int n, reps;
    pthread_barrier_t bar;
    /* Called once in the worker, after pinning (first touch goes here). */
    int (*setup)(hps_probe_member_t *m);
    /* The timed work of one repetition. */
    void (*pass)(hps_probe_member_t *m, int rep);
    /* Called once in the worker after the last repetition. */
    void (*teardown)(hps_probe_member_t *m);
    hps_probe_member_t *members;
} hps_probe_team_t;

/*
 * Run the team of n threads placed by mapping map; secs[r] is the wall time
 * of repetition r from the first thread's start to the last one's end (so
 * a preempted straggler is charged, as it would be in a parallel program).
 * Returns 0, or 1 after logging.  The caller sets n, reps and the callbacks
 * and may read members[i].state until it calls hps_probe_team_free().
 */
/* n zeroed, 64-byte aligned per-thread states of size bytes each, and in
 * *ptrs the array of pointers to them (the states argument of team_run);
 * exits 1 after logging when out of memory.  Free both with free(). */
void *hps_probe_team_states(int n, size_t size, void ***ptrs);
int hps_probe_team_run(hps_probe_team_t *t, hps_map_t map, double *secs, void **states);
void hps_probe_team_free(hps_probe_team_t *t);

#endif
