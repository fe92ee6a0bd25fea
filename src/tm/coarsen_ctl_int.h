/* SPDX-License-Identifier: MIT */
/*
 * coarsen_ctl_int.h - what the granularity controller's two files share:
 * coarsen_ctl.c (the climb: A-B-A2 rounds, settling, stays, the epoch) and
 * coarsen_ctl_turn.c (where the search starts again: the scan, a change of
 * the input, gaps between calls, company, a pinned backend).  Its
 * constants, and the steps both sides take.  Not for coarsen.c, which
 * drives the controller through coarsen.h alone.
 */
#ifndef HPS_TM_COARSEN_CTL_INT_H
#define HPS_TM_COARSEN_CTL_INT_H

#include "coarsen.h"

#define H 0.03f                      /* hysteresis: a move needs 3 % better */
#define DRIFT_COST 0.30f             /* settled: cost off the baseline by 30 % */
#define DRIFT_AR 0.10f               /* ... or abort ratio by 0.1 + half the baseline's */
#define DRIFT_EPOCHS 3
/* A measurement this far off the figure it repeats is another input's (turned). */
#define DRIFT_TURN 1.5f
#define LR_MIN 24                    /* epochs at both levels before the long run decides */
#define LR_MAX 256                   /* past this, a level's long run is halved */
/* While crowded, a level whose chunks abort this often (aborts over aborts
 * and commits) probes downwards first, not upwards (0.5 elsewhere). */
#define AR_UP_CROWDED 0.2f
/* An arm probe (or the scan's serial point) whose first epoch costs this
 * many times the current arm's is answered at once, and the arm's next
 * probes back off: 3 epochs at 4x the settled cost every round added
 * 5-30 % to the model's loops where concurrency pays (tm.ctl).  1.5, not
 * 2: a settled serial arm's rescans measured k = 64 and 1024 (1.5 and 3.7x
 * its cost) in full every round, 14 % of scatter small-low's run under
 * norec at 2 threads. */
#define ARM_FAR 1.5f
/* An arm probe that lost by this much in full (its median over the mean of
 * A and A2) backs off as a far answer does.  Histogram's 1 Mi bins under
 * norec at 2 threads: the serial arm measured 1.3-1.6x k = 64-128's cost,
 * rarely 1.5x at its first epoch, so it was probed in full at the end of
 * every round; the level moving between neighbours on noise kept the
 * rounds short (stays of 8 epochs), and 3 serialized epochs of ~0.6 ms
 * every 3-5 ms were 15-30 % of the leader's time. */
#define ARM_LOSS 1.25f
#define ARM_BACKOFF_MAX 2            /* on the serial arm: skip at most 3 rounds */
#define ARM_BACKOFF_MAX_CONC 4       /* on concurrent chunks: at most 15 */
/* A backoff ends early when the current level's cost comes within this
 * factor of the other arm's last measured cost: conflicts rose (the
 * model's shift from no conflicts, where serialized chunks cost 3x
 * k = 1024's, to many, where they cost 0.6x k = 16's), or the machine's
 * speed moved, and that measurement is stale. */
#define ARM_NEAR 0.9f
/* The scan goes on past a level far dearer than the serial arm only if
 * that level halved the one below's cost and came within this factor of
 * the serial arm's: a concurrent k = 1024 epoch at 8 threads on scatter's
 * large zones (after k = 64 at 7.5x the serial arm's cost, half k = 4's)
 * took 11 ms, fifty serialized epochs' time, at every rescan. */
#define SCAN_REACH 4.0f
/* Serialized chunks taken after the concurrent level's cost rose above
 * theirs, from a settled baseline below theirs, may only be waiting out a
 * spell in which the second vCPU stalls (concurrent chunks 2x dearer,
 * serialized ones unchanged; histogram's 1 Mi bins under stm at 2
 * threads).  Their cost does not change when the spell ends, so only the
 * rescans at the ends of stays can tell; for this many stays they do not
 * double and far answers do not back off (tm.ctl.spell: calm stretches
 * of 200 Ki iterations that never left the serial arm, 5-17 of 80 before,
 * 0-11 after). */
#define SPELL_STAYS 4
/* c->backed: 1 an arm probe after a scan found that arm cheaper,
 * BACKED_LEARNED one after a change of the input of a known kind. */
#define BACKED_LEARNED 2
#define STAY_MIN (HPS_TM_CTL_STAY_MIN * HPS_TM_CTL_STAY_UNIT)
#define STAY_MAX (HPS_TM_CTL_STAY_MAX * HPS_TM_CTL_STAY_UNIT)

/* The bit of `tried` and `far_tried` for a side: 1 up, 2 down, 4 the
 * other arm (dir 0). */
static inline uint8_t hps_tm_ctl_side_bit(int dir)
{
    return dir > 0 ? 1 : dir < 0 ? 2 : 4;
}

/* The climb's steps (coarsen_ctl.c). */
void hps_tm_ctl_set_level(hps_tm_ctl_t *c, unsigned l);
void hps_tm_ctl_set_arm(hps_tm_ctl_t *c, unsigned serial);
/* Measure the neighbour `dir` (0: the other arm) against the cost a. */
void hps_tm_ctl_start_b(hps_tm_ctl_t *c, int dir, float a);
/* The other arm's probes back off (`full`: after a clear loss). */
void hps_tm_ctl_arm_far(hps_tm_ctl_t *c, int full);
/* Measure the current level from scratch, the sides in `tried` done. */
void hps_tm_ctl_remeasure(hps_tm_ctl_t *c, uint8_t tried);
/* Probe a side or the other arm not yet tried, or settle at cost a. */
void hps_tm_ctl_probe_or_settle(hps_tm_ctl_t *c, float a, float ar);
void hps_tm_ctl_lr_add(hps_tm_ctl_t *c, unsigned run, const hps_tm_ctl_sample_t *s);
void hps_tm_ctl_lr_clear(hps_tm_ctl_t *c);

/* Where the search starts again (coarsen_ctl_turn.c). */
void hps_tm_ctl_scan_epoch(hps_tm_ctl_t *c, unsigned run, const hps_tm_ctl_sample_t *s, float cost);
/* 1 if the measurement just ended is another input's than `ref` (*now: its figure). */
int hps_tm_ctl_turned(const hps_tm_ctl_t *c, float ref, float base, float *now);
/* The input changed from cost `was` to `now`: search again. */
void hps_tm_ctl_input_changed(hps_tm_ctl_t *c, float was, float now, float ar);

#endif
