// SPDX-License-Identifier: MIT
/*
 * pthread_rwlock_* where readers really share: one state word holds the
 * reader count and a writer bit, so a read lock is one CAS when no writer
 * holds the lock.  Waiters sleep on two futex sequence words (one for
 * readers, one for writers) and say so in two counters, so unlock enters the
 * kernel only when someone sleeps.
 *
 * Preference follows glibc: readers by default (a thread may take a read
 * lock again while a writer waits); writers first only for
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP.  Process-shared rwlocks are
 * glibc's.  The interposer's HPSYNC_LOCK choice does not apply here: a
 * reader-writer lock is its own algorithm.
 *
 * Ordering: waiter and waker each write one variable and then read the
 * other's (state vs. waiter counts), a Dekker pattern, so those accesses are
 * seq_cst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "preload.h"
#include "../common/futex.h"

typedef struct hps_prw {
    _Atomic uint32_t state;        /* 0: readers count (low 31 bits) | WRITER */
    _Atomic uint32_t rwait;        /* 4: readers asleep or about to be */
    _Atomic uint32_t wwait;        /* 8: writers asleep or about to be */
    _Atomic uint32_t rseq;         /* 12: futex word readers sleep on */
    _Atomic uint32_t wseq;         /* 16: futex word writers sleep on */
    uint32_t pad0;                 /* 20 */
    _Atomic int cur_writer;        /* 24: glibc's __cur_writer: writer's tid */
    int shared;                    /* 28: glibc's __shared: nonzero = glibc's */
    uint32_t pad1[4];              /* 32..47 */
    uint32_t flags;                /* 48: glibc's __flags: preference kind */
} hps_prw_t;
_Static_assert(sizeof(hps_prw_t) <= sizeof(pthread_rwlock_t), "rwlock layout");
_Static_assert(offsetof(hps_prw_t, shared) == offsetof(pthread_rwlock_t, __data.__shared), "shared");
_Static_assert(offsetof(hps_prw_t, flags) == offsetof(pthread_rwlock_t, __data.__flags), "flags");
_Static_assert(offsetof(hps_prw_t, cur_writer) == offsetof(pthread_rwlock_t, __data.__cur_writer), "writer");

#define WRITER     0x80000000u
#define READERS    0x7fffffffu
#define RW(l)      ((hps_prw_t *)(void *)(l))

static int writer_first(hps_prw_t *r)
{
    return r->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/* 0 = got it, EBUSY = would block, EAGAIN = reader count full. */
static int try_read(hps_prw_t *r)
{
    uint32_t s = atomic_load(&r->state);
    for (;;) {
        if ((s & WRITER) || (writer_first(r) && atomic_load(&r->wwait) != 0))
            return EBUSY;
        if ((s & READERS) == READERS)
            return EAGAIN;
        if (atomic_compare_exchange_weak(&r->state, &s, s + 1))
            return 0;
    }
}

static int try_write(hps_prw_t *r)
{
    uint32_t e = 0;
    if (atomic_compare_exchange_strong(&r->state, &e, WRITER)) {
        atomic_store_explicit(&r->cur_writer, hps_pl_tid(), memory_order_relaxed);
        return 0;
    }
    return EBUSY;
}

/* Wake sleepers after the state changed in a way that may admit them. */
static void wake(hps_prw_t *r, int readers, int writer)
{
    if (writer && atomic_load(&r->wwait) != 0) {
        atomic_fetch_add(&r->wseq, 1);
        hps_futex_wake(&r->wseq, 1, 0);
    }
    if (readers && atomic_load(&r->rwait) != 0) {
        atomic_fetch_add(&r->rseq, 1);
        hps_futex_wake(&r->rseq, 0x7fffffff, 0);
    }
}

static int acquire(hps_prw_t *r, int write, clockid_t clock, const struct timespec *abs)
{
    if (abs && ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) || !hps_deadline_valid(abs)))
        return EINVAL;
    if (atomic_load_explicit(&r->cur_writer, memory_order_relaxed) == hps_pl_tid() &&
        (atomic_load(&r->state) & WRITER))
        return EDEADLK;
    int rc = write ? try_write(r) : try_read(r);
    if (rc != EBUSY)
        return rc;

    /* Spin briefly: read sections are often short. */
    hps_wait_t w = HPS_WAIT_INIT;
    for (int i = 0; i < 32; i++) {
        hps_wait_step(&w);
        rc = write ? try_write(r) : try_read(r);
        if (rc != EBUSY)
            return rc;
    }

    _Atomic uint32_t *cnt = write ? &r->wwait : &r->rwait;
    _Atomic uint32_t *seq = write ? &r->wseq : &r->rseq;
    atomic_fetch_add(cnt, 1);
    for (;;) {
        uint32_t s = atomic_load(seq);
        rc = write ? try_write(r) : try_read(r);
        if (rc != EBUSY)
            break;
        int f = hps_futex_wait(seq, s, clock, abs, 0);
        if (f == ETIMEDOUT) {
            rc = write ? try_write(r) : try_read(r);
            if (rc == EBUSY)
                rc = ETIMEDOUT;
            break;
        }
    }
    if (atomic_fetch_sub(cnt, 1) == 1 && write && rc != 0 && writer_first(r))
        wake(r, 1, 0);  /* readers held back for us may go now */
    return rc;
}

