// SPDX-License-Identifier: MIT
/*
 * Throughput and memory: malloc/free mixes as busy programs make them.
 *
 * Every thread keeps a window of W slots.  An operation picks a random
 * slot: an empty one gets a new block (size from mb_mix_size), a full one's
 * block is freed.  The window hovers around half full, so the live set is
 * about W/2 blocks of ~0.5 KiB mean size per thread, and the heap sees
 * frees in random order, not LIFO.
 *
 *   local     T threads, each on its own window (thread-local caches shine).
 *   prodcons  T/2 pairs: the producer allocates and passes each block
 *             through a single-producer single-consumer queue; the consumer
 *             drops it into a random slot of its window, freeing the block
 *             that was there.  Every free is of a block another thread
 *             allocated (the remote-free path).
 *
 * An operation is one malloc or one free.  Each block carries a stamp (a
 * random tag in its first and last word, see mb_block_t), checked at free:
 * an allocator that hands a block out twice or overlaps blocks fails the
 * run (exit 1) instead of producing a figure.  Peak RSS is the process's
 * high-water mark (see peak_rss_kib), taken before anything is printed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "malloc_bench.h"

int mb_window_init(mb_window_t *w, long n)
{
    w->n = n;
    w->slot = calloc((size_t)n, sizeof *w->slot);
    return w->slot ? 0 : -1;
}

int mb_window_drop(mb_window_t *w, long i)
{
    int ok = mb_stamp_ok(&w->slot[i]);
    free(w->slot[i].p);
    w->slot[i].p = NULL;
    return ok ? 0 : -1;
}

/* Free the blocks of every slot except every keep-th one (keep 0: all). */
static int window_thin(mb_window_t *w, long keep)
{
    int rc = 0;
    for (long i = 0; i < w->n; i++)
        if (w->slot[i].p && !(keep && i % keep == 0))
            rc |= mb_window_drop(w, i);
    return rc;
}

int mb_window_free(mb_window_t *w)
{
    int rc = w->slot ? window_thin(w, 0) : 0;
    free(w->slot);
    *w = (mb_window_t){ NULL, 0 };
    return rc;
}

int mb_new_block(mb_block_t *b, uint64_t *seed)
{
    b->size = mb_mix_size(seed);
    b->tag = hps_xorshift64(seed);
    b->p = malloc(b->size);
    if (!b->p)
        return -1;
    mb_stamp(b);
    return 0;
}

/* One operation of the local mix: 0 malloc, 1 free, -1 failure. */
static inline int window_step(mb_window_t *w, uint64_t *seed)
{
    long i = (long)(hps_xorshift64(seed) % (uint64_t)w->n);
    if (w->slot[i].p)
        return mb_window_drop(w, i) ? -1 : 1;
    return mb_new_block(&w->slot[i], seed);
}

/* ---- warm-up (spread.c) ---------------------------------------------------- */

long mb_warm_up(long ops, long slots, mb_window_t *w)
{
    uint64_t seed = MB_SEED ^ 0x77;
    if (mb_window_init(w, slots)) {
        hps_bench_log("out of memory");
        return -1;
    }
    for (long k = 0; k < ops; k++)
        if (window_step(w, &seed) < 0) {
            hps_bench_log("warm-up: malloc failed or a block was overwritten");
            return -1;
        }
    /* Every 8th slot's block stays live through the measurement. */
    if (window_thin(w, 8)) {
        hps_bench_log("warm-up: a block was overwritten");
        return -1;
    }
    long live = 0;
    for (long i = 0; i < w->n; i++)
        live += w->slot[i].p != NULL;
    return live;
}

/* ---- the timed run ---------------------------------------------------------- */

#define QUEUE_SLOTS 1024          /* power of two */
#define SPINS_BEFORE_YIELD 64

/* A pair's queue of blocks. */
struct queue {
    mb_ring_t r;
    _Alignas(64) mb_block_t item[QUEUE_SLOTS];
};

