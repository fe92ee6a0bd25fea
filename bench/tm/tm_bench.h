/* SPDX-License-Identifier: MIT */
/*
 * tm_bench.h - the rows of the TM benchmark and what each one provides.
 *
 * A row is a data structure (a kind: bank, set, counter), its size and its
 * operation mix.  The driver (bench_tm.c) builds it, runs one operation after
 * another on every thread for the duration, then asks the kind to validate
 * the result against what the threads did; a wrong result is one line on
 * stderr and exit status 1, never a figure.  The structures are written once
 * against tx.h; each variant's binary compiles the same files.
 */
#ifndef TMB_BENCH_H
#define TMB_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include "hps_bench.h"

/* Per thread: the driver's worker record first (hps_bench_run_workers). */
typedef struct tmb_thread {
    hps_bench_worker_t w;
    uint64_t rng;                /* xorshift64 state, nonzero */
    uint8_t *net;                /* sets: successful inserts - removes per key, mod 256 */
    uint64_t bad;                /* bank: audits that saw a wrong total */
} tmb_thread_t;

typedef struct tmb_row tmb_row_t;

/* A set implementation: the sections, and a walk for validation. */
typedef struct tmb_set_ops {
    void *(*create)(long size);                      /* empty, sized for size keys */
    int (*insert)(void *s, uint64_t key);            /* each one section: 1 if it changed */
    int (*remove)(void *s, uint64_t key);
    int (*contains)(void *s, uint64_t key);
    /* Outside any section, threads joined: mark present[k] for every key,
     * check the structure's own invariants; the number of keys, or -1 with
     * one line in why. */
    long (*walk)(void *s, uint8_t *present, uint64_t range, char *why, size_t len);
    void (*destroy)(void *s);
} tmb_set_ops_t;

/* A kind of row.  validate returns 0, or -1 with one line in why. */
typedef struct tmb_kind {
    void *(*create)(const tmb_row_t *row, uint64_t *rng);
    void (*op)(void *ds, const tmb_row_t *row, tmb_thread_t *t);
    int (*validate)(void *ds, const tmb_row_t *row, tmb_thread_t *const *ts, int n, uint64_t ops,
                    char *why, size_t len);
    /* --selftest-corrupt: damage the result behind the accounting's back. */
    void (*corrupt)(void *ds, const tmb_row_t *row);
    void (*destroy)(void *ds);
} tmb_kind_t;

struct tmb_row {
    const char *name;
    const tmb_kind_t *kind;
    const tmb_set_ops_t *set;    /* sets only */
    long size;                   /* accounts, or keys present at the start */
    uint64_t range;              /* sets: keys are 1..range (0: no keys) */
    int update_pct;              /* sets: inserts + removes per 100 operations */
};

extern const tmb_kind_t tmb_bank, tmb_counter, tmb_set;
extern const tmb_set_ops_t tmb_hashset_ops, tmb_list_ops, tmb_tree_ops;

/* Variant specifics (variant.c): its name, method or backend, statistics. */
const char *tmb_variant(void);
void tmb_variant_json(void);
void tmb_stats_begin(void);
void tmb_stats_note(void);       /* worker 0, as the timed run ends: the backend and why */
void tmb_stats_json(void);       /* "tm": the section statistics since begin, or null */

#endif
