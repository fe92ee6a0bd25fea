// SPDX-License-Identifier: MIT
/*
 * pthread_rwlock_* where readers really share: one state word holds a count
 * of readers and a writer bit, so a read lock is one CAS when no writer
 * holds the lock.  Waiters sleep on two futex sequence words (one for
 * readers, one for writers) and say so in two counters, so unlock enters the
 * kernel only when someone sleeps.
 *
 * Preference follows glibc's rules exactly, including who gets the lock when
 * a writer releases it (nptl/pthread_rwlock_common.c):
 *  - While the writer holds it, arriving readers count themselves into the
 *    state word at once (a write phase's readers are waiting, not holding).
 *    Releasing, the writer clears its bit and every counted reader holds the
 *    lock in the same atomic step: no race with a woken writer decides it.
 *  - Default and PTHREAD_RWLOCK_PREFER_READER_NP: the counted readers get
 *    the lock; writers wait for the last of them.  Readers may also join
 *    readers while a writer waits (so a thread may read-lock recursively).
 *  - PTHREAD_RWLOCK_PREFER_WRITER_NP and ..._NONRECURSIVE_NP: writers that
 *    wait register in `wwait`, and a releasing writer that sees one hands
 *    over directly: it keeps the writer bit set and adds HANDOVER, which
 *    exactly one waiting writer claims; the counted readers keep waiting.
 *  - ..._NONRECURSIVE_NP only: a reader that finds readers holding and a
 *    writer waiting waits too, without counting itself in.
 * A waiting writer that times out must not strand a handover nobody claims:
 * it unregisters, then claims a pending HANDOVER itself (and then holds the
 * lock, as glibc does); the releasing writer, after setting HANDOVER,
 * re-reads `wwait` and takes the handover back if nobody is left.  Each side
 * writes one word and then reads the other's (Dekker), hence seq_cst.
 *
 * Process-shared rwlocks are glibc's.  The interposer's HPSYNC_LOCK choice
 * does not apply here: a reader-writer lock is its own algorithm.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "preload.h"
#include "../prim/futex.h"

typedef struct hps_prw {
    _Atomic uint32_t state;        /* 0: WRITER | HANDOVER | readers */
    _Atomic uint32_t rsleep;       /* 4: readers asleep (or about to be) */
    _Atomic uint32_t wwait;        /* 8: writers waiting (registered) */
    _Atomic uint32_t rseq;         /* 12: futex word readers sleep on */
    _Atomic uint32_t wseq;         /* 16: futex word writers sleep on */
    _Atomic uint32_t wsleep;       /* 20: writers asleep (or about to be) */
    _Atomic int cur_writer;        /* 24: glibc's __cur_writer: writer's tid */
    int shared;                    /* 28: glibc's __shared: nonzero = glibc's */
    uint32_t pad1[4];              /* 32..47 */
    uint32_t flags;                /* 48: glibc's __flags: preference kind */
} hps_prw_t;
_Static_assert(sizeof(hps_prw_t) <= sizeof(pthread_rwlock_t), "rwlock layout");
_Static_assert(offsetof(hps_prw_t, shared) == offsetof(pthread_rwlock_t, __data.__shared), "shared");
_Static_assert(offsetof(hps_prw_t, flags) == offsetof(pthread_rwlock_t, __data.__flags), "flags");
_Static_assert(offsetof(hps_prw_t, cur_writer) == offsetof(pthread_rwlock_t, __data.__cur_writer), "writer");

#define WRITER     0x80000000u     /* a write phase: a writer holds the lock */
#define HANDOVER   0x40000000u     /* the write lock waits for a writer to claim it */
#define READERS    0x3fffffffu     /* holding, or (WRITER set) waiting for the phase to end */
#define RW(l)      ((hps_prw_t *)(void *)(l))
#define SPIN_STEPS 32              /* hps_wait_step()s before sleeping */

/* Writer-to-writer hand-over: every kind but the reader-preferring ones. */
static int writers_first(hps_prw_t *r)
{
    return r->flags != PTHREAD_RWLOCK_PREFER_READER_NP;
}

