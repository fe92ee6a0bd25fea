// SPDX-License-Identifier: MIT
/*
 * The workload harness (harness.h): options, the run loop, validation and
 * the document.  Threads, timing and JSON are bench/common's.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "harness_int.h"

#define MAX_VARIANTS 64
#define MAX_THREAD_COUNTS 8

static const wl_workload_t *g_w;
static void *g_ctx;
static const wl_variant_t *g_v;
static hps_bench_gate_t g_gate;
static pthread_barrier_t g_barrier;

void *wl_alloc(size_t n)
{
    void *p = hps_bench_lines_alloc(n);
    if (!p) {
        hps_bench_log("%s: out of memory (%zu bytes)", g_w ? g_w->name : "workload", n);
        exit(1);
    }
    return p;
}

void wl_barrier(void)
{
    pthread_barrier_wait(&g_barrier);
}

/* ---- options ---------------------------------------------------------------- */

typedef struct opts {
    int row_sel[64];
    int nthreads, threads[MAX_THREAD_COUNTS];
    long reps;
    double scale;
    int quick, corrupt;
    wl_variant_t v[MAX_VARIANTS];
    int nv;
} opts_t;

/* Split a comma-separated list; calls fn(item, arg) for each. */
static void each_item(const char *opt, const char *list, void (*fn)(const char *, void *), void *arg)
{
    if (!list || !*list) {
        hps_bench_log("%s needs a comma-separated list", opt);
        exit(2);
    }
    char *copy = strdup(list), *save = NULL;
    for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save))
        fn(s, arg);
    free(copy);
}

static void choices(char *buf, size_t len, const wl_workload_t *w, int rows)
{
    size_t at = 0;
    int n = rows ? w->nrows : w->nvariants;
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
                               rows ? w->rows[i].name : w->variants[i]);
    if (!rows && at < len && !w->no_tm)
        snprintf(buf + at, len - at, ", tm-k<K>, tm-serial, tm-dyn");
}


static void add_row(const char *name, void *arg)
{
    opts_t *o = arg;
    for (int i = 0; i < g_w->nrows; i++)
        if (!strcmp(g_w->rows[i].name, name)) {
            o->row_sel[i] = 1;
            return;
        }
    char buf[512];
    choices(buf, sizeof buf, g_w, 1);
    hps_bench_log("unknown row '%s' (choose from %s)", name, buf);
    exit(2);
}

/* The variant called name (added once, however often it is asked for). */
static wl_variant_t *add_variant(opts_t *o, const char *name, int id, long k, int dyn)
{
    for (int i = 0; i < o->nv; i++)
        if (!strcmp(o->v[i].name, name))
            return &o->v[i];
    if (o->nv == MAX_VARIANTS) {
        hps_bench_log("more than %d variants", MAX_VARIANTS);
        exit(2);
    }
    o->v[o->nv] = (wl_variant_t){ strdup(name), id, k, dyn ? (hps_tm_coarsen_t *)1 : NULL, 0 };
    return &o->v[o->nv++];
}

static void add_serial(opts_t *o)
{
    add_variant(o, "tm-serial", WL_TM, WL_SERIAL_K, 0)->serial = 1;
}

static void no_tm(const char *what)
{
    char buf[512];
    choices(buf, sizeof buf, g_w, 0);
    hps_bench_log("%s: %s has no TM sweep (variants: %s)", what, g_w->name, buf);
    exit(2);
}

static void add_k(const char *s, void *arg)
{
    opts_t *o = arg;
    if (g_w->no_tm)
        no_tm("--k");
    long k = hps_bench_parse_num("--k", s, 1, 1L << 20);
    char name[32];
    snprintf(name, sizeof name, "tm-k%ld", k);
    add_variant(o, name, WL_TM, k, 0);
}

static void add_named_variant(const char *name, void *arg)
{
    opts_t *o = arg;
    for (int i = 0; i < g_w->nvariants; i++)
        if (!strcmp(g_w->variants[i], name)) {
            add_variant(o, name, i, 0, 0);
            return;
        }
    if (g_w->no_tm && (!strcmp(name, "tm-dyn") || !strcmp(name, "tm-serial") || !strncmp(name, "tm-k", 4)))
        no_tm(name);
    if (!strcmp(name, "tm-dyn")) {
        add_variant(o, name, WL_TM, 0, 1);
        return;
    }
    if (!strcmp(name, "tm-serial")) {
        add_serial(o);
        return;
    }
    if (!strncmp(name, "tm-k", 4)) {
        add_k(name + 4, o);
        return;
    }
    char buf[512];
    choices(buf, sizeof buf, g_w, 0);
    hps_bench_log("unknown variant '%s' (choose from %s)", name, buf);
    exit(2);
}

