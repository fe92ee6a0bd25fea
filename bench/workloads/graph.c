// SPDX-License-Identifier: MIT
/*
 * hps-workload-graph: graph clustering by concurrent union-find, the
 * multi-lock case of the Intel TSX study for HPC (Yoo et al., SC'13),
 * whose graph clustering took several locks through trylock and lock
 * paths.  A random graph (V vertices, E edges drawn uniformly: G(n, m));
 * threads take contiguous shares of the edge list, and each edge merges
 * the clusters of its two endpoints:
 *
 *   find both roots (no lock; path halving) -> equal: nothing to do
 *   lock the two roots -> re-check both are still roots -> link the larger
 *   id under the smaller -> unlock; a root that stopped being one: retry
 *
 * The density sets the conflict: at average degree 4 one giant cluster
 * forms and every merge into it locks its root (high conflict); at 0.75
 * the clusters stay small and merges rarely meet (low conflict).
 *
 * Variants, all on the same per-vertex locks and the same protocol:
 *   mutex    glibc mutexes: lock the first root, trylock the second; when
 *            busy, unlock, back off and start again (the study's trylock
 *            path; the reference for speed-ups)
 *   adaptive the same path on hpsync's default lock (spins, then parks
 *            like the mutex): what elide and lockset run on
 *   elide    the same path, each lock elided (hpsync/elide.h); a trylock
 *            inside an elided section leaves speculation, as on RTM
 *   lockset  one hps_lockset_lock() section over the two roots' locks
 *            (hpsync/lockset.h) replaces the lock/trylock/back-off path
 *   tm-k<K>, tm-dyn (the harness's) the same merge as a TM section, K
 *            edges a section; no path halving (it would make every find
 *            a writer)
 * Without RTM elide and lockset take their locks (lockset in address
 * order): their figures are the layers' cost, not speculation.
 *
 * Validation after every run: the partition equals a sequential
 * union-find's (for every vertex, the smallest vertex id of its cluster),
 * the threads' links number V minus the clusters, every parent chain ends
 * at a root, and no lock is left held.  Options: harness.h.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "hps_rand.h"
#include "hpsync/elide.h"
#include "hpsync/lockset.h"
#include "hpsync/tm.h"

enum { V_MUTEX, V_ADAPTIVE, V_ELIDE, V_LOCKSET };
static const char *const k_variants[] = { "mutex", "adaptive", "elide", "lockset" };
static const char *const k_kinds[] = { "lock", "lock", "elide", "elide" };

/* a: vertices, b: edges per 64 vertices (the density: 128 is average
 * degree 4, 24 is 0.75; with V it seeds the graph), n: edges.  --quick and
 * --scale shrink the vertices with the edges, so a row keeps its density
 * (its conflict level).  Either way about half the edges or more link two
 * clusters (V minus the clusters of them): the rest find one root and
 * take no lock. */
static const wl_row_t k_rows[] = {
    { "giant-256k", 262144, 128, 524288, 1, NULL },
    { "small-256k", 262144, 24, 98304, 1, NULL },
    { "giant-1m", 1048576, 128, 2097152, 0, NULL },
    { "small-1m", 1048576, 24, 393216, 0, NULL },
};

typedef struct edge {
    uint32_t u, v;
} edge_t;

/* A vertex's hpsync lock and its elision state, on half a line. */
typedef struct vlock {
    hps_lock_t lock;
    hps_elide_state_t st;
} vlock_t;

/* Per thread, a line each: links made (for validation). */
typedef struct tcount {
    _Alignas(64) uint64_t links;
} tcount_t;

typedef struct graph {
    long nv, ne;
    int threads;
    edge_t *edges;
    uint32_t *parent;                /* the forest: parent[x] <= x, roots parent[x] == x */
    vlock_t *lk;
    pthread_mutex_t *mu;
    tcount_t *count;
    hps_elide_stats_t elide_stats;   /* elide: shared counters, summed over the reps */
    hps_au64 ls_elided, ls_locked, ls_aborts;   /* lockset: the threads' counts, summed */
    uint32_t *ref;                   /* the sequential partition: smallest id of the cluster */
    uint32_t *roots, *mins;          /* validation scratch */
    long ref_clusters, ref_largest;
} graph_t;

