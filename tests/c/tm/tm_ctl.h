/* SPDX-License-Identifier: MIT */
/*
 * tm_ctl.h - the synthetic loops the controller's tests run on
 * (tm_ctl_model.c), shared by tm_ctl.c's cases and tm_ctl_turns.c's (inputs
 * that change between or during calls).
 */
#ifndef HPS_TEST_TM_CTL_H
#define HPS_TEST_TM_CTL_H

#include <stdint.h>
#include "tm/coarsen.h"

#define O 200.0
#define W 10.0

typedef struct model {
    double p;                        /* conflict chance per iteration */
    unsigned cap_level;              /* chunks above 2^cap_level overflow (99: never) */
    double noise;                    /* +- fraction */
    unsigned outlier_pct;            /* epochs hit by a preemption, percent */
    const double *curve;             /* non-NULL: cost per iteration at each level, no aborts */
    double stall;                    /* threads outnumber CPUs: an epoch's chance of a stall at
                                      * k = 16, doubling with k (at most 1); a stall makes it 4x */
    double serial;                   /* the serial arm's cost per iteration (0: 4x the best level's) */
} model_t;

extern uint64_t g_rng;               /* the noise's seed (TM_CTL_SEED moves it) */
extern const model_t k_free, k_low, k_high;
double uniform(void);
double true_cost(const model_t *m, unsigned level);
unsigned best_level(const model_t *m, unsigned lmax);
double serial_cost(const model_t *m, unsigned lmax);
/* One epoch of `chunks` chunks (feed: 16) at the controller's level; returns
 * its true cost. */
double feed_n(hps_tm_ctl_t *c, const model_t *m, uint64_t chunks);
double feed(hps_tm_ctl_t *c, const model_t *m);
/* One epoch of 16 chunks costing `cost` an iteration, no aborts. */
void feed_cost(hps_tm_ctl_t *c, double cost);
/* Run epochs and check the mean true cost over the last `window` of them. */
void converge(const char *what, hps_tm_ctl_t *c, const model_t *m, unsigned epochs, unsigned window);

void case_joined(void);
void case_gap(void);
void case_gap_after_scan(void);
void case_phases(void);
void case_spell(void);

#endif
