// SPDX-License-Identifier: MIT
/*
 * Transactions: the C half of _ITM_beginTransaction (sjlj.S), the second
 * return after an abort, commit, cancel, the switch to irrevocable mode,
 * and the ABI's questions about the running transaction.
 *
 * Which code a transaction runs.  GCC compiles most transactions twice:
 * instrumented (every shared access a barrier call) and uninstrumented
 * (plain code, correct only when nothing else runs).  hpsync answers
 * "uninstrumented" when the section cannot abort and runs alone:
 *   - it is irrevocable (the compiler had no instrumented path, every path
 *     goes irrevocable, or it changed mode and restarted);
 *   - it runs as sgl or solo (auto's one-thread backend, and every thread
 *     on the bias) and has no __transaction_cancel (pr_hasNoAbort): then
 *     nothing can abort it and its plain code logs nothing, so it needs no
 *     mode change at all (t->plain; _ITM_inTransaction calls it
 *     irrevocable, which it is in effect);
 *   - it runs as a real hardware transaction (htm, hybrid on RTM) and has
 *     no __transaction_cancel: the hardware tracks its plain accesses;
 *   - it is read-only (pr_readOnly, no __transaction_cancel) on norec, the
 *     threads using TM fit the CPUs and the trial says it pays: writers'
 *     write-backs then wait for it (src/tm/norec.c, t->plain_ro).  What
 *     would need more (a nested transaction that may write or cancel, a
 *     change to irrevocable) restarts it read-write.
 * Everything else runs instrumented on the backend HPSYNC_TM chose.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "itm.h"
#include "../hw.h"
#include "../../common/env.h"

__thread hps_itm_thread_t hps_itm_t __attribute__((tls_model("initial-exec")));

/* sjlj.S stores the outermost checkpoint straight into hps_itm_t.ck and
 * tests the core's depth itself: the offsets it uses. */
_Static_assert(offsetof(hps_itm_thread_t, ck) == 0, "sjlj.S: ck first in hps_itm_thread_t");
_Static_assert(offsetof(hps_itm_ckpt_t, rsp) == 48 && offsetof(hps_itm_ckpt_t, rip) == 56,
               "sjlj.S: the checkpoint's layout");
_Static_assert(offsetof(hps_tm_fast_t, depth) == 16, "sjlj.S: DEPTH is the core's depth offset");
_Static_assert(sizeof(hps_itm_ckpt_t) == sizeof(((hps_tm_fast_t *)0)->jb),
               "hps_tm_longjmp_ (src/tm/ckpt.S) loads a checkpoint as the core's jb");

void hps_itm_fatal(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
    abort();
}

uint32_t hps_itm_begin_(uint32_t props, const hps_itm_ckpt_t *ck);
uint32_t hps_itm_begin_outer_(uint32_t props);
uint32_t hps_itm_resume_(void);

/* A read-only transaction on norec may run plain code: the setting on,
 * the trial open, the threads using TM fit the CPUs, no write-back in
 * progress (norec.c).  While the trial holds it closed this costs one
 * load (a 5 % cost on hashset-90 with two calls and the tests first). */
static HPS_NOINLINE void plain_ro_arm(void)
{
    hps_tm_norec_plain_arm(hps_settings()->itm_plain_ro != 0);
}

HPS_INLINE int plain_ro_allowed(hps_tm_desc_t *d)
{
    uint32_t st = hps_load_relaxed(&hps_tm_norec_plain_st_);
    if (hps_unlikely(st == 0)) {
        plain_ro_arm();
        return 0;
    }
    return (st & HPS_TM_PLAIN_OPEN) && hps_load_relaxed(&hps_tm_g_.bias) == NULL && !hps_tm_crowded() &&
           hps_tm_norec_plain_enter(d);
}

/* The plain read-only transaction must become an ordinary one: restart it
 * read-write and instrumented (its flag goes down in resume). */
static void plain_ro_restart(hps_tm_desc_t *d)
{
    hps_tm_abort(d, HPS_TM_CAUSE_RO_WRITE);
}

/* Begin the outermost section (again, after an abort); the actions to
 * return. */
