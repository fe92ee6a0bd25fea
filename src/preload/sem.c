// SPDX-License-Identifier: MIT
/*
 * sem_* on glibc's own semaphore layout and wake-up protocol, with hpsync's
 * spin-then-futex waiting in front of it.
 *
 * Why glibc's layout: sem_open() builds its semaphores itself (in a file it
 * maps, without calling sem_init), and a process-shared semaphore may be
 * used by processes that do not run under the interposer.  Keeping glibc's
 * 64-bit word - the value in the low half, the count of registered sleepers
 * in the high half - and its rules (a post that sees sleepers wakes one; a
 * sleeper waits on the value half for it to leave 0) makes every semaphore
 * glibc made work here and every one made here work in glibc, in both
 * directions at once.
 *
 * What hpsync adds: before registering as a sleeper, a waiter spins for the
 * learned number of rounds (spin.c) while the semaphore is empty and nobody
 * sleeps on it.  A post that arrives meanwhile finds no sleeper and makes no
 * system call, and the waiter makes none either; glibc's sem_wait goes to
 * the kernel at once.  Waiters that find others asleep queue behind them
 * without spinning.
 *
 * Fast paths (statistics off): sem_wait is glibc's cancellation test, a
 * load and a CAS (about 10 instructions); sem_post a load and a CAS, and a
 * futex_wake only when someone sleeps.
 *
 * POSIX lets the thread whose wait took the last token destroy the
 * semaphore at once, so sem_post touches nothing in it after its CAS made
 * the token available: the sharing flag is read before, and the futex wake
 * uses only the address.  Results match glibc's, including where glibc
 * differs from a naive reading of POSIX (tests/c/preload/semantics_sem.c
 * compares them call by call).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <string.h>
#include "preload.h"
#include "../prim/futex.h"

typedef struct hps_psem {
    hps_au64 data;                  /* 0: value | registered sleepers << 32 (glibc's) */
    uint32_t priv;                  /* 8: glibc's `private`: 0 private, 128 shared */
    uint32_t glibc_pad;             /* 12: glibc's padding, left alone */
    hps_preload_spin_t spin;             /* 16: learned spinning (zero from sem_open) */
    uint32_t pad[2];
} hps_psem_t;
_Static_assert(sizeof(hps_psem_t) <= sizeof(sem_t), "semaphore layout");

#define PS(s)          ((hps_psem_t *)(void *)(s))
#define SLEEPER        (1ull << 32)
#define VALUE(d)       ((uint32_t)(d))
#define GLIBC_SHARED   128u         /* glibc's FUTEX_SHARED in `private` */

/* The futex word is the value half of `data`. */
static inline void *value_word(hps_psem_t *s)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint32_t *)(void *)&s->data;
#else
    return (uint32_t *)(void *)&s->data + 1;
#endif
}

/* Take a token if there is one.  Acquire on success: pairs with the
 * poster's release, so what it did before sem_post happens before us. */
static inline int take(hps_psem_t *s)
{
    uint64_t d = hps_load_relaxed(&s->data);
    while (VALUE(d) != 0)
        if (hps_cas_weak_acquire(&s->data, &d, d - 1))
            return 1;
    return 0;
}

/*
 * Stop being a registered sleeper.  Relaxed: the RMW on the one word is all
 * the ordering the protocol needs.  If a token is left and others sleep, a
 * wake-up meant for us may have been spent (we were woken and then
 * cancelled): pass one on.
 */
static void unregister(void *arg)
{
    hps_psem_t *s = arg;
    int shared = s->priv != 0;
    uint64_t old = hps_fas_relaxed(&s->data, SLEEPER);
    if (VALUE(old) != 0 && (old >> 32) > 1)
        hps_futex_wake(value_word(s), 1, shared);
}

/* As a registered sleeper, sleep until a token can be taken and take it:
 * 0, or ETIMEDOUT / EINTR (then unregistered). */
static HPS_NOINLINE int sleep_until_token(hps_psem_t *s, clockid_t clock, const struct timespec *abs)
{
    int shared = s->priv != 0;
    uint64_t d = hps_load_relaxed(&s->data);
    for (;;) {
        if (VALUE(d) == 0) {
            int oldtype;
            pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
            int r = hps_futex_wait(value_word(s), 0, clock, abs, shared);
            pthread_setcanceltype(oldtype, NULL);
            /* Woken, or the value moved (EAGAIN): try again.  A signal
             * ends the wait as in glibc: the kernel restarts an untimed
             * wait for an SA_RESTART handler and fails a timed one. */
            if (r == ETIMEDOUT || r == EINTR) {
                unregister(s);
                return r;
            }
            d = hps_load_relaxed(&s->data);
        } else if (hps_cas_weak_acquire(&s->data, &d, d - 1 - SLEEPER)) {
            return 0;       /* acquire: as in take() */
        }
    }
}

static int sleep_for_token(hps_psem_t *s, clockid_t clock, const struct timespec *abs)
{
    int rc;
    /* Register: from here on every post that finds us wakes one sleeper. */
    hps_faa_relaxed(&s->data, SLEEPER);
    /*
     * sem_wait and sem_timedwait are cancellation points.  The futex call is
     * a raw system call, so cancellation is made asynchronous around it
     * alone (turning it on acts on a request already pending); if it
     * strikes, the handler unregisters us.
     */
    pthread_cleanup_push(unregister, s);
    rc = sleep_until_token(s, clock, abs);
    pthread_cleanup_pop(0);
    return rc;
}

