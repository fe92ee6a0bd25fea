/* SPDX-License-Identifier: MIT */
/*
 * pool.h - three task pools behind one interface, for hps-probe-pools.
 *
 * The T3-4 study ran a recursive FFT and a blocked matrix multiply on pools
 * whose only difference was how spawned tasks are stored and found again.
 * This header keeps that shape: the generic part (pool.c: worker threads,
 * pinning, spawn, help-first wait, backoff) is shared, and a queue discipline
 * is a small ops table (one file each):
 *   mutex     - one LIFO list under a pthread mutex;
 *   lockfree  - one Treiber stack, CAS on a tagged top pointer, with
 *               randomized exponential backoff after each failed CAS (the
 *               T3-4's CAS pool collapsed without it) and every failed CAS
 *               counted, so the contention is visible in the output;
 *   stealing  - one Chase-Lev deque per worker: the owner pushes and pops at
 *               the bottom, idle workers steal from the top of a victim's.
 *
 * Tasks are owned by their spawner (usually on its stack) and must be waited
 * for before the spawner returns.  Waiting never blocks a worker: hps_wait()
 * runs other tasks until the awaited one is done (help-first), so a deep
 * recursion cannot deadlock however few workers there are.
 */
#ifndef HPS_PROBE_POOL_H
#define HPS_PROBE_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "hps_rand.h"
#include "hpsync/pr.h"
#include "hps_pin.h"

typedef struct hps_task hps_task_t;
typedef void (*hps_task_fn)(hps_task_t *self);

struct hps_task {
    hps_task_fn fn;
    _Atomic(hps_task_t *) next;  /* link for the shared-list pools */
    atomic_int done;             /* 1 once fn returned (release) */
};

static inline void hps_task_init(hps_task_t *t, hps_task_fn fn)
{
    t->fn = fn;
    hps_store_relaxed(&t->next, NULL);
    hps_store_relaxed(&t->done, 0);
}

/* What one worker counted; summed over the workers of a pool. */
typedef struct hps_pool_stats {
    uint64_t tasks;          /* tasks spawned */
    uint64_t inline_runs;    /* spawns run at once because the queue was full */
    uint64_t failed_cas;     /* lockfree: CAS on the shared top that lost a race */
    uint64_t steals;         /* stealing: tasks taken from another worker's deque */
    uint64_t failed_steals;  /* stealing: steals that lost the race for a task */
} hps_pool_stats_t;

/* A queue discipline.  size first, as libfabric's ops tables do. */
typedef struct hps_pool_ops {
    size_t size;             /* sizeof(hps_pool_ops_t) */
    const char *name;
    void *(*create)(int nworkers);
    void (*destroy)(void *q);
    /* Worker w stores t: 0, or -1 when full (the caller then runs t itself). */
    int (*push)(void *q, int w, hps_task_t *t, hps_pool_stats_t *st);
    /* A task for worker w, or NULL when none was found this time. */
    hps_task_t *(*pop)(void *q, int w, hps_pool_stats_t *st);
} hps_pool_ops_t;

extern const hps_pool_ops_t hps_pool_mutex_ops;
extern const hps_pool_ops_t hps_pool_lockfree_ops;
extern const hps_pool_ops_t hps_pool_stealing_ops;

typedef struct hps_pool hps_pool_t;

/* nthreads workers placed by map (worker 0 runs the root); NULL after logging. */
hps_pool_t *hps_pool_create(const hps_pool_ops_t *ops, int nthreads, hps_map_t map);
/* Run root (with every worker helping) to completion; wall ns of the root on
 * worker 0 in *ns.  All workers are idle again when this returns. */
void hps_pool_run(hps_pool_t *p, hps_task_t *root, uint64_t *ns);
/* Sum of the workers' counters since the last call; resets them. */
void hps_pool_take_stats(hps_pool_t *p, hps_pool_stats_t *sum);
void hps_pool_destroy(hps_pool_t *p);

/* From inside a running task: hand t to the pool / help until t is done. */
void hps_spawn(hps_task_t *t);
void hps_wait(hps_task_t *t);

/* ---- backoff ------------------------------------------------------------- */


/*
 * Randomized exponential backoff: spin a random number of pause hints below
 * the current limit, then double the limit up to cap.  Randomness keeps
 * workers that failed together from retrying together.
 */
static inline void hps_backoff(unsigned *limit, unsigned cap, uint64_t *rng)
{
    unsigned n = 1 + (unsigned)(hps_xorshift64(rng) % *limit);
    for (unsigned i = 0; i < n; i++)
        hps_cpu_relax();
    if (*limit < cap)
        *limit *= 2;
}

#define HPS_BACKOFF_MIN 1u
#define HPS_BACKOFF_CAS_CAP 1024u   /* pauses: a few microseconds at most */

#endif
