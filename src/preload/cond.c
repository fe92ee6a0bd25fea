// SPDX-License-Identifier: MIT
/*
 * pthread_cond_* on a futex sequence word, for every lock algorithm.
 *
 * A waiter reads `seq` and counts itself in `waiters` while it still holds
 * the mutex, unlocks, and sleeps on `seq` only if it has not changed.  Every
 * signal or broadcast bumps `seq` before waking, so a wake-up that races
 * with a waiter going to sleep is never lost: the futex call sees the new
 * value and returns at once.  No second mutex is hidden inside: the only
 * shared state is the three words below.  `waiters` spares signal the
 * system call when nobody waits, and lets destroy wait until the last
 * woken waiter has stopped touching the condvar (POSIX allows destroying
 * it right after a broadcast).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <threads.h>
#include "preload.h"
#include "../prim/futex.h"

typedef struct hps_pcond {
    hps_au32 seq;
    hps_au32 waiters;
    uint32_t flags;
} hps_pcond_t;
_Static_assert(sizeof(hps_pcond_t) <= sizeof(pthread_cond_t), "cond layout");

#define COND_MONOTONIC 1u
#define COND_PSHARED   2u
#define PC(c) ((hps_pcond_t *)(void *)(c))

HPS_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
    clockid_t clock = CLOCK_REALTIME;
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr) {
        pthread_condattr_getclock(attr, &clock);
        pthread_condattr_getpshared(attr, &pshared);
    }
    memset(c, 0, sizeof *c);
    PC(c)->flags = (clock == CLOCK_MONOTONIC ? COND_MONOTONIC : 0) |
                   (pshared == PTHREAD_PROCESS_SHARED ? COND_PSHARED : 0);
    return 0;
}

HPS_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
    hps_wait_t w = HPS_WAIT_INIT;
    /* Woken waiters still decrement `waiters`; let them finish first. */
    while (hps_load_acquire(&PC(c)->waiters) != 0)
        hps_wait_step(&w);
    return 0;
}

struct cancel_ctx {
    hps_pcond_t *pc;
    pthread_mutex_t *m;
};

static void cancel_cleanup(void *arg)
{
    struct cancel_ctx *ctx = arg;
    hps_fas_seq_cst(&ctx->pc->waiters, 1);
    hps_preload_mutex_lock(ctx->m, NULL);
}

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                     const struct timespec *abs)
{
    hps_pcond_t *pc = PC(c);
    if (abs && !hps_deadline_valid(abs))
        return EINVAL;
    /* A wait cannot happen inside a transaction (the TSX study's TCP/IP
     * stack problem): if the caller's section is elided, this aborts it and
     * the section re-runs holding the mutex for real, then waits here. */
    hps_elide_before_blocking();
    /* seq_cst: pairs with the signaller's seq bump then waiters read. */
    uint32_t seq = hps_load_seq_cst(&pc->seq);
    hps_faa_seq_cst(&pc->waiters, 1);
    int rc = hps_preload_mutex_unlock(m);
    if (rc != 0) {
        hps_fas_seq_cst(&pc->waiters, 1);
        return rc;
    }
    int shared = (pc->flags & COND_PSHARED) != 0;
    int timed_out = 0;
    /*
     * pthread_cond_wait is a cancellation point.  The futex call is a raw
     * system call, so cancellation is made asynchronous around it alone; if
     * it strikes, the handler re-takes the mutex before the thread's own
     * cleanup handlers run, as POSIX requires.
     */
    struct cancel_ctx ctx = { pc, m };
    int oldtype;
    pthread_cleanup_push(cancel_cleanup, &ctx);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
    for (;;) {
        int r = hps_futex_wait(&pc->seq, seq, clock, abs, shared);
        if (r == ETIMEDOUT) {
            timed_out = 1;
            break;
        }
        /* Woken, value changed (EAGAIN), or a signal (EINTR): all return;
         * POSIX lets a wait return spuriously, callers re-check. */
        if (r != EINTR || hps_load_seq_cst(&pc->seq) != seq)
            break;
    }
    pthread_setcanceltype(oldtype, NULL);
    pthread_cleanup_pop(0);
    hps_fas_seq_cst(&pc->waiters, 1);
    rc = hps_preload_mutex_lock(m, __builtin_return_address(0));
    if (rc != 0)
        return rc;          /* e.g. EOWNERDEAD from a robust mutex */
    return timed_out ? ETIMEDOUT : 0;
}

