/* SPDX-License-Identifier: MIT */
/*
 * sets.c - the set rows' kind, whatever the set (hash set, list, tree):
 * the operation mix, and validation against the operations' net effect.
 *
 * Keys are 1..range with range = 2 x the starting size, so about half the
 * inserts and half the removes change the set and its size stays near the
 * start.  Each thread counts, per key, its successful inserts minus its
 * successful removes, modulo 256 (a byte per key: the true sum over threads
 * is -1, 0 or 1, so wrap-around cannot hide a mistake).  Afterwards a key
 * must be present exactly when it was present at the start plus that sum,
 * and the structure must pass its own invariants (sorted chains, keys in
 * their bucket, AVL order and balance) and hold as many keys as expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hps_rand.h"
#include "tm_bench.h"

typedef struct tmb_setrow {
    const tmb_set_ops_t *ops;
    void *s;
    uint8_t *start;              /* start[k]: key k was present at the start */
} tmb_setrow_t;

static void *set_create(const tmb_row_t *row, uint64_t *rng)
{
    tmb_setrow_t *r = calloc(1, sizeof *r);
    if (!r || !(r->start = calloc(row->range + 1, 1)) || !(r->s = row->set->create(row->size))) {
        hps_bench_log("%s: out of memory", row->name);
        exit(1);
    }
    r->ops = row->set;
    for (long n = 0; n < row->size;) {
        uint64_t k = 1 + hps_xorshift64(rng) % row->range;
        if (r->ops->insert(r->s, k)) {
            r->start[k] = 1;
            n++;
        }
    }
    return r;
}

static void set_op(void *ds, const tmb_row_t *row, tmb_thread_t *t)
{
    tmb_setrow_t *r = ds;
    uint64_t x = hps_xorshift64(&t->rng);
    uint64_t key = 1 + (x >> 16) % row->range;  /* bits apart from the mix's */
    if ((int)(x & 0xff) * 100 >= row->update_pct * 256)
        (void)r->ops->contains(r->s, key);
    else if (x & 0x100) {
        if (r->ops->insert(r->s, key))
            t->net[key]++;
    } else if (r->ops->remove(r->s, key)) {
        t->net[key]--;
    }
}

static int set_validate(void *ds, const tmb_row_t *row, tmb_thread_t *const *ts, int n,
                        uint64_t ops, char *why, size_t len)
{
    tmb_setrow_t *r = ds;
    uint8_t *present = calloc(row->range + 1, 1);
    if (!present) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    int rc = -1;
    long count = r->ops->walk(r->s, present, row->range, why, len), expected = 0;
    if (count < 0)
        goto out;
    for (uint64_t k = 1; k <= row->range; k++) {
        uint8_t want = r->start[k];
        for (int i = 0; i < n; i++)
            want = (uint8_t)(want + ts[i]->net[k]);
        if (want > 1 || want != present[k]) {
            snprintf(why, len, "key %llu is %s, but the successful inserts and removes leave it %s",
                     (unsigned long long)k, present[k] ? "present" : "absent",
                     want == 1 ? "present" : want == 0 ? "absent" : "inserted twice or removed twice");
            goto out;
        }
        expected += want;
    }
    if (count != expected) {
        snprintf(why, len, "%ld keys in the structure, %ld expected", count, expected);
        goto out;
    }
    snprintf(why, len, "%ld keys, each as the operations' net effect says", count);
    rc = 0;
out:
    free(present);
    return rc;
}

/* Insert the smallest absent key without counting it: the net effect no
 * longer matches, which validation must notice. */
static void set_corrupt(void *ds, const tmb_row_t *row)
{
    tmb_setrow_t *r = ds;
    for (uint64_t k = 1; k <= row->range; k++)
        if (r->ops->insert(r->s, k))
            return;
}

static void set_destroy(void *ds)
{
    tmb_setrow_t *r = ds;
    r->ops->destroy(r->s);
    free(r->start);
    free(r);
}

const tmb_kind_t tmb_set = { set_create, set_op, set_validate, set_corrupt, set_destroy };
