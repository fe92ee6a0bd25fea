// SPDX-License-Identifier: MIT
/*
 * A section's life: begin (the bias's inline path aside, which is in
 * hpsync/tm.h), commit, abort with its backoff, restart and irrevocability.
 * The registry, the settings and the gate they rely on are core.c's; the
 * backends behind d->ops are their own files.
 */
#define _GNU_SOURCE
/* The jump back to a checkpoint taken under ThreadSanitizer must be the
 * longjmp that TSan intercepts; fortified, glibc's would be __longjmp_chk,
 * which it does not. */
#undef _FORTIFY_SOURCE
#include <sched.h>
#include <setjmp.h>
#include "hw.h"

/* Enter a section alone behind the gate (irrevocable or serialized). */
static void enter_alone(hps_tm_desc_t *d)
{
    hps_tm_gate_close(d);
    (void)hps_xchg_seq_cst(&d->in_sec, hps_load_relaxed(&hps_tm_g_.epoch));
}

static void begin_irrevocable(hps_tm_desc_t *d)
{
    d->want_irrev = 0;
    enter_alone(d);
    HPS_TM_COUNT_(d->st.irrevocable, 1);
    d->ops = hps_tm_ops_now();
    d->irrev = 1;
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
}

/* After a read-only section without a read log had to restart, the
 * thread's next nolog_wait read-only sections log their reads before it
 * tries again.  The wait adapts: a failed logless attempt quadruples it
 * (from 1, up to NOLOG_WAIT_MAX), a logless commit halves it, so it
 * settles where about one logless attempt in three fails (a failure
 * wastes the part of a section run so far, the log costs every read a
 * store).  It was a fixed 32: on the list at 2 and 8 threads trying at
 * once (0) ran 9-21 % faster, and 4-15 % slower on hash sets and trees
 * beside two busy processes, whose preemptions fail more attempts. */
#define NOLOG_WAIT_MAX 1024

/* The inline fast path for the section about to run (see tm.h).  A
 * read-only section keeps no read log on its first attempt, where the
 * backend allows it and no recent attempt failed. */
static uint32_t section_mode(hps_tm_desc_t *d, const hps_tm_ops_t *ops)
{
    d->nolog = 0;
    if (!d->ro)
        return ops->mode;
    if (ops->mode_ro != HPS_TM_MODE_CALL && !d->aborted) {
        if (d->nolog_skip == 0) {
            d->nolog = 1;
            return ops->mode_ro;
        }
        d->nolog_skip--;
    }
    /* A logged read-only section: its writes must reach the backend, which
     * restarts it as read-write (sgl's inline write would not check). */
    return ops->mode == HPS_TM_MODE_SGL || ops->mode == HPS_TM_MODE_HW ? HPS_TM_MODE_CALL : ops->mode;
}

/* The section runs as solo does: plain reads, in-place writes with an undo
 * log (no other thread is in a section: the bias, or the gate). */
static inline void run_as_solo(hps_tm_desc_t *d)
{
    d->ops = &hps_tm_solo_ops;
    d->fast.read = NULL;
    d->fast.write = hps_tm_solo_ops.write;
    /* section_mode for solo: read-only sections call the write (it
     * checks ro), read-write ones write inline. */
    d->nolog = 0;
    d->fast.mode = d->ro ? HPS_TM_MODE_CALL : HPS_TM_MODE_SGL;
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = &d->fast;
}

/* The bias's owner's section. */
static inline void run_biased(hps_tm_desc_t *d)
{
    run_as_solo(d);
    HPS_TM_COUNT_(d->st.solo, 1);
    /* The descriptor is set up for solo sections now, and stays so until
     * the library's begin runs again: the next ones may begin inline
     * (tm.h) unless this one owes the library something at its begin. */
    d->fastgo = !(d->want_irrev | d->aborts_in_row | d->ro_failed);
}

/*
 * After HPSYNC_TM_RETRIES conflict aborts in a row: the section runs alone
 * behind the gate, as solo runs (plain reads, in-place writes with an undo
 * log), so it cannot conflict, and can still restart.  It used to run
 * irrevocably, writes straight to memory, and then a section that waits by
 * restarting (hps_tm_restart() until a condition holds, the tx.abort
 * pattern) killed the process when its wait came after a streak of
 * conflicts: tm.stamp.stm under ThreadSanitizer, 3 runs in 10.
 * The same on request (want_serial, for one attempt: a rerun after a
 * restart runs concurrently), which a coarsened loop makes when its
 * controller found serial chunks cheaper (coarsen.c).
 */
