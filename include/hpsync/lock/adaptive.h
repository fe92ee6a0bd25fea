/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/adaptive.h - the default lock: spin a little, then park.
 *
 * word: 0 free, 1 held, 2 held and some thread may be parked in the kernel
 * (futex).  A contended locker spins for a per-lock learned number of rounds
 * (the estimate moves 1/8 of the way to what the last acquisition needed, as
 * glibc's adaptive mutex does), then marks the word 2 and parks.  Unlock only
 * enters the kernel when the word says someone may be parked.
 * Fast paths: lock = CAS + branch, unlock = XCHG + branch.
 */
#ifndef HPSYNC_LOCK_ADAPTIVE_H
#define HPSYNC_LOCK_ADAPTIVE_H

#include <stdbool.h>
#include <time.h>
#include "hpsync/pr.h"

typedef struct hps_adaptive {
    hps_au32 word;
    hps_au32 spin_est;                  /* learned spin rounds (a hint only) */
} hps_adaptive_t;
#define HPS_ADAPTIVE_INITIALIZER { 0, 0 }

int  hps_adaptive_lock_slow(hps_adaptive_t *l, clockid_t clock, const struct timespec *abstime);
void hps_adaptive_wake(hps_adaptive_t *l);

HPS_INLINE void hps_adaptive_init(hps_adaptive_t *l)
{
    hps_store_relaxed(&l->word, 0);
    hps_store_relaxed(&l->spin_est, 0);
}

HPS_INLINE bool hps_adaptive_trylock(hps_adaptive_t *l)
{
    uint32_t e = 0;
    return hps_cas_acquire(&l->word, &e, 1);
}

HPS_INLINE void hps_adaptive_lock(hps_adaptive_t *l)
{
    uint32_t e = 0;
    if (hps_likely(hps_cas_acquire(&l->word, &e, 1)))
        return;
    (void)hps_adaptive_lock_slow(l, CLOCK_REALTIME, NULL);
}

HPS_INLINE int hps_adaptive_timedlock(hps_adaptive_t *l, clockid_t clock,
                                      const struct timespec *abstime)
{
    uint32_t e = 0;
    if (hps_likely(hps_cas_acquire(&l->word, &e, 1)))
        return 0;
    return hps_adaptive_lock_slow(l, clock, abstime);
}

HPS_INLINE void hps_adaptive_unlock(hps_adaptive_t *l)
{
    /* Release: publishes the critical section; 2 means a parked waiter. */
    if (hps_unlikely(hps_xchg_release(&l->word, 0) == 2))
        hps_adaptive_wake(l);
}

HPS_INLINE bool hps_adaptive_is_locked(hps_adaptive_t *l) { return hps_load_relaxed(&l->word) != 0; }

#endif
