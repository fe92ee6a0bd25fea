/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/ticket.h - ticket lock: strict FIFO, two 32-bit counters.
 *
 * A thread takes `next` with fetch-and-add and waits until `owner` equals its
 * ticket.  The waiting backs off in proportion to its distance from the head.
 * Fast paths: lock = XADD + load + branch, unlock = load + store.
 * A ticket cannot be given back, so the timed lock polls trylock rather than
 * joining the queue (see docs/locks.md).
 */
#ifndef HPSYNC_LOCK_TICKET_H
#define HPSYNC_LOCK_TICKET_H

#include <stdbool.h>
#include <time.h>
#include "hpsync/pr.h"

typedef struct hps_ticket { hps_au32 next; hps_au32 owner; } hps_ticket_t;
#define HPS_TICKET_INITIALIZER { 0, 0 }

void hps_ticket_lock_slow(hps_ticket_t *l, uint32_t ticket);
int  hps_ticket_timedlock(hps_ticket_t *l, clockid_t clock, const struct timespec *abstime);

HPS_INLINE void hps_ticket_init(hps_ticket_t *l)
{
    hps_store_relaxed(&l->next, 0);
    hps_store_relaxed(&l->owner, 0);
}

HPS_INLINE void hps_ticket_lock(hps_ticket_t *l)
{
    /* Relaxed: the acquire is the load of `owner` that grants the ticket. */
    uint32_t t = hps_faa_relaxed(&l->next, 1);
    if (hps_likely(hps_load_acquire(&l->owner) == t))
        return;
    hps_ticket_lock_slow(l, t);
}

HPS_INLINE bool hps_ticket_trylock(hps_ticket_t *l)
{
    /*
     * If owner == next and our CAS moves next from that value, no ticket
     * between the two reads was issued, so owner cannot have moved either:
     * we hold the lock.  Acquire on the CAS orders the critical section.
     */
    uint32_t o = hps_load_acquire(&l->owner);
    uint32_t n = hps_load_relaxed(&l->next);
    return o == n && hps_cas_acquire(&l->next, &n, n + 1);
}

HPS_INLINE void hps_ticket_unlock(hps_ticket_t *l)
{
    uint32_t o = hps_load_relaxed(&l->owner);
    /* Unlocking a free ticket lock would break it for good; ignore it. */
    if (hps_unlikely(o == hps_load_relaxed(&l->next)))
        return;
    /* Release: publishes the critical section to the next ticket holder. */
    hps_store_release(&l->owner, o + 1);
}

HPS_INLINE bool hps_ticket_is_locked(hps_ticket_t *l)
{
    return hps_load_relaxed(&l->owner) != hps_load_relaxed(&l->next);
}

#endif
