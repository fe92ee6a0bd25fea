// SPDX-License-Identifier: MIT
/* The shared waiting policy of the spinning locks (see hpsync/lock/wait.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "hpsync/lock/wait.h"

/*
 * Defaults: 32 spin rounds, 8 single PAUSEs then bursts doubling to 16.
 * PAUSE costs 25 ns on Zen 5 (measured; ~40 cycles on Skylake and later Intel
 * parts), so this is about 8 us there: long enough to cover a short critical
 * section on another core.
 * 2000 yields cover the time for every thread of an 8x oversubscribed run to
 * get a time slice (that is what a FIFO lock needs to make progress), after
 * which the waiter naps: 20 us doubling to 1 ms.
 */
HPS_EXPORT uint32_t hps_wait_spin_limit = 32;
HPS_EXPORT uint32_t hps_wait_yield_limit = 2000;

HPS_EXPORT uint32_t hps_fork_tag = 1;

static void fork_child(void)
{
    hps_fork_tag = hps_fork_tag + 1 ? hps_fork_tag + 1 : 1;
}

__attribute__((constructor)) static void wait_ctor(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

HPS_EXPORT void hps_wait_step(hps_wait_t *w)
{
    uint32_t n = w->n++;
    if (n < hps_wait_spin_limit) {
        /* The first rounds poll after every PAUSE: a hand-over between two
         * running threads should be seen within one PAUSE.  Then back off. */
        uint32_t k = n < 8 ? 0 : n - 8;
        uint32_t burst = 1u << (k < 4 ? k : 4);
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