struct mix_worker {
    hps_bench_worker_t head;
    mb_window_t w;
    struct queue *q;              /* prodcons only */
    uint64_t mallocs, frees;
    int failed;
} __attribute__((aligned(64)));

static hps_bench_gate_t g_gate;

static struct {
    const char *pattern;
    int threads, prodcons;
    long duration_ms, window;
    struct queue *queues;
    hps_bench_totals_t t;
    uint64_t mallocs, frees;
    long rss_start_kib, rss_peak_kib;
    const char *rss_source;
} g_mix;

/*
 * Peak RSS in KiB.  /proc/self/status's VmHWM is the high-water mark of this
 * process's own address space.  getrusage's ru_maxrss is not usable here:
 * Linux carries it across execve, so a program started by a 20 MiB Python
 * process reports at least 20 MiB whatever it does itself.  ru_maxrss is
 * the fallback where /proc is missing (*source says which was read).
 */
long mb_peak_rss_kib(const char **source)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    if (kib >= 0) {
        *source = "VmHWM";
        return kib;
    }
    struct rusage ru;
    *source = "ru_maxrss";
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* A failed check stops this thread; the run then fails as a whole. */
static void *local_worker(void *arg)
{
    struct mix_worker *me = arg;
    uint64_t seed = MB_SEED + (uint64_t)me->head.index * 0x1000193;
    hps_bench_gate_enter(&g_gate);
    while (!hps_bench_gate_stopped(&g_gate)) {
        for (int k = 0; k < 64; k++) {
            int r = window_step(&me->w, &seed);
            if (r < 0) {
                me->failed = 1;
                goto out;
            }
            *(r ? &me->frees : &me->mallocs) += 1;
        }
    }
out:
    hps_bench_worker_done(&me->head, me->mallocs + me->frees);
    return NULL;
}

void mb_backoff(int *spins)
{
    if (++*spins < SPINS_BEFORE_YIELD) {
        hps_cpu_relax();
    } else {
        *spins = 0;
        sched_yield();
    }
}

static void *producer(void *arg)
{
    struct mix_worker *me = arg;
    struct queue *q = me->q;
    uint64_t seed = MB_SEED + (uint64_t)me->head.index * 0x1000193;
    unsigned long tail = 0;
    hps_bench_gate_enter(&g_gate);
    while (mb_ring_wait_room(&q->r, tail, QUEUE_SLOTS, &g_gate)) {
        if (mb_new_block(&q->item[tail % QUEUE_SLOTS], &seed)) {
            me->failed = 1;
            break;
        }
        mb_ring_publish(&q->r.tail, ++tail);
        me->mallocs++;
    }
    hps_bench_worker_done(&me->head, me->mallocs);
    return NULL;
}

static void *consumer(void *arg)
{
    struct mix_worker *me = arg;
    struct queue *q = me->q;
    uint64_t seed = MB_SEED + (uint64_t)me->head.index * 0x1000193;
    unsigned long head = 0;
    hps_bench_gate_enter(&g_gate);
    while (mb_ring_wait_item(&q->r, head, &g_gate)) {
        long i = (long)(hps_xorshift64(&seed) % (uint64_t)me->w.n);
        if (me->w.slot[i].p) {
            if (mb_window_drop(&me->w, i)) {
                me->failed = 1;
                break;
            }
            me->frees++;
        }
        me->w.slot[i] = q->item[head % QUEUE_SLOTS];
        mb_ring_publish(&q->r.head, ++head);
    }
    hps_bench_worker_done(&me->head, me->frees);
    return NULL;
}

static void *start(void *arg)
{
    struct mix_worker *me = arg;
    if (g_mix.prodcons) {
        me->q = &g_mix.queues[me->head.index / 2];
        if (me->head.index % 2 == 0)
            return producer(me);
    }
    /* Each thread allocates its own window: first touch and, for
     * per-thread heaps, ownership belong to the thread that uses it. */
    if (mb_window_init(&me->w, g_mix.window)) {
        me->failed = 1;
        hps_bench_gate_enter(&g_gate);
        hps_bench_worker_done(&me->head, 0);
        return NULL;
    }
    return g_mix.prodcons ? consumer(me) : local_worker(me);
}

