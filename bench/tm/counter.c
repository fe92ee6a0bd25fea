/* SPDX-License-Identifier: MIT */
/*
 * counter.c - the hot counter row: every operation increments one shared
 * word in a section, so every pair of concurrent sections conflicts.  It
 * shows what each variant does under pure contention (serialize, retry,
 * back off); afterwards the counter must equal the operations counted.
 */
#include <stdio.h>
#include "tm_bench.h"
#include "tx.h"

typedef struct tmb_counter {
    uint64_t value;
} tmb_counter_t;

static void *counter_create(const tmb_row_t *row, uint64_t *rng)
{
    tmb_counter_t *c = calloc(1, sizeof *c);
    if (!c) {
        hps_bench_log("%s: out of memory", row->name);
        exit(1);
    }
    return c;
}

static void counter_op(void *ds, const tmb_row_t *row, tmb_thread_t *t)
{
    tmb_counter_t *c = ds;
    TX_BEGIN();
    TX_WRITE(&c->value, TX_READ(&c->value) + 1);
    TX_END();
}

static int counter_validate(void *ds, const tmb_row_t *row, tmb_thread_t *const *ts, int n,
                            uint64_t ops, char *why, size_t len)
{
    uint64_t v = ((tmb_counter_t *)ds)->value;
    if (v != ops) {
        snprintf(why, len, "the counter is %llu after %llu increments", (unsigned long long)v,
                 (unsigned long long)ops);
        return -1;
    }
    snprintf(why, len, "%llu increments counted", (unsigned long long)v);
    return 0;
}

static void counter_corrupt(void *ds, const tmb_row_t *row)
{
    ((tmb_counter_t *)ds)->value--;     /* a lost update */
}

const tmb_kind_t tmb_counter = { counter_create, counter_op, counter_validate, counter_corrupt, free };
