/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the elision policy, as pure functions of (configuration, abort
 * status, attempt, per-lock state).  No instructions, no globals: the unit
 * tests drive every decision directly, and the injected backend drives them
 * end to end on machines without RTM.
 */
#ifndef HPS_ELIDE_POLICY_H
#define HPS_ELIDE_POLICY_H

#include <stdint.h>
#include "../prim/rtm.h"

/* XABORT codes hpsync uses. */
#define HPS_ABORT_BUSY    0xff   /* lock word found held inside the transaction */
#define HPS_ABORT_COND    0xfe   /* condition-variable wait / blocking call inside */
#define HPS_ABORT_TRYLOCK 0xfd   /* trylock inside a transaction (its answer would be wrong) */
/* Transactional sections (src/tm/htm.c) leave a hardware transaction with
 * these to run the section's own abort: hps_tm_restart(), a write in a
 * read-only section, hps_tm_irrevocable(). */
#define HPS_ABORT_TM_RESTART 0xfc
#define HPS_ABORT_TM_RO      0xfb
#define HPS_ABORT_TM_IRREV   0xfa

typedef struct hps_elide_cfg {
    uint32_t retries;        /* RETRY-bit conflicts and busy waits retried this often */
    uint32_t fails;          /* consecutive failed acquisitions before skipping */
    uint32_t skip;           /* first skip length, doubled per repeat ... */
    uint32_t skip_max;       /* ... up to this */
} hps_elide_cfg_t;

typedef enum hps_elide_action {
    HPS_ELIDE_RETRY,         /* begin again at once */
    HPS_ELIDE_WAIT_RETRY,    /* wait (outside any transaction) for the lock to be free, then begin again */
    HPS_ELIDE_LOCK,          /* give up: take the lock */
} hps_elide_action_t;

hps_elide_action_t hps_elide_decide(const hps_elide_cfg_t *cfg, unsigned status, unsigned attempt);
/* Which hps_elide_stats_t.aborts[] slot a status counts in. */
int hps_elide_cause(unsigned status);

/*
 * Per-lock state word: skip (16 bits) | fails (8) | backoff exponent (8).
 * hps_elide_take_skip: if the lock is skipping, consume one skip and return
 * 1.  after_fallback: one more failure; `fails` in a row start a skip period
 * (length skip << backoff, capped); once a lock has skipped, a single
 * failed probe starts the next period, twice as long.  after_commit: a
 * success resets failures and backoff.
 */
int      hps_elide_take_skip(uint32_t *v);
uint32_t hps_elide_after_fallback(const hps_elide_cfg_t *cfg, uint32_t v);
uint32_t hps_elide_after_commit(uint32_t v);
#define HPS_ELIDE_SKIP(v)    ((v) & 0xffffu)
#define HPS_ELIDE_FAILS(v)   (((v) >> 16) & 0xffu)
#define HPS_ELIDE_BACKOFF(v) ((v) >> 24)

#endif
