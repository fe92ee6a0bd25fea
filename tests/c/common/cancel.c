// SPDX-License-Identifier: MIT
/* A lock waiter under deferred cancellation (see harness.h). */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

struct cancel_ctx {
    const hps_stress_ops_t *ops;
    void *lock;
    atomic_int tid;
    atomic_int got;             /* the waiter returned from ops->lock */
};

static void *waiter(void *arg)
{
    struct cancel_ctx *c = arg;
    /* Deferred is the default; say so, the test is about it. */
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
    atomic_store(&c->tid, hps_test_gettid());
    c->ops->lock(c->lock);
    atomic_store(&c->got, 1);
    c->ops->unlock(c->lock);
    pthread_testcancel();       /* the cancellation pending since the wait */
    return NULL;                /* not reached when the lock kept it */
}

static void *locker(void *arg)
{
    struct cancel_ctx *c = arg;
    c->ops->lock(c->lock);
    atomic_store(&c->got, 1);
    c->ops->unlock(c->lock);
    return NULL;
}

void hps_cancel_check(const hps_stress_ops_t *ops, void *lock)
{
    struct cancel_ctx c = { .ops = ops, .lock = lock };
    pthread_t t;
    HPS_CHECK_RC("lock by the holder", ops->lock(lock), 0);
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, waiter, &c), 0);
    while (atomic_load(&c.tid) == 0)
        usleep(100);
    /* Asleep in the kernel: past any spinning, in its nap or futex wait. */
    hps_test_wait_asleep(atomic_load(&c.tid));
    HPS_CHECK_RC("pthread_cancel", pthread_cancel(t), 0);
    /* Many naps (1 ms at most each) and futex sleeps go by: none may act on
     * the pending cancellation. */
    for (int i = 0; i < 50; i++) {
        usleep(1000);
        void *ret;
        HPS_CHECK(pthread_tryjoin_np(t, &ret) == EBUSY,
                  "a waiter blocked in lock was cancelled (%s) while the lock was held: "
                  "lock acted as a cancellation point",
                  ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "it returned");
    }
    HPS_CHECK(!atomic_load(&c.got), "the waiter took a lock that is held");
    HPS_CHECK_RC("unlock by the holder", ops->unlock(lock), 0);
    void *ret = NULL;
    HPS_CHECK_RC("pthread_join", pthread_join(t, &ret), 0);
    HPS_CHECK(atomic_load(&c.got), "the cancelled waiter never got the lock");
    HPS_CHECK(ret == PTHREAD_CANCELED,
              "the waiter was not cancelled at its pthread_testcancel()");

    /* The lock still hands over to a contended locker. */
    atomic_store(&c.got, 0);
    HPS_CHECK_RC("lock after the cancellation", ops->lock(lock), 0);
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, locker, &c), 0);
    usleep(5000);
    HPS_CHECK_RC("unlock", ops->unlock(lock), 0);
    HPS_CHECK_RC("pthread_join", pthread_join(t, NULL), 0);
    HPS_CHECK(atomic_load(&c.got), "a locker after the cancellation never got the lock");
}
