/* SPDX-License-Identifier: MIT */
/*
 * hpsync/tm_cond.h - condition variables for transactional sections
 * (reference: docs/api/tm_cond.md).
 *
 *   static hps_tm_cond_t nonempty = HPS_TM_COND_INITIALIZER;
 *
 *   HPS_TM_BEGIN();                       // consumer
 *   while (HPS_TM_READ(&q->n) == 0)
 *       hps_tm_cond_wait(&nonempty);      // commits, sleeps, resumes in a new section
 *   item = pop(q);
 *   HPS_TM_END();
 *
 *   HPS_TM_BEGIN();                       // producer
 *   push(q, item);
 *   hps_tm_cond_signal(&nonempty);        // happens when this section commits
 *   HPS_TM_END();
 *
 * A wait inside a section commits the section's work so far, sleeps until a
 * signal or broadcast raised after that commit, and resumes in a new
 * section at the same nesting depth; an abort after the wait re-runs from
 * the wait, not from BEGIN.  Signal and broadcast inside a section take
 * effect when it commits and are dropped if it aborts.  Outside sections
 * the calls act at once.  HPSYNC_TM_COND=futex (default) sleeps in the
 * kernel; spin busy-waits (yielding when it waits long).
 *
 * Rule: call hps_tm_cond_wait in the function that holds the section's
 * outermost HPS_TM_BEGIN/END (the resumed section returns to the wait's
 * checkpoint, which must still be on the stack when it aborts).
 *
 * Cost: a signal or broadcast with no thread asleep, or with every sleeper
 * already woken and not yet back, is one atomic increment and a load
 * (deferred to commit inside a section, through hps_tm_on_commit); else one
 * futex wake and an atomic add.  A wait is one commit, one futex wait and
 * one begin.
 */
#ifndef HPSYNC_TM_COND_H
#define HPSYNC_TM_COND_H

#include <time.h>
#include "hpsync/tm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hps_tm_cond {
    hps_au32 seq;                    /* moved by every signal and broadcast: the futex word */
    uint32_t pad_;
    /* Low 32 bits: threads inside (or entering) a futex wait.  High 32 bits
     * (signed): threads a futex wake took off the queue that are not back
     * yet.  One word, so that a signaler reads both at one instant. */
    hps_au64 waiters;
} hps_tm_cond_t;

#define HPS_TM_COND_INITIALIZER { HPS_ATOMIC_INIT(0), 0, HPS_ATOMIC_INIT(0) }

void hps_tm_cond_init(hps_tm_cond_t *c);
/* Wake one waiter (signal) or all (broadcast); inside a section, when it
 * commits. */
void hps_tm_cond_signal(hps_tm_cond_t *c);
void hps_tm_cond_broadcast(hps_tm_cond_t *c);
/* "futex" or "spin": what HPSYNC_TM_COND chose. */
const char *hps_tm_cond_mode(void);

/* What the wait macros expand to (not API).  enter_ commits the caller's
 * section (if any) and waits; it returns the descriptor to resume a section
 * on, or NULL when the caller was outside any section. */
hps_tm_fast_t *hps_tm_cond_enter_(hps_tm_cond_t *c, clockid_t clock,
                                  const struct timespec *abstime, int *result);
void hps_tm_cond_resume_(hps_tm_fast_t *f);

/* Wait: 0 when woken (spuriously too: re-check the condition in a loop),
 * ETIMEDOUT when the absolute deadline on `clock` (CLOCK_REALTIME or
 * CLOCK_MONOTONIC) passed, EINVAL for a malformed deadline or clock.  In a
 * section the section is resumed in every case. */
#define hps_tm_cond_timedwait(c, clock, abstime) ({                                \
    int hps_tm_cr_;                                                                 \
    hps_tm_fast_t *hps_tm_cf_ = hps_tm_cond_enter_((c), (clock), (abstime), &hps_tm_cr_); \
    if (hps_tm_cf_) {                                                               \
        /* The resumed section's checkpoint: an abort comes back here. */           \
        (void)HPS_TM_CKPT_(hps_tm_cf_->jb);                                         \
        hps_tm_cond_resume_(hps_tm_cf_);                                            \
    }                                                                               \
    hps_tm_cr_; })
#define hps_tm_cond_wait(c) hps_tm_cond_timedwait((c), CLOCK_MONOTONIC, (const struct timespec *)0)

#ifdef __cplusplus
}
#endif
#endif /* HPSYNC_TM_COND_H */
