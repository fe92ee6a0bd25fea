// SPDX-License-Identifier: MIT
/*
 * hps-workload-tree: the balanced tree of the cache-index-aware allocator
 * study, under synchronization variants.  An AVL tree (bench/tm/tree.c,
 * written once against tx.h: here built for a global lock and for hpsync
 * TM) starts with half of the keys [0, 65536) present; threads then run
 * 30% inserts, 30% deletes and 40% lookups of random keys for the duration.
 * Nodes come from malloc, so LD_PRELOAD chooses the allocator
 * ("malloc_provider" says which one ran).
 *
 *   hps-workload-tree [--threads LIST] [--duration-ms D] [--reps R]
 *                     [--variants LIST] [--quick] [--selftest-corrupt]
 *
 * Variants: mutex, tts, elide, stm (wl_sync.h); default all four; threads
 * default 4 (the study's).  Validation after every repetition (bench/tm/
 * sets.c): AVL order and balance, stored heights, and the key set: a key is
 * present exactly when its start state plus every thread's successful
 * inserts minus deletes says so.  A wrong result is "tree: <variant> (<T>
 * threads): wrong result: <why>", exit status 1 and no JSON.
 * --selftest-corrupt (tests only) inserts a key no thread counted.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hps_bench.h"
#include "tm_bench.h"
#include "wl_sync.h"

#define MAX_LIST 16
#define TREE_SEED 0x2545F4914F6CDD1Dull
#define TREE_RANGE 65536

/* The two builds of bench/tm/tree.c (renamed by CMake). */
extern const tmb_set_ops_t wl_tree_lock_ops, wl_tree_tm_ops;

static hps_bench_gate_t g_gate;
static const tmb_row_t *g_row;
static void *g_ds;

static void *worker_main(void *arg)
{
    tmb_thread_t *t = arg;
    t->rng = (TREE_SEED ^ (0x9E3779B97F4A7C15ull * (uint64_t)(t->w.index + 1))) | 1;
    if (!(t->net = calloc(g_row->range + 1, 1))) {
        hps_bench_log("tree: out of memory");
        exit(1);
    }
    hps_bench_gate_enter(&g_gate);
    uint64_t ops = 0;
    while (!hps_bench_gate_stopped(&g_gate)) {
        g_row->kind->op(g_ds, g_row, t);
        ops++;
    }
    hps_bench_worker_done(&t->w, ops);
    return NULL;
}

