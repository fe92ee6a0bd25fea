// SPDX-License-Identifier: MIT
/* Ticket slow path: wait for our turn, backing off by distance from the head. */
#include "hpsync/lock.h"
#include "internal.h"

HPS_EXPORT HPS_NOINLINE void hps_ticket_lock_slow(hps_ticket_t *l, uint32_t ticket)
{
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        uint32_t o = hps_load_acquire(&l->owner);
        if (o == ticket)
            return;
        /*
         * Proportional backoff: a thread k places from the head waits about
         * k critical sections; checking sooner only adds traffic on the line
         * every waiter reads.  The distance is capped so a long queue still
         * reaches the yielding phase quickly.
         */
        uint32_t d = ticket - o;
        if (d > 1 && w.n < hps_wait_spin_limit) {
            for (uint32_t i = 0; i < 16 * (d < 8 ? d : 8); i++)
                hps_cpu_relax();
        }
        hps_wait_step(&w);
    }
}

static int ticket_try(void *l) { return hps_ticket_trylock(l); }

HPS_EXPORT int hps_ticket_timedlock(hps_ticket_t *l, clockid_t clock, const struct timespec *abstime)
{
    return hps_timed_poll(ticket_try, l, clock, abstime);
}
