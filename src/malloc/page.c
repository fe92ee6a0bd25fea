// SPDX-License-Identifier: MIT
/*
 * Segments and pages: finding free slots for a page or a span, carving a
 * segment's slots into pages of one size class, colouring a page's first
 * block, collecting remote frees, retiring empty pages.  What happens to
 * the freed slots' memory is purge.c's business.
 */
#define _GNU_SOURCE
#include <string.h>
#include "internal.h"
#include "settings.h"

/* Empty segments kept mapped (purged) for reuse.  Segments of the region
 * are never unmapped (their headers must stay readable for free()'s fast
 * path), so they all wait here; others stay up to HPSYNC_MALLOC_SEG_CACHE. */
static hps_malloc_spin_t cache_lock;
static hps_malloc_segment_t *cache_head;
static uint32_t cache_count;           /* segments outside the region in the cache */
static int region_state;               /* 0 untried, 1 ours, -1 unavailable */
static uintptr_t region_next = HPS_REGION_BASE;

void hps_malloc_page_link(hps_malloc_page_t **list, hps_malloc_page_t *pg)
{
    pg->prev = NULL;
    pg->next = *list;
    if (*list)
        (*list)->prev = pg;
    *list = pg;
}

void hps_malloc_page_unlink(hps_malloc_page_t **list, hps_malloc_page_t *pg)
{
    if (pg->prev)
        pg->prev->next = pg->next;
    else
        *list = pg->next;
    if (pg->next)
        pg->next->prev = pg->prev;
    pg->prev = pg->next = NULL;
}

static void segment_init(hps_malloc_segment_t *seg, hps_malloc_heap_t *h)
{
    /* A cached segment keeps stale descriptors; only the header lines are reset. */
    memset(seg->slot_page, 0, sizeof seg->slot_page);
    memset(seg->pages, 0, sizeof seg->pages);
    seg->magic = HPS_SEG_MAGIC;
    seg->kind = HPS_SEG_SMALL;
    seg->map_size = HPS_SEG_SIZE;
    seg->free_slots = ~(hps_malloc_slotset_t)0 << HPS_META_SLOTS;
    seg->dirty = 0;                    /* fresh or purged (segment_release) */
    hps_store_relaxed(&seg->remote_full, NULL);
    hps_store_relaxed(&seg->remote_active, 0);
    hps_malloc_segment_attach(h, seg);
}

void hps_malloc_segment_set_owner(hps_malloc_segment_t *seg, hps_malloc_heap_t *h)
{
    /* Release: whoever sees the new owner sees the writes made before. */
    for (int i = HPS_META_SLOTS; i < (int)HPS_SLOTS; i++)
        hps_store_release(&seg->pages[i].heap, h);
}

void hps_malloc_segment_attach(hps_malloc_heap_t *h, hps_malloc_segment_t *seg)
{
    seg->prev = NULL;
    seg->next = h->segs;
    if (h->segs)
        h->segs->prev = seg;
    h->segs = seg;
    /* Release (inside): a remote free that reads the owner sees the header. */
    hps_malloc_segment_set_owner(seg, h);
}

hps_malloc_segment_t *hps_malloc_segment_new(hps_malloc_heap_t *h)
{
    hps_malloc_segment_t *seg = NULL;
    hps_malloc_spin_lock(&cache_lock);
    if (cache_head) {
        seg = cache_head;
        cache_head = seg->next;
        cache_count -= !hps_malloc_in_region(seg);
    } else {
        if (region_state == 0)
            region_state = hps_malloc_region_reserve() ? 1 : -1;
        if (region_state > 0 && region_next < HPS_REGION_BASE + HPS_REGION_SIZE) {
            seg = (hps_malloc_segment_t *)region_next;
            region_next += HPS_SEG_SIZE;
        }
    }
    hps_malloc_spin_unlock(&cache_lock);
    if (seg && hps_malloc_in_region(seg)) {
        hps_malloc_owned_set((uintptr_t)seg, 1);
        hps_malloc_count_mapped((int64_t)HPS_SEG_SIZE);
    } else if (!seg) {
        seg = hps_malloc_os_map_aligned(HPS_SEG_SIZE);
        if (!seg)
            return NULL;
    }
    segment_init(seg, h);
    return seg;
}

void hps_malloc_segment_release(hps_malloc_segment_t *seg)
{
    /* Purge what is still backed, then cache the segment for the next heap
     * that needs one, or unmap it.  A segment that a remote free is still
     * touching is never unmapped. */
    hps_malloc_segment_purge(seg, seg->dirty & seg->free_slots);
    seg->magic = 0;
    hps_malloc_segment_set_owner(seg, &hps_malloc_heap_abandoned);
    int region = hps_malloc_in_region(seg);
    if (region) {
        /* Not ours any more for block_of(); the memory stays mapped. */
        hps_malloc_owned_set((uintptr_t)seg, 0);
        hps_malloc_count_mapped(-(int64_t)HPS_SEG_SIZE);
    }
    hps_malloc_spin_lock(&cache_lock);
    int keep = region || cache_count < hps_malloc_settings()->seg_cache ||
               hps_load_acquire(&seg->remote_active) != 0;
    if (keep) {
        seg->next = cache_head;
        cache_head = seg;
        cache_count += !region;
    }
    hps_malloc_spin_unlock(&cache_lock);
    if (!keep)
        hps_malloc_os_unmap(seg, HPS_SEG_SIZE);
}

