// SPDX-License-Identifier: MIT
/*
 * Giving memory back, slowly.
 *
 * A freed slot (a retired page's, a freed span's) stays backed: the next
 * page or span placed there costs no page faults (hps_malloc_slots_find prefers
 * such slots).  Returning it to the OS at once, as this allocator used to
 * for everything above 4 MiB per thread and for every huge block, made a
 * loop that allocates, writes and frees large blocks take a page fault on
 * every 4 KiB it wrote.  Keeping it forever would hold the peak of a
 * program's heap for its whole life.  So, as mature allocators do, freed
 * memory decays:
 *
 *   - a free slot idle for HPSYNC_MALLOC_DECAY_MS (1 s) is purged
 *     (madvise(MADV_DONTNEED): RSS falls, the range stays reserved);
 *   - a thread (its pages' slots) and a span arena (span.c) each keep at
 *     most HPSYNC_MALLOC_CACHE_MIB (64 MiB) of freed slots backed: beyond
 *     that the longest idle go at once;
 *   - a segment left empty and purged goes back to the global cache.
 *
 * There is no background thread (a preloaded program did not ask for
 * one): the clock is looked at on the heap's own slow paths (spans, page
 * retirement, every 64th refill), so a thread's cache decays on its later
 * allocator calls, an arena's on its spans' allocations and frees.  A
 * thread that exits leaves its heap whole for the next new thread (heap.c:
 * parked heaps); one that no thread takes within the decay time gives its
 * freed memory back on another thread's tick.  malloc_trim gives back the
 * caller's, the arenas' and the parked heaps'.
 *
 * The clock is CLOCK_MONOTONIC_COARSE in milliseconds (a few ns through the
 * vDSO, millisecond resolution is plenty); 32 bits wrap after 49 days, so
 * times are only ever compared as differences.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "settings.h"

#define REFILLS_PER_TICK 64

void hps_malloc_slots_take(hps_malloc_heap_t *h, hps_malloc_segment_t *seg, int page, int s, uint32_t k)
{
    hps_malloc_slotset_t m = hps_malloc_slot_mask(s, k);
    h->dirty_slots -= hps_malloc_slotset_count(seg->free_slots & seg->dirty & m);
    seg->free_slots &= ~m;
    seg->dirty |= m;               /* in use: backed as soon as it is written */
    h->used_slots += k;
    for (uint32_t i = 0; i < k; i++)
        seg->slot_page[s + i] = (uint8_t)page;
}

void hps_malloc_slots_free(hps_malloc_heap_t *h, hps_malloc_segment_t *seg, int s, uint32_t k)
{
    uint32_t now = hps_malloc_os_now_ms();
    for (uint32_t i = 0; i < k; i++)
        seg->freed_at[s + i] = now;
    seg->free_slots |= hps_malloc_slot_mask(s, k);
    h->dirty_slots += k;
    h->used_slots -= k;
}

uint32_t hps_malloc_segment_purge(hps_malloc_segment_t *seg, hps_malloc_slotset_t m)
{
    /* One madvise per run of slots; bit 0 (the header slot) is never set. */
    uint32_t n = 0;
    seg->dirty &= ~m;
    while (m) {
        int s = hps_malloc_slotset_first(m);
        uint32_t len = hps_malloc_slotset_run(m, s);
        hps_malloc_os_purge((char *)seg + ((size_t)s << HPS_SLOT_SHIFT), (size_t)len << HPS_SLOT_SHIFT);
        m &= ~hps_malloc_slot_mask(s, len);
        n += len;
    }
    return n;
}

uint32_t hps_malloc_segment_purge_idle(hps_malloc_segment_t *seg, uint32_t now, uint32_t min_age)
{
    hps_malloc_slotset_t cand = seg->free_slots & seg->dirty, m = 0;
    while (cand) {
        int i = hps_malloc_slotset_first(cand);
        cand &= cand - 1;
        if (min_age == 0 || (int32_t)(now - seg->freed_at[i]) >= (int32_t)min_age)
            m |= (hps_malloc_slotset_t)1 << i;
    }
    return m ? hps_malloc_segment_purge(seg, m) : 0;
}

/* Purge h's free backed slots idle for at least min_age ms. */
static void purge_idle(hps_malloc_heap_t *h, uint32_t now, uint32_t min_age)
{
    for (hps_malloc_segment_t *seg = h->segs; seg; seg = seg->next) {
        uint32_t n = hps_malloc_segment_purge_idle(seg, now, min_age);
        h->dirty_slots -= n;
        h->st.purged_slots += n;
    }
}

/* How long slot i of seg has been idle (0 if it was freed "after" now by
 * a thread that read the clock later). */
static uint32_t idle_for(const hps_malloc_segment_t *seg, int i, uint32_t now)
{
    int32_t age = (int32_t)(now - seg->freed_at[i]);
    return age > 0 ? (uint32_t)age : 0;
}

/* Purge the longest idle first, a run of slots (or the part of one that
 * is over) at a time, until at most limit slots stay backed or the rest
 * have been idle for less than min_idle ms. */
