/* SPDX-License-Identifier: MIT */
/*
 * preload.h - how the interposer lays hpsync locks into glibc's objects.
 *
 * The lock lives inside the caller's pthread_mutex_t: no side table, so lock
 * and unlock touch only the mutex.  Every hpsync algorithm starts unlocked
 * from all-zero bytes, and `kind` sits where glibc keeps __kind, so the static
 * initializers (PTHREAD_MUTEX_INITIALIZER, the RECURSIVE/ERRORCHECK/ADAPTIVE
 * _NP ones) produce valid hpsync mutexes without any call.  Mutexes whose kind
 * carries glibc's robust, priority-inheritance, priority-protect or
 * process-shared bits are left to glibc untouched.
 */
#ifndef HPS_PRELOAD_H
#define HPS_PRELOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "hpsync/lock.h"
#include "hpsync/elide.h"

typedef struct hps_pmutex {
    hps_lock_state_t s;     /* 0..15: algorithm state (glibc: lock/count/owner/nusers) */
    int kind;               /* 16: glibc's __kind, same encoding */
    uint32_t count;         /* 20: recursion depth of a recursive mutex */
    _Atomic int owner;      /* 24: owner tid for errorcheck/recursive, else 0 */
    hps_elide_state_t elide; /* 28: elision's per-lock adaptive state */
    uint32_t pad[2];
} hps_pmutex_t;

_Static_assert(sizeof(hps_pmutex_t) <= sizeof(pthread_mutex_t), "mutex layout");
_Static_assert(offsetof(hps_pmutex_t, kind) == offsetof(pthread_mutex_t, __data.__kind), "kind offset");
_Static_assert(sizeof(hps_lock_state_t) == 16, "state fits before __kind");

/* glibc's __kind bits (nptl/pthreadP.h); these are ABI, stable since 2.x. */
#define HPS_KIND_TYPE_MASK   3      /* NORMAL(TIMED) 0, RECURSIVE 1, ERRORCHECK 2, ADAPTIVE 3 */
#define HPS_KIND_GLIBC_ONLY  (16 | 32 | 64 | 128)  /* robust, PI, PP, pshared */
#define HPS_KIND_ELISION     (256 | 512)            /* glibc elision hints: ignored */

#define HPS_PM(m) ((hps_pmutex_t *)(void *)(m))

/* The algorithm for the inline fast paths: 0 until settings are read, and 0
 * while statistics or elision are on (every call then goes out of line). */
extern hps_lock_algo_t hps_preload_fast_algo;
extern hps_lock_algo_t hps_preload_algo;
void hps_preload_init(void);

/* 1 once the settings are read and statistics are off: the semaphore and
 * barrier fast paths need nothing else.  0 sends them out of line, where
 * hps_preload_stats_on() reads the settings if nobody has yet. */
extern int hps_preload_plain;
int hps_preload_stats_on(void);

/* Spin-then-futex (spin.c): poll *word while (*word & mask) == expect, for
 * at most the rounds learned in *sp; 1 = the word changed, 0 = go to sleep.
 * The learned state is 8 bytes inside the user's object, all-zero to start.
 * hps_preload_ncpus() is the CPUs this process may run on. */
typedef struct hps_preload_spin {
    _Atomic uint16_t bound;     /* rounds the next spin may last (0: not learned yet) */
    _Atomic uint16_t left;      /* waits at the minimum until the next probe */
    _Atomic uint16_t period;    /* the probe interval (16 .. 1024) */
    uint16_t pad;
} hps_preload_spin_t;
int hps_preload_spin(hps_au64 *word, uint64_t mask, uint64_t expect, hps_preload_spin_t *sp);
int hps_preload_ncpus(void);

/* The calling thread's kernel tid, cached in initial-exec TLS. */
int hps_preload_tid(void);

/* Internal entry points shared by the mutex, condvar and C11 wrappers. */
int hps_preload_mutex_lock(pthread_mutex_t *m, void *caller);
int hps_preload_mutex_unlock(pthread_mutex_t *m);
int hps_preload_mutex_trylock(pthread_mutex_t *m, void *caller);
int hps_preload_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime, void *caller);

/* glibc's own functions, for the objects we hand over to it. */
struct hps_preload_real {
    int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
    int (*mutex_destroy)(pthread_mutex_t *);
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_trylock)(pthread_mutex_t *);
    int (*mutex_unlock)(pthread_mutex_t *);
    int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*rw_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
    int (*rw_destroy)(pthread_rwlock_t *);
    int (*rw_rdlock)(pthread_rwlock_t *);
    int (*rw_wrlock)(pthread_rwlock_t *);
    int (*rw_tryrdlock)(pthread_rwlock_t *);
    int (*rw_trywrlock)(pthread_rwlock_t *);
    int (*rw_unlock)(pthread_rwlock_t *);
    int (*rw_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rw_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rw_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*rw_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
};
const struct hps_preload_real *hps_preload_real(void);

/* Statistics (stats.c); only called when HPSYNC_STATS is on.  Objects are
 * keyed by address and listed in one table per kind.  `record` counts an
 * acquisition (a mutex lock, a semaphore taken, a barrier passed), `extra`
 * the kind's other event (a semaphore's post, a barrier's serial return). */
typedef enum hps_preload_stats_kind { HPS_STATS_MUTEX, HPS_STATS_SEM, HPS_STATS_BARRIER } hps_preload_stats_kind_t;
void hps_preload_stats_record(const void *obj, hps_preload_stats_kind_t kind, void *caller, int contended, uint64_t wait_ns);
void hps_preload_stats_extra(const void *obj, hps_preload_stats_kind_t kind, void *caller);
hps_elide_stats_t *hps_preload_stats_elide(const void *lock, void *caller);
void hps_preload_stats_start(void);
uint64_t hps_preload_now_ns(void);

#endif
