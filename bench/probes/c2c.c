// SPDX-License-Identifier: MIT
/*
 * hps-probe-c2c: core-to-core cache-line transfer latency, every ordered
 * pair of CPUs.
 *
 * Two threads, pinned to CPUs a (the initiator) and b (the responder),
 * play ping-pong on one counter alone in its cache line: a writes an odd
 * value, b waits for it and writes the next even one, a waits for that.
 * Each round trip moves the line a -> b -> a, so one-way latency is round
 * trip / 2.  The initiator times batches of --iters round trips with
 * CLOCK_MONOTONIC (a ~10 ns timer step vanishes in a batch of microseconds)
 * and every batch is one sample; per pair the samples form a distribution,
 * so a hypervisor that descheduled one side shows in the tail, not as a
 * shifted mean.  Spinning uses plain loads without a pause hint: a pause
 * would add its own latency to every transfer.
 *
 * Output: one "matrix" row (median and p99 of the one-way latency, rows the
 * initiator's CPU, columns the responder's, in the order of "cpus"; the
 * diagonal is null: a CPU is not paired with itself), one "latency" row per
 * ordered pair (variant "a-b"), and scalars for the fastest and slowest
 * pair medians.  CPUs are the ones this process may run on, in hwloc's
 * logical order (hardware threads of a core, then cores, then packages), or
 * those given with --cpus.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "hps_probe.h"
#include "hps_pin.h"
#include "hpsync/pr.h"

#define MAX_CPUS 1024
#define WARMUP_TRIPS 2000

/* The line under test, alone in 128 bytes (adjacent-line prefetchers pull
 * pairs of lines), and the start handshake on a line of its own. */
static struct {
    _Alignas(128) atomic_ulong seq;
    char pad[128 - sizeof(atomic_ulong)];
    _Alignas(128) atomic_int ready;
} g_pp;

struct side {
    long batches, iters;
    double *out;                 /* initiator: one-way ns per batch */
};

static void start_together(void)
{
    /* Release/acquire only for the handshake; the counter needs no order
     * beyond its own coherence. */
    hps_faa_release(&g_pp.ready, 1);
    while (hps_load_acquire(&g_pp.ready) < 2)
        ;
}

static void *responder(void *arg)
{
    struct side *s = arg;
    unsigned long total = WARMUP_TRIPS + (unsigned long)(s->batches * s->iters);
    start_together();
    for (unsigned long k = 0; k < total; k++) {
        while (hps_load_relaxed(&g_pp.seq) != 2 * k + 1)
            ;
        hps_store_relaxed(&g_pp.seq, 2 * k + 2);
    }
    return NULL;
}

static inline void trip(unsigned long k)
{
    hps_store_relaxed(&g_pp.seq, 2 * k + 1);
    while (hps_load_relaxed(&g_pp.seq) != 2 * k + 2)
        ;
}

static void *initiator(void *arg)
{
    struct side *s = arg;
    unsigned long k = 0;
    start_together();
    for (; k < WARMUP_TRIPS; k++)
        trip(k);
    for (long b = 0; b < s->batches; b++) {
        uint64_t t0 = hps_bench_now_ns();
        for (long i = 0; i < s->iters; i++, k++)
            trip(k);
        uint64_t t1 = hps_bench_now_ns();
        s->out[b] = (double)(t1 - t0) / (2.0 * (double)s->iters);
    }
    return NULL;
}

static int spawn_pinned(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_attr_init(&attr);
    int e = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    if (e == 0)
        e = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (e != 0)
        hps_bench_log("cannot start a thread on cpu %d: %s", cpu, strerror(e));
    return e;
}

/* One ordered pair; out[0..batches) receives the samples. */
static int measure_pair(int a, int b, long batches, long iters, double *out)
{
    struct side ini = { batches, iters, out }, rsp = { batches, iters, NULL };
    pthread_t ta, tb;
    hps_store_relaxed(&g_pp.seq, 0);
    hps_store_relaxed(&g_pp.ready, 0);
    if (spawn_pinned(&tb, b, responder, &rsp) != 0)
        return -1;
    if (spawn_pinned(&ta, a, initiator, &ini) != 0) {
        /* The responder waits for a partner forever: stand in for it. */
        hps_bench_log("giving up");
        exit(1);
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    return 0;
}

static void usage_exit(const char *msg)
{
    hps_bench_log("%s (usage: hps-probe-c2c [--quick] [--batches B] [--iters K] "
                  "[--cpus N,N,...])", msg);
    exit(2);
}

/* The CPUs we may use, in hwloc's logical order when the topology loads. */
static int allowed_cpus(int *cpus)
{
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
        hps_bench_log("sched_getaffinity: %s", strerror(errno));
        exit(1);
    }
    int n = 0;
    hps_topo_t t;
    int npu = hps_bench_topo(&t) == 0 ? t.pus : 0;
    int *order = npu > 0 && npu <= MAX_CPUS ? calloc((size_t)npu, sizeof *order) : NULL;
    if (order && hps_map_cpus(HPS_MAP_COMPACT, npu, order) == 0) {
        for (int i = 0; i < npu; i++)
            if (order[i] >= 0 && order[i] < CPU_SETSIZE && CPU_ISSET(order[i], &mask))
                cpus[n++] = order[i];
    } else {
        for (int c = 0; c < CPU_SETSIZE && n < MAX_CPUS; c++)
            if (CPU_ISSET(c, &mask))
                cpus[n++] = c;
    }
    free(order);
    return n;
}

