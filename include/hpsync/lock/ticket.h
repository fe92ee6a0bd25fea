/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/ticket.h - ticket lock: FIFO by ticket number.
 *
 * A contended thread takes a ticket (fetch-and-add on `next`) and waits for
 * `owner` to reach it; then it is the head of the queue (see queued.h) and
 * takes the lock word, then serves the next ticket.  Waiters back off in
 * proportion to their distance from the head.
 * Fast paths: lock = load + XCHG + branch, unlock = one store.
 */
#ifndef HPSYNC_LOCK_TICKET_H
#define HPSYNC_LOCK_TICKET_H

#include "hpsync/lock/queued.h"

HPS_EXTERN_C_BEGIN

typedef struct hps_ticket {
    hps_qword_t q;
    hps_au32 next;          /* next ticket to hand out */
    hps_au32 owner;         /* ticket now at the head */
} hps_ticket_t;
#define HPS_TICKET_INITIALIZER { HPS_QWORD_INITIALIZER, HPS_ATOMIC_INIT(0), HPS_ATOMIC_INIT(0) }

HPS_INLINE void hps_ticket_init(hps_ticket_t *l)
{
    hps_qword_init(&l->q);
    hps_store_relaxed(&l->next, 0);
    hps_store_relaxed(&l->owner, 0);
}

HPS_QUEUED_LOCK_API(ticket)

HPS_EXTERN_C_END

#endif
