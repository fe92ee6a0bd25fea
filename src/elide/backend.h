/* SPDX-License-Identifier: MIT */
/*
 * backend.h - what runs the transactions, behind one ops table: real RTM
 * (rtm.c), the injected test backend (inject.c), or nothing (backend.c).
 * Chosen once per process (HPSYNC_ELIDE_BACKEND): "auto" (the default) is
 * RTM when CPUID says it is usable, else off; "inject:SEQ" is never chosen
 * unless asked for.  The policy layer (elide.c) only ever calls through
 * hps_elide_ops, so a new backend (another HTM) is one more table.
 *
 * Cost: the inline lock fast path never reads the table (it tests
 * hps_elide_active only); the out-of-line elided paths make one indirect
 * call per begin, end, test or abort.
 *
 * The injected backend replays a sequence of begin outcomes (see
 * docs/elision.md for the grammar).  A "started" outcome cannot really
 * speculate, so it takes the lock for real and the section counts as
 * elided; an abort for a blocking call inside demotes the section to an
 * ordinary hold.  Mutual exclusion therefore never depends on the injected
 * outcomes: the policy is what is under test.
 */
#ifndef HPS_ELIDE_BACKEND_H
#define HPS_ELIDE_BACKEND_H

#include "policy.h"
#include "hpsync/lock.h"
#include "hpsync/elide.h"

/* What end() found; the caller acts on the bits in this order. */
#define HPS_ELIDE_END_COMMIT  1u   /* an outermost elided section ended: count a commit */
#define HPS_ELIDE_END_RELEASE 2u   /* the lock is really held: the caller releases it */

typedef struct hps_elide_ops {
    const char *name;          /* "rtm", "inject", "off": hps_elide_backend_name() */
    /* 1 when sections really speculate: a nested section runs inside the
     * outer transaction, where writing shared counters would cause
     * conflicts, so the policy does not count it. */
    int speculative;
    /* Begin a section that holds s elided: HPS_TX_STARTED, or the abort
     * status (with RTM an abort resumes inside begin with the status). */
    unsigned (*begin)(hps_lock_state_t *s, hps_lock_algo_t a);
    /* End s's section: HPS_ELIDE_END_* bits (0: a nested elided section
     * ended, nothing to count or release). */
    unsigned (*end)(hps_lock_state_t *s, hps_lock_algo_t a);
    /* Leave speculation with an HPS_ABORT_* code if the thread is inside a
     * section (test() says so); a no-op otherwise.  With RTM it does not
     * return. */
    void (*abort)(unsigned code);
    /* 1 if the calling thread is inside an elided section. */
    int (*test)(void);
} hps_elide_ops_t;

/* The chosen backend: never NULL (off until hps_elide_setup()). */
extern const hps_elide_ops_t *hps_elide_ops;
extern const hps_elide_ops_t hps_elide_ops_off, hps_elide_ops_rtm, hps_elide_ops_inject;
extern hps_elide_cfg_t hps_elide_cfg;

/*
 * What to do after a failed begin (status) of attempt number `attempt` on
 * lock s: HPS_ELIDE_RETRY (begin again) or HPS_ELIDE_LOCK (give up).  It
 * applies hps_elide_decide() and, when that says WAIT_RETRY (a busy lock:
 * lemming avoidance), waits outside any transaction until s looks free,
 * giving up if the wait reaches its yielding phase.  The loop of
 * hps_elide_enter() and the TM hardware backends (src/tm/htm.c) share it;
 * stats may be NULL.
 */
hps_elide_action_t hps_elide_next(hps_lock_state_t *s, hps_lock_algo_t a, unsigned status,
                                  unsigned attempt, hps_elide_stats_t *stats);

/* Set up from the settings (idempotent, thread-safe). */
void hps_elide_setup(void);

/* The injected backend's sequence: 0 on success, else -1 with a reason in why. */
int  hps_elide_inject_parse(const char *seq, char *why, unsigned whylen);

#endif
