// SPDX-License-Identifier: MIT
/*
 * pthread_barrier_* with spin-then-futex waiting.
 *
 * One 64-bit word holds the arrivals of the current round (low half) and the
 * round number (high half, the futex word).  A thread arrives with one
 * fetch_add, which gives it its place: the n-th arrival since the current
 * round began belongs to round `round + (n-1)/count` and is that round's
 * last if count divides n.  The last of a round ends it with one more
 * add, of one round minus `count` arrivals, and returns
 * PTHREAD_BARRIER_SERIAL_THREAD; the others wait until the round number has
 * passed theirs.  Threads beyond `count` (POSIX does not forbid them) thus
 * simply form the next rounds, and rounds ended out of order still add up.
 *
 * Waiting: spin while threads can all be running (count <= CPUs), with the
 * learned bound of spin.c, then sleep on the round number; the last arrival
 * wakes only when someone sleeps (`sleepers`, a Dekker pair with the round
 * number, hence seq_cst on both sides).  A signal does not end the wait, as
 * POSIX requires, and this is not a cancellation point.
 *
 * A barrier may be destroyed as soon as its last round is over, while woken
 * threads may still be on their way out: `inside` counts the threads in
 * pthread_barrier_wait, and destroy waits for it to drop to zero (each
 * thread's decrement is its last touch).  Destroying a barrier with threads
 * blocked in an unfinished round is undefined; glibc then waits for ever,
 * this returns EBUSY.
 *
 * Process-shared barriers use shared futexes; every process using one must
 * run under the interposer (as for condition variables).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "preload.h"
#include "../prim/futex.h"

typedef struct hps_pbar {
    hps_au64 word;                  /* 0: arrivals this round | round << 32 */
    uint32_t count;                 /* 8: glibc keeps its count here too */
    uint32_t shared;                /* 12: and its sharing flag */
    hps_au32 sleepers;              /* 16: threads asleep (or about to be) */
    hps_au32 inside;                /* 20: threads in pthread_barrier_wait */
    hps_preload_spin_t spin;             /* 24: learned spinning */
} hps_pbar_t;
_Static_assert(sizeof(hps_pbar_t) <= sizeof(pthread_barrier_t), "barrier layout");

#define PB(b)        ((hps_pbar_t *)(void *)(b))
#define ROUND_ONE    (1ull << 32)
#define ROUND_MASK   (~0ull << 32)
#define ROUND(w)     ((uint32_t)((w) >> 32))
#define ARRIVED(w)   ((uint32_t)(w))
/* glibc's limit: counts at or above this are EINVAL (checked in semantics). */
#define COUNT_LIMIT  (UINT_MAX / 2)

static inline void *round_word(hps_pbar_t *b)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint32_t *)(void *)&b->word + 1;
#else
    return (uint32_t *)(void *)&b->word;
#endif
}

/* Has round `mine` ended in word `w`?  (Wrap-around safe.) */
static inline int passed(uint64_t w, uint32_t mine)
{
    return (int32_t)(ROUND(w) - mine) > 0;
}

static void wait_round(hps_pbar_t *b, uint32_t mine)
{
    int spin = b->count <= (uint32_t)hps_preload_ncpus();
    for (;;) {
        /* Acquire: the round's end publishes every member's work to us. */
        uint64_t w = hps_load_acquire(&b->word);
        if (passed(w, mine))
            return;
        /* The round number moving is not always ours (more than `count`
         * threads): spin again then. */
        if (!spin || !hps_preload_spin(&b->word, ROUND_MASK, w & ROUND_MASK, &b->spin))
            break;
    }
    /* seq_cst: counted in before re-reading the word (see the header). */
    hps_faa_seq_cst(&b->sleepers, 1);
    for (;;) {
        uint64_t w = hps_load_seq_cst(&b->word);
        if (passed(w, mine))
            break;
        /* EINTR (a signal) and spurious returns: wait on. */
        hps_futex_wait(round_word(b), ROUND(w), CLOCK_REALTIME, NULL, b->shared != 0);
    }
    hps_fas_relaxed(&b->sleepers, 1);
}

HPS_EXPORT int pthread_barrier_wait(pthread_barrier_t *bar)
{
    hps_pbar_t *b = PB(bar);
    int stats = hps_unlikely(!hps_preload_plain) && hps_preload_stats_on();
    uint64_t t0 = stats ? hps_preload_now_ns() : 0;
    hps_faa_relaxed(&b->inside, 1);
    uint32_t count = b->count;
    int shared = b->shared != 0;
    /* acq_rel: releases our work before the barrier to the round's other
     * members, and lets the last arrival acquire everyone's. */
    uint64_t old = hps_faa_acq_rel(&b->word, 1);
    uint32_t n = ARRIVED(old) + 1;
    uint32_t mine = ROUND(old) + (n - 1) / count;
    int rc = 0;
    if (n % count == 0) {
        /* seq_cst: ordered before the read of `sleepers` (Dekker pair);
         * also a release of all the work gathered above to the waiters. */
        hps_faa_seq_cst(&b->word, ROUND_ONE - count);
        if (hps_load_seq_cst(&b->sleepers) != 0)
            hps_futex_wake(round_word(b), INT_MAX, shared);
        rc = PTHREAD_BARRIER_SERIAL_THREAD;
    } else {
        wait_round(b, mine);
    }
    if (stats) {
        /* Keyed by address: the barrier itself is not touched. */
        void *caller = __builtin_return_address(0);
        hps_preload_stats_record(b, HPS_STATS_BARRIER, caller, rc == 0, rc == 0 ? hps_preload_now_ns() - t0 : 0);
        if (rc)
            hps_preload_stats_extra(b, HPS_STATS_BARRIER, caller);
    }
    /* Release, and our last touch: destroy may go ahead once it reads 0. */
    hps_fas_release(&b->inside, 1);
    return rc;
}

HPS_EXPORT int pthread_barrier_init(pthread_barrier_t *restrict bar,
                                    const pthread_barrierattr_t *restrict attr, unsigned count)
{
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (count == 0 || count >= COUNT_LIMIT)
        return EINVAL;
    if (attr)
        pthread_barrierattr_getpshared(attr, &pshared);
    memset(bar, 0, sizeof *bar);
    hps_pbar_t *b = PB(bar);
    b->count = count;
    b->shared = pshared == PTHREAD_PROCESS_SHARED;
    return 0;
}

HPS_EXPORT int pthread_barrier_destroy(pthread_barrier_t *bar)
{
    hps_pbar_t *b = PB(bar);
    if (ARRIVED(hps_load_relaxed(&b->word)) != 0)
        return EBUSY;
    /* Acquire: pairs with each leaving thread's release of `inside`, so
     * their last accesses happen before whatever reuses the memory. */
    hps_wait_t w = HPS_WAIT_INIT;
    while (hps_load_acquire(&b->inside) != 0)
        hps_wait_step(&w);
    return 0;
}
