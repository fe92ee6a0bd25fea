// SPDX-License-Identifier: MIT
/*
 * hps-workload-ring: the ring traversal of the cache-index-aware allocator
 * study, under synchronization variants, on the workload harness
 * (harness.h).  For each node size (64 B to 4 KiB, a row each) one ring of
 * 128 nodes is allocated back to back with malloc and linked in a fixed
 * random order (bench/malloc/ring_build.c, the same ring hps-bench-malloc
 * walks); every ring is built before the first run, in ascending sizes, as
 * the study does.  Threads then walk a ring lap after lap, each lap one
 * critical section of the variant, a fixed number of laps a run shared
 * among them.  Where malloc puts the nodes decides how many L1 sets their
 * first lines fall in, hence the time per node: LD_PRELOAD chooses the
 * allocator ("malloc_provider" says which one ran).
 *
 * Variants: mutex, tts, elide, stm (harness_sync.h).  The figure is ns per
 * node visited (wall time / nodes visited by all threads), per repetition,
 * and vs_64B_floor, its median over the 64 B ring's (same variant and
 * thread count).  The repetitions run every size in turn (the harness's
 * interleave_rows), so a slow phase of the shared machine does not land on
 * one size only and fake a climb above the floor.  Validation: each lap
 * adds up the ring's values, so every thread's sum must be its laps times
 * 0+1+...+127, and the ring must still be one cycle of 128 afterwards.
 * --selftest-corrupt (tests only) miscounts one thread's sum.  Rows are
 * named by size: --rows 64,1024 runs those two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness_sync.h"
#include "hpsync/tm.h"
#include "ring_build.h"

#define NODES 128
#define LAPS 100000                  /* a run's laps, shared among the threads */

/* a: node size in bytes */
static const wl_row_t k_rows[] = {
    { "64", 64, 0, LAPS, 1, NULL },        { "96", 96, 0, LAPS, 0, NULL },
    { "128", 128, 0, LAPS, 1, NULL },      { "256", 256, 0, LAPS, 0, NULL },
    { "512", 512, 0, LAPS, 1, NULL },      { "1000", 1000, 0, LAPS, 0, NULL },
    { "1024", 1024, 0, LAPS, 1, NULL },    { "1536", 1536, 0, LAPS, 0, NULL },
    { "2048", 2048, 0, LAPS, 1, NULL },    { "3000", 3000, 0, LAPS, 0, NULL },
    { "4096", 4096, 0, LAPS, 1, NULL },
};
#define NROWS ((int)(sizeof k_rows / sizeof k_rows[0]))

static mb_ring_node_t *g_rings[NROWS][NODES];
static int g_built;
/* The 64 B ring's median ns/node per variant and thread count. */
static double g_floor[WL_SYNC_N][257];

typedef struct slot {
    uint64_t sum, laps;
    char pad[64 - 2 * sizeof(uint64_t)];     /* one thread's counts per line */
} slot_t;

typedef struct ring {
    const wl_row_t *row;
    mb_ring_node_t *start;
    long laps;
    int threads, stm, cur;
    slot_t *slot;
    wl_sync_stats_t stats[WL_SYNC_N];
} ring_t;

static void *setup(const wl_row_t *row, int threads, long n)
{
    if (!g_built) {
        for (int s = 0; s < NROWS; s++)
            if (mb_ring_build(g_rings[s], NODES, (size_t)k_rows[s].a))
                exit(1);
        g_built = 1;
    }
    ring_t *r = wl_alloc(sizeof *r);
    r->row = row;
    r->start = g_rings[row - k_rows][0];
    r->laps = n;
    r->threads = threads;
    r->slot = wl_alloc(sizeof(slot_t) * (size_t)threads);
    return r;
}

static uint64_t ops(void *ctx)
{
    ring_t *r = ctx;
    return (uint64_t)r->laps * NODES;            /* nodes visited */
}

static void doc_json(void)
{
    hps_json_int("nodes", NODES);
    hps_json_str("tm_backend", hps_tm_backend_name());
}

/* The L1 as the context block reports it (hwloc: hps_bench_topo), so the
 * layout's sets are the document's; 64 B x 64 sets when it says nothing. */
static void l1_geometry(unsigned *line, unsigned *sets)
{
    static unsigned g_line, g_sets;
    if (!g_line) {
        hps_topo_t t;
        g_line = 64, g_sets = 64;
        const hps_cache_info_t *c = &t.l1d;
        uint64_t sets = hps_bench_topo(&t) == 0 ? hps_bench_cache_sets(c) : 0;
        if (sets && (c->line & (c->line - 1)) == 0 && sets * (uint64_t)c->ways * c->line == c->size)
            g_line = c->line, g_sets = (unsigned)sets;
    }
    *line = g_line, *sets = g_sets;
}

static void row_json(void *ctx)
{
    const ring_t *r = ctx;
    hps_json_int("size", r->row->a);
    /* Where this allocator put the ring's first lines: the pages they span
     * (past the data TLB's reach no placement keeps the 64 B ring's time)
     * and the most on one L1 set (what the index-aware placement spreads). */
    unsigned line, sets;
    l1_geometry(&line, &sets);
    long page = sysconf(_SC_PAGESIZE);
    mb_ring_footprint_t f = mb_ring_footprint(g_rings[r->row - k_rows], NODES,
                                              page > 0 ? (size_t)page : 4096, line, sets);
    hps_json_begin_object("layout");
    hps_json_int("pages", f.pages);
    hps_json_int("page_bytes", page > 0 ? page : 4096);
    hps_json_int("max_lines_per_set", f.max_per_set);
    hps_json_int("l1_sets", sets);
    hps_json_int("l1_line", line);
    hps_json_end_object();
}

