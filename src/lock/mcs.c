// SPDX-License-Identifier: MIT
/*
 * MCS (K42 form) slow paths.  A waiter's node lives on its stack: it is
 * reachable from the queue only until the waiter owns the lock and has moved
 * its successor pointer into the lock's own `next` field.
 */
#include "hpsync/lock.h"
#include "internal.h"

HPS_EXPORT HPS_NOINLINE void hps_mcs_lock_slow(hps_mcs_t *l)
{
    hps_wait_t w = HPS_WAIT_INIT;
    for (;;) {
        hps_mcs_node_t *prev = hps_load_relaxed(&l->tail);
        if (prev == NULL) {
            if (hps_cas_acquire(&l->tail, &prev, HPS_MCS_SELF(l)))
                return;
            continue;
        }
        hps_mcs_node_t n;
        hps_store_relaxed(&n.next, NULL);
        hps_store_relaxed(&n.wait, 1);
        /* acq_rel: our node's fields must be visible before we are reachable. */
        if (!hps_cas_acq_rel(&l->tail, &prev, &n))
            continue;
        /* Release: the predecessor (or releaser) reads our initialised node. */
        hps_store_release(&prev->next, &n);
        while (hps_load_acquire(&n.wait) != 0)
            hps_wait_step(&w);

        /* We own the lock: hand our successor link to the lock, then forget n. */
        hps_mcs_node_t *succ = hps_load_acquire(&n.next);
        if (succ == NULL) {
            hps_store_relaxed(&l->next, NULL);
            hps_mcs_node_t *e = &n;
            if (hps_cas_acq_rel(&l->tail, &e, HPS_MCS_SELF(l)))
                return;
            /* Someone is linking in behind n: wait for the link to land. */
            while ((succ = hps_load_acquire(&n.next)) == NULL)
                hps_cpu_relax();
        }
        hps_store_relaxed(&l->next, succ);
        return;
    }
}

HPS_EXPORT HPS_NOINLINE void hps_mcs_unlock_slow(hps_mcs_t *l)
{
    hps_mcs_node_t *succ = hps_load_acquire(&l->next);
    if (succ == NULL) {
        hps_mcs_node_t *e = HPS_MCS_SELF(l);
        if (hps_cas_release(&l->tail, &e, NULL))
            return;
        if (e == NULL)          /* unlock of a free lock: leave it free */
            return;
        /* A waiter swapped itself in but has not linked yet; it will shortly. */
        while ((succ = hps_load_acquire(&l->next)) == NULL)
            hps_cpu_relax();
    }
    hps_store_relaxed(&l->next, NULL);
    /* Release: the successor's critical section follows ours. */
    hps_store_release(&succ->wait, 0);
}

static int mcs_try(void *l) { return hps_mcs_trylock(l); }

HPS_EXPORT int hps_mcs_timedlock(hps_mcs_t *l, clockid_t clock, const struct timespec *abstime)
{
    return hps_timed_poll(mcs_try, l, clock, abstime);
}
