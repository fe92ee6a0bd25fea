// SPDX-License-Identifier: MIT
/*
 * hps-workload-ring: the ring traversal of the cache-index-aware allocator
 * study, under synchronization variants.  For each node size (64 B to
 * 4 KiB) one ring of 128 nodes is allocated back to back with malloc and
 * linked in a fixed random order (bench/malloc/ring_build.c, the same ring
 * hps-bench-malloc walks); threads then walk it lap after lap, each lap one
 * critical section of the variant, for the duration.  Where malloc puts the
 * nodes decides how many L1 sets their first lines fall in, hence the time
 * per node: LD_PRELOAD chooses the allocator ("malloc_provider" says which
 * one ran).
 *
 *   hps-workload-ring [--threads LIST] [--duration-ms D] [--reps R]
 *                     [--variants LIST] [--sizes LIST] [--quick]
 *                     [--selftest-corrupt]
 *
 * Variants: mutex, tts, elide, stm (wl_sync.h); default all four.  The
 * figure is ns per node visited (wall time / nodes visited by all threads),
 * per repetition.  Validation: each lap adds up the ring's values, so every
 * thread's sum must be its laps times 0+1+...+127, and the ring must still
 * be one cycle of 128 afterwards; a wrong result is "ring: <variant> (<size>
 * B, <T> threads): wrong result: <why>", exit status 1 and no JSON.
 * --selftest-corrupt (tests only) changes one node's value before the run.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hps_bench.h"
#include "hpsync/tm.h"
#include "ring_build.h"
#include "wl_sync.h"

#define NODES 128
#define MAX_LIST 16

static const size_t k_sizes[] = { 64, 96, 128, 256, 512, 1000, 1024, 1536, 2048, 3000, 4096 };
#define NSIZES ((int)(sizeof k_sizes / sizeof k_sizes[0]))

typedef struct worker {
    hps_bench_worker_t w;
    uint64_t sum;
} worker_t;

static hps_bench_gate_t g_gate;
static mb_ring_node_t *g_start;
static int g_stm;

/* One lap as one critical section of the chosen lock. */
static uint64_t lap_locked(void)
{
    uint64_t acc = 0;
    tmb_lock_enter();
    mb_ring_node_t *p = g_start;
    for (int i = 0; i < NODES; i++) {
        acc += p->value;
        p = p->next;
    }
    tmb_lock_exit();
    return acc;
}

/* One lap as a read-only TM section: both words of every node through the
 * TM layer.  p and acc start inside the section (a re-run starts afresh). */
static uint64_t lap_tm(void)
{
    uint64_t acc;
    HPS_TM_BEGIN_RO();
    mb_ring_node_t *p = g_start;
    acc = 0;
    for (int i = 0; i < NODES; i++) {
        acc += HPS_TM_READ(&p->value);
        p = HPS_TM_READ(&p->next);
    }
    HPS_TM_END();
    return acc;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    uint64_t laps = 0, sum = 0;
    hps_bench_gate_enter(&g_gate);
    while (!hps_bench_gate_stopped(&g_gate)) {
        sum += g_stm ? lap_tm() : lap_locked();
        laps++;
    }
    w->sum = sum;
    hps_bench_worker_done(&w->w, laps);
    return NULL;
}

