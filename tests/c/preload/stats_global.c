// SPDX-License-Identifier: MIT
/*
 * A program with a global mutex, semaphore and barrier, for HPSYNC_STATS=1:
 * the statistics tables at exit must name them (hps_stats_global_mutex,
 * hps_stats_global_sem, hps_stats_global_barrier) with exact counts: 3000
 * semaphore waits and posts, 300 barrier waits in 100 rounds.  Built like
 * any user program, without -rdynamic.  Also the victim for bad settings
 * (HPSYNC_LOCK=bogus): it must still run correctly.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include "harness.h"

pthread_mutex_t hps_stats_global_mutex = PTHREAD_MUTEX_INITIALIZER;
sem_t hps_stats_global_sem;
pthread_barrier_t hps_stats_global_barrier;
static unsigned long counter;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&hps_stats_global_mutex);
        counter++;
        pthread_mutex_unlock(&hps_stats_global_mutex);
    }
    for (int i = 0; i < 1000; i++) {
        sem_post(&hps_stats_global_sem);
        HPS_CHECK(sem_wait(&hps_stats_global_sem) == 0, "sem_wait failed");
    }
    for (int i = 0; i < 100; i++)
        pthread_barrier_wait(&hps_stats_global_barrier);
    return NULL;
}

int main(void)
{
    hps_test_set_name("stats_global");
    hps_test_watchdog(60);
    pthread_t t[3];
    sem_init(&hps_stats_global_sem, 0, 0);
    pthread_barrier_init(&hps_stats_global_barrier, NULL, 3);
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    HPS_CHECK(counter == 300000, "lost updates: %lu of 300000", counter);
    printf("stats_global: ok\n");
    return 0;
}
