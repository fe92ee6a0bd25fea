// SPDX-License-Identifier: MIT
/*
 * A lock is not a cancellation point: deferred cancellation of a thread
 * blocked in hps_lock_lock, per algorithm (hps_cancel_check in the harness).
 *   cancel_api lock <algo>
 * Spinning and yielding are turned off (hps_wait_*_limit = 0), so a
 * spinning lock's waiter is in its nap phase at once and the adaptive lock's
 * in its futex wait.
 */
#include <errno.h>
#include <stdio.h>
#include "harness.h"
#include "hpsync/lock.h"

static int api_lock(void *l) { hps_lock_lock(l); return 0; }
static int api_unlock(void *l) { hps_lock_unlock(l); return 0; }

static int case_lock(const hps_test_case_t *c, int argc, char **argv)
{
    hps_lock_algo_t algo;
    HPS_CHECK(hps_lock_algo_parse(argv[1], &algo) == 0, "unknown algorithm '%s' (%s)",
              argv[1], hps_lock_algo_names());
    hps_wait_spin_limit = 0;
    hps_wait_yield_limit = 0;
    static hps_lock_t lock;
    HPS_CHECK_RC("hps_lock_init", hps_lock_init(&lock, algo), 0);
    hps_stress_ops_t ops = { .size = sizeof ops, .name = hps_test_name(),
                             .lock = api_lock, .unlock = api_unlock };
    hps_cancel_check(&ops, &lock);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "lock", .run_args = case_lock, .args = "<algo>", .min_args = 1, .max_args = 1 },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("cancel_api", cases, 30, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