static int parse_cpus(const char *s, int *cpus)
{
    cpu_set_t mask;
    sched_getaffinity(0, sizeof mask, &mask);
    char *copy = strdup(s), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == MAX_CPUS)
            usage_exit("--cpus: too many CPUs");
        int c = (int)hps_bench_parse_num("--cpus", tok, 0, CPU_SETSIZE - 1);
        if (!CPU_ISSET(c, &mask))
            usage_exit("--cpus names a CPU this process may not run on");
        for (int i = 0; i < n; i++)
            if (cpus[i] == c)
                usage_exit("--cpus names a CPU twice");
        cpus[n++] = c;
    }
    free(copy);
    if (n == 0)
        usage_exit("--cpus needs a list of CPU numbers");
    return n;
}

static void matrix_json(const char *key, const double *m, int n)
{
    hps_json_begin_array(key);
    for (int i = 0; i < n; i++) {
        hps_json_begin_array(NULL);
        for (int j = 0; j < n; j++) {
            if (i == j)
                hps_json_null(NULL);
            else
                hps_json_num(NULL, m[i * n + j]);
        }
        hps_json_end_array();
    }
    hps_json_end_array();
}

static int g_cpus[MAX_CPUS];

int main(int argc, char **argv)
{
    int quick = 0, n = 0;
    long batches = -1, iters = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            quick = 1;
            continue;
        }
        if (!v)
            usage_exit("unknown or incomplete argument");
        if (!strcmp(a, "--batches"))
            batches = hps_bench_parse_num(a, v, 1, 1000000);
        else if (!strcmp(a, "--iters"))
            iters = hps_bench_parse_num(a, v, 1, 1000000);
        else if (!strcmp(a, "--cpus"))
            n = parse_cpus(v, g_cpus);
        else
            usage_exit("unknown or incomplete argument");
        i++;
    }
    if (iters < 0)
        iters = 100;
    if (n == 0)
        n = allowed_cpus(g_cpus);
    if (batches < 0) {
        /* A budget of batches shared by all pairs (about 3 s quick, 60 s
         * full at ~1 us per round trip), within [50, 1000] / [200, 10000]
         * per pair: big machines get fewer samples per pair, not hours. */
        long pairs = n > 1 ? (long)n * (n - 1) : 1;
        long lo = quick ? 50 : 200, hi = quick ? 1000 : 10000;
        batches = (quick ? 30000 : 600000) / pairs;
        batches = batches < lo ? lo : batches > hi ? hi : batches;
    }
    if (n < 2)
        hps_bench_log("warning: fewer than two CPUs available; no pairs to measure");

    size_t npairs = (size_t)n * (size_t)n;
    double *samples = calloc(npairs * (size_t)batches, sizeof *samples);
    double *med = calloc(npairs, sizeof *med), *p99 = calloc(npairs, sizeof *p99);
    if (!samples || !med || !p99) {
        hps_bench_log("out of memory for %d CPUs x %ld batches", n, batches);
        return 1;
    }
    hps_probe_steal_start();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            double *s = samples + ((size_t)i * n + j) * (size_t)batches;
            if (measure_pair(g_cpus[i], g_cpus[j], batches, iters, s) != 0)
                return 1;
            /* Sorted in place: nothing needs the samples in time order. */
            hps_bench_sort(s, (size_t)batches);
            med[i * n + j] = hps_dist_quantile(s, (size_t)batches, 0.5);
            p99[i * n + j] = hps_dist_quantile(s, (size_t)batches, 0.99);
            hps_bench_log("cpu %d -> cpu %d: median %.1f ns, p99 %.1f ns one-way", g_cpus[i],
                          g_cpus[j], med[i * n + j], p99[i * n + j]);
        }
    hps_probe_steal_stop();

    hps_probe_doc_begin("c2c");
    hps_json_bool("quick", quick);
    hps_json_int("batches", batches);
    hps_json_int("iters", iters);
    hps_json_int("warmup_round_trips", WARMUP_TRIPS);
    hps_json_str("method", "ping-pong on one cache line; one-way = batch round trip time / 2 / iters");
    hps_json_str("diagonal", "null: a CPU is not paired with itself");
    hps_json_str("matrix_rows", "initiator cpu");
    hps_json_str("matrix_cols", "responder cpu");
    hps_probe_doc_results();

    hps_probe_row_begin("matrix", "c2c_one_way", NULL);
    hps_json_begin_array("cpus");
    for (int i = 0; i < n; i++)
        hps_json_int(NULL, g_cpus[i]);
    hps_json_end_array();
    matrix_json("median", med, n);
    matrix_json("p99", p99, n);
    hps_json_str("unit", "ns");
    hps_probe_row_end();

    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            char variant[32];
            snprintf(variant, sizeof variant, "%d-%d", g_cpus[i], g_cpus[j]);
            hps_probe_row_begin("latency", "c2c_one_way", variant);
            hps_json_int("cpu_a", g_cpus[i]);
            hps_json_int("cpu_b", g_cpus[j]);
            hps_dist_json("dist", samples + ((size_t)i * n + j) * (size_t)batches,
                          (size_t)batches, "ns", 200);
            hps_probe_row_end();
            lo = fmin(lo, med[i * n + j]);
            hi = fmax(hi, med[i * n + j]);
        }
    if (n >= 2) {
        const char *names[2] = { "c2c_one_way_fastest_pair", "c2c_one_way_slowest_pair" };
        double vals[2] = { lo, hi };
        for (int k = 0; k < 2; k++)
            hps_probe_row_scalar(names[k], vals[k], "ns");
    }
    free(samples);
    free(med);
    free(p99);
    return hps_probe_doc_end();
}