static void add_threads(const char *s, void *arg)
{
    opts_t *o = arg;
    if (o->nthreads == MAX_THREAD_COUNTS) {
        hps_bench_log("--threads: at most %d counts", MAX_THREAD_COUNTS);
        exit(2);
    }
    o->threads[o->nthreads++] = (int)hps_bench_parse_num("--threads", s, 1, 256);
}

static void usage(void)
{
    fprintf(stderr, "usage: hps-workload-%s [--rows LIST] [--variants LIST] [--k LIST] "
            "[--threads LIST] [--reps R] [--quick] [--selftest-corrupt]\n", g_w->name);
}

static void parse(opts_t *o, int argc, char **argv)
{
    const char *variants = NULL, *ks = NULL;
    o->reps = 3;
    o->scale = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--rows"))
            each_item("--rows", v, add_row, o), i++;
        else if (!strcmp(argv[i], "--variants"))
            variants = v ? v : "", i++;
        else if (!strcmp(argv[i], "--k"))
            ks = v ? v : "", i++;
        else if (!strcmp(argv[i], "--threads"))
            each_item("--threads", v, add_threads, o), i++;
        else if (!strcmp(argv[i], "--reps"))
            o->reps = hps_bench_parse_num("--reps", v, 1, HPS_BENCH_MAX_REPS), i++;
        else if (!strcmp(argv[i], "--scale")) {
            char *end;
            o->scale = v ? strtod(v, &end) : 0;
            /* Above 1: longer runs, so that what a run pays once (a
             * dynamic controller's climb, thread start) weighs less. */
            if (!v || *end || !(o->scale > 0 && o->scale <= 64)) {
                hps_bench_log("--scale needs a number in (0, 64], got '%s'", v ? v : "");
                exit(2);
            }
            i++;
        } else if (!strcmp(argv[i], "--quick"))
            o->quick = 1;
        else if (!strcmp(argv[i], "--selftest-corrupt"))
            o->corrupt = 1;
        else {
            hps_bench_log("unknown option '%s'", argv[i]);
            usage();
            exit(2);
        }
    }
    int any = 0;
    for (int i = 0; i < g_w->nrows; i++)
        any |= o->row_sel[i];
    for (int i = 0; i < g_w->nrows && !any; i++)
        o->row_sel[i] = in_mode(&g_w->rows[i], o->quick);
    for (int i = 0; o->nthreads == 0 && i < 4 && g_w->threads[i]; i++)
        o->threads[o->nthreads++] = g_w->threads[i];
    if (o->nthreads == 0)
        o->threads[o->nthreads++] = 1, o->threads[o->nthreads++] = 2;
    /* Ascending, so a 1-thread run comes first and the speed-ups over it
     * can be written with the larger counts. */
    for (int i = 1; i < o->nthreads; i++)
        for (int j = i; j > 0 && o->threads[j - 1] > o->threads[j]; j--) {
            int t = o->threads[j];
            o->threads[j] = o->threads[j - 1];
            o->threads[j - 1] = t;
        }
    /* Default variants: the workload's own, the static sweep, dynamic. */
    if (variants) {
        each_item("--variants", variants, add_named_variant, o);
    } else {
        for (int i = 0; i < g_w->nvariants; i++)
            add_variant(o, g_w->variants[i], i, 0, 0);
    }
    if (ks)
        each_item("--k", ks, add_k, o);
    else if (!variants && g_w->tm_k && !g_w->no_tm)
        for (int i = 0; i < g_w->ntm_k; i++) {
            char s[24];
            snprintf(s, sizeof s, "%ld", g_w->tm_k[i]);
            add_k(s, o);
        }
    else if (!variants && !g_w->no_tm)
        for (long k = 1; k <= 1024; k *= 2) {
            char s[16];
            snprintf(s, sizeof s, "%ld", k);
            add_k(s, o);
        }
    if (!variants && !g_w->no_tm) {
        add_serial(o);
        add_variant(o, "tm-dyn", WL_TM, 0, 1);
    }
}

