// SPDX-License-Identifier: MIT
/*
 * A program with a global mutex, for HPSYNC_STATS=1: the statistics table at
 * exit must name it (hps_stats_global_mutex).  Built like any user program,
 * without -rdynamic.  Also the victim for bad settings (HPSYNC_LOCK=bogus):
 * it must still run correctly.
 */
#include <pthread.h>
#include <stdio.h>
#include "harness.h"

pthread_mutex_t hps_stats_global_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counter;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&hps_stats_global_mutex);
        counter++;
        pthread_mutex_unlock(&hps_stats_global_mutex);
    }
    return NULL;
}

int main(void)
{
    hps_test_set_name("stats_global");
    hps_test_watchdog(60);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    HPS_CHECK(counter == 300000, "lost updates: %lu of 300000", counter);
    printf("stats_global: ok\n");
    return 0;
}
