/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/adaptive.h - the default lock: spin a little, then park.
 *
 * `locked` is 0 or 1; `parked` counts threads that are (about to be) asleep
 * in the kernel (futex).  A contended locker spins for a per-lock learned
 * number of rounds (the estimate moves 1/8 of the way to what the last
 * acquisition needed, as glibc's adaptive mutex does), then parks.
 *
 * Unlock is a plain store followed by a read of `parked`: no atomic
 * read-modify-write, which is what makes it cheaper than glibc's.  That read
 * may pass the store on x86 (store-load reordering); the parking protocol in
 * src/lock/adaptive.c makes that safe: sleeps stay short until a parker has
 * issued membarrier(PRIVATE_EXPEDITED) for the current episode of parking,
 * after which no unlock can miss the parkers.  (See docs/locks.md.)
 *
 * Like glibc's mutex, the lock lets a running thread take it again while a
 * woken waiter is still on its way to a CPU: `waking` keeps unlock from
 * waking a second thread (one system call per unlock) until the first has
 * run.  When threads outnumber cores this is what keeps throughput up.
 * (One race around that flag can still lose a wake-up; a parker's long
 * sleep ends after 50 ms anyway, so it costs at most that.)
 * Fast paths: lock = XCHG + branch, unlock = store + load + branch.
 */
#ifndef HPSYNC_LOCK_ADAPTIVE_H
#define HPSYNC_LOCK_ADAPTIVE_H

#include <stdbool.h>
#include <time.h>
#include "hpsync/pr.h"

HPS_EXTERN_C_BEGIN

typedef struct hps_adaptive {
    hps_au32 locked;
    hps_au32 parked;                    /* parkers | HPS_ADAPTIVE_FENCED */
    hps_au32 waking;                    /* fork tag: a woken thread has not run yet */
    hps_au16 spin_est;                  /* learned spin rounds (a hint only) */
    uint16_t reserved;
} hps_adaptive_t;
#define HPS_ADAPTIVE_INITIALIZER \
    { HPS_ATOMIC_INIT(0), HPS_ATOMIC_INIT(0), HPS_ATOMIC_INIT(0), HPS_ATOMIC_INIT(0), 0 }
#define HPS_ADAPTIVE_FENCED 0x80000000u

/* abstime NULL: wait without limit (hps_adaptive_lock's slow path). */
int  hps_adaptive_lock_slow(hps_adaptive_t *l, clockid_t clock, const struct timespec *abstime);
/* The timed slow path: EINVAL for a NULL or malformed deadline or another
 * clock than CLOCK_REALTIME / CLOCK_MONOTONIC, as every algorithm. */
int  hps_adaptive_timedlock_slow(hps_adaptive_t *l, clockid_t clock, const struct timespec *abstime);
void hps_adaptive_wake(hps_adaptive_t *l);
/* Internal, exported for tests (src/lock/adaptive.c): the wake-up's undo
 * when it found nobody asleep, and how long a parker's "unbounded" sleep
 * lasts at most (50 ms), the backstop for the wake-up the undo can miss. */
void hps_adaptive_unclaim_(hps_adaptive_t *l);
extern long hps_adaptive_backstop_ns;

HPS_INLINE void hps_adaptive_init(hps_adaptive_t *l)
{
    hps_store_relaxed(&l->locked, 0);
    hps_store_relaxed(&l->parked, 0);
    hps_store_relaxed(&l->waking, 0);
    hps_store_relaxed(&l->spin_est, 0);
    l->reserved = 0;
}

HPS_INLINE bool hps_adaptive_trylock(hps_adaptive_t *l)
{
    return hps_load_relaxed(&l->locked) == 0 && hps_xchg_acquire(&l->locked, 1) == 0;
}

HPS_INLINE void hps_adaptive_lock(hps_adaptive_t *l)
{
    /* XCHG rather than CMPXCHG: `locked` is only ever 0 or 1, so writing 1
     * over a 1 changes nothing, and XCHG needs no compare or retry. */
    if (hps_likely(hps_xchg_acquire(&l->locked, 1) == 0))
        return;
    (void)hps_adaptive_lock_slow(l, CLOCK_REALTIME, NULL);
}

HPS_INLINE int hps_adaptive_timedlock(hps_adaptive_t *l, clockid_t clock,
                                      const struct timespec *abstime)
{
    if (hps_likely(hps_xchg_acquire(&l->locked, 1) == 0))
        return 0;
    return hps_adaptive_timedlock_slow(l, clock, abstime);
}

HPS_INLINE void hps_adaptive_unlock(hps_adaptive_t *l)
{
    /* Release: publishes the critical section to the next owner. */
    hps_store_release(&l->locked, 0);
    /* Keep the compiler from hoisting the read above the store; the CPU's
     * own reordering is what the parker's membarrier takes care of. */
    hps_compiler_fence();
    if (hps_unlikely(hps_load_relaxed(&l->parked) != 0))
        hps_adaptive_wake(l);
}

HPS_INLINE bool hps_adaptive_is_locked(hps_adaptive_t *l) { return hps_load_relaxed(&l->locked) != 0; }

HPS_EXTERN_C_END

#endif
