// SPDX-License-Identifier: MIT
/* Adaptive lock slow path: learned spin, then park (see hpsync/lock/adaptive.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hpsync/lock.h"
#include "../common/futex.h"

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

HPS_EXPORT HPS_NOINLINE int hps_adaptive_lock_slow(hps_adaptive_t *l, clockid_t clock,
                                                   const struct timespec *abstime)
{
    uint32_t est = hps_load_relaxed(&l->spin_est);
    uint32_t max = 2 * est + 8;
    if (max > 4 * hps_wait_spin_limit)
        max = 4 * hps_wait_spin_limit;
    uint32_t i;
    for (i = 0; i < max; i++) {
        /* Stop spinning once others are parked: queueing behind them in
         * user space only burns the core the owner may need. */
        if (hps_load_relaxed(&l->parked) != 0)
            break;
        if (hps_load_relaxed(&l->locked) == 0) {
            uint32_t e = 0;
            if (hps_cas_acquire(&l->locked, &e, 1)) {
                /* Relaxed: the estimate is a hint, racing updates are fine. */
                hps_store_relaxed(&l->spin_est, est + (uint32_t)((int32_t)(i - est) / 8));
                return 0;
            }
        }
        hps_cpu_relax();
    }
    /* Spinning did not pay (the owner holds long, or is not running because
     * threads outnumber cores): halve the estimate.  Unlike glibc's adaptive
     * mutex, which grows it here, this lets an oversubscribed lock stop
     * burning the CPU its owner needs. */
    hps_store_relaxed(&l->spin_est, est / 2);

    if (abstime && !hps_deadline_valid(abstime))
        return EINVAL;
    /* seq_cst: the count must be visible before the barrier and re-check. */
    atomic_fetch_add(&l->parked, 1);
    int exact = heavy_barrier();
    int rc = 0;
    for (;;) {
        /* Acquire: we own the lock from here. */
        if (hps_xchg_acquire(&l->locked, 1) == 0)
            break;
        int r;
        if (exact) {
            r = hps_futex_wait(&l->locked, 1, clock, abstime, 0);
        } else {
            /* No membarrier: a wake-up can be missed, so never sleep long. */
            struct timespec nap;
            clock_gettime(CLOCK_MONOTONIC, &nap);
            add_ns(&nap, 200000);
            hps_futex_wait(&l->locked, 1, CLOCK_MONOTONIC, &nap, 0);
            r = abstime && hps_deadline_passed(clock, abstime) ? ETIMEDOUT : 0;
        }
        /* We ran: unlockers may wake another thread now.  seq_cst, so this
         * store is ordered before our next XCHG (see hps_adaptive_wake). */
        atomic_store(&l->waking, 0);
        if (r == ETIMEDOUT) {
            if (hps_xchg_acquire(&l->locked, 1) != 0)
                rc = ETIMEDOUT;
            break;
        }
    }
    atomic_fetch_sub(&l->parked, 1);
    return rc;
}

HPS_EXPORT HPS_NOINLINE void hps_adaptive_wake(hps_adaptive_t *l)
{
    /*
     * Wake one thread unless a woken one has not run yet.  The exchange is a
     * full barrier after our release store of `locked`; the woken thread
     * clears `waking` before its own exchange on `locked`.  So either we see
     * its clear (and wake someone), or it sees the lock free: no waiter is
     * left asleep on a free lock.  If nobody was actually asleep, undo.
     */
    if (atomic_exchange(&l->waking, 1) == 0 && hps_futex_wake(&l->locked, 1, 0) == 0)
        atomic_store(&l->waking, 0);
}
