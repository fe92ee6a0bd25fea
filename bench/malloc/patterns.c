// SPDX-License-Identifier: MIT
/*
 * Allocation patterns of existing allocator benchmarks, the ones hpsync was
 * found behind on (issue 13): large blocks, a mixed-size stress with
 * cross-thread frees, a server whose blocks outlive the threads that
 * allocated them, and a batch pipeline.
 *
 *   large     1 thread, a window of 32 slots; blocks of 64 KiB .. 4 MiB,
 *             every doubling equally likely, written whole at malloc (a
 *             program filling its buffer).  Live: about 16 blocks, 16 MiB
 *             (up to 38 MiB).
 *   stress    T threads, each on a window of 4096 slots with the mix's
 *             sizes plus one request in 256 of 64 KiB .. 1 MiB (written
 *             like large's).  One operation on a full slot in 8 swaps the
 *             block into a shared transfer array of 1024 entries instead of
 *             freeing it, and keeps what another thread left there: that
 *             block is freed later by a thread that did not allocate it.
 *   server    T lineages, as in larson: a lineage's window of 4096 live
 *             blocks passes from thread to thread; each thread replaces
 *             5000 random blocks (a free and a malloc each), then exits and
 *             the next thread of the lineage takes over, freeing blocks its
 *             predecessors allocated.
 *   pipeline  T/2 producer/consumer pairs: the producer allocates batches
 *             of 256 mix-size blocks and queues them (at most 8 batches in
 *             flight); the consumer frees each batch whole.  Few blocks are
 *             live, so what an allocator keeps of remotely freed memory
 *             shows in peak RSS.
 *
 * Blocks are stamped and checked as in mix.c; large blocks (and the stress's
 * large ones) are written whole first.  Operations count mallocs and
 * frees; the RSS figures are taken by mix.c around the run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "malloc_bench.h"

#define LARGE_SLOTS 32
#define STRESS_SLOTS 4096
#define STRESS_LARGE_ONE_IN 256
#define STRESS_SWAP_ONE_IN 8
#define TRANSFER 1024
#define SERVER_SLOTS 4096
#define SERVER_REPLACE 5000
#define PIPE_BATCH 256
#define PIPE_DEPTH 8

/* A size of lo .. 2^octaves * lo bytes: the octave uniform, the size
 * uniform within it (so each doubling is equally likely). */
static size_t size_in_octaves(uint64_t *seed, size_t lo, unsigned octaves)
{
    uint64_t r = hps_xorshift64(seed);
    size_t base = lo << (r % octaves);
    return base + (size_t)((r >> 8) % base);
}

/* Fill the whole block, as a program writing its buffer does, then stamp
 * it.  The whole block, not a word per page: a word per page would touch
 * only the first line of every page, and an allocator that puts blocks at
 * page boundaries would find those lines in cache again, block after block,
 * where one that starts them at other offsets (hpsync's colours) would not;
 * a program filling its buffer touches every line wherever it starts. */
static void touch(const mb_block_t *b)
{
    memset(b->p, (int)(b->tag & 0xff), b->size);
    mb_stamp(b);
}

/* The stamp, and the fill byte in the middle of a touched block. */
static int touched_ok(const mb_block_t *b)
{
    return mb_stamp_ok(b) && ((const unsigned char *)b->p)[b->size / 2] == (b->tag & 0xff);
}

/* The patterns' own arrays (windows, slots) come from mmap, not from the
 * allocator under test: one that hands out overlapping blocks must fail
 * the run through the blocks' stamps, not scribble on the pointers the
 * run follows and crash it.  NULL when out of memory. */
static void *table_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

struct pworker {
    hps_bench_worker_t head;
    mb_window_t w;
    uint64_t seed, mallocs, frees;
    int failed;
    void *pair;                  /* pipeline: the pair's queue */
} __attribute__((aligned(64)));

static hps_bench_gate_t g_gate;

/* ---- large ------------------------------------------------------------------ */

static void *large_worker(void *arg)
{
    struct pworker *me = arg;
    hps_bench_gate_enter(&g_gate);
    while (!hps_bench_gate_stopped(&g_gate)) {
        mb_block_t *b = &me->w.slot[hps_xorshift64(&me->seed) % LARGE_SLOTS];
        if (b->p) {
            int ok = touched_ok(b);
            free(b->p);
            b->p = NULL;
            me->frees++;
            if (!ok)
                goto fail;
            continue;
        }
        b->size = size_in_octaves(&me->seed, 64 << 10, 6);
        b->tag = hps_xorshift64(&me->seed);
        if (!(b->p = malloc(b->size)))
            goto fail;
        touch(b);
        me->mallocs++;
    }
    hps_bench_worker_done(&me->head, me->mallocs + me->frees);
    return NULL;
fail:
    me->failed = 1;
    hps_bench_worker_done(&me->head, me->mallocs + me->frees);
    return NULL;
}

/* ---- stress ----------------------------------------------------------------- */

/* Stress blocks travel between threads as bare pointers, so each one
 * describes itself: the tag in its first word, its size in the second, the
 * tag again in its last word (and on every page of a large one). */
