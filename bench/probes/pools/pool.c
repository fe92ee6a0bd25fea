// SPDX-License-Identifier: MIT
/*
 * The generic half of the pools (see pool.h): worker threads, pinning, the
 * run handshake, spawn and the help-first wait.
 *
 * Between runs the helpers sleep on a condition variable, so the probe's own
 * checking (a naive multiply, a DFT) is not slowed by spinning threads.
 * During a run an idle worker looks for work, backing off exponentially and
 * yielding its CPU once the backoff is at its cap: with more threads than
 * PUs (the probe goes to 2x PUs) a spinning thread would otherwise sit on
 * the CPU the thread it waits for needs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "pool.h"

/* Helping can nest (a waiting task runs another task that waits ...), so
 * workers get a generous stack; it is only reserved, not touched. */
#define WORKER_STACK (64u << 20)
/* Idle spinning: pauses double up to this cap, then the worker yields. */
#define IDLE_CAP 256u

struct worker {
    hps_pool_t *pool;
    int index, cpu;
    pthread_t tid;
    uint64_t rng;
    hps_pool_stats_t st;
} __attribute__((aligned(64)));

struct hps_pool {
    const hps_pool_ops_t *ops;
    void *q;
    int n;
    struct worker *w;
    atomic_int active;           /* 1 while a root is running */
    pthread_mutex_t mu;          /* guards everything below */
    pthread_cond_t cv_start, cv_done;
    unsigned gen, done_gen;
    int parked, stop, started;
    hps_task_t *root;
    uint64_t root_ns;
};

static __thread struct worker *tls_worker;

static void run_task(hps_task_t *t)
{
    t->fn(t);
    /* Release: the awaiting task reads what t wrote.  t may vanish (it lives
     * in its spawner's frame) the moment this store is seen. */
    hps_store_release(&t->done, 1);
}

/* One attempt to find and run a task; idle backoff when there was none. */
static void help_once(struct worker *w, unsigned *limit, unsigned *at_cap)
{
    hps_pool_t *p = w->pool;
    hps_task_t *t = p->ops->pop(p->q, w->index, &w->st);
    if (t) {
        run_task(t);
        *limit = HPS_BACKOFF_MIN;
        *at_cap = 0;
        return;
    }
    if (*limit >= IDLE_CAP && ++*at_cap >= 4) {
        sched_yield();
        *at_cap = 0;
        return;
    }
    hps_backoff(limit, IDLE_CAP, &w->rng);
}

void hps_spawn(hps_task_t *t)
{
    struct worker *w = tls_worker;
    hps_pool_t *p = w->pool;
    w->st.tasks++;
    if (p->ops->push(p->q, w->index, t, &w->st) != 0) {
        w->st.inline_runs++;
        run_task(t);
    }
}

void hps_wait(hps_task_t *t)
{
    struct worker *w = tls_worker;
    unsigned limit = HPS_BACKOFF_MIN, at_cap = 0;
    /* Acquire: pairs with run_task's release of done. */
    while (!hps_load_acquire(&t->done))
        help_once(w, &limit, &at_cap);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    hps_pool_t *p = w->pool;
    tls_worker = w;
    if (w->cpu >= 0 && hps_pin_self(w->cpu) != 0)
        hps_bench_log("warning: cannot pin worker %d to cpu %d", w->index, w->cpu);
    unsigned seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->stop)
            pthread_cond_wait(&p->cv_start, &p->mu);
        if (p->stop)
            break;
        seen = p->gen;
        hps_task_t *root = p->root;
        pthread_mutex_unlock(&p->mu);
        if (w->index == 0) {
            uint64_t t0 = hps_bench_now_ns();
            run_task(root);
            uint64_t t1 = hps_bench_now_ns();
            /* Release: not needed for data (each task waits for its
             * children); it only ends the helpers' search promptly. */
            hps_store_release(&p->active, 0);
            pthread_mutex_lock(&p->mu);
            p->root_ns = t1 - t0;
            p->done_gen = seen;
        } else {
            unsigned limit = HPS_BACKOFF_MIN, at_cap = 0;
            while (hps_load_acquire(&p->active))
                help_once(w, &limit, &at_cap);
            pthread_mutex_lock(&p->mu);
            p->parked++;
        }
        pthread_cond_signal(&p->cv_done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

hps_pool_t *hps_pool_create(const hps_pool_ops_t *ops, int nthreads, hps_map_t map)
{
    hps_pool_t *p = calloc(1, sizeof *p);
    int *cpus = calloc((size_t)nthreads, sizeof *cpus);
    if (!p || !cpus || posix_memalign((void **)&p->w, 64, (size_t)nthreads * sizeof *p->w)) {
        hps_bench_log("out of memory");
        free(p);
        free(cpus);
        return NULL;
    }
    memset(p->w, 0, (size_t)nthreads * sizeof *p->w);
    if (hps_map_cpus(map, nthreads, cpus) != 0) {
        hps_bench_log("warning: no topology; workers are not pinned");
        for (int i = 0; i < nthreads; i++)
            cpus[i] = -1;
    }
    p->ops = ops;
    p->n = nthreads;
    p->q = ops->create(nthreads);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_start, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    int ok = p->q != NULL;
    for (int i = 0; ok && i < nthreads; i++) {
        struct worker *w = &p->w[i];
        w->pool = p;
        w->index = i;
        w->cpu = cpus[i];
        w->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        int e = pthread_create(&w->tid, &attr, worker_main, w);
        if (e != 0) {
            hps_bench_log("cannot create worker %d: %s", i, strerror(e));
            ok = 0;
            break;
        }
        p->started++;
    }
    pthread_attr_destroy(&attr);
    free(cpus);
    if (!ok) {
        hps_pool_destroy(p);
        return NULL;
    }
    return p;
}

void hps_pool_run(hps_pool_t *p, hps_task_t *root, uint64_t *ns)
{
    pthread_mutex_lock(&p->mu);
    p->root = root;
    p->parked = 0;
    hps_store_relaxed(&p->active, 1);   /* published by the mutex */
    p->gen++;
    pthread_cond_broadcast(&p->cv_start);
    while (p->done_gen != p->gen || p->parked != p->n - 1)
        pthread_cond_wait(&p->cv_done, &p->mu);
    *ns = p->root_ns;
    pthread_mutex_unlock(&p->mu);
}

void hps_pool_take_stats(hps_pool_t *p, hps_pool_stats_t *sum)
{
    memset(sum, 0, sizeof *sum);
    for (int i = 0; i < p->n; i++) {
        hps_pool_stats_t *s = &p->w[i].st;
        sum->tasks += s->tasks;
        sum->inline_runs += s->inline_runs;
        sum->failed_cas += s->failed_cas;
        sum->steals += s->steals;
        sum->failed_steals += s->failed_steals;
        memset(s, 0, sizeof *s);
    }
}

void hps_pool_destroy(hps_pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv_start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->w[i].tid, NULL);
    if (p->q)
        p->ops->destroy(p->q);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_start);
    pthread_cond_destroy(&p->cv_done);
    free(p->w);
    free(p);
}
