// SPDX-License-Identifier: MIT
/*
 * tm_test.h - what the parts of tm_test share: the thread count, the
 * common state and helpers (tm_test.c), the bank (tm_consistency.c, also
 * the workload of the control and backend cases) and every case.
 */
#ifndef HPS_TM_TEST_H
#define HPS_TM_TEST_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include "harness.h"
#include "hps_rand.h"
#include "hpsync/tm.h"

#define THREADS 8
#define ACCOUNTS 64
#define START 1000

extern unsigned long g_iters;       /* per thread; scaled by cases */
extern hps_au32 g_stop;
extern uint64_t g_x, g_y, g_flag;   /* restart, nesting, hardware sections */
extern uint64_t g_acct[ACCOUNTS];

void gap(void);

/* This thread's explicit restarts so far.  A case that restarts a section
 * once counts attempts with this, not with a local: the library counts
 * them outside any transaction, while a hardware abort (real RTM) rolls
 * back everything the attempt wrote, locals included (docs/tm.md). */
HPS_INLINE uint64_t tm_restarts(void)
{
    hps_tm_stats_t s;
    hps_tm_stats_get(&s);
    return s.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT];
}
void run_threads(unsigned n, void *(*fn)(void *));

/* The bank: transfers keep the total, audits check it inside sections. */
void bank_init(void);
void transfer(uint64_t *seed);
void audit(void);
void bank_check(void);
void *bank_thread(void *arg);
void on_fpe(int sig);

void case_actions(void);
void case_alloc(void);
void case_auto(void);
void case_auto_churn(void);
void case_auto_measure(void);
void case_auto_crowded(void);
void case_auto_idle(void);
void case_auto_small(void);
void case_auto_rtm(void);
void case_backend(const char *want);
void case_bank(void);
void case_bias(void);
void case_bias_over(void);
void case_bias_coarse(void);
void case_membarrier_early(void);
void case_chain(void);
void case_cond_abort_signal(void);
void case_cond_handoff(void);
void case_cond_resume(void);
void case_cond_stress(void);
void case_coarsen_abort(void);
void case_coarsen_serial(void);
void case_coarsen_bias(void);
void case_coarsen_capacity(void);
void case_coarsen_dynamic(void);
void case_coarsen_leader(void);
void case_coarsen_takeover(void);
void case_coarsen_fresh_thread(void);
void case_coarsen_garbage_site(void);
void case_coarsen_static(void);
void case_counter(void);
void case_stripe(void);
void case_fork(void);
void case_orecs_huge(void);
void case_hw_own(void);
void case_hw_policy(void);
void case_irrevocable(void);
void case_nesting(void);
void case_opacity_div(void);
void case_opacity_sum(void);
void case_privatize(void);
void case_restart(void);
void case_abort_many(void);
void case_serial_restart(void);
void case_stats(void);
void case_subword(void);
void case_raw(void);
void case_thread_exit(void);

#endif
