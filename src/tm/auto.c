// SPDX-License-Identifier: MIT
/*
 * auto: the backend that picks a backend, and keeps picking.
 *
 * A rule gives the starting point from the threads that use TM (T) and the
 * CPUs (C): solo (sgl without the lock) while T = 1, with or without RTM (a
 * thread alone runs on the bias with no atomic operation at all, while a
 * hardware transaction's begin and commit cost more than a whole small
 * section: 6x slower on the counter row of a 2-vCPU Xeon KVM guest); from
 * T = 2 hybrid where RTM speculates, else sgl when C < 4, norec for T <= 4,
 * stm beyond.  The rule is a guess: which backend wins depends on the
 * sections (read-set size, conflicts, allocation) as much as on T and C; on
 * the benchmark here the rule's sgl lost 40-50 % to stm on hash sets, and
 * hybrid lost to norec and sgl on small sections.  So with T >= 2 auto
 * measures: a trial scouts each candidate (sgl, norec, stm, and hybrid and
 * htm where RTM speculates; the rule's software pick first) for a quarter
 * window (a window is HPSYNC_TM_AUTO_TRIAL ms times the threads per CPU;
 * half that for a clear loser),
 * then runs the best scout and the runner-up, if that came within 25 % of
 * it, for a whole window each, and keeps the one that committed the most
 * sections per second.  (Until 2026-11-28 every candidate ran a whole
 * window unless it fell under half the best so far: at 8 threads on 2
 * CPUs, windows of 20 ms, a trial took 100 ms, and on a row of the
 * benchmark where one backend ran twice as fast as the rest auto lost 13 %
 * of a 200 ms run to it.)  It then holds that backend, and tries again when
 *   - T changes (a thread runs its first section, exits, stops running
 *     sections for 40 ms or starts again: core.c's sweep),
 *   - the abort ratio drifts far from what the winner showed in its trial
 *     (the input's conflict rate changed), checked every few windows,
 *   - the hold ends: 64 windows after a trial, doubling up to 1024 while
 *     the same backend keeps winning (a trial costs the time the losers
 *     run: about 2 windows in 66 at worst, less as holds grow).
 * Commits per second is the measure because it is what the program gets:
 * aborted work, validation, lock hand-offs and waits all show in it, on a
 * loaded machine too (the loser of a trial under load is still the one
 * that made less progress under that load).
 *
 * Every switch happens at a quiescent point: the core's gate drains all
 * sections (core.c, hps_tm_switch), so no section ever mixes backends.
 * Decisions are taken by whichever thread notices a window has ended, at
 * the begin of one of its sections (outside any section), under a mutex
 * taken with trylock: a thread never waits for the controller at begin.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "bias_trial.h"
#include "../prim/clock.h"

#define HPS_TM_AUTO_NOREC_MAX 4     /* rule: norec up to this many threads */
#define HPS_TM_AUTO_MIN_CPUS 4      /* rule: fewer CPUs, sgl from 2 threads */
#define HOLD_MIN 64                 /* windows held after a trial */
#define HOLD_MAX 1024               /* ... doubling to this while unchanged */
#define CHECK_WINDOWS 4             /* abort-ratio checks during a hold */
#define MIN_SECTIONS 64             /* a window measures at least this many */

enum { P_RULE, P_TRIAL, P_HOLD };

/* The candidates of a trial: the first three always, hybrid and htm where
 * RTM speculates.  htm too: on the Xeon guest of 2026-11-28 it
 * beat hybrid at two threads on most rows, by up to 2.7x under GCC TM
 * (hybrid's hardware writers all advance norec's sequence, one word every
 * writing transaction writes).  And while threads outnumber CPUs, norec and
 * stm once more with the bias open (bias.c): there whether the bias pays
 * depends on the program (bank 1.6x, hash sets down to 0.6x beside busy
 * processes), the others scout with it closed, and auto's verdict replaces
 * the bias's own trial, which needs 30 ms, longer than a scout. */
