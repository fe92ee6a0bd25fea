// SPDX-License-Identifier: MIT
/*
 * The granularity controller (coarsen.h): a hill climb over powers of 2
 * made robust to noisy clocks.
 *
 * Why these steps.  Cost per iteration (time in the loop / iterations
 * committed) is the quantity to minimize; it already contains the
 * begin/commit overhead (falls with k), the work lost to aborts (grows
 * with k and the conflict rate) and capacity effects.  It is measured on a
 * machine shared with other processes, so:
 *   - a measurement is the median of 3 epochs: one epoch hit by a
 *     preemption (a 4 ms time slice in a 50 us epoch) does not count;
 *   - a neighbour must beat the current level measured both before and
 *     after it (A B A2): by 3 % against their mean, and at all against the
 *     lower of the two.  The mean of A and A2 is A's cost at B's time when
 *     the load drifts steadily (the drift cancels); the lower one guards
 *     against a step (a load that falls during B and stays low makes A
 *     look worse, never A2).  Until issue 16 the rule was 3 % below the
 *     lower one: the lower of two noisy medians is biased low by about half
 *     their spread, so with noise like this machine's (two epochs in a row
 *     at one level differ by 20 % or more one time in ten) gains of 5-10 %
 *     were rejected again and again, and every rejection doubled the stay
 *     at the worse level;
 *   - the 3 % is hysteresis: levels within noise of each other do not
 *     trade places back and forth.  (5 % was tried: on the
 *     workloads' long gentle slopes, where each doubling of k gains 2-5 %
 *     up to k = 1024, it stopped two or three levels short, 5-9 % off.)
 *   - probes get rarer while the level holds (stays double up to 256
 *     epochs), so a settled loop spends at most a few percent of its
 *     epochs at a neighbour's cost;
 *   - a change in the input (conflict rate) shows as a cost or abort ratio
 *     off the settled baseline; 3 epochs in a row of that, not one, end the
 *     stay.
 *   - when the site's threads outnumber the CPUs, a slow epoch is often a
 *     thread preempted inside a section, which stalls the others (norec's
 *     writer holding the sequence, stm's locked orecs), more often the
 *     longer the sections: a real cost of the level, which the median
 *     throws away.  So every level also keeps its long run (all its epochs'
 *     time over their iterations), and while crowded a move to longer
 *     sections needs its word: 24 epochs at both levels, the neighbour's
 *     long run 3 % below (moves to shorter sections go by medians; no far
 *     probes).  Aborts weigh more while crowded, for the same reason: an
 *     epoch with as many aborts as chunks steps down at once, and a level
 *     aborting 20 % of its attempts looks down before up.  Figures (scatter
 *     large-low at 8 threads on 2 CPUs) in docs/tm-coarsen.md.
 *   - where the search starts again (scans, an input that changes
 *     mid-round, during a scan or back to one seen before, gaps between
 *     calls, company, a pinned backend): coarsen_ctl_turn.c.
 * Aborts are counted exactly, not timed, so they act at once: a capacity
 * abort proves the level too big for the hardware (cap it below), and
 * chunks that each abort twice or more on average are far past the
 * inflection point (step down without waiting for three measurements).
 */
#include <math.h>
#include <string.h>
#include "coarsen_ctl_int.h"

void hps_tm_ctl_init(hps_tm_ctl_t *c, unsigned level0, unsigned lmax)
{
    *c = (hps_tm_ctl_t){ 0 };
    c->lmax = (uint8_t)(lmax > HPS_TM_CTL_LMAX ? HPS_TM_CTL_LMAX : lmax);
    c->cap = c->lmax;
    c->level = (uint8_t)(level0 > c->lmax ? c->lmax : level0);
    c->phase = HPS_TM_CTL_A;
    c->stay_len = STAY_MIN;
}

static float median3(const float *e)
{
    float a = e[0], b = e[1], c = e[2];
    if (a > b) { float t = a; a = b; b = t; }
    if (b > c) b = c;
    return a > b ? a : b;
}

/* The arm's backoff: a far dearer answer (or a clear loss) skips the next
 * 2^e - 1 rounds' arm probes (e grows to the arm's maximum); a change of
 * arm resets it, a change of the input ends the skipping but keeps e.  On
 * the serial arm at most 3 rounds: its cost says nothing of the levels',
 * so it learns that concurrent chunks got cheaper only from these probes.
 * On concurrent chunks up to 15: the serial arm's cost does not depend on
 * the level, so moving between levels gives no reason to measure it again,
 * and a change of the input (drift) ends the skipping. */
