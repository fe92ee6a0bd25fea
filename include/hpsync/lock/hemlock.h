/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/hemlock.h - Hemlock (Dice & Kogan, 2021), our CLH-family lock.
 *
 * The queue's only per-lock state is a tail pointer and its only per-thread
 * state is one word, `grant`, whatever number of locks a thread waits for or
 * holds.  A waiter spins on its predecessor's `grant` until it names this
 * lock, then clears it to acknowledge; a leaving head waits for that
 * acknowledgement only before it next queues or hands over (or exits), so
 * the round trip overlaps its critical section.  Headship passes when the
 * head takes the lock word (see queued.h).
 * Fast paths: lock = load + XCHG + branch, unlock = one store.
 */
#ifndef HPSYNC_LOCK_HEMLOCK_H
#define HPSYNC_LOCK_HEMLOCK_H

#include <stddef.h>
#include "hpsync/lock/queued.h"

HPS_EXTERN_C_BEGIN

struct hps_hemlock;
typedef struct hps_hem_thread {
    HPS_ATOMIC(struct hps_hemlock *) grant;
} __attribute__((aligned(HPS_CACHELINE))) hps_hem_thread_t;

typedef struct hps_hemlock {
    hps_qword_t q;
    HPS_ATOMIC(hps_hem_thread_t *) tail;
} hps_hemlock_t;
#define HPS_HEMLOCK_INITIALIZER { HPS_QWORD_INITIALIZER, HPS_ATOMIC_INIT(NULL) }

HPS_INLINE void hps_hemlock_init(hps_hemlock_t *l)
{
    hps_qword_init(&l->q);
    hps_store_relaxed(&l->tail, NULL);
}

HPS_QUEUED_LOCK_API(hemlock)

HPS_EXTERN_C_END

#endif
