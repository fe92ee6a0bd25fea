// SPDX-License-Identifier: MIT
/*
 * The stress harness's ops table over pthread_mutex_* (see harness.h), for
 * every test that stresses a pthread mutex: plain pthreads, so the same code
 * measures glibc bare and the interposer under LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "harness.h"

/* Process-wide: one mutex type per stress run. */
static int kind_type;

static int m_lock(void *m) { return pthread_mutex_lock(m); }
static int m_trylock(void *m) { return pthread_mutex_trylock(m); }
static int m_timedlock(void *m, clockid_t clock, const struct timespec *abs)
{
    /* Both entry points: timedlock is CLOCK_REALTIME by definition. */
    if (clock == CLOCK_REALTIME)
        return pthread_mutex_timedlock(m, abs);
    return pthread_mutex_clocklock(m, clock, abs);
}
static int m_unlock(void *m) { return pthread_mutex_unlock(m); }

static void m_in_cs(void *m)
{
    switch (kind_type) {
    case PTHREAD_MUTEX_RECURSIVE: {
        /* Nest twice through different entry points, unwind, still held. */
        struct timespec ts = hps_test_deadline(CLOCK_REALTIME, 1000000);
        HPS_CHECK_RC("recursive relock", pthread_mutex_lock(m), 0);
        HPS_CHECK_RC("recursive trylock by owner", pthread_mutex_trylock(m), 0);
        HPS_CHECK_RC("recursive timedlock by owner", pthread_mutex_timedlock(m, &ts), 0);
        for (int i = 0; i < 3; i++)
            HPS_CHECK_RC("recursive unlock (nested)", pthread_mutex_unlock(m), 0);
        break;
    }
    case PTHREAD_MUTEX_ERRORCHECK: {
        struct timespec ts = hps_test_deadline(CLOCK_REALTIME, 1000000);
        HPS_CHECK_RC("errorcheck relock by owner", pthread_mutex_lock(m), EDEADLK);
        HPS_CHECK_RC("errorcheck trylock by owner", pthread_mutex_trylock(m), EBUSY);
        HPS_CHECK_RC("errorcheck timedlock by owner", pthread_mutex_timedlock(m, &ts), EDEADLK);
        break;
    }
    default:
        HPS_CHECK_RC("trylock by owner", pthread_mutex_trylock(m), EBUSY);
        break;
    }
}

void hps_stress_pthread_ops(hps_stress_ops_t *ops, const char *name, int type)
{
    /* Helgrind does not intercept pthread_mutex_clocklock (it would see an
     * unlock of a mutex it never saw locked): HPS_TEST_NO_CLOCKLOCK=1 keeps
     * the timed path on pthread_mutex_timedlock. */
    const char *no_clock = getenv("HPS_TEST_NO_CLOCKLOCK");
    int realtime_only = no_clock && *no_clock == '1';
    kind_type = type;
    *ops = (hps_stress_ops_t){
        .size = sizeof *ops, .name = name,
        .lock = m_lock, .trylock = m_trylock, .timedlock = m_timedlock,
        .unlock = m_unlock, .in_cs = m_in_cs,
        .clocks = { CLOCK_REALTIME, realtime_only ? CLOCK_REALTIME : CLOCK_MONOTONIC },
    };
}