/* ---- setup: the graph and the sequential reference -------------------------- */

static uint32_t seq_find(uint32_t *p, uint32_t x)
{
    uint32_t r = x;
    while (p[r] != r)
        r = p[r];
    while (p[x] != r) {
        uint32_t next = p[x];
        p[x] = r;
        x = next;
    }
    return r;
}

/* The partition of a forest as labels: for every vertex, the smallest id
 * in its cluster (independent of which vertex is the root). */
static void labels(long nv, const uint32_t *roots, uint32_t *mins, uint32_t *out)
{
    for (long x = 0; x < nv; x++)
        mins[x] = UINT32_MAX;
    for (long x = 0; x < nv; x++)
        if ((uint32_t)x < mins[roots[x]])
            mins[roots[x]] = (uint32_t)x;
    for (long x = 0; x < nv; x++)
        out[x] = mins[roots[x]];
}

static void reference(graph_t *g)
{
    /* A plain union-find by size with path compression: nothing shared
     * with the parallel code but the edge list. */
    uint32_t *p = wl_alloc(sizeof(uint32_t) * (size_t)g->nv);
    uint32_t *size = wl_alloc(sizeof(uint32_t) * (size_t)g->nv);
    for (long x = 0; x < g->nv; x++)
        p[x] = (uint32_t)x, size[x] = 1;
    for (long i = 0; i < g->ne; i++) {
        uint32_t a = seq_find(p, g->edges[i].u), b = seq_find(p, g->edges[i].v);
        if (a == b)
            continue;
        if (size[a] < size[b]) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        p[b] = a;
        size[a] += size[b];
    }
    g->ref_clusters = 0;
    g->ref_largest = 0;
    for (long x = 0; x < g->nv; x++) {
        g->roots[x] = seq_find(p, (uint32_t)x);
        if (g->roots[x] == (uint32_t)x) {
            g->ref_clusters++;
            if (size[x] > g->ref_largest)
                g->ref_largest = size[x];
        }
    }
    labels(g->nv, g->roots, g->mins, g->ref);
    free(p);
    free(size);
}

static void *setup(const wl_row_t *row, int threads, long n)
{
    graph_t *g = wl_alloc(sizeof *g);
    g->ne = n;
    g->nv = (long)((double)row->a * (double)n / (double)row->n);
    if (g->nv < 16)
        g->nv = 16;
    g->threads = threads;
    g->edges = wl_alloc(sizeof(edge_t) * (size_t)g->ne);
    g->parent = wl_alloc(sizeof(uint32_t) * (size_t)g->nv);
    g->lk = wl_alloc(sizeof(vlock_t) * (size_t)g->nv);
    g->mu = wl_alloc(sizeof(pthread_mutex_t) * (size_t)g->nv);
    g->count = wl_alloc(sizeof(tcount_t) * (size_t)threads);
    g->ref = wl_alloc(sizeof(uint32_t) * (size_t)g->nv);
    g->roots = wl_alloc(sizeof(uint32_t) * (size_t)g->nv);
    g->mins = wl_alloc(sizeof(uint32_t) * (size_t)g->nv);
    for (long x = 0; x < g->nv; x++) {
        hps_lock_init(&g->lk[x].lock, HPS_LOCK_DEFAULT);
        pthread_mutex_init(&g->mu[x], NULL);
    }
    uint64_t rng = 0x2545F4914F6CDD1Dull ^ (uint64_t)(g->nv * 977 + row->b);
    for (long i = 0; i < g->ne; i++) {
        uint32_t u = (uint32_t)(hps_xorshift64(&rng) % (uint64_t)g->nv), v;
        do
            v = (uint32_t)(hps_xorshift64(&rng) % (uint64_t)g->nv);
        while (v == u);
        g->edges[i] = (edge_t){ u, v };
    }
    reference(g);
    return g;
}

static uint64_t ops(void *ctx)
{
    return (uint64_t)((graph_t *)ctx)->ne;
}

static void params_json(void *ctx)
{
    graph_t *g = ctx;
    hps_json_int("vertices", g->nv);
    hps_json_int("edges", g->ne);
    hps_json_int("clusters", g->ref_clusters);
    hps_json_int("largest_cluster", g->ref_largest);
}