static unsigned arm_backoff_max(const hps_tm_ctl_t *c)
{
    return c->serial ? ARM_BACKOFF_MAX : ARM_BACKOFF_MAX_CONC;
}

/* `full`: the answer is a full measurement's (a clear loss), not one
 * epoch's: only that earns the concurrent arm's long backoff (one epoch hit
 * by a preemption looks far dearer too: tm.ctl.serial's shift to conflicts
 * met one such first epoch, and 15 rounds of skipping left it at 1.7x the
 * serial arm's cost). */
void hps_tm_ctl_arm_far(hps_tm_ctl_t *c, int full)
{
    if (c->spell)
        return;                      /* a spell's serial arm looks back every stay */
    unsigned e0 = c->arm_skip & 15u, e = e0 + 1u;
    unsigned max = full ? arm_backoff_max(c) : ARM_BACKOFF_MAX;
    if (e > max)
        e = max > e0 ? max : e0;
    c->arm_skip = (uint8_t)(((1u << e) - 1u) << 4 | e);
}

/* What a settled epoch takes off the stay: a whole epoch's worth for
 * HPS_TM_CTL_STAY_CHUNKS chunks or more, its share for fewer (at least one
 * unit, and never past the stay's end). */
static uint16_t stay_share(const hps_tm_ctl_t *c, const hps_tm_ctl_sample_t *s)
{
    uint64_t u = s->chunks >= HPS_TM_CTL_STAY_CHUNKS
                     ? HPS_TM_CTL_STAY_UNIT
                     : s->chunks * HPS_TM_CTL_STAY_UNIT / HPS_TM_CTL_STAY_CHUNKS;
    if (u == 0)
        u = 1;
    return (uint16_t)(u < c->stay ? u : c->stay);
}

static void settle(hps_tm_ctl_t *c, float cost, float ar)
{
    if (c->pending) {
        /* The search after a change of the input ends here: the next change
         * of its kind tries this arm first (jump_learned).  An arm that two
         * searches in a row chose is held against one search that chose
         * the other (a change made by noise, or a search misled by it),
         * and taken back only after a second. */
        uint8_t *j = &c->jump[c->pending - 1];
        unsigned now = HPS_TM_CTL_JUMP_VALID | (c->serial ? HPS_TM_CTL_JUMP_SERIAL : 0) | c->level;
        int same = (*j & HPS_TM_CTL_JUMP_VALID) && !(*j & HPS_TM_CTL_JUMP_SERIAL) == !c->serial;
        if (same)
            *j = (uint8_t)(now | HPS_TM_CTL_JUMP_SURE);
        else if (*j & HPS_TM_CTL_JUMP_SURE)
            *j = (uint8_t)(*j & ~HPS_TM_CTL_JUMP_SURE);
        else
            *j = (uint8_t)now;
        c->pending = 0;
    }
    if (c->arm_skip >> 4)
        c->arm_skip = (uint8_t)(c->arm_skip - 16);   /* a round ends: one fewer to skip */
    c->phase = HPS_TM_CTL_SETTLED;
    c->gapped = 0;
    c->base = cost;
    c->base_ar = ar;
    c->drift = 0;
    c->nep = 0;
    for (int i = 0; i < HPS_TM_CTL_EPOCHS; i++)
        c->ep[i] = cost;
    if (c->moved || c->spell)
        c->stay_len = STAY_MIN;      /* (a spell's serial arm: see change_arm) */
    else if (c->stay_len < STAY_MAX)
        c->stay_len *= 2;
    if (c->spell && !c->moved)
        c->spell--;                  /* a stay that confirmed it */
    c->moved = 0;
    c->stay = c->stay_len;
}

static int side_open(const hps_tm_ctl_t *c, int dir)
{
    if (dir > 0)
        return !(c->tried & 1) && c->level < c->cap;
    return !(c->tried & 2) && c->level > 0;
}

