// SPDX-License-Identifier: MIT
/*
 * glibc's own lock functions, for the objects hpsync leaves to glibc
 * (process-shared, robust, priority-inheritance/-protect mutexes and
 * process-shared rwlocks).  The untimed ones are bound at link time through
 * glibc's exported __pthread_* aliases, so the common hand-over needs no
 * dlsym; the timed ones are looked up once with dlsym(RTLD_NEXT).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "preload.h"

extern int __pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
extern int __pthread_mutex_destroy(pthread_mutex_t *);
extern int __pthread_mutex_lock(pthread_mutex_t *);
extern int __pthread_mutex_trylock(pthread_mutex_t *);
extern int __pthread_mutex_unlock(pthread_mutex_t *);
extern int __pthread_rwlock_init(pthread_rwlock_t *, const pthread_rwlockattr_t *);
extern int __pthread_rwlock_destroy(pthread_rwlock_t *);
extern int __pthread_rwlock_rdlock(pthread_rwlock_t *);
extern int __pthread_rwlock_wrlock(pthread_rwlock_t *);
extern int __pthread_rwlock_tryrdlock(pthread_rwlock_t *);
extern int __pthread_rwlock_trywrlock(pthread_rwlock_t *);
extern int __pthread_rwlock_unlock(pthread_rwlock_t *);

static struct hps_real g_real;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    struct hps_real r = {
        .mutex_init = __pthread_mutex_init,
        .mutex_destroy = __pthread_mutex_destroy,
        .mutex_lock = __pthread_mutex_lock,
        .mutex_trylock = __pthread_mutex_trylock,
        .mutex_unlock = __pthread_mutex_unlock,
        .rw_init = __pthread_rwlock_init,
        .rw_destroy = __pthread_rwlock_destroy,
        .rw_rdlock = __pthread_rwlock_rdlock,
        .rw_wrlock = __pthread_rwlock_wrlock,
        .rw_tryrdlock = __pthread_rwlock_tryrdlock,
        .rw_trywrlock = __pthread_rwlock_trywrlock,
        .rw_unlock = __pthread_rwlock_unlock,
    };
    r.mutex_timedlock = (int (*)(pthread_mutex_t *, const struct timespec *))dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
    r.mutex_clocklock = (int (*)(pthread_mutex_t *, clockid_t, const struct timespec *))dlsym(RTLD_NEXT, "pthread_mutex_clocklock");
    r.rw_timedrdlock = (int (*)(pthread_rwlock_t *, const struct timespec *))dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
    r.rw_timedwrlock = (int (*)(pthread_rwlock_t *, const struct timespec *))dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
    r.rw_clockrdlock = (int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))dlsym(RTLD_NEXT, "pthread_rwlock_clockrdlock");
    r.rw_clockwrlock = (int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))dlsym(RTLD_NEXT, "pthread_rwlock_clockwrlock");
    g_real = r;
}

const struct hps_real *hps_real(void)
{
    pthread_once(&g_once, resolve);
    return &g_real;
}
