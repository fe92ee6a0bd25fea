// SPDX-License-Identifier: MIT
/*
 * glibc's own lock functions, for the objects hpsync leaves to glibc
 * (process-shared, robust, priority-inheritance/-protect mutexes and
 * process-shared rwlocks).  Looked up once with dlsym(RTLD_NEXT): glibc's
 * __pthread_* aliases are compat-only symbols since 2.34 and cannot be
 * linked against.  dlsym is never called from a fast path: only the first
 * time a glibc-owned object is used.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "preload.h"

static struct hps_preload_real g_real;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void *need(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        /* Without glibc's version we cannot serve this object at all. */
        char msg[160];
        int n = snprintf(msg, sizeof msg, "hpsync: cannot find glibc's %s; aborting\n", name);
        (void)!write(2, msg, (size_t)n);
        abort();
    }
    return p;
}

#define GET(field, name) *(void **)&g_real.field = need(name)

static void resolve(void)
{
    GET(mutex_init, "pthread_mutex_init");
    GET(mutex_destroy, "pthread_mutex_destroy");
    GET(mutex_lock, "pthread_mutex_lock");
    GET(mutex_trylock, "pthread_mutex_trylock");
    GET(mutex_unlock, "pthread_mutex_unlock");
    GET(mutex_timedlock, "pthread_mutex_timedlock");
    GET(mutex_clocklock, "pthread_mutex_clocklock");
    GET(rw_init, "pthread_rwlock_init");
    GET(rw_destroy, "pthread_rwlock_destroy");
    GET(rw_rdlock, "pthread_rwlock_rdlock");
    GET(rw_wrlock, "pthread_rwlock_wrlock");
    GET(rw_tryrdlock, "pthread_rwlock_tryrdlock");
    GET(rw_trywrlock, "pthread_rwlock_trywrlock");
    GET(rw_unlock, "pthread_rwlock_unlock");
    GET(rw_timedrdlock, "pthread_rwlock_timedrdlock");
    GET(rw_timedwrlock, "pthread_rwlock_timedwrlock");
    GET(rw_clockrdlock, "pthread_rwlock_clockrdlock");
    GET(rw_clockwrlock, "pthread_rwlock_clockwrlock");
}

const struct hps_preload_real *hps_preload_real(void)
{
    pthread_once(&g_once, resolve);
    return &g_real;
}
