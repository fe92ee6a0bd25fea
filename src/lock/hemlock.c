// SPDX-License-Identifier: MIT
/*
 * Hemlock slow path.  The per-thread record is initial-exec TLS: one
 * %fs-relative address, no registration on the fast path, no limit on the
 * threads a process creates over its life.
 *
 * Hand-over with a deferred acknowledgement (the "overlap" refinement of the
 * Hemlock paper): a leaving head writes its `grant` word and goes straight on
 * to its critical section; it waits for the successor's acknowledgement only
 * before it next queues for any lock or hands one over, or when the thread
 * exits.  Waiting at
 * hand-over time instead puts a cache-line round trip inside every critical
 * section (measured here: 3 M ops/s against 60 M for MCS at 2 threads).
 * Because a successor may still read our record after we return, a thread
 * that has deferred an acknowledgement registers a thread-exit hook that
 * waits for it; until that hook exists (or while it runs) hand-overs wait in
 * place, as the original algorithm does.
 */
#include <pthread.h>
#include "hpsync/lock.h"

static __thread hps_hem_thread_t hem_self __attribute__((tls_model("initial-exec")));
/* 0: not yet registered, 1: exit hook in place (defer), 2: wait in place. */
static __thread int hem_mode __attribute__((tls_model("initial-exec")));

static pthread_key_t hem_key;
static int hem_key_ok;
static pthread_once_t hem_once = PTHREAD_ONCE_INIT;

static void await_ack(hps_hem_thread_t *self)
{
    hps_wait_t w = HPS_WAIT_INIT;
    while (hps_load_acquire(&self->grant) != NULL)
        hps_wait_step(&w);
}

static void hem_thread_exit(void *arg)
{
    hem_mode = 2;               /* later destructors' hand-overs wait in place */
    await_ack(arg);
}

/* In a forked child the successor that owed us an acknowledgement is gone. */
static void hem_child(void) { hps_store_relaxed(&hem_self.grant, NULL); }

static void hem_init(void)
{
    hem_key_ok = pthread_key_create(&hem_key, hem_thread_exit) == 0;
    pthread_atfork(NULL, NULL, hem_child);
}

static int may_defer(void)
{
    if (hps_likely(hem_mode == 1))
        return 1;
    if (hem_mode == 2)
        return 0;
    /* Registering can allocate (pthread_setspecific beyond 32 keys), and an
     * allocator may take locks: meanwhile this thread waits in place. */
    hem_mode = 2;
    pthread_once(&hem_once, hem_init);
    if (hem_key_ok && pthread_setspecific(hem_key, &hem_self) == 0)
        hem_mode = 1;
    return hem_mode == 1;
}

HPS_EXPORT HPS_NOINLINE void hps_hemlock_lock_slow(hps_hemlock_t *l)
{
    hps_hem_thread_t *self = &hem_self;
    hps_wait_t w = HPS_WAIT_INIT;
    /*
     * Never queue while our grant word still names a lock: a thread queued
     * behind us would read the stale grant as its own (and the successor it
     * was meant for would wait for ever).  Usually the acknowledgement came
     * during our critical section and this costs one load.
     */
    await_ack(self);
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
    /* A successor is queued: make it head.  Our word must be free first
     * (an earlier deferred acknowledgement may still be on its way). */
    await_ack(self);
    hps_store_release(&self->grant, l);
    if (!may_defer())
        await_ack(self);
}