/* New readers wait for waiting writers: the non-recursive kind only. */
static int readers_yield(hps_prw_t *r)
{
    return r->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/* 0 = got it, EBUSY = would block, EAGAIN = reader count full. */
static int try_read(hps_prw_t *r)
{
    uint32_t s = hps_load_seq_cst(&r->state);
    for (;;) {
        if ((s & WRITER) || (readers_yield(r) && hps_load_seq_cst(&r->wwait) != 0))
            return EBUSY;
        if ((s & READERS) == READERS)
            return EAGAIN;
        if (hps_cas_weak_seq_cst(&r->state, &s, s + 1))
            return 0;
    }
}

static int try_write(hps_prw_t *r)
{
    uint32_t e = 0;
    if (hps_cas_seq_cst(&r->state, &e, WRITER)) {
        hps_store_relaxed(&r->cur_writer, hps_preload_tid());
        return 0;
    }
    return EBUSY;
}

/* Wake sleepers after the state changed in a way that may admit them.
 * seq_cst: the bump is ordered after the caller's state change and before
 * the sleeper count is read (see sleep_on). */
static void wake_readers(hps_prw_t *r)
{
    if (hps_load_seq_cst(&r->rsleep) != 0) {
        hps_faa_seq_cst(&r->rseq, 1);
        hps_futex_wake(&r->rseq, 0x7fffffff, 0);
    }
}

static void wake_writer(hps_prw_t *r)
{
    if (hps_load_seq_cst(&r->wsleep) != 0) {
        hps_faa_seq_cst(&r->wseq, 1);
        hps_futex_wake(&r->wseq, 1, 0);
    }
}

/*
 * Wait until ready(r) or the deadline: spin a little (read sections are
 * often short), then sleep on `seq` counted in `sleepers`.  The sleeper
 * reads `seq` before re-checking, so a state change plus bump that it
 * missed makes futex_wait return at once.  0 or ETIMEDOUT.
 */
static int sleep_on(hps_prw_t *r, int (*ready)(hps_prw_t *), _Atomic uint32_t *seq,
                    _Atomic uint32_t *sleepers, clockid_t clock, const struct timespec *abs)
{
    hps_wait_t w = HPS_WAIT_INIT;
    for (int i = 0; i < SPIN_STEPS; i++) {
        if (ready(r))
            return 0;
        hps_wait_step(&w);
    }
    int rc = 0;
    hps_faa_seq_cst(sleepers, 1);
    for (;;) {
        uint32_t v = hps_load_seq_cst(seq);
        if (ready(r))
            break;
        if (hps_futex_wait(seq, v, clock, abs, 0) == ETIMEDOUT) {
            rc = ready(r) ? 0 : ETIMEDOUT;
            break;
        }
    }
    hps_fas_seq_cst(sleepers, 1);
    return rc;
}

/* Conditions the waiters wait for. */
static int phase_over(hps_prw_t *r) { return !(hps_load_seq_cst(&r->state) & WRITER); }
static int may_read(hps_prw_t *r)
{
    return (hps_load_seq_cst(&r->state) & WRITER) || hps_load_seq_cst(&r->wwait) == 0;
}
static int may_write(hps_prw_t *r)
{
    uint32_t s = hps_load_seq_cst(&r->state);
    return s == 0 || (s & HANDOVER);
}

static int check_args(hps_prw_t *r, clockid_t clock, const struct timespec *abs)
{
    if (abs && ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) || !hps_deadline_valid(abs)))
        return EINVAL;
    if (hps_load_relaxed(&r->cur_writer) == hps_preload_tid() &&
        (hps_load_seq_cst(&r->state) & WRITER))
        return EDEADLK;
    return 0;
}

static int acquire_read(hps_prw_t *r, clockid_t clock, const struct timespec *abs)
{
    int rc = check_args(r, clock, abs);
    if (rc)
        return rc;
    for (;;) {
        uint32_t s = hps_load_seq_cst(&r->state);
        if ((s & READERS) == READERS)
            return EAGAIN;
        if (s & WRITER) {
            /* A write phase: count ourselves in; the writer's release
             * makes us a holder. */
            if (!hps_cas_weak_seq_cst(&r->state, &s, s + 1))
                continue;
            if (sleep_on(r, phase_over, &r->rseq, &r->rsleep, clock, abs) == 0)
                return 0;
            /* Timed out: leave, unless the phase ended meanwhile (then we
             * hold the lock, as if it happened before the deadline). */
            s = hps_load_seq_cst(&r->state);
            while (s & WRITER)
                if (hps_cas_weak_seq_cst(&r->state, &s, s - 1))
                    return ETIMEDOUT;
            return 0;
        }
        if (readers_yield(r) && hps_load_seq_cst(&r->wwait) != 0) {
            /* Readers hold it and a writer waits: wait for the writer. */
            if (sleep_on(r, may_read, &r->rseq, &r->rsleep, clock, abs) != 0)
                return ETIMEDOUT;
            continue;
        }
        if (hps_cas_weak_seq_cst(&r->state, &s, s + 1))
            return 0;
    }
}

/* Claim the lock as a registered waiting writer: 1 = ours. */
static int claim_write(hps_prw_t *r)
{
    uint32_t s = hps_load_seq_cst(&r->state);
    if (s == 0)
        return hps_cas_seq_cst(&r->state, &s, WRITER);
    if (s & HANDOVER)
        return hps_cas_seq_cst(&r->state, &s, s & ~HANDOVER);
    return 0;
}

