// SPDX-License-Identifier: MIT
/* TTAS slow path: read until free, then XCHG; back off on each failure. */
#include "hpsync/lock.h"
#include <errno.h>

HPS_EXPORT HPS_NOINLINE void hps_ttas_lock_slow(hps_ttas_t *l)
{
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        while (hps_load_relaxed(&l->word) != 0)
            hps_wait_step(&w);
        if (hps_xchg_acquire(&l->word, 1) == 0)
            return;
        hps_wait_step(&w);
    }
}

HPS_EXPORT int hps_ttas_timedlock(hps_ttas_t *l, clockid_t clock, const struct timespec *abstime)
{
    return hps_word_timedlock(&l->word, clock, abstime);
}
