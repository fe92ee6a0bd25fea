/* SPDX-License-Identifier: MIT */
/*
 * bias_trial.h - a measured trial of a policy that may or may not pay for
 * the running program: epochs closed, open, closed; kept open only if the
 * open epoch beat both (bias_trial.c).  Used for the bias while more
 * threads use TM than the process has CPUs (bias.c) and for GCC TM's
 * read-only transactions on plain code (norec.c).  The state machine is
 * pure, so that tests/c/tm/tm_trial.c can drive it with made-up clocks and
 * counts; hps_tm_trial_run_t adds who steps it among the ticking threads.
 */
#ifndef HPS_TM_BIAS_TRIAL_H
#define HPS_TM_BIAS_TRIAL_H
#include <stdint.h>
#include "hpsync/pr.h"

#define HPS_TM_TRIAL_EPOCH_NS 10000000ull   /* 10 ms: a few time slices */
#define HPS_TM_TRIAL_GAIN 1.10              /* open must beat both closed epochs by 10 % */
#define HPS_TM_TRIAL_HOLD_MIN 16u           /* epochs a verdict holds ... */
#define HPS_TM_TRIAL_HOLD_MAX 128u          /* ... doubling while it repeats */

enum { HPS_TM_TRIAL_A, HPS_TM_TRIAL_B, HPS_TM_TRIAL_A2, HPS_TM_TRIAL_HOLD };

typedef struct hps_tm_bias_trial {
    uint64_t start;                 /* the epoch's start (ns) */
    uint64_t commits0;              /* sections committed by then, all threads */
    double rate[3];                 /* commits per ns: closed, open, closed */
    uint32_t step, hold, left;
    int open;                       /* the verdict in force: the bias may be taken */
    int last;                       /* the last trial's verdict (-1: none yet) */
    uint64_t trials, kept;          /* trials run, and how many kept the bias */
} hps_tm_bias_trial_t;

/* A new oversubscribed phase begins at `now` with `commits` made so far:
 * the trial starts with its first closed epoch. */
void hps_tm_bias_trial_start(hps_tm_bias_trial_t *t, uint64_t now, uint64_t commits);
/* Called at any time; acts when the current epoch has lasted its
 * HPS_TM_TRIAL_EPOCH_NS (returns 1 then, 0 before). */
int hps_tm_bias_trial_step(hps_tm_bias_trial_t *t, uint64_t now, uint64_t commits);

/* A trial stepped by whichever thread ticks (the bias's with more threads
 * than CPUs, bias.c; GCC TM's plain read-only transactions, norec.c): one
 * thread at a time (busy) once its epoch is over (start_hint, read without
 * the flag); `on` 0 starts a new one at the next step. */
typedef struct hps_tm_trial_run {
    hps_au32 busy, on;
    hps_au64 start_hint;
    hps_tm_bias_trial_t t;
} hps_tm_trial_run_t;
/* Step r at `now` if its epoch is over, counting commits(); publish(open)
 * is called with the verdict in force, before another thread can step. */
void hps_tm_trial_run_tick(hps_tm_trial_run_t *r, uint64_t now, uint64_t (*commits)(void),
                           void (*publish)(int open));

#endif
