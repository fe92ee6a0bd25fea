// SPDX-License-Identifier: MIT
/*
 * Spans: a block above the largest size class (64 KiB) gets a run of whole
 * 64 KiB slots of one of its thread's segments, a page holding that one
 * block.  Up to 127 slots (8128 KiB less the colour offset) fit a segment;
 * bigger blocks are huge (huge.c).
 *
 * Why slots of the thread's segments and not a mapping per block: a freed
 * span's slots stay backed (purge.c), so the next span placed there costs
 * no page faults; the slots of a segment coalesce by construction (a free
 * slot is a bit), and a span is placed best-fit, on backed slots first
 * (hps_slots_find), which keeps RSS close to the live bytes (a loop of
 * blocks of 64 KiB..4 MiB, written whole: peak RSS 1.1x glibc's, whose
 * heap is one contiguous best-fit arena; with 4 MiB segments it was 1.3x,
 * hence 8 MiB segments).  A span's
 * descriptor has an empty carved range, so free() takes its slow path for
 * spans: one span free costs about what a mapping's bookkeeping would, and
 * no system call.  Frees from other threads go through the page's remote
 * stack like any block's; the owner retires such spans when it next makes
 * a span or refills.
 *
 * Like huge blocks, a span's block starts at a rotating line offset, so the
 * first lines of many large blocks do not share a few L1 sets.
 */
#define _GNU_SOURCE
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
static void span_size(hps_page_t *pg, uint32_t k)
{
    uintptr_t base = pg->start & ~(uintptr_t)(HPS_SLOT_SIZE - 1);
    pg->slots = (uint8_t)k;
    pg->block_size = (uint32_t)(((size_t)k << HPS_SLOT_SHIFT) - (pg->start - base));
    pg->div_mul = UINT64_MAX / pg->block_size + 1;
    pg->bump_end = (char *)(base + ((size_t)k << HPS_SLOT_SHIFT));
}

static void *span_init(hps_heap_t *h, hps_segment_t *seg, int s, uint32_t k, size_t off,
                       size_t n, int zero)
{
    hps_slotset_t mask = hps_slot_mask(s, k), backed = seg->dirty & mask;
    hps_slots_take(h, seg, s, s, k);
    hps_page_t *pg = &seg->pages[s];
    pg->start = (uintptr_t)seg + ((uintptr_t)s << HPS_SLOT_SHIFT) + off;
    /* An empty carved range: free()'s fast path never takes a span. */
    pg->bump = (char *)pg->start;
    pg->free = NULL;
    hps_store_relaxed(&pg->thread_free, 0);
    span_size(pg, k);
    /* One live block, and "full": a remote free queues the page on its
     * segment, where the owner finds it (hps_heap_drain_all). */
    hps_store_relaxed(&pg->used, 1u | HPS_PAGE_FULL);
    pg->cls = HPS_SPAN_CLS;
    pg->aligned = 0;
    pg->prev = pg->next = NULL;          /* queue links stay: see page_init */
    hps_store_release(&pg->heap, h);
    h->st.spans++;
    h->st.spans_backed += backed == mask;
    if (zero) {
        /* Slots never touched or purged since read as zero already. */
        uintptr_t end = pg->start + n;
        for (hps_slotset_t b = backed; b; b &= b - 1) {
            uintptr_t lo = (uintptr_t)seg + ((uintptr_t)hps_slotset_first(b) << HPS_SLOT_SHIFT);
            uintptr_t hi = lo + HPS_SLOT_SIZE;
            lo = lo < pg->start ? pg->start : lo;
            hi = hi > end ? end : hi;
            if (lo < hi)
                memset((void *)lo, 0, hi - lo);
        }
    }
    return (void *)pg->start;
}

void *hps_big_alloc(hps_heap_t *h, size_t n, size_t align, int zero)
{
    if (!h || align > HPS_SLOT_SIZE)
        return hps_huge_alloc(h, n, align, zero);
    /* A slot boundary satisfies any alignment up to a slot; otherwise the
     * block starts at the heap's next colour. */
    size_t off = 0;
    if (align <= hps_geo.line && hps_malloc_settings()->colour) {
        off = (size_t)((h->huge_colour * 5u) & (hps_geo.sets - 1)) << hps_geo.line_shift;
        h->huge_colour++;
    }
    uint32_t k = span_slots(off, n);
    if (!k)
        return hps_huge_alloc(h, n, align, zero);
    hps_heap_tick(h);
    hps_heap_drain_all(h);
    int s = HPS_META_SLOTS;
    hps_segment_t *seg = hps_slots_find(h, k, &s, HPS_USE_SPANS);
    while (!seg && hps_heap_adopt(h, HPS_SPAN_CLS, k))
        seg = hps_slots_find(h, k, &s, HPS_USE_SPANS);
    if (!seg && !(seg = hps_segment_new(h)))
        return NULL;
    seg->use = HPS_USE_SPANS;
    return span_init(h, seg, s, k, off, n, zero);
}

void hps_span_free(hps_heap_t *h, hps_page_t *pg)
{
    hps_store_relaxed(&pg->used, 0);
    hps_page_retire(h, pg);
    hps_heap_tick(h);
}

int hps_span_resize(hps_heap_t *h, hps_page_t *pg, size_t n)
{
    hps_segment_t *seg = hps_segment_of(pg);
    int s = (int)(pg - seg->pages);
    uint32_t k = pg->slots;
    uint32_t want = span_slots(pg->start - ((uintptr_t)seg + ((uintptr_t)s << HPS_SLOT_SHIFT)), n);
    if (!want || n <= HPS_MAX_SMALL)
        return 0;
    if (want < k) {
        /* The tail's descriptors already hold empty ranges (they were
         * never a page's first slot while this span lived). */
        span_size(pg, want);
        hps_slots_free(h, seg, s + (int)want, k - want);
        hps_heap_tick(h);
        return 1;
    }
    if (want > k) {
        hps_slotset_t more = hps_slot_mask(s + (int)k, want - k);
        if (s + (int)want > (int)HPS_SLOTS || (seg->free_slots & more) != more)
            return 0;
        hps_slots_take(h, seg, s, s + (int)k, want - k);
        span_size(pg, want);
    }
    return 1;
}
