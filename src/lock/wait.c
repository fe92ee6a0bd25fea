// SPDX-License-Identifier: MIT
/* The shared waiting policy of the spinning locks (see hpsync/lock/wait.h). */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>
#include "hpsync/lock/wait.h"

/*
 * Defaults: 64 spin rounds of up to 64 PAUSEs is a few microseconds on current
 * x86 parts, long enough to cover a short critical section on another core.
 * 2000 yields cover the time for every thread of an 8x oversubscribed run to
 * get a time slice (that is what a FIFO lock needs to make progress), after
 * which the waiter naps: 20 us doubling to 1 ms.
 */
HPS_EXPORT uint32_t hps_wait_spin_limit = 64;
HPS_EXPORT uint32_t hps_wait_yield_limit = 2000;

HPS_EXPORT void hps_wait_step(hps_wait_t *w)
{
    uint32_t n = w->n++;
    if (n < hps_wait_spin_limit) {
        uint32_t burst = 1u << (n < 6 ? n : 6);
        for (uint32_t i = 0; i < burst; i++)
            hps_cpu_relax();
    } else if (n < hps_wait_spin_limit + hps_wait_yield_limit) {
        sched_yield();
    } else {
        uint32_t k = n - hps_wait_spin_limit - hps_wait_yield_limit;
        long us = 20L << (k < 6 ? k : 6);
        if (us > 1000)
            us = 1000;
        struct timespec ts = { 0, us * 1000L };
        nanosleep(&ts, NULL);
    }
}

HPS_EXPORT int hps_deadline_valid(const struct timespec *abstime)
{
    return abstime && abstime->tv_nsec >= 0 && abstime->tv_nsec < 1000000000L;
}

HPS_EXPORT int hps_deadline_passed(clockid_t clock, const struct timespec *abstime)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return now.tv_sec > abstime->tv_sec ||
           (now.tv_sec == abstime->tv_sec && now.tv_nsec >= abstime->tv_nsec);
}

/*
 * Timed acquisition for locks that cannot leave a queue (ticket, MCS,
 * Hemlock) and for TTAS: poll trylock with the usual waiting policy until
 * the deadline.  Returns 0, ETIMEDOUT or EINVAL.
 */
#include <errno.h>
int hps_timed_poll(int (*try)(void *), void *l, clockid_t clock, const struct timespec *abstime)
{
    if (try(l))
        return 0;
    if (!hps_deadline_valid(abstime))
        return EINVAL;
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        if (hps_deadline_passed(clock, abstime))
            return try(l) ? 0 : ETIMEDOUT;
        hps_wait_step(&w);
        if (try(l))
            return 0;
    }
}