static void reset(void *ctx)
{
    graph_t *g = ctx;
    for (long x = 0; x < g->nv; x++) {
        g->parent[x] = (uint32_t)x;
        hps_store_relaxed(&g->lk[x].st.v, 0);
    }
    for (int t = 0; t < g->threads; t++)
        g->count[t].links = 0;
}

/* ---- the lock paths ---------------------------------------------------------- */

/* The root of x, halving the path on the way: a non-root's parent only
 * ever moves up to an ancestor, and roots are written only under their
 * locks, so these unlocked loads and stores can be stale but never wrong
 * (the roots are re-checked under the locks). */
static uint32_t find(uint32_t *parent, uint32_t x)
{
    for (;;) {
        uint32_t p = hps_plain_load_relaxed(&parent[x]);
        if (p == x)
            return x;
        uint32_t gp = hps_plain_load_relaxed(&parent[p]);
        if (gp != p)
            hps_plain_store_relaxed(&parent[x], gp);
        x = gp;
    }
}

/* Both still roots (under their locks): link the larger id under the
 * smaller, so parent[x] <= x always and no cycle can form. */
static int link_roots(uint32_t *parent, uint32_t a, uint32_t b)
{
    if (hps_plain_load_relaxed(&parent[a]) != a || hps_plain_load_relaxed(&parent[b]) != b)
        return 0;
    if (a < b)
        hps_plain_store_relaxed(&parent[b], a);
    else
        hps_plain_store_relaxed(&parent[a], b);
    return 1;
}

/* After a failed trylock: a random wait that doubles per failure, and the
 * processor given up once the other holder may be off it (oversubscribed). */
static void backoff(uint64_t *rng, unsigned *fails)
{
    unsigned shift = *fails < 10 ? *fails : 10;
    unsigned spins = 1 + (unsigned)(hps_xorshift64(rng) % (1u << shift));
    for (unsigned i = 0; i < spins; i++)
        hps_cpu_relax();
    if (++*fails >= 8)
        sched_yield();
}

/* The lock and trylock path of one variant on the roots a (locked) and b
 * (tried).  Returns 1 when the merge ran (linked or found already done). */
static int merge_trylock(graph_t *g, int id, uint32_t a, uint32_t b, int *linked)
{
    vlock_t *la = &g->lk[a], *lb = &g->lk[b];
    hps_elide_stats_t *es = &g->elide_stats;
    switch (id) {
    case V_MUTEX:
        pthread_mutex_lock(&g->mu[a]);
        if (pthread_mutex_trylock(&g->mu[b]) != 0) {
            pthread_mutex_unlock(&g->mu[a]);
            return 0;
        }
        *linked = link_roots(g->parent, a, b);
        pthread_mutex_unlock(&g->mu[b]);
        pthread_mutex_unlock(&g->mu[a]);
        return 1;
    case V_ADAPTIVE:
        hps_lock_lock(&la->lock);
        if (hps_lock_trylock(&lb->lock) != 0) {
            hps_lock_unlock(&la->lock);
            return 0;
        }
        *linked = link_roots(g->parent, a, b);
        hps_lock_unlock(&lb->lock);
        hps_lock_unlock(&la->lock);
        return 1;
    default: /* V_ELIDE: inner first on the way out (nesting) */
        hps_elide_lock_ex(&la->lock, &la->st, es);
        if (hps_elide_trylock_ex(&lb->lock, es) != 0) {
            hps_elide_unlock_ex(&la->lock, &la->st, es);
            return 0;
        }
        *linked = link_roots(g->parent, a, b);
        hps_elide_unlock_ex(&lb->lock, &lb->st, es);
        hps_elide_unlock_ex(&la->lock, &la->st, es);
        return 1;
    }
}

