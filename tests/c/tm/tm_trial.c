// SPDX-License-Identifier: MIT
/*
 * tm_trial - the bias's trial with more threads than CPUs
 * (src/tm/bias_trial.c) driven with made-up clocks and commit counts:
 *
 *   tm_trial CASE
 *
 * Each case feeds epochs of a known rate (commits per ns) for the bias
 * closed and open, and checks the verdicts and how long they hold.
 */
#include <stdio.h>
#include "harness.h"
#include "hpsync/tm.h"
#include "hpsync/tm_coarsen.h"
#include "tm/bias_trial.h"
#include "tm/internal.h"

#define E HPS_TM_TRIAL_EPOCH_NS

typedef struct feed {
    hps_tm_bias_trial_t t;
    uint64_t now, commits;
    uint64_t epochs, open_epochs;    /* epochs fed, and how many had the bias open */
} feed_t;

static void feed_start(feed_t *f)
{
    f->now = 1000;
    f->commits = 5;
    f->epochs = f->open_epochs = 0;
    f->t = (hps_tm_bias_trial_t){ 0 };          /* as the library's, static */
    hps_tm_bias_trial_start(&f->t, f->now, f->commits);
    HPS_CHECK(!f->t.open, "a new trial starts closed");
}

/* One epoch at `closed` or `open` commits per ns, whichever the trial has
 * in force; the step at its end must act. */
static void feed_epoch(feed_t *f, double closed, double open)
{
    int o = f->t.open;
    f->now += E;
    f->commits += (uint64_t)((o ? open : closed) * (double)E);
    f->epochs++;
    f->open_epochs += (uint64_t)o;
    HPS_CHECK(hps_tm_bias_trial_step(&f->t, f->now, f->commits) == 1, "an epoch's end did not step");
}

/* Epochs until the trial's next verdict is in force (A, B, A2). */
static int feed_trial(feed_t *f, double closed, double open)
{
    HPS_CHECK(f->t.step == HPS_TM_TRIAL_A, "a trial begins at step %u", f->t.step);
    for (int i = 0; i < 3; i++)
        feed_epoch(f, closed, open);
    HPS_CHECK(f->t.step == HPS_TM_TRIAL_HOLD, "no verdict after three epochs");
    return f->t.open;
}

/* Epochs until the hold ends; returns how many. */
static unsigned feed_hold(feed_t *f, double closed, double open)
{
    unsigned n = 0;
    while (f->t.step == HPS_TM_TRIAL_HOLD) {
        feed_epoch(f, closed, open);
        n++;
        HPS_CHECK(n <= HPS_TM_TRIAL_HOLD_MAX, "a hold longer than %u epochs", HPS_TM_TRIAL_HOLD_MAX);
    }
    return n;
}

static void case_pays(void)
{
    feed_t f;
    feed_start(&f);
    HPS_CHECK(feed_trial(&f, 1.0, 1.7), "open at 1.7x the closed rate was not kept");
    unsigned want = HPS_TM_TRIAL_HOLD_MIN;
    for (int i = 0; i < 6; i++) {
        unsigned n = feed_hold(&f, 1.0, 1.7);
        HPS_CHECK(n == want, "verdict %d held %u epochs, not %u", i, n, want);
        HPS_CHECK(feed_trial(&f, 1.0, 1.7), "trial %d: open at 1.7x not kept", i + 2);
        want = want * 2 < HPS_TM_TRIAL_HOLD_MAX ? want * 2 : HPS_TM_TRIAL_HOLD_MAX;
    }
    HPS_CHECK(f.t.trials == 7 && f.t.kept == 7, "trials %llu, kept %llu", (unsigned long long)f.t.trials,
              (unsigned long long)f.t.kept);
    printf("pays: kept 7 of 7, holds 16..%u epochs\n", HPS_TM_TRIAL_HOLD_MAX);
}

static void case_loses(void)
{
    feed_t f;
    feed_start(&f);
    /* Open at 0.6x, as the hash sets beside two busy processes. */
    for (int i = 0; i < 8; i++) {
        HPS_CHECK(!feed_trial(&f, 1.0, 0.6), "trial %d: open at 0.6x kept", i + 1);
        feed_hold(&f, 1.0, 0.6);
    }
    /* Settled closed: the open epochs are the trials' B epochs only, and
     * once the holds are long they are under 1 % of the time. */
    feed_t g = f;
    g.epochs = g.open_epochs = 0;
    (void)feed_trial(&g, 1.0, 0.6);
    feed_hold(&g, 1.0, 0.6);
    double frac = (double)g.open_epochs / (double)g.epochs;
    HPS_CHECK(frac < 0.01, "settled closed, the bias was open in %.1f %% of epochs", 100 * frac);
    printf("loses: closed in 8 of 8, open %.2f %% of the time once settled\n", 100 * frac);
}