static void begin_serial(hps_tm_desc_t *d)
{
    d->want_serial = 0;
    enter_alone(d);
    HPS_TM_COUNT_(d->st.serial, 1);
    d->serial = 1;
    run_as_solo(d);
}

static void end_serial(hps_tm_desc_t *d)
{
    d->serial = 0;
    hps_tm_gate_open();
}

/* The owner's entry (hpsync/tm.h's hps_tm_bias_enter_; bias.c has the
 * other half).  0: go the normal way. */
static inline int begin_biased(hps_tm_desc_t *d)
{
    if (!hps_tm_bias_enter_(&d->fast))
        return 0;
    run_biased(d);
    return 1;
}

static HPS_NOINLINE void begin_slow(hps_tm_desc_t *d, int hw_tried);

/* Hardware backends on RTM: a transaction first, unpublished (hw.h).  1 when
 * the section runs in one. */
static inline int begin_hw(hps_tm_desc_t *d)
{
    const hps_tm_ops_t *o = hps_tm_ops_now();
    if (!o->try_hw || o->try_hw(d) <= 0)
        return 0;
    d->fast.mode = section_mode(d, d->ops);
    hps_tm_rd_ = NULL;                /* hardware sections read plainly */
    hps_tm_wr_ = &d->fast;
    return 1;
}

/* The bias's owner's sections take the first branch: no call, no atomic
 * operation; a hardware section with nothing pending the second; the rest
 * is begin_slow's. */
HPS_EXPORT void hps_tm_begin_(hps_tm_fast_t *f, int ro)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    f->depth = 1;
    f->slowc = 1;                     /* END calls hps_tm_commit_ */
    f->fastgo = 0;                    /* unless run_biased sets it again */
    d->ro = ro && !d->ro_failed;
    if (hps_likely(--d->tick != 0) && hps_likely((d->want_irrev | d->aborts_in_row) == 0)) {
        void *b = hps_load_relaxed(&hps_tm_g_.bias);
        if (b == d) {
            if (begin_biased(d))
                return;
        } else if (b == NULL && !d->bias_pending) {
            if (begin_hw(d))
                return;
            begin_slow(d, 1);
            return;
        }
    }
    begin_slow(d, 0);
}

/* hw_tried: begin_hw ran (and gave up: the retry policy's verdict stands). */
static HPS_NOINLINE void begin_slow(hps_tm_desc_t *d, int hw_tried)
{
    hps_tm_fast_t *f = &d->fast;
    if (d->tick == 0)
        hps_tm_tick(d);
    if (hps_unlikely(d->want_irrev)) {
        begin_irrevocable(d);
        return;
    }
    if (hps_unlikely(d->aborts_in_row >= hps_tm_retries_)) {
        begin_serial(d);
        return;
    }
    if (hps_load_relaxed(&hps_tm_g_.bias) == d && begin_biased(d))
        return;                      /* (alone already: a serial request is moot) */
    if (hps_unlikely(d->want_serial)) {
        /* Another thread's bias is revoked, not only fenced: kept, every
         * serialized chunk of this thread's paid a membarrier for it
         * (histogram's 16 bins, 2 threads: 145 M keys/s, against 550 M
         * with the bias gone). */
        void *b = hps_load_relaxed(&hps_tm_g_.bias);
        if (b != NULL && b != d)
            hps_tm_bias_revoke(d);
        begin_serial(d);
        if (hps_unlikely(d->bias_pending))
            hps_tm_bias_settled(d);
        return;
    }
    if (!hw_tried && begin_hw(d))
        return;
    for (;;) {
        /* Sequentially consistent (xchg): the store of in_sec must be
         * ordered before the read of hps_tm_g_.irrev (see gate_close), and before
         * this section's reads (epoch-based reclamation). */
        (void)hps_xchg_seq_cst(&d->in_sec, hps_load_relaxed(&hps_tm_g_.epoch));
        if (hps_likely(hps_load_acquire(&hps_tm_g_.irrev) == 0)) {
            /* Read after passing the gate, which the bias changes under.
             * Acquire: a bias dropped by an exiting owner (no gate) was
             * released after its last section (bias.c). */
            void *b = hps_load_acquire(&hps_tm_g_.bias);
            if (hps_likely(b == NULL))
                break;
            if (b == d) {             /* ours, with the gate closed at begin_biased */
                run_biased(d);        /* (a revoker pending never sees its own bias) */
                return;
            }
            hps_store_release(&d->in_sec, 0);
            hps_tm_bias_revoke(d);
            continue;
        }
        hps_store_release(&d->in_sec, 0);
        uint32_t w = 0;
        while (hps_load_acquire(&hps_tm_g_.irrev) != 0)
            hps_tm_wait(&w);
    }
    if (hps_unlikely(d->bias_pending))
        hps_tm_bias_settled(d);
    /* Read after passing the gate: a switch happens only with it closed. */
    const hps_tm_ops_t *ops = hps_tm_ops_now();
    d->ops = ops;
    f->read = ops->read;
    f->write = ops->write;
    ops->begin(d);
    /* After begin: the hardware backends choose d->ops per section. */
    f->mode = section_mode(d, d->ops);
    hps_tm_rd_ = d->ops->instrument_reads ? f : NULL;   /* hw backends pick per section */
    hps_tm_wr_ = f;
}

