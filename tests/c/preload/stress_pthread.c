// SPDX-License-Identifier: MIT
/*
 * Stress shim for pthread_mutex_*: the shared harness over one mutex kind.
 *   stress_pthread <normal|recursive|errorcheck|adaptive> [threads|Nx] [iterations]
 * Plain pthreads on purpose: run bare it measures glibc (the baseline), run
 * with LD_PRELOAD=libhpsync-preload.so and HPSYNC_LOCK=<algo> it tests the
 * interposer.  The kind's own rules are checked inside the critical section
 * while other threads contend, where bookkeeping races would show.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

/* One case per mutex type: the type is the case's datum. */
static int stress(const hps_test_case_t *c, int argc, char **argv)
{
    int type = *(const int *)c->data;
    static pthread_mutex_t m;
    pthread_mutexattr_t a;
    HPS_CHECK_RC("pthread_mutexattr_init", pthread_mutexattr_init(&a), 0);
    HPS_CHECK_RC("pthread_mutexattr_settype", pthread_mutexattr_settype(&a, type), 0);
    HPS_CHECK_RC("pthread_mutex_init", pthread_mutex_init(&m, &a), 0);
    pthread_mutexattr_destroy(&a);

    hps_stress_ops_t ops;
    hps_stress_pthread_ops(&ops, hps_test_name(), type);
    hps_stress_cfg_t cfg = { .ops = &ops, .lock = &m, .watchdog_s = 100 };
    hps_stress_args(argc, argv, 1, &cfg, 3, 20000);
    hps_stress_run(&cfg);
    /* Every unlock matched its lock: the mutex is free and destroyable. */
    HPS_CHECK_RC("pthread_mutex_destroy", pthread_mutex_destroy(&m), 0);
    return 0;
}

static const int t_normal = PTHREAD_MUTEX_NORMAL, t_recursive = PTHREAD_MUTEX_RECURSIVE,
                 t_errorcheck = PTHREAD_MUTEX_ERRORCHECK, t_adaptive = PTHREAD_MUTEX_ADAPTIVE_NP;
#define KIND(name, type) \
    { name, .run_args = stress, .args = "[threads|Nx] [iterations]", .max_args = 2, .data = &(type) }
static const hps_test_case_t kinds[] = {
    KIND("normal", t_normal),
    KIND("recursive", t_recursive),
    KIND("errorcheck", t_errorcheck),
    KIND("adaptive", t_adaptive),
};
/* No watchdog here: the stress arms its own. */
static const hps_test_suite_t suite = HPS_TEST_SUITE("stress_pthread", kinds, 0, HPS_TEST_NAME_IMPL);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