HPS_INLINE uint32_t start(hps_itm_thread_t *t, hps_tm_desc_t *d)
{
    const uint32_t pr = t->props;
    hps_tm_fast_t *f = &d->fast;
    /* The core's abort jumps here (src/tm/ckpt.S's layout, see sjlj.S):
     * rbp = the checkpoint, the stub as return address; the stack pointer
     * is the stub's to set, this one only has to be harmless. */
    f->jb[1] = &t->ck;
    f->jb[6] = (void *)(uintptr_t)(t->ck.rsp - 64);
    f->jb[7] = (void *)hps_itm_resume_stub_;
    int irrev = !(pr & HPS_ITM_PR_INSTRUMENTED) || (pr & HPS_ITM_PR_DOES_GO_IRREVOCABLE);
    if (hps_unlikely(irrev))
        d->want_irrev = 1;
    /* pr_readOnly: the compiler saw no store in the instrumented code
     * (a store anyway restarts the section read-write). */
    /* The bias's owner begins inline (hpsync/tm.h), as native sections do. */
    int ro = !irrev && (pr & HPS_ITM_PR_READ_ONLY);
    if (irrev || !hps_tm_begin_bias_(f, ro))
        hps_tm_begin_(f, ro);
    const uint32_t plain = HPS_ITM_PR_HAS_NO_ABORT | HPS_ITM_PR_UNINSTRUMENTED;
    t->plain = d->irrev == 0 && (pr & plain) == plain &&
               d->ops->free_at_once;   /* sgl, solo: it runs alone */
    /* Plain code's stores reach no barrier: the statistics learn of them
     * from the compiler (see _ITM_commitTransaction). */
    t->plain_w = !(pr & HPS_ITM_PR_READ_ONLY);
    if (t->plain)
        return HPS_ITM_A_RUN_UNINSTRUMENTED;
    if ((pr & (plain | HPS_ITM_PR_READ_ONLY)) == (plain | HPS_ITM_PR_READ_ONLY) && d->ops == &hps_tm_norec_ops &&
        d->ro && d->irrev == 0 && plain_ro_allowed(d)) {
        t->plain = t->plain_ro = 1;
        t->plain_w = 0;
        return HPS_ITM_A_RUN_UNINSTRUMENTED;
    }
    /* A real hardware transaction (htm, hybrid on RTM) runs plain code too,
     * as libitm's own hardware path does: the hardware tracks and rolls
     * back every access.  It can still abort, so it is not t->plain. */
    if ((pr & plain) == plain && d->irrev == 0 && hps_tm_hw_plain(d, !(pr & HPS_ITM_PR_READ_ONLY)))
        return HPS_ITM_A_RUN_UNINSTRUMENTED;
    t->plain_w = 0;                  /* barriers count (irrevocable commits are not read-only ones) */
    if (d->irrev && (pr & HPS_ITM_PR_UNINSTRUMENTED))
        return HPS_ITM_A_RUN_UNINSTRUMENTED;
    return HPS_ITM_A_RUN_INSTRUMENTED;
}

/* The rest of the section runs irrevocably: in place where the core can
 * (sgl and solo stop undo logging; norec and stm commit their work so far
 * when the gate is free and nothing committed since their snapshot), else
 * by a restart into the gate. */
static void go_irrevocable(hps_tm_desc_t *d)
{
    if (!hps_tm_irrevocable_in_place(d))
        hps_tm_irrevocable();
}

/* Grow the frame stack (nesting deeper than ever before on this thread). */
static HPS_NOINLINE void frames_grow(hps_itm_thread_t *t)
{
    uint32_t cap = t->frames_cap ? 2 * t->frames_cap : 8;
    hps_itm_frame_t *n = realloc(t->frames, cap * sizeof *n);
    if (!n)
        hps_itm_fatal("hpsync: out of memory for nested GCC TM transactions\n");
    t->frames = n;
    t->frames_cap = cap;
}

