// SPDX-License-Identifier: MIT
/*
 * Allocation inside sections, and epoch-based reclamation.
 *
 * A section's allocations are freed again if it aborts (nobody else can
 * have seen them: writes stay in the redo log, or under sgl are undone
 * before the lock is released).  Its frees wait for commit, and then for
 * every section that could still reach the block: a block retired with
 * tag e (the epoch counter's value, which retiring advances) is reused only
 * once each thread is outside any section or began its section in a later
 * epoch.  So a doomed reader of a block unlinked by a committed writer
 * never reads memory that malloc has handed out again, or unmapped.
 */
#include <stdlib.h>
#include "internal.h"

/* Retired blocks per thread before it tries to reclaim.  After a reclaim
 * the next one waits until the limbo has doubled: a thread preempted
 * inside a section (oversubscribed) holds back every block retired after
 * it began, and a scan of the whole limbo at each commit meanwhile made
 * reclamation quadratic (hashset-50 at 8 threads on 2 CPUs ran at 0.4x
 * its 2-thread throughput). */
#define HPS_TM_LIMBO_BATCH 64

static void maybe_reclaim(hps_tm_desc_t *d)
{
    if (d->limbo.n >= d->limbo_next) {
        hps_tm_mem_reclaim(d);
        d->limbo_next = d->limbo.n * 2 > HPS_TM_LIMBO_BATCH ? d->limbo.n * 2 : HPS_TM_LIMBO_BATCH;
    }
}

static void retire(hps_tm_desc_t *d, void *p, uint64_t tag)
{
    hps_tm_log_push(&d->limbo, (uintptr_t)p, tag);
}

void hps_tm_mem_reclaim(hps_tm_desc_t *d)
{
    /* Sequentially consistent: the retirement (and the commit before it)
     * is ordered before the reads of in_sec, against begin's exchange; the
     * bias's owner stores in_sec plainly, so it needs the asymmetric fence
     * (only when another thread holds the bias). */
    hps_fence_seq_cst();
    hps_tm_bias_fence(d);
    uint64_t oldest = UINT64_MAX;
    uint32_t n = hps_tm_desc_count();
    for (uint32_t i = 0; i < n; i++) {
        hps_tm_desc_t *o = hps_tm_desc_at(i);
        uint64_t e = o == d ? 0 : hps_load_acquire(&o->in_sec);
        if (e && e < oldest)
            oldest = e;
    }
    uint32_t keep = 0;
    for (uint32_t i = 0; i < d->limbo.n; i++) {
        if (d->limbo.e[i].v < oldest)
            free((void *)d->limbo.e[i].a);
        else
            d->limbo.e[keep++] = d->limbo.e[i];
    }
    d->limbo.n = keep;
}

void hps_tm_mem_commit(hps_tm_desc_t *d)
{
    d->allocs.n = 0;
    if (d->frees.n == 0)
        return;
    /* Alone (irrevocable: every other section drained), or on a backend
     * whose sections never overlap a commit (sgl, solo): nobody can still
     * read the blocks. */
    if (d->irrev == 1 || d->ops->free_at_once) {
        for (uint32_t i = 0; i < d->frees.n; i++)
            free(d->frees.p[i]);
        d->frees.n = 0;
        return;
    }
    /* Sections that begin after this see an epoch above the tag (sequentially
     * consistent: the commit's stores come before the tag is taken). */
    uint64_t tag = hps_faa_seq_cst(&hps_tm_g_.epoch, 1);
    for (uint32_t i = 0; i < d->frees.n; i++)
        retire(d, d->frees.p[i], tag);
    d->frees.n = 0;
    maybe_reclaim(d);
}

void hps_tm_mem_abort(hps_tm_desc_t *d)
{
    for (uint32_t i = 0; i < d->allocs.n; i++)
        free(d->allocs.p[i]);
    d->allocs.n = 0;
    d->frees.n = 0;
}

static hps_tm_desc_t *self(void)
{
    return (hps_tm_desc_t *)(hps_tm_self_ ? hps_tm_self_ : hps_tm_register_());
}

HPS_EXPORT void *hps_tm_malloc(size_t n)
{
    void *p = malloc(n);
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    /* Irrevocable sections cannot abort: nothing to undo. */
    if (p && d && d->fast.depth && !d->irrev) {
        hps_tm_pvec_push(&d->allocs, p);
        d->slowc = 1;                /* the commit (or abort) keeps or frees it */
    }
    return p;
}

HPS_EXPORT void hps_tm_free(void *p)
{
    if (!p)
        return;
    hps_tm_desc_t *d = self();
    if (d->fast.depth && !d->irrev) {
        hps_tm_pvec_push(&d->frees, p);
        d->slowc = 1;                /* the commit frees it */
        return;
    }
    if (d->fast.depth && (d->irrev == 1 || d->ops->free_at_once)) {
        free(p);                     /* irrevocable, alone or under sgl's lock */
        return;
    }
    /* Sequentially consistent, as at commit: the unlink came first. */
    retire(d, p, hps_faa_seq_cst(&hps_tm_g_.epoch, 1));
    maybe_reclaim(d);
}
