// SPDX-License-Identifier: MIT
/*
 * sgl: every section holds one global lock (hpsync's adaptive lock), the
 * baseline of the TSX study.  Reads are plain loads (the fast path never
 * calls in here); writes store directly and keep an undo log, which only an
 * explicit hps_tm_restart() ever replays.
 */
#include "internal.h"
#include "hpsync/lock.h"

/* A lock state (not only an adaptive lock) so that the htm backend can
 * hand it to the elision layer, whose transactions subscribe to it. */
hps_lock_state_t hps_tm_sgl_lock = { .adaptive = HPS_ADAPTIVE_INITIALIZER };

static void sgl_begin(hps_tm_desc_t *d)
{
    hps_adaptive_lock(&hps_tm_sgl_lock.adaptive);
}

void hps_tm_sgl_write(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    if (hps_unlikely(d->ro))
        hps_tm_abort(d, HPS_TM_CAUSE_RO_WRITE);
    /* Two log entries per write: the word with its old value, then the
     * mask, so that a rollback restores only the bytes this write stored. */
    hps_tm_log_push(&d->ulog, (uintptr_t)w, *w);
    hps_tm_log_push(&d->ulog, 0, mask);
    hps_tm_went_t e = { w, v, mask };
    hps_tm_wset_store(&e);
}

/* The lock is released in commit and rollback, before the core marks the
 * thread as outside any section: a drain (fork, irrevocability) that sees
 * it outside also sees the lock free. */
static int sgl_commit(hps_tm_desc_t *d)
{
    hps_adaptive_unlock(&hps_tm_sgl_lock.adaptive);
    return HPS_TM_COMMITTED;
}

void hps_tm_undo(hps_tm_desc_t *d)
{
    /* Newest first; bytes outside the mask may belong to data that other
     * threads write outside sections, so they are not stored. */
    for (uint32_t i = d->ulog.n; i >= 2; i -= 2) {
        hps_tm_went_t e = { (uint64_t *)d->ulog.e[i - 2].a, d->ulog.e[i - 2].v, d->ulog.e[i - 1].v };
        hps_tm_wset_store(&e);
    }
}

static void sgl_rollback(hps_tm_desc_t *d)
{
    hps_tm_undo(d);
    hps_adaptive_unlock(&hps_tm_sgl_lock.adaptive);
}

const hps_tm_ops_t hps_tm_sgl_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "sgl",
    .instrument_reads = 0,
    .begin = sgl_begin,
    .read = NULL,
    .write = hps_tm_sgl_write,
    .commit = sgl_commit,
    .rollback = sgl_rollback,
    .end = hps_tm_op_none,
};
