/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what every workload program (bench/workloads/<name>.c)
 * shares: the command line, the threads, the timing, the repetitions, the
 * validation and the JSON document (on bench/common's writer and worker
 * runner).
 *
 *   hps-workload-<name> [--rows LIST] [--variants LIST] [--k LIST]
 *                       [--threads LIST] [--reps R] [--quick]
 *                       [--scale F] [--selftest-corrupt]
 *   hps-workload-<name> --describe
 *
 * --describe prints what the program offers (variants, per TM backend;
 * figures; sizes) as the JSON `hpsync bench workloads` reads
 * (docs/workloads.md, "The workload program's contract").
 *
 * A workload is a table of rows (its inputs: sizes, conflict levels) and
 * of variants (ways of synchronizing it).  For each row and thread count
 * the harness builds the input once (with its sequential reference), then
 * runs every variant, rep after rep, interleaved (variant order within a
 * repetition, so that a slow phase of a shared machine hits every variant
 * alike); each run does a fixed amount of work split among the threads and
 * is timed from the release of the threads to the last one's end.  After
 * every run the workload validates the result against the reference; a
 * wrong one is one line on stderr,
 *   "<workload>: <row>: variant <variant> (backend <b>, T threads): wrong result: <why>"
 * and exit status 1.  The TM variants come from the harness: "tm-k<K>"
 * for every K of --k (default 1,2,4,...,1024: the static sweep),
 * "tm-serial" (hps_tm_for_serial, k = 1024: every chunk alone) and
 * "tm-dyn" (hps_tm_for_dynamic); the backend is HPSYNC_TM's.  A workload
 * with nothing to coarsen says so (no_tm: none of them), and
 * one whose own variants run TM sections marks them (tm_own): they are then
 * described per backend and report their section statistics.
 *
 * The document: context block, workload, backend, parameters, and per row
 * and thread count one entry per variant with the raw seconds of every
 * repetition, the median, operations per second, the speed-up over the
 * same variant's 1-thread run (when --threads includes 1) and over the
 * workload's mutex variant, and for TM variants the section statistics
 * summed over the repetitions (commits, aborts by cause) and, for tm-dyn,
 * the k each thread ended on; "check" is the last validation's line.  The
 * document goes to stdout only at the end: a failed run prints none.
 * The optional fields of wl_workload_t (zero: all of the above) adapt
 * this to workloads of another kind: their own variants only, another
 * figure, a dimension, a run per allocator, rows interleaved (the ring and
 * the tree, harness_sync.h).
 *
 * Defaults: every row, threads 1,2, 3 repetitions, every variant.  --quick
 * keeps the rows marked quick and runs a fifth of each row's operations;
 * --scale F (0 < F <= 1) multiplies them further (the tests run tiny).
 * --selftest-corrupt (tests only) damages every result before validation.
 */
#ifndef HPS_WORKLOAD_HARNESS_H
#define HPS_WORKLOAD_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include "hps_bench.h"
#include "hpsync/tm_coarsen.h"

#define WL_MAX_K 16

/* What the harness provides to the workload's run function for a TM
 * variant: k (static) or the call site (dynamic). */
typedef struct wl_variant {
    const char *name;
    int id;                          /* the workload's variant index, or WL_TM */
    long k;                          /* tm-k<K>: K; tm-serial: 1024; tm-dyn: 0 */
    hps_tm_coarsen_t *site;          /* tm-dyn: this row's and thread count's site */
    int serial;                      /* tm-serial: chunks serialized (hps_tm_for_serial) */
} wl_variant_t;
#define WL_TM (-1)

/* Run iterations [lo, hi) of a TM variant as v says (static or dynamic). */
static inline void wl_tm_for(const wl_variant_t *v, long lo, long hi, hps_tm_iter_fn fn, void *arg)
{
    if (v->site)
        hps_tm_for_dynamic(v->site, lo, hi, fn, arg);
    else if (v->serial)
        hps_tm_for_serial(lo, hi, v->k, fn, arg);
    else
        hps_tm_for(lo, hi, v->k, fn, arg);
}

/* A figure per repetition other than ops/s: secs * per_op / ops (e.g.
 * ns per node: per_op 1e9), secs the run's wall time or, with cpu, the
 * CPU time its threads used (summed), which leaves out the time they
 * waited for a CPU: on a machine shared with other work that wait is most
 * of the spread between runs.  Written as "<name>_reps" and "<name>" (the
 * median) in every variant's entry; --describe lists them all, the first
 * is the curve's. */
typedef struct wl_metric {
    const char *name, *unit, *better;    /* better: "higher" or "lower" */
    double per_op;
    int cpu;
} wl_metric_t;

typedef struct wl_row {
    const char *name;
    long a, b;                       /* the workload's parameters (its own meaning) */
    long n;                          /* operations per run (scaled: --quick, --scale) */
    int quick;                       /* in the --quick set */
    /* The row's conflict level ("low", "high", "changing"; NULL: none
     * named): issue 16's granularity target is judged per level
     * (--describe's "conflict"). */
    const char *conflict;
} wl_row_t;

