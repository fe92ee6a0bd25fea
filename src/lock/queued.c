// SPDX-License-Identifier: MIT
/* The queue head's side of the queue locks (see hpsync/lock/queued.h). */
#include <errno.h>
#include "hpsync/lock.h"

HPS_EXPORT HPS_NOINLINE void hps_qword_head_acquire(hps_qword_t *q)
{
    hps_wait_t w = HPS_WAIT_INIT;
    /* Relaxed: `head` only steers newcomers; it guards no data. */
    hps_store_relaxed(&q->head, 1);
    for (;;) {
        if (hps_load_relaxed(&q->locked) == 0 && hps_xchg_acquire(&q->locked, 1) == 0)
            break;
        hps_wait_step(&w);
        /* Past the spinning phase we are likely to lose the CPU: stop
         * holding newcomers back, or a preempted head stalls everyone. */
        if (w.n == hps_wait_spin_limit)
            hps_store_relaxed(&q->head, 0);
    }
    hps_store_relaxed(&q->head, 0);
}

static bool word_try(hps_au32 *word)
{
    return hps_load_relaxed(word) == 0 && hps_xchg_acquire(word, 1) == 0;
}

HPS_EXPORT int hps_word_timedlock(hps_au32 *word, clockid_t clock, const struct timespec *abstime)
{
    if (word_try(word))
        return 0;
    if (!hps_deadline_valid(abstime))
        return EINVAL;
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        if (hps_deadline_passed(clock, abstime))
            return word_try(word) ? 0 : ETIMEDOUT;
        hps_wait_step(&w);
        if (word_try(word))
            return 0;
    }
}
