// SPDX-License-Identifier: MIT
/*
 * mutex pool: one LIFO list of tasks under one pthread mutex, the simplest
 * pool there is and the baseline of the T3-4 study.  LIFO keeps the
 * recursion depth-first (memory stays proportional to the tree's depth).
 * pop peeks at the head before taking the lock, so idle workers poll a
 * shared line instead of queueing on the mutex: what is measured is the
 * cost of the lock around real work, not of idle workers fighting over it.
 */
#include <pthread.h>
#include <stdlib.h>
#include "pool.h"

struct mq {
    pthread_mutex_t mu;
    _Atomic(hps_task_t *) head;  /* written under mu; read racily to peek */
} __attribute__((aligned(64)));

static void *mq_create(int nworkers)
{
    struct mq *q;
    if (posix_memalign((void **)&q, 64, sizeof *q))
        return NULL;
    pthread_mutex_init(&q->mu, NULL);
    hps_store_relaxed(&q->head, NULL);
    return q;
}

static void mq_destroy(void *q)
{
    pthread_mutex_destroy(&((struct mq *)q)->mu);
    free(q);
}

/* The mutex orders everything: all list accesses are relaxed. */
static int mq_push(void *qv, int w, hps_task_t *t, hps_pool_stats_t *st)
{
    struct mq *q = qv;
    pthread_mutex_lock(&q->mu);
    hps_store_relaxed(&t->next, hps_load_relaxed(&q->head));
    hps_store_relaxed(&q->head, t);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

static hps_task_t *mq_pop(void *qv, int w, hps_pool_stats_t *st)
{
    struct mq *q = qv;
    if (!hps_load_relaxed(&q->head))
        return NULL;
    pthread_mutex_lock(&q->mu);
    hps_task_t *t = hps_load_relaxed(&q->head);
    if (t)
        hps_store_relaxed(&q->head, hps_load_relaxed(&t->next));
    pthread_mutex_unlock(&q->mu);
    return t;
}

const hps_pool_ops_t hps_pool_mutex_ops = {
    sizeof(hps_pool_ops_t), "mutex", mq_create, mq_destroy, mq_push, mq_pop,
};
