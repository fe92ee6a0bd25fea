// SPDX-License-Identifier: MIT
/*
 * pthread_mutex_* on hpsync locks.
 *
 * Fast path (normal mutex, statistics off): one load of `kind`, one load of
 * the algorithm, the algorithm's inline fast path; about a dozen
 * instructions each way.  Everything else (recursive and errorcheck
 * bookkeeping, timed waits, statistics, glibc-owned kinds) is out of line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "preload.h"
#include "../common/env.h"
#include "../elide/backend.h"
#include "hpsync/elide.h"

hps_lock_algo_t hps_preload_fast_algo;   /* 0 until init, and 0 when stats are on */
hps_lock_algo_t hps_preload_algo = HPS_LOCK_DEFAULT;
static int pl_stats;
int hps_preload_plain;           /* see preload.h */
static int pl_elide;        /* HPSYNC_ELIDE=1 and a backend that can run it */
int hps_preload_is_preload = 1;  /* see src/elide/backend.c */

static __thread int t_tid __attribute__((tls_model("initial-exec")));

static void child_after_fork(void) { t_tid = 0; }

int hps_preload_tid(void)
{
    int t = t_tid;
    if (hps_unlikely(t == 0))
        t = t_tid = (int)syscall(SYS_gettid);
    return t;
}

/* 0: not started, 1: in progress, 2: done. */
static hps_au32 pl_state;

void hps_preload_init(void)
{
    /* Whoever moves 0 -> 1 does the work; concurrent first callers wait for
     * it (microseconds, once). */
    if (hps_likely(hps_load_acquire(&pl_state) == 2))
        return;
    uint32_t e = 0;
    if (!hps_cas_acq_rel(&pl_state, &e, 1)) {
        while (hps_load_acquire(&pl_state) != 2)
            hps_cpu_relax();
        return;
    }
    const hps_settings_t *s = hps_settings();
    hps_preload_algo = s->lock;
    pl_stats = (int)s->stats;
    if (s->elide) {
        hps_elide_setup();
        pl_elide = hps_elide_active;
    }
    pthread_atfork(NULL, NULL, child_after_fork);
    if (pl_stats)
        hps_preload_stats_start();
    /* Release: a thread that sees 2 (or the fast algorithm) sees all above.
     * With statistics or elision on, every call takes the out-of-line path. */
    hps_plain_store_release(&hps_preload_fast_algo, pl_stats || pl_elide ? 0 : hps_preload_algo);
    hps_plain_store_release(&hps_preload_plain, !pl_stats);
    hps_store_release(&pl_state, 2);
}

int hps_preload_stats_on(void)
{
    if (hps_unlikely(hps_load_acquire(&pl_state) != 2))
        hps_preload_init();
    return pl_stats;
}

__attribute__((constructor)) static void pl_ctor(void) { hps_preload_init(); }

/* The algorithm, reading the settings first if nobody has yet.  (The fast
 * paths' hps_preload_fast_algo is also 0 while statistics or elision are on, so
 * it cannot tell whether initialisation happened.) */
static inline hps_lock_algo_t algo(void)
{
    if (hps_unlikely(hps_load_acquire(&pl_state) != 2))
        hps_preload_init();
    return hps_preload_algo;
}

/* Elision applies to the mutex types glibc elides too: normal, default and
 * adaptive_np.  Recursive and errorcheck mutexes keep exact owner
 * bookkeeping, which a transaction that never writes the lock cannot do. */
static inline int elides(int type)
{
    return pl_elide && (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP);
}

static inline hps_elide_stats_t *elide_stats(hps_pmutex_t *p, void *caller)
{
    return pl_stats ? hps_preload_stats_elide(p, caller) : NULL;
}

/*
 * Acquire, blocking (abs == NULL) or until the deadline, counting for the
 * statistics when they are on: a failed first trylock is what "contended"
 * means, and the wait is timed from there.
 */