HPS_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return cond_wait(c, m, CLOCK_REALTIME, NULL);
}

HPS_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
    clockid_t clock = (PC(c)->flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return cond_wait(c, m, clock, abs);
}

HPS_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                      const struct timespec *abs)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return cond_wait(c, m, clock, abs);
}

static void cond_wake(pthread_cond_t *c, int n)
{
    hps_pcond_t *pc = PC(c);
    /* seq_cst: the bump must be ordered before we read `waiters`. */
    hps_faa_seq_cst(&pc->seq, 1);
    if (hps_load_seq_cst(&pc->waiters) != 0)
        hps_futex_wake(&pc->seq, n, (pc->flags & COND_PSHARED) != 0);
}

HPS_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    /* Nobody counted in: nothing to wake, no need to touch `seq` either. */
    if (hps_load_seq_cst(&PC(c)->waiters) == 0)
        return 0;
    cond_wake(c, 1);
    return 0;
}

HPS_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    if (hps_load_seq_cst(&PC(c)->waiters) == 0)
        return 0;
    cond_wake(c, INT_MAX);
    return 0;
}

/* C11 <threads.h>: glibc implements these on the pthread objects internally,
 * bypassing our symbols, so they are routed here to keep one lock layout. */
static int thrd_rc(int rc)
{
    return rc == 0 ? thrd_success : rc == ETIMEDOUT ? thrd_timedout : rc == EBUSY ? thrd_busy
         : rc == ENOMEM ? thrd_nomem : thrd_error;
}

HPS_EXPORT int cnd_init(cnd_t *c) { return thrd_rc(pthread_cond_init((pthread_cond_t *)c, NULL)); }
HPS_EXPORT void cnd_destroy(cnd_t *c) { pthread_cond_destroy((pthread_cond_t *)c); }
HPS_EXPORT int cnd_signal(cnd_t *c) { return thrd_rc(pthread_cond_signal((pthread_cond_t *)c)); }
HPS_EXPORT int cnd_broadcast(cnd_t *c) { return thrd_rc(pthread_cond_broadcast((pthread_cond_t *)c)); }
HPS_EXPORT int cnd_wait(cnd_t *c, mtx_t *m)
{
    return thrd_rc(cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, NULL));
}
HPS_EXPORT int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abs)
{
    return thrd_rc(cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, abs));
}

HPS_EXPORT int mtx_init(mtx_t *m, int type)
{
    pthread_mutexattr_t a;
    if (type != mtx_plain && type != mtx_timed && type != (mtx_plain | mtx_recursive) &&
        type != (mtx_timed | mtx_recursive))
        return thrd_error;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, (type & mtx_recursive) ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_NORMAL);
    int rc = pthread_mutex_init((pthread_mutex_t *)m, &a);
    pthread_mutexattr_destroy(&a);
    return thrd_rc(rc);
}
HPS_EXPORT int mtx_lock(mtx_t *m) { return thrd_rc(hps_preload_mutex_lock((pthread_mutex_t *)m, __builtin_return_address(0))); }
HPS_EXPORT int mtx_trylock(mtx_t *m) { return thrd_rc(hps_preload_mutex_trylock((pthread_mutex_t *)m, __builtin_return_address(0))); }
HPS_EXPORT int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abs)
{
    return thrd_rc(hps_preload_mutex_clocklock((pthread_mutex_t *)m, CLOCK_REALTIME, abs, __builtin_return_address(0)));
}
HPS_EXPORT int mtx_unlock(mtx_t *m) { return thrd_rc(hps_preload_mutex_unlock((pthread_mutex_t *)m)); }
HPS_EXPORT void mtx_destroy(mtx_t *m) { pthread_mutex_destroy((pthread_mutex_t *)m); }