size_t hps_malloc_segment_cache_trim(void)
{
    size_t freed = 0;
    hps_malloc_spin_lock(&cache_lock);
    hps_malloc_segment_t **pp = &cache_head;
    while (*pp) {
        hps_malloc_segment_t *seg = *pp;
        if (!hps_malloc_in_region(seg) && hps_load_acquire(&seg->remote_active) == 0) {
            *pp = seg->next;
            cache_count--;
            hps_malloc_os_unmap(seg, HPS_SEG_SIZE);
            freed += HPS_SEG_SIZE;
        } else {
            pp = &seg->next;
        }
    }
    hps_malloc_spin_unlock(&cache_lock);
    return freed;
}

hps_malloc_spin_t *hps_malloc_segment_cache_lock(void) { return &cache_lock; }

uintptr_t hps_malloc_region_end(void)
{
    return region_state > 0 ? region_next : HPS_REGION_BASE;
}

/* The shortest run of at least k set bits of m (best fit: long runs stay
 * whole for long requests): its first bit and length (0 if none). */
static int best_run(hps_malloc_slotset_t m, uint32_t k, uint32_t *len)
{
    int best = -1;
    uint32_t best_len = 0;
    while (m) {
        int s = hps_malloc_slotset_first(m);
        uint32_t n = hps_malloc_slotset_run(m, s);
        if (n >= k && (best < 0 || n < best_len)) {
            best = s;
            best_len = n;
            if (n == k)
                break;
        }
        m &= ~hps_malloc_slot_mask(s, n);
    }
    *len = best_len;
    return best;
}

int hps_malloc_slots_fit(hps_malloc_slotset_t free, uint32_t k)
{
    uint32_t len;
    return best_run(free, k, &len) >= 0;
}

/* The place for k slots in the free set f covering the most slots of the
 * backed set d (fewest page faults), ties to the shorter free run: its
 * first slot (-1 if no run holds k), *covered and *len. */
static int most_backed(hps_malloc_slotset_t f, hps_malloc_slotset_t d, uint32_t k, uint32_t *covered, uint32_t *len)
{
    int best = -1;
    *covered = *len = 0;
    while (f) {
        int s = hps_malloc_slotset_first(f);
        uint32_t n = hps_malloc_slotset_run(f, s);
        for (uint32_t i = 0; n >= k && i <= n - k; i++) {
            uint32_t c = hps_malloc_slotset_count(d & hps_malloc_slot_mask(s + (int)i, k));
            if (best < 0 || c > *covered || (c == *covered && n < *len)) {
                best = s + (int)i;
                *covered = c;
                *len = n;
            }
        }
        f &= ~hps_malloc_slot_mask(s, n);
    }
    return best;
}

hps_malloc_segment_t *hps_malloc_slots_find(hps_malloc_heap_t *h, uint32_t k, int *slot)
{
    /* First the runs whose memory is all still backed, best fit: reusing
     * them costs no page faults, and long runs stay whole for long
     * requests. */
    hps_malloc_segment_t *found = NULL;
    uint32_t found_len = 0;
    for (hps_malloc_segment_t *seg = h->segs; seg; seg = seg->next) {
        uint32_t len;
        int s = best_run(seg->free_slots & seg->dirty, k, &len);
        if (s >= 0 && (!found || len < found_len)) {
            found = seg;
            found_len = len;
            *slot = s;
            if (len == k)
                return seg;
        }
    }
    if (found)
        return found;
    /* Else the place that covers the most backed slots: a span that does
     * not fit a backed run extends one with clean slots rather than
     * touching a clean run whole, so the memory a thread has touched grows
     * only by what it must. */
    uint32_t found_cov = 0;
    for (hps_malloc_segment_t *seg = h->segs; seg; seg = seg->next) {
        uint32_t cov, len;
        int s = most_backed(seg->free_slots, seg->dirty, k, &cov, &len);
        if (s >= 0 && (!found || cov > found_cov || (cov == found_cov && len < found_len))) {
            found = seg;
            found_cov = cov;
            found_len = len;
            *slot = s;
        }
    }
    return found;
}

