// SPDX-License-Identifier: MIT
/*
 * stealing pool: one Chase-Lev deque per worker (Le, Pop, Cohen, Zappa
 * Nardelli, PPoPP 2013, C11 version).  The owner pushes and takes at the
 * bottom without any atomic read-modify-write except when it races a thief
 * for the last task; an idle worker steals from the top of another
 * worker's deque, starting at a random victim.  The buffer has a fixed
 * size; a spawn that finds it full is run at once by the spawner (counted
 * as inline_runs), which is always correct for a fork-join task.
 */
#include <stdlib.h>
#include "pool.h"

#define DEQ_LOG 14
#define DEQ_SIZE (1L << DEQ_LOG)
#define DEQ_MASK (DEQ_SIZE - 1)

/*
 * The algorithm needs its fences and top CASes sequentially consistent (the
 * owner's take and a thief's steal must agree on who got the last task);
 * pr.h has no seq_cst CAS, so it is spelled out here.
 */
#define cas_seq_cst(p, e, d) \
    atomic_compare_exchange_strong_explicit((p), (e), (d), memory_order_seq_cst, memory_order_relaxed)

struct deque {
    _Alignas(64) atomic_long top;      /* thieves' end */
    _Alignas(64) atomic_long bottom;   /* owner's end */
    uint64_t rng;
    _Atomic(hps_task_t *) *buf;
} __attribute__((aligned(64)));

struct ws {
    int n;
    struct deque *d;
};

static void ws_destroy(void *qv)
{
    struct ws *q = qv;
    if (!q)
        return;
    for (int i = 0; q->d && i < q->n; i++)
        free(q->d[i].buf);
    free(q->d);
    free(q);
}

static void *ws_create(int nworkers)
{
    struct ws *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->n = nworkers;
    if (posix_memalign((void **)&q->d, 64, (size_t)nworkers * sizeof *q->d)) {
        free(q);
        return NULL;
    }
    for (int i = 0; i < nworkers; i++) {
        struct deque *d = &q->d[i];
        hps_store_relaxed(&d->top, 0);
        hps_store_relaxed(&d->bottom, 0);
        d->rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull;
        d->buf = calloc(DEQ_SIZE, sizeof *d->buf);
        if (!d->buf) {
            q->n = i + 1;
            ws_destroy(q);
            return NULL;
        }
    }
    return q;
}

static int ws_push(void *qv, int w, hps_task_t *t, hps_pool_stats_t *st)
{
    struct deque *d = &((struct ws *)qv)->d[w];
    long b = hps_load_relaxed(&d->bottom);
    long top = hps_load_acquire(&d->top);   /* acquire: thieves are done with the slot */
    if (b - top >= DEQ_SIZE)
        return -1;
    hps_store_relaxed(&d->buf[b & DEQ_MASK], t);
    /* Release: a thief that sees the new bottom sees the slot and the task. */
    hps_store_release(&d->bottom, b + 1);
    return 0;
}

static hps_task_t *take(struct deque *d)
{
    long b = hps_load_relaxed(&d->bottom) - 1;
    hps_store_relaxed(&d->bottom, b);
    hps_fence_seq_cst();   /* the claim on b must be visible before reading top */
    long t = hps_load_relaxed(&d->top);
    if (t > b) {
        hps_store_relaxed(&d->bottom, b + 1);
        return NULL;
    }
    hps_task_t *x = hps_load_relaxed(&d->buf[b & DEQ_MASK]);
    if (t == b) {
        /* The last task: a thief may be after it too. */
        if (!cas_seq_cst(&d->top, &t, t + 1))
            x = NULL;
        hps_store_relaxed(&d->bottom, b + 1);
    }
    return x;
}

static hps_task_t *steal(struct deque *d, hps_pool_stats_t *st)
{
    long t = hps_load_acquire(&d->top);
    hps_fence_seq_cst();   /* pairs with the owner's fence in take */
    long b = hps_load_acquire(&d->bottom);
    if (t >= b)
        return NULL;
    hps_task_t *x = hps_load_relaxed(&d->buf[t & DEQ_MASK]);
    if (!cas_seq_cst(&d->top, &t, t + 1)) {
        st->failed_steals++;
        return NULL;
    }
    st->steals++;
    return x;
}

static hps_task_t *ws_pop(void *qv, int w, hps_pool_stats_t *st)
{
    struct ws *q = qv;
    struct deque *own = &q->d[w];
    hps_task_t *x = take(own);
    if (x || q->n == 1)
        return x;
    int start = (int)(hps_xorshift64(&own->rng) % (uint64_t)q->n);
    for (int k = 0; k < q->n; k++) {
        int v = (start + k) % q->n;
        if (v != w && (x = steal(&q->d[v], st)) != NULL)
            return x;
    }
    return NULL;
}

const hps_pool_ops_t hps_pool_stealing_ops = {
    sizeof(hps_pool_ops_t), "stealing", ws_create, ws_destroy, ws_push, ws_pop,
};
