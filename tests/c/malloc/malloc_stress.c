// SPDX-License-Identifier: MIT
/*
 * Multithreaded allocator stress.
 *   malloc_stress [threads] [ops per thread] [max size in bytes] [large per mille]
 *                 (defaults: 4, 200000, 64 MiB, 4)
 *
 * Each thread keeps a table of live blocks and, at random: allocates
 * (malloc, calloc, posix_memalign, aligned_alloc, realloc(NULL, n)), frees,
 * reallocs a block up or down (so blocks go through chains of sizes and
 * allocators' in-place and moving paths), or hands a block to the next
 * thread through a single-producer single-consumer ring.  The receiving
 * thread checks it and frees it (a remote free) or reallocs it and keeps
 * it.  Sizes run from 0 to the maximum, mostly small and log-distributed.
 *
 * Every block carries a pattern unique to it (malloc_util.h), checked
 * whenever it changes hands, is realloc'ed or freed: two live blocks that
 * overlap, an allocator writing into a live block, a realloc that loses
 * contents or a calloc that is not zero all fail with one line.
 * Large blocks (over 256 KiB, up to the maximum: spans and huge blocks) live only in the first
 * LARGE_SLOTS slots of each table, so the memory in use stays bounded;
 * "large per mille" is the share of operations on those slots, half of
 * whose allocations are large.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "malloc_util.h"

enum {
    SLOTS = 256,          /* live blocks per thread */
    LARGE_SLOTS = 2,      /* of which may hold large ones */
    RING = 64,            /* blocks in flight between two threads */
    DRAIN = 4,            /* ring entries taken per iteration */
};
#define LARGE ((size_t)256 << 10)

struct block {
    unsigned char *p;
    size_t size;
    uint64_t tag;         /* 0: empty slot */
};

/* Single producer (thread i-1), single consumer (thread i). */
struct ring {
    _Atomic size_t head;  /* next to take; written by the consumer */
    char pad1[56];
    _Atomic size_t tail;  /* next to fill; written by the producer */
    char pad2[56];
    struct block slot[RING];
};

struct worker {
    unsigned id;
    unsigned long ops;
    size_t max;
    unsigned large_pm;
    uint64_t rng, next_tag;
    struct ring *in, *out;
    pthread_barrier_t *go;
    struct block table[SLOTS];
    unsigned long n_alloc, n_free, n_realloc, n_sent, n_full, n_large;
} __attribute__((aligned(64)));

static int ring_put(struct ring *r, struct block b)
{
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    /* acquire: the consumer's reads of the slot happened before it moved head on */
    if (t - atomic_load_explicit(&r->head, memory_order_acquire) == RING)
        return 0;
    r->slot[t % RING] = b;
    /* release: the slot (and the block's contents) before the new tail */
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return 1;
}

static int ring_get(struct ring *r, struct block *b)
{
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* acquire: pairs with ring_put's release of the tail */
    if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
        return 0;
    *b = r->slot[h % RING];
    /* release: done reading the slot before the producer may reuse it */
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return 1;
}

/* A size for a slot: half of the large slots' sizes are large (log-uniform
 * up to the maximum), no other slot gets one. */
static size_t slot_size(struct worker *w, unsigned slot)
{
    uint64_t r = hps_xorshift64(&w->rng);
    if (slot < LARGE_SLOTS && (r & 1) && w->max > LARGE) {
        unsigned lo = 18, hi = 63 - (unsigned)__builtin_clzll(w->max);
        size_t base = (size_t)1 << (lo + (unsigned)((r >> 1) % (hi - lo + 1)));
        size_t n = base + (size_t)((r >> 8) % base);
        return n < w->max ? n : w->max;
    }
    size_t n = hpm_size(&w->rng, w->max);
    return slot < LARGE_SLOTS || n <= LARGE ? n : n % LARGE;
}

static void release(struct worker *w, struct block *b, const char *what)
{
    hpm_verify(b->p, b->size, b->tag, what);
    free(b->p);
    b->tag = 0;
    w->n_free++;
}

static void allocate(struct worker *w, unsigned slot)
{
    struct block *b = &w->table[slot];
    if (b->tag)
        release(w, b, "free before reuse");
    size_t n = slot_size(w, slot);
    unsigned how = (unsigned)(hps_xorshift64(&w->rng) % 10);
    size_t align = (size_t)16 << (hps_xorshift64(&w->rng) % 9);      /* 16 .. 4096 */
    void *p = NULL;
    switch (how) {
    case 0:
        p = calloc(1, n);
        if (p)
            hpm_verify_zero(p, n, "calloc");
        break;
    case 1:
        if (posix_memalign(&p, align, n) != 0)
            p = NULL;
        if (p)
            hpm_check_aligned(p, align, "posix_memalign");
        break;
    case 2:
        p = aligned_alloc(align, (n + align - 1) & ~(align - 1));
        if (p)
            hpm_check_aligned(p, align, "aligned_alloc");
        break;
    case 3:
        p = realloc(NULL, n);
        break;
    default:
        p = malloc(n);
        break;
    }
    if (!p)
        hps_test_fail("thread %u: allocation %u of %zu bytes returned NULL", w->id, how, n);
    hpm_check_aligned(p, 16, "allocation");
    *b = (struct block){ p, n, w->next_tag++ };
    w->n_large += n > LARGE;
    hpm_fill(p, n, b->tag);
    w->n_alloc++;
}

/* realloc to a new size: often near the old one (grow or shrink by up to
 * 4x), sometimes anywhere; the common prefix must survive. */