static void case_tie(void)
{
    feed_t f;
    feed_start(&f);
    /* Within the 10 % hysteresis: closed (the safe choice). */
    HPS_CHECK(!feed_trial(&f, 1.0, 1.05), "open at 1.05x kept");
    feed_hold(&f, 1.0, 1.05);
    /* Just above it: open. */
    HPS_CHECK(feed_trial(&f, 1.0, 1.12), "open at 1.12x not kept");
    HPS_CHECK(f.t.hold == HPS_TM_TRIAL_HOLD_MIN, "a changed verdict holds %u epochs, not %u", f.t.hold,
              HPS_TM_TRIAL_HOLD_MIN);
    printf("tie: 1.05x closed, 1.12x open\n");
}

/* A load that grows (or eases) during the trial: open must beat the closed
 * epoch on both sides of it. */
static void case_drift(void)
{
    feed_t f;
    feed_start(&f);
    double rates[3] = { 1.0, 1.2, 1.4 };     /* the program speeds up: open did nothing */
    for (int i = 0; i < 3; i++)
        feed_epoch(&f, rates[i], rates[i]);
    HPS_CHECK(f.t.step == HPS_TM_TRIAL_HOLD && !f.t.open, "a rising rate read as the bias paying");
    printf("drift: a rising rate keeps the bias closed\n");
}

/* Steps before an epoch's end change nothing; a new phase restarts the
 * trial but keeps its counts. */
static void case_timing(void)
{
    feed_t f;
    feed_start(&f);
    hps_tm_bias_trial_t before = f.t;
    HPS_CHECK(hps_tm_bias_trial_step(&f.t, f.now + E - 1, f.commits + 1000) == 0, "stepped before 10 ms");
    HPS_CHECK(f.t.step == before.step && f.t.start == before.start && f.t.commits0 == before.commits0,
              "an early step changed the trial");
    HPS_CHECK(feed_trial(&f, 1.0, 2.0), "open at 2x not kept");
    hps_tm_bias_trial_start(&f.t, f.now + 5, f.commits);
    HPS_CHECK(!f.t.open && f.t.step == HPS_TM_TRIAL_A && f.t.trials == 1 && f.t.kept == 1,
              "a restart: open %d step %u trials %llu", f.t.open, f.t.step, (unsigned long long)f.t.trials);
    printf("timing: no step before an epoch ends; a restart starts closed\n");
}

/* What the trial counts (hps_tm_work_total): commits, plus the iterations
 * of dynamic coarsened loops, whose k may change between the trial's
 * epochs (so commits alone would move with k); a fixed-k loop's commits
 * already move with its work, and add nothing more. */
static uint64_t g_work_cell;

static void work_iter(long i, void *arg)
{
    (void)i;
    (void)arg;
    hps_tm_write_u64(&g_work_cell, hps_tm_read_u64(&g_work_cell) + 1);
}

static void case_work(void)
{
    static hps_tm_coarsen_t site = HPS_TM_COARSEN_INIT;
    const long n = 100000;
    uint64_t w0 = hps_tm_work_total(), c0 = hps_tm_commits_total();
    hps_tm_for_dynamic(&site, 0, n, work_iter, NULL);
    uint64_t w1 = hps_tm_work_total(), c1 = hps_tm_commits_total();
    HPS_CHECK(c1 > c0 && w1 - w0 == (c1 - c0) + (uint64_t)n,
              "dynamic loop of %ld: work +%llu, commits +%llu (want commits + %ld)", n,
              (unsigned long long)(w1 - w0), (unsigned long long)(c1 - c0), n);
    hps_tm_for(0, n, 64, work_iter, NULL);
    uint64_t w2 = hps_tm_work_total(), c2 = hps_tm_commits_total();
    HPS_CHECK(c2 - c1 == (uint64_t)(n / 64 + (n % 64 != 0)) && w2 - w1 == c2 - c1,
              "static loop of %ld at k = 64: work +%llu, commits +%llu (want equal, %ld)", n,
              (unsigned long long)(w2 - w1), (unsigned long long)(c2 - c1), n / 64 + 1);
    HPS_CHECK(g_work_cell == 2 * (uint64_t)n, "the cell is %llu after 2 x %ld iterations",
              (unsigned long long)g_work_cell, n);
}

static const hps_test_case_t cases[] = {
    { "pays", .run = case_pays },
    { "loses", .run = case_loses },
    { "tie", .run = case_tie },
    { "drift", .run = case_drift },
    { "timing", .run = case_timing },
    { "work", .run = case_work },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("tm_trial", cases, 30, 0);

int main(int argc, char **argv)
{
    return hps_test_main(&suite, argc, argv);
}
