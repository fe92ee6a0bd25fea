/* SPDX-License-Identifier: MIT */
/*
 * hpsync/elide.h - lock elision for any hpsync lock.
 *
 *   hps_lock_t l;            hps_lock_init(&l, HPS_LOCK_MCS);
 *   hps_elide_state_t st = HPS_ELIDE_STATE_INIT;     // one per lock
 *   hps_elide_lock(&l, &st);  ...  hps_elide_unlock(&l, &st);
 *
 * With Intel RTM usable (checked at run time through CPUID; an instruction
 * the CPU lacks is never executed), the critical section runs as a hardware
 * transaction that only reads the lock word, so threads whose sections do
 * not conflict run in parallel; when speculation fails, the policy (see
 * docs/elision.md) decides between retrying, waiting for a busy lock to be
 * released, and taking the lock.  Without RTM these calls are the plain lock
 * calls plus one predictable branch.
 *
 * Rules: unlock an elided lock on the thread that locked it; do not make
 * system calls inside (they abort the transaction: the section then re-runs
 * with the lock held, which is correct but slower).
 */
#ifndef HPSYNC_ELIDE_H
#define HPSYNC_ELIDE_H

#include "hpsync/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-lock adaptive state: skip count, consecutive failures, backoff. */
typedef struct hps_elide_state { hps_au32 v; } hps_elide_state_t;
#define HPS_ELIDE_STATE_INIT { HPS_ATOMIC_INIT(0) }

/* Abort causes, as counted in hps_elide_stats_t.aborts[]. */
enum {
    HPS_ELIDE_ABORT_CONFLICT,   /* data conflict (with or without RETRY) */
    HPS_ELIDE_ABORT_CAPACITY,   /* read/write set overflow */
    HPS_ELIDE_ABORT_BUSY,       /* the lock was held when the transaction began */
    HPS_ELIDE_ABORT_EXPLICIT,   /* XABORT with another code (condvar wait, trylock inside) */
    HPS_ELIDE_ABORT_OTHER,      /* interrupt, debug, nesting, unknown */
    HPS_ELIDE_NCAUSES
};

/* Optional per-lock counters (pass to the _ex calls). */
typedef struct hps_elide_stats {
    hps_au64 attempts;          /* transactions begun */
    hps_au64 commits;           /* critical sections that ran elided */
    hps_au64 aborts[HPS_ELIDE_NCAUSES];
    hps_au64 fallbacks;         /* acquisitions that gave up and took the lock */
    hps_au64 skips;             /* acquisitions that did not try (adaptive skipping) */
    hps_au64 busy_waits;        /* waits outside a transaction for a busy lock */
} hps_elide_stats_t;

/* 1 when elision is on in this process (a backend is usable). */
extern int hps_elide_active;
/* "rtm", "inject" or "off": what runs the transactions. */
const char *hps_elide_backend_name(void);
/* The process's restart count (HPSYNC_ELIDE_RETRIES, 0..100): how often a
 * transaction that aborted with the RETRY bit, or found the lock busy, is
 * begun again before the lock is taken.  Setting it overrides the setting
 * for every lock; call it before the threads that elide start (a study
 * sweeping the count, such as the ART workload's elide-rN variants). */
void hps_elide_set_retries(unsigned n);
unsigned hps_elide_retries(void);

/* Out-of-line paths; the *_slow lock calls return 1 when the section runs
 * elided, 0 when the caller must take the lock itself. */
int  hps_elide_enter(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_state_t *st,
                     hps_elide_stats_t *stats);
int  hps_elide_try_enter(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_stats_t *stats);
void hps_elide_exit(hps_lock_state_t *s, hps_lock_algo_t a, hps_elide_state_t *st,
                    hps_elide_stats_t *stats);

HPS_INLINE void hps_elide_lock_ex(hps_lock_t *l, hps_elide_state_t *st, hps_elide_stats_t *stats)
{
    if (hps_unlikely(hps_elide_active) &&
        hps_elide_enter(&l->u, (hps_lock_algo_t)l->algo, st, stats))
        return;
    hps_lock_lock(l);
}

HPS_INLINE void hps_elide_unlock_ex(hps_lock_t *l, hps_elide_state_t *st, hps_elide_stats_t *stats)
{
    if (hps_unlikely(hps_elide_active)) {
        hps_elide_exit(&l->u, (hps_lock_algo_t)l->algo, st, stats);
        return;
    }
    hps_lock_unlock(l);
}

/* 0 or EBUSY, like hps_lock_trylock. */
HPS_INLINE int hps_elide_trylock_ex(hps_lock_t *l, hps_elide_stats_t *stats)
{
    if (hps_unlikely(hps_elide_active) && hps_elide_try_enter(&l->u, (hps_lock_algo_t)l->algo, stats))
        return 0;
    return hps_lock_trylock(l);
}

HPS_INLINE void hps_elide_lock(hps_lock_t *l, hps_elide_state_t *st) { hps_elide_lock_ex(l, st, NULL); }
HPS_INLINE void hps_elide_unlock(hps_lock_t *l, hps_elide_state_t *st) { hps_elide_unlock_ex(l, st, NULL); }
HPS_INLINE int hps_elide_trylock(hps_lock_t *l) { return hps_elide_trylock_ex(l, NULL); }

/*
 * Leave speculation before an operation a transaction cannot contain (a
 * condition-variable wait, a system call): if the caller runs inside an
 * elided section, the transaction aborts and the section re-runs with the
 * lock really held; otherwise nothing happens.  The interposer calls this in
 * pthread_cond_wait.
 */
void hps_elide_before_blocking(void);
/* 1 if the calling thread is inside an elided section right now. */
int hps_elide_in_section(void);

#ifdef __cplusplus
}
#endif
#endif
