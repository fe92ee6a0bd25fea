// SPDX-License-Identifier: MIT
/*
 * htm: a section runs as a hardware transaction that reads the sgl backend's
 * lock word, so a section that really takes the lock aborts every
 * transaction in flight, and none begins while it is held.  When the elision
 * policy gives up (capacity, retries spent, a lock held too long, a skip
 * period), the section takes that lock: it is then exactly an sgl section.
 * The driver shared with hybrid is here too (see hw.h).
 */
#include "hw.h"

int hps_tm_hw_usable(void)
{
    hps_elide_setup();
    return hps_elide_ops != &hps_elide_ops_off;
}

int hps_tm_hw_speculates(void)
{
    hps_elide_setup();
    return hps_elide_ops->speculative;
}

/* ---- the driver shared with hybrid ----------------------------------------- */

/* After a hardware abort for one of the section's own reasons: nothing is
 * left to roll back (the hardware did), so the core's abort only counts it
 * and goes back to the checkpoint. */
const hps_tm_ops_t hps_tm_hw_aborted_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "hw-aborted",
    .rollback = hps_tm_op_none,
    .end = hps_tm_op_none,
};

static void own_abort(hps_tm_desc_t *d, unsigned status)
{
    if (!(status & HPS_TX_EXPLICIT))
        return;
    int cause;
    switch (HPS_TX_CODE(status)) {
    case HPS_ABORT_TM_RESTART: cause = HPS_TM_CAUSE_EXPLICIT; break;
    case HPS_ABORT_TM_RO: cause = HPS_TM_CAUSE_RO_WRITE; break;
    case HPS_ABORT_TM_IRREV: cause = HPS_TM_CAUSE_IRREVOCABLE; break;
    default: return;
    }
    /* The request to become irrevocable was written inside the transaction
     * and rolled back with it. */
    if (cause == HPS_TM_CAUSE_IRREVOCABLE)
        d->want_irrev = 1;
    if (cause == HPS_TM_CAUSE_EXPLICIT)
        d->hw_restarts++;
    d->ops = &hps_tm_hw_aborted_ops;
    hps_tm_abort(d, cause);
}

static void count_abort(hps_tm_desc_t *d, unsigned status)
{
    int c;
    switch (hps_elide_cause(status)) {
    case HPS_ELIDE_ABORT_CONFLICT:
    case HPS_ELIDE_ABORT_BUSY: c = HPS_TM_CAUSE_HTM_CONFLICT; break;
    case HPS_ELIDE_ABORT_CAPACITY: c = HPS_TM_CAUSE_HTM_CAPACITY; break;
    default: c = HPS_TM_CAUSE_HTM_OTHER; break;
    }
    HPS_TM_COUNT_(d->st.aborts, 1);
    HPS_TM_COUNT_(d->st.aborts_by_cause[c], 1);
    d->aborted = 1;
}

/* A write in a read-only section running in hardware: the section restarts
 * read-write (with the cause counted as under the software backends). */
static void write_ro_spec(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    (void)f; (void)w; (void)v; (void)mask;
    hps_elide_ops->abort(HPS_ABORT_TM_RO);
    hps_tm_fatal("hpsync: a TM hardware section was not in a transaction\n");
}

/* Nothing that a section must not run beside: the gate open, no bias held,
 * and `self` the backend.  Inside a transaction the loads subscribe to
 * the line, so a later change aborts it. */
static inline int nothing_alone(const hps_tm_ops_t *self)
{
    return hps_load_relaxed(&hps_tm_g_.irrev) == 0 && hps_load_relaxed(&hps_tm_g_.bias) == NULL &&
           hps_load_relaxed(&hps_tm_g_.ops) == (void *)self;
}

