// SPDX-License-Identifier: MIT
/* The queue head's side of the queue locks (see hpsync/lock/queued.h). */
#include <errno.h>
#include "hpsync/lock.h"

static bool word_try(hps_au32 *word)
{
    return hps_load_relaxed(word) == 0 && hps_xchg_acquire(word, 1) == 0;
}

/*
 * The head says it is waiting (`head` = hps_fork_tag) exactly while it is
 * running and polling: through the spinning phase, and again for a short
 * window each time it comes back from a yield or a nap.  Newcomers queue
 * behind a running head, so the lock stays FIFO among running threads;
 * while the head is off the CPU, a free word may be taken by whoever runs.
 */
HPS_EXPORT HPS_NOINLINE void hps_qword_head_acquire(hps_qword_t *q)
{
    hps_wait_t w = HPS_WAIT_INIT;
    /* Relaxed: `head` only steers newcomers; it guards no data. */
    hps_store_relaxed(&q->head, hps_fork_tag);
    for (;;) {
        if (word_try(&q->locked))
            break;
        if (w.n < hps_wait_spin_limit) {
            hps_wait_step(&w);
            continue;
        }
        hps_store_relaxed(&q->head, 0);
        hps_wait_step(&w);              /* yield or nap */
        hps_store_relaxed(&q->head, hps_fork_tag);
        /* About 1 us of polling: enough to catch the owner's next release
         * when critical sections are short. */
        for (int i = 0; i < 40 && hps_load_relaxed(&q->locked) != 0; i++)
            hps_cpu_relax();
    }
    hps_store_relaxed(&q->head, 0);
}

HPS_EXPORT int hps_word_timedlock(hps_au32 *word, clockid_t clock, const struct timespec *abstime)
{
    if (word_try(word))
        return 0;
    int rc = hps_deadline_check(clock, abstime);
    if (rc != 0)
        return rc;
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        rc = hps_deadline_passed(clock, abstime);
        if (rc == EINVAL)
            return rc;
        if (rc == ETIMEDOUT)
            return word_try(word) ? 0 : ETIMEDOUT;
        hps_wait_step(&w);
        if (word_try(word))
            return 0;
    }
}