/* After the run: blocks still queued or in windows are freed (checked). */
static int drain(struct mix_worker *w, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        rc |= w[i].failed;
        rc |= mb_window_free(&w[i].w);
    }
    for (int p = 0; g_mix.prodcons && p < n / 2; p++) {
        struct queue *q = &g_mix.queues[p];
        for (unsigned long h = atomic_load(&q->r.head); h != atomic_load(&q->r.tail); h++) {
            mb_window_t one = { &q->item[h % QUEUE_SLOTS], 1 };
            rc |= mb_window_drop(&one, 0);
        }
    }
    return rc;
}

int mb_mix_run(const char *pattern, int threads, long duration_ms, long window)
{
    int prodcons = !strcmp(pattern, "prodcons");
    g_mix.pattern = pattern;
    g_mix.threads = threads;
    g_mix.duration_ms = duration_ms;
    if (mb_pattern_known(pattern)) {
        /* The patterns of patterns.c: their own windows and sizes. */
        g_mix.window = 0;
        g_mix.rss_start_kib = mb_peak_rss_kib(&g_mix.rss_source);
        int rc = mb_pattern_run(pattern, threads, duration_ms, &g_mix.t, &g_mix.mallocs,
                                &g_mix.frees, &g_mix.rss_peak_kib);
        if (rc == 1)
            hps_bench_log("a malloc failed or a block was overwritten: the allocator is broken");
        return rc;
    }
    if (!prodcons && strcmp(pattern, "local") != 0) {
        hps_bench_log("--pattern must be local, prodcons, large, stress, server or pipeline");
        return 2;
    }
    if (prodcons && threads % 2) {
        hps_bench_log("--pattern prodcons needs an even --threads (producer/consumer pairs)");
        return 2;
    }
    g_mix.prodcons = prodcons;
    g_mix.window = window;
    if (prodcons) {
        g_mix.queues = aligned_alloc(64, sizeof(struct queue) * (size_t)(threads / 2));
        if (!g_mix.queues) {
            hps_bench_log("out of memory");
            return 1;
        }
        memset(g_mix.queues, 0, sizeof(struct queue) * (size_t)(threads / 2));
    }
    g_mix.rss_start_kib = mb_peak_rss_kib(&g_mix.rss_source);
    struct mix_worker *w = hps_bench_run_workers(&g_gate, threads, sizeof *w, start,
                                                 duration_ms, &g_mix.t);
    if (!w)
        return 1;
    g_mix.rss_peak_kib = mb_peak_rss_kib(&g_mix.rss_source);
    for (int i = 0; i < threads; i++) {
        g_mix.mallocs += w[i].mallocs;
        g_mix.frees += w[i].frees;
    }
    int rc = drain(w, threads);
    free(w);
    free(g_mix.queues);
    if (rc) {
        hps_bench_log("a malloc failed or a block was overwritten: the allocator is broken");
        return 1;
    }
    return 0;
}

void mb_mix_emit(void)
{
    hps_json_begin_object(NULL);
    hps_json_str("pattern", g_mix.pattern);
    hps_json_int("threads", g_mix.threads);
    hps_json_int("duration_ms", g_mix.duration_ms);
    hps_json_int("window", g_mix.window);
    hps_bench_totals_json(&g_mix.t);
    hps_json_uint("mallocs", g_mix.mallocs);
    hps_json_uint("frees", g_mix.frees);
    hps_json_int("rss_start_kib", g_mix.rss_start_kib);
    hps_json_int("rss_peak_kib", g_mix.rss_peak_kib);
    hps_json_str("rss_source", g_mix.rss_source);
    hps_json_end_object();
}