static uint32_t nested(hps_itm_thread_t *t, hps_tm_desc_t *d, uint32_t props,
                       const hps_itm_ckpt_t *ck)
{
    /* Inside a plain read-only transaction only a read-only, uncancellable
     * one may run (plain); anything else restarts the outer read-write. */
    const uint32_t ro_plain = HPS_ITM_PR_READ_ONLY | HPS_ITM_PR_HAS_NO_ABORT | HPS_ITM_PR_UNINSTRUMENTED;
    if (hps_unlikely(t->plain_ro) && (props & ro_plain) != ro_plain)
        plain_ro_restart(d);
    /* Code that is only uninstrumented, or goes irrevocable anyway: the
     * whole section becomes irrevocable. */
    if (!d->irrev && (!(props & HPS_ITM_PR_INSTRUMENTED) || (props & HPS_ITM_PR_DOES_GO_IRREVOCABLE)))
        go_irrevocable(d);
    d->fast.depth++;
    if (!(props & HPS_ITM_PR_HAS_NO_ABORT)) {
        /* It may cancel: keep what rolls back its part alone. */
        if (t->nframes == t->frames_cap)
            frames_grow(t);
        hps_itm_frame_t *fr = &t->frames[t->nframes++];
        hps_itm_dirty(t);
        fr->ck = *ck;
        fr->depth = d->fast.depth;
        fr->undo_n = t->undo_n;
        fr->llog_n = t->llog_n;
        fr->allocs_n = d->allocs.n;
        fr->frees_n = d->frees.n;
        fr->acts_n = t->acts.n;
        fr->on_abort_n = d->on_abort.n;
        fr->exc_n = t->exc_n;
        return HPS_ITM_A_RUN_INSTRUMENTED;
    }
    if ((props & HPS_ITM_PR_UNINSTRUMENTED) &&
        (d->irrev || t->plain || !(props & HPS_ITM_PR_INSTRUMENTED)))
        return HPS_ITM_A_RUN_UNINSTRUMENTED;
    return HPS_ITM_A_RUN_INSTRUMENTED;
}

/* Called by _ITM_beginTransaction with the checkpoint it took. */
uint32_t hps_itm_begin_(uint32_t props, const hps_itm_ckpt_t *ck)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_fast_t *f = hps_likely(hps_tm_self_ != NULL) ? hps_tm_self_ : hps_tm_register_();
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    if (hps_unlikely(f->depth != 0))
        return nested(t, d, props, ck);
    t->ck = *ck;
    t->props = props;
    return start(t, d);
}

/* The outermost begin, its checkpoint already in hps_itm_t.ck (sjlj.S). */
uint32_t hps_itm_begin_outer_(uint32_t props)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_fast_t *f = hps_likely(hps_tm_self_ != NULL) ? hps_tm_self_ : hps_tm_register_();
    t->props = props;
    return start(t, (hps_tm_desc_t *)f);
}

/* The core aborted the section (its writes undone, its allocations freed,
 * its undo actions run): undo the program's logged locals, and begin
 * again, unless it was cancelled. */
uint32_t hps_itm_resume_(void)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_desc_t *d = hps_itm_desc();
    hps_itm_llog_restore(0);
    if (t->plain_ro) {
        t->plain_ro = t->plain = 0;
        hps_tm_norec_plain_exit(d);
    }
    t->nframes = 0;
    t->undo_n = 0;
    t->acts.n = 0;
    t->txid_cur = 0;
    t->dirty = 0;
    if (hps_unlikely(t->exc_n | t->catches) || t->exc_flight)
        hps_itm_exc_rollback(t, 0);
    if (t->cancel) {
        t->cancel = 0;
        d->aborted = 0;              /* not a retry: the next section is new */
        return HPS_ITM_A_ABORT | HPS_ITM_A_RESTORE_LIVE;
    }
    return start(t, d) | HPS_ITM_A_RESTORE_LIVE;
}

/* After the outermost commit of a transaction that left state behind. */
static HPS_NOINLINE void committed(hps_itm_thread_t *t)
{
    t->dirty = 0;
    t->llog_n = 0;
    t->nframes = 0;
    t->undo_n = 0;
    t->txid_cur = 0;
    hps_itm_exc_commit(t);
    if (t->acts.n)
        hps_itm_run_commit_actions(t);
}

HPS_EXPORT void _ITM_commitTransaction(void)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_fast_t *f = hps_tm_self_;
    if (hps_unlikely(f->depth > 1)) {
        /* A nested commit: its undo entries stay with the frame around it. */
        if (t->nframes && t->frames[t->nframes - 1].depth == f->depth && --t->nframes == 0)
            t->undo_n = 0;
        f->depth--;
        return;
    }
    f->depth = 0;
    if (t->plain_ro) {
        t->plain_ro = 0;
        hps_tm_norec_plain_exit((hps_tm_desc_t *)f);
    }
    hps_tm_end_(f);                  /* an abort goes back to begin from here */
    if (t->plain_w) {
        /* It ran plain code, which logs no write, so the commit counted it
         * read-only; the compiler did not say it was (pr_readOnly). */
        t->plain_w = 0;
        ((hps_tm_desc_t *)f)->st.commits_ro--;
    }
    if (hps_unlikely(t->dirty))
        committed(t);
}

/* An exception leaves the transaction: it commits (as libitm does).  Should
 * the commit abort, the rollback ends that exception's flight (actions.c)
 * before the transaction runs again. */