/* The section loop; `self` non-NULL: before in_sec is published (try). */
static int hw_loop(hps_tm_desc_t *d, const hps_tm_hw_t *h, const hps_tm_ops_t *self)
{
    const hps_elide_ops_t *eo = hps_elide_ops;
    /* A hardware abort rolls back everything the attempt wrote, the
     * section's locals included, so a section whose restart depends on
     * what its attempt did (a flag, a random draw) would restart in
     * hardware forever: explicit restarts never reach the retry policy.
     * After a few in a row the section runs in software until it commits,
     * where its locals are kept (docs/tm.md). */
    if (d->hw_restarts >= HPS_TM_HW_RESTARTS)
        return 0;
    /* Relaxed: the failure history is a per-lock hint, as in elision. */
    uint32_t v = hps_load_relaxed(&h->skip->v);
    if (v != 0 && hps_elide_take_skip(&v)) {   /* no history: no call */
        hps_store_relaxed(&h->skip->v, v);
        return 0;
    }
    for (unsigned attempt = 0;; attempt++) {
        /* Whoever raised the gate waits for published sections only: the
         * software path waits for it at the gate. */
        if (self && !nothing_alone(self))
            return 0;
        /* With RTM every abort of the section resumes here, with the
         * registers and memory of this point and the abort status. */
        unsigned status = eo->begin(h->lock, HPS_LOCK_ADAPTIVE);
        if (status == HPS_TX_STARTED && self && !nothing_alone(self))
            eo->abort(HPS_ABORT_BUSY);
        if (status == HPS_TX_STARTED) {
            const hps_tm_ops_t *o = eo->speculative ? h->spec : h->emu;
            d->hw_plain = 0;
            d->fast.hw_w = 0;
            d->ops = o;
            d->fast.read = o->read;
            d->fast.write = d->ro && eo->speculative ? write_ro_spec : o->write;
            return 1;
        }
        own_abort(d, status);
        count_abort(d, status);
        if (hps_elide_next(h->lock, HPS_LOCK_ADAPTIVE, status, attempt, NULL) == HPS_ELIDE_RETRY)
            continue;
        hps_store_relaxed(&h->skip->v,
                          hps_elide_after_fallback(&hps_elide_cfg, hps_load_relaxed(&h->skip->v)));
        return 0;
    }
}

int hps_tm_hw_begin(hps_tm_desc_t *d, const hps_tm_hw_t *h)
{
    /* Where transactions speculate, the core tried them unpublished first
     * (hps_tm_hw_try): a published section goes straight to software.  So
     * only the injected backend's emulated sections start here. */
    if (hps_elide_ops->speculative)
        return 0;
    return hw_loop(d, h, NULL);
}

/* Why a hardware section need not publish in_sec: the gate's closer waits
 * for published sections, and this one, subscribed to the gate's line,
 * aborts as the gate closes and cannot have committed before; epoch
 * reclamation frees only blocks that a committed section unlinked, and a
 * transaction that read the link conflicts with that commit, so it never
 * commits having read a freed block.  What it saves is the sequentially
 * consistent exchange every published section begins with, about half of
 * a small hardware section's cost on the Xeon guest of 2026-11-28. */
int hps_tm_hw_try(hps_tm_desc_t *d, const hps_tm_hw_t *h, const hps_tm_ops_t *self)
{
    if (!hps_elide_ops->speculative)
        return -1;
    return hw_loop(d, h, self);
}

void hps_tm_hw_end(const hps_tm_hw_t *h, int committed)
{
    unsigned r = hps_elide_ops->end(h->lock, HPS_LOCK_ADAPTIVE);
    if ((r & HPS_ELIDE_END_COMMIT) && committed) {
        uint32_t v = hps_load_relaxed(&h->skip->v);
        if (v)                        /* written only when there is a history */
            hps_store_relaxed(&h->skip->v, hps_elide_after_commit(v));
    }
    if (r & HPS_ELIDE_END_RELEASE)
        hps_lockstate_unlock(h->lock, HPS_LOCK_ADAPTIVE);
}

