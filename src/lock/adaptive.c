// SPDX-License-Identifier: MIT
/* Adaptive lock slow path: learned spin, then park (see hpsync/lock/adaptive.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hpsync/lock.h"
#include "../prim/futex.h"

/* 0 unknown, 1 registered, 2 unavailable (then parkers nap with a timeout). */
static hps_au32 g_mb_state;

/* Called by a parker after counting itself in `parked`; returns 1 if the
 * process-wide barrier was issued. */
static int heavy_barrier(void)
{
    uint32_t st = hps_load_acquire(&g_mb_state);
    if (hps_likely(st == 1)) {
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
            return 1;
        /* EPERM: e.g. a forked child whose new address space is not
         * registered yet.  Register (idempotent) and try once more. */
        st = 0;
    }
    if (st == 0) {
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
            syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
            hps_store_release(&g_mb_state, 1);
            return 1;
        }
        hps_store_release(&g_mb_state, 2);
    }
    return 0;
}

static void add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

/*
 * Parking protocol.  `parked` = count of parkers | HPS_ADAPTIVE_FENCED.
 *
 * The unlocker's read of `parked` may pass its store of `locked` (x86
 * store-load reordering), so a parker that counted itself can miss an
 * unlock and sleep on a free lock.  Two defences:
 *  - A sleep is bounded (1 ms) until the current parking epoch (the span
 *    during which the count stays above 0) is "fenced": a parker whose
 *    bounded sleep ran out issues membarrier(PRIVATE_EXPEDITED), sets the
 *    FENCED bit and re-checks the lock.  After that barrier, every unlocker
 *    that read the count as 0 has its store visible, and every later
 *    unlocker reads the count after this epoch began, so it wakes someone:
 *    sleeps may be unbounded.  The bit is cleared atomically with the count
 *    reaching 0, so it always describes the current epoch.
 *  - Short waits (the common case: the owner releases within microseconds
 *    and wakes us) never pay for the barrier, which costs 10-45 us on a KVM
 *    guest because it interrupts every CPU running the process.
 * Without membarrier, epochs are never fenced and every sleep is bounded.
 *
 * "Unbounded" sleeps still end after hps_adaptive_backstop_ns (50 ms), a
 * backstop for the one wake-up the protocol can lose (hps_adaptive_unclaim_):
 * a parker that went to sleep while an unlocker's claim of the wake-up was in its
 * call, on a holder whose unlock read the claim and skipped.  Most of those
 * the claimer catches; the rest (the holder's release still in its store
 * buffer) cost the parker at most this long, never a hang.  A parker asleep
 * behind a long hold wakes 20 times a second for it: a few microseconds.
 */
#define BOUNDED_SLEEP_NS 1000000L
HPS_EXPORT long hps_adaptive_backstop_ns = 50000000L;

static void leave(hps_adaptive_t *l)
{
    uint32_t old = hps_load_relaxed(&l->parked), nv;
    /* seq_cst, as the count-in: the count and its FENCED bit (cleared
     * together as the epoch ends) stay in one total order with the
     * count-ins and fence bits of other parkers. */
    do {
        nv = (old & ~HPS_ADAPTIVE_FENCED) == 1 ? 0 : old - 1;
    } while (!hps_cas_weak_seq_cst(&l->parked, &old, nv));
}

HPS_EXPORT HPS_NOINLINE int hps_adaptive_lock_slow(hps_adaptive_t *l, clockid_t clock,
                                                   const struct timespec *abstime)
{
    uint32_t est = hps_load_relaxed(&l->spin_est);
    uint32_t max = 2 * est + 8;
    if (max > 4 * hps_wait_spin_limit)
        max = 4 * hps_wait_spin_limit;
    for (uint32_t i = 0; i < max; i++) {
        /* Stop spinning once others are parked: queueing behind them in
         * user space only burns the core the owner may need. */
        if (hps_load_relaxed(&l->parked) != 0)
            break;
        if (hps_load_relaxed(&l->locked) == 0 && hps_xchg_acquire(&l->locked, 1) == 0) {
            /* Relaxed: the estimate is a hint, racing updates are fine. */
            hps_store_relaxed(&l->spin_est, (uint16_t)(est + ((int32_t)i - (int32_t)est) / 8));
            return 0;
        }
        hps_cpu_relax();
    }
    /* Spinning did not pay (the owner holds long, or is not running because
     * threads outnumber cores): halve the estimate.  Unlike glibc's adaptive
     * mutex, which grows it here, this lets an oversubscribed lock stop
     * burning the CPU its owner needs. */
    hps_store_relaxed(&l->spin_est, (uint16_t)(est / 2));

    if (abstime && hps_deadline_check(clock, abstime) != 0)
        return EINVAL;
    /* seq_cst: counted in before we re-check `locked` below. */
    hps_faa_seq_cst(&l->parked, 1);
    int rc = 0;
    int consumed = 0;           /* we took a wake-up and hold `waking` */
    for (;;) {
        /* Acquire: we own the lock from here. */
        if (hps_xchg_acquire(&l->locked, 1) == 0)
            break;
        /*
         * Going back to sleep after a wake-up: let unlockers wake another
         * thread (see hps_adaptive_wake).  seq_cst: ordered before the
         * kernel's re-check of `locked`.  An unlocker may have read `waking`
         * as still set just before (its read can pass its own store of
         * `locked`) and skipped the wake, while our re-check missed its
         * store: so this one sleep is bounded.
         */
        long ns = hps_adaptive_backstop_ns;
        if (consumed) {
            hps_store_seq_cst(&l->waking, 0);
            consumed = 0;
            ns = BOUNDED_SLEEP_NS;
        }
        int fenced = (hps_load_relaxed(&l->parked) & HPS_ADAPTIVE_FENCED) != 0;
        if (!fenced)
            ns = BOUNDED_SLEEP_NS;
        struct timespec lim;
        const struct timespec *until = &lim;
        clockid_t c = abstime ? clock : CLOCK_MONOTONIC;
        clock_gettime(c, &lim);
        add_ns(&lim, ns);
        if (abstime && (abstime->tv_sec < lim.tv_sec ||
                        (abstime->tv_sec == lim.tv_sec && abstime->tv_nsec < lim.tv_nsec)))
            until = abstime;
        int r = hps_futex_wait(&l->locked, 1, c, until, 0);
        if (r == 0) {
            /* Only a thread some unlocker woke returns 0: that unlocker set
             * `waking`, and it is ours to clear. */
            consumed = 1;
        } else if (r == ETIMEDOUT) {
            int passed = abstime ? hps_deadline_passed(clock, abstime) : 0;
            if (passed == EINVAL) {
                rc = EINVAL;
                break;
            }
            if (passed == ETIMEDOUT) {
                if (hps_xchg_acquire(&l->locked, 1) != 0)
                    rc = ETIMEDOUT;
                break;
            }
            /* A bounded sleep ran out in an unfenced epoch: fence it. */
            /* seq_cst: the bit is set after the barrier, in the same total
             * order as the count-ins it covers. */
            if (!fenced && heavy_barrier())
                hps_fetch_or_seq_cst(&l->parked, HPS_ADAPTIVE_FENCED);
        }
    }
    /* seq_cst: as the store before going back to sleep above. */
    if (consumed)
        hps_store_seq_cst(&l->waking, 0);
    leave(l);
    return rc;
}

