// SPDX-License-Identifier: MIT
/*
 * hybrid: hardware transactions first, norec in software when the elision
 * policy gives up (the Hybrid NOrec idea, Dalessandro et al., ASPLOS 2011).
 *
 * The two kinds must see each other:
 *  - Software sections see hardware commits through norec's sequence lock:
 *    a hardware section that wrote advances it by 2 inside the transaction,
 *    so its writes and the new even value appear together, and a software
 *    section revalidates its reads by value as after any norec commit.
 *    Read-only hardware sections leave it alone, and reading it only at
 *    commit keeps hardware sections from conflicting on it until the end.
 *  - Hardware sections must never see a software write-back half done.  So
 *    they subscribe (at begin, eagerly) to a lock that software writers
 *    hold across their whole commit (sequence taken, write-back, release):
 *    taking it aborts every hardware section in flight, and none begins
 *    until it is free.  A software commit already serializes on the
 *    sequence, so the lock adds one uncontended acquisition to it.
 *    Subscribing to the sequence itself would instead make every hardware
 *    commit abort every other hardware section.
 * An injected ("emulated") hardware section holds that lock for real and
 * keeps the sequence odd while it runs, as a norec writer does during its
 * write-back, so software readers wait or revalidate: it is atomic with
 * respect to both kinds whatever the injected outcomes.
 */
#include "hw.h"

static hps_lock_state_t g_commit = { .adaptive = HPS_ADAPTIVE_INITIALIZER };
static hps_elide_state_t g_skip;
static const hps_tm_hw_t g_hw;
/* norec's table with the commit lock around commit; set up on first use. */
static hps_tm_ops_t g_sw;
static __thread int t_holds_commit __attribute__((tls_model("initial-exec")));

/* Software sections running now (begun, not yet ended), on a line of its
 * own.  A hardware writer advances norec's sequence only when this is not
 * 0: with no software section to tell, the step would only make every pair
 * of hardware writers conflict on the sequence (at 2 threads on a hash set
 * hybrid ran at a third of htm's rate).  Safe because the hardware section
 * reads the count inside its transaction: a software section that begins
 * before the commit either incremented it before that read (the sequence
 * advances) or writes it after, which aborts the transaction; and it takes
 * its snapshot of the sequence after its increment (a locked instruction),
 * so a hardware commit it does not hear of happened before that snapshot. */
static struct {
    hps_au64 n;
} __attribute__((aligned(HPS_LINEPAIR))) g_sw_active;

static int spec_commit(hps_tm_desc_t *d)
{
    if ((d->fast.hw_w || d->hw_plain) && hps_load_relaxed(&g_sw_active.n) != 0) {
        /* Inside the transaction: plain accesses (the hardware makes them
         * atomic).  Odd cannot be seen with the commit lock free, and a
         * held lock aborted us already; leaving as "busy" is the safe
         * answer either way. */
        uint64_t s = hps_load_relaxed(hps_tm_norec_seq);
        if (s & 1)
            hps_elide_ops->abort(HPS_ABORT_BUSY);
        hps_store_relaxed(hps_tm_norec_seq, s + 2);
    }
    hps_tm_hw_end(&g_hw, 1);
    return HPS_TM_COMMITTED;
}

/* The emulated section's sequence: odd from begin to its end.  The commit
 * lock is held, so no software writer nor other emulated section has it
 * odd: the value is even. */
static void emu_enter(hps_tm_desc_t *d)
{
    d->snap = hps_load_relaxed(hps_tm_norec_seq);
    /* Sequentially consistent (xchg): odd before any of our stores. */
    (void)hps_xchg_seq_cst(hps_tm_norec_seq, d->snap + 1);
}

static int emu_commit(hps_tm_desc_t *d)
{
    /* Release: our stores are visible before the even value. */
    hps_store_release(hps_tm_norec_seq, d->snap + 2);
    hps_tm_hw_end(&g_hw, 1);
    return HPS_TM_COMMITTED;
}

static void emu_rollback(hps_tm_desc_t *d)
{
    hps_tm_undo(d);
    hps_store_release(hps_tm_norec_seq, d->snap + 2);
    hps_tm_hw_end(&g_hw, 0);
}

const hps_tm_ops_t hps_tm_hybrid_spec_ops = {
    .size = sizeof(hps_tm_ops_t), .name = "hybrid", .instrument_reads = 0,
    .read = NULL, .write = hps_tm_hw_write_spec,
    .commit = spec_commit, .rollback = hps_tm_hw_rollback_spec, .end = hps_tm_op_none,
    .mode = HPS_TM_MODE_HW,                 /* inline writes, as htm's spec */
};
static const hps_tm_ops_t emu_ops = {
    .size = sizeof(hps_tm_ops_t), .name = "hybrid", .instrument_reads = 0,
    .read = NULL, .write = hps_tm_sgl_write,
    .commit = emu_commit, .rollback = emu_rollback, .end = hps_tm_op_none,
};
static const hps_tm_hw_t g_hw = { &g_commit, &g_skip, &hps_tm_hybrid_spec_ops, &emu_ops };

/* ---- the software side: norec, with the commit lock around a writer's commit */

static int sw_commit(hps_tm_desc_t *d)
{
    if (d->ws.n == 0)
        return hps_tm_norec_ops.commit(d);  /* read-only: nothing to hide */
    hps_lockstate_lock(&g_commit, HPS_LOCK_ADAPTIVE);
    t_holds_commit = 1;
    int r = hps_tm_norec_ops.commit(d);    /* a failed validation rolls back */
    t_holds_commit = 0;
    hps_lockstate_unlock(&g_commit, HPS_LOCK_ADAPTIVE);
    return r;
}

static void sw_rollback(hps_tm_desc_t *d)
{
    if (t_holds_commit) {
        t_holds_commit = 0;
        hps_lockstate_unlock(&g_commit, HPS_LOCK_ADAPTIVE);
    }
    hps_tm_norec_ops.rollback(d);
}

/* Every software section's end, committed or aborted (the core calls end
 * once for each begin). */
static void sw_end(hps_tm_desc_t *d)
{
    (void)d;
    hps_faa_release(&g_sw_active.n, (uint64_t)-1);
}

__attribute__((constructor)) static void sw_setup(void)
{
    g_sw = hps_tm_norec_ops;
    g_sw.name = "hybrid";
    g_sw.commit = sw_commit;
    g_sw.rollback = sw_rollback;
    g_sw.end = sw_end;
}

static int hybrid_try(hps_tm_desc_t *d)
{
    return hps_tm_hw_try(d, &g_hw, &hps_tm_hybrid_ops);
}

static void hybrid_begin(hps_tm_desc_t *d)
{
    if (hps_tm_hw_begin(d, &g_hw)) {
        if (d->ops == &emu_ops)
            emu_enter(d);
        return;
    }
    d->ops = &g_sw;
    d->fast.read = g_sw.read;
    d->fast.write = g_sw.write;
    /* Sequentially consistent (a locked add): counted before the snapshot. */
    (void)hps_faa_seq_cst(&g_sw_active.n, 1);
    g_sw.begin(d);
}

/* As htm's: begin replaces d->ops, read and write for each section. */
const hps_tm_ops_t hps_tm_hybrid_ops = {
    .size = sizeof(hps_tm_ops_t), .name = "hybrid", .instrument_reads = 0,
    .begin = hybrid_begin, .read = NULL, .write = hps_tm_sgl_write,
    .commit = emu_commit, .rollback = emu_rollback, .end = hps_tm_op_none, .try_hw = hybrid_try,
};
