// SPDX-License-Identifier: MIT
/*
 * Spans: a block above the largest size class (64 KiB) gets a run of whole
 * 64 KiB slots, a page holding that one block.  Up to 127 slots (8128 KiB
 * less the colour offset) fit a segment; bigger blocks are huge (huge.c).
 *
 * Why slots and not a mapping per block: a freed span's slots stay backed
 * (purge.c), so the next span placed there costs no page faults; the slots
 * of a segment coalesce by construction (a free slot is a bit), and a span
 * is placed best-fit, on backed slots first (hps_malloc_slots_find), which keeps
 * RSS close to the live bytes (a loop of blocks of 64 KiB..4 MiB, written
 * whole: peak RSS 1.1x glibc's, whose heap is one contiguous best-fit
 * arena; with 4 MiB segments it was 1.3x, hence 8 MiB segments).
 *
 * Why arenas shared by threads, under a lock, and not each thread's own
 * segments: a thread's freed spans are kept for its next ones, and what a
 * thread keeps follows the peak of its own large blocks, so with
 * per-thread span segments every thread ended up holding a whole segment
 * of backed slots (the cross-thread stress: 4 threads with about 3 MiB of
 * large blocks live each, 7.5-8 MiB resident each, peak RSS 1.2x glibc's).
 * Shared, freed slots serve whichever thread asks next, and an arena holds
 * about the peak of its threads' sum instead of the sum of their peaks; a
 * span freed by another thread is reusable at once, without waiting for an
 * owner to collect it.  One arena for all threads kept the least (the
 * stress: 33.8 MiB, 37.6 with two, 44 per thread) but its lock serialised
 * threads that make spans without writing much of them (4 threads, blocks
 * of 64 KiB..1 MiB touched once: 4.3 M operations/s against 15.3 M per
 * thread) and made threads reuse each other's cache-cold memory; so there
 * are as many arenas as CPUs the process may run on (at most
 * HPS_SPAN_ARENAS), and a thread keeps to one, by its heap's number (a
 * thread that moved between arenas would keep freed memory in each).  The
 * lock is held for the slot search and bookkeeping, and for the decay's
 * madvise when one is due.  free() takes its slow path for spans (their
 * descriptors have an empty carved range) and frees into the span's own
 * arena.
 *
 * Like huge blocks, a span's block starts at a rotating line offset (each
 * thread's own rotation), so the first lines of many large blocks do not
 * share a few L1 sets.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include "internal.h"
#include "settings.h"

/* Slots holding off + n bytes, or 0 when that is more than a segment has. */
static uint32_t span_slots(size_t off, size_t n)
{
    size_t k = (off + n + HPS_SLOT_SIZE - 1) >> HPS_SLOT_SHIFT;
    return k <= HPS_SLOTS - HPS_META_SLOTS ? (uint32_t)k : 0;
}

/* Size the descriptor of a span of k slots whose block starts at start. */
static void span_size(hps_malloc_page_t *pg, uint32_t k)
{
    uintptr_t base = pg->start & ~(uintptr_t)(HPS_SLOT_SIZE - 1);
    pg->slots = (uint8_t)k;
    pg->block_size = (uint32_t)(((size_t)k << HPS_SLOT_SHIFT) - (pg->start - base));
    pg->div_mul = UINT64_MAX / pg->block_size + 1;
    pg->bump_end = (char *)(base + ((size_t)k << HPS_SLOT_SHIFT));
}

/* An arena: spans' segments, their freed slots, decay and cap (a heap that
 * belongs to no thread; only its segment list, dirty count and statistics
 * are used), under its lock.  A span's descriptor points (heap) at its
 * arena's heap. */
typedef struct span_arena {
    hps_malloc_spin_t lock;
    hps_malloc_heap_t h;
} __attribute__((aligned(64))) span_arena_t;

static span_arena_t arenas[HPS_SPAN_ARENAS];
static hps_au32 arena_count;          /* set at the first span (every thread finds the same) */

/* The CPUs this process may run on (no allocation: a set on the stack). */
static uint32_t cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : n > HPS_SPAN_ARENAS ? HPS_SPAN_ARENAS : (uint32_t)n;
}