/* ---- runs -------------------------------------------------------------------- */

typedef struct wl_thread {
    hps_bench_worker_t w;
    hps_tm_stats_t st;               /* the thread's section statistics at its end */
    uint32_t k_end;                  /* tm-dyn: the k its site held at the end */
    uint32_t ser_end;                /* tm-dyn: 1 if the site held serialized chunks */
    double cpu;                      /* CPU seconds its share took */
    uint32_t k_phase;                /* tm-dyn: the k its site held at wl_phase() (0: no call) */
} wl_thread_t;

static int g_nthreads;
static __thread wl_thread_t *t_self;

void wl_phase(const wl_variant_t *v)
{
    if (!v->site || !t_self)
        return;
    hps_tm_coarsen_info_t in;
    hps_tm_coarsen_info(v->site, &in);
    t_self->k_phase = in.k_held;
}

/* Variants whose threads run TM sections: the harness's, and the
 * workload's own ones it marks (tm_own). */
static int runs_tm(const wl_variant_t *v)
{
    return v->id == WL_TM || (v->id < 32 && (g_w->tm_own >> v->id & 1u));
}

static void *worker(void *arg)
{
    wl_thread_t *t = arg;
    t_self = t;
    struct timespec c0, c1;
    hps_bench_gate_enter(&g_gate);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    g_w->run(g_ctx, g_v, t->w.index, g_nthreads);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    t->cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    hps_bench_worker_done(&t->w, 0);
    if (runs_tm(g_v)) {
        hps_tm_stats_get(&t->st);
        if (g_v->site) {
            hps_tm_coarsen_info_t in;
            hps_tm_coarsen_info(g_v->site, &in);
            /* The site's choice, not the probe or scan point that ran last. */
            t->k_end = in.k_held;
            t->ser_end = in.serial_held;
        }
    }
    return NULL;
}

/* Per variant, for one row and thread count. */
typedef struct result {
    double secs[HPS_BENCH_MAX_REPS];
    double cpu[HPS_BENCH_MAX_REPS];  /* the threads' CPU seconds, summed */
    hps_tm_stats_t st;               /* summed over reps (TM variants) */
    uint32_t k_end[256], k_phase[256], ser_end;
    /* tm-dyn with wl_phase(): per repetition (the first 32) and thread (the
     * first 8), the k at the phase change and at the end. */
    uint32_t k_reps[32][8][2];
    /* tm-dyn: per repetition (the first 32), 1 if its site started fresh
     * (a whole row's repetitions are independent runs, row_rep). */
    uint8_t fresh[32];
    double median;
    char check[256];                 /* the last validation's line */
} result_t;

/* One row at one thread count: its input, its tm-dyn site, its results. */
typedef struct row_run {
    const wl_row_t *row;
    void *ctx;
    hps_tm_coarsen_t site;           /* fresh per row and thread count: no hint from another */
    wl_variant_t v[MAX_VARIANTS];
    result_t *res;                   /* o->nv */
} row_run_t;

static void run_once(const opts_t *o, const wl_row_t *row, int threads, const wl_variant_t *v,
                     result_t *r, long rep)
{
    g_v = v;
    g_nthreads = threads;
    g_w->reset(g_ctx);
    if (g_w->prepare)
        g_w->prepare(g_ctx, v);
    pthread_barrier_init(&g_barrier, NULL, (unsigned)threads);
    hps_bench_totals_t tot;
    /* Fixed work (duration 0): the workers meet at the gate and the run
     * lasts from the last one's arrival to the last one's end. */
    wl_thread_t *ts = hps_bench_run_workers(&g_gate, threads, sizeof(wl_thread_t), worker, 0, &tot);
    if (!ts)
        exit(1);
    pthread_barrier_destroy(&g_barrier);
    r->secs[rep] = tot.secs;
    r->cpu[rep] = 0;
    r->ser_end = 0;                  /* the last repetition's, as k_end */
    for (int i = 0; i < threads; i++) {
        r->cpu[rep] += ts[i].cpu;
        hps_tm_stats_add(&r->st, &ts[i].st);
        if (i < 256)
            r->k_end[i] = ts[i].k_end, r->k_phase[i] = ts[i].k_phase, r->ser_end += ts[i].ser_end;
        if (i < 8 && rep < 32)
            r->k_reps[rep][i][0] = ts[i].k_phase, r->k_reps[rep][i][1] = ts[i].k_end;
    }
    free(ts);
    if (o->corrupt)
        g_w->corrupt(g_ctx);
    char why[256] = "";
    if (g_w->validate(g_ctx, why, sizeof why) != 0) {
        hps_bench_log("%s: %s: variant %s (backend %s, %d threads): wrong result: %s", g_w->name,
                      row->name, v->name, hps_tm_backend_name(), threads, why);
        exit(1);
    }
    snprintf(r->check, sizeof r->check, "%s", why);
}

