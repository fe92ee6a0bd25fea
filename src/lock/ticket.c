// SPDX-License-Identifier: MIT
/* Ticket lock slow path: wait for our ticket, then take the word as head. */
#include "hpsync/lock.h"

HPS_EXPORT HPS_NOINLINE void hps_ticket_lock_slow(hps_ticket_t *l)
{
    /* Relaxed: the room only orders waiters; `locked` carries the data. */
    uint32_t t = hps_faa_relaxed(&l->next, 1);
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        uint32_t o = hps_load_relaxed(&l->owner);
        if (o == t)
            break;
        /*
         * Proportional backoff: a thread k places from the head waits about
         * k critical sections; checking sooner only adds traffic on the line
         * every waiter reads.
         */
        uint32_t d = t - o;
        if (d > 1 && w.n < hps_wait_spin_limit)
            for (uint32_t i = 0; i < 4 * (d < 8 ? d : 8); i++)
                hps_cpu_relax();
        hps_wait_step(&w);
    }
    hps_qword_head_acquire(&l->q);
    hps_store_relaxed(&l->owner, t + 1);
}
