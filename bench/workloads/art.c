// SPDX-License-Identifier: MIT
/*
 * hps-workload-art: the adaptive radix tree of the elision-with-restarts
 * study.  Threads insert N 64-bit keys into an empty tree (each key once,
 * the keys dealt out in a shuffled order), then look every one of them up;
 * both phases are timed.  Keys are dense (0..N-1) or random (a bijective
 * mix of 0..N-1, so they are distinct), per --keysets.
 *
 *   hps-workload-art [--keys N] [--threads LIST] [--reps R] [--variants LIST]
 *                    [--keysets dense,random] [--alloc malloc|pool]
 *                    [--quick] [--selftest-corrupt]
 *
 * Variants: mutex, tts, elide, elide-rN (global locks, wl_sync.h), stm
 * (hpsync TM), olc (optimistic lock coupling, art_olc.c).  Default: mutex,
 * tts, elide-r0, elide-r1, elide-r3, elide-r7, stm, olc.  --alloc malloc
 * takes nodes from malloc, whichever allocator the process has (glibc, or
 * hpsync's or another one by LD_PRELOAD: "malloc_provider" says which);
 * --alloc pool from per-thread chunks mapped and faulted in before the
 * timed insert phase (the same for every variant).  Every repetition starts
 * from an empty heap (malloc_trim after its teardown, run_rep says why).
 *
 * Validation after every repetition: every inserted key is found with its
 * value (a lookup that misses fails), as many inserts succeeded as there
 * are keys, probes for N/16 keys never inserted all miss (no phantom
 * keys), and the tree's structure holds (art_check: every leaf under the
 * path of its key bytes, counts, prefixes, no node left locked) with
 * exactly N leaves.  A wrong result is one line, "art: <variant> (<keyset>,
 * <alloc>, <T> threads): wrong result: <why>", exit status 1 and no JSON.
 * --selftest-corrupt (tests only) slips one never-inserted key in after the
 * inserts, which validation must catch.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "art.h"
#include "hps_bench.h"
#include "hps_rand.h"
#include "wl_sync.h"

#define MAX_VARIANTS 16
#define MAX_THREADS_LIST 8
#define ART_SEED 0x9E3779B97F4A7C15ull

typedef int (*insert_fn)(art_n256_t *, uint64_t, art_ctx_t *);
typedef int (*lookup_fn)(art_n256_t *, uint64_t, uint64_t *);

typedef struct variant {
    wl_sync_t sync;
    insert_fn insert;
    lookup_fn lookup;
} variant_t;

/* One row of the document: a variant at a thread count on a key set. */
typedef struct row {
    const variant_t *v;
    const char *keyset;
    int threads, reps;
    double ins[HPS_BENCH_MAX_REPS], look[HPS_BENCH_MAX_REPS];   /* Mops/s per repetition */
    /* The insert phase's CPU seconds and minor page faults, summed over
     * threads: what it cost whatever else the machine ran meanwhile. */
    double ins_cpu[HPS_BENCH_MAX_REPS], ins_faults[HPS_BENCH_MAX_REPS];
    double pool_per_key;         /* pool bytes carved per key (pool mode, last repetition) */
    double ins_med, look_med;
    uint64_t leaves;
    art_olc_restarts_t restarts;     /* olc: summed over threads and repetitions */
} row_t;

static struct {
    long keys, probes;
    int reps, corrupt, nthreads, threads[MAX_THREADS_LIST];
    art_alloc_mode_t alloc;
    uint64_t *order;             /* the keys in the order threads take them */
    size_t prefill;              /* pool bytes each thread faults in before inserting */
    /* The phase in progress. */
    art_n256_t *root;
    const variant_t *v;
    int phase, workers;          /* phase 0 insert, 1 lookup */
    hps_bench_gate_t gate;
    /* The next index of g.order a thread takes, CHUNK at a time.  Shares
     * dealt out as they go, not halves fixed in advance: on the 2-vCPU guest
     * one thread of two often lost its CPU for milliseconds mid-phase (one
     * phase of 74 ms ended 44 ms after its partner's), and with fixed
     * shares the phase's time was that thread's, whatever the variant. */
    atomic_long next;
} g;

