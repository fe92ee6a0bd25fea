// SPDX-License-Identifier: MIT
/*
 * Constructor order: a library constructor (ctor_lib.c) and a high-priority
 * program constructor (101, among the first to run) lock and unlock mutexes
 * before main, under the interposer whatever order its own constructor runs
 * in.  main then checks what they recorded and uses the same objects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include "ctor_lib.h"
#include "harness.h"

static pthread_mutex_t early = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t early_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static int early_errors = -1;

__attribute__((constructor(101))) static void early_ctor(void)
{
    int e = 0;
    e += pthread_mutex_lock(&early) != 0;
    e += pthread_mutex_trylock(&early) != EBUSY;
    e += pthread_mutex_unlock(&early) != 0;
    e += pthread_mutex_lock(&early_err) != 0;
    e += pthread_mutex_lock(&early_err) != EDEADLK;
    /* Left locked on purpose: main must find it still held by this thread. */
    early_errors = e;
}

int main(void)
{
    hps_test_set_name("ctor_test");
    hps_test_watchdog(30);
    HPS_CHECK(early_errors == 0, "constructor(101): %d failed expectations", early_errors);
    HPS_CHECK(ctor_lib_errors() == 0, "library constructor: %d failed expectations", ctor_lib_errors());
    HPS_CHECK_RC("relock of the mutex the constructor holds", pthread_mutex_lock(&early_err), EDEADLK);
    HPS_CHECK_RC("unlock of the mutex the constructor holds", pthread_mutex_unlock(&early_err), 0);
    HPS_CHECK_RC("lock the constructor's normal mutex", pthread_mutex_lock(&early), 0);
    HPS_CHECK_RC("unlock it", pthread_mutex_unlock(&early), 0);
    HPS_CHECK(ctor_lib_use() == 0, "library objects misbehave after the constructor");
    printf("ctor_test: ok\n");
    return 0;
}