static _Atomic(void *) g_transfer[TRANSFER];

/* A new stress block (NULL when malloc failed). */
static void *stress_new(uint64_t *seed)
{
    mb_block_t b;
    int large = hps_xorshift64(seed) % STRESS_LARGE_ONE_IN == 0;
    b.size = large ? size_in_octaves(seed, 64 << 10, 4) : mb_mix_size(seed);
    if (b.size < 24)
        b.size = 24;             /* the size word must not overlap the last one */
    b.tag = hps_xorshift64(seed);
    if (!(b.p = malloc(b.size)))
        return NULL;
    if (large)
        touch(&b);
    else
        mb_stamp(&b);
    __builtin_memcpy((char *)b.p + 8, &b.size, sizeof b.size);
    return b.p;
}

/* Check and free a stress block; -1 if it was damaged. */
static int stress_free(void *p)
{
    mb_block_t b = { p, 0, 0 };
    __builtin_memcpy(&b.tag, p, 8);
    __builtin_memcpy(&b.size, (char *)p + 8, sizeof b.size);
    int ok = b.size >= 16 && b.size <= (1u << 21) &&
             (b.size < (64u << 10) ? mb_stamp_ok(&b) : touched_ok(&b));
    free(p);
    return ok ? 0 : -1;
}

static void *stress_worker(void *arg)
{
    struct pworker *me = arg;
    void **slot = table_alloc(STRESS_SLOTS * sizeof *slot);
    hps_bench_gate_enter(&g_gate);
    if (!slot)
        me->failed = 1;
    while (slot && !hps_bench_gate_stopped(&g_gate)) {
        uint64_t r = hps_xorshift64(&me->seed);
        void **s = &slot[r % STRESS_SLOTS];
        if (!*s) {
            if (!(*s = stress_new(&me->seed))) {
                me->failed = 1;
                break;
            }
            me->mallocs++;
        } else if ((r >> 32) % STRESS_SWAP_ONE_IN == 0) {
            /* Acq_rel: our block's contents go out with it, and the block
             * we take comes with what its allocator wrote. */
            *s = atomic_exchange_explicit(&g_transfer[(r >> 40) % TRANSFER], *s,
                                          memory_order_acq_rel);
        } else {
            me->frees++;
            int bad = stress_free(*s);
            *s = NULL;
            if (bad) {
                me->failed = 1;
                break;
            }
        }
    }
    hps_bench_worker_done(&me->head, me->mallocs + me->frees);
    /* The blocks left over are freed (and checked) after the clock stopped. */
    for (int i = 0; slot && i < STRESS_SLOTS; i++)
        if (slot[i] && stress_free(slot[i]))
            me->failed = 1;
    if (slot)
        munmap(slot, STRESS_SLOTS * sizeof *slot);
    return NULL;
}

static int stress_drain(void)
{
    int rc = 0;
    for (int i = 0; i < TRANSFER; i++) {
        void *p = atomic_exchange(&g_transfer[i], NULL);
        if (p)
            rc |= stress_free(p);
    }
    return rc;
}

/* ---- server ----------------------------------------------------------------- */

/* One thread of a lineage: replace SERVER_REPLACE random blocks, then exit. */
static void *server_thread(void *arg)
{
    struct pworker *me = arg;
    for (int k = 0; k < SERVER_REPLACE && !hps_bench_gate_stopped(&g_gate); k++) {
        long i = (long)(hps_xorshift64(&me->seed) % (uint64_t)me->w.n);
        me->frees++;
        if (mb_window_drop(&me->w, i) || mb_new_block(&me->w.slot[i], &me->seed)) {
            me->failed = 1;
            break;
        }
        me->mallocs++;
    }
    return NULL;
}

/* The lineage: fill the window, then start its threads one after another
 * (each inherits every block its predecessors left). */
static void *server_lineage(void *arg)
{
    struct pworker *me = arg;
    for (long i = 0; i < me->w.n && !me->failed; i++)
        if (mb_new_block(&me->w.slot[i], &me->seed))
            me->failed = 1;
    hps_bench_gate_enter(&g_gate);
    while (!me->failed && !hps_bench_gate_stopped(&g_gate)) {
        pthread_t t;
        if (pthread_create(&t, NULL, server_thread, me) != 0) {
            hps_bench_log("server: cannot create a thread");
            me->failed = 1;
            break;
        }
        pthread_join(t, NULL);
    }
    hps_bench_worker_done(&me->head, me->mallocs + me->frees);
    return NULL;
}

/* ---- pipeline --------------------------------------------------------------- */

struct pipe {
    mb_ring_t r;
    _Alignas(64) mb_block_t batch[PIPE_DEPTH][PIPE_BATCH];
};

static void *pipe_producer(struct pworker *me, struct pipe *q)
{
    unsigned long tail = 0;
    hps_bench_gate_enter(&g_gate);
    while (mb_ring_wait_room(&q->r, tail, PIPE_DEPTH, &g_gate)) {
        mb_block_t *b = q->batch[tail % PIPE_DEPTH];
        for (int i = 0; i < PIPE_BATCH; i++)
            if (mb_new_block(&b[i], &me->seed)) {
                me->failed = 1;
                goto out;
            }
        me->mallocs += PIPE_BATCH;
        mb_ring_publish(&q->r.tail, ++tail);
    }
out:
    hps_bench_worker_done(&me->head, me->mallocs);
    return NULL;
}

