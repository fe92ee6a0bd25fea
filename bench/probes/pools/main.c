// SPDX-License-Identifier: MIT
/*
 * hps-probe-pools: the T3-4 thread-pool experiment on this machine.
 *
 * Two workloads (work.h) on three pools (pool.h), for every thread count in
 * 1..2x PUs (more threads than PUs on purpose: the T3-4 study showed which
 * pools survive oversubscription), threads placed by --map.  Each
 * configuration gets a fresh pool, one checked warm-up run and --reps timed
 * runs; every run's result is checked (FFT against a direct DFT, matmul
 * against a naive product) outside the timed region.
 *
 * Output: one "pool" row per (workload, pool, threads[, levels]) with the
 * distribution of run times ("time_s", also under "dist" so generic code
 * that plots latency rows can plot these), tasks spawned per run, and the
 * pool's contention counters: failed_cas (lockfree only; total over the
 * timed runs), steals and failed_steals (stealing only).  When any check
 * fails the document is still printed, with check_ok false, and the exit
 * status is 1.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hps_probe.h"
#include "work.h"

#define MAX_LEVELS 5
#define MAX_TLIST 64

static const hps_pool_ops_t *const g_pools[] = {
    &hps_pool_mutex_ops, &hps_pool_lockfree_ops, &hps_pool_stealing_ops,
};
#define NPOOLS (int)(sizeof g_pools / sizeof g_pools[0])

struct row {
    const char *metric, *pool;
    int threads, levels;          /* levels 0: fft */
    int reps, check_ok;
    double secs[HPS_BENCH_MAX_REPS];
    uint64_t tasks;               /* per run */
    hps_pool_stats_t st;          /* over the timed runs */
};

struct opts {
    int quick, reps, max_levels, nthreads, map_set;
    long fft_n, fft_cutoff, mm_n;
    int threads[MAX_TLIST];
    hps_map_t map;
};

static void usage_exit(const char *msg)
{
    hps_bench_log("%s (usage: hps-probe-pools [--quick] [--reps R] [--threads N,N,...] "
                  "[--map compact|scatter|os] [--fft-n N] [--fft-cutoff C] [--mm-n N] "
                  "[--max-levels 1..5])", msg);
    exit(2);
}

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

static void parse_threads(struct opts *o, const char *s)
{
    char *copy = strdup(s), *save = NULL;
    o->nthreads = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nthreads == MAX_TLIST)
            usage_exit("--threads: at most 64 counts");
        o->threads[o->nthreads++] = (int)hps_bench_parse_num("--threads", tok, 1, 1024);
    }
    free(copy);
    if (o->nthreads == 0)
        usage_exit("--threads needs a list of counts");
}

/* 1..2x PUs: every count while that is at most 16, else a geometric
 * progression (x1.5) through PUs that ends at 2x PUs. */
static void default_threads(struct opts *o, int pus)
{
    int hi = 2 * pus;
    o->nthreads = 0;
    if (hi <= 16) {
        for (int t = 1; t <= hi; t++)
            o->threads[o->nthreads++] = t;
        return;
    }
    for (int t = 1; t < pus && o->nthreads < MAX_TLIST - 2; t = t * 3 / 2 > t ? t * 3 / 2 : t + 1)
        o->threads[o->nthreads++] = t;
    o->threads[o->nthreads++] = pus;
    o->threads[o->nthreads++] = hi;
}

static void parse_args(struct opts *o, int argc, char **argv)
{
    long reps = -1, fft_n = -1, cut = -1, mm_n = -1, lv = -1;
    const char *threads = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
            continue;
        }
        if (!v)
            usage_exit("unknown or incomplete argument");
        if (!strcmp(a, "--reps"))
            reps = hps_bench_parse_num(a, v, 1, HPS_BENCH_MAX_REPS);
        else if (!strcmp(a, "--fft-n"))
            fft_n = hps_bench_parse_num(a, v, 2, 1L << 24);
        else if (!strcmp(a, "--fft-cutoff"))
            cut = hps_bench_parse_num(a, v, 1, 1L << 24);
        else if (!strcmp(a, "--mm-n"))
            mm_n = hps_bench_parse_num(a, v, 2, 4096);
        else if (!strcmp(a, "--max-levels"))
            lv = hps_bench_parse_num(a, v, 1, MAX_LEVELS);
        else if (!strcmp(a, "--threads"))
            threads = v;
        else if (!strcmp(a, "--map")) {
            if (hps_map_parse(v, &o->map) != 0)
                usage_exit("--map must be compact, scatter or os");
        } else
            usage_exit("unknown or incomplete argument");
        i++;
    }
    o->reps = (int)(reps > 0 ? reps : o->quick ? 5 : 15);
    o->fft_n = fft_n > 0 ? fft_n : o->quick ? 1L << 16 : 1L << 18;
    o->fft_cutoff = cut > 0 ? cut : o->quick ? 32 : 64;
    o->max_levels = (int)(lv > 0 ? lv : MAX_LEVELS);
    o->mm_n = mm_n > 0 ? mm_n : o->quick ? 128 : 384;
    if (!is_pow2(o->fft_n) || !is_pow2(o->fft_cutoff) || o->fft_cutoff > o->fft_n)
        usage_exit("--fft-n and --fft-cutoff must be powers of two, cutoff <= n");
    if (o->mm_n % (1L << o->max_levels) != 0)
        usage_exit("--mm-n must be divisible by 2^max-levels");
    if (threads)
        parse_threads(o, threads);
}