static void tm_json(const result_t *r, const wl_variant_t *v, int threads, long reps)
{
    if (!runs_tm(v)) {
        hps_json_null("tm");
        return;
    }
    hps_json_begin_object("tm");
    hps_json_uint("commits", r->st.commits);
    hps_json_uint("aborts", r->st.aborts);
    hps_json_uint("retries", r->st.retries);
    hps_json_uint("irrevocable", r->st.irrevocable);
    /* Sections run alone on the bias: at 2 threads and more, a run that ran
     * most of them so ran its threads mostly one at a time (docs/workloads.md). */
    hps_json_uint("solo", r->st.solo);
    /* Sections serialized: tm-serial's chunks, the controller's serial arm,
     * and sections after HPSYNC_TM_RETRIES conflicts in a row. */
    hps_json_uint("serial", r->st.serial);
    hps_json_begin_object("aborts_by_cause");
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        if (r->st.aborts_by_cause[c])
            hps_json_uint(hps_tm_cause_name(c), r->st.aborts_by_cause[c]);
    hps_json_end_object();
    if (v->site) {
        hps_json_begin_array("k_end");
        for (int i = 0; i < threads && i < 256; i++)
            hps_json_uint(NULL, r->k_end[i]);
        hps_json_end_array();
        /* Of the threads' last repetition's ends, how many ran serialized. */
        hps_json_uint("serial_end", r->ser_end);
        if (r->k_phase[0]) {
            hps_json_begin_array("k_phase");
            for (int i = 0; i < threads && i < 256; i++)
                hps_json_uint(NULL, r->k_phase[i]);
            hps_json_end_array();
            /* [[k at the change, k at the end] per thread] per repetition
             * (each from a fresh site: rows with a change run whole). */
            hps_json_begin_array("k_phase_reps");
            for (long rep = 0; rep < reps && rep < 32; rep++) {
                hps_json_begin_array(NULL);
                for (int i = 0; i < threads && i < 8; i++) {
                    hps_json_begin_array(NULL);
                    hps_json_uint(NULL, r->k_reps[rep][i][0]);
                    hps_json_uint(NULL, r->k_reps[rep][i][1]);
                    hps_json_end_array();
                }
                hps_json_end_array();
            }
            hps_json_end_array();
        }
        /* Per repetition: 1 if the site started it fresh (every one of a
         * whole row's; a sliced row's first only). */
        hps_json_begin_array("fresh_reps");
        for (long rep = 0; rep < reps && rep < 32; rep++)
            hps_json_uint(NULL, r->fresh[rep]);
        hps_json_end_array();
    }
    hps_json_end_object();
}

static void row_begin(const opts_t *o, row_run_t *rr, const wl_row_t *row, int threads, result_t *res)
{
    long n = (long)((double)row->n * (o->quick ? 0.2 : 1.0) * o->scale);
    rr->row = row;
    rr->ctx = g_w->setup(row, threads, n > threads ? n : threads);
    rr->site = (hps_tm_coarsen_t)HPS_TM_COARSEN_INIT;
    rr->res = res;
    for (int i = 0; i < o->nv; i++) {
        rr->v[i] = o->v[i];
        if (rr->v[i].site)
            rr->v[i].site = &rr->site;
        memset(&res[i], 0, sizeof res[i]);
    }
    /* One untimed run of the first variant first.  A process's first run
     * of a row was 10-40 % slower than its next ones, whatever the variant
     * (histogram b1m, 1 thread, 4 repetitions: tm-k512 31.0, 24.7, 23.6,
     * 23.2 ms; the mutex 97.1, 88.0, 88.2, 88.4), and the runner starts one
     * process per round with one repetition each: the variant that came
     * first in a process paid for it, a different one each round.  The
     * run is validated like the others; the site starts afresh after it,
     * so tm-dyn's first repetition still starts from k0. */
    static result_t warm;
    g_ctx = rr->ctx;
    run_once(o, row, threads, &rr->v[0], &warm, 0);
    rr->site = (hps_tm_coarsen_t)HPS_TM_COARSEN_INIT;
}