static HPS_NOINLINE void commit_slow(hps_tm_desc_t *d);

HPS_EXPORT void hps_tm_commit_(hps_tm_fast_t *f)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
    if (hps_likely(d->ops == &hps_tm_solo_ops) &&
        !(d->irrev | d->serial | d->aborted | d->allocs.n | d->frees.n | d->on_commit.n | d->on_abort.n)) {
        /* Solo and the bias's sections, with nothing but writes to account
         * for: the whole commit is bookkeeping (aborts_in_row and ro_failed
         * are 0 in a section that never aborted; a serialized one opens the
         * gate in commit_slow). */
        hps_tm_count_commit_(f, d->ulog.n - d->ulog_masks);
        hps_store_release(&d->in_sec, 0);
        d->ulog.n = 0;
        d->ulog_masks = 0;
        return;
    }
    if (hps_tm_hw_spec(d) &&
        !(d->aborted | d->allocs.n | d->frees.n | d->on_commit.n | d->on_abort.n)) {
        /* A real hardware section's first attempt with nothing but writes to
         * account for: its commit (XEND; hybrid's sequence step first) cannot
         * fail, since an abort resumes at the transaction's begin.  Reads
         * were plain, writes went to memory (no read log, no redo log), it
         * never published in_sec, and aborts_in_row, hw_restarts and
         * ro_failed are 0 without an abort: commit_slow's bookkeeping
         * shrinks to the statistics.  With the lean begin (hps_tm_begin_), a
         * one-word htm section went from 40 to 32.5 ns on the Xeon guest of
         * 2026-11-28, against 14 ns for the bare transaction. */
        (void)d->ops->commit(d);
        hps_tm_count_commit_(f, f->hw_w);
        return;
    }
    commit_slow(d);
}

static HPS_NOINLINE void commit_slow(hps_tm_desc_t *d)
{
    if (d->irrev == 1) {
        hps_tm_mem_commit(d);
        hps_store_release(&d->in_sec, 0);
        d->irrev = 0;
        HPS_TM_COUNT_(d->st.commits, 1);
        hps_tm_gate_open();
    } else {
        int c = d->ops->commit(d);
        if (c != HPS_TM_COMMITTED)
            hps_tm_abort(d, c);
        /* sgl-style sections (plain reads: sgl, solo, hardware ones) log one
         * undo entry per whole-word write, two per sub-word one, and no
         * reads; the others count their redo log (stm's ulog holds locked
         * orecs). */
        d->nolog_wait >>= d->nolog;  /* a logless attempt committed */
        uint32_t reads = d->rlog.n;
        uint32_t writes = hps_tm_hw_spec(d)     ? d->fast.hw_w
                          : d->ops->read == NULL ? d->ulog.n - d->ulog_masks
                                                 : d->ws.n;
        HPS_TM_COUNT_(d->st.commits, 1);
        HPS_TM_COUNT_(d->st.commits_ro, writes == 0);
        HPS_TM_COUNT_(d->st.reads, reads);
        HPS_TM_COUNT_(d->st.writes, writes);
        HPS_TM_MAX_(d->st.max_read_set, reads);
        HPS_TM_MAX_(d->st.max_write_set, writes);
        if (d->allocs.n | d->frees.n)
            hps_tm_mem_commit(d);
        /* Release: the section is over; drains and reclaimers may go on. */
        hps_store_release(&d->in_sec, 0);
        if (d->ops->end != hps_tm_op_none)
            d->ops->end(d);
        hps_tm_clear_logs(d);
        d->irrev = 0;
        if (d->serial)
            end_serial(d);
    }
    HPS_TM_COUNT_(d->st.retries, d->aborted);
    d->aborted = 0;
    d->aborts_in_row = 0;
    d->hw_restarts = 0;
    d->ro_failed = 0;
    /* Last: an action may run sections of its own. */
    if (hps_unlikely(d->on_commit.n | d->on_abort.n))
        hps_tm_actions_commit(d);
}

