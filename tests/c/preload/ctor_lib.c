// SPDX-License-Identifier: MIT
/*
 * A shared library whose constructor uses pthread objects before main, and
 * possibly before the interposer's own constructor has run (the order of
 * constructors between an LD_PRELOAD library and the program's libraries is
 * not something a user controls).  It even starts a thread there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include "ctor_lib.h"

static pthread_mutex_t lib_static = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lib_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t lib_init;
static pthread_rwlock_t lib_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t lib_cond = PTHREAD_COND_INITIALIZER;
static int lib_errors;
static unsigned long lib_count;

static void *lib_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lib_init);
        lib_count++;
        pthread_mutex_unlock(&lib_init);
    }
    return NULL;
}

#define EXPECT(expr, want) do { if ((expr) != (want)) lib_errors++; } while (0)

__attribute__((constructor)) static void lib_ctor(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    EXPECT(pthread_mutex_init(&lib_init, &a), 0);
    pthread_mutexattr_destroy(&a);

    EXPECT(pthread_mutex_lock(&lib_static), 0);
    EXPECT(pthread_mutex_trylock(&lib_static), EBUSY);
    EXPECT(pthread_mutex_unlock(&lib_static), 0);
    EXPECT(pthread_mutex_lock(&lib_recursive), 0);
    EXPECT(pthread_mutex_lock(&lib_recursive), 0);
    EXPECT(pthread_mutex_unlock(&lib_recursive), 0);
    EXPECT(pthread_mutex_unlock(&lib_recursive), 0);
    EXPECT(pthread_mutex_lock(&lib_init), 0);
    EXPECT(pthread_mutex_lock(&lib_init), EDEADLK);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 2000000;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    EXPECT(pthread_cond_timedwait(&lib_cond, &lib_init, &dl), ETIMEDOUT);
    EXPECT(pthread_mutex_unlock(&lib_init), 0);
    EXPECT(pthread_rwlock_rdlock(&lib_rw), 0);
    EXPECT(pthread_rwlock_unlock(&lib_rw), 0);

    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        EXPECT(pthread_create(&t[i], NULL, lib_thread, NULL), 0);
    lib_thread(NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    EXPECT(lib_count, 3000ul);
}

int ctor_lib_errors(void) { return lib_errors; }

/* Used again from main: objects first touched in the constructor must work. */
int ctor_lib_use(void)
{
    int e = 0;
    e += pthread_mutex_lock(&lib_static) != 0;
    e += pthread_mutex_unlock(&lib_static) != 0;
    e += pthread_mutex_lock(&lib_init) != 0;
    e += pthread_mutex_unlock(&lib_init) != 0;
    e += pthread_mutex_unlock(&lib_init) != EPERM;
    e += pthread_rwlock_wrlock(&lib_rw) != 0;
    e += pthread_rwlock_unlock(&lib_rw) != 0;
    return e;
}