static void fail(const char *variant, size_t size, int threads, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static void fail(const char *variant, size_t size, int threads, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    hps_bench_log("ring: %s (%zu B, %d threads): wrong result: %s", variant, size, threads, why);
    exit(1);
}

static void on_watchdog(int sig)
{
    static const char msg[] = "hps-workload-ring: watchdog: the run took far longer than it "
                              "should; a variant livelocked or hung\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

static int parse_list(const char *s, char items[][24], int max)
{
    int n = 0;
    char *copy = strdup(s ? s : ""), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        snprintf(items[n++], 24, "%s", t);
    free(copy);
    return n;
}

static double median_of(const double *v, int n)
{
    double tmp[HPS_BENCH_MAX_REPS];
    memcpy(tmp, v, sizeof(double) * (size_t)n);
    return hps_bench_median(tmp, (size_t)n);
}

/* What this program offers, for `hpsync bench workloads` (--describe;
 * docs/workloads.md, "The workload program's contract"). */
static const char k_describe[] =
    "{\"workload\":\"ring\",\"title\":\"ring traversal of 128 nodes of 64 B to 4 KiB under e"
    "ach allocator (the cache-index-aware allocator's ring)\",\"variants\":[{\"name\":\"mut"
    "ex\",\"kind\":\"lock\",\"baseline\":true},{\"name\":\"tts\",\"kind\":\"lock\"},{\"name\":\"elide\","
    "\"kind\":\"elide\"},{\"name\":\"stm\",\"kind\":\"tm\",\"env\":{\"HPSYNC_TM\":\"stm\"}}],\"metrics\":"
    "[{\"name\":\"ns_per_node\",\"unit\":\"ns/node\",\"better\":\"lower\"}],\"dims\":[\"size\"],\"allo"
    "cators\":true,\"threads\":{\"default\":[1,2,8],\"quick\":[1,2]},\"args\":{\"default\":[],\"q"
    "uick\":[\"--quick\"]},\"seconds\":{\"default\":0.7,\"quick\":0.2},\"figures\":[{\"shape\":\"cu"
    "rve\",\"x\":\"size\",\"metric\":\"ns_per_node\",\"series\":\"allocator\"}]}";

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--describe")) {
        fputs(k_describe, stdout);
        return fflush(stdout) != 0;
    }
    long duration = -1, reps = -1;
    int quick = 0, corrupt = 0;
    const char *variants = "mutex,tts,elide,stm", *threads = "1,2", *sizes = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--duration-ms"))
            duration = hps_bench_parse_num("--duration-ms", v, 1, 600000), i++;
        else if (!strcmp(argv[i], "--reps"))
            reps = hps_bench_parse_num("--reps", v, 1, HPS_BENCH_MAX_REPS), i++;
        else if (!strcmp(argv[i], "--threads") && v)
            threads = v, i++;
        else if (!strcmp(argv[i], "--variants") && v)
            variants = v, i++;
        else if (!strcmp(argv[i], "--sizes") && v)
            sizes = v, i++;
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--selftest-corrupt"))
            corrupt = 1;
        else {
            hps_bench_log("bad option '%s'%s", argv[i], v ? "" : " (or its value is missing)");
            fprintf(stderr, "usage: hps-workload-ring [--threads LIST] [--duration-ms D] [--reps R] "
                    "[--variants LIST] [--sizes LIST] [--quick] [--selftest-corrupt]\n");
            return 2;
        }
    }
    duration = duration > 0 ? duration : quick ? 10 : 50;
    reps = reps > 0 ? reps : 3;
    char vn[MAX_LIST][24], tn[MAX_LIST][24], sn[MAX_LIST][24];
    int nv = parse_list(variants, vn, MAX_LIST), nt = parse_list(threads, tn, MAX_LIST);
    int ns = sizes ? parse_list(sizes, sn, MAX_LIST) : NSIZES;
    size_t size[MAX_LIST];
    int th[MAX_LIST], wants_stm = 0;
    wl_sync_t vs[MAX_LIST];
    for (int i = 0; i < nv; i++) {
        if (wl_sync_parse(vn[i], &vs[i]) != 0) {
            hps_bench_log("unknown variant '%s' (choose from mutex, tts, elide, elide-rN, stm)", vn[i]);
            return 2;
        }
        wants_stm |= vs[i].kind == WL_STM;
    }
    for (int i = 0; i < nt; i++)
        th[i] = (int)hps_bench_parse_num("--threads", tn[i], 1, 256);
    for (int i = 0; i < ns; i++)
        size[i] = sizes ? (size_t)hps_bench_parse_num("--sizes", sn[i], 16, 1 << 20) : k_sizes[i];
    if (!nv || !nt || !ns) {
        hps_bench_log("--variants, --threads and --sizes need at least one item each");
        return 2;
    }
    wl_sync_settle_env(argv, wants_stm);
    signal(SIGALRM, on_watchdog);
    alarm((unsigned)(60 + (long)nv * nt * ns * reps * (duration * 20 / 1000 + 1)));
    if (hps_bench_become_multithreaded())
        return 1;

    /* Every ring first, back to back in ascending sizes, as the study does. */
    mb_ring_node_t *rings[MAX_LIST][NODES];
    for (int s = 0; s < ns; s++)
        if (mb_ring_build(rings[s], NODES, size[s]))
            return 1;
    if (corrupt)
        rings[0][NODES / 2]->value += 1;

    char *doc = NULL;
    size_t doclen = 0;
    FILE *mem = open_memstream(&doc, &doclen);
    hps_json_open(mem, 0);
    hps_json_begin_object(NULL);
    hps_bench_context();
    hps_json_str("workload", "ring");
    hps_json_int("nodes", NODES);
    hps_json_int("duration_ms", duration);
    hps_json_bool("quick", quick);
    hps_json_str("malloc_provider", hps_bench_provider("malloc"));
    hps_json_str("tm_backend", wants_stm ? wl_sync_tm_backend() : NULL);
    hps_json_begin_array("rows");
    const uint64_t lap_sum = mb_ring_lap_sum(NODES);
    for (int v = 0; v < nv; v++)
        for (int t = 0; t < nt; t++) {
            double floor64 = 0;
            for (int s = 0; s < ns; s++) {
                double ns_node[HPS_BENCH_MAX_REPS], nodes_per_s[HPS_BENCH_MAX_REPS];
                wl_sync_use(&vs[v]);
                g_stm = vs[v].kind == WL_STM;
                g_start = rings[s][0];
                wl_sync_stats_begin();
                uint64_t laps = 0;
                for (int r = 0; r < reps; r++) {
                    hps_bench_totals_t tot;
                    worker_t *ws = hps_bench_run_workers(&g_gate, th[t], sizeof(worker_t), worker_main,
                                                         duration, &tot);
                    if (!ws)
                        return 1;
                    for (int i = 0; i < th[t]; i++)
                        if (ws[i].sum != ws[i].w.ops * lap_sum)
                            fail(vs[v].name, size[s], th[t], "thread %d summed %llu over %llu laps, "
                                 "want %llu", i, (unsigned long long)ws[i].sum,
                                 (unsigned long long)ws[i].w.ops,
                                 (unsigned long long)(ws[i].w.ops * lap_sum));
                    free(ws);
                    if (tot.total == 0)
                        fail(vs[v].name, size[s], th[t], "no lap finished");
                    laps += tot.total;
                    ns_node[r] = tot.secs * 1e9 / ((double)tot.total * NODES);
                    nodes_per_s[r] = 1e9 / ns_node[r];
                }
                mb_ring_node_t *p = rings[s][0];
                for (int i = 1; i < NODES; i++)
                    if ((p = p->next) == rings[s][0])
                        fail(vs[v].name, size[s], th[t], "the ring closes after %d nodes", i);
                if (p->next != rings[s][0])
                    fail(vs[v].name, size[s], th[t], "the ring no longer closes");
                double med = median_of(ns_node, (int)reps);
                if (size[s] == 64)
                    floor64 = med;
                hps_json_begin_object(NULL);
                hps_json_str("variant", vs[v].name);
                hps_json_int("threads", th[t]);
                hps_json_uint("size", size[s]);
                hps_json_int("reps", reps);
                hps_json_num_array("ns_per_node_reps", ns_node, (int)reps);
                hps_json_num_array("nodes_per_sec_reps", nodes_per_s, (int)reps);
                hps_json_num("ns_per_node_median", med);
                /* The study's question: how far above the 64 B ring (all
                 * first lines in distinct sets) this size's ring runs. */
                if (floor64 > 0)
                    hps_json_num("vs_64B_floor", med / floor64);
                else
                    hps_json_null("vs_64B_floor");
                hps_json_uint("laps", laps);
                char check[120];
                snprintf(check, sizeof check, "%llu laps each summed to %llu; ring still one cycle of %d",
                         (unsigned long long)laps, (unsigned long long)lap_sum, NODES);
                hps_json_str("check", check);
                wl_sync_stats_json();
                hps_json_end_object();
            }
        }
    hps_json_end_array();
    hps_json_end_object();
    if (hps_json_finish() != 0 || fclose(mem) != 0)
        return 1;
    fwrite(doc, 1, doclen, stdout);
    free(doc);
    return fflush(stdout) != 0;
}
