/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/hemlock.h - Hemlock (Dice & Kogan, 2021): a CLH-like queue lock
 * whose only per-lock state is a tail pointer and whose only per-thread state
 * is one word, `grant`, however many locks the thread holds.
 *
 * A waiter spins on its predecessor's `grant` until it names this lock, then
 * clears it to acknowledge; the releaser waits for that acknowledgement so
 * its `grant` word is free for the next lock it releases.  Unlock must run on
 * the thread that locked (POSIX-correct programs do).
 * Fast paths: lock = TLS read + XCHG, unlock = TLS read + CAS.
 */
#ifndef HPSYNC_LOCK_HEMLOCK_H
#define HPSYNC_LOCK_HEMLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include "hpsync/pr.h"

struct hps_hemlock;
typedef struct hps_hem_thread {
    _Atomic(struct hps_hemlock *) grant;
} __attribute__((aligned(HPS_CACHELINE))) hps_hem_thread_t;

typedef struct hps_hemlock { _Atomic(hps_hem_thread_t *) tail; } hps_hemlock_t;
#define HPS_HEMLOCK_INITIALIZER { NULL }

/* The calling thread's record (initial-exec TLS inside libhpsync). */
hps_hem_thread_t *hps_hem_self(void);
void hps_hemlock_lock_slow(hps_hemlock_t *l, hps_hem_thread_t *pred);
void hps_hemlock_unlock_slow(hps_hemlock_t *l, hps_hem_thread_t *self);
int  hps_hemlock_timedlock(hps_hemlock_t *l, clockid_t clock, const struct timespec *abstime);

HPS_INLINE void hps_hemlock_init(hps_hemlock_t *l) { hps_store_relaxed(&l->tail, NULL); }

HPS_INLINE bool hps_hemlock_trylock(hps_hemlock_t *l)
{
    hps_hem_thread_t *e = NULL;
    return hps_load_relaxed(&l->tail) == NULL &&
           hps_cas_acquire(&l->tail, &e, hps_hem_self());
}

HPS_INLINE void hps_hemlock_lock(hps_hemlock_t *l)
{
    /* acq_rel: acquire the lock; release our (cleared) grant word to the successor. */
    hps_hem_thread_t *pred = hps_xchg_acq_rel(&l->tail, hps_hem_self());
    if (hps_likely(pred == NULL))
        return;
    hps_hemlock_lock_slow(l, pred);
}

HPS_INLINE void hps_hemlock_unlock(hps_hemlock_t *l)
{
    hps_hem_thread_t *self = hps_hem_self(), *e = self;
    if (hps_likely(hps_cas_release(&l->tail, &e, NULL)))
        return;
    hps_hemlock_unlock_slow(l, self);
}

HPS_INLINE bool hps_hemlock_is_locked(hps_hemlock_t *l) { return hps_load_relaxed(&l->tail) != NULL; }

#endif