typedef struct wl_workload {
    const char *name;
    const char *title;               /* one line for --describe: what it models */
    double seconds;                  /* one variant at one thread count, all rows, for the ETA:
                                      * wall time of a default round here, including setup and
                                      * validation, over its variants and thread counts */
    const wl_row_t *rows;
    int nrows;
    const char *const *variants;     /* its own variants (the TM ones are added) */
    int nvariants;
    int mutex_variant;               /* the index speed-ups are relative to */
    /* Build the input for a row and thread count, n operations a run, and
     * the reference. */
    void *(*setup)(const wl_row_t *row, int threads, long n);
    /* Operations one run performs (for ops/s), and the parameters' JSON. */
    uint64_t (*ops)(void *ctx);
    void (*params_json)(void *ctx);
    /* Before each run: the output back to its start. */
    void (*reset)(void *ctx);
    /* Thread tid of n: its share of one run. */
    void (*run)(void *ctx, const wl_variant_t *v, int tid, int n);
    /* 0, or -1 with one line in why. */
    int (*validate)(void *ctx, char *why, size_t len);
    void (*corrupt)(void *ctx);
    void (*teardown)(void *ctx);

    /* ---- optional (zero: the behaviour described above) ----------------------
     * What the workload's variants are.  kinds: each own variant's kind for
     * --describe ("lock", "elide", "tm", "other"); NULL: "lock" for the
     * mutex variant, "other" for the rest. */
    const char *const *kinds;
    /* Bit i set: own variant i runs in TM sections itself, so --describe
     * lists it once per TM backend ("<backend>:<name>", with HPSYNC_TM) and
     * the document carries its section statistics, as for tm-k<K>. */
    unsigned tm_own;
    /* Per own variant: the HPSYNC_TM its process needs (one backend only,
     * e.g. the ring's stm), or NULL. */
    const char *const *tm_backend;
    /* Non-zero: no tm-k<K> or tm-dyn variants: nothing to coarsen (the
     * pipeline's queue hand-offs), or a workload whose point is its own
     * variants (the ring and the tree, harness_sync.h). */
    int no_tm;
    /* The k of the static TM variants --describe lists (per backend; every
     * other one also in --quick) and the program sweeps when no --variants
     * is given.  NULL: 1, 4, ..., 1024 described, and the powers of 2 up to
     * 1024 swept. */
    const long *tm_k;
    int ntm_k;

    /* What the figure shows and how the runs are laid out (the allocator
     * study's ring and tree). */
    const wl_metric_t *metrics;      /* NULL: ops_per_sec */
    int nmetrics;
    const char *dim;                 /* the row field naming a point (row_json writes it);
                                      * NULL: "row"; "": none */
    int allocators;                  /* run once per allocator (LD_PRELOAD): malloc_provider */
    int curve;                       /* figure: metric against dim, a line per allocator */
    /* Every repetition runs every selected row (and variant) before the next
     * one, at each thread count: rows compared with each other (a size
     * against the smallest) then see the machine's slow phases alike.  All
     * rows' inputs are set up at once. */
    int interleave_rows;
    /* --scale changes the input itself, not only the work done on it (the
     * graph's vertices grow with its edges): a run cannot be split into
     * slices of a smaller run (--describe's "slices": false). */
    int whole_input;
    /* Non-zero for a row whose input changes partway through a run
     * (histogram's b1m-b16 turns hot halfway): slices of it would repeat
     * the change, so the runner runs it whole (--describe's "whole_rows"),
     * and each repetition of it is an independent whole run (its tm-dyn
     * site starts afresh).  NULL: none. */
    int (*whole_row)(const wl_row_t *row);
    int threads[4];                  /* default --threads (0-terminated; none: 1,2) */

    /* More of the document. */
    void (*doc_json)(void);          /* top-level fields (after "workload") */
    void (*row_json)(void *ctx);     /* fields of a row itself (beside "row"): its dim */
    /* Fields of a variant's entry after "check" (e.g. "elision": its
     * statistics summed over the row's repetitions; median_s is its median
     * time).  For a variant that runs TM sections (tm-k<K>, tm-dyn, tm_own)
     * the harness has written "tm" (its section statistics) before; for any
     * other the hook writes "tm" itself (null, or statistics of its own).
     * NULL: "tm" (null for those others), nothing more. */
    void (*variant_json)(void *ctx, const wl_variant_t *v, int threads, double median_s);
    /* Before each run, after reset: what the variant needs (a lock chosen,
     * a structure built for it); own variants and TM ones alike. */
    void (*prepare)(void *ctx, const wl_variant_t *v);
} wl_workload_t;

/* A workload whose hooks carry the names above (static functions setup,
 * ops, params_json, reset, run, validate, corrupt, teardown) lists them so
 * in its wl_workload_t: { .name = ..., WL_HOOKS, ... }. */
#define WL_HOOKS                                                                        \
    .setup = setup, .ops = ops, .params_json = params_json, .reset = reset, .run = run, \
    .validate = validate, .corrupt = corrupt, .teardown = teardown

/* A workload whose rows and own variants are arrays (k_rows, k_variants)
 * lists them so: { .name = ..., WL_TABLES(k_rows, k_variants), ... }. */
#define WL_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define WL_TABLES(r, v) .rows = (r), .nrows = WL_COUNT(r), .variants = (v), .nvariants = WL_COUNT(v)

/* The whole main() of a workload program. */
int wl_main(const wl_workload_t *w, int argc, char **argv);

/* A barrier for the threads of the run in progress (e.g. a reduction after
 * a parallel phase). */
void wl_barrier(void);

/* A workload whose input changes character mid-run (the histogram's
 * b1m-b16: many bins, then 16 hot ones) calls this in each thread at the
 * change: for tm-dyn, the k the thread's controller runs then is written
 * as "k_phase" beside "k_end" (per thread, last repetition), so the
 * document shows whether the controller moved after the change.  A no-op
 * for other variants. */
void wl_phase(const wl_variant_t *v);

/* Out of memory in setup: one line and exit 1. */
void *wl_alloc(size_t n);

#endif