static int pus_online(void)
{
    hps_topo_t t;
    if (hps_bench_topo(&t) == 0 && t.pus > 0)
        return t.pus;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* One configuration: fresh pool, warm-up, timed runs, checks. */
static int measure(struct row *r, const hps_pool_ops_t *ops, hps_map_t map,
                   struct fft_work *f, struct mm_work *m)
{
    hps_pool_t *p = hps_pool_create(ops, r->threads, map);
    if (!p)
        return -1;
    r->check_ok = 1;
    for (int i = -1; i < r->reps; i++) {      /* i = -1: warm-up */
        hps_task_t *root = f ? fft_root(f) : mm_root(m, r->levels);
        uint64_t ns;
        hps_pool_run(p, root, &ns);
        int ok = f ? fft_check(f) : mm_check(m);
        if (!ok) {
            hps_bench_log("%s on %s with %d threads: wrong result", r->metric, ops->name,
                          r->threads);
            r->check_ok = 0;
        }
        if (i < 0) {
            hps_pool_take_stats(p, &r->st);   /* drop the warm-up's counts */
            continue;
        }
        r->secs[i] = (double)ns * 1e-9;
    }
    hps_pool_take_stats(p, &r->st);
    r->tasks = r->st.tasks / (uint64_t)r->reps;
    hps_pool_destroy(p);
    return 0;
}

static void emit_row(struct row *r)
{
    hps_probe_row_begin("pool", r->metric, NULL);
    hps_json_str("pool", r->pool);
    hps_json_int("threads", r->threads);
    if (r->levels > 0)
        hps_json_int("levels", r->levels);
    hps_json_int("reps", r->reps);
    double tmp[HPS_BENCH_MAX_REPS];
    memcpy(tmp, r->secs, sizeof(double) * (size_t)r->reps);
    hps_dist_json("time_s", tmp, (size_t)r->reps, "s", (size_t)r->reps);
    hps_dist_json("dist", r->secs, (size_t)r->reps, "s", (size_t)r->reps);
    hps_json_uint("tasks", r->tasks);
    hps_json_uint("inline_runs", r->st.inline_runs);
    if (!strcmp(r->pool, "lockfree"))
        hps_json_uint("failed_cas", r->st.failed_cas);
    if (!strcmp(r->pool, "stealing")) {
        hps_json_uint("steals", r->st.steals);
        hps_json_uint("failed_steals", r->st.failed_steals);
    }
    hps_json_bool("check_ok", r->check_ok);
    hps_probe_row_end();
}

int main(int argc, char **argv)
{
    struct opts o = { .map = HPS_MAP_COMPACT };
    parse_args(&o, argc, argv);
    int pus = pus_online();
    if (o.nthreads == 0)
        default_threads(&o, pus);

    struct fft_work *f = fft_new((size_t)o.fft_n, (size_t)o.fft_cutoff);
    struct mm_work *m = mm_new((int)o.mm_n, o.max_levels);
    int nrows = o.nthreads * NPOOLS * (1 + o.max_levels);
    struct row *rows = calloc((size_t)nrows, sizeof *rows);
    if (!f || !m || !rows) {
        hps_bench_log("out of memory");
        return 1;
    }
    hps_probe_steal_start();
    int k = 0, bad = 0;
    for (int lv = 0; lv <= o.max_levels; lv++)      /* lv 0: the FFT */
        for (int pi = 0; pi < NPOOLS; pi++)
            for (int ti = 0; ti < o.nthreads; ti++) {
                struct row *r = &rows[k++];
                *r = (struct row){ .metric = lv ? "matmul" : "fft", .pool = g_pools[pi]->name,
                                   .threads = o.threads[ti], .levels = lv, .reps = o.reps };
                if (measure(r, g_pools[pi], o.map, lv ? NULL : f, lv ? m : NULL) != 0)
                    return 1;
                bad |= !r->check_ok;
                double tmp[HPS_BENCH_MAX_REPS];
                memcpy(tmp, r->secs, sizeof(double) * (size_t)r->reps);
                hps_bench_log("%-6s L=%d %-8s T=%-3d median %8.3f ms, %7llu tasks%s", r->metric,
                              lv, r->pool, r->threads, 1e3 * hps_bench_median(tmp, (size_t)r->reps),
                              (unsigned long long)r->tasks, r->check_ok ? "" : " WRONG");
            }
    hps_probe_steal_stop();

    hps_probe_doc_begin("pools");
    hps_json_bool("quick", o.quick);
    hps_json_str("mapping", hps_map_name(o.map));
    hps_json_int("pus", pus);
    hps_json_begin_array("threads");
    for (int i = 0; i < o.nthreads; i++)
        hps_json_int(NULL, o.threads[i]);
    hps_json_end_array();
    hps_json_int("reps", o.reps);
    hps_json_int("fft_n", o.fft_n);
    hps_json_int("fft_cutoff", o.fft_cutoff);
    hps_json_int("mm_n", o.mm_n);
    hps_json_int("max_levels", o.max_levels);
    hps_json_str("fft_check", o.fft_n <= 1024 ? "direct DFT, every bin"
                                              : "direct DFT at 32 bins + Parseval");
    hps_json_str("matmul_check", "exact equality with a naive product");
    hps_probe_doc_results();
    for (int i = 0; i < k; i++)
        emit_row(&rows[i]);
    int rc = hps_probe_doc_end();
    free(rows);
    fft_free(f);
    mm_free(m);
    return rc ? rc : bad ? 1 : 0;
}
