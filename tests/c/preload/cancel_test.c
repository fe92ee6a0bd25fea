// SPDX-License-Identifier: MIT
/*
 * pthread_mutex_lock is not a cancellation point: a thread blocked in it
 * on a held mutex, cancelled with deferred cancellation, stays blocked
 * until it gets the mutex and is cancelled only at a later cancellation
 * point (hps_cancel_check in the harness).  Run bare (glibc) and under the
 * interposer per algorithm, with HPSYNC_SPIN=0 HPSYNC_YIELDS=0 so that a
 * spinning lock's waiter naps at once.
 *   cancel_test mutex
 */
#include <pthread.h>
#include "harness.h"

static void case_mutex(void)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    hps_stress_ops_t ops;
    hps_stress_pthread_ops(&ops, hps_test_name(), PTHREAD_MUTEX_NORMAL);
    hps_cancel_check(&ops, &m);
}

static const hps_test_case_t cases[] = {
    { "mutex", .run = case_mutex },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("cancel_test", cases, 30, HPS_TEST_NAME_IMPL);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