/* h's arena, locked. */
static span_arena_t *arena_lock_for(const hps_malloc_heap_t *h)
{
    uint32_t n = hps_load_relaxed(&arena_count);
    if (hps_unlikely(n == 0)) {
        n = cpus_allowed();
        hps_store_relaxed(&arena_count, n);
    }
    span_arena_t *a = &arenas[h->id % n];
    hps_malloc_spin_lock(&a->lock);
    return a;
}

/* The arena pg's span belongs to, or NULL if pg's owner is no arena: a
 * double free racing with the reuse of the span's segment (released, then
 * taken by a thread for small pages) may read a thread's heap there, whose
 * memory is not an arena's lock. */
static span_arena_t *arena_of(const hps_malloc_page_t *pg)
{
    uintptr_t h = (uintptr_t)hps_load_relaxed(&((hps_malloc_page_t *)pg)->heap);
    uintptr_t first = (uintptr_t)&arenas[0].h;
    if (h < first || h > (uintptr_t)&arenas[HPS_SPAN_ARENAS - 1].h || (h - first) % sizeof arenas[0])
        return NULL;
    return (span_arena_t *)(h - offsetof(span_arena_t, h));
}

/* pg's arena, locked, if pg is still the live span that starts at start
 * (a concurrent double free may have retired it, or its slots may hold
 * another span, or small pages, by now); else NULL. */
static span_arena_t *arena_lock_live(hps_malloc_page_t *pg, uintptr_t start)
{
    span_arena_t *a = arena_of(pg);
    if (!a)
        return NULL;
    hps_malloc_spin_lock(&a->lock);
    /* Rechecked under the lock, which every change of a span's descriptor
     * holds. */
    if (arena_of(pg) == a && pg->slots && pg->cls == HPS_SPAN_CLS && pg->start == start)
        return a;
    hps_malloc_spin_unlock(&a->lock);
    return NULL;
}

void hps_malloc_span_lock_all(void)
{
    for (int i = 0; i < HPS_SPAN_ARENAS; i++)
        hps_malloc_spin_lock(&arenas[i].lock);
}

void hps_malloc_span_unlock_all(void)
{
    for (int i = HPS_SPAN_ARENAS; i-- > 0;)
        hps_malloc_spin_unlock(&arenas[i].lock);
}

void hps_malloc_span_stats(hps_malloc_heap_stats_t *sum, void (*add)(hps_malloc_heap_stats_t *, const volatile hps_malloc_heap_stats_t *))
{
    for (int i = 0; i < HPS_SPAN_ARENAS; i++)
        add(sum, &arenas[i].h.st);
}

/* Make slots [s, s+k) of seg a span whose block starts off bytes in;
 * *backed: those of its slots that were backed before (they may hold old
 * data).  Under the arena's lock. */
static void *span_init(hps_malloc_heap_t *a, hps_malloc_segment_t *seg, int s, uint32_t k, size_t off, hps_malloc_slotset_t *backed)
{
    hps_malloc_slotset_t mask = hps_malloc_slot_mask(s, k);
    *backed = seg->dirty & mask;
    hps_malloc_slots_take(a, seg, s, s, k);
    hps_malloc_page_t *pg = &seg->pages[s];
    pg->start = (uintptr_t)seg + ((uintptr_t)s << HPS_SLOT_SHIFT) + off;
    /* An empty carved range: free()'s fast path never takes a span. */
    pg->bump = (char *)pg->start;
    pg->free = NULL;
    hps_store_relaxed(&pg->thread_free, 0);
    span_size(pg, k);
    hps_store_relaxed(&pg->used, 1);
    pg->cls = HPS_SPAN_CLS;
    pg->aligned = 0;
    pg->prev = pg->next = NULL;
    hps_store_release(&pg->heap, a);
    a->st.spans++;
    a->st.spans_backed += *backed == mask;
    return (void *)pg->start;
}

/* calloc: zero what may hold old data (slots never touched, or purged
 * since, read as zero already).  Outside the lock: the block is ours. */
static void span_zero(hps_malloc_segment_t *seg, hps_malloc_slotset_t backed, uintptr_t start, size_t n)
{
    uintptr_t end = start + n;
    for (hps_malloc_slotset_t b = backed; b; b &= b - 1) {
        uintptr_t lo = (uintptr_t)seg + ((uintptr_t)hps_malloc_slotset_first(b) << HPS_SLOT_SHIFT);
        uintptr_t hi = lo + HPS_SLOT_SIZE;
        lo = lo < start ? start : lo;
        hi = hi > end ? end : hi;
        if (lo < hi)
            memset((void *)lo, 0, hi - lo);
    }
}

