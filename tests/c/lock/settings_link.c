// SPDX-License-Identifier: MIT
/*
 * HPSYNC_SPIN and HPSYNC_YIELDS reach the waiting policy however the
 * program links libhpsync: built once against libhpsync.so and once against
 * libhpsync.a (which pulls in only the objects the program uses; this one
 * uses a TTAS lock and no elision), run with the variables set.
 *   settings_link check <spin> <yields>
 */
#include <pthread.h>
#include "harness.h"
#include "hpsync/lock.h"

static hps_lock_t lock;

static void *contend(void *arg)
{
    hps_lock_lock(&lock);
    hps_lock_unlock(&lock);
    return arg;
}

static int case_check(const hps_test_case_t *c, int argc, char **argv)
{
    unsigned long spin = hps_test_ulong(argv[1], "spin"), yields = hps_test_ulong(argv[2], "yields");
    /* A contended lock, so the program uses a slow path, as real ones do. */
    HPS_CHECK_RC("hps_lock_init", hps_lock_init(&lock, HPS_LOCK_TTAS), 0);
    hps_lock_lock(&lock);
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, contend, NULL), 0);
    hps_lock_unlock(&lock);
    HPS_CHECK_RC("pthread_join", pthread_join(t, NULL), 0);
    HPS_CHECK(hps_wait_spin_limit == spin, "hps_wait_spin_limit is %u, HPSYNC_SPIN says %lu",
              hps_wait_spin_limit, spin);
    HPS_CHECK(hps_wait_yield_limit == yields, "hps_wait_yield_limit is %u, HPSYNC_YIELDS says %lu",
              hps_wait_yield_limit, yields);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "check", .run_args = case_check, .args = "<spin> <yields>", .min_args = 2, .max_args = 2 },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("settings_link", cases, 30, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
