// SPDX-License-Identifier: MIT
/*
 * Where the granularity controller's search starts again (coarsen.h):
 * a scan of the range, a change of the input (seen by the climb's drift
 * test, in a round's A2 or in the A after a scan) and what it has learned
 * of such changes, a gap between calls, other threads joining a lone
 * start, a backend that runs one section at a time.  The climb itself is
 * coarsen_ctl.c; what the two share, coarsen_ctl_int.h.
 */
#include <math.h>
#include "coarsen_ctl_int.h"

void hps_tm_ctl_scan(hps_tm_ctl_t *c)
{
    c->phase = HPS_TM_CTL_SCAN;
    c->nep = 0;
    c->scan_i = c->no_serial ? 0 : HPS_TM_CTL_SCAN_N;   /* the serial arm's point first */
    c->b = INFINITY;
    for (int i = 0; i < HPS_TM_CTL_SCAN_N; i++)
        c->ep[i] = INFINITY;
}

/* A change of the input (input_changed) of a kind seen before, after
 * which the search settled on the other arm: that arm is measured first,
 * A-B-A as any arm probe (A is the changed cost; not answered by its first
 * epoch alone, and taken without A2 when it beats A by 1.5x), instead of
 * climbing level by level towards it, or rescanning, as the first time.
 * Inputs whose phases recur pay the long search once: histogram's b1m-b16
 * cut into slices turns from 1 Mi bins (concurrent k = 64-128 best) to 16
 * hot ones (the serial arm best) and back 16 times a process, and each
 * turn cost 1-2 ms of climbing to the serial arm, or a rescan from it, in
 * phases of 2-12 ms.  Keyed by the arm left and the cost's direction (a
 * cost that rose on concurrent chunks is a different change from one that
 * fell); two searches that settle on the arm left unlearn the jump. */
static int jump_learned(hps_tm_ctl_t *c, unsigned idx, float a, float ar)
{
    unsigned j = c->jump[idx];
    if (!(j & HPS_TM_CTL_JUMP_VALID) || !(j & HPS_TM_CTL_JUMP_SERIAL) == !c->serial ||
        c->no_serial)
        return 0;
    if (c->serial) {
        /* The arm probe from the serial arm runs concurrent chunks at level. */
        unsigned l = j & HPS_TM_CTL_JUMP_LEVEL;
        c->level = (uint8_t)(l < c->cap ? l : c->cap);
    }
    c->tried = 0;
    c->bn = ar;
    hps_tm_ctl_start_b(c, 0, a);
    c->backed = BACKED_LEARNED;
    c->probes++;
    return 1;
}

/* The measurement just ended (its epochs in c->ep) is another input's than
 * `ref`, a figure of the same level and arm from before it: off by
 * DRIFT_TURN, and off the settled baseline `base` too where there is one
 * (an A inflated by two preempted epochs of three is followed by an A2
 * back at the baseline).  A rise in all three epochs (preemptions come in
 * runs), a fall in the last two (the first may straddle the turn; nothing
 * makes epochs spuriously cheap).  *now: the figure nearer to ref's (a
 * learned jump takes the other arm without A2 when it beats that by
 * 1.5x). */
int hps_tm_ctl_turned(const hps_tm_ctl_t *c, float ref, float base, float *now)
{
    float lo3 = c->ep[0] < c->ep[1] ? c->ep[0] : c->ep[1];
    lo3 = lo3 < c->ep[2] ? lo3 : c->ep[2];
    float hi2 = c->ep[1] < c->ep[2] ? c->ep[2] : c->ep[1];
    if (lo3 > DRIFT_TURN * ref && lo3 > DRIFT_TURN * base) {
        *now = lo3;
        return 1;
    }
    if (hi2 * DRIFT_TURN < ref && (base <= 0 || hi2 * DRIFT_TURN < base)) {
        *now = hi2;
        return 1;
    }
    return 0;
}

/* The input changed: its cost moved from `was` (the settled baseline, or
 * a round's A) to `now` at the same level and arm.  The search starts
 * again, with short stays: with the arm the last search after a change of
 * this kind settled on (jump_learned), else from the current level. */
