/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/mcs.h - MCS queue lock, in the "K42" form.
 *
 * Waiters queue up and each spins on its own node, so a release touches one
 * waiter's cache line.  The K42 form lets the lock itself stand in for the
 * holder's queue node: a waiter's node lives on its own stack only while it
 * waits, so a thread needs no node per held lock (any number of MCS locks can
 * be held at once, nodes cost O(threads)), and the lock is two pointers that
 * start out zero.  Fast paths: lock = CAS, unlock = load + CAS.
 *
 * `next` must stay the first member of both structs: a waiter that finds the
 * lock itself at the tail links behind it through that field.
 */
#ifndef HPSYNC_LOCK_MCS_H
#define HPSYNC_LOCK_MCS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include "hpsync/pr.h"

typedef struct hps_mcs_node {
    _Atomic(struct hps_mcs_node *) next;
    hps_au32 wait;                      /* 1 while queued, 0 when granted */
} hps_mcs_node_t;

typedef struct hps_mcs {
    _Atomic(hps_mcs_node_t *) next;     /* the holder's successor */
    _Atomic(hps_mcs_node_t *) tail;     /* NULL free, (node *)lock held */
} hps_mcs_t;
#define HPS_MCS_INITIALIZER { NULL, NULL }

void hps_mcs_lock_slow(hps_mcs_t *l);
void hps_mcs_unlock_slow(hps_mcs_t *l);
int  hps_mcs_timedlock(hps_mcs_t *l, clockid_t clock, const struct timespec *abstime);

#define HPS_MCS_SELF(l) ((hps_mcs_node_t *)(void *)(l))

HPS_INLINE void hps_mcs_init(hps_mcs_t *l)
{
    hps_store_relaxed(&l->next, NULL);
    hps_store_relaxed(&l->tail, NULL);
}

HPS_INLINE bool hps_mcs_trylock(hps_mcs_t *l)
{
    hps_mcs_node_t *e = NULL;
    return hps_load_relaxed(&l->tail) == NULL &&
           hps_cas_acquire(&l->tail, &e, HPS_MCS_SELF(l));
}

HPS_INLINE void hps_mcs_lock(hps_mcs_t *l)
{
    hps_mcs_node_t *e = NULL;
    if (hps_likely(hps_cas_acquire(&l->tail, &e, HPS_MCS_SELF(l))))
        return;
    hps_mcs_lock_slow(l);
}

HPS_INLINE void hps_mcs_unlock(hps_mcs_t *l)
{
    hps_mcs_node_t *e = HPS_MCS_SELF(l);
    /* Release: the next owner (or trylock) must see the critical section. */
    if (hps_likely(hps_load_relaxed(&l->next) == NULL &&
                   hps_cas_release(&l->tail, &e, NULL)))
        return;
    hps_mcs_unlock_slow(l);
}

HPS_INLINE bool hps_mcs_is_locked(hps_mcs_t *l) { return hps_load_relaxed(&l->tail) != NULL; }

#endif
