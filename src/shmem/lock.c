// SPDX-License-Identifier: MIT
/*
 * Distributed locks (shmem_set_lock, shmem_test_lock, shmem_clear_lock).
 *
 * The lock is the symmetric long's copy on PE 0: 0 when free, the owner's
 * PE + 1 when held.  Test-and-test-and-set: a waiter reads the word (an
 * atomic fetch, a plain load on-node) until it looks free and only then
 * tries compare_swap, so waiters do not keep stealing the line from the
 * holder; between reads it backs off like every other wait (spin, yield,
 * nap), which keeps 4 PEs on 2 cores moving.  Not FIFO: a queue lock hands
 * the lock to a PE that may not be running, the worst case when PEs
 * outnumber cores.
 */
#define _GNU_SOURCE
#include "internal.h"

#define LOCK_HOME 0

static uint64_t try_take(const char *fn, long *lock)
{
    uint64_t mine = (uint64_t)hps_shmem_sh.me + 1, free_ = 0, old;
    hps_amo(fn, HPS_AOP_CSWAP, lock, &mine, &free_, &old, sizeof(long), LOCK_HOME, 0);
    return old;
}

HPS_API void shmem_set_lock(long *lock)
{
    hps_shmem_waiter_t w = { 0 };
    uint64_t v, unused = 0;
    while (try_take(__func__, lock) != 0) {
        do {
            hps_shmem_wait_step(&w);
            hps_amo(__func__, HPS_AOP_FETCH, lock, &unused, NULL, &v, sizeof(long), LOCK_HOME, 0);
        } while (v != 0);
    }
    /* What the previous holder wrote before clear_lock is visible now
     * (its quiet, then our acquiring compare_swap). */
}

HPS_API int shmem_test_lock(long *lock)
{
    return try_take(__func__, lock) != 0;
}

HPS_API void shmem_clear_lock(long *lock)
{
    /* Everything done inside the critical section completes first. */
    hps_quiet(__func__);
    uint64_t zero = 0;
    hps_amo(__func__, HPS_AOP_SET, lock, &zero, NULL, NULL, sizeof(long), LOCK_HOME, 0);
}

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