static void *pipe_consumer(struct pworker *me, struct pipe *q)
{
    unsigned long head = 0;
    hps_bench_gate_enter(&g_gate);
    while (mb_ring_wait_item(&q->r, head, &g_gate)) {
        mb_window_t w = { q->batch[head % PIPE_DEPTH], PIPE_BATCH };
        for (long i = 0; i < PIPE_BATCH; i++)
            if (mb_window_drop(&w, i))
                me->failed = 1;
        me->frees += PIPE_BATCH;
        mb_ring_publish(&q->r.head, ++head);
    }
    hps_bench_worker_done(&me->head, me->frees);
    return NULL;
}

static void *pipe_worker(void *arg)
{
    struct pworker *me = arg;
    struct pipe *q = me->pair;
    return me->head.index % 2 == 0 ? pipe_producer(me, q) : pipe_consumer(me, q);
}

/* Batches still queued when the run stopped are freed and checked. */
static int pipe_drain(struct pipe *q)
{
    int rc = 0;
    for (unsigned long h = atomic_load(&q->r.head); h != atomic_load(&q->r.tail); h++) {
        mb_window_t w = { q->batch[h % PIPE_DEPTH], PIPE_BATCH };
        for (long i = 0; i < PIPE_BATCH; i++)
            rc |= mb_window_drop(&w, i);
    }
    return rc;
}

/* ---- the run ------------------------------------------------------------------ */

static const struct {
    const char *name;
    void *(*worker)(void *);
    long slots;                  /* window per thread (0: none) */
    int pairs;                   /* threads come in pairs */
} k_patterns[] = {
    { "large", large_worker, LARGE_SLOTS, 0 },
    { "stress", stress_worker, 0, 0 },
    { "server", server_lineage, SERVER_SLOTS, 0 },
    { "pipeline", pipe_worker, 0, 1 },
};
#define NPATTERNS (int)(sizeof k_patterns / sizeof k_patterns[0])

static int find(const char *name)
{
    for (int i = 0; i < NPATTERNS; i++)
        if (!strcmp(name, k_patterns[i].name))
            return i;
    return -1;
}

int mb_pattern_known(const char *name)
{
    return find(name) >= 0;
}

static struct {
    int k;
    struct pipe *pipes;
} g_run;

/* Each thread sets itself up before the gate (its window is its own, as
 * its blocks are); a failure still passes the gate, so the run ends. */
static void *pattern_start(void *arg)
{
    struct pworker *me = arg;
    me->seed = MB_SEED + (uint64_t)me->head.index * 0x1000193;
    me->pair = g_run.pipes ? &g_run.pipes[me->head.index / 2] : NULL;
    long slots = k_patterns[g_run.k].slots;
    me->w = (mb_window_t){ slots ? table_alloc((size_t)slots * sizeof *me->w.slot) : NULL, slots };
    if (slots && !me->w.slot) {
        me->failed = 1;
        hps_bench_gate_enter(&g_gate);
        hps_bench_worker_done(&me->head, 0);
        return NULL;
    }
    return k_patterns[g_run.k].worker(me);
}

int mb_pattern_run(const char *name, int threads, long duration_ms, hps_bench_totals_t *t,
                   uint64_t *mallocs, uint64_t *frees, long *rss_peak_kib)
{
    g_run.k = find(name);
    if (g_run.k < 0)
        return 2;
    int pairs = k_patterns[g_run.k].pairs;
    if (pairs && threads % 2) {
        hps_bench_log("--pattern %s needs an even --threads (producer/consumer pairs)", name);
        return 2;
    }
    if (pairs) {
        g_run.pipes = table_alloc(sizeof *g_run.pipes * (size_t)(threads / 2));   /* zeroed */
        if (!g_run.pipes) {
            hps_bench_log("out of memory");
            return 1;
        }
    }
    struct pworker *w = hps_bench_run_workers(&g_gate, threads, sizeof *w, pattern_start,
                                              duration_ms, t);
    if (!w)
        return 1;
    const char *source;
    *rss_peak_kib = mb_peak_rss_kib(&source);
    int rc = 0;
    for (int i = 0; i < threads; i++) {
        *mallocs += w[i].mallocs;
        *frees += w[i].frees;
        rc |= w[i].failed;
        for (long j = 0; j < w[i].w.n && w[i].w.slot; j++)
            if (w[i].w.slot[j].p)
                rc |= mb_window_drop(&w[i].w, j);
        if (w[i].w.slot)
            munmap(w[i].w.slot, (size_t)w[i].w.n * sizeof *w[i].w.slot);
    }
    rc |= stress_drain();
    for (int p = 0; pairs && p < threads / 2; p++)
        rc |= pipe_drain(&g_run.pipes[p]);
    free(w);
    if (g_run.pipes)
        munmap(g_run.pipes, sizeof *g_run.pipes * (size_t)(threads / 2));
    return rc ? 1 : 0;
}
