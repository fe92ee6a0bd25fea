// SPDX-License-Identifier: MIT
/*
 * Lock elision over any hpsync lock: the transaction reads the lock word
 * (so a real acquisition by anyone aborts it) and the policy decides what
 * to do when speculation fails.  See hpsync/elide.h and docs/elision.md.
 */
#include "hpsync/elide.h"
#include "backend.h"

#define COUNT(stats, field) do { if (stats) hps_faa_relaxed(&(stats)->field, 1); } while (0)

/* One counted attempt: HPS_TX_STARTED, or the abort status (counted). */
static unsigned attempt_elided(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_stats_t *stats)
{
    COUNT(stats, attempts);
    unsigned status = hps_elide_ops->begin(s, a);
    if (status != HPS_TX_STARTED && stats)
        hps_faa_relaxed(&stats->aborts[hps_elide_cause(status)], 1);
    return status;
}

/* Wait, outside any transaction, for the lock to look free; give up (0)
 * when the wait reaches the yielding phase: the holder is slow, so queueing
 * for the lock beats waiting to speculate. */
static int wait_until_free(hps_lock_state_t *s, hps_lock_algo_t a)
{
    hps_wait_t w = HPS_WAIT_INIT;
    while (hps_lockstate_is_locked(s, a)) {
        if (w.n >= hps_wait_spin_limit)
            return 0;
        hps_wait_step(&w);
    }
    return 1;
}

hps_elide_action_t hps_elide_next(hps_lock_state_t *s, hps_lock_algo_t a, unsigned status,
                                  unsigned attempt, hps_elide_stats_t *stats)
{
    hps_elide_action_t act = hps_elide_decide(&hps_elide_cfg, status, attempt);
    if (act == HPS_ELIDE_WAIT_RETRY) {
        COUNT(stats, busy_waits);
        act = wait_until_free(s, a) ? HPS_ELIDE_RETRY : HPS_ELIDE_LOCK;
    }
    return act;
}

HPS_EXPORT int hps_elide_enter(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_state_t *st,
                               hps_elide_stats_t *stats)
{
    /*
     * Nested inside a transaction: always elide.  With RTM the inner begin
     * only deepens the nesting, and any abort unwinds to the outermost
     * begin, whose policy decides; taking the lock for real here would
     * write it transactionally and gain nothing.
     */
    const hps_elide_ops_t *ops = hps_elide_ops;
    int nested = ops->test();
    /* Shared counters written inside a transaction would make concurrent
     * transactions conflict: nested sections are not counted. */
    if (nested && ops->speculative)
        stats = NULL;
    uint32_t v = hps_load_relaxed(&st->v);
    if (!nested && hps_elide_take_skip(&v)) {
        /* Relaxed: the state is a per-lock hint; a lost update is harmless. */
        hps_store_relaxed(&st->v, v);
        COUNT(stats, skips);
        return 0;
    }
    for (unsigned attempt = 0;; attempt++) {
        unsigned status = attempt_elided(s, a, stats);
        if (status == HPS_TX_STARTED)
            return 1;
        if (hps_elide_next(s, a, status, attempt, stats) == HPS_ELIDE_RETRY)
            continue;
        COUNT(stats, fallbacks);
        hps_store_relaxed(&st->v, hps_elide_after_fallback(&hps_elide_cfg, hps_load_relaxed(&st->v)));
        return 0;
    }
}

HPS_EXPORT int hps_elide_try_enter(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_stats_t *stats)
{
    /* A trylock inside a transaction would see the word free even when this
     * very transaction holds the lock elided, and answer 0 where POSIX wants
     * EBUSY: leave speculation and let the lock decide.  (Emulated sections
     * hold their locks for real, so there the real trylock answers right.) */
    hps_elide_ops->abort(HPS_ABORT_TRYLOCK);
    /* One attempt: a trylock must not wait, so no retries and no skipping;
     * a held lock comes back as a busy abort. */
    if (attempt_elided(s, a, stats) == HPS_TX_STARTED)
        return 1;
    COUNT(stats, fallbacks);
    return 0;
}

/* An elided section committed: count it, and reset the lock's failure
 * history (written only when there is one, to keep the line clean). */
static void committed(hps_elide_state_t *st, hps_elide_stats_t *stats)
{
    COUNT(stats, commits);
    uint32_t v = hps_load_relaxed(&st->v);
    if (v)
        hps_store_relaxed(&st->v, hps_elide_after_commit(v));
}

HPS_EXPORT void hps_elide_exit(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_state_t *st,
                               hps_elide_stats_t *stats)
{
    /* The backend knows whether s's section was elided (see rtm.c for
     * why RTM checks both the word and XTEST). */
    unsigned r = hps_elide_ops->end(s, a);
    if (r & HPS_ELIDE_END_COMMIT)
        committed(st, stats);
    if (r & HPS_ELIDE_END_RELEASE)
        hps_lockstate_unlock(s, a);
}

HPS_EXPORT void hps_elide_before_blocking(void)
{
    if (!hps_elide_active)
        return;
    /* With RTM the section re-runs with the lock held; the injected
     * backend's holds are real already and just stop counting as elided. */
    hps_elide_ops->abort(HPS_ABORT_COND);
}

HPS_EXPORT int hps_elide_in_section(void)
{
    return hps_elide_active && hps_elide_ops->test();
}
