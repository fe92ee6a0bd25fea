// SPDX-License-Identifier: MIT
/*
 * sgl: every section holds one global lock (hpsync's adaptive lock), the
 * baseline of the TSX study.  Reads are plain loads (the fast path never
 * calls in here); writes store directly and keep an undo log, which only an
 * explicit hps_tm_restart() ever replays.  A whole-word write is one log
 * entry, (address | 1, old value), written inline by hpsync/tm.h
 * (HPS_TM_MODE_SGL); a sub-word write is two, (address, old value) and
 * (0, mask), so that a rollback restores only the bytes it stored.
 */
#include "internal.h"
#include "hpsync/lock.h"

/* A lock state (not only an adaptive lock) so that the htm backend can
 * hand it to the elision layer, whose transactions subscribe to it. */
hps_tm_sgl_lock_t hps_tm_sgl = { .l = { .adaptive = HPS_ADAPTIVE_INITIALIZER } };

static void sgl_begin(hps_tm_desc_t *d)
{
    hps_adaptive_lock(&hps_tm_sgl.l.adaptive);
}

void hps_tm_sgl_write(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    if (hps_unlikely(d->ro))
        hps_tm_abort(d, HPS_TM_CAUSE_RO_WRITE);
    if (mask == ~(uint64_t)0) {
        hps_tm_log_push(&d->ulog, (uintptr_t)w | 1, *w);
    } else {
        /* Atomic (a plain load on x86): the word's other bytes may be
         * another thread's, written outside any section; only the masked
         * ones are restored (log.c), but reading theirs plainly would be a
         * data race in C's terms (TSan flags it: tm.subword). */
        hps_tm_log_push(&d->ulog, (uintptr_t)w, hps_plain_load_relaxed(w));
        hps_tm_log_push(&d->ulog, 0, mask);
        d->ulog_masks++;
        d->slowc = 1;                /* the inline commit counts entries, not words */
    }
    hps_tm_went_t e = { w, v, mask };
    hps_tm_wset_store(&e);
}

/* The lock is released in commit and rollback, before the core marks the
 * thread as outside any section: a drain (fork, irrevocability) that sees
 * it outside also sees the lock free. */
static int sgl_commit(hps_tm_desc_t *d)
{
    hps_adaptive_unlock(&hps_tm_sgl.l.adaptive);
    return HPS_TM_COMMITTED;
}

void hps_tm_undo(hps_tm_desc_t *d)
{
    /* Newest first; bytes outside the mask may belong to data that other
     * threads write outside sections, so they are not stored.  A mask
     * entry (address 0) follows the entry of the word it belongs to. */
    uint32_t i = d->ulog.n;
    while (i > 0) {
        const hps_tm_pair_t *e = &d->ulog.e[i - 1];
        if (e->a == 0) {
            hps_tm_went_t w = { (uint64_t *)d->ulog.e[i - 2].a, d->ulog.e[i - 2].v, e->v };
            hps_tm_wset_store(&w);
            i -= 2;
        } else {
            hps_plain_store_relaxed((uint64_t *)(e->a & ~(uintptr_t)1), e->v);
            i--;
        }
    }
}

static void sgl_rollback(hps_tm_desc_t *d)
{
    hps_tm_undo(d);
    hps_adaptive_unlock(&hps_tm_sgl.l.adaptive);
}

static int solo_commit(hps_tm_desc_t *d)
{
    return HPS_TM_COMMITTED;
}

const hps_tm_ops_t hps_tm_sgl_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "sgl",
    .instrument_reads = 0,
    .free_at_once = 1,
    .begin = sgl_begin,
    .read = NULL,
    .write = hps_tm_sgl_write,
    .commit = sgl_commit,
    .rollback = sgl_rollback,
    .end = hps_tm_op_none,
    .mode = HPS_TM_MODE_SGL,
    .mode_ro = HPS_TM_MODE_CALL,
};

/* solo: sgl without the lock, for auto while exactly one thread uses TM.
 * No lock is needed because no other section can run: a second thread
 * counts itself in before its first section, and auto then switches
 * backends with this thread's section drained (auto.c, core.c's hps_tm_switch). */
const hps_tm_ops_t hps_tm_solo_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "solo",
    .instrument_reads = 0,
    .free_at_once = 1,
    .begin = hps_tm_op_none,
    .read = NULL,
    .write = hps_tm_sgl_write,
    .commit = solo_commit,
    .rollback = hps_tm_undo,
    .end = hps_tm_op_none,
    .mode = HPS_TM_MODE_SGL,
    .mode_ro = HPS_TM_MODE_CALL,
};