/* A write in a speculating transaction that the inline path leaves (a
 * sub-word one): a masked store and the count the statistics and hybrid's
 * commit read (hps_tm_fast_t.hw_w); no undo entry, the hardware rolls back.
 * Whole words are inline (HPS_TM_MODE_HW).  Before, every spec write was a
 * call into sgl's write, then sgl's inline undo entry and store: in a
 * scatter zone of 16 words the entries doubled what the transaction wrote. */
void hps_tm_hw_write_spec(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    f->hw_w++;
    hps_tm_went_t e = { w, v, mask };
    hps_tm_wset_store(&e);
}

void hps_tm_hw_rollback_spec(hps_tm_desc_t *d)
{
    hps_elide_ops->abort(d->want_irrev ? HPS_ABORT_TM_IRREV : HPS_ABORT_TM_RESTART);
    hps_tm_fatal("hpsync: a TM hardware section was not in a transaction\n");
}

/* ---- htm ------------------------------------------------------------------- */

static hps_elide_state_t g_skip;
static const hps_tm_hw_t g_hw;

static int htm_commit(hps_tm_desc_t *d)
{
    (void)d;
    hps_tm_hw_end(&g_hw, 1);
    return HPS_TM_COMMITTED;
}

static void htm_rollback_emu(hps_tm_desc_t *d)
{
    hps_tm_undo(d);
    hps_tm_hw_end(&g_hw, 0);
}

static void htm_rollback_spec(hps_tm_desc_t *d)
{
    hps_tm_hw_rollback_spec(d);
}

const hps_tm_ops_t hps_tm_htm_spec_ops = {
    .size = sizeof(hps_tm_ops_t), .name = "htm", .instrument_reads = 0,
    .begin = NULL, .read = NULL, .write = hps_tm_hw_write_spec,
    .commit = htm_commit, .rollback = htm_rollback_spec, .end = hps_tm_op_none,
    .mode = HPS_TM_MODE_HW,
};
static const hps_tm_ops_t htm_emu_ops = {
    .size = sizeof(hps_tm_ops_t), .name = "htm", .instrument_reads = 0,
    .begin = NULL, .read = NULL, .write = hps_tm_sgl_write,
    .commit = htm_commit, .rollback = htm_rollback_emu, .end = hps_tm_op_none,
};
static const hps_tm_hw_t g_hw = { &hps_tm_sgl.l, &g_skip, &hps_tm_htm_spec_ops, &htm_emu_ops };

int hps_tm_hw_plain(hps_tm_desc_t *d, int may_write)
{
    /* Plain code writes without telling anyone: unless the compiler says
     * it cannot write, hybrid's commit must advance norec's sequence as any
     * writer's does (hybrid.c). */
    if (d->ops == &hps_tm_hybrid_spec_ops)
        d->hw_plain = (uint32_t)may_write;
    return hps_tm_hw_spec(d);
}

static int htm_try(hps_tm_desc_t *d)
{
    return hps_tm_hw_try(d, &g_hw, &hps_tm_htm_ops);
}

static void htm_begin(hps_tm_desc_t *d)
{
    if (hps_tm_hw_begin(d, &g_hw))
        return;
    /* The fallback is an sgl section: taking the lock aborts the
     * transactions in flight, and irrevocability is sgl's (it runs alone). */
    d->ops = &hps_tm_sgl_ops;
    d->fast.read = NULL;
    d->fast.write = hps_tm_sgl_write;
    hps_tm_sgl_ops.begin(d);
}

/* The table the core chooses: begin replaces d->ops (and the fast-path read
 * and write) for each section, so its other entries serve only as defaults. */
const hps_tm_ops_t hps_tm_htm_ops = {
    .size = sizeof(hps_tm_ops_t), .name = "htm", .instrument_reads = 0,
    .begin = htm_begin, .read = NULL, .write = hps_tm_sgl_write,
    .commit = htm_commit, .rollback = htm_rollback_emu, .end = hps_tm_op_none, .try_hw = htm_try,
};
