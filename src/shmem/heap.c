// SPDX-License-Identifier: MIT
/*
 * The symmetric heap's allocator.
 *
 * Symmetry without talking: shmem_malloc and friends are collective and
 * every PE makes the same calls in the same order with the same arguments,
 * so a deterministic allocator in the same state hands out the same offset
 * on every PE.  The bookkeeping lives in private memory (a list of blocks
 * sorted by offset), never in the heap itself, so a remote put that
 * overruns an object cannot corrupt the allocator, and the heap holds only
 * user data.  First fit, blocks in multiples of a cache line (no false
 * sharing between two symmetric objects), neighbours merged on free.
 *
 * Alignment is a property of addresses, and each PE has its own heap
 * address: an offset aligned to 16 KiB is a 16 KiB-aligned address only on
 * a PE whose heap base is aligned that far too.  So the heap is mapped
 * (transport/shm.c, through hps_shmem_heap_map_align) with the first byte after
 * the library's reserved area aligned to the heap size rounded up to a power
 * of two, A, on every PE.  Every PE's base then has the same remainder
 * modulo any power of two up to A, the allocator aligns the address (base +
 * offset) rather than the offset, and so finds the same offset on every PE
 * for any alignment up to A: shmem_align works for every power of two up
 * to the heap size, as far as free space allows.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define GRAIN ((size_t)HPS_CACHELINE)

typedef struct blk {
    size_t off, size;
    int used;
    struct blk *prev, *next;
} blk_t;

static blk_t *g_head;
static size_t g_heap_size;
static size_t g_align_max;      /* A: the largest alignment symmetric on every PE */
/* Collectives are called in the same order everywhere, but under
 * SHMEM_THREAD_MULTIPLE two threads may still race on the list. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The heap size rounded up to a power of two. */
static size_t heap_align(size_t heap_size)
{
    size_t a = HPS_CACHELINE;
    while (a < heap_size && a <= SIZE_MAX / 2)
        a <<= 1;
    return a;
}

size_t hps_shmem_heap_map_align(size_t heap_size, size_t page, size_t *lead)
{
    *lead = (HPS_HEAP_RESERVED + page - 1) / page * page;
    return heap_align(heap_size);
}

void hps_shmem_heap_init(size_t heap_size, size_t reserved)
{
    while (g_head) {
        blk_t *n = g_head->next;
        free(g_head);
        g_head = n;
    }
    g_heap_size = heap_size;
    g_align_max = heap_align(heap_size);
    /* The mapping's promise, which symmetry rests on (any page size: only
     * the remainder modulo A matters, and the lead is whole pages). */
    size_t lead;
    hps_shmem_heap_map_align(heap_size, (size_t)sysconf(_SC_PAGESIZE), &lead);
    if ((hps_shmem_sh.base[HPS_REG_HEAP] + lead) & (g_align_max - 1))
        hps_shmem_fatal("shmem_init", "the symmetric heap at %p is not mapped aligned to %zu bytes",
                  (void *)hps_shmem_sh.base[HPS_REG_HEAP], g_align_max);
    g_head = calloc(1, sizeof *g_head);
    if (!g_head)
        hps_shmem_fatal("shmem_init", "out of memory");
    g_head->off = reserved;
    g_head->size = heap_size - reserved;
}

static blk_t *split(blk_t *b, size_t at)
{
    blk_t *n = malloc(sizeof *n);
    if (!n)
        hps_shmem_fatal("shmem_malloc", "out of memory for the heap's bookkeeping");
    n->off = b->off + at;
    n->size = b->size - at;
    n->used = 0;
    n->prev = b;
    n->next = b->next;
    if (b->next)
        b->next->prev = n;
    b->next = n;
    b->size = at;
    return n;
}

