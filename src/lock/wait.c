// SPDX-License-Identifier: MIT
/* The shared waiting policy of the spinning locks (see hpsync/lock/wait.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <time.h>
#include "hpsync/lock/wait.h"
#include "../common/env.h"
#include "../prim/clock.h"

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

/*
 * The settings are read here, in the object that holds the tunables they
 * set: every slow path references this object, so a program linked with
 * the static libhpsync.a that waits at all also runs this constructor.
 * (Read only by the elision constructor, HPSYNC_SPIN and HPSYNC_YIELDS were
 * ignored by static programs that did not use elision.)
 */
__attribute__((constructor)) static void wait_ctor(void)
{
    pthread_atfork(NULL, NULL, fork_child);
    (void)hps_settings();
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
        /* Not nanosleep: that is a cancellation point, and no lock wait may
         * be one (see src/prim/clock.h). */
        hps_sleep_ns((uint64_t)us * 1000u);
    }
}

HPS_EXPORT int hps_deadline_valid(const struct timespec *abstime)
{
    return abstime && abstime->tv_nsec >= 0 && abstime->tv_nsec < 1000000000L;
}

HPS_EXPORT int hps_deadline_check(clockid_t clock, const struct timespec *abstime)
{
    /* The two clocks FUTEX_WAIT_BITSET takes, so every algorithm accepts
     * the same ones (the adaptive lock hands the deadline to the kernel). */
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return hps_deadline_valid(abstime) ? 0 : EINVAL;
}

HPS_EXPORT int hps_deadline_passed(clockid_t clock, const struct timespec *abstime)
{
    struct timespec now;
    /* A clock that cannot be read leaves `now` unset: say so rather than
     * compare garbage. */
    if (clock_gettime(clock, &now) != 0)
        return EINVAL;
    if (now.tv_sec > abstime->tv_sec ||
        (now.tv_sec == abstime->tv_sec && now.tv_nsec >= abstime->tv_nsec))
        return ETIMEDOUT;
    return 0;
}