enum { C_SGL, C_NOREC, C_STM, C_HYBRID, C_HTM, C_NOREC_BIAS, C_STM_BIAS, NCAND };
static const hps_tm_ops_t *const k_cand[NCAND] = { &hps_tm_sgl_ops, &hps_tm_norec_ops, &hps_tm_stm_ops,
                                                   &hps_tm_hybrid_ops, &hps_tm_htm_ops,
                                                   &hps_tm_norec_ops, &hps_tm_stm_ops };
static const char *const k_cand_name[NCAND] = { "sgl", "norec", "stm", "hybrid", "htm",
                                                "norec+bias", "stm+bias" };

static uint32_t g_cpus, g_hybrid;
static uint64_t g_window;           /* ns; 0: the rule alone */
static uint64_t g_win;              /* the present trial's window: g_window x threads per CPU */
/* Before this time (ns) a tick returns at once: one load and a compare. */
static hps_au64 g_next;

static struct {
    pthread_mutex_t mu;
    int phase;
    uint32_t threads;               /* T the present trial or hold is for */
    int set[NCAND], nset;           /* trial: its candidates */
    int crowded;                    /* trial or hold: threads outnumber CPUs, auto says the bias */
    int order[NCAND], step, n;      /* trial: candidates in order, the one running, how many */
    int finals;                     /* trial: 0 scouting, 1 the finalists' whole windows */
    int settling;                   /* trial: the first window has not started yet */
    int banned;                     /* trial: crowded, but no biased candidate (ban_left) */
    uint64_t t0, c0, a0;            /* the window's start: time, commits, aborts */
    double rate[NCAND], ar[NCAND];  /* trial: commits/s and abort ratio */
    int winner, last_winner;
    double ref_ar;                  /* the winner's abort ratio in its trial */
    double closed_rate;             /* the best closed candidate's commits/s in that trial */
    uint64_t hold, hold_end;        /* windows held; when the hold ends */
    uint64_t trials, switches, drifts;
    /* A biased winner whose hold fell under the best closed candidate's trial rate: the
     * next `ban` trials (1, doubling to 16 while it recurs) go without
     * biased candidates; `ban_left` of them remain. */
    uint32_t ban, ban_left;
    uint64_t falls;
    char why[200];
    char measured[200];             /* the last finished trial's why */
    /* Time each backend ran (solo, sgl, norec, stm, hybrid, htm), for the summary:
     * the backend at exit is often solo again, not the one that did the work. */
    uint64_t since, ran_ns[6];
} g = { .mu = PTHREAD_MUTEX_INITIALIZER, .last_winner = -1 };

static const hps_tm_ops_t *const k_all[6] = {
    &hps_tm_solo_ops, &hps_tm_sgl_ops, &hps_tm_norec_ops, &hps_tm_stm_ops, &hps_tm_hybrid_ops, &hps_tm_htm_ops,
};

static void account(const hps_tm_ops_t *o, uint64_t now)
{
    for (int i = 0; i < 6; i++)
        if (k_all[i] == o)
            g.ran_ns[i] += now - g.since;
    g.since = now;
}

/* ---- the rule ---------------------------------------------------------------- */

/* The rule without hardware. */
static const hps_tm_ops_t *rule_sw(uint32_t active, const char **why)
{
    if (active <= 1) {
        *why = "auto: one thread uses TM (sgl without the lock)";
        return &hps_tm_solo_ops;
    }
    if (g_cpus < HPS_TM_AUTO_MIN_CPUS) {
        *why = "auto: fewer than 4 CPUs";
        return &hps_tm_sgl_ops;
    }
    if (active <= HPS_TM_AUTO_NOREC_MAX) {
        *why = "auto: 2 to 4 threads use TM";
        return &hps_tm_norec_ops;
    }
    *why = "auto: more than 4 threads use TM";
    return &hps_tm_stm_ops;
}

static const hps_tm_ops_t *rule(uint32_t active, const char **why)
{
    if (active >= 2 && g_hybrid) {
        *why = "auto: hybrid from 2 threads when RTM is usable";
        return &hps_tm_hybrid_ops;
    }
    return rule_sw(active, why);
}

