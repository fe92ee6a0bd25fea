// SPDX-License-Identifier: MIT
/*
 * The ring traversal of the CIA-Malloc study: 128 nodes of S bytes,
 * allocated back to back, linked in a random cyclic order; each lap takes
 * and releases a mutex and walks the whole ring.  Only each node's first
 * line is read, so the time per node is set by where those 128 lines fall
 * in the L1: spread over many sets they all stay cached, piled on a few
 * sets they evict each other every lap.
 *
 * Every size has its own copy of the walk function (ring_walk_<i>), and
 * the untimed laps that bring a ring into the caches go through another
 * one (ring_warm).  That is for cachegrind: valgrind 3.19 cannot switch its
 * counting on and off, but it attributes misses to the function whose
 * instructions incurred them, so one simulated run yields every size's
 * steady-state misses separately (the CLI reads the fn=ring_walk_<i>
 * records of the output file): setup and the cold first lap land elsewhere.
 * The copies are noipa, which also forbids the compiler to fold identical
 * functions into one.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "malloc_bench.h"
#include "ring_build.h"

typedef mb_ring_node_t node_t;

/* The study's sizes, plus a few that are not powers of two. */
static const size_t k_sizes[] = { 64, 96, 128, 256, 512, 1000, 1024, 1536, 2048, 3000, 4096, 8192 };
#define NSIZES ((int)(sizeof k_sizes / sizeof k_sizes[0]))

static pthread_mutex_t g_lap_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * laps laps of a ring of n nodes from p.  Each load's address comes from
 * the previous load (a dependent chain: no overlap, no prefetch), and the
 * values are summed into the result, so nothing can be dropped.
 */
static inline __attribute__((always_inline)) uint64_t walk(node_t *p, long laps, long n)
{
    uint64_t acc = 0;
    for (long l = 0; l < laps; l++) {
        pthread_mutex_lock(&g_lap_lock);
        for (long i = 0; i < n; i++) {
            acc += p->value;
            p = p->next;
        }
        pthread_mutex_unlock(&g_lap_lock);
    }
    return acc;
}

typedef uint64_t (*walk_fn)(node_t *, long, long);

#define WALK_COPY(i)                                                                 \
    static __attribute__((noipa)) uint64_t ring_walk_##i(node_t *p, long laps, long n) \
    {                                                                                \
        return walk(p, laps, n);                                                     \
    }
#define WALK_COPIES(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
WALK_COPIES(WALK_COPY)
WALK_COPY(warm)
#define WALK_ENTRY(i) { ring_walk_##i, "ring_walk_" #i },
static const struct {
    walk_fn fn;
    const char *name;
} k_walk[] = { WALK_COPIES(WALK_ENTRY) };
_Static_assert(sizeof k_walk / sizeof k_walk[0] == NSIZES, "one walk copy per ring size");

static struct {
    long laps;
    int reps, sim;
    node_t *nodes[NSIZES][MB_BLOCKS];
    double ns[NSIZES][HPS_BENCH_MAX_REPS];
    uint64_t checksum[NSIZES];
} g_ring;

/* The study's ring (ring_build.c, shared with the ring workload). */
static int build_ring(int s)
{
    return mb_ring_build(g_ring.nodes[s], MB_BLOCKS, k_sizes[s]);
}

int mb_ring_run(long laps, int reps, int sim)
{
    g_ring.laps = laps;
    g_ring.reps = reps;
    g_ring.sim = sim;
    /* A multithreaded process takes the mutex the way every threaded
     * program does (glibc skips the atomics before the first thread). */
    if (hps_bench_become_multithreaded())
        return 1;
    for (int s = 0; s < NSIZES; s++)
        if (build_ring(s))
            return 1;
    if (sim) {
        for (int s = 0; s < NSIZES; s++) {
            node_t *start = g_ring.nodes[s][0];
            g_ring.checksum[s] = ring_walk_warm(start, 2, MB_BLOCKS);
            g_ring.checksum[s] += k_walk[s].fn(start, laps, MB_BLOCKS);
        }
        return 0;
    }
    for (int r = 0; r < reps; r++) {
        /* Sizes forward on even repetitions and backward on odd ones, so a
         * drift of the shared machine biases no size. */
        for (int k = 0; k < NSIZES; k++) {
            int s = r % 2 ? NSIZES - 1 - k : k;
            node_t *start = g_ring.nodes[s][0];
            /* Two untimed laps bring this ring back into the caches the
             * previous size's batch evicted it from. */
            g_ring.checksum[s] += ring_walk_warm(start, 2, MB_BLOCKS);
            uint64_t t0 = hps_bench_now_ns();
            g_ring.checksum[s] += k_walk[s].fn(start, laps, MB_BLOCKS);
            uint64_t t1 = hps_bench_now_ns();
            g_ring.ns[s][r] = (double)(t1 - t0) / ((double)laps * MB_BLOCKS);
        }
    }
    return 0;
}

void mb_ring_emit(void)
{
    for (int s = 0; s < NSIZES; s++) {
        hps_json_begin_object(NULL);
        hps_json_uint("size", k_sizes[s]);
        hps_json_int("nodes", MB_BLOCKS);
        hps_json_int("laps", g_ring.laps);
        hps_json_str("walk_function", k_walk[s].name);
        hps_json_uint("checksum", g_ring.checksum[s]);
        if (!g_ring.sim) {
            double *ns = g_ring.ns[s];
            hps_json_int("reps", g_ring.reps);
            hps_json_num_array("ns_per_node_reps", ns, g_ring.reps);
            double med = hps_bench_median(ns, (size_t)g_ring.reps);   /* sorts ns */
            hps_json_num("ns_per_node_min", ns[0]);
            hps_json_num("ns_per_node_median", med);
            hps_json_num("laps_per_sec", 1e9 / (ns[0] * MB_BLOCKS));
        }
        mb_addresses_json("addresses", (void *const *)g_ring.nodes[s], MB_BLOCKS);
        hps_json_end_object();
    }
}