/* One repetition of every variant on a row, in the variants' order.  A
 * row whose input changes partway (whole_row) is run whole in each
 * repetition, and each is an independent run of it: the site starts
 * afresh, so every repetition shows the controller's first search and
 * its one change, and their figures pool like any row's (measure.py runs
 * such a row several times a process to narrow its spread).  Other rows'
 * repetitions are slices of one run, and the site lives through them as
 * through a time-stepped program's calls. */
static void row_rep(const opts_t *o, row_run_t *rr, int threads, long rep)
{
    static const hps_tm_coarsen_t fresh = HPS_TM_COARSEN_INIT;
    g_ctx = rr->ctx;
    if (g_w->whole_row && g_w->whole_row(rr->row))
        rr->site = fresh;
    for (int i = 0; i < o->nv; i++) {
        if (rr->v[i].site && rep < 32)
            rr->res[i].fresh[rep] = !memcmp(&rr->site, &fresh, sizeof fresh);
        run_once(o, rr->row, threads, &rr->v[i], &rr->res[i], rep);
    }
}

/* The row's entry in the document; then its input goes. */
static void row_end(const opts_t *o, row_run_t *rr, int threads, const result_t *res1)
{
    const wl_row_t *row = rr->row;
    const wl_variant_t *v = rr->v;
    result_t *res = rr->res;
    g_ctx = rr->ctx;
    uint64_t ops = g_w->ops(g_ctx);
    double mutex_median = 0;
    for (int i = 0; i < o->nv; i++) {
        double s[HPS_BENCH_MAX_REPS];
        memcpy(s, res[i].secs, sizeof(double) * (size_t)o->reps);
        res[i].median = hps_bench_median(s, (size_t)o->reps);
        if (v[i].id == g_w->mutex_variant)
            mutex_median = res[i].median;
    }
    hps_json_begin_object(NULL);
    hps_json_str("row", row->name);
    if (g_w->row_json)
        g_w->row_json(g_ctx);
    hps_json_int("threads", threads);
    /* After the runs: auto's choice for this many threads. */
    hps_json_str("backend", hps_tm_backend_name());
    hps_json_begin_object("params");
    g_w->params_json(g_ctx);
    hps_json_end_object();
    hps_json_uint("ops", ops);
    hps_json_begin_array("variants");
    for (int i = 0; i < o->nv; i++) {
        hps_json_begin_object(NULL);
        hps_json_str("variant", v[i].name);
        hps_json_str("kind", v[i].id == WL_TM ? (v[i].site ? "tm-dynamic" : "tm-static")
                             : runs_tm(&v[i]) ? "tm-own" : "plain");
        if (v[i].id == WL_TM && !v[i].site)
            hps_json_int("k", v[i].k);
        else
            hps_json_null("k");
        hps_json_num_array("secs", res[i].secs, (int)o->reps);
        hps_json_num("median_s", res[i].median);
        hps_json_num("ops_per_sec", res[i].median > 0 ? (double)ops / res[i].median : 0);
        for (int j = 0; j < g_w->nmetrics && ops > 0; j++) {
            const wl_metric_t *m = &g_w->metrics[j];
            double f[HPS_BENCH_MAX_REPS], tmp[HPS_BENCH_MAX_REPS];
            char key[64];
            for (long r = 0; r < o->reps; r++)
                f[r] = tmp[r] = (m->cpu ? res[i].cpu[r] : res[i].secs[r]) * m->per_op / (double)ops;
            snprintf(key, sizeof key, "%s_reps", m->name);
            hps_json_num_array(key, f, (int)o->reps);
            hps_json_num(m->name, hps_bench_median(tmp, (size_t)o->reps));
        }
        if (res1 && res1[i].median > 0)
            hps_json_num("speedup_vs_1t", res1[i].median / res[i].median);
        else
            hps_json_null("speedup_vs_1t");
        if (mutex_median > 0)
            hps_json_num("speedup_vs_mutex", mutex_median / res[i].median);
        else
            hps_json_null("speedup_vs_mutex");
        hps_json_str("check", res[i].check);
        if (runs_tm(&v[i]) || !g_w->variant_json)
            tm_json(&res[i], &v[i], threads, o->reps);
        if (g_w->variant_json)
            g_w->variant_json(g_ctx, &v[i], threads, res[i].median);
        hps_json_end_object();
    }
    hps_json_end_array();
    hps_json_end_object();
    g_w->teardown(g_ctx);
    g_ctx = rr->ctx = NULL;
}