const hps_tm_ops_t *hps_tm_auto_init(uint32_t cpus, uint32_t trial_ms, int hybrid)
{
    const char *why;
    g_cpus = cpus;
    g_hybrid = (uint32_t)hybrid;
    g_window = (uint64_t)trial_ms * 1000000u;
    const hps_tm_ops_t *o = rule(0, &why);
    snprintf(g.why, sizeof g.why, "%s", why);
    g.since = hps_mono_ns();
    return o;
}

/* ---- measuring ---------------------------------------------------------------- */

/* Commits and aborts of the live threads.  Their counters are read while
 * they run (each word by itself is never torn on the machines we build for);
 * a trial restarts whenever a thread comes or goes, so exited threads'
 * counts never enter a window. */
static void counts(uint64_t *c, uint64_t *a)
{
    uint64_t sc = 0, sa = 0;
    uint32_t n = hps_tm_desc_count();
    for (uint32_t i = 0; i < n; i++) {
        hps_tm_desc_t *d = hps_tm_desc_at(i);
        if (!hps_load_relaxed(&d->owner))
            continue;
        sc += hps_plain_load_relaxed(&d->st.commits);
        sa += hps_plain_load_relaxed(&d->st.aborts);
    }
    *c = sc;
    *a = sa;
}

static void window_start(uint64_t now)
{
    g.t0 = now;
    counts(&g.c0, &g.a0);
}

static int index_of(const hps_tm_ops_t *o)
{
    for (int i = 0; i < NCAND; i++)
        if (k_cand[i] == o)
            return i;
    return C_SGL;
}

static void switch_ops(const hps_tm_desc_t *self, const hps_tm_ops_t *o, uint32_t say)
{
    const hps_tm_ops_t *was = hps_tm_ops_now();
    if (o != was) {
        account(was, hps_mono_ns());
        hps_tm_switch(self, o);
        g.switches++;
    }
    hps_tm_bias_auto_say(self, say);
}

/* Candidate i runs from now: its backend, and while threads outnumber CPUs
 * the bias open or closed with it. */
static void switch_to(const hps_tm_desc_t *self, int i)
{
    switch_ops(self, k_cand[i], !g.crowded ? HPS_TM_BIAS_SAY_NONE
                                : i == C_NOREC_BIAS || i == C_STM_BIAS ? HPS_TM_BIAS_SAY_OPEN
                                                                       : HPS_TM_BIAS_SAY_CLOSED);
}

/* A trial for the present thread count: candidate `first` (the rule's
 * pick, or the last winner) runs first, so a trial that changes nothing
 * costs no switch.  With `settle` (the thread count just changed) its
 * window starts an eighth of a window later: threads released together
 * (a benchmark's start, a parallel region) first stampede, and on the
 * counter row at 8 threads on 2 CPUs sgl's first scout then measured
 * 2.1-5.2e7 commits/s, against 4.9e7 held, and lost its place to norec. */
static void trial_start(const hps_tm_desc_t *self, int first, uint64_t now, int settle)
{
    g.nset = 0;
    g.set[g.nset++] = C_SGL;
    g.set[g.nset++] = C_NOREC;
    g.set[g.nset++] = C_STM;
    if (g_hybrid) {
        g.set[g.nset++] = C_HYBRID;
        g.set[g.nset++] = C_HTM;
    }
    /* One biased candidate, scouted last: the better of norec and stm as
     * they scouted closed (each costs a scout, 2 % of a 200 ms run at 8
     * threads; which of the two gains more from the bias was the better
     * closed one on every row measured) -- unless a biased winner runs first. */
    int biased = first == C_NOREC_BIAS || first == C_STM_BIAS;
    /* The bias's own test (the process's CPUs), not auto's count, which
     * HPSYNC_TM_AUTO_CPUS may override: the bias follows auto's say only
     * while that test holds. */
    g.crowded = hps_tm_crowded() && hps_tm_bias_enabled();
    g.banned = g.crowded && g.ban_left > 0;
    if (g.banned)
        g.ban_left--;
    if (g.crowded && !g.banned)
        g.set[g.nset++] = biased ? first : C_NOREC_BIAS;   /* the latter settled at its turn */
    else if (biased)
        first = first == C_NOREC_BIAS ? C_NOREC : C_STM;   /* not crowded, or banned */
    int k = 0;
    g.order[k++] = first;
    for (int j = 0; j < g.nset; j++)
        if (g.set[j] != first)
            g.order[k++] = g.set[j];
    /* With more threads than CPUs each thread runs in time slices of a few
     * ms, and a window must span several of them to measure the backend
     * rather than the scheduler (a preempted sgl holder stalls everyone). */
    uint32_t per_cpu = g_cpus ? (g.threads + g_cpus - 1) / g_cpus : 1;
    g_win = g_window * (per_cpu > 1 ? per_cpu : 1);
    g.phase = P_TRIAL;
    g.step = 0;
    g.n = g.nset;
    g.finals = 0;
    g.trials++;
    snprintf(g.why, sizeof g.why, "auto: measuring at %u threads (trial %llu)", g.threads,
             (unsigned long long)g.trials);
    switch_to(self, g.order[0]);
    g.settling = settle;
    window_start(hps_mono_ns());
    hps_store_relaxed(&g_next, now + (settle ? g_win / 8 : g_win / 4));
}

