// SPDX-License-Identifier: MIT
/*
 * MCS slow path.  The node is on this stack frame and leaves the queue before
 * we return: once we hold the lock word we pass headship to our successor.
 */
#include "hpsync/lock.h"

HPS_EXPORT HPS_NOINLINE void hps_mcs_lock_slow(hps_mcs_t *l)
{
    hps_mcs_node_t n;
    hps_store_relaxed(&n.next, NULL);
    hps_store_relaxed(&n.wait, 1);
    /* acq_rel: publish our initialised node; see the predecessor's. */
    hps_mcs_node_t *pred = hps_xchg_acq_rel(&l->tail, &n);
    if (pred) {
        /* Release: the predecessor must see our node's initial state. */
        hps_store_release(&pred->next, &n);
        hps_wait_t w = HPS_WAIT_INIT;
        while (hps_load_acquire(&n.wait) != 0)
            hps_wait_step(&w);
    }
    hps_qword_head_acquire(&l->q);

    /* Leave the queue: either we are last (tail back to NULL) or we wait for
     * our successor to finish linking in, and make it head. */
    hps_mcs_node_t *succ = hps_load_acquire(&n.next);
    if (!succ) {
        hps_mcs_node_t *e = &n;
        if (hps_cas_acq_rel(&l->tail, &e, NULL))
            return;
        while ((succ = hps_load_acquire(&n.next)) == NULL)
            hps_cpu_relax();
    }
    hps_store_release(&succ->wait, 0);
}
