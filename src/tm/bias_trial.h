/* SPDX-License-Identifier: MIT */
/*
 * bias_trial.h - whether the bias may be taken while more threads use TM
 * than the process has CPUs: a measured trial (bias_trial.c), pure so that
 * tests/c/tm/tm_trial.c can drive it with made-up clocks and counts.
 */
#ifndef HPS_TM_BIAS_TRIAL_H
#define HPS_TM_BIAS_TRIAL_H
#include <stdint.h>

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

#endif