static void on_watchdog(int sig)
{
    static const char msg[] = "hps-workload-tree: watchdog: the run took far longer than it "
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

/* What this program offers, for `hpsync bench workloads` (--describe;
 * docs/workloads.md, "The workload program's contract"). */
static const char k_describe[] =
    "{\"workload\":\"tree\",\"title\":\"AVL tree, 30% inserts, 30% deletes, 40% lookups, und"
    "er each allocator\",\"variants\":[{\"name\":\"mutex\",\"kind\":\"lock\",\"baseline\":true},{\""
    "name\":\"tts\",\"kind\":\"lock\"},{\"name\":\"elide\",\"kind\":\"elide\"},{\"name\":\"stm\",\"kind\":"
    "\"tm\",\"env\":{\"HPSYNC_TM\":\"stm\"}}],\"metrics\":[{\"name\":\"ops_per_sec\",\"unit\":\"ops/s\""
    ",\"better\":\"higher\"}],\"dims\":[],\"allocators\":true,\"threads\":{\"default\":[1,2,8],\"q"
    "uick\":[1,2]},\"args\":{\"default\":[],\"quick\":[\"--quick\"]},\"seconds\":{\"default\":0.25"
    ",\"quick\":0.08}}";

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--describe")) {
        fputs(k_describe, stdout);
        return fflush(stdout) != 0;
    }
    long duration = -1, reps = -1;
    int quick = 0, corrupt = 0;
    const char *variants = "mutex,tts,elide,stm", *threads = "4";
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
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--selftest-corrupt"))
            corrupt = 1;
        else {
            hps_bench_log("bad option '%s'%s", argv[i], v ? "" : " (or its value is missing)");
            fprintf(stderr, "usage: hps-workload-tree [--threads LIST] [--duration-ms D] [--reps R] "
                    "[--variants LIST] [--quick] [--selftest-corrupt]\n");
            return 2;
        }
    }
    duration = duration > 0 ? duration : quick ? 50 : 200;
    reps = reps > 0 ? reps : 3;
    char vn[MAX_LIST][24], tn[MAX_LIST][24];
    int nv = parse_list(variants, vn, MAX_LIST), nt = parse_list(threads, tn, MAX_LIST);
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
    if (!nv || !nt) {
        hps_bench_log("--variants and --threads need at least one item each");
        return 2;
    }
    wl_sync_settle_env(argv, wants_stm);
    signal(SIGALRM, on_watchdog);
    alarm((unsigned)(60 + (long)nv * nt * reps * (duration * 20 / 1000 + 2)));

    char *doc = NULL;
    size_t doclen = 0;
    FILE *mem = open_memstream(&doc, &doclen);
    hps_json_open(mem, 0);
    hps_json_begin_object(NULL);
    hps_bench_context();
    hps_json_str("workload", "tree");
    /* Keys 1..65536 inside the tree: the study's [0, 65536) shifted by one
     * (tree.c keeps 0 as "below every key"). */
    hps_json_int("key_range", TREE_RANGE);
    hps_json_int("start_keys", TREE_RANGE / 2);
    hps_json_str("mix", "30% insert, 30% delete, 40% lookup");
    hps_json_int("duration_ms", duration);
    hps_json_bool("quick", quick);
    hps_json_str("malloc_provider", hps_bench_provider("malloc"));
    hps_json_str("tm_backend", wants_stm ? wl_sync_tm_backend() : NULL);
    hps_json_begin_array("rows");
    double med[MAX_LIST][MAX_LIST];
    for (int v = 0; v < nv; v++) {
        tmb_row_t row = { "tree", &tmb_set, vs[v].kind == WL_STM ? &wl_tree_tm_ops : &wl_tree_lock_ops,
                          TREE_RANGE / 2, TREE_RANGE, 60 };
        g_row = &row;
        wl_sync_use(&vs[v]);
        for (int t = 0; t < nt; t++) {
            double ops[HPS_BENCH_MAX_REPS];
            wl_sync_stats_begin();
            char why[256];
            for (int r = 0; r < reps; r++) {
                uint64_t rng = TREE_SEED;
                hps_bench_totals_t tot;
                g_ds = row.kind->create(&row, &rng);
                char *mem_ws = hps_bench_run_workers(&g_gate, th[t], sizeof(tmb_thread_t), worker_main,
                                                     duration, &tot);
                if (!mem_ws)
                    return 1;
                tmb_thread_t *ts[256];
                for (int i = 0; i < th[t]; i++)
                    ts[i] = (tmb_thread_t *)(mem_ws + sizeof(tmb_thread_t) * (size_t)i);
                if (corrupt)
                    row.kind->corrupt(g_ds, &row);
                if (row.kind->validate(g_ds, &row, ts, th[t], tot.total, why, sizeof why) != 0) {
                    hps_bench_log("tree: %s (%d threads): wrong result: %s", vs[v].name, th[t], why);
                    return 1;
                }
                for (int i = 0; i < th[t]; i++)
                    free(ts[i]->net);
                free(mem_ws);
                row.kind->destroy(g_ds);
                ops[r] = (double)tot.total / tot.secs;
            }
            double tmp[HPS_BENCH_MAX_REPS];
            memcpy(tmp, ops, sizeof(double) * (size_t)reps);
            med[v][t] = hps_bench_median(tmp, (size_t)reps);
            hps_json_begin_object(NULL);
            hps_json_str("variant", vs[v].name);
            hps_json_int("threads", th[t]);
            hps_json_int("reps", reps);
            hps_json_num_array("ops_per_sec_reps", ops, (int)reps);
            hps_json_num("ops_per_sec_median", med[v][t]);
            hps_json_str("check", why);
            wl_sync_stats_json();
            hps_json_end_object();
        }
    }
    hps_json_end_array();
    /* Speed-ups of medians: against the variant's 1-thread row and the
     * mutex at the same thread count (null when not run). */
    hps_json_begin_array("speedups");
    for (int v = 0; v < nv; v++)
        for (int t = 0; t < nt; t++) {
            int one = -1, mx = -1;
            for (int u = 0; u < nt; u++)
                one = th[u] == 1 ? u : one;
            for (int u = 0; u < nv; u++)
                mx = vs[u].kind == WL_MUTEX ? u : mx;
            hps_json_begin_object(NULL);
            hps_json_str("variant", vs[v].name);
            hps_json_int("threads", th[t]);
            if (one >= 0)
                hps_json_num("vs_1thread", med[v][t] / med[v][one]);
            else
                hps_json_null("vs_1thread");
            if (mx >= 0)
                hps_json_num("vs_mutex", med[v][t] / med[mx][t]);
            else
                hps_json_null("vs_mutex");
            hps_json_end_object();
        }
    hps_json_end_array();
    hps_json_end_object();
    if (hps_json_finish() != 0 || fclose(mem) != 0)
        return 1;
    fwrite(doc, 1, doclen, stdout);
    free(doc);
    return fflush(stdout) != 0;
}
