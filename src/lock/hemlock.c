// SPDX-License-Identifier: MIT
/*
 * Hemlock slow paths.  The per-thread record is initial-exec TLS, so it costs
 * one %fs-relative address computation and exists exactly as long as the
 * thread: no registration, no limit on threads created over a process's life.
 * A record cannot vanish while referenced: a thread is only someone's
 * predecessor while it holds or releases the lock, and release waits for the
 * successor's acknowledgement before returning.
 */
#include "hpsync/lock.h"
#include "internal.h"

static __thread hps_hem_thread_t hem_self __attribute__((tls_model("initial-exec")));

HPS_EXPORT hps_hem_thread_t *hps_hem_self(void) { return &hem_self; }

HPS_EXPORT HPS_NOINLINE void hps_hemlock_lock_slow(hps_hemlock_t *l, hps_hem_thread_t *pred)
{
    hps_wait_t w = HPS_WAIT_INIT;
    /* Acquire: the predecessor's critical section happens before ours. */
    while (hps_load_acquire(&pred->grant) != l)
        hps_wait_step(&w);
    /* Acknowledge, so the predecessor may reuse its grant word. */
    hps_store_release(&pred->grant, NULL);
}

HPS_EXPORT HPS_NOINLINE void hps_hemlock_unlock_slow(hps_hemlock_t *l, hps_hem_thread_t *self)
{
    if (hps_load_relaxed(&l->tail) == NULL)   /* unlock of a free lock */
        return;
    /* Release: hands the critical section to the successor. */
    hps_store_release(&self->grant, l);
    hps_wait_t w = HPS_WAIT_INIT;
    while (hps_load_acquire(&self->grant) != NULL)
        hps_wait_step(&w);
}

static int hemlock_try(void *l) { return hps_hemlock_trylock(l); }

HPS_EXPORT int hps_hemlock_timedlock(hps_hemlock_t *l, clockid_t clock, const struct timespec *abstime)
{
    return hps_timed_poll(hemlock_try, l, clock, abstime);
}