static hps_malloc_page_t *page_init(hps_malloc_heap_t *h, hps_malloc_segment_t *seg, int s, uint32_t k, uint32_t cls)
{
    uint32_t size = hps_malloc_class_size[cls];
    hps_malloc_slots_take(h, seg, s, s, k);

    hps_malloc_page_t *pg = &seg->pages[s];
    uintptr_t base = (uintptr_t)seg + ((uintptr_t)s << HPS_SLOT_SHIFT);
    size_t bytes = (size_t)k << HPS_SLOT_SHIFT;
    uint32_t cap = (uint32_t)(bytes / size);
    size_t off = 0;
    if (size >= hps_malloc_geo.line && hps_malloc_settings()->colour) {
        /* Start the page at the heap's next colour, within the page's slack,
         * so pages (and heaps: each starts at its own colour) do not all put
         * their first blocks on the same sets.  The step is odd, so colours
         * cycle through every set. */
        size_t slack_lines = (bytes - (size_t)cap * size) >> hps_malloc_geo.line_shift;
        size_t c = h->colour & (hps_malloc_geo.sets - 1);
        off = (c % (slack_lines + 1)) << hps_malloc_geo.line_shift;
        h->colour += 13;
    }
    pg->start = base + off;
    pg->bump = (char *)pg->start;
    pg->bump_end = (char *)(pg->start + (size_t)cap * size);
    pg->free = NULL;
    hps_store_relaxed(&pg->thread_free, 0);
    pg->block_size = size;
    pg->div_mul = UINT64_MAX / size + 1;
    hps_store_relaxed(&pg->used, 0);
    pg->cls = (uint16_t)cls;
    pg->slots = (uint8_t)k;
    pg->aligned = 0;
    /* Not notified nor next_remote: the descriptor may still sit on the
     * segment's queue of full pages (a remote free queues a page after its
     * block became collectable, so a page can be retired and its slot
     * reused while queued); the queue's owner clears them when it takes
     * the queue (drain_remote, adopt_pages). */
    pg->prev = pg->next = NULL;
    hps_store_release(&pg->heap, h);
    h->st.pages_new++;
    return pg;
}

hps_malloc_page_t *hps_malloc_page_new(hps_malloc_heap_t *h, uint32_t cls, int new_segment)
{
    uint32_t k = hps_malloc_class_slots[cls];
    int s = HPS_META_SLOTS;
    hps_malloc_segment_t *seg = hps_malloc_slots_find(h, k, &s);
    if (!seg && (!new_segment || !(seg = hps_malloc_segment_new(h))))
        return NULL;
    return page_init(h, seg, s, k, cls);
}

void hps_malloc_page_carve(hps_malloc_page_t *pg)
{
    /* Carve a batch of never-used blocks into the free list: at least 4 KiB
     * worth (or 1 block), at most 64 blocks, so a fresh page costs page
     * faults only as it fills. */
    uint32_t size = pg->block_size;
    uint32_t n = size >= 4096 ? 1 : 4096 / size;
    if (n > 64)
        n = 64;
    char *p = pg->bump;
    size_t left = (size_t)(pg->bump_end - p) / size;
    if (n > left)
        n = (uint32_t)left;
    hps_malloc_block_t *head = pg->free;
    for (uint32_t i = n; i-- > 0;) {
        hps_malloc_block_t *b = (hps_malloc_block_t *)(p + (size_t)i * size);
        b->next = head;
        b->cookie = 0;
        head = b;
    }
    pg->free = head;
    pg->bump = p + (size_t)n * size;
}

void hps_malloc_page_collect(hps_malloc_page_t *pg)
{
    if (!hps_load_relaxed(&pg->thread_free))
        return;
    /* Acquire: the blocks' links were written before their pushes. */
    uintptr_t v = hps_xchg_acquire(&pg->thread_free, 0);
    hps_malloc_block_t *list = HPS_TF_PTR(v);
    if (!list)
        return;
    if (pg->free) {
        /* Splice at the tail.  A refill, the usual caller, collects only an
         * empty free list and skips this walk: the remote blocks' lines
         * were written by other threads, and following their links is a
         * chain of cache misses. */
        hps_malloc_block_t *last = list;
        while (last->next)
            last = last->next;
        last->next = pg->free;
    }
    pg->free = list;
    hps_malloc_page_used_add(pg, -(uint32_t)(v >> HPS_TF_SHIFT));
}

void hps_malloc_page_retire(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    hps_malloc_segment_t *seg = hps_malloc_segment_of((void *)pg);
    int s = (int)(pg - seg->pages);
    uint32_t k = pg->slots;
    if (pg->cls != HPS_SPAN_CLS) {
        if (h->hot[pg->cls] == pg)
            h->hot[pg->cls] = NULL;
        if (h->spare[pg->cls] == pg) {
            h->spare[pg->cls] = NULL;
            h->spare_slots -= k;
        }
        h->st.pages_retired++;
    }
    pg->slots = 0;
    pg->free = NULL;
    /* An empty handed-out range: free's fast path range test fails. */
    pg->bump = pg->bump_end = (char *)pg->start;
    /* The slots stay backed, for reuse, until purge.c gives them back. */
    hps_malloc_slots_free(h, seg, s, k);
}

void hps_malloc_segment_drop(hps_malloc_heap_t *h, hps_malloc_segment_t *seg)
{
    /* An empty segment that is not the heap's last goes back whole. */
    h->dirty_slots -= hps_malloc_slotset_count(seg->dirty & seg->free_slots);
    if (seg->prev)
        seg->prev->next = seg->next;
    else
        h->segs = seg->next;
    if (seg->next)
        seg->next->prev = seg->prev;
    hps_malloc_segment_release(seg);
}