void *hps_malloc_big_alloc(hps_malloc_heap_t *h, size_t n, size_t align, int zero)
{
    if (!h || align > HPS_SLOT_SIZE)
        return hps_malloc_huge_alloc(h, n, align, zero);
    /* A slot boundary satisfies any alignment up to a slot; otherwise the
     * block starts at the thread's next colour. */
    size_t off = 0;
    if (align <= hps_malloc_geo.line && hps_malloc_settings()->colour) {
        off = (size_t)((h->huge_colour * 5u) & (hps_malloc_geo.sets - 1)) << hps_malloc_geo.line_shift;
        h->huge_colour++;
    }
    uint32_t k = span_slots(off, n);
    if (!k)
        return hps_malloc_huge_alloc(h, n, align, zero);
    /* The caller's own clock work (its pages' decay, the huge cache, the
     * parked heaps): a thread that only makes spans would never do it. */
    hps_malloc_heap_tick(h);
    span_arena_t *a = arena_lock_for(h);
    hps_malloc_heap_decay(&a->h, hps_malloc_cache_cap_slots(), 0);
    int s = HPS_META_SLOTS;
    hps_malloc_segment_t *seg = hps_malloc_slots_find(&a->h, k, &s);
    if (!seg)
        seg = hps_malloc_segment_new(&a->h);
    void *p = NULL;
    hps_malloc_slotset_t backed = 0;
    if (seg)
        p = span_init(&a->h, seg, s, k, off, &backed);
    hps_malloc_spin_unlock(&a->lock);
    if (p && zero)
        span_zero(seg, backed, (uintptr_t)p, n);
    return p;
}

int hps_malloc_span_free(hps_malloc_page_t *pg, uintptr_t start)
{
    span_arena_t *a = arena_lock_live(pg, start);
    if (!a)
        return 0;
    hps_store_relaxed(&pg->used, 0);
    hps_malloc_page_retire(&a->h, pg);
    hps_malloc_heap_decay(&a->h, hps_malloc_cache_cap_slots(), 0);
    hps_malloc_spin_unlock(&a->lock);
    return 1;
}

/* Resize in place in arena a; 1 if done.  Under its lock. */
static int span_resize(hps_malloc_heap_t *a, hps_malloc_page_t *pg, size_t n)
{
    hps_malloc_segment_t *seg = hps_malloc_segment_of(pg);
    int s = (int)(pg - seg->pages);
    uint32_t k = pg->slots;
    uint32_t want = span_slots(pg->start - ((uintptr_t)seg + ((uintptr_t)s << HPS_SLOT_SHIFT)), n);
    if (!want || n <= HPS_MAX_SMALL)
        return 0;
    if (want < k) {
        /* The tail's descriptors already hold empty ranges (they were
         * never a page's first slot while this span lived). */
        span_size(pg, want);
        hps_malloc_slots_free(a, seg, s + (int)want, k - want);
        hps_malloc_heap_decay(a, hps_malloc_cache_cap_slots(), 0);
        return 1;
    }
    if (want > k) {
        hps_malloc_slotset_t more = hps_malloc_slot_mask(s + (int)k, want - k);
        if (s + (int)want > (int)HPS_SLOTS || (seg->free_slots & more) != more)
            return 0;
        hps_malloc_slots_take(a, seg, s, s + (int)k, want - k);
        span_size(pg, want);
    }
    return 1;
}

int hps_malloc_span_resize(hps_malloc_page_t *pg, uintptr_t start, size_t n)
{
    span_arena_t *a = arena_lock_live(pg, start);
    if (!a)
        return 0;
    int done = span_resize(&a->h, pg, n);
    hps_malloc_spin_unlock(&a->lock);
    return done;
}

size_t hps_malloc_span_trim(void)
{
    size_t bytes = 0;
    for (int i = 0; i < HPS_SPAN_ARENAS; i++) {
        hps_malloc_spin_lock(&arenas[i].lock);
        bytes += hps_malloc_heap_shrink(&arenas[i].h, 0);
        hps_malloc_spin_unlock(&arenas[i].lock);
    }
    return bytes;
}