static void on_watchdog(int sig)
{
    static const char msg[] = "hps-workload: watchdog: the run took far longer than it should; "
                              "a variant livelocked or hung\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

int wl_main(const wl_workload_t *w, int argc, char **argv)
{
    static opts_t o;
    g_w = w;
    if (argc == 2 && !strcmp(argv[1], "--describe"))
        return wl_describe(w);
    parse(&o, argc, argv);
    signal(SIGALRM, on_watchdog);
    alarm(o.quick ? 600 : 3600);
    if (hps_bench_become_multithreaded())
        return 1;
    /* The document is kept until the end: a run that fails validation
     * prints nothing on stdout (the contract's "no JSON"). */
    char *doc = NULL;
    size_t doclen = 0;
    FILE *mem = open_memstream(&doc, &doclen);
    if (!mem)
        return 1;
    hps_json_open(mem, 0);
    hps_json_begin_object(NULL);
    hps_bench_context();
    hps_json_str("workload", w->name);
    hps_json_str("backend", hps_tm_backend_name());
    if (g_w->allocators)
        hps_json_str("malloc_provider", hps_bench_provider("malloc"));
    if (g_w->doc_json)
        g_w->doc_json();
    hps_json_int("reps", o.reps);
    hps_json_bool("quick", o.quick);
    hps_json_num("scale", o.scale);
    hps_json_begin_array("rows");
    /* Results per selected row: at 1 thread (kept for the speed-ups) and at
     * the thread count in progress. */
    int nsel = 0, sel[64];
    for (int r = 0; r < w->nrows; r++)
        if (o.row_sel[r])
            sel[nsel++] = r;
    result_t *res = calloc((size_t)o.nv * 2 * (size_t)nsel, sizeof(result_t));
    row_run_t *rr = calloc((size_t)nsel, sizeof(row_run_t));
    if (!res || !rr)
        return 1;
#define RES(j, one) (res + ((size_t)(j) * 2 + ((one) ? 0 : 1)) * (size_t)o.nv)
    int have1 = 0;
    if (g_w->interleave_rows) {
        for (int t = 0; t < o.nthreads; t++) {
            int one = o.threads[t] == 1;
            for (int j = 0; j < nsel; j++)
                row_begin(&o, &rr[j], &w->rows[sel[j]], o.threads[t], RES(j, one));
            for (long rep = 0; rep < o.reps; rep++)
                for (int j = 0; j < nsel; j++)
                    row_rep(&o, &rr[j], o.threads[t], rep);
            for (int j = 0; j < nsel; j++)
                row_end(&o, &rr[j], o.threads[t], !one && have1 ? RES(j, 1) : NULL);
            have1 |= one;
        }
    } else {
        for (int j = 0; j < nsel; j++) {
            have1 = 0;
            for (int t = 0; t < o.nthreads; t++) {
                int one = o.threads[t] == 1;
                row_begin(&o, &rr[j], &w->rows[sel[j]], o.threads[t], RES(j, one));
                for (long rep = 0; rep < o.reps; rep++)
                    row_rep(&o, &rr[j], o.threads[t], rep);
                row_end(&o, &rr[j], o.threads[t], !one && have1 ? RES(j, 1) : NULL);
                have1 |= one;
            }
        }
    }
#undef RES
    free(res);
    free(rr);
    hps_json_end_array();
    hps_json_end_object();
    if (hps_json_finish() != 0 || fclose(mem) != 0)
        return 1;
    fwrite(doc, 1, doclen, stdout);
    free(doc);
    return fflush(stdout) != 0;
}