static void params_json(void *ctx)
{
    ring_t *r = ctx;
    hps_json_int("size", r->row->a);
    hps_json_int("nodes", NODES);
    hps_json_int("laps", r->laps);
}

static void reset(void *ctx)
{
    ring_t *r = ctx;
    memset(r->slot, 0, sizeof(slot_t) * (size_t)r->threads);
}

static void prepare(void *ctx, const wl_variant_t *v)
{
    ring_t *r = ctx;
    r->cur = v->id;
    r->stm = wl_sync_harness_use(v)->kind == WL_STM;
    wl_sync_stats_begin();
}

/* One lap as one critical section of the chosen lock. */
static uint64_t lap_locked(mb_ring_node_t *start)
{
    uint64_t acc = 0;
    tmb_lock_enter();
    mb_ring_node_t *p = start;
    for (int i = 0; i < NODES; i++) {
        acc += p->value;
        p = p->next;
    }
    tmb_lock_exit();
    return acc;
}

/* One lap as a read-only TM section: both words of every node through the
 * TM layer.  p and acc start inside the section (a re-run starts afresh). */
static uint64_t lap_tm(mb_ring_node_t *start)
{
    uint64_t acc;
    HPS_TM_BEGIN_RO();
    mb_ring_node_t *p = start;
    acc = 0;
    for (int i = 0; i < NODES; i++) {
        acc += HPS_TM_READ(&p->value);
        p = HPS_TM_READ(&p->next);
    }
    HPS_TM_END();
    return acc;
}

static void run(void *ctx, const wl_variant_t *v, int tid, int n)
{
    ring_t *r = ctx;
    (void)v;
    long laps = r->laps * (tid + 1) / n - r->laps * tid / n;
    uint64_t sum = 0;
    for (long i = 0; i < laps; i++)
        sum += r->stm ? lap_tm(r->start) : lap_locked(r->start);
    r->slot[tid].sum = sum;
    r->slot[tid].laps = (uint64_t)laps;
}

static int validate(void *ctx, char *why, size_t len)
{
    ring_t *r = ctx;
    const uint64_t lap_sum = mb_ring_lap_sum(NODES);
    wl_sync_stats_add(&r->stats[r->cur]);
    for (int i = 0; i < r->threads; i++)
        if (r->slot[i].sum != r->slot[i].laps * lap_sum) {
            snprintf(why, len, "thread %d summed %llu over %llu laps, want %llu", i,
                     (unsigned long long)r->slot[i].sum, (unsigned long long)r->slot[i].laps,
                     (unsigned long long)(r->slot[i].laps * lap_sum));
            return -1;
        }
    mb_ring_node_t *p = r->start;
    for (int i = 1; i < NODES; i++)
        if ((p = p->next) == r->start) {
            snprintf(why, len, "the ring closes after %d nodes", i);
            return -1;
        }
    if (p->next != r->start) {
        snprintf(why, len, "the ring no longer closes");
        return -1;
    }
    snprintf(why, len, "%ld laps each summed to %llu; ring still one cycle of %d", r->laps,
             (unsigned long long)lap_sum, NODES);
    return 0;
}

static void corrupt(void *ctx)
{
    ((ring_t *)ctx)->slot[0].sum += 1;
}

static void variant_json(void *ctx, const wl_variant_t *v, int threads, double median_s)
{
    ring_t *r = ctx;
    double ns = median_s * 1e9 / (double)ops(r);
    double *floor = &g_floor[v->id][threads < 256 ? threads : 256];
    /* The study's question: how far above the 64 B ring (all first lines
     * in distinct sets) this size's ring runs. */
    if (r->row->a == 64)
        *floor = ns;
    if (*floor > 0)
        hps_json_num("vs_64B_floor", ns / *floor);
    else
        hps_json_null("vs_64B_floor");
    wl_sync_stats_write(wl_sync_of(v), &r->stats[v->id]);
}

static void teardown(void *ctx)
{
    ring_t *r = ctx;
    free(r->slot);
    free(r);
}

/* Wall time per node (the study's figure), and the CPU time the threads
 * spent per node: the same walk without the time they waited for a CPU
 * (a shared machine's run queue, which wall time counts). */
static const wl_metric_t k_metrics[] = {
    { "ns_per_node", "ns/node", "lower", 1e9, 0 },
    { "cpu_ns_per_node", "ns/node", "lower", 1e9, 1 },
};

static const wl_workload_t k_ring = {
    .name = "ring",
    .title = "ring traversal of 128 nodes of 64 B to 4 KiB under each allocator (the cache-index-aware allocator's ring)",
    .seconds = 0.47,
    .rows = k_rows,
    .nrows = NROWS,
    WL_SYNC_VARIANTS,
    WL_HOOKS,
    .metrics = k_metrics,
    .nmetrics = 2,
    .dim = "size",
    .curve = 1,
    .interleave_rows = 1,
    .doc_json = doc_json,
    .row_json = row_json,
    .prepare = prepare,
    .variant_json = variant_json,
};

int main(int argc, char **argv)
{
    return wl_sync_main(&k_ring, argc, argv);
}