/* After the scouts: 1 when finals follow (the best scout and a runner-up
 * within 25 % of it, the one running now first, to save a switch).  A
 * biased best scout always goes to the finals: the bias's gain comes in
 * bursts (one thread runs alone until it is revoked, and a revocation that
 * waited a time slice closes it for 10 ms), so a quarter window can catch
 * only the burst: on the counter row at 8 threads on 2 CPUs norec+bias
 * scouted 0.6-1.5e8 commits/s and then held 4.5e7, under sgl's 4.9e7. */
static int finals_start(const hps_tm_desc_t *self)
{
    int b = -1, r = -1;
    for (int k = 0; k < g.n; k++) {
        int i = g.order[k];
        if (b < 0 || g.rate[i] > g.rate[b]) {
            r = b;
            b = i;
        } else if (r < 0 || g.rate[i] > g.rate[r]) {
            r = i;
        }
    }
    if (r < 0 || (g.rate[r] < 0.75 * g.rate[b] && b != C_NOREC_BIAS && b != C_STM_BIAS))
        return 0;
    int running = g.order[g.n - 1];
    g.order[0] = r == running ? r : b;
    g.order[1] = r == running ? b : r;
    g.n = 2;
    g.step = 0;
    g.finals = 1;
    switch_to(self, g.order[0]);
    uint64_t t = hps_mono_ns();
    window_start(t);
    hps_store_relaxed(&g_next, t + g_win);
    return 1;
}

static void hold_start(uint64_t now)
{
    g.phase = P_HOLD;
    g.hold_end = now + g.hold * g_win;
    window_start(now);
    hps_store_relaxed(&g_next, now + CHECK_WINDOWS * g_win);
}

static void trial_end(const hps_tm_desc_t *self, uint64_t now)
{
    /* Every candidate was scouted this trial; the finalists' rates are
     * their whole windows'. */
    int best = g.set[0], closed = -1;
    for (int j = 1; j < g.nset; j++)
        if (g.rate[g.set[j]] > g.rate[best])
            best = g.set[j];
    for (int j = 0; j < g.nset; j++)
        if (g.set[j] != C_NOREC_BIAS && g.set[j] != C_STM_BIAS && (closed < 0 || g.rate[g.set[j]] > g.rate[closed]))
            closed = g.set[j];
    /* The bias must beat the best closed candidate by 10 %, as in its own
     * trial (bias_trial.c): its gain is the noisiest (bursts, stalls). */
    if ((best == C_NOREC_BIAS || best == C_STM_BIAS) && closed >= 0 &&
        g.rate[best] < HPS_TM_TRIAL_GAIN * g.rate[closed])
        best = closed;
    if (best == g.last_winner)
        g.hold = g.hold * 2 < HOLD_MAX ? g.hold * 2 : HOLD_MAX;
    else
        g.hold = HOLD_MIN;
    g.last_winner = g.winner = best;
    g.ref_ar = g.ar[best];
    g.closed_rate = closed >= 0 ? g.rate[closed] : 0;
    int n = snprintf(g.why, sizeof g.why, "auto: measured at %u threads, commits/s", g.threads);
    for (int j = 0; j < g.nset && n > 0 && (size_t)n < sizeof g.why; j++)
        n += snprintf(g.why + n, sizeof g.why - (size_t)n, "%s %s %.3g", j ? "," : "",
                      k_cand_name[g.set[j]], g.rate[g.set[j]]);
    if (n > 0 && (size_t)n < sizeof g.why)
        snprintf(g.why + n, sizeof g.why - (size_t)n, " (trial %llu, %llu switches%s)",
                 (unsigned long long)g.trials,
                 (unsigned long long)g.switches + (k_cand[best] != hps_tm_ops_now()),
                 g.banned ? "; the bias not tried: a biased winner fell short" : "");
    memcpy(g.measured, g.why, sizeof g.measured);
    switch_to(self, best);
    hold_start(hps_mono_ns());
}

