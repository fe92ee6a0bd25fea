// SPDX-License-Identifier: MIT
/*
 * Hemlock slow path.  The per-thread record is initial-exec TLS: one
 * %fs-relative address, no registration, no limit on the threads a process
 * creates over its life.  A record cannot vanish while referenced: a thread
 * is someone's predecessor only inside this function, and it leaves only
 * after its successor has acknowledged the grant.
 */
#include "hpsync/lock.h"

static __thread hps_hem_thread_t hem_self __attribute__((tls_model("initial-exec")));

HPS_EXPORT HPS_NOINLINE void hps_hemlock_lock_slow(hps_hemlock_t *l)
{
    hps_hem_thread_t *self = &hem_self;
    hps_wait_t w = HPS_WAIT_INIT;
    /* acq_rel: take our place in the queue and see the predecessor's record. */
    hps_hem_thread_t *pred = hps_xchg_acq_rel(&l->tail, self);
    if (pred) {
        while (hps_load_acquire(&pred->grant) != l)
            hps_wait_step(&w);
        /* Acknowledge, so the predecessor may reuse its grant word. */
        hps_store_release(&pred->grant, NULL);
    }
    hps_qword_head_acquire(&l->q);

    hps_hem_thread_t *e = self;
    if (hps_cas_acq_rel(&l->tail, &e, NULL))
        return;
    /* A successor is queued: grant it headship and wait for its ack. */
    hps_store_release(&self->grant, l);
    w.n = 0;
    while (hps_load_acquire(&self->grant) != NULL)
        hps_wait_step(&w);
}