/* One edge on the lock variants: 1 when this thread linked two clusters. */
static int merge_edge(graph_t *g, int id, edge_t e, uint64_t *rng)
{
    unsigned fails = 0;
    for (;;) {
        uint32_t a = find(g->parent, e.u), b = find(g->parent, e.v);
        if (a == b)
            return 0;
        int linked = 0;
        if (id == V_LOCKSET) {
            hps_lock_t *set[2] = { &g->lk[a].lock, &g->lk[b].lock };
            hps_lockset_lock(set, 2);
            linked = link_roots(g->parent, a, b);
            hps_lockset_unlock(set, 2);
        } else if (!merge_trylock(g, id, a, b, &linked)) {
            backoff(rng, &fails);
            continue;
        }
        if (linked)
            return 1;
        /* A root was linked by another thread meanwhile: find again. */
    }
}

/* ---- the TM path --------------------------------------------------------------- */

typedef struct tm_arg {
    graph_t *g;
    int tid;
} tm_arg_t;

static uint32_t tm_find(uint32_t *parent, uint32_t x)
{
    for (;;) {
        uint32_t p = HPS_TM_READ(&parent[x]);
        if (p == x)
            return x;
        x = p;
    }
}

static void tm_edge(long i, void *arg)
{
    tm_arg_t *t = arg;
    graph_t *g = t->g;
    uint32_t a = tm_find(g->parent, g->edges[i].u), b = tm_find(g->parent, g->edges[i].v);
    if (a == b)
        return;
    if (a < b)
        HPS_TM_WRITE(&g->parent[b], a);
    else
        HPS_TM_WRITE(&g->parent[a], b);
    uint64_t *links = &g->count[t->tid].links;
    HPS_TM_WRITE(links, HPS_TM_READ(links) + 1);
}