static void purge_down(hps_malloc_heap_t *h, uint32_t now, uint32_t limit, uint32_t min_idle)
{
    while (h->dirty_slots > limit) {
        uint32_t oldest = 0;
        int any = 0;
        for (hps_malloc_segment_t *seg = h->segs; seg; seg = seg->next)
            for (hps_malloc_slotset_t m = seg->free_slots & seg->dirty; m; m &= m - 1) {
                uint32_t age = idle_for(seg, hps_malloc_slotset_first(m), now);
                oldest = !any || age > oldest ? age : oldest;
                any = 1;
            }
        if (!any || oldest < min_idle)
            return;
        for (hps_malloc_segment_t *seg = h->segs; seg && h->dirty_slots > limit; seg = seg->next) {
            hps_malloc_slotset_t m = 0;
            for (hps_malloc_slotset_t c = seg->free_slots & seg->dirty; c; c &= c - 1) {
                int i = hps_malloc_slotset_first(c);
                if (idle_for(seg, i, now) >= oldest)
                    m |= (hps_malloc_slotset_t)1 << i;
            }
            while (m && h->dirty_slots > limit) {
                /* A run at a time, but no more of it than needed. */
                int s = hps_malloc_slotset_first(m);
                uint32_t len = hps_malloc_slotset_run(m, s), over = h->dirty_slots - limit;
                hps_malloc_slotset_t run = hps_malloc_slot_mask(s, len < over ? len : over);
                uint32_t n = hps_malloc_segment_purge(seg, run);
                h->dirty_slots -= n;
                h->st.purged_slots += n;
                m &= ~run;
            }
        }
    }
}

/* Give back h's segments that are empty and purged, keeping one. */
static void release_empty(hps_malloc_heap_t *h)
{
    hps_malloc_segment_t *seg = h->segs;
    while (seg) {
        hps_malloc_segment_t *next = seg->next;
        if (hps_malloc_segment_empty(seg) && !(seg->dirty & seg->free_slots) &&
            hps_malloc_segment_has_sibling(seg))
            hps_malloc_segment_drop(h, seg);
        seg = next;
    }
}

uint32_t hps_malloc_cache_cap_slots(void)
{
    uint64_t slots = (uint64_t)hps_malloc_settings()->cache_mib << (20 - HPS_SLOT_SHIFT);
    return slots > UINT32_MAX ? UINT32_MAX : (uint32_t)slots;
}

/* What a thread keeps of its pages' freed slots for the decay time: an
 * eighth of the slots its pages hold, at least 512 KiB, at most the cap;
 * the rest goes back once idle for a 64th of the decay time (15 ms by
 * default).  Far less than spans need: a page is carved 4 KiB at a time
 * as it fills, so one made on purged slots faults a page at a time over
 * its life, where a span is written whole at once; and what a heap keeps
 * of them is most of what stays resident above its blocks (server
 * pattern: a worker's heap held 5.2-6 MiB for 2.6 MiB of blocks, about
 * 1.5 MiB of it freed slots and spare pages that the next generations did
 * not touch).  The short wait, not none: a thread that frees its whole
 * working set and exits leaves it for its successor, which takes it over
 * within microseconds (heap.c: parked heaps). */
static uint32_t page_cap_slots(const hps_malloc_heap_t *h)
{
    uint32_t keep = h->used_slots / 8, cap = hps_malloc_cache_cap_slots();
    keep = keep < (1u << (19 - HPS_SLOT_SHIFT)) ? 1u << (19 - HPS_SLOT_SHIFT) : keep;
    return keep < cap ? keep : cap;
}

void hps_malloc_heap_tick(hps_malloc_heap_t *h)
{
    uint32_t now = hps_malloc_os_now_ms();
    hps_malloc_huge_tick(now);
    hps_malloc_heaps_parked_tick(now);
    hps_malloc_heap_decay(h, page_cap_slots(h), hps_malloc_settings()->decay_ms / 64);
}

void hps_malloc_heap_decay(hps_malloc_heap_t *h, uint32_t cap, uint32_t min_idle)
{
    h->ticks = 0;
    if (!h->dirty_slots)
        return;
    uint32_t now = hps_malloc_os_now_ms();
    uint32_t decay = hps_malloc_settings()->decay_ms;
    int over = h->dirty_slots > cap;
    if (!over && (int32_t)(now - h->decay_at) < 0)
        return;
    purge_idle(h, now, decay);
    /* Over the cap: the longest idle go first, until a quarter of the cap
     * is free again (so the next frees do not purge one slot at a time). */
    if (h->dirty_slots > cap)
        purge_down(h, now, cap - cap / 4, min_idle);
    /* The next pass in a quarter of the decay time: a slot goes back
     * between 1 and 1.25 decay times after its free, and passes are rare. */
    h->decay_at = now + (decay / 4 ? decay / 4 : 1);
    release_empty(h);
}

void hps_malloc_heap_tick_refill(hps_malloc_heap_t *h)
{
    if (++h->ticks >= REFILLS_PER_TICK)
        hps_malloc_heap_tick(h);
}

size_t hps_malloc_heap_shrink(hps_malloc_heap_t *h, uint32_t keep)
{
    uint32_t before = h->dirty_slots;
    purge_down(h, hps_malloc_os_now_ms(), keep, 0);
    release_empty(h);
    return (size_t)(before - h->dirty_slots) << HPS_SLOT_SHIFT;
}