/* The contended path: spin, then sleep. */
static int block(hps_psem_t *s, clockid_t clock, const struct timespec *abs)
{
    /* Spin only while the semaphore is empty and nobody sleeps on it: a
     * waiter that finds sleepers queues behind them.  One spin: if the token
     * it saw is gone again, someone else took it, and we sleep. */
    if ((hps_load_relaxed(&s->data) >> 32) == 0 && hps_preload_spin(&s->data, ~0ull, 0, &s->spin) &&
        take(s))
        return 0;
    /* The kernel refuses negative times that POSIX allows: they are past. */
    if (abs && abs->tv_sec < 0)
        return take(s) ? 0 : ETIMEDOUT;
    return sleep_for_token(s, clock, abs);
}

/* Out of line: statistics on (or settings not read yet), or no token. */
static HPS_NOINLINE int wait_slow(hps_psem_t *s, clockid_t clock, const struct timespec *abs,
                                  void *caller)
{
    int stats = hps_preload_stats_on();
    int rc = 0;
    if (take(s)) {
        if (stats)
            hps_preload_stats_record(s, HPS_STATS_SEM, caller, 0, 0);
        return 0;
    }
    uint64_t t0 = stats ? hps_preload_now_ns() : 0;
    rc = block(s, clock, abs);
    if (rc) {
        errno = rc;
        return -1;
    }
    if (stats)
        hps_preload_stats_record(s, HPS_STATS_SEM, caller, 1, hps_preload_now_ns() - t0);
    return 0;
}

static inline int wait_common(sem_t *sem, clockid_t clock, const struct timespec *abs, void *caller)
{
    hps_psem_t *s = PS(sem);
    if (hps_likely(hps_preload_plain) && take(s))
        return 0;
    return wait_slow(s, clock, abs, caller);
}

HPS_EXPORT int sem_wait(sem_t *sem)
{
    /* A cancellation point that "shall occur" even without blocking (glibc). */
    pthread_testcancel();
    return wait_common(sem, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}

HPS_EXPORT int sem_timedwait(sem_t *restrict sem, const struct timespec *restrict abs)
{
    /* glibc checks the deadline first, even when a token is there. */
    if (!hps_deadline_valid(abs)) {
        errno = EINVAL;
        return -1;
    }
    pthread_testcancel();
    return wait_common(sem, CLOCK_REALTIME, abs, __builtin_return_address(0));
}

HPS_EXPORT int sem_clockwait(sem_t *restrict sem, clockid_t clock, const struct timespec *restrict abs)
{
    /* glibc: the clock, then the deadline, and no cancellation test unless
     * it blocks. */
    if ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) || !hps_deadline_valid(abs)) {
        errno = EINVAL;
        return -1;
    }
    return wait_common(sem, clock, abs, __builtin_return_address(0));
}

HPS_EXPORT int sem_trywait(sem_t *sem)
{
    hps_psem_t *s = PS(sem);
    if (!take(s)) {
        errno = EAGAIN;
        return -1;
    }
    if (hps_unlikely(!hps_preload_plain) && hps_preload_stats_on())
        hps_preload_stats_record(s, HPS_STATS_SEM, __builtin_return_address(0), 0, 0);
    return 0;
}

HPS_EXPORT int sem_post(sem_t *sem)
{
    hps_psem_t *s = PS(sem);
    int shared = s->priv != 0;       /* read while the semaphore is surely alive */
    uint64_t d = hps_load_relaxed(&s->data);
    do {
        if (hps_unlikely(VALUE(d) == SEM_VALUE_MAX)) {
            errno = EOVERFLOW;
            return -1;
        }
        /* Release: what we did before posting happens before the waiter
         * that takes this token. */
    } while (!hps_cas_weak_release(&s->data, &d, d + 1));
    if ((d >> 32) != 0)
        hps_futex_wake(value_word(s), 1, shared);
    /* The statistics key on the address: they do not touch the semaphore. */
    if (hps_unlikely(!hps_preload_plain) && hps_preload_stats_on())
        hps_preload_stats_extra(s, HPS_STATS_SEM, __builtin_return_address(0));
    return 0;
}

HPS_EXPORT int sem_getvalue(sem_t *restrict sem, int *restrict sval)
{
    /* Like glibc: the tokens, never minus the sleepers. */
    *sval = (int)VALUE(hps_load_relaxed(&PS(sem)->data));
    return 0;
}

HPS_EXPORT int sem_init(sem_t *sem, int pshared, unsigned int value)
{
    if (value > SEM_VALUE_MAX) {
        errno = EINVAL;
        return -1;
    }
    hps_psem_t *s = PS(sem);
    memset(sem, 0, sizeof *sem);
    hps_init(&s->data, value);
    s->priv = pshared ? GLIBC_SHARED : 0;
    return 0;
}

HPS_EXPORT int sem_destroy(sem_t *sem)
{
    /* As glibc: nothing to release, and no check (destroying a semaphore
     * someone waits on is undefined). */
    (void)sem;
    return 0;
}
