// SPDX-License-Identifier: MIT
/*
 * The bias on trial while more threads use TM than the process has CPUs.
 *
 * Why a trial and not a rule.  With more threads than CPUs an owner is
 * sometimes descheduled inside a section, and every other thread's
 * sections then wait for it: a time slice, milliseconds.  Whether the bias
 * still pays depends on the program and on what else runs.  At 8 threads
 * on 2 CPUs (the tm bench, 3 pairs of 200 ms runs) it ran bank's
 * transfers 1.7x (norec) and 2.2x (stm) as fast as without it, and beside
 * two busy processes 1.6x and 1.4x: each transfer's commit otherwise
 * moves the global sequence word or clock between the CPUs.  On the hash
 * sets, trees and the list it ran 0.93-0.96x quiet and 0.58-0.78x loaded
 * (four stalls of about 4 ms each in 300 ms).  So it is measured on the
 * program itself: three epochs of 10 ms (a few time slices), the bias
 * closed, open, closed, counting the work done by all threads (sections
 * committed, and dynamic coarsened loops' iterations: hps_tm_work_total); it
 * stays open only if its epoch beat both closed ones by 10 %.  Closed first
 * and last: the safe choice is the one measured twice, which brackets a
 * load that drifts, and a noisy tie keeps the bias closed.  The verdict
 * holds for 16 epochs, twice as long each time the next trial agrees (up
 * to 128, 1.3 s), so a settled program spends under 1 % of its time with
 * the bias open on trial.
 */
#include "bias_trial.h"

void hps_tm_bias_trial_start(hps_tm_bias_trial_t *t, uint64_t now, uint64_t commits)
{
    uint64_t trials = t->trials, kept = t->kept;
    *t = (hps_tm_bias_trial_t){ .start = now, .commits0 = commits, .step = HPS_TM_TRIAL_A,
                                .hold = HPS_TM_TRIAL_HOLD_MIN, .last = -1,
                                .trials = trials, .kept = kept };
}

static void verdict(hps_tm_bias_trial_t *t)
{
    int open = t->rate[1] >= HPS_TM_TRIAL_GAIN * t->rate[0] &&
               t->rate[1] >= HPS_TM_TRIAL_GAIN * t->rate[2];
    if (open != t->last)
        t->hold = HPS_TM_TRIAL_HOLD_MIN;
    else if (t->hold < HPS_TM_TRIAL_HOLD_MAX)
        t->hold *= 2;
    t->last = open;
    t->open = open;
    t->left = t->hold;
    t->step = HPS_TM_TRIAL_HOLD;
    t->trials++;
    t->kept += (uint64_t)open;
}

void hps_tm_trial_run_tick(hps_tm_trial_run_t *r, uint64_t now, uint64_t (*commits)(void),
                           void (*publish)(int open))
{
    if (hps_load_relaxed(&r->on) && now - hps_load_relaxed(&r->start_hint) < HPS_TM_TRIAL_EPOCH_NS)
        return;
    if (hps_load_relaxed(&r->busy) || hps_xchg_acquire(&r->busy, 1))
        return;
    if (!hps_load_relaxed(&r->on)) {
        hps_tm_bias_trial_start(&r->t, now, commits());
        hps_store_relaxed(&r->on, 1);
    } else {
        (void)hps_tm_bias_trial_step(&r->t, now, commits());
    }
    hps_store_relaxed(&r->start_hint, r->t.start);
    publish(r->t.open);
    hps_store_release(&r->busy, 0);
}

int hps_tm_bias_trial_step(hps_tm_bias_trial_t *t, uint64_t now, uint64_t commits)
{
    if (now - t->start < HPS_TM_TRIAL_EPOCH_NS)
        return 0;
    double rate = (double)(commits - t->commits0) / (double)(now - t->start);
    t->start = now;
    t->commits0 = commits;
    switch (t->step) {
    case HPS_TM_TRIAL_A:
        t->rate[0] = rate;
        t->step = HPS_TM_TRIAL_B;
        t->open = 1;
        break;
    case HPS_TM_TRIAL_B:
        t->rate[1] = rate;
        t->step = HPS_TM_TRIAL_A2;
        t->open = 0;
        break;
    case HPS_TM_TRIAL_A2:
        t->rate[2] = rate;
        verdict(t);
        break;
    default:
        if (--t->left == 0) {
            t->step = HPS_TM_TRIAL_A;
            t->open = 0;
        }
        break;
    }
    return 1;
}