/* After a one-level probe that came out within the hysteresis of the
 * current level (B neither better nor worse by 3 %), the level two steps
 * that way is worth a look: a cost curve can be flat over a few levels and
 * fall beyond them, and a climber that only compares neighbours stops on
 * the flat part (tm.ctl.plateau; the case that prompted it, scatter
 * large-low under stm at 1 thread, was mostly the bias's wait that
 * coarsen.c's ticks by iterations removed).  One far probe per side per
 * level (until the level moves or the input changes: repeated at every
 * round, tm.ctl.low ran at 1.092x the best level's cost, against 1.064x
 * without far probes and 1.076x with one per level); its move needs 6 %,
 * not 3 %, against the current level and 3 % against the near probe (on
 * pure noise each far probe is one more chance to move: tm.ctl.flat's
 * moves went from 29 to 45 in 2000 epochs with the plain rule). */
static int far_open(const hps_tm_ctl_t *c, float mean)
{
    if (c->crowded)
        return 0;                    /* medians: the long run decides there */
    if (c->dir != 1 && c->dir != -1)
        return 0;                    /* this was the far probe, or the other arm */
    if (!(c->b <= mean * (1.0f + H)))
        return 0;                    /* worse that way: the slope rises */
    if (c->far_tried & hps_tm_ctl_side_bit(c->dir))
        return 0;                    /* looked already from this level */
    int l = c->level + 2 * c->dir;
    return l >= 0 && l <= c->cap;
}

/* Measure the neighbour `dir` (0: the other arm) against the current
 * level's cost a: phase B from its first epoch. */
void hps_tm_ctl_start_b(hps_tm_ctl_t *c, int dir, float a)
{
    c->dir = (int8_t)dir;
    c->a = a;
    c->phase = HPS_TM_CTL_B;
    c->nep = 0;
    c->ar_sum = 0;
    c->backed = 0;
}

/* With the current level's cost a and abort ratio ar known, probe a side
 * not yet tried (up first, unless the current level already aborts more
 * often than it commits), then the other arm, or settle.  The serial arm
 * has no sides: its k is fixed, its neighbour is the concurrent level. */
void hps_tm_ctl_probe_or_settle(hps_tm_ctl_t *c, float a, float ar)
{
    int up = !c->serial && side_open(c, 1), down = !c->serial && side_open(c, -1);
    int backing_off = (c->arm_skip >> 4) && !(c->arm_cost > 0 && a > ARM_NEAR * c->arm_cost);
    int arm = !(c->tried & hps_tm_ctl_side_bit(0)) && !backing_off && !c->no_serial;
    if (!up && !down && !arm) {
        settle(c, a, ar);
        return;
    }
    if (!up && !down && c->serial) {
        /* The serial arm's cost says nothing of the levels': a probe of
         * the level it left found k = 4-8 dearer for ever after the
         * conflicts went, while k = 1024 was 3x cheaper (tm.ctl.serial).
         * So it scans them again (the far rule keeps that short where
         * they are far dearer). */
        hps_tm_ctl_scan(c);
        c->probes++;
        return;
    }
    int dir = up && (ar < (c->crowded ? AR_UP_CROWDED : 0.5f) || !down) ? 1 : down ? -1 : 0;
    c->bn = ar;                      /* read by an arm probe's early answer */
    hps_tm_ctl_start_b(c, dir, a);
    c->probes++;
}

/* Start measuring the current level from scratch (after a forced move). */
void hps_tm_ctl_remeasure(hps_tm_ctl_t *c, uint8_t tried)
{
    c->phase = HPS_TM_CTL_A;
    c->scanned = 0;
    c->tried = tried;
    c->nep = 0;
    c->ar_sum = 0;
}

void hps_tm_ctl_set_level(hps_tm_ctl_t *c, unsigned l)
{
    if (l != c->level) {
        c->level = (uint8_t)l;
        c->moves++;
        c->moved = 1;
        c->far_tried = 0;
    }
}

void hps_tm_ctl_set_arm(hps_tm_ctl_t *c, unsigned serial)
{
    if (serial != c->serial) {
        c->spell = 0;
        c->serial = (uint8_t)serial;
        c->moves++;
        c->moved = 1;
        c->arm_skip = 0;             /* a new arm: its backoff starts afresh */
        c->arm_cost = 0;
    }
}

/* The other arm (just measured: c->b) wins over the current one (cost
 * `was`).  To serial: settle there.  Back to concurrent chunks: look up
 * and down from the level. */
