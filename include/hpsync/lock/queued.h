/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/queued.h - what the queue locks (ticket, MCS, Hemlock) share:
 * the lock word itself, and the rule for jumping the queue.
 *
 * Each queue lock is a lock word plus a waiting room run by its classic
 * algorithm.  A contended thread queues in the room; the thread at the head
 * of the room is the only one that spins on the lock word (so waiting stays
 * local, as MCS intends), takes it, and then lets the next waiter become
 * head.  Release is a single store to the lock word.
 *
 * While the head is actively spinning (`head` holds this process's fork tag,
 * hps_fork_tag), newcomers queue behind it: waiters are served in the room's
 * order (FIFO).  A tag from before a fork() names a head that does not exist
 * in the child, so a child never queues behind it.  When the head stops
 * spinning because it has waited long (it yields or naps: it has probably
 * lost its CPU), newcomers may take a free lock word directly.  That is what
 * keeps a FIFO lock from collapsing when threads outnumber cores: strict
 * hand-over to a preempted successor stalls everyone for a time slice.
 * Mutual exclusion rests only on the lock word; the rule is a heuristic
 * about order, never about safety.
 *
 * Fast paths: lock = load of `head` + compare with the fork tag + XCHG +
 * branch; unlock = one release store.
 */
#ifndef HPSYNC_LOCK_QUEUED_H
#define HPSYNC_LOCK_QUEUED_H

#include <stdbool.h>
#include <time.h>
#include "hpsync/pr.h"
#include "hpsync/lock/wait.h"

HPS_EXTERN_C_BEGIN

typedef struct hps_qword {
    hps_au32 locked;        /* 0 free, 1 held */
    hps_au32 head;          /* hps_fork_tag while the room's head spins on `locked` */
} hps_qword_t;
#define HPS_QWORD_INITIALIZER { HPS_ATOMIC_INIT(0), HPS_ATOMIC_INIT(0) }

/* Take `locked` as the room's head (out of line, in src/lock/queued.c). */
void hps_qword_head_acquire(hps_qword_t *q);
/*
 * Timed acquisition of a 0/1 lock word (queue locks and TTAS): a timed
 * waiter cannot leave a queue, so it does not join one; it competes for the
 * free word directly under the usual waiting policy until the deadline.
 */
int hps_word_timedlock(hps_au32 *word, clockid_t clock, const struct timespec *abstime);

HPS_INLINE void hps_qword_init(hps_qword_t *q)
{
    hps_store_relaxed(&q->locked, 0);
    hps_store_relaxed(&q->head, 0);
}

HPS_INLINE bool hps_qword_fast(hps_qword_t *q)
{
    /* Relaxed read of `head`: only a hint about order.  Acquire on the XCHG.
     * A head from before a fork (another tag) is not waiting in this process. */
    return hps_load_relaxed(&q->head) != hps_fork_tag && hps_xchg_acquire(&q->locked, 1) == 0;
}

HPS_INLINE bool hps_qword_trylock(hps_qword_t *q)
{
    return hps_load_relaxed(&q->locked) == 0 && hps_xchg_acquire(&q->locked, 1) == 0;
}

/* Release: publishes the critical section to whoever takes the word next. */
HPS_INLINE void hps_qword_unlock(hps_qword_t *q) { hps_store_release(&q->locked, 0); }

HPS_INLINE bool hps_qword_is_locked(hps_qword_t *q) { return hps_load_relaxed(&q->locked) != 0; }

HPS_INLINE int hps_qword_timedlock(hps_qword_t *q, clockid_t clock, const struct timespec *abstime)
{
    return hps_word_timedlock(&q->locked, clock, abstime);
}

/*
 * The public face every queue lock shares: `name`_lock tries the fast path
 * and falls back to `name`_lock_slow; the rest act on the lock word.
 * Expanded once per algorithm header, so each keeps its own typed API.
 */
#define HPS_QUEUED_LOCK_API(name)                                               \
    void hps_##name##_lock_slow(hps_##name##_t *l);                             \
    HPS_INLINE void hps_##name##_lock(hps_##name##_t *l)                        \
    {                                                                           \
        if (hps_likely(hps_qword_fast(&l->q)))                                  \
            return;                                                             \
        hps_##name##_lock_slow(l);                                              \
    }                                                                           \
    HPS_INLINE bool hps_##name##_trylock(hps_##name##_t *l) { return hps_qword_trylock(&l->q); } \
    HPS_INLINE void hps_##name##_unlock(hps_##name##_t *l) { hps_qword_unlock(&l->q); }          \
    HPS_INLINE bool hps_##name##_is_locked(hps_##name##_t *l) { return hps_qword_is_locked(&l->q); } \
    HPS_INLINE int hps_##name##_timedlock(hps_##name##_t *l, clockid_t clock,  \
                                          const struct timespec *abstime)       \
    {                                                                           \
        return hps_qword_timedlock(&l->q, clock, abstime);                      \
    }

HPS_EXTERN_C_END

#endif