static void merge_next(blk_t *b)
{
    blk_t *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

static size_t largest_free(void)
{
    size_t m = 0;
    for (blk_t *b = g_head; b; b = b->next)
        if (!b->used && b->size > m)
            m = b->size;
    return m;
}

/* Offset of a new block of size bytes whose address is aligned to align
 * (at most g_align_max, so the offset is the same on every PE); aborts
 * when full. */
static size_t alloc_off(const char *fn, size_t align, size_t size)
{
    size = (size + GRAIN - 1) & ~(GRAIN - 1);
    uintptr_t base = hps_shmem_sh.base[HPS_REG_HEAP];
    for (blk_t *b = g_head; b; b = b->next) {
        if (b->used)
            continue;
        size_t start = ((base + b->off + align - 1) & ~(uintptr_t)(align - 1)) - base;
        size_t lead = start - b->off;
        if (lead > b->size || b->size - lead < size)
            continue;
        if (lead)
            b = split(b, lead);
        if (b->size > size)
            split(b, size);
        b->used = 1;
        return b->off;
    }
    size_t big = largest_free();
    pthread_mutex_unlock(&g_lock);
    hps_shmem_fatal(fn, "out of symmetric heap: %zu bytes requested, largest free block %zu of %zu "
              "(set HPSYNC_SHMEM_HEAP_SIZE)", size, big, g_heap_size);
}

static blk_t *find(const char *fn, const void *ptr)
{
    size_t off = (uintptr_t)ptr - hps_shmem_sh.base[HPS_REG_HEAP];
    for (blk_t *b = g_head; b; b = b->next)
        if (b->off == off && b->used)
            return b;
    pthread_mutex_unlock(&g_lock);
    hps_shmem_fatal(fn, "%p was not returned by shmem_malloc (or is already freed)", ptr);
}

static void release(blk_t *b)
{
    b->used = 0;
    if (b->next && !b->next->used)
        merge_next(b);
    if (b->prev && !b->prev->used)
        merge_next(b->prev);
}

/* zero: cleared before the barrier, so no peer can write into it first. */
static void *heap_alloc(const char *fn, size_t align, size_t size, int zero)
{
    hps_check_running(fn);
    if (size == 0)
        return NULL;
    if (align < GRAIN)
        align = GRAIN;
    if (align & (align - 1))
        hps_shmem_fatal(fn, "alignment %zu is not a power of two", align);
    if (align > g_align_max)
        hps_shmem_fatal(fn, "alignment %zu is larger than the symmetric heap (%zu bytes): no address "
                  "can be aligned to it on every PE (set HPSYNC_SHMEM_HEAP_SIZE)", align,
                  g_heap_size);
    pthread_mutex_lock(&g_lock);
    size_t off = alloc_off(fn, align, size);
    pthread_mutex_unlock(&g_lock);
    char *p = (char *)hps_shmem_sh.base[HPS_REG_HEAP] + off;
    if (zero)
        memset(p, 0, size);
    /* Nobody may touch the new object on another PE before that PE has it. */
    hps_shmem_barrier_all_internal(fn);
    return p;
}

HPS_API void *shmem_malloc(size_t size)
{
    return heap_alloc(__func__, GRAIN, size, 0);
}

HPS_API void *shmem_malloc_with_hints(size_t size, long hints)
{
    /* Every object already supports remote atomics and signals. */
    (void)hints;
    return heap_alloc(__func__, GRAIN, size, 0);
}

HPS_API void *shmem_align(size_t alignment, size_t size)
{
    return heap_alloc(__func__, alignment, size, 0);
}

HPS_API void *shmem_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        hps_shmem_fatal(__func__, "%zu x %zu bytes overflows", count, size);
    return heap_alloc(__func__, GRAIN, count * size, 1);
}

static void heap_free(const char *fn, void *ptr)
{
    hps_check_running(fn);
    if (!ptr)
        return;
    /* A bad pointer is reported before the barrier, while the other PEs
     * wait in it, rather than after they have moved on. */
    pthread_mutex_lock(&g_lock);
    blk_t *b = find(fn, ptr);
    pthread_mutex_unlock(&g_lock);
    /* Every PE's operations on the object must be over before it goes. */
    hps_shmem_barrier_all_internal(fn);
    pthread_mutex_lock(&g_lock);
    release(b);
    pthread_mutex_unlock(&g_lock);
}

HPS_API void shmem_free(void *ptr)
{
    heap_free(__func__, ptr);
}

static void *heap_realloc(const char *fn, void *ptr, size_t size)
{
    if (!ptr)
        return heap_alloc(fn, GRAIN, size, 0);
    if (!size) {
        heap_free(fn, ptr);
        return NULL;
    }
    hps_check_running(fn);
    pthread_mutex_lock(&g_lock);
    blk_t *b = find(fn, ptr);
    pthread_mutex_unlock(&g_lock);
    hps_shmem_barrier_all_internal(fn);
    pthread_mutex_lock(&g_lock);
    size_t want = (size + GRAIN - 1) & ~(GRAIN - 1);
    char *base = (char *)hps_shmem_sh.base[HPS_REG_HEAP];
    if (b->next && !b->next->used && b->size + b->next->size >= want)
        merge_next(b);                  /* grow in place */
    if (b->size >= want) {
        if (b->size > want) {
            blk_t *rest = split(b, want);
            if (rest->next && !rest->next->used)
                merge_next(rest);
        }
        pthread_mutex_unlock(&g_lock);
        hps_shmem_barrier_all_internal(fn);
        return base + b->off;
    }
    size_t off = alloc_off(fn, GRAIN, size);
    memcpy(base + off, base + b->off, b->size);
    release(b);
    pthread_mutex_unlock(&g_lock);
    hps_shmem_barrier_all_internal(fn);
    return base + off;
}

HPS_API void *shmem_realloc(void *ptr, size_t size)
{
    return heap_realloc(__func__, ptr, size);
}

size_t hps_shmem_heap_free_bytes(void)
{
    size_t n = 0;
    pthread_mutex_lock(&g_lock);
    for (blk_t *b = g_head; b; b = b->next)
        if (!b->used)
            n += b->size;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* OpenSHMEM 1.2 names: the same work, each under its own name (in its
 * errors, and for a profiling tool, which sees shmalloc and not a
 * shmem_malloc inside it). */
HPS_API void *shmalloc(size_t size) { return heap_alloc(__func__, GRAIN, size, 0); }
HPS_API void *shmemalign(size_t alignment, size_t size) { return heap_alloc(__func__, alignment, size, 0); }
HPS_API void *shrealloc(void *ptr, size_t size) { return heap_realloc(__func__, ptr, size); }
HPS_API void shfree(void *ptr) { heap_free(__func__, ptr); }

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
