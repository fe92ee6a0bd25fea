// SPDX-License-Identifier: MIT
/* Adaptive lock slow path: learned spin, then futex park (word = 2). */
#include <errno.h>
#include "hpsync/lock.h"
#include "../common/futex.h"

/* Upper bound on spin rounds, whatever the estimate says (HPSYNC_SPIN). */
extern uint32_t hps_wait_spin_limit;

HPS_EXPORT HPS_NOINLINE int hps_adaptive_lock_slow(hps_adaptive_t *l, clockid_t clock,
                                                   const struct timespec *abstime)
{
    /*
     * Spin only while the word reads 1: a 2 means threads are already parked,
     * and spinning behind them would only delay our own parking.
     */
    uint32_t est = hps_load_relaxed(&l->spin_est);
    uint32_t max = 2 * est + 16;
    if (max > 4 * hps_wait_spin_limit)
        max = 4 * hps_wait_spin_limit;
    uint32_t i;
    for (i = 0; i < max; i++) {
        uint32_t v = hps_load_relaxed(&l->word);
        if (v == 0) {
            uint32_t e = 0;
            if (hps_cas_acquire(&l->word, &e, 1)) {
                /* Relaxed: the estimate is a hint, racing updates are fine. */
                hps_store_relaxed(&l->spin_est, est + ((int32_t)(i - est) / 8));
                return 0;
            }
        } else if (v == 2) {
            break;
        }
        hps_cpu_relax();
    }
    hps_store_relaxed(&l->spin_est, est + ((int32_t)(max - est) / 8));

    if (abstime && !hps_deadline_valid(abstime))
        return EINVAL;
    /* Acquire on the exchange that finds the word 0: we own the lock then. */
    while (hps_xchg_acquire(&l->word, 2) != 0) {
        int r = hps_futex_wait(&l->word, 2, clock, abstime, 0);
        if (r == ETIMEDOUT)
            return ETIMEDOUT;
    }
    return 0;
}

HPS_EXPORT HPS_NOINLINE void hps_adaptive_wake(hps_adaptive_t *l)
{
    hps_futex_wake(&l->word, 1, 0);
}