/* Randomized exponential backoff: up to 2^k x 16 pauses after the k-th
 * abort in a row, and once aborts repeat a yield (a nap while yields come
 * back late, core.c), so that a preempted conflicting thread can finish
 * when threads outnumber cores. */
static void backoff(hps_tm_desc_t *d)
{
    uint32_t k = d->aborts_in_row < 10 ? d->aborts_in_row : 10;
    uint64_t x = d->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    d->rng = x;
    for (uint64_t i = x % (16ull << k); i > 0; i--)
        hps_cpu_relax();
    if (d->aborts_in_row >= 3)
        hps_tm_wait_long();
}

void hps_tm_abort(hps_tm_desc_t *d, int cause)
{
    if (d->irrev)
        hps_tm_fatal("hpsync: hps_tm_restart() in an irrevocable section (its effects cannot be undone)\n");
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
    d->abort_hw = d->ops == &hps_tm_hw_aborted_ops;
    d->ops->rollback(d);
    hps_tm_mem_abort(d);
    hps_store_release(&d->in_sec, 0);
    if (d->serial)
        end_serial(d);               /* before the actions (they may run sections) and any wait */
    if (d->on_commit.n | d->on_abort.n)
        hps_tm_actions_abort(d);
    d->ops->end(d);
    hps_tm_clear_logs(d);
    HPS_TM_COUNT_(d->st.aborts, 1);
    HPS_TM_COUNT_(d->st.aborts_by_cause[cause], 1);
    d->aborted = 1;
    d->fastgo = 0;                   /* the retry begins in the library */
    if (cause == HPS_TM_CAUSE_RO_WRITE)
        d->ro_failed = 1;
    if ((cause == HPS_TM_CAUSE_CONFLICT || cause == HPS_TM_CAUSE_VALIDATION) && !d->nolog) {
        d->aborts_in_row++;
        backoff(d);
    } else if (cause == HPS_TM_CAUSE_EXPLICIT) {
        /* An explicit retry waits for a change, which other sections make:
         * its next attempt runs concurrently again, not serialized (the
         * conflicts before it are not the section's to pay for twice). */
        d->aborts_in_row = 0;
        hps_tm_wait_long();
    }
    d->fast.depth = 0;
    if (d->fast.jb[HPS_TM_JB_LAST_] == NULL)
        longjmp(d->tsan_jb, 1);      /* a checkpoint taken under TSan (hpsync/tm.h) */
#if defined(__x86_64__)
    hps_tm_longjmp_(d->fast.jb, 1);
#else
    __builtin_longjmp(d->fast.jb, 1);
#endif
}

void hps_tm_nolog_abort(hps_tm_desc_t *d)
{
    uint32_t w = d->nolog_wait ? d->nolog_wait * 4 : 1;
    d->nolog_wait = w < NOLOG_WAIT_MAX ? w : NOLOG_WAIT_MAX;
    d->nolog_skip = d->nolog_wait;
    hps_tm_abort(d, HPS_TM_CAUSE_VALIDATION);
}

/* The buffer a section's checkpoint fills under ThreadSanitizer (HPS_TM_CKPT_):
 * per descriptor, as one thread has one outermost section at a time. */
HPS_EXPORT void *hps_tm_tsan_jb_(void)
{
    return ((hps_tm_desc_t *)hps_tm_self_)->tsan_jb;
}

HPS_EXPORT void hps_tm_restart(void)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || d->fast.depth == 0)
        hps_tm_fatal("hpsync: hps_tm_restart() outside a TM section\n");
    hps_tm_abort(d, HPS_TM_CAUSE_EXPLICIT);
}

HPS_EXPORT int hps_tm_in_section(void)
{
    return hps_tm_self_ && hps_tm_self_->depth != 0;
}

HPS_EXPORT void hps_tm_irrevocable(void)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || d->fast.depth == 0)
        hps_tm_fatal("hpsync: hps_tm_irrevocable() outside a TM section\n");
    if (d->irrev)
        return;
    if (d->ops->free_at_once) {
        /* sgl and solo sections already run alone; stop undo logging
         * (irrev 2: irrevocable without the gate).  Not a hardware
         * section, which writes as sgl does but can still abort: it
         * leaves the transaction to become irrevocable. */
        d->irrev = 2;
        HPS_TM_COUNT_(d->st.irrevocable, 1);
        d->slowc = 1;
        hps_tm_wr_ = NULL;
        return;
    }
    d->want_irrev = 1;
    hps_tm_abort(d, HPS_TM_CAUSE_IRREVOCABLE);
}