static void run(void *ctx, const wl_variant_t *v, int tid, int n)
{
    graph_t *g = ctx;
    long lo = g->ne * tid / n, hi = g->ne * (tid + 1) / n;
    if (v->id == WL_TM) {
        tm_arg_t arg = { g, tid };
        wl_tm_for(v, lo, hi, tm_edge, &arg);
        return;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull + (uint64_t)tid * 0xBF58476D1CE4E5B9ull;
    uint64_t links = 0;
    for (long i = lo; i < hi; i++)
        links += (uint64_t)merge_edge(g, v->id, g->edges[i], &rng);
    g->count[tid].links = links;
    if (v->id == V_LOCKSET) {
        /* Per-thread counts, and each run's threads are new ones. */
        hps_lockset_stats_t st;
        hps_lockset_stats_get(&st);
        hps_faa_relaxed(&g->ls_elided, st.elided);
        hps_faa_relaxed(&g->ls_locked, st.locked);
        hps_faa_relaxed(&g->ls_aborts, st.aborts);
    }
}

/* The elided variants' statistics over the row's repetitions, in the
 * shape the runner's abort figure reads: where sections ran as
 * transactions (none without RTM or an injected backend), their aborts. */
static void variant_json(void *ctx, const wl_variant_t *v, int threads, double median_s)
{
    graph_t *g = ctx;
    (void)threads, (void)median_s;
    if (v->id != WL_TM)              /* a TM variant's the harness wrote */
        hps_json_null("tm");
    if (v->id != V_ELIDE && v->id != V_LOCKSET) {
        hps_json_null("elision");
        return;
    }
    hps_json_begin_object("elision");
    hps_json_str("backend", hps_elide_backend_name());
    if (v->id == V_ELIDE) {
        static const char *const causes[HPS_ELIDE_NCAUSES] = { "conflict", "capacity", "busy",
                                                               "explicit", "other" };
        hps_elide_stats_t *e = &g->elide_stats;
        uint64_t aborts = 0;
        for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
            aborts += hps_load_relaxed(&e->aborts[c]);
        hps_json_uint("begun", hps_load_relaxed(&e->attempts));
        hps_json_uint("commits", hps_load_relaxed(&e->commits));
        hps_json_uint("aborts", aborts);
        hps_json_begin_object("aborts_by_cause");
        for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
            if (hps_load_relaxed(&e->aborts[c]))
                hps_json_uint(causes[c], hps_load_relaxed(&e->aborts[c]));
        hps_json_end_object();
        hps_json_uint("fallbacks", hps_load_relaxed(&e->fallbacks));
        hps_json_uint("skips", hps_load_relaxed(&e->skips));
    } else {
        /* The lockset counts no causes: sets run as one transaction
         * (commits), sets taken lock by lock, and aborts. */
        hps_json_uint("commits", hps_load_relaxed(&g->ls_elided));
        hps_json_uint("locked", hps_load_relaxed(&g->ls_locked));
        hps_json_uint("aborts", hps_load_relaxed(&g->ls_aborts));
        hps_json_begin_object("aborts_by_cause");
        hps_json_end_object();
    }
    hps_json_end_object();
}

/* ---- validation ---------------------------------------------------------------- */

static int validate(void *ctx, char *why, size_t len)
{
    graph_t *g = ctx;
    uint64_t links = 0;
    for (int t = 0; t < g->threads; t++)
        links += g->count[t].links;
    if (links != (uint64_t)(g->nv - g->ref_clusters)) {
        snprintf(why, len, "%llu links made, %ld expected (%ld vertices, %ld clusters)",
                 (unsigned long long)links, g->nv - g->ref_clusters, g->nv, g->ref_clusters);
        return -1;
    }
    for (long x = 0; x < g->nv; x++) {
        uint32_t r = (uint32_t)x;
        long steps = 0;
        while (g->parent[r] != r) {
            r = g->parent[r];
            if (r >= (uint32_t)g->nv || ++steps > g->nv) {
                snprintf(why, len, "vertex %ld's parent chain leaves the graph or cycles", x);
                return -1;
            }
        }
        g->roots[x] = r;
    }
    labels(g->nv, g->roots, g->mins, g->roots);   /* in place: roots become labels */
    for (long x = 0; x < g->nv; x++)
        if (g->roots[x] != g->ref[x]) {
            snprintf(why, len, "vertex %ld is in the cluster of %u, the sequential union-find's %u",
                     x, g->roots[x], g->ref[x]);
            return -1;
        }
    for (long x = 0; x < g->nv; x++) {
        if (hps_lock_trylock(&g->lk[x].lock) != 0) {
            snprintf(why, len, "vertex %ld's lock left held", x);
            return -1;
        }
        hps_lock_unlock(&g->lk[x].lock);
        if (pthread_mutex_trylock(&g->mu[x]) != 0) {
            snprintf(why, len, "vertex %ld's mutex left held", x);
            return -1;
        }
        pthread_mutex_unlock(&g->mu[x]);
    }
    snprintf(why, len, "%ld clusters equal the sequential union-find's", g->ref_clusters);
    return 0;
}

/* Split a cluster: a linked vertex made a root again (or, with nothing
 * linked, vertices 0 and 1 joined). */
static void corrupt(void *ctx)
{
    graph_t *g = ctx;
    for (long x = 0; x < g->nv; x++)
        if (g->parent[x] != (uint32_t)x) {
            g->parent[x] = (uint32_t)x;
            return;
        }
    g->parent[1] = 0;
}

static void teardown(void *ctx)
{
    graph_t *g = ctx;
    for (long x = 0; x < g->nv; x++)
        pthread_mutex_destroy(&g->mu[x]);
    free(g->edges);
    free(g->parent);
    free(g->lk);
    free(g->mu);
    free(g->count);
    free(g->ref);
    free(g->roots);
    free(g->mins);
    free(g);
}

/* The TM sweep of the merge (per backend, with tm-dyn): a section per edge,
 * a few, many.  Not the study's variants (it elided the locks): three
 * points keep the granularity curve's shape with 4 variants per backend
 * instead of the default 7 (graph was the suite's longest workload). */
static const long k_tm_k[] = { 1, 16, 256 };

static const wl_workload_t k_graph = {
    .name = "graph",
    .title = "graph clustering: threads merge the clusters of a random graph's edges, locking two "
             "roots (trylock path on mutexes, elided locks, a lockset; TM)",
    .seconds = 0.71,
    WL_TABLES(k_rows, k_variants),
    .mutex_variant = V_MUTEX,
    WL_HOOKS,
    .kinds = k_kinds,
    .variant_json = variant_json,
    .tm_k = k_tm_k,
    .ntm_k = WL_COUNT(k_tm_k),
    .whole_input = 1,                /* --scale scales the graph (setup) */
};

int main(int argc, char **argv)
{
    return wl_main(&k_graph, argc, argv);
}