/* The abort ratio moved far from the winner's in its trial: the sections'
 * conflicts changed, and another backend may now win. */
static int drifted(double ar)
{
    double d = ar - g.ref_ar;
    return (d > 0.2 && ar > 2 * g.ref_ar) || (d < -0.2 && ar < g.ref_ar / 2);
}

static void step(const hps_tm_desc_t *self, uint64_t now)
{
    if (g.settling) {
        g.settling = 0;
        window_start(now);
        hps_store_relaxed(&g_next, now + g_win / 4);
        return;
    }
    uint64_t c, a;
    counts(&c, &a);
    uint64_t dc = c - g.c0, da = a - g.a0;
    if (dc + da < MIN_SECTIONS) {
        /* Too few sections to judge (slow sections, or threads asleep). */
        hps_store_relaxed(&g_next, now + g_win);
        return;
    }
    double ar = (double)da / (double)(dc + da);
    if (g.phase == P_TRIAL) {
        int i = g.order[g.step];
        double rate = (double)dc * 1e9 / (double)(now - g.t0);
        if (!g.finals && g.step > 0 && now - g.t0 < g_win / 4) {
            /* A scout after the first is looked at halfway, and cut there
             * if it runs at under half the best scout so far: a clear
             * loser's time is what a trial costs. */
            double best = 0;
            for (int k = 0; k < g.step; k++)
                best = g.rate[g.order[k]] > best ? g.rate[g.order[k]] : best;
            if (rate >= best / 2) {
                hps_store_relaxed(&g_next, g.t0 + g_win / 4);
                return;
            }
        }
        g.rate[i] = rate;
        g.ar[i] = ar;
        if (++g.step < g.n) {
            int *next = &g.order[g.step];
            if (!g.finals && (*next == C_NOREC_BIAS || *next == C_STM_BIAS))
                *next = g.set[g.nset - 1] = g.rate[C_STM] > g.rate[C_NOREC] ? C_STM_BIAS : C_NOREC_BIAS;
            switch_to(self, *next);
            uint64_t t = hps_mono_ns();
            window_start(t);
            /* A later scout is first looked at halfway (above). */
            hps_store_relaxed(&g_next, t + (g.finals ? g_win : g_win / 8));
        } else if (g.finals || !finals_start(self)) {
            trial_end(self, now);
        }
        return;
    }
    /* P_HOLD */
    int biased = g.winner == C_NOREC_BIAS || g.winner == C_STM_BIAS;
    if (biased && (double)dc * 1e9 / (double)(now - g.t0) < g.closed_rate) {
        /* The bias's gain comes in bursts, and a revocation that waits a
         * time slice closes it for 10 ms, doubling: a trial's windows can
         * catch a burst that the hold does not see again.  Its hold must
         * beat what the best closed candidate made in the trial (3/4 of its
         * own trial rate, tried first, banned it on bank at 8 threads where
         * it held 41 M against a finals window of 52-57 M and sgl's 35 M). */
        g.falls++;
        g.ban = g.ban ? (g.ban * 2 < 16 ? g.ban * 2 : 16) : 1;
        g.ban_left = g.ban;
        g.last_winner = -1;
        trial_start(self, g.winner == C_NOREC_BIAS ? C_NOREC : C_STM, now, 0);
    } else if (now >= g.hold_end) {
        if (biased)
            g.ban = 0;               /* it held up a whole hold */
        trial_start(self, g.winner, now, 0);
    } else if (drifted(ar)) {
        g.drifts++;
        g.last_winner = -1;          /* a fresh start: the hold does not grow */
        trial_start(self, g.winner, now, 0);
    } else {
        window_start(now);
        hps_store_relaxed(&g_next, now + CHECK_WINDOWS * g_win);
    }
}