static void resize(struct worker *w, struct block *b, unsigned slot)
{
    uint64_t r = hps_xorshift64(&w->rng);
    size_t n;
    if (r % 4 == 0)
        n = slot_size(w, slot);
    else if (r % 4 == 1)
        n = b->size / (1 + (r >> 8) % 4);
    else
        n = b->size * (1 + (r >> 8) % 4) + (r >> 16) % 64;
    if (n == 0)
        n = 1;    /* realloc(p, 0) frees: not a resize */
    if (n > w->max || (slot >= LARGE_SLOTS && n > LARGE))
        n = b->size / 2 + 1;
    hpm_verify(b->p, b->size, b->tag, "before realloc");
    unsigned char *q = realloc(b->p, n);
    if (!q)
        hps_test_fail("thread %u: realloc(%zu -> %zu) returned NULL", w->id, b->size, n);
    hpm_verify_prefix(q, b->size, b->size < n ? b->size : n, b->tag, "realloc");
    b->p = q;
    b->size = n;
    w->n_large += n > LARGE;
    hpm_fill(q, n, b->tag);
    w->n_realloc++;
}

static void receive(struct worker *w)
{
    struct block b;
    for (int k = 0; k < DRAIN && ring_get(w->in, &b); k++) {
        if (hps_xorshift64(&w->rng) & 1) {
            release(w, &b, "remote free");
            continue;
        }
        /* Keep it: realloc'ed by a thread that did not allocate it. */
        unsigned slot = b.size > LARGE ? (unsigned)(hps_xorshift64(&w->rng) % LARGE_SLOTS)
                                        : (unsigned)(hps_xorshift64(&w->rng) % SLOTS);
        if (w->table[slot].tag)
            release(w, &w->table[slot], "free before reuse");
        w->table[slot] = b;
        resize(w, &w->table[slot], slot);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(w->go);
    for (unsigned long i = 0; i < w->ops; i++) {
        uint64_t r = hps_xorshift64(&w->rng);
        unsigned slot = (r >> 8) % 1000 < w->large_pm
                            ? (unsigned)((r >> 20) % LARGE_SLOTS)
                            : LARGE_SLOTS + (unsigned)((r >> 20) % (SLOTS - LARGE_SLOTS));
        struct block *b = &w->table[slot];
        unsigned op = (unsigned)(r % 100);
        if (op < 40 || !b->tag) {
            allocate(w, slot);
        } else if (op < 65) {
            release(w, b, "free");
        } else if (op < 80) {
            resize(w, b, slot);
        } else if (op < 95) {
            hpm_verify(b->p, b->size, b->tag, "before handing over");
            if (ring_put(w->out, *b)) {
                b->tag = 0;
                w->n_sent++;
            } else {
                w->n_full++;
            }
        }
        receive(w);
    }
    for (unsigned s = 0; s < SLOTS; s++)
        if (w->table[s].tag)
            release(w, &w->table[s], "final free");
    return NULL;
}

int main(int argc, char **argv)
{
    hpm_init("malloc_stress");
    unsigned threads = argc > 1 ? hps_test_threads(argv[1]) : 4;
    unsigned long ops = argc > 2 ? hps_test_ulong(argv[2], "operation count") : 200000;
    size_t max = argc > 3 ? hps_test_ulong(argv[3], "maximum size") : (size_t)64 << 20;
    unsigned large_pm = argc > 4 ? (unsigned)hps_test_ulong(argv[4], "large per mille") : 4;
    hps_test_watchdog(120);

    struct worker *ws = aligned_alloc(64, threads * sizeof *ws);
    struct ring *rings = aligned_alloc(64, threads * sizeof *rings);
    pthread_t *tids = calloc(threads, sizeof *tids);
    HPS_CHECK(ws && rings && tids, "out of memory");
    memset(ws, 0, threads * sizeof *ws);
    memset(rings, 0, threads * sizeof *rings);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, threads + 1);
    for (unsigned t = 0; t < threads; t++) {
        ws[t].id = t;
        ws[t].ops = ops;
        ws[t].max = max;
        ws[t].large_pm = large_pm;
        ws[t].rng = 0x9E3779B97F4A7C15ull * (t + 1);
        ws[t].next_tag = ((uint64_t)(t + 1) << 48) | 1;
        ws[t].in = &rings[t];
        ws[t].out = &rings[(t + 1) % threads];
        ws[t].go = &go;
        int rc = pthread_create(&tids[t], NULL, worker_main, &ws[t]);
        if (rc != 0)
            hps_test_fail("pthread_create: %s", strerror(rc));
    }
    uint64_t t0 = hps_test_now_ns();
    pthread_barrier_wait(&go);
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);

    /* Blocks still in flight: their senders are gone, check and free here. */
    unsigned long left = 0, alloc = 0, freed = 0, realloced = 0, sent = 0, full = 0, large = 0;
    for (unsigned t = 0; t < threads; t++) {
        struct block b;
        while (ring_get(&rings[t], &b)) {
            hpm_verify(b.p, b.size, b.tag, "left in a ring");
            free(b.p);
            left++;
        }
        alloc += ws[t].n_alloc;
        freed += ws[t].n_free;
        realloced += ws[t].n_realloc;
        sent += ws[t].n_sent;
        full += ws[t].n_full;
        large += ws[t].n_large;
    }
    if (alloc != freed + left)
        hps_test_fail("%lu blocks allocated but %lu freed", alloc, freed + left);
    printf("malloc_stress: ok: %u threads x %lu ops, max %zu bytes, in %.2f s: %lu allocations, "
           "%lu frees, %lu reallocs, %lu allocations or reallocs over %zu KiB, %lu handed over "
           "(%lu ring full), %lu left in rings\n",
           threads, ops, max, (double)(hps_test_now_ns() - t0) / 1e9, alloc, freed, realloced,
           large, LARGE >> 10, sent, full, left);
    pthread_barrier_destroy(&go);
    free(ws);
    free(rings);
    free(tids);
    return 0;
}
