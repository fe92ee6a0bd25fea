// SPDX-License-Identifier: MIT
/*
 * lockfree pool: one Treiber stack; push and pop are a CAS on its top.
 *
 * Every worker's every push and pop hits the same word, so under load most
 * CASes can fail: the T3-4's CAS pool got slower with each thread added.
 * Two things keep this one sane and honest:
 *   - after a failed CAS the worker backs off (randomized, exponential up to
 *     HPS_BACKOFF_CAS_CAP pauses), so losers stop hammering the line;
 *   - every failed CAS is counted and reported (failed_cas).
 *
 * ABA: tasks live in their spawners' stack frames, so an address is reused
 * as soon as a task finishes.  The top word therefore carries a 16-bit tag
 * (bumped by every successful CAS) above a 48-bit pointer, so a CAS based on
 * a stale top fails.  pop reads next of a task that another worker may
 * have popped and finished meanwhile; that memory is a live thread stack
 * (workers outlive every run), the value read is discarded when the tag has
 * moved, and the read is an atomic load.
 */
#include <stdlib.h>
#include "pool.h"

#define PTR_BITS 48
#define PTR_MASK ((UINT64_C(1) << PTR_BITS) - 1)

struct lf {
    _Alignas(64) _Atomic uint64_t top;
    char pad[64 - sizeof(uint64_t)];
    uint64_t rng[];                  /* per worker, 64 bytes apart */
};

static inline hps_task_t *top_ptr(uint64_t v) { return (hps_task_t *)(uintptr_t)(v & PTR_MASK); }
static inline uint64_t top_make(hps_task_t *t, uint64_t old)
{
    return ((old >> PTR_BITS) + 1) << PTR_BITS | ((uint64_t)(uintptr_t)t & PTR_MASK);
}

static void *lf_create(int nworkers)
{
    struct lf *q;
    if (posix_memalign((void **)&q, 64, sizeof *q + (size_t)nworkers * 64))
        return NULL;
    hps_store_relaxed(&q->top, 0);
    for (int i = 0; i < nworkers; i++)
        q->rng[i * 8] = 0x2545F4914F6CDD1Dull * (uint64_t)(i + 1);
    return q;
}

static void lf_destroy(void *q) { free(q); }

static int lf_push(void *qv, int w, hps_task_t *t, hps_pool_stats_t *st)
{
    struct lf *q = qv;
    if ((uintptr_t)t & ~(uintptr_t)PTR_MASK)
        return -1;                   /* not representable: run it inline */
    unsigned limit = HPS_BACKOFF_MIN;
    uint64_t old = hps_load_relaxed(&q->top);
    for (;;) {
        hps_store_relaxed(&t->next, top_ptr(old));
        /* Release: a popper must see the task's fields and next. */
        if (hps_cas_acq_rel(&q->top, &old, top_make(t, old)))
            return 0;
        st->failed_cas++;
        hps_backoff(&limit, HPS_BACKOFF_CAS_CAP, &q->rng[w * 8]);
        old = hps_load_relaxed(&q->top);
    }
}

static hps_task_t *lf_pop(void *qv, int w, hps_pool_stats_t *st)
{
    struct lf *q = qv;
    unsigned limit = HPS_BACKOFF_MIN;
    /* Acquire: the task's fields were written before the push's CAS. */
    uint64_t old = hps_load_acquire(&q->top);
    for (;;) {
        hps_task_t *t = top_ptr(old);
        if (!t)
            return NULL;
        hps_task_t *next = hps_load_relaxed(&t->next);
        if (hps_cas_acq_rel(&q->top, &old, top_make(next, old)))
            return t;
        st->failed_cas++;
        hps_backoff(&limit, HPS_BACKOFF_CAS_CAP, &q->rng[w * 8]);
        old = hps_load_acquire(&q->top);
    }
}

const hps_pool_ops_t hps_pool_lockfree_ops = {
    sizeof(hps_pool_ops_t), "lockfree", lf_create, lf_destroy, lf_push, lf_pop,
};
