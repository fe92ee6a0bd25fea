/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/mcs.h - MCS queue lock.
 *
 * Contended threads queue as MCS nodes; each spins on its own node, so a
 * hand-over touches one waiter's cache line.  The node lives on the waiter's
 * stack: a thread leaves the queue (handing headship to its successor) as
 * soon as it holds the lock word (see queued.h), so no node outlives the
 * lock call, a thread may hold any number of MCS locks, and nodes cost
 * O(threads).  The lock is a word pair and a tail pointer, zero when free.
 * Fast paths: lock = load + XCHG + branch, unlock = one store.
 */
#ifndef HPSYNC_LOCK_MCS_H
#define HPSYNC_LOCK_MCS_H

#include <stddef.h>
#include "hpsync/lock/queued.h"

HPS_EXTERN_C_BEGIN

typedef struct hps_mcs_node {
    HPS_ATOMIC(struct hps_mcs_node *) next;
    hps_au32 wait;                      /* 1 while queued, 0 at the head */
} hps_mcs_node_t;

typedef struct hps_mcs {
    hps_qword_t q;
    HPS_ATOMIC(hps_mcs_node_t *) tail;   /* last queued node, NULL if none */
} hps_mcs_t;
#define HPS_MCS_INITIALIZER { HPS_QWORD_INITIALIZER, HPS_ATOMIC_INIT(NULL) }

HPS_INLINE void hps_mcs_init(hps_mcs_t *l)
{
    hps_qword_init(&l->q);
    hps_store_relaxed(&l->tail, NULL);
}

HPS_QUEUED_LOCK_API(mcs)

HPS_EXTERN_C_END

#endif