void hps_tm_ctl_input_changed(hps_tm_ctl_t *c, float was, float now, float ar)
{
    c->moved = 1;
    c->far_tried = 0;
    c->arm_skip &= 15u;              /* probe the other arm this round (a far answer
                                      * backs off further) */
    if (!c->crowded)                 /* crowded, the long runs are what decides */
        hps_tm_ctl_lr_clear(c);
    unsigned idx = (now > was ? HPS_TM_CTL_CHANGE_ROSE : 0u) | c->serial;
    c->pending = (uint8_t)(idx + 1);
    if (jump_learned(c, idx, now, ar))
        return;
    c->tried = 0;
    hps_tm_ctl_probe_or_settle(c, now, ar);
}

/* A scan epoch.  The serial arm's point comes first (its epochs are the
 * cheap ones to measure: a concurrent k = 1024 epoch at 8 threads on
 * scatter's large zones took 7.5 ms, a serialized one 0.3 ms), then the
 * levels.  Each point keeps the cheapest of its epochs (a preempted epoch
 * is only ever slower).  The points go up, and the scan stops at the first
 * that costs more than the one below it (the long sections are the
 * expensive ones to measure where they are bad, and no row measured has a
 * curve that rises from k = 4 to 64 and falls again by 1024); such a point
 * gets a third epoch first (under sgl both epochs at k = 64 were sometimes
 * ones in which the other thread held the lock).  A level over ARM_FAR
 * times the serial point's cost has its answer in one epoch, and the scan
 * stops there unless the level halved the cost of the one below and came
 * within SCAN_REACH of the serial arm's.  Then the cheaper arm, and the
 * climb from the cheapest level; figures in docs/tm-coarsen.md.  A settled
 * serial arm scans again at the end of its stays.  Aborts count by their
 * cost alone here. */
void hps_tm_ctl_scan_epoch(hps_tm_ctl_t *c, unsigned run, const hps_tm_ctl_sample_t *s, float cost)
{
    c->crowded = s->crowded != 0;
    unsigned i = c->scan_i;
    if (i == HPS_TM_CTL_SCAN_N) {
        /* The serial arm's point: the cheapest of its epochs, in b. */
        if (cost < c->b)
            c->b = cost;
        if (++c->nep < HPS_TM_CTL_SCAN_EP)
            return;
        c->scan_i = 0;
        c->nep = 0;
        return;
    }
    hps_tm_ctl_lr_add(c, run, s);
    if (cost < c->ep[i])
        c->ep[i] = cost;
    int far = c->ep[i] > ARM_FAR * c->b;
    if (++c->nep < HPS_TM_CTL_SCAN_EP && !far)
        return;
    int rising = i > 0 && c->ep[i] > c->ep[i - 1];
    if (rising && c->nep < HPS_TM_CTL_SCAN_EP_MAX && !far)
        return;
    int flat = far && i > 0 && (c->ep[i] > 0.5f * c->ep[i - 1] || c->ep[i] > SCAN_REACH * c->b);
    if (!rising && !flat && i + 1 < HPS_TM_CTL_SCAN_N) {
        c->scan_i = (uint8_t)(i + 1);
        c->nep = 0;
        return;
    }
    unsigned best = 0;
    for (unsigned j = 1; j <= i; j++)
        if (c->ep[j] < c->ep[best])
            best = j;
    float lv = c->ep[best], ser = c->b;
    /* Changing arms needs twice the margin of a move, and the hysteresis
     * favours the arm in use (on pure noise a rescan of a settled serial
     * arm flipped it back and forth: tm.ctl.flat). */
    int to_serial = c->serial ? !(lv < ser * (1.0f - 2.0f * H)) : ser < lv * (1.0f - 2.0f * H);
    if (c->serial) {
        /* A rescan: the arm holds, and a level that looks cheaper is
         * probed as the other arm, A-B-A by medians, before the arm
         * changes (the cheapest of three levels' minima is biased low). */
        c->level = (uint8_t)hps_tm_ctl_scan_level(c, best);
        if (!to_serial) {
            c->bn = 0;
            c->tried = 0;
            hps_tm_ctl_start_b(c, 0, ser);
            c->backed = 1;
            return;
        }
    } else {
        hps_tm_ctl_set_level(c, hps_tm_ctl_scan_level(c, best));
        hps_tm_ctl_set_arm(c, (unsigned)to_serial);
    }
    c->arm_cost = c->no_serial ? 0 : c->serial ? lv : ser;   /* (off: never measured) */
    if (c->serial ? lv > ARM_FAR * ser : ser > ARM_FAR * lv)
        hps_tm_ctl_arm_far(c, 0);               /* the other arm, far dearer: its probes back off */
    hps_tm_ctl_remeasure(c, hps_tm_ctl_side_bit(0));       /* the other arm was just measured */
    c->a = c->serial ? ser : lv;     /* what A confirms */
    c->scanned = 1;
}