static int acquire_counted(hps_pmutex_t *p, clockid_t clock, const struct timespec *abs, void *caller)
{
    hps_lock_algo_t a = algo();
    if (!pl_stats) {
        if (abs)
            return hps_lockstate_timedlock(&p->s, a, clock, abs);
        hps_lockstate_lock(&p->s, a);
        return 0;
    }
    if (hps_lockstate_trylock(&p->s, a)) {
        hps_preload_stats_record(p, HPS_STATS_MUTEX, caller, 0, 0);
        return 0;
    }
    uint64_t t0 = hps_preload_now_ns();
    int r = 0;
    if (abs)
        r = hps_lockstate_timedlock(&p->s, a, clock, abs);
    else
        hps_lockstate_lock(&p->s, a);
    if (r == 0)
        hps_preload_stats_record(p, HPS_STATS_MUTEX, caller, 1, hps_preload_now_ns() - t0);
    return r;
}

/* For libhpsync's locksets over pthread mutexes (src/tm/lockset.c), which
 * look it up with dlsym: that it exists says the interposer is loaded, and
 * it answers the algorithm every interposed mutex runs. */
HPS_EXPORT int hps_preload_mutex_algo(void)
{
    return (int)algo();
}

/* Recursive/errorcheck prologue: 1 = done (result in *rc), 0 = go lock. */
static int owned_prologue(hps_pmutex_t *p, int type, int *rc)
{
    if (type != PTHREAD_MUTEX_RECURSIVE && type != PTHREAD_MUTEX_ERRORCHECK)
        return 0;
    /* Relaxed: only this thread ever stores its own tid here. */
    if (hps_load_relaxed(&p->owner) != hps_preload_tid())
        return 0;
    if (type == PTHREAD_MUTEX_ERRORCHECK) {
        *rc = EDEADLK;
    } else if (p->count == UINT_MAX) {
        *rc = EAGAIN;
    } else {
        p->count++;
        *rc = 0;
    }
    return 1;
}

static void set_owner(hps_pmutex_t *p, int type)
{
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        hps_store_relaxed(&p->owner, hps_preload_tid());
        p->count = 1;
    }
}

int hps_preload_mutex_lock(pthread_mutex_t *m, void *caller)
{
    hps_pmutex_t *p = HPS_PM(m);
    int kind = p->kind, rc;
    if (hps_unlikely(kind & HPS_KIND_GLIBC_ONLY))
        return hps_preload_real()->mutex_lock(m);
    int type = kind & HPS_KIND_TYPE_MASK;
    if (owned_prologue(p, type, &rc))
        return rc;
    if (elides(type) && hps_elide_enter(&p->s, algo(), &p->elide, elide_stats(p, caller)))
        return 0;
    acquire_counted(p, CLOCK_REALTIME, NULL, caller);
    set_owner(p, type);
    return 0;
}

int hps_preload_mutex_trylock(pthread_mutex_t *m, void *caller)
{
    hps_pmutex_t *p = HPS_PM(m);
    int kind = p->kind, rc;
    if (hps_unlikely(kind & HPS_KIND_GLIBC_ONLY))
        return hps_preload_real()->mutex_trylock(m);
    int type = kind & HPS_KIND_TYPE_MASK;
    /* glibc: an errorcheck mutex's owner gets EBUSY from trylock, not EDEADLK. */
    if (type == PTHREAD_MUTEX_RECURSIVE && owned_prologue(p, type, &rc))
        return rc;
    if (elides(type) && hps_elide_try_enter(&p->s, algo(), elide_stats(p, caller)))
        return 0;
    if (!hps_lockstate_trylock(&p->s, algo()))
        return EBUSY;
    if (pl_stats)
        hps_preload_stats_record(p, HPS_STATS_MUTEX, caller, 0, 0);
    set_owner(p, type);
    return 0;
}