void hps_tm_auto_tick(hps_tm_desc_t *d)
{
    uint64_t next = hps_load_relaxed(&g_next);
    if (next == UINT64_MAX)
        return;                      /* the rule alone: no clock to read */
    uint64_t now = hps_mono_ns();
    if (now < next || pthread_mutex_trylock(&g.mu) != 0)
        return;
    if ((g.phase == P_TRIAL || g.phase == P_HOLD) && now >= hps_load_relaxed(&g_next))
        step(d, now);
    pthread_mutex_unlock(&g.mu);
}

/* ---- thread count --------------------------------------------------------------- */

void hps_tm_auto_threads(const hps_tm_desc_t *self)
{
    pthread_mutex_lock(&g.mu);
    uint32_t active = hps_tm_active_threads();
    const char *why;
    const hps_tm_ops_t *want = rule(active, &why);
    if (active == g.threads && g.phase != P_RULE) {
        pthread_mutex_unlock(&g.mu);
        return;
    }
    g.threads = active;
    if (active >= 2 && g_window) {
        /* A new thread count's trial does not begin with hybrid, the rule's
         * pick with RTM: the first scout is never cut short, and a hardware
         * section's fixed cost made hybrid the slowest backend on most rows
         * of the Xeon guest of 2026-11-28 (auto 0.83x the best on
         * hashset-50 at 8 threads while its trials, each candidate then a
         * whole window, began with it).  A hold's winner, hybrid included,
         * does begin its next trial. */
        const char *sw;
        trial_start(self, index_of(want == &hps_tm_hybrid_ops ? rule_sw(active, &sw) : want), hps_mono_ns(), 1);
    } else {
        g.phase = P_RULE;
        g.crowded = 0;
        hps_store_relaxed(&g_next, UINT64_MAX);
        snprintf(g.why, sizeof g.why, "%s", why);
        switch_ops(self, want, HPS_TM_BIAS_SAY_NONE);
    }
    pthread_mutex_unlock(&g.mu);
}

/* fork(): the child has one thread; a controller that was mid-decision in
 * another thread of the parent is gone with it. */
void hps_tm_auto_fork_child(void)
{
    pthread_mutex_init(&g.mu, NULL);
    g.phase = P_RULE;
    g.threads = 0;
    g.crowded = 0;
    g.ban = g.ban_left = 0;
    hps_store_relaxed(&g_next, UINT64_MAX);
}

/* At exit (the statistics summary): the threads are done. */
const char *hps_tm_auto_why(void)
{
    return g.why;
}

void hps_tm_auto_summary(FILE *f)
{
    pthread_mutex_lock(&g.mu);
    account(hps_tm_ops_now(), hps_mono_ns());
    fprintf(f, "hpsync tm: auto ran");
    for (int i = 0; i < 6; i++)
        if (g.ran_ns[i])
            fprintf(f, " %s %.1f ms", k_all[i]->name, (double)g.ran_ns[i] / 1e6);
    fprintf(f, "; %llu trials, %llu switches, %llu on a changed abort ratio", (unsigned long long)g.trials,
            (unsigned long long)g.switches, (unsigned long long)g.drifts);
    if (g.falls)
        fprintf(f, ", %llu on a biased winner that fell short", (unsigned long long)g.falls);
    fputc('\n', f);
    if (g.measured[0])
        fprintf(f, "hpsync tm: auto's last trial: %s\n", g.measured + 6);
    pthread_mutex_unlock(&g.mu);
}

size_t hps_tm_auto_reason(char *buf, size_t n)
{
    pthread_mutex_lock(&g.mu);
    int r = snprintf(buf, n, "%s", g.why);
    pthread_mutex_unlock(&g.mu);
    return r < 0 ? 0 : (size_t)r;
}