/* 512 keys: 25-100 us of work, so the threads end that close together;
 * one atomic add per chunk is lost in the keys' cache misses. */
#define CHUNK 512

/* Aligned to two cache lines (the adjacent-line prefetcher pairs them):
 * a thread writes its ctx (the pool's cursor, the spare blocks) on every
 * allocation, and must not share a line with the next worker's. */
typedef struct worker {
    pthread_t tid;
    int index;
    art_ctx_t ctx;
    uint64_t done, misses, wrong, first_bad;
    uint64_t t0, t1;             /* this thread's phase, ns */
    uint64_t cpu_ns, faults;     /* this thread's CPU time and minor faults in the phase */
    art_olc_restarts_t restarts;
} __attribute__((aligned(128))) worker_t;

static uint64_t minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

/* Random keys: a bijection of 0..2^64-1 (the murmur3 finalizer), so N
 * indices give N distinct keys and index >= N gives keys never inserted. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t key_of(int random, uint64_t i) { return random ? mix(i) : i; }

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    const long n = g.keys;
    if (g.phase == 0 && w->ctx.mode == ART_ALLOC_POOL)
        art_pool_prefill(&w->ctx, g.prefill);
    hps_bench_gate_enter(&g.gate);
    uint64_t f0 = minor_faults(), c0 = hps_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    w->t0 = hps_bench_now_ns();
    uint64_t done = 0, misses = 0, wrong = 0;
    for (long lo; (lo = atomic_fetch_add_explicit(&g.next, CHUNK, memory_order_relaxed)) < n;) {
        long hi = lo + CHUNK < n ? lo + CHUNK : n;
        if (g.phase == 0) {
            for (long i = lo; i < hi; i++)
                done += (uint64_t)g.v->insert(g.root, g.order[i], &w->ctx);
        } else {
            for (long i = lo; i < hi; i++) {
                uint64_t val = 0, k = g.order[i];
                if (!g.v->lookup(g.root, k, &val)) {
                    if (!misses++)
                        w->first_bad = k;
                } else if (val != art_value_of(k) && !wrong++) {
                    w->first_bad = k;
                }
                done++;
            }
        }
    }
    w->t1 = hps_bench_now_ns();
    w->cpu_ns = hps_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    w->faults = minor_faults() - f0;
    art_olc_restarts_take(&w->restarts);
    w->done = done;
    w->misses = misses;
    w->wrong = wrong;
    return NULL;
}

/* Run one phase on g.workers threads; its wall time in seconds, from the
 * first worker's start to the last one's end, by the workers' own clocks:
 * the last worker to reach the gate opens it, and this thread only waits. */
static double run_phase(worker_t *ws, int phase)
{
    g.phase = phase;
    atomic_store(&g.next, 0);
    hps_bench_gate_reset(&g.gate, g.workers);
    for (int i = 0; i < g.workers; i++)
        if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) != 0) {
            hps_bench_log("pthread_create failed");
            exit(1);
        }
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (int i = 0; i < g.workers; i++) {
        pthread_join(ws[i].tid, NULL);
        t0 = ws[i].t0 < t0 ? ws[i].t0 : t0;
        t1 = ws[i].t1 > t1 ? ws[i].t1 : t1;
    }
    return (double)(t1 - t0) / 1e9;
}

