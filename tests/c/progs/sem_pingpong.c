// SPDX-License-Identifier: MIT
/*
 * sem_pingpong: what a semaphore hand-off costs, for comparing glibc's
 * sem_* with the interposer's (a measuring program, not a test; the
 * comparison is tests/c/scripts/sem_ratio.sh, which runs it both ways,
 * interleaved).
 *
 *   sem_pingpong [pair_iterations] [round_trips]
 *
 * Prints two lines, "pair <ns>" (an uncontended sem_post + sem_wait on one
 * semaphore, per pair) and "pingpong <ns>" (two threads bouncing a token
 * over two semaphores, per round trip), the best of 5 repetitions each.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include "../harness.h"

static sem_t ping, pong;
static unsigned long trips;

static void *partner(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < trips; i++) {
        if (sem_wait(&ping) != 0)
            hps_test_fail("sem_wait(ping) failed");
        sem_post(&pong);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    hps_test_set_name("sem_pingpong");
    unsigned long pairs = argc > 1 ? hps_test_ulong(argv[1], "pair iterations") : 5000000;
    trips = argc > 2 ? hps_test_ulong(argv[2], "round trips") : 100000;
    hps_test_watchdog(300);
    double best_pair = 1e30, best_trip = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        sem_t s;
        sem_init(&s, 0, 0);
        uint64_t t0 = hps_test_now_ns();
        for (unsigned long i = 0; i < pairs; i++) {
            sem_post(&s);
            if (sem_wait(&s) != 0)
                hps_test_fail("sem_wait failed");
        }
        double ns = (double)(hps_test_now_ns() - t0) / (double)pairs;
        best_pair = ns < best_pair ? ns : best_pair;
        sem_destroy(&s);

        sem_init(&ping, 0, 0);
        sem_init(&pong, 0, 0);
        pthread_t t;
        pthread_create(&t, NULL, partner, NULL);
        t0 = hps_test_now_ns();
        for (unsigned long i = 0; i < trips; i++) {
            sem_post(&ping);
            if (sem_wait(&pong) != 0)
                hps_test_fail("sem_wait(pong) failed");
        }
        ns = (double)(hps_test_now_ns() - t0) / (double)trips;
        pthread_join(t, NULL);
        best_trip = ns < best_trip ? ns : best_trip;
        int v1, v2;
        sem_getvalue(&ping, &v1);
        sem_getvalue(&pong, &v2);
        if (v1 != 0 || v2 != 0)
            hps_test_fail("tokens left over: ping %d, pong %d", v1, v2);
    }
    printf("pair %.1f\npingpong %.0f\n", best_pair, best_trip);
    return 0;
}