static void change_arm(hps_tm_ctl_t *c, float was, float ar)
{
    hps_tm_ctl_set_arm(c, !c->serial);
    c->arm_cost = was;
    /* Taken after the concurrent cost rose (the pending change's kind: rose,
     * on concurrent chunks) from a baseline below the serial arm's: a spell. */
    int rose = c->pending == HPS_TM_CTL_CHANGE_ROSE + 1;
    if (c->serial && rose && c->base > 0 && c->base < c->b * (1.0f - 2.0f * H))
        c->spell = SPELL_STAYS;
    c->tried = hps_tm_ctl_side_bit(0);
    if (c->serial)
        settle(c, c->b, ar);
    else
        hps_tm_ctl_probe_or_settle(c, c->b, ar);
}

int hps_tm_ctl_valid(const hps_tm_ctl_t *c, unsigned lmax)
{
    if (c->lmax != lmax || lmax > HPS_TM_CTL_LMAX || c->cap > c->lmax || c->level > c->cap ||
        c->phase > HPS_TM_CTL_SCAN ||
        c->nep >= (c->phase == HPS_TM_CTL_SCAN ? HPS_TM_CTL_SCAN_EP_MAX : HPS_TM_CTL_EPOCHS) ||
        c->scan_i > HPS_TM_CTL_SCAN_N || c->serial > 1 || (c->arm_skip & 15u) > arm_backoff_max(c) ||
        c->no_serial > 1 || (c->no_serial && c->serial) || c->shared > 1 || c->gapped > 1 ||
        c->backed > BACKED_LEARNED || !(c->arm_cost >= 0 && c->arm_cost < INFINITY) ||
        c->stay_len < STAY_MIN || c->stay_len > STAY_MAX ||
        c->stay > c->stay_len || (c->phase == HPS_TM_CTL_SETTLED && c->stay == 0) ||
        c->pending > HPS_TM_CTL_CHANGES || c->scanned > 1 ||
        (c->scanned && c->phase != HPS_TM_CTL_A) ||
        c->spell > SPELL_STAYS || (c->spell && !c->serial))
        return 0;
    for (int i = 0; i < HPS_TM_CTL_CHANGES; i++)
        if ((c->jump[i] & HPS_TM_CTL_JUMP_VALID) ? (c->jump[i] & HPS_TM_CTL_JUMP_LEVEL) > lmax
                                                 : c->jump[i] != 0)
            return 0;
    if (c->phase == HPS_TM_CTL_B) {
        int l = c->level + c->dir;
        if ((c->serial && c->dir != 0) || c->dir < -2 || c->dir > 2 || l < 0 || l > c->cap)
            return 0;
    }
    return 1;
}

/* The level's long run: every epoch at it, stalls included. */
void hps_tm_ctl_lr_add(hps_tm_ctl_t *c, unsigned run, const hps_tm_ctl_sample_t *s)
{
    c->lr_ns[run] += (float)s->ns;
    c->lr_it[run] += (float)s->iters;
    if (++c->lr_n[run] > LR_MAX) {
        c->lr_ns[run] *= 0.5f;
        c->lr_it[run] *= 0.5f;
        c->lr_n[run] /= 2;
    }
}

void hps_tm_ctl_lr_clear(hps_tm_ctl_t *c)
{
    memset(c->lr_ns, 0, sizeof c->lr_ns);
    memset(c->lr_it, 0, sizeof c->lr_it);
    memset(c->lr_n, 0, sizeof c->lr_n);
}

int hps_tm_ctl_near(const hps_tm_ctl_t *c, uint64_t ns, uint64_t iters)
{
    const float held[] = { c->a, c->b, c->base };
    float ref = INFINITY;
    for (unsigned i = 0; i < sizeof held / sizeof held[0]; i++)
        if (held[i] > 0 && held[i] < ref)
            ref = held[i];
    return iters && ref < INFINITY && (float)ns < HPS_TM_CTL_NEAR * ref * (float)iters;
}