HPS_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
    int pshared = PTHREAD_PROCESS_PRIVATE, kind = PTHREAD_RWLOCK_DEFAULT_NP;
    if (attr) {
        pthread_rwlockattr_getpshared(attr, &pshared);
        pthread_rwlockattr_getkind_np(attr, &kind);
    }
    if (pshared == PTHREAD_PROCESS_SHARED)
        return hps_real()->rw_init(l, attr);
    memset(l, 0, sizeof *l);
    RW(l)->flags = (uint32_t)kind;
    return 0;
}

HPS_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    if (RW(l)->shared)
        return hps_real()->rw_destroy(l);
    return 0;
}

HPS_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    if (hps_unlikely(RW(l)->shared))
        return hps_real()->rw_rdlock(l);
    /* Fast path: no writer, no preference to honour. */
    hps_prw_t *r = RW(l);
    uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
    if (hps_likely(!(s & WRITER) && r->flags == 0 && s < READERS &&
                   atomic_compare_exchange_strong(&r->state, &s, s + 1)))
        return 0;
    return acquire(r, 0, CLOCK_REALTIME, NULL);
}

HPS_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    if (hps_unlikely(RW(l)->shared))
        return hps_real()->rw_wrlock(l);
    return acquire(RW(l), 1, CLOCK_REALTIME, NULL);
}

HPS_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    if (RW(l)->shared)
        return hps_real()->rw_tryrdlock(l);
    return try_read(RW(l));
}

HPS_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    if (RW(l)->shared)
        return hps_real()->rw_trywrlock(l);
    return try_write(RW(l));
}

HPS_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_real()->rw_timedrdlock(l, abs);
    return acquire(RW(l), 0, CLOCK_REALTIME, abs);
}

HPS_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_real()->rw_timedwrlock(l, abs);
    return acquire(RW(l), 1, CLOCK_REALTIME, abs);
}

HPS_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_real()->rw_clockrdlock(l, clock, abs);
    return acquire(RW(l), 0, clock, abs);
}

HPS_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_real()->rw_clockwrlock(l, clock, abs);
    return acquire(RW(l), 1, clock, abs);
}

HPS_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    hps_prw_t *r = RW(l);
    if (r->shared)
        return hps_real()->rw_unlock(l);
    uint32_t s = atomic_load(&r->state);
    if (s & WRITER) {
        atomic_store_explicit(&r->cur_writer, 0, memory_order_relaxed);
        atomic_store(&r->state, 0);
        /* Writer-first: hand to a writer, readers only if none waits. */
        if (writer_first(r) && atomic_load(&r->wwait) != 0)
            wake(r, 0, 1);
        else
            wake(r, 1, 1);
        return 0;
    }
    if ((s & READERS) == 0)
        return EPERM;           /* not locked: refuse rather than corrupt */
    s = atomic_fetch_sub(&r->state, 1) - 1;
    if ((s & READERS) == 0)
        wake(r, writer_first(r), 1);
    return 0;
}
