/* SPDX-License-Identifier: MIT */
/*
 * itm.h - what the files of libhpsync-itm share: the GCC transactional
 * memory ABI (the Intel TM ABI that `gcc -fgnu-tm` compiles
 * __transaction_atomic and __transaction_relaxed into, libitm's interface)
 * implemented over hpsync's TM core (src/tm).
 *
 * The mapping, in short (docs/itm.md):
 *   - a transaction is an hpsync section: _ITM_beginTransaction takes the
 *     checkpoint (sjlj.S), hps_tm_begin_ starts the section, and an abort
 *     in the core (hps_tm_longjmp_ through the descriptor's jb) lands in
 *     sjlj.S's resume stub, which begins again and returns from
 *     _ITM_beginTransaction a second time;
 *   - nesting is flat (one hpsync section), except that a nested
 *     transaction that may cancel keeps a frame: its checkpoint and the
 *     old values of the words it writes, so __transaction_cancel rolls back
 *     only the innermost transaction, as GCC's semantics ask;
 *   - the barriers are hpsync's word accessors (sub-word and unaligned data
 *     as masked words);
 *   - a section that cannot abort runs the compiler's uninstrumented code
 *     where that is free: under sgl and auto's one-thread backend (which
 *     run alone anyway), and once it is irrevocable.
 */
#ifndef HPS_ITM_H
#define HPS_ITM_H

#include <stddef.h>
#include <stdint.h>
#include "../internal.h"

/* ---- the ABI's constants (libitm's manual, "The libitm ABI") ------------- */

/* _ITM_beginTransaction's properties (what the compiler knows). */
enum {
    HPS_ITM_PR_INSTRUMENTED = 0x0001,     /* pr_instrumentedCode */
    HPS_ITM_PR_UNINSTRUMENTED = 0x0002,   /* pr_uninstrumentedCode */
    HPS_ITM_PR_HAS_NO_ABORT = 0x0008,     /* pr_hasNoAbort: no cancel in it */
    HPS_ITM_PR_HAS_NO_IRREVOCABLE = 0x0020,
    HPS_ITM_PR_DOES_GO_IRREVOCABLE = 0x0040, /* every path goes irrevocable */
    HPS_ITM_PR_READ_ONLY = 0x4000,        /* pr_readOnly */
};

/* What _ITM_beginTransaction returns (_ITM_actions). */
enum {
    HPS_ITM_A_RUN_INSTRUMENTED = 0x01,
    HPS_ITM_A_RUN_UNINSTRUMENTED = 0x02,
    HPS_ITM_A_SAVE_LIVE = 0x04,
    HPS_ITM_A_RESTORE_LIVE = 0x08,
    HPS_ITM_A_ABORT = 0x10,
};

/* _ITM_abortTransaction's reasons (_ITM_abortReason). */
enum {
    HPS_ITM_USER_ABORT = 0x01,
    HPS_ITM_USER_RETRY = 0x02,
    HPS_ITM_TM_CONFLICT = 0x04,
    HPS_ITM_EXCEPTION_BLOCK_ABORT = 0x08,
    HPS_ITM_OUTER_ABORT = 0x10,
};

/* _ITM_howExecuting and _ITM_transactionState. */
enum { HPS_ITM_OUTSIDE = 0, HPS_ITM_RETRYABLE = 1, HPS_ITM_IRREVOCABLE = 2 };
enum { HPS_ITM_MODE_SERIAL_IRREVOCABLE = 0 };

#define HPS_ITM_VERSION "0.90"
#define HPS_ITM_VERSION_NO 90
#define HPS_ITM_NO_TRANSACTION_ID 1u

/* ---- checkpoints (sjlj.S) -------------------------------------------------- */

/* What _ITM_beginTransaction's caller needs back on a second return: its
 * callee-saved registers, its stack pointer after the call returned, and
 * the return address.  The offsets are sjlj.S's. */
typedef struct hps_itm_ckpt {
    uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rip;
} hps_itm_ckpt_t;

/* Return from the _ITM_beginTransaction that took `c`, with `actions`. */
/* Back to a checkpoint, returning the actions: src/tm/ckpt.S's
 * hps_tm_longjmp_, whose buffer has hps_itm_ckpt_t's layout. */
HPS_INLINE __attribute__((noreturn)) void hps_itm_longjmp_(const hps_itm_ckpt_t *c, uint32_t actions)
{
    hps_tm_longjmp_((void *const *)(const void *)c, (int)actions);
}
/* Where the core's abort lands (jb[1]): rbp holds the checkpoint. */
void hps_itm_resume_stub_(void);

