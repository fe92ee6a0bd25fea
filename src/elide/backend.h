/* SPDX-License-Identifier: MIT */
/*
 * backend.h - what runs the transactions: real RTM, the injected test
 * backend, or nothing.  Chosen once per process (HPSYNC_ELIDE_BACKEND):
 * "auto" (the default) is RTM when CPUID says it is usable, else off;
 * "inject:SEQ" is never chosen unless asked for.
 *
 * The injected backend replays a sequence of begin outcomes (see
 * docs/elision.md for the grammar).  A "started" outcome cannot really
 * speculate, so the elision layer then takes the lock for real and counts
 * the section as elided; an abort inside (a condvar wait) demotes the
 * section to an ordinary hold.  Mutual exclusion therefore never depends on
 * the injected outcomes: the policy is what is under test.
 */
#ifndef HPS_ELIDE_BACKEND_H
#define HPS_ELIDE_BACKEND_H

#include "policy.h"
#include "hpsync/lock.h"

enum { HPS_BACKEND_OFF, HPS_BACKEND_RTM, HPS_BACKEND_INJECT };

extern int hps_elide_backend;
extern hps_elide_cfg_t hps_elide_cfg;

/* Set up from the settings (idempotent, thread-safe). */
void hps_elide_setup(void);

/* Injected backend. */
unsigned hps_inject_begin(void);            /* this thread's next outcome: HPS_TX_STARTED or a status */
void hps_inject_push(hps_lock_state_t *s);  /* an emulated elided hold begins */
int  hps_inject_pop(hps_lock_state_t *s);   /* 1 if s was held as an emulated elision */
int  hps_inject_depth(void);                /* emulated elided holds of this thread */
void hps_inject_demote_all(void);           /* all emulated holds become ordinary ones */
/* Parse a sequence; 0 on success, else -1 with a reason in why. */
int  hps_inject_parse(const char *seq, char *why, unsigned whylen);

#endif