HPS_EXPORT void _ITM_commitTransactionEH(void *exc)
{
    hps_itm_t.exc_flight = exc;
    _ITM_commitTransaction();
    hps_itm_t.exc_flight = NULL;
}

HPS_EXPORT void _ITM_abortTransaction(int reason)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_desc_t *d = hps_itm_desc();
    if (!d || d->fast.depth == 0)
        hps_itm_fatal("hpsync: _ITM_abortTransaction outside a transaction\n");
    if (!(reason & HPS_ITM_USER_ABORT))
        hps_itm_fatal("hpsync: _ITM_abortTransaction without userAbort (unsupported reason)\n");
    if ((reason & HPS_ITM_OUTER_ABORT) || d->fast.depth == 1) {
        /* The whole transaction: the core rolls it back; resume returns
         * a_abortTransaction at the outermost begin. */
        if (d->irrev)
            hps_itm_fatal("hpsync: __transaction_cancel in an irrevocable transaction\n");
        t->cancel = 1;
        hps_tm_abort(d, HPS_TM_CAUSE_CANCEL);
    }
    /* The innermost nested transaction only: replay its frame. */
    if (t->nframes == 0 || t->frames[t->nframes - 1].depth != d->fast.depth)
        hps_itm_fatal("hpsync: cancel of a nested transaction that declared it cannot abort\n");
    hps_itm_frame_t *fr = &t->frames[t->nframes - 1];
    hps_itm_undo_to(fr->undo_n);
    hps_itm_llog_restore(fr->llog_n);
    while (d->allocs.n > fr->allocs_n)
        free(d->allocs.p[--d->allocs.n]);
    d->frees.n = fr->frees_n;
    t->acts.n = fr->acts_n;
    if (t->exc_n > fr->exc_n)
        hps_itm_exc_rollback(t, fr->exc_n);
    while (d->on_abort.n > fr->on_abort_n) {
        hps_tm_pair_t e = d->on_abort.e[--d->on_abort.n];
        ((void (*)(void *))e.a)((void *)(uintptr_t)e.v);
    }
    d->fast.depth = fr->depth - 1;
    if (--t->nframes == 0)
        t->undo_n = 0;
    hps_itm_longjmp_(&fr->ck, HPS_ITM_A_ABORT | HPS_ITM_A_RESTORE_LIVE);
}

/* Before a call to code the compiler could not instrument: the rest of the
 * section runs irrevocably (go_irrevocable).  Only this section: the next
 * one starts on the backend again. */
HPS_EXPORT void _ITM_changeTransactionMode(int mode)
{
    hps_tm_desc_t *d = hps_itm_desc();
    if (d && d->fast.depth && hps_itm_t.plain_ro)
        plain_ro_restart(d);         /* beside other sections: it is not alone */
    if (!d || d->fast.depth == 0 || d->irrev || hps_itm_t.plain)
        return;                      /* (a plain transaction cannot abort already) */
    go_irrevocable(d);
}

HPS_EXPORT int _ITM_inTransaction(void)
{
    hps_tm_desc_t *d = hps_itm_desc();
    if (!d || d->fast.depth == 0)
        return HPS_ITM_OUTSIDE;
    /* A hardware transaction says irrevocable, as libitm's does: whatever
     * the caller then does that could not be undone (a system call) aborts
     * it before it takes effect, and the section goes on in software. */
    return d->irrev || (hps_itm_t.plain && !hps_itm_t.plain_ro) || hps_tm_hw_spec(d) ? HPS_ITM_IRREVOCABLE
                                                                                     : HPS_ITM_RETRYABLE;
}

/* Identifiers come from a global counter in blocks, so that a transaction
 * that never asks costs nothing; 0 and 1 (_ITM_noTransactionId) are
 * skipped when the counter wraps. */
#define HPS_ITM_TXID_BLOCK 1024u
static hps_au32 g_txid = 2;

HPS_EXPORT uint32_t _ITM_getTransactionId(void)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_desc_t *d = hps_itm_desc();
    if (!d || d->fast.depth == 0)
        return HPS_ITM_NO_TRANSACTION_ID;
    while (t->txid_cur <= HPS_ITM_NO_TRANSACTION_ID) {
        if (t->txid_left == 0) {
            t->txid = hps_faa_relaxed(&g_txid, HPS_ITM_TXID_BLOCK);
            t->txid_left = HPS_ITM_TXID_BLOCK;
        }
        t->txid_cur = t->txid++;
        hps_itm_dirty(t);
        t->txid_left--;
    }
    return t->txid_cur;
}
