/* SPDX-License-Identifier: MIT */
/*
 * hw.h - what the two hardware backends (htm.c, hybrid.c) share: a section
 * run as a transaction of the elision layer (src/elide: RTM, or the injected
 * backend in tests) that subscribes to one lock, driven by the elision
 * policy (retries per abort cause, waiting for a busy lock, adaptive skip).
 *
 * A hardware section runs in one of two ways, and d->ops says which:
 *   spec  the transaction really speculates (RTM): reads are plain loads,
 *         writes are a plain store and a count (HPS_TM_MODE_HW, inline;
 *         hps_tm_hw_write_spec for sub-word ones), which the hardware rolls
 *         back; an abort resumes inside hps_tm_hw_try() with the status, and
 *         the section's own aborts (restart, a write in a read-only section,
 *         irrevocability) leave by XABORT with a code.
 *   emu   the injected backend "started" it: the subscribed lock is really
 *         held, writes keep sgl's undo log and an abort replays it, exactly
 *         like sgl.  Atomicity never depends on the injected outcomes.
 */
#ifndef HPS_TM_HW_H
#define HPS_TM_HW_H

#include "internal.h"
#include "../elide/backend.h"

typedef struct hps_tm_hw {
    hps_lock_state_t *lock;          /* the word transactions read (subscribe to) */
    hps_elide_state_t *skip;         /* elision's per-lock failure history */
    const hps_tm_ops_t *spec, *emu;  /* the ops a started section runs on */
} hps_tm_hw_t;

/* Begin d's section as a hardware transaction: 1 when it runs as one (spec
 * or emu, d->ops and d->fast set), 0 when the policy gave up or skipped and
 * the caller runs its software path.  Hardware aborts are counted in d->st
 * (htm_conflict: a data conflict or the lock found held; htm_capacity;
 * htm_other); the section's own aborts go on to hps_tm_abort() with their
 * cause and do not return. */
int hps_tm_hw_begin(hps_tm_desc_t *d, const hps_tm_hw_t *h);
/* The same before d publishes in_sec (hps_tm_ops_t.try_hw): only where the
 * transactions really speculate (-1 elsewhere), and a started transaction
 * first reads the gate, the bias and the backend (`self`) and aborts
 * unless the gate is open, no bias is held and `self` still runs, so any
 * section that must run alone, and any backend switch, aborts it. */
int hps_tm_hw_try(hps_tm_desc_t *d, const hps_tm_hw_t *h, const hps_tm_ops_t *self);
/* 1 when d's section runs as a real hardware transaction in which plain
 * (uninstrumented) code is correct, its commit arranged for that: htm's
 * always are (subscribed to sgl's lock); hybrid's then count as writers
 * at commit (norec's sequence advances) unless may_write is 0 (the
 * compiler marked the transaction read-only).  0 otherwise (software, or
 * the injected backend's emulated sections).  libhpsync-itm asks. */
int hps_tm_hw_plain(hps_tm_desc_t *d, int may_write);
/* The ops of a section running as a real hardware transaction. */
extern const hps_tm_ops_t hps_tm_htm_spec_ops, hps_tm_hybrid_spec_ops;
HPS_INLINE int hps_tm_hw_spec(const hps_tm_desc_t *d)
{
    return d->ops == &hps_tm_htm_spec_ops || d->ops == &hps_tm_hybrid_spec_ops;
}

/* Explicit restarts of a section's hardware attempts after which it runs
 * in software until it commits (d->hw_restarts, reset at commit). */
#define HPS_TM_HW_RESTARTS 3
/* End the transaction (commit, or after an emu rollback): XEND, or release
 * the really held lock; a commit clears the lock's failure history. */
void hps_tm_hw_end(const hps_tm_hw_t *h, int committed);
/* spec write (the inline path's slow side): a store and a count, no undo
 * entry (the hardware rolls back). */
void hps_tm_hw_write_spec(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask);
/* spec rollback: leave the transaction with the code of the pending abort
 * (it resumes in hps_tm_hw_try or, injected, hps_tm_hw_begin); does not return. */
void hps_tm_hw_rollback_spec(hps_tm_desc_t *d);

#endif