/* ---- the thread's state ------------------------------------------------------ */

/* A nested transaction that may cancel: where to return to, and how much
 * of each log and list was there when it began. */
typedef struct hps_itm_frame {
    hps_itm_ckpt_t ck;
    uint32_t depth;                  /* the core's depth inside it */
    uint32_t undo_n, llog_n;         /* its share of the logs below */
    uint32_t allocs_n, frees_n, acts_n, on_abort_n, exc_n;
} hps_itm_frame_t;

typedef struct hps_itm_thread {
    hps_itm_ckpt_t ck;               /* the outermost transaction's (first: sjlj.S) */
    uint32_t props;                  /* its properties */
    /* Set by whatever leaves state for the commit to clear (logged locals,
     * a nested frame, an identifier, commit actions, exceptions), so that
     * a plain transaction's commit tests one word. */
    uint32_t dirty;
    uint32_t cancel;                 /* an abort that must not run it again */
    /* The outermost transaction runs its uninstrumented code and cannot
     * abort (alone: sgl's lock, solo, the bias), without being irrevocable. */
    uint32_t plain;
    uint32_t plain_w;                /* running plain code not marked read-only (begin.c) */
    /* plain, but beside other sections: a read-only transaction on norec
     * whose flag holds writers' write-backs off (src/tm/norec.c); it can
     * still restart (instrumented, read-write) when it must. */
    uint32_t plain_ro;
    uint32_t nframes, frames_cap;
    hps_itm_frame_t *frames;
    /* Old values of the words written while a frame is open: (word, old)
     * and the mask in the third field, replayed by a nested cancel. */
    hps_tm_went_t *undo;
    uint32_t undo_n, undo_cap;
    /* _ITM_L*: bytes the program asked to restore on abort (locals the
     * section writes directly): records of data then (address, length). */
    uint8_t *llog;
    uint32_t llog_n, llog_cap;
    uint32_t txid, txid_left;        /* _ITM_getTransactionId */
    uint32_t txid_cur;               /* this transaction's, 0 until asked */
    /* User commit actions and deferred operator deletes, (fn, arg): run
     * after the commit, once this state is free for the next transaction. */
    hps_tm_log_t acts;
    /* C++ exceptions (actions.c): objects allocated and not yet thrown,
     * the one in flight through _ITM_commitTransactionEH, and catches
     * begun in the transaction, all undone if it rolls back. */
    void **exc;
    uint32_t exc_n, exc_cap;
    void *exc_flight;
    uint32_t catches;
} hps_itm_thread_t;

extern __thread hps_itm_thread_t hps_itm_t __attribute__((tls_model("initial-exec")));

HPS_INLINE hps_tm_desc_t *hps_itm_desc(void)
{
    return (hps_tm_desc_t *)hps_tm_self_;
}

/* Entry points the files call across (begin.c). */
void _ITM_changeTransactionMode(int mode);
void _ITM_commitTransaction(void);

/* begin.c */
void hps_itm_fatal(const char *msg) __attribute__((noreturn));
/* barriers.c: a nested frame is open; remember the old bytes of [p, p+n). */
void hps_itm_undo_note(const void *p, size_t n);
/* Replay the nested undo log down to `mark` (newest first), and the
 * _ITM_L log down to `mark`. */
void hps_itm_undo_to(uint32_t mark);
void hps_itm_llog_restore(uint32_t mark);
/* actions.c: run the commit actions (after the outermost commit). */
void hps_itm_run_commit_actions(hps_itm_thread_t *t);
/* actions.c: a rollback to `mark` unthrown exceptions (0: the whole
 * transaction, which also ends its catches and the exception in flight)
 * frees the newer ones; a commit forgets them. */
void hps_itm_exc_rollback(hps_itm_thread_t *t, uint32_t mark);
HPS_INLINE void hps_itm_exc_commit(hps_itm_thread_t *t)
{
    t->exc_n = 0;
    t->exc_flight = NULL;
    t->catches = 0;
}
HPS_INLINE void hps_itm_dirty(hps_itm_thread_t *t)
{
    t->dirty = 1;
}
/* In a section that can still roll back (or in a nested frame, which can
 * roll back its own part even when irrevocable). */
HPS_INLINE int hps_itm_revocable(const hps_tm_desc_t *d)
{
    return d && d->fast.depth && (!d->irrev || hps_itm_t.nframes);
}

#endif
