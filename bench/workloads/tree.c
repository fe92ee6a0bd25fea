// SPDX-License-Identifier: MIT
/*
 * hps-workload-tree: the balanced tree of the cache-index-aware allocator
 * study, under synchronization variants, on the workload harness
 * (harness.h).  An AVL tree (bench/tm/tree.c, written once against tx.h:
 * here built for a global lock and for hpsync TM) starts with half of the
 * keys [0, 65536) present; threads then run 30% inserts, 30% deletes and
 * 40% lookups of random keys, a fixed number of operations a run shared
 * among them.  Nodes come from malloc, so LD_PRELOAD chooses the allocator
 * ("malloc_provider" says which one ran).
 *
 * Variants: mutex, tts, elide, stm (harness_sync.h); threads default 4 (the
 * study's).  Each run starts from a freshly built tree (for its variant's
 * build of tree.c).  Validation after every run (bench/tm/sets.c): AVL
 * order and balance, stored heights, and the key set: a key is present
 * exactly when its start state plus every thread's successful inserts
 * minus deletes says so.  --selftest-corrupt (tests only) inserts a key no
 * thread counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness_sync.h"
#include "hpsync/tm.h"
#include "tm_bench.h"

#define TREE_SEED 0x2545F4914F6CDD1Dull
#define TREE_RANGE 65536

/* The two builds of bench/tm/tree.c (renamed by CMake). */
extern const tmb_set_ops_t wl_tree_lock_ops, wl_tree_tm_ops;

/* a: key range (half present at the start); b: updates per 100 operations;
 * n: operations a run */
static const wl_row_t k_rows[] = {
    { "tree", TREE_RANGE, 60, 200000, 1, NULL },
};

typedef struct tree {
    tmb_row_t row;
    void *ds;
    long n;
    int threads, cur;
    tmb_thread_t *ts, **tsp;
    wl_sync_stats_t stats[WL_SYNC_N];
} tree_t;

static void *setup(const wl_row_t *row, int threads, long n)
{
    tree_t *t = wl_alloc(sizeof *t);
    t->row = (tmb_row_t){ "tree", &tmb_set, &wl_tree_lock_ops, row->a / 2, (uint64_t)row->a, (int)row->b };
    t->n = n;
    t->threads = threads;
    t->ts = wl_alloc(sizeof(tmb_thread_t) * (size_t)threads);
    t->tsp = wl_alloc(sizeof(tmb_thread_t *) * (size_t)threads);
    for (int i = 0; i < threads; i++) {
        t->tsp[i] = &t->ts[i];
        t->ts[i].net = wl_alloc(t->row.range + 1);
    }
    return t;
}

static uint64_t ops(void *ctx)
{
    return (uint64_t)((tree_t *)ctx)->n;
}

static void doc_json(void)
{
    /* Keys 1..65536 inside the tree: the study's [0, 65536) shifted by one
     * (tree.c keeps 0 as "below every key"). */
    hps_json_int("key_range", TREE_RANGE);
    hps_json_int("start_keys", TREE_RANGE / 2);
    hps_json_str("mix", "30% insert, 30% delete, 40% lookup");
    hps_json_str("tm_backend", hps_tm_backend_name());
}

static void params_json(void *ctx)
{
    tree_t *t = ctx;
    hps_json_int("key_range", (long)t->row.range);
    hps_json_int("start_keys", t->row.size);
    hps_json_int("update_pct", t->row.update_pct);
}

static void drop(tree_t *t)
{
    if (t->ds)
        t->row.kind->destroy(t->ds);
    t->ds = NULL;
}

static void reset(void *ctx)
{
    tree_t *t = ctx;
    drop(t);
    for (int i = 0; i < t->threads; i++) {
        memset(t->ts[i].net, 0, t->row.range + 1);
        t->ts[i].rng = (TREE_SEED ^ (0x9E3779B97F4A7C15ull * (uint64_t)(i + 1))) | 1;
    }
}

/* The tree is built for the variant: its lock, or its TM build. */
static void prepare(void *ctx, const wl_variant_t *v)
{
    tree_t *t = ctx;
    t->cur = v->id;
    t->row.set = wl_sync_harness_use(v)->kind == WL_STM ? &wl_tree_tm_ops : &wl_tree_lock_ops;
    uint64_t rng = TREE_SEED;
    t->ds = t->row.kind->create(&t->row, &rng);
    wl_sync_stats_begin();
}

static void run(void *ctx, const wl_variant_t *v, int tid, int n)
{
    tree_t *t = ctx;
    (void)v;
    long k = t->n * (tid + 1) / n - t->n * tid / n;
    for (long i = 0; i < k; i++)
        t->row.kind->op(t->ds, &t->row, &t->ts[tid]);
}

static int validate(void *ctx, char *why, size_t len)
{
    tree_t *t = ctx;
    wl_sync_stats_add(&t->stats[t->cur]);
    return t->row.kind->validate(t->ds, &t->row, t->tsp, t->threads, (uint64_t)t->n, why, len);
}

static void corrupt(void *ctx)
{
    tree_t *t = ctx;
    t->row.kind->corrupt(t->ds, &t->row);
}

static void variant_json(void *ctx, const wl_variant_t *v, int threads, double median_s)
{
    tree_t *t = ctx;
    (void)threads, (void)median_s;
    wl_sync_stats_write(wl_sync_of(v), &t->stats[v->id]);
}

static void teardown(void *ctx)
{
    tree_t *t = ctx;
    drop(t);
    for (int i = 0; i < t->threads; i++)
        free(t->ts[i].net);
    free(t->ts);
    free(t->tsp);
    free(t);
}

static const wl_workload_t k_tree = {
    .name = "tree",
    .title = "AVL tree, 30% inserts, 30% deletes, 40% lookups, under each allocator",
    .seconds = 0.20,
    .rows = k_rows,
    .nrows = 1,
    WL_SYNC_VARIANTS,
    WL_HOOKS,
    .dim = "",
    .threads = { 4 },
    .doc_json = doc_json,
    .prepare = prepare,
    .variant_json = variant_json,
};

int main(int argc, char **argv)
{
    return wl_sync_main(&k_tree, argc, argv);
}