/*
 * A timed lock without a deadline is an error for every algorithm, rather
 * than an untimed wait here and EINVAL elsewhere.  Checked before spinning,
 * as the other algorithms check right after their one try.
 */
HPS_EXPORT HPS_NOINLINE int hps_adaptive_timedlock_slow(hps_adaptive_t *l, clockid_t clock,
                                                        const struct timespec *abstime)
{
    int rc = hps_deadline_check(clock, abstime);
    return rc != 0 ? rc : hps_adaptive_lock_slow(l, clock, abstime);
}

/*
 * A claim of `waking` woke nobody (no thread was asleep at that moment;
 * most calls find nobody, 99.9 % at 4 threads on 2 CPUs in
 * hps-bench-locks): give it back.  An unlocker that read the claim
 * meanwhile skipped its own wake-up, trusting a woken thread to be on its
 * way; none is, and a parker may have gone to sleep on that unlocker's
 * hold after our futex_wake found nobody.  So: after the release of the
 * claim, a free lock with parkers gets one more wake-up.  That catches the
 * unlocker whose release is visible by now.  One whose release is still
 * in its store buffer (it read `waking` before its store of `locked` left)
 * can pass unseen; closing that with a fence in every unlock with parkers
 * made each release visible at once, so the other CPU's waiter took the
 * lock at every release: 0.4x the throughput at 4-16 threads on 2 CPUs.
 * That parker's sleep ends at its backstop instead (hps_adaptive_backstop_ns).
 * The extra wake-up claims nothing, so it opens no window of its own.
 * (With neither, 8 threads on 2 CPUs under the interposer slept for good
 * on two free mutexes: lockset.mutex.preload, once in ~1000 runs.)
 */
HPS_EXPORT HPS_NOINLINE void hps_adaptive_unclaim_(hps_adaptive_t *l)
{
    hps_store_seq_cst(&l->waking, 0);
    if (hps_load_relaxed(&l->locked) == 0 && (hps_load_relaxed(&l->parked) & ~HPS_ADAPTIVE_FENCED) != 0)
        (void)hps_futex_wake(&l->locked, 1, 0);
}

HPS_EXPORT HPS_NOINLINE void hps_adaptive_wake(hps_adaptive_t *l)
{
    /*
     * Wake one thread unless a woken one has not settled yet (gone back to
     * sleep, or taken the lock).  While it is on its way, the running owner
     * may take and release the lock many times without a system call each
     * time, as with glibc's mutex.  (Measured here at 16 threads on 2 cores:
     * re-arming as soon as the woken thread ran, or letting timed-out
     * sleepers re-arm, cost up to two thirds of the throughput, because the
     * owner then paid a futex call for nearly every release.)  The plain read
     * first keeps the owner from bouncing `waking`'s line on every unlock.
     * `waking` holds the fork tag, so a wake-up pending in the parent at
     * fork() does not block wake-ups in the child.  If nobody was asleep,
     * undo (hps_adaptive_unclaim_).
     */
    uint32_t tag = hps_fork_tag;
    /* seq_cst: claiming `waking` is ordered after our store of `locked`
     * and before the wake-up; the parker clears it with the same order. */
    if (hps_load_relaxed(&l->waking) != tag && hps_xchg_seq_cst(&l->waking, tag) != tag &&
        hps_futex_wake(&l->locked, 1, 0) == 0)
        hps_adaptive_unclaim_(l);
}