static void fail(const row_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fail(const row_t *r, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    hps_bench_log("art: %s (%s, %s, %d threads): wrong result: %s", r->v->sync.name, r->keyset,
                  g.alloc == ART_ALLOC_POOL ? "pool" : "malloc", r->threads, why);
    exit(1);
}

/* One repetition: build, time both phases, validate, tear down. */
static void run_rep(row_t *r, int rep, int random)
{
    size_t wsize = sizeof(worker_t) * (size_t)r->threads;
    worker_t *ws = aligned_alloc(_Alignof(worker_t), wsize);
    g.root = art_new();
    if (!ws || !g.root) {
        hps_bench_log("out of memory");
        exit(1);
    }
    memset(ws, 0, wsize);
    /* The pool's pre-allocation, the same for every variant: the bytes per
     * key the tree takes (measured, grown nodes included: 27.7 dense; 45 at
     * 16 Mi random keys, 50 at 256 Ki), a little over, for an equal share
     * and a quarter more (the threads take keys as they go, so shares
     * differ).  Beyond it a thread maps more chunks as it goes, and their
     * faults show in the row. */
    double share = r->threads > 1 ? 1.25 / r->threads : 1.0;
    g.prefill = (size_t)((random ? 56.0 : 32.0) * (double)g.keys * share);
    g.v = r->v;
    g.workers = r->threads;
    for (int i = 0; i < r->threads; i++) {
        ws[i].index = i;
        ws[i].ctx.mode = g.alloc;
    }
    double ti = run_phase(ws, 0);
    uint64_t inserted = 0;
    size_t pool_used = 0;
    r->ins_cpu[rep] = r->ins_faults[rep] = 0;
    for (int i = 0; i < r->threads; i++) {
        inserted += ws[i].done;
        r->ins_cpu[rep] += (double)ws[i].cpu_ns / 1e9;
        r->ins_faults[rep] += (double)ws[i].faults;
        pool_used += art_pool_used(&ws[i].ctx);
    }
    r->pool_per_key = (double)pool_used / (double)g.keys;
    if (g.corrupt) {
        /* A key no thread inserted, behind the accounting's back. */
        art_ctx_t *c = &ws[0].ctx;
        art_lock_insert(g.root, key_of(random, (uint64_t)g.keys), c);
    }
    double tl = run_phase(ws, 1);
    r->ins[rep] = (double)g.keys / ti / 1e6;
    r->look[rep] = (double)g.keys / tl / 1e6;
    if (inserted != (uint64_t)g.keys)
        fail(r, "%llu inserts succeeded for %ld distinct keys", (unsigned long long)inserted, g.keys);
    for (int i = 0; i < r->threads; i++)
        if (ws[i].misses || ws[i].wrong)
            fail(r, "key %#llx %s after it was inserted (%llu such lookups on thread %d)",
                 (unsigned long long)ws[i].first_bad, ws[i].misses ? "not found" : "found with a wrong value",
                 (unsigned long long)(ws[i].misses + ws[i].wrong), i);
    for (long i = 0; i < g.probes; i++) {
        uint64_t k = key_of(random, (uint64_t)(g.keys + i)), val;
        if (art_olc_lookup(g.root, k, &val))
            fail(r, "key %#llx was never inserted but is found (phantom)", (unsigned long long)k);
    }
    char why[256];
    uint64_t leaves = 0;
    if (art_check(g.root, &leaves, why, sizeof why) != 0)
        fail(r, "%s", why);
    if (leaves != (uint64_t)g.keys)
        fail(r, "the tree holds %llu leaves for %ld keys", (unsigned long long)leaves, g.keys);
    r->leaves = leaves;
    for (int i = 0; i < r->threads; i++) {
        r->restarts.insert += ws[i].restarts.insert;
        r->restarts.lookup += ws[i].restarts.lookup;
    }
    art_destroy(g.root, g.alloc);
    for (int i = 0; i < r->threads; i++)
        art_ctx_release(&ws[i].ctx);
    free(ws);
    /* Give the heap back, so that every repetition allocates from the same
     * state.  Without this glibc keeps the 16 Mi freed leaves on its fast
     * bins, in the order the teardown freed them (key order: random
     * addresses, since they were allocated in a shuffled order), and the
     * next repetition's mallocs pop them one dependent cache miss at a
     * time: measured at 16 Mi dense keys, twice the insert CPU time of a
     * repetition on a fresh heap.  Which thread inherits such an arena
     * depends on the rows before, so without the trim the rows of one run
     * were not comparable (OLC at 2 threads waited on its slow thread). */
    malloc_trim(0);
}

/* The keys in a shuffled order (Fisher-Yates, fixed seed). */
static void make_order(int random)
{
    uint64_t s = ART_SEED;
    for (long i = 0; i < g.keys; i++)
        g.order[i] = key_of(random, (uint64_t)i);
    for (long i = g.keys - 1; i > 0; i--) {
        long j = (long)(hps_xorshift64(&s) % (uint64_t)(i + 1));
        uint64_t t = g.order[i];
        g.order[i] = g.order[j];
        g.order[j] = t;
    }
}

static void on_watchdog(int sig)
{
    static const char msg[] = "hps-workload-art: watchdog: the run took far longer than it "
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

static double speedup(double a, double b) { return b > 0 ? a / b : 0; }


static const char *const k_default_variants =
    "mutex,tts,elide-r0,elide-r1,elide-r3,elide-r7,stm,olc";

static void usage(void)
{
    fprintf(stderr, "usage: hps-workload-art [--keys N] [--threads LIST] [--reps R] "
            "[--variants LIST] [--keysets dense,random] [--alloc malloc|pool] [--quick] "
            "[--selftest-corrupt]\n");
}

static void parse_variant(const char *name, variant_t *v)
{
    if (!strcmp(name, "olc")) {
        wl_sync_parse(name, &v->sync);
        v->insert = art_olc_insert;
        v->lookup = art_olc_lookup;
        return;
    }
    if (wl_sync_parse(name, &v->sync) != 0) {
        hps_bench_log("unknown variant '%s' (choose from mutex, tts, elide, elide-rN, stm, olc)", name);
        exit(2);
    }
    v->insert = v->sync.kind == WL_STM ? art_tm_insert : art_lock_insert;
    v->lookup = v->sync.kind == WL_STM ? art_tm_lookup : art_lock_lookup;
}

/* The document's row for r; the statistics are the last run's (stats_begin
 * ran before its repetitions). */
static void emit_row(row_t *r)
{
    hps_json_begin_object(NULL);
    hps_json_str("variant", r->v->sync.name);
    hps_json_str("keyset", r->keyset);
    hps_json_int("threads", r->threads);
    hps_json_int("reps", r->reps);
    hps_json_num_array("insert_mops_reps", r->ins, r->reps);
    hps_json_num_array("lookup_mops_reps", r->look, r->reps);
    hps_json_num_array("insert_cpu_seconds_reps", r->ins_cpu, r->reps);
    hps_json_num_array("insert_minor_faults_reps", r->ins_faults, r->reps);
    if (g.alloc == ART_ALLOC_POOL)
        hps_json_num("pool_bytes_per_key", r->pool_per_key);
    double tmp[HPS_BENCH_MAX_REPS];
    memcpy(tmp, r->ins, sizeof(double) * (size_t)r->reps);
    r->ins_med = hps_bench_median(tmp, (size_t)r->reps);
    memcpy(tmp, r->look, sizeof(double) * (size_t)r->reps);
    r->look_med = hps_bench_median(tmp, (size_t)r->reps);
    hps_json_num("insert_mops_median", r->ins_med);
    hps_json_num("lookup_mops_median", r->look_med);
    char check[160];
    snprintf(check, sizeof check, "%llu keys found with their values, %ld absent keys missed, "
             "structure and leaf count checked", (unsigned long long)r->leaves, g.probes);
    hps_json_str("check", check);
    if (r->v->sync.kind == WL_OTHER) {
        /* OLC's restarts: a reader whose version moved, a writer whose
         * upgrade lost a race (every repetition, every thread). */
        hps_json_begin_object("olc");
        hps_json_uint("restarts_insert", r->restarts.insert);
        hps_json_uint("restarts_lookup", r->restarts.lookup);
        hps_json_end_object();
        hps_json_null("elision");
        hps_json_null("tm");
    } else {
        wl_sync_stats_json();
    }
    hps_json_end_object();
}

/* What this program offers, for `hpsync bench workloads` (--describe;
 * docs/workloads.md, "The workload program's contract"). */
static const char k_describe[] =
    "{\"workload\":\"art\",\"title\":\"adaptive radix tree: insert then look up N keys (elis"
    "ion with restarts, TM, optimistic lock coupling)\",\"variants\":[{\"name\":\"mutex\",\"k"
    "ind\":\"lock\",\"baseline\":true},{\"name\":\"tts\",\"kind\":\"lock\"},{\"name\":\"elide-r0\",\"ki"
    "nd\":\"elide\",\"restarts\":0,\"quick\":true},{\"name\":\"elide-r1\",\"kind\":\"elide\",\"restar"
    "ts\":1,\"quick\":false},{\"name\":\"elide-r3\",\"kind\":\"elide\",\"restarts\":3,\"quick\":true"
    "},{\"name\":\"elide-r7\",\"kind\":\"elide\",\"restarts\":7,\"quick\":false},{\"name\":\"stm\",\"k"
    "ind\":\"tm\",\"env\":{\"HPSYNC_TM\":\"stm\"}},{\"name\":\"olc\",\"kind\":\"other\"}],\"metrics\":[{"
    "\"name\":\"insert_mops\",\"unit\":\"Mops/s\",\"better\":\"higher\"},{\"name\":\"lookup_mops\",\"u"
    "nit\":\"Mops/s\",\"better\":\"higher\"}],\"dims\":[\"keyset\"],\"threads\":{\"default\":[1,2,8]"
    ",\"quick\":[1,2]},\"args\":{\"default\":[\"--keys\",\"524288\"],\"quick\":[\"--quick\"]},\"sec"
    "onds\":{\"default\":1.0,\"quick\":0.6},\"figures\":[{\"shape\":\"restarts\",\"metric\":\"inser"
    "t_mops\"},{\"shape\":\"restarts\",\"metric\":\"lookup_mops\"}]}";

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--describe")) {
        fputs(k_describe, stdout);
        return fflush(stdout) != 0;
    }
    long keys = -1, reps = -1;
    int quick = 0;
    const char *variants = k_default_variants, *keysets = "dense,random", *threads = NULL;
    g.alloc = ART_ALLOC_MALLOC;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--keys"))
            keys = hps_bench_parse_num("--keys", v, 1, 64l << 20), i++;
        else if (!strcmp(argv[i], "--reps"))
            reps = hps_bench_parse_num("--reps", v, 1, HPS_BENCH_MAX_REPS), i++;
        else if (!strcmp(argv[i], "--threads") && v)
            threads = v, i++;
        else if (!strcmp(argv[i], "--variants") && v)
            variants = v, i++;
        else if (!strcmp(argv[i], "--keysets") && v)
            keysets = v, i++;
        else if (!strcmp(argv[i], "--alloc") && v && (!strcmp(v, "malloc") || !strcmp(v, "pool")))
            g.alloc = !strcmp(v, "pool") ? ART_ALLOC_POOL : ART_ALLOC_MALLOC, i++;
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--selftest-corrupt"))
            g.corrupt = 1;
        else {
            hps_bench_log("bad option '%s'%s", argv[i], v ? "" : " (or its value is missing)");
            usage();
            return 2;
        }
    }
    /* 16 M keys by default (the study's size), 256 Ki with --quick. */
    g.keys = keys > 0 ? keys : quick ? 256l << 10 : 16l << 20;
    g.probes = g.keys / 16 > 0 ? g.keys / 16 : 1;
    g.reps = (int)(reps > 0 ? reps : quick ? 1 : 3);
    char names[MAX_VARIANTS][24], ks[2][24], th[MAX_THREADS_LIST][24];
    int nv = parse_list(variants, names, MAX_VARIANTS), nk = parse_list(keysets, ks, 2);
    g.nthreads = parse_list(threads ? threads : "1,2", th, MAX_THREADS_LIST);
    variant_t vs[MAX_VARIANTS];
    int wants_stm = 0;
    for (int i = 0; i < nv; i++) {
        parse_variant(names[i], &vs[i]);
        wants_stm |= vs[i].sync.kind == WL_STM;
    }
    for (int i = 0; i < g.nthreads; i++)
        g.threads[i] = (int)hps_bench_parse_num("--threads", th[i], 1, 256);
    for (int i = 0; i < nk; i++)
        if (strcmp(ks[i], "dense") && strcmp(ks[i], "random")) {
            hps_bench_log("unknown key set '%s' (dense, random)", ks[i]);
            return 2;
        }
    if (!nv || !nk || !g.nthreads) {
        hps_bench_log("--variants, --keysets and --threads need at least one item each");
        return 2;
    }
    wl_sync_settle_env(argv, wants_stm);
    if (!(g.order = malloc(sizeof *g.order * (size_t)g.keys))) {
        hps_bench_log("out of memory for %ld keys", g.keys);
        return 1;
    }
    /* Generous: a minute, plus ten seconds per million key operations of every run. */
    signal(SIGALRM, on_watchdog);
    alarm((unsigned)(60 + (long)nv * nk * g.nthreads * g.reps * (2 * g.keys / 100000 + 1)));

    char *doc = NULL;
    size_t doclen = 0;
    FILE *mem = open_memstream(&doc, &doclen);
    hps_json_open(mem, 0);
    hps_json_begin_object(NULL);
    hps_bench_context();
    hps_json_str("workload", "art");
    hps_json_int("keys", g.keys);
    hps_json_int("probes", g.probes);
    hps_json_bool("quick", quick);
    hps_json_str("alloc", g.alloc == ART_ALLOC_POOL ? "pool" : "malloc");
    hps_json_str("malloc_provider", hps_bench_provider("malloc"));
    hps_json_str("tm_backend", wants_stm ? wl_sync_tm_backend() : NULL);
    hps_json_begin_array("rows");
    int nrows = nv * nk * g.nthreads;
    row_t *rows = calloc((size_t)nrows, sizeof *rows);
    int at = 0;
    for (int k = 0; k < nk; k++) {
        int random = !strcmp(ks[k], "random");
        make_order(random);
        for (int t = 0; t < g.nthreads; t++)
            for (int i = 0; i < nv; i++) {
                row_t *r = &rows[at++];
                r->v = &vs[i];
                r->keyset = random ? "random" : "dense";
                r->threads = g.threads[t];
                r->reps = g.reps;
                wl_sync_use(&vs[i].sync);
                wl_sync_stats_begin();
                for (int rep = 0; rep < g.reps; rep++)
                    run_rep(r, rep, random);
                emit_row(r);
            }
    }
    hps_json_end_array();
    /* Speed-ups of medians: against the same variant's 1-thread row and
     * against the mutex at the same thread count (null when not run). */
    hps_json_begin_array("speedups");
    for (int a = 0; a < nrows; a++) {
        row_t *r = &rows[a], *one = NULL, *mx = NULL;
        for (int b = 0; b < nrows; b++) {
            if (strcmp(rows[b].keyset, r->keyset))
                continue;
            if (rows[b].v == r->v && rows[b].threads == 1)
                one = &rows[b];
            if (!strcmp(rows[b].v->sync.name, "mutex") && rows[b].threads == r->threads)
                mx = &rows[b];
        }
        hps_json_begin_object(NULL);
        hps_json_str("variant", r->v->sync.name);
        hps_json_str("keyset", r->keyset);
        hps_json_int("threads", r->threads);
        if (one) {
            hps_json_num("insert_vs_1thread", speedup(r->ins_med, one->ins_med));
            hps_json_num("lookup_vs_1thread", speedup(r->look_med, one->look_med));
        } else {
            hps_json_null("insert_vs_1thread");
            hps_json_null("lookup_vs_1thread");
        }
        if (mx) {
            hps_json_num("insert_vs_mutex", speedup(r->ins_med, mx->ins_med));
            hps_json_num("lookup_vs_mutex", speedup(r->look_med, mx->look_med));
        } else {
            hps_json_null("insert_vs_mutex");
            hps_json_null("lookup_vs_mutex");
        }
        hps_json_end_object();
    }
    hps_json_end_array();
    hps_json_end_object();
    if (hps_json_finish() != 0 || fclose(mem) != 0)
        return 1;
    /* Only a run whose every repetition validated prints anything. */
    fwrite(doc, 1, doclen, stdout);
    free(doc);
    free(rows);
    free(g.order);
    return fflush(stdout) != 0;
}
