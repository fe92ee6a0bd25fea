/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/ttas.h - test-and-test-and-set lock with exponential backoff.
 *
 * One 32-bit word, 0 = free, 1 = held.  Unfair: a releasing thread can take
 * the lock straight back, which is what makes TTAS fast when threads
 * outnumber cores.  Fast paths: lock = XCHG + branch, unlock = one store.
 */
#ifndef HPSYNC_LOCK_TTAS_H
#define HPSYNC_LOCK_TTAS_H

#include <stdbool.h>
#include <time.h>
#include "hpsync/pr.h"
#include "hpsync/lock/queued.h"

HPS_EXTERN_C_BEGIN

typedef struct hps_ttas { hps_au32 word; } hps_ttas_t;
#define HPS_TTAS_INITIALIZER { HPS_ATOMIC_INIT(0) }

void hps_ttas_lock_slow(hps_ttas_t *l);
int  hps_ttas_timedlock(hps_ttas_t *l, clockid_t clock, const struct timespec *abstime);

HPS_INLINE void hps_ttas_init(hps_ttas_t *l) { hps_store_relaxed(&l->word, 0); }

HPS_INLINE bool hps_ttas_trylock(hps_ttas_t *l)
{
    /* Test before the XCHG so a failed trylock does not steal the line. */
    return hps_load_relaxed(&l->word) == 0 && hps_xchg_acquire(&l->word, 1) == 0;
}

HPS_INLINE void hps_ttas_lock(hps_ttas_t *l)
{
    if (hps_likely(hps_xchg_acquire(&l->word, 1) == 0))
        return;
    hps_ttas_lock_slow(l);
}

/* Release: the critical section's writes must be visible before the word. */
HPS_INLINE void hps_ttas_unlock(hps_ttas_t *l) { hps_store_release(&l->word, 0); }

HPS_INLINE bool hps_ttas_is_locked(hps_ttas_t *l) { return hps_load_relaxed(&l->word) != 0; }

HPS_EXTERN_C_END

#endif