static int acquire_write(hps_prw_t *r, clockid_t clock, const struct timespec *abs)
{
    int rc = check_args(r, clock, abs);
    if (rc || try_write(r) == 0)
        return rc;
    /* seq_cst: registered before we look at the state (hand-over Dekker). */
    hps_faa_seq_cst(&r->wwait, 1);
    for (;;) {
        if (claim_write(r))
            break;
        if (sleep_on(r, may_write, &r->wseq, &r->wsleep, clock, abs) == 0)
            continue;
        /* Timed out: unregister, then take a hand-over made to us all. */
        uint32_t left = hps_fas_seq_cst(&r->wwait, 1) - 1;
        uint32_t s = hps_load_seq_cst(&r->state);
        if ((s & HANDOVER) && hps_cas_seq_cst(&r->state, &s, s & ~HANDOVER)) {
            hps_store_relaxed(&r->cur_writer, hps_preload_tid());
            return 0;
        }
        if (left == 0 && readers_yield(r))
            wake_readers(r);        /* readers held back for us may go now */
        return ETIMEDOUT;
    }
    hps_fas_seq_cst(&r->wwait, 1);
    hps_store_relaxed(&r->cur_writer, hps_preload_tid());
    return 0;
}

static int unlock_write(hps_prw_t *r)
{
    hps_store_relaxed(&r->cur_writer, 0);
    if (writers_first(r) && hps_load_seq_cst(&r->wwait) != 0) {
        /* Hand over to a waiting writer: the lock stays write-held. */
        hps_fetch_or_seq_cst(&r->state, HANDOVER);
        if (hps_load_seq_cst(&r->wwait) != 0) {
            wake_writer(r);
            return 0;
        }
        /* They all timed out meanwhile: take it back, unless one of them
         * already claimed it. */
        uint32_t s = hps_load_seq_cst(&r->state);
        if (!(s & HANDOVER) || !hps_cas_seq_cst(&r->state, &s, s & ~HANDOVER))
            return 0;
    }
    /* End the write phase: the readers counted in now hold the lock. */
    uint32_t s = hps_load_seq_cst(&r->state);
    while (!hps_cas_weak_seq_cst(&r->state, &s, s & READERS))
        ;
    if ((s & READERS) != 0 || hps_load_seq_cst(&r->wwait) == 0)
        wake_readers(r);
    if ((s & READERS) == 0)
        wake_writer(r);
    return 0;
}

HPS_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
    int pshared = PTHREAD_PROCESS_PRIVATE, kind = PTHREAD_RWLOCK_DEFAULT_NP;
    if (attr) {
        pthread_rwlockattr_getpshared(attr, &pshared);
        pthread_rwlockattr_getkind_np(attr, &kind);
    }
    if (pshared == PTHREAD_PROCESS_SHARED)
        return hps_preload_real()->rw_init(l, attr);
    memset(l, 0, sizeof *l);
    RW(l)->flags = (uint32_t)kind;
    return 0;
}

HPS_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_destroy(l);
    return 0;
}

HPS_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    if (hps_unlikely(RW(l)->shared))
        return hps_preload_real()->rw_rdlock(l);
    /* Fast path: no writer, and no waiting writer to let go first. */
    hps_prw_t *r = RW(l);
    uint32_t s = hps_load_relaxed(&r->state);
    if (hps_likely(!(s & WRITER) && !readers_yield(r) && s < READERS &&
                   hps_cas_seq_cst(&r->state, &s, s + 1)))
        return 0;
    return acquire_read(r, CLOCK_REALTIME, NULL);
}

HPS_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    if (hps_unlikely(RW(l)->shared))
        return hps_preload_real()->rw_wrlock(l);
    return acquire_write(RW(l), CLOCK_REALTIME, NULL);
}

HPS_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_tryrdlock(l);
    return try_read(RW(l));
}

HPS_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_trywrlock(l);
    return try_write(RW(l));
}

HPS_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_timedrdlock(l, abs);
    return acquire_read(RW(l), CLOCK_REALTIME, abs);
}

HPS_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_timedwrlock(l, abs);
    return acquire_write(RW(l), CLOCK_REALTIME, abs);
}

HPS_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_clockrdlock(l, clock, abs);
    return acquire_read(RW(l), clock, abs);
}

HPS_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
    if (RW(l)->shared)
        return hps_preload_real()->rw_clockwrlock(l, clock, abs);
    return acquire_write(RW(l), clock, abs);
}

HPS_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    hps_prw_t *r = RW(l);
    if (r->shared)
        return hps_preload_real()->rw_unlock(l);
    uint32_t s = hps_load_seq_cst(&r->state);
    if (s & WRITER)
        return unlock_write(r);
    if ((s & READERS) == 0)
        return EPERM;           /* not locked: refuse rather than corrupt */
    s = hps_fas_seq_cst(&r->state, 1) - 1;
    if (s == 0)
        wake_writer(r);         /* the last reader: a writer may go */
    return 0;
}
