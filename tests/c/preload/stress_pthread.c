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

int main(int argc, char **argv)
{
    static char name[64];
    static const struct { const char *name; int type; } kinds[] = {
        { "normal", PTHREAD_MUTEX_NORMAL },
        { "recursive", PTHREAD_MUTEX_RECURSIVE },
        { "errorcheck", PTHREAD_MUTEX_ERRORCHECK },
        { "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP },
    };
    int k = -1;
    for (int i = 0; argc > 1 && i < (int)(sizeof kinds / sizeof kinds[0]); i++)
        if (strcmp(argv[1], kinds[i].name) == 0)
            k = i;
    if (k < 0) {
        fprintf(stderr, "usage: %s <normal|recursive|errorcheck|adaptive> [threads|Nx] [iterations]\n", argv[0]);
        return 2;
    }
    const char *algo = hps_test_preloaded() ? getenv("HPSYNC_LOCK") : NULL;
    snprintf(name, sizeof name, "stress_pthread[%s,%s]", kinds[k].name,
             hps_test_preloaded() ? (algo ? algo : "preload-default") : "glibc");
    hps_test_set_name(name);
    static pthread_mutex_t m;
    pthread_mutexattr_t a;
    HPS_CHECK_RC("pthread_mutexattr_init", pthread_mutexattr_init(&a), 0);
    HPS_CHECK_RC("pthread_mutexattr_settype", pthread_mutexattr_settype(&a, kinds[k].type), 0);
    HPS_CHECK_RC("pthread_mutex_init", pthread_mutex_init(&m, &a), 0);
    pthread_mutexattr_destroy(&a);

    hps_stress_ops_t ops;
    hps_stress_pthread_ops(&ops, name, kinds[k].type);
    hps_stress_cfg_t cfg = { .ops = &ops, .lock = &m, .watchdog_s = 100 };
    hps_stress_args(argc, argv, 2, &cfg, 3, 20000);
    hps_stress_run(&cfg);
    /* Every unlock matched its lock: the mutex is free and destroyable. */
    HPS_CHECK_RC("pthread_mutex_destroy", pthread_mutex_destroy(&m), 0);
    return 0;
}
