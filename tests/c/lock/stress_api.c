// SPDX-License-Identifier: MIT
/*
 * Stress shim for the hps_lock_t API: the shared harness over one algorithm.
 *   stress_api <algo> [threads|Nx] [iterations]
 * Linked against hpsync_static, so it also runs under TSan (label tsan).
 */
#include <errno.h>
#include <stdio.h>
#include "harness.h"
#include "hpsync/lock.h"

static int api_lock(void *l) { hps_lock_lock(l); return 0; }
static int api_trylock(void *l) { return hps_lock_trylock(l); }
static int api_timedlock(void *l, clockid_t clock, const struct timespec *abs)
{
    return hps_lock_timedlock(l, clock, abs);
}
static int api_unlock(void *l) { hps_lock_unlock(l); return 0; }

/* Holding the lock, it must say so, and a trylock of our own must fail. */
static void api_in_cs(void *l)
{
    HPS_CHECK(hps_lock_is_locked(l), "is_locked() is false inside the critical section");
    HPS_CHECK_RC("hps_lock_trylock by the holder", hps_lock_trylock(l), EBUSY);
}

int main(int argc, char **argv)
{
    static char name[64];
    hps_lock_algo_t algo;
    if (argc < 2 || hps_lock_algo_parse(argv[1], &algo) != 0) {
        fprintf(stderr, "usage: %s <%s> [threads|Nx] [iterations]\n", argv[0], hps_lock_algo_names());
        return 2;
    }
    snprintf(name, sizeof name, "stress_api[%s]", argv[1]);
    hps_test_set_name(name);

    static hps_lock_t lock;
    HPS_CHECK_RC("hps_lock_init", hps_lock_init(&lock, algo), 0);
    HPS_CHECK(!hps_lock_is_locked(&lock), "a fresh lock reads as locked");

    hps_stress_ops_t ops = {
        .size = sizeof ops, .name = name,
        .lock = api_lock, .trylock = api_trylock, .timedlock = api_timedlock,
        .unlock = api_unlock, .in_cs = api_in_cs,
        .clocks = { CLOCK_MONOTONIC, CLOCK_REALTIME },
    };
    hps_stress_cfg_t cfg = { .ops = &ops, .lock = &lock, .watchdog_s = 100 };
    hps_stress_args(argc, argv, 2, &cfg, 3, 20000);
    hps_stress_run(&cfg);
    HPS_CHECK(!hps_lock_is_locked(&lock), "lock still held after every thread unlocked");
    return 0;
}
