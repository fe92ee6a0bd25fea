// SPDX-License-Identifier: MIT
/*
 * hps-probe-create: what pthread_create costs, and how long until the new
 * thread actually runs.
 *
 * Per sample the parent takes a stamp, calls pthread_create and takes a
 * second stamp when the call returns ("create_return"); the child's first
 * statement takes a third stamp into shared memory, and "thread_start" is
 * that stamp minus the first one.  Both are kept per sample, so the pairs row
 * shows whether a slow start goes with a slow call (the kernel's clone) or
 * not (the scheduler placing the child).  Joinable and detached threads are
 * measured alternately, so drift and neighbours' noise hit both alike.  The
 * parent waits for each child by blocking (join, or a semaphore the detached
 * child posts), never by spinning, so on a small machine it does not sit on
 * the CPU the child wants.  No pinning: the scheduler's placement is part of
 * what a program creating threads pays.
 *
 *   hps-probe-create [--quick] [--samples N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include "hps_probe.h"

#define USAGE "hps-probe-create [--quick] [--samples N]"

static _Atomic uint64_t g_child_stamp;
static sem_t g_child_done;

static void *child(void *arg)
{
    /* First statement: the thread is running. */
    atomic_store_explicit(&g_child_stamp, hps_probe_now(), memory_order_relaxed);
    if (arg)
        sem_post(&g_child_done);     /* detached: tell the parent we are done */
    return NULL;
}

struct variant {
    const char *name;
    int detached;
    double *ret, *start;
};

/* One sample; returns 0, or -1 when a thread could not be created. */
static int sample(struct variant *v, pthread_attr_t *attr, size_t i)
{
    pthread_t t;
    atomic_store_explicit(&g_child_stamp, 0, memory_order_relaxed);
    uint64_t t0 = hps_probe_now();
    int rc = pthread_create(&t, attr, child, v->detached ? &g_child_done : NULL);
    uint64_t t1 = hps_probe_now();
    if (rc != 0) {
        hps_bench_log("pthread_create (%s): %s", v->name, strerror(rc));
        return -1;
    }
    if (v->detached) {
        while (sem_wait(&g_child_done) != 0)
            ;
    } else {
        pthread_join(t, NULL);
    }
    /* The join / semaphore orders the child's store before this load. */
    uint64_t ts = atomic_load_explicit(&g_child_stamp, memory_order_relaxed);
    /* Keep raw tick differences until the tick rate is known. */
    v->ret[i] = (double)(t1 - t0);
    v->start[i] = ts >= t0 ? (double)(ts - t0) : 0.0;
    return 0;
}

int main(int argc, char **argv)
{
    long samples;
    const hps_probe_opt_t opts[] = { HPS_PROBE_OPT_SAMPLES(samples, 300, 3000), HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .opts = opts };
    hps_probe_parse(&cli, argc, argv);
    size_t n = (size_t)samples;

    struct variant vs[2] = { { "joinable", 0, hps_probe_alloc(n), hps_probe_alloc(n) },
                             { "detached", 1, hps_probe_alloc(n), hps_probe_alloc(n) } };
    pthread_attr_t attr[2];
    pthread_attr_init(&attr[0]);
    pthread_attr_init(&attr[1]);
    pthread_attr_setdetachstate(&attr[1], PTHREAD_CREATE_DETACHED);
    if (sem_init(&g_child_done, 0, 0) != 0) {
        hps_bench_log("sem_init failed");
        return 1;
    }

    hps_probe_clock_start();
    /* Warm-up: the first creates map stacks and fill glibc's stack cache. */
    size_t warm = n / 10 < 20 ? 20 : n / 10;
    for (size_t i = 0; i < warm; i++)
        for (int k = 0; k < 2; k++)
            if (sample(&vs[k], &attr[k], 0) != 0)
                return 1;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (sample(&vs[(i + (size_t)k) % 2], &attr[(i + (size_t)k) % 2], i) != 0)
                return 1;
    hps_probe_clock_finish();
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n; i++) {
            vs[k].ret[i] *= hps_probe_ns_per_tick;
            vs[k].start[i] *= hps_probe_ns_per_tick;
        }

    hps_probe_doc_begin("create");
    hps_json_uint("samples", n);
    hps_json_uint("warmup", warm);
    hps_json_str("placement", "os");
    hps_probe_doc_results();
    for (int k = 0; k < 2; k++) {
        hps_probe_row_latency("create_return", vs[k].name, vs[k].ret, n);
        hps_probe_row_latency("thread_start", vs[k].name, vs[k].start, n);
        hps_probe_row_pairs("create_return_vs_thread_start", vs[k].name, "create_return", "thread_start", vs[k].ret,
                        vs[k].start, n);
    }
    return hps_probe_doc_end();
}
