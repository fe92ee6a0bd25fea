// SPDX-License-Identifier: MIT
/*
 * norec (Dalessandro, Spear, Scott, PPoPP 2010): one global sequence lock,
 * odd while a writer writes back.  A section remembers the even value it
 * began at and the (address, value) of each read; whenever the sequence
 * moved, it re-reads every logged address and goes on only if all values
 * are unchanged (value-based validation), so no section ever returns a
 * value from an inconsistent state (opacity).  Writes go to the hashed redo
 * log; a writer commits by moving the sequence from its snapshot to odd,
 * storing its log and making it even again.  Writers commit one at a time,
 * and a reader's values are checked against the sequence after every read,
 * so data privatized by a committed section is never read stale or
 * overwritten late: privatization safety costs nothing here.
 *
 * The common read runs inline (hpsync/tm.h, HPS_TM_MODE_NOREC): a section
 * loads the word, compares the sequence with its snapshot and appends to
 * its read log; after its first write (HPS_TM_MODE_NOREC_W) only for a word
 * whose bit in the redo log's filter is clear.  A read-only section first runs
 * with no read log at all (HPS_TM_MODE_NOREC_RO): while the sequence stays put every
 * value it read is current; if it moves, the section cannot validate and
 * restarts, logging (see hps_tm_nolog_abort).
 */
#include "internal.h"

/* Alone on its pair of cache lines (HPS_LINEPAIR); the inline fast path
 * reaches it through the descriptor's `clock`. */
static struct {
    hps_au64 v;
} __attribute__((aligned(HPS_LINEPAIR))) g_seq;

static uint64_t wait_even(void)
{
    uint32_t n = 0;
    uint64_t s;
    /* Acquire: a writer's stores are visible once its even value is. */
    while ((s = hps_load_acquire(&g_seq.v)) & 1)
        hps_tm_wait(&n);
    return s;
}

/* The even sequence at which every logged read still holds, or an abort. */
static uint64_t validate(hps_tm_desc_t *d)
{
    for (;;) {
        uint64_t s = wait_even();
        for (uint32_t i = 0; i < d->rlog.n; i++)
            if (hps_plain_load_relaxed((const uint64_t *)d->rlog.e[i].a) != d->rlog.e[i].v)
                hps_tm_abort(d, HPS_TM_CAUSE_VALIDATION);
        /* Acquire fence: the value loads above complete before the
         * sequence is read again. */
        hps_fence_acquire();
        if (hps_load_relaxed(&g_seq.v) == s)
            return s;
    }
}

static void norec_begin(hps_tm_desc_t *d)
{
    d->clock = &g_seq.v;
    d->snap = wait_even();
}

static uint64_t norec_read(hps_tm_fast_t *f, const uint64_t *w)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    hps_tm_went_t *e = NULL;
    if (d->ws.n) {
        e = hps_tm_wset_find(&d->ws, w);
        if (e && e->mask == ~(uint64_t)0)
            return e->val;
    }
    /* Acquire: the value is read before the sequence check below. */
    uint64_t v = hps_plain_load_acquire(w);
    while (hps_unlikely(hps_load_relaxed(&g_seq.v) != d->snap)) {
        if (d->nolog)
            hps_tm_nolog_abort(d);
        d->snap = validate(d);
        v = hps_plain_load_acquire(w);
    }
    if (!d->nolog)
        hps_tm_log_push(&d->rlog, (uintptr_t)w, v);
    return e ? (v & ~e->mask) | e->val : v;
}

static void norec_write(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    if (hps_unlikely(d->ro))
        hps_tm_abort(d, HPS_TM_CAUSE_RO_WRITE);
    /* Reads from now on test the redo log's filter (hpsync/tm.h). */
    if (f->mode == HPS_TM_MODE_NOREC)
        f->mode = HPS_TM_MODE_NOREC_W;
    hps_tm_wset_put(&d->ws, w, v, mask);
}

static int norec_commit(hps_tm_desc_t *d)
{
    if (d->ws.n == 0)
        return HPS_TM_COMMITTED;     /* read-only: consistent at d->snap */
    for (;;) {
        uint64_t s = d->snap;
        /* Acquire-release: the write-back below stays after taking the
         * sequence, and our reads before it. */
        if (hps_cas_acq_rel(&g_seq.v, &s, s + 1))
            break;
        d->snap = validate(d);
    }
    for (uint32_t i = 0; i < d->ws.n; i++)
        hps_tm_wset_store(&d->ws.e[i]);
    /* Release: the write-back is visible before the even value. */
    hps_store_release(&g_seq.v, d->snap + 2);
    return HPS_TM_COMMITTED;
}

const hps_tm_ops_t hps_tm_norec_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "norec",
    .instrument_reads = 1,
    .begin = norec_begin,
    .read = norec_read,
    .write = norec_write,
    .commit = norec_commit,
    .rollback = hps_tm_op_none,
    .end = hps_tm_op_none,
    .mode = HPS_TM_MODE_NOREC,
    .mode_ro = HPS_TM_MODE_NOREC_RO,
};

/* hybrid.c: hardware sections read it and advance it when they commit. */
hps_au64 *const hps_tm_norec_seq = &g_seq.v;