/* A-B-A2 pairs measurements made close together: with the loop away
 * between B and A2, A2's first epochs are the new call's start (its
 * threads starting, its data cold, or a stretch of the machine's drift
 * that B never saw; in the suite's slices one such A2 moved histogram's
 * 1 Mi bins to the serial arm at 1.5x k = 128's cost for the rest of the
 * run).  The A a scan leaves behind only confirms the arm the scan chose
 * (the other arm counts as tried), and on the serial arm it settles on its
 * own figure, which across a gap may be another input's (b1m-b16: a scan
 * on 16 bins chose the serial arm, A measured the next slice's 1 Mi bins
 * and settled there at twice k = 64's cost).  So a gap in such an A
 * forgets its epochs and the arm tried, and the round compares the arms
 * again.  An A in a climb needs no restart: its B and A2 come after it. */
int hps_tm_ctl_gap(hps_tm_ctl_t *c)
{
    if (c->gapped)
        return 0;
    if (c->phase == HPS_TM_CTL_A) {
        if (!(c->tried & hps_tm_ctl_side_bit(0)))
            return 0;
        hps_tm_ctl_remeasure(c, 0);
    } else if (c->phase == HPS_TM_CTL_B || c->phase == HPS_TM_CTL_A2) {
        hps_tm_ctl_remeasure(c, c->tried);
    } else {
        return 0;
    }
    c->gapped = 1;
    return 1;
}

int hps_tm_ctl_joined(hps_tm_ctl_t *c, int scan)
{
    /* Not only a scan in progress: a lone start often ends after the scan
     * (8 threads on 2 CPUs: one thread ran 2 ms alone, long enough to scan
     * and choose concurrent k = 1024 at the serial arm's cost, 6x dearer
     * than the serial arm once the others ran; the climb's 1 ms epochs
     * then took the rest of scatter's run to find the serial arm again). */
    if (c->shared)
        return 0;
    c->shared = 1;
    if (c->epochs == 0)
        return 0;                    /* nothing measured alone: this epoch counts */
    /* A fresh controller at the level it reached, with what does not
     * depend on company: the capacity cap, the setting, the counters. */
    hps_tm_ctl_t old = *c;
    hps_tm_ctl_init(c, old.level, old.lmax);
    c->cap = old.cap;
    c->no_serial = old.no_serial;
    c->shared = 1;
    c->epochs = old.epochs;
    c->moves = old.moves;
    c->probes = old.probes;
    if (scan)
        hps_tm_ctl_scan(c);
    return 1;
}

int hps_tm_ctl_pinned(hps_tm_ctl_t *c)
{
    if (c->phase == HPS_TM_CTL_SCAN)
        return 0;                    /* never measured: the scan is still to come */
    if (c->level == c->cap && !c->serial && c->phase == HPS_TM_CTL_A && c->nep == 0 && !c->tried)
        return 0;
    hps_tm_ctl_set_arm(c, 0);
    hps_tm_ctl_set_level(c, c->cap);
    hps_tm_ctl_remeasure(c, 0);
    return 1;
}