int hps_preload_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs, void *caller)
{
    hps_pmutex_t *p = HPS_PM(m);
    int kind = p->kind, rc;
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    if (hps_unlikely(kind & HPS_KIND_GLIBC_ONLY))
        return hps_preload_real()->mutex_clocklock(m, clock, abs);
    int type = kind & HPS_KIND_TYPE_MASK;
    if (owned_prologue(p, type, &rc))
        return rc;
    if (elides(type) && hps_elide_enter(&p->s, algo(), &p->elide, elide_stats(p, caller)))
        return 0;
    rc = acquire_counted(p, clock, abs, caller);
    if (rc == 0)
        set_owner(p, type);
    return rc;
}

int hps_preload_mutex_unlock(pthread_mutex_t *m)
{
    hps_pmutex_t *p = HPS_PM(m);
    int kind = p->kind;
    if (hps_unlikely(kind & HPS_KIND_GLIBC_ONLY))
        return hps_preload_real()->mutex_unlock(m);
    int type = kind & HPS_KIND_TYPE_MASK;
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        if (hps_load_relaxed(&p->owner) != hps_preload_tid())
            return EPERM;
        if (type == PTHREAD_MUTEX_RECURSIVE && --p->count != 0)
            return 0;
        hps_store_relaxed(&p->owner, 0);
    } else if (elides(type)) {
        hps_elide_exit(&p->s, algo(), &p->elide, elide_stats(p, NULL));
        return 0;
    }
    hps_lockstate_unlock(&p->s, algo());
    return 0;
}

HPS_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    hps_pmutex_t *p = HPS_PM(m);
    hps_lock_algo_t a = hps_plain_load_relaxed(&hps_preload_fast_algo);
    if (hps_likely(p->kind == 0 && a != 0)) {
        hps_lockstate_lock(&p->s, a);
        return 0;
    }
    return hps_preload_mutex_lock(m, __builtin_return_address(0));
}

HPS_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    hps_pmutex_t *p = HPS_PM(m);
    hps_lock_algo_t a = hps_plain_load_relaxed(&hps_preload_fast_algo);
    if (hps_likely(p->kind == 0 && a != 0)) {
        hps_lockstate_unlock(&p->s, a);
        return 0;
    }
    return hps_preload_mutex_unlock(m);
}

HPS_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    return hps_preload_mutex_trylock(m, __builtin_return_address(0));
}

HPS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
    return hps_preload_mutex_clocklock(m, CLOCK_REALTIME, abs, __builtin_return_address(0));
}

HPS_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    return hps_preload_mutex_clocklock(m, clock, abs, __builtin_return_address(0));
}

HPS_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
    int type = PTHREAD_MUTEX_NORMAL, pshared = PTHREAD_PROCESS_PRIVATE;
    int robust = PTHREAD_MUTEX_STALLED, proto = PTHREAD_PRIO_NONE;
    if (attr) {
        pthread_mutexattr_gettype(attr, &type);
        pthread_mutexattr_getpshared(attr, &pshared);
        pthread_mutexattr_getrobust(attr, &robust);
        pthread_mutexattr_getprotocol(attr, &proto);
    }
    if (pshared != PTHREAD_PROCESS_PRIVATE || robust != PTHREAD_MUTEX_STALLED ||
        proto != PTHREAD_PRIO_NONE)
        return hps_preload_real()->mutex_init(m, attr);
    memset(m, 0, sizeof *m);
    HPS_PM(m)->kind = type & HPS_KIND_TYPE_MASK;
    return 0;
}

HPS_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    hps_pmutex_t *p = HPS_PM(m);
    if (p->kind & HPS_KIND_GLIBC_ONLY)
        return hps_preload_real()->mutex_destroy(m);
    if (hps_lockstate_is_locked(&p->s, algo()))
        return EBUSY;
    /* As glibc does: a destroyed mutex has kind -1, so later use gets EINVAL. */
    p->kind = -1;
    return 0;
}