void hps_tm_ctl_epoch(hps_tm_ctl_t *c, const hps_tm_ctl_sample_t *s)
{
    c->epochs++;
    unsigned run = hps_tm_ctl_level(c);
    int serial = hps_tm_ctl_serial(c);
    if (s->iters == 0 || s->chunks == 0)
        return;
    float cost = (float)s->ns / (float)s->iters;
    float ar = (float)s->aborts / (float)(s->aborts + s->chunks);

    if (s->cap_aborts && run > 0) {
        /* This size overflowed the hardware: nothing at or above it is
         * tried again until a stay passes without capacity aborts. */
        c->cap = (uint8_t)(run - 1);
        hps_tm_ctl_set_level(c, c->level > c->cap ? c->cap : c->level);
        hps_tm_ctl_remeasure(c, 1);
        return;
    }
    if (c->phase == HPS_TM_CTL_SCAN) {
        hps_tm_ctl_scan_epoch(c, run, s, cost);
        return;
    }
    /* (Serialized chunks abort only when an iteration restarts them.) */
    if (!serial && s->aborts >= (s->crowded ? 1u : 2u) * s->chunks && run > 0) {
        if (c->phase == HPS_TM_CTL_B) {
            /* The neighbour is far worse: the probe has its answer. */
            c->b = INFINITY;
            c->tried |= hps_tm_ctl_side_bit(c->dir);
            hps_tm_ctl_probe_or_settle(c, c->a, ar);
        } else {
            hps_tm_ctl_set_level(c, run - 1);
            hps_tm_ctl_remeasure(c, 1);
        }
        return;
    }

    c->crowded = s->crowded != 0;
    if (!serial)
        hps_tm_ctl_lr_add(c, run, s);           /* the long runs are the levels' */

    if (c->phase == HPS_TM_CTL_B && c->dir == 0 && c->nep == 0 && cost > ARM_FAR * c->a &&
        !c->backed) {
        /* The other arm, far dearer at its first epoch: answered.  Not
         * when the scan just found it cheaper: one epoch is then more
         * likely a hiccup than the answer (histogram's 1 Mi bins under
         * norec at 2 threads: a rescan measured k = 64 at 54 ns a key
         * against the serial arm's 72, the probe's first epoch took 128,
         * and the serial arm, 1.5-2x dearer, held most of a 50 ms run). */
        hps_tm_ctl_arm_far(c, 0);
        c->arm_cost = cost;
        c->tried |= hps_tm_ctl_side_bit(0);
        hps_tm_ctl_probe_or_settle(c, c->a, c->bn);
        return;
    }

    switch (c->phase) {
    case HPS_TM_CTL_A:
    case HPS_TM_CTL_B:
    case HPS_TM_CTL_A2:
        c->ep[c->nep++] = cost;
        c->ar_sum += ar;
        if (c->nep < HPS_TM_CTL_EPOCHS)
            return;
        float m = median3(c->ep), mar = c->ar_sum / HPS_TM_CTL_EPOCHS;
        c->nep = 0;
        c->ar_sum = 0;
        if (c->phase == HPS_TM_CTL_A) {
            float now;
            int scanned = c->scanned;
            c->scanned = 0;
            if (scanned && hps_tm_ctl_turned(c, c->a, 0, &now)) {
                /* The A after a scan is another input's than the scan's
                 * figure for the arm it chose: the scan compared two
                 * inputs (b1m-b16 in slices: a rescan's serial point on 16
                 * hot bins, 13 ns a key, against levels on the next
                 * slice's 1 Mi bins, 67-90; A measured the serial arm at
                 * 61, settled, and held two slices at 1.7x concurrent
                 * k = 64's cost). */
                hps_tm_ctl_input_changed(c, c->a, now, mar);
                return;
            }
            hps_tm_ctl_probe_or_settle(c, m, mar);
        } else if (c->phase == HPS_TM_CTL_B) {
            if (c->crowded && c->dir > 0 && m < c->a * (1.0f - H) &&
                c->lr_n[c->level + c->dir] < LR_MIN)
                return;              /* looks better: measure it long enough to know */
            c->b = m;
            c->phase = HPS_TM_CTL_A2;
            if (c->backed == BACKED_LEARNED && m * ARM_FAR < c->a) {
                /* A learned jump that pays this much needs no A2: no
                 * drift of the load in 3 epochs is worth 1.5x, and on a
                 * turn back to the dearer inputs' serial arm A2's 3
                 * epochs cost 1.75x (b1m-b16). */
                change_arm(c, c->a, mar);
            }
        } else {
            if (c->crowded && c->dir > 0 && c->b < m * (1.0f - H) && c->lr_n[c->level] < LR_MIN)
                return;              /* the same for the level it would leave */
            float now;
            if (hps_tm_ctl_turned(c, c->a, c->base, &now)) {
                /* The input changed during the round (A and A2 are one
                 * level and arm): B paired with neither.  Unseen, the round
                 * settled on the new input's cost as its baseline, and the
                 * drift test then compared with that (b1m-b16's slices
                 * turn mid-round about half the time: in tm.ctl.phases
                 * concurrent k = 64 then held hot phases at 3x the serial
                 * arm's cost). */
                hps_tm_ctl_input_changed(c, c->a, now, mar);
                return;
            }
            float lo = c->a < m ? c->a : m, mean = 0.5f * (c->a + m);
            /* A far probe (two levels) needs twice the margin: on pure
             * noise it is one more chance a round to move. */
            int far = c->dir == 2 || c->dir == -2;
            float h = far || c->dir == 0 ? 2.0f * H : H;   /* the other arm: twice, as far */
            int better = c->b < mean * (1.0f - h) && c->b < lo &&
                         (!far || c->b < c->bn * (1.0f - H));
            unsigned nb = (unsigned)(c->level + c->dir);
            /* (The other arm, dir 0, goes by medians: it keeps no long run.) */
            if (c->dir != 0 && c->crowded && c->lr_n[c->level] >= LR_MIN && c->lr_n[nb] >= LR_MIN)
                better = c->lr_ns[nb] / c->lr_it[nb] <
                         c->lr_ns[c->level] / c->lr_it[c->level] * (1.0f - h);
            else if (c->crowded && c->dir > 0)
                better = 0;          /* longer sections: only on the long run's word */
            if (better && c->dir == 0) {
                change_arm(c, mean, mar);
            } else if (better) {
                /* Move, and keep going the same way: the side we came from
                 * was just measured worse. */
                int dir = c->dir;
                hps_tm_ctl_set_level(c, (unsigned)(c->level + dir));
                dir = dir > 0 ? 1 : -1;
                c->dir = (int8_t)dir;
                c->tried = hps_tm_ctl_side_bit(-dir);
                if (side_open(c, dir)) {
                    hps_tm_ctl_start_b(c, dir, c->b);
                    c->probes++;
                } else {
                    settle(c, c->b, mar);
                }
            } else if (far_open(c, mean)) {
                /* The neighbour measured no different: a plateau, or a
                 * slope too gentle to see in one step.  Look one level
                 * further before closing this side. */
                c->far_tried |= hps_tm_ctl_side_bit(c->dir);
                c->bn = c->b;
                hps_tm_ctl_start_b(c, c->dir * 2, m);
                c->probes++;
            } else {
                if (c->dir == 0) {
                    c->arm_cost = c->b;
                    if (c->b > ARM_LOSS * mean)
                        hps_tm_ctl_arm_far(c, 1);  /* the other arm lost clearly: its probes back off */
                }
                c->tried |= hps_tm_ctl_side_bit(c->dir);
                hps_tm_ctl_probe_or_settle(c, m, mar);
            }
        }
        return;
    default:
        break;
    }

    /* Settled: the last 3 epochs are kept, so a probe needs no new A. */
    c->ep[c->nep] = cost;
    c->nep = (uint8_t)((c->nep + 1) % HPS_TM_CTL_EPOCHS);
    c->ar_sum = ar;
    int off = cost > c->base * (1.0f + DRIFT_COST) || cost < c->base * (1.0f - DRIFT_COST) ||
              (ar > c->base_ar ? ar - c->base_ar : c->base_ar - ar) > DRIFT_AR + 0.5f * c->base_ar;
    c->drift = off ? (uint8_t)(c->drift + 1) : 0;
    if (c->drift >= DRIFT_EPOCHS) {
        hps_tm_ctl_input_changed(c, c->base, median3(c->ep), ar);
        return;
    }
    if ((c->stay -= stay_share(c, s)) != 0)
        return;
    if (c->cap < c->lmax)
        c->cap++;                    /* a stay without capacity aborts */
    c->tried = 0;
    hps_tm_ctl_probe_or_settle(c, median3(c->ep), ar);
}
