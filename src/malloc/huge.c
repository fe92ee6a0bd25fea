// SPDX-License-Identifier: MIT
/*
 * Huge blocks, too big for a span (more than a segment's 63 free slots): a
 * segment-aligned mapping each, so free() finds the header with the same
 * mask as for other blocks.  The block starts after an 8 KiB header at a
 * rotating line offset: mappings are page-aligned, and without the offset
 * every huge block's first lines would land on the same L1 sets.
 *
 * A freed mapping is not unmapped at once but kept, still backed, in one
 * shared cache (a short list under a spin lock: huge blocks are rare, and
 * the list is only touched when one is made or freed).  A request takes
 * the smallest cached mapping that holds it and is at most twice its size;
 * a longer one is cut to size (the tail unmapped).  Mappings idle for the
 * decay time, or beyond HPSYNC_MALLOC_CACHE_MIB in all, are unmapped; the
 * decay is checked on huge allocations and frees and on every heap's
 * clock ticks (purge.c).  A cached mapping's ownership bit is clear, so a
 * free() of its old block is reported as an invalid free.
 *
 * realloc moves a huge block with mremap: the pages change address, none
 * is copied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"
#include "settings.h"

static hps_malloc_spin_t cache_lock;
static hps_malloc_segment_t *cache_head;      /* newest first */
static size_t cache_bytes;
/* Cached mappings exist: a relaxed hint read without the lock, so a tick
 * with nothing cached costs one load. */
static _Atomic uint32_t cache_count;
/* When the oldest cached mapping expires (ms), read without the lock too. */
static _Atomic uint32_t cache_due;

hps_malloc_spin_t *hps_malloc_huge_cache_lock(void) { return &cache_lock; }

static size_t cap_bytes(void)
{
    return (size_t)hps_malloc_settings()->cache_mib << 20;
}

static void unmap_list(hps_malloc_segment_t *seg)
{
    while (seg) {
        hps_malloc_segment_t *next = seg->next;
        hps_malloc_count_mapped(-(int64_t)seg->map_size);
        int saved = errno;
        munmap(seg, seg->map_size);
        errno = saved;
        seg = next;
    }
}

/* Unlink *pp from the cache (locked) onto *out. */
static void cache_unlink(hps_malloc_segment_t **pp, hps_malloc_segment_t **out)
{
    hps_malloc_segment_t *seg = *pp;
    *pp = seg->next;
    cache_bytes -= seg->map_size;
    hps_store_relaxed(&cache_count, hps_load_relaxed(&cache_count) - 1);
    seg->next = *out;
    *out = seg;
}

/* Unmap (outside the lock) what has been idle for min_age ms or more and,
 * oldest first, what exceeds the cap; returns the bytes unmapped. */
static size_t cache_expire(uint32_t now, uint32_t min_age)
{
    hps_malloc_segment_t *gone = NULL;
    size_t cap = cap_bytes(), kept = 0, bytes = 0;
    hps_malloc_segment_t *oldest = NULL;
    hps_malloc_spin_lock(&cache_lock);
    for (hps_malloc_segment_t **pp = &cache_head; *pp;) {
        /* Newest first: what the newer entries leave of the cap. */
        hps_malloc_segment_t *seg = *pp;
        if ((int32_t)(now - seg->freed_at[0]) >= (int32_t)min_age || kept + seg->map_size > cap) {
            bytes += seg->map_size;
            cache_unlink(pp, &gone);
        } else {
            kept += seg->map_size;
            oldest = seg;
            pp = &seg->next;
        }
    }
    if (oldest)
        hps_store_relaxed(&cache_due, oldest->freed_at[0] + hps_malloc_settings()->decay_ms);
    hps_malloc_spin_unlock(&cache_lock);
    unmap_list(gone);
    return bytes;
}

void hps_malloc_huge_tick(uint32_t now)
{
    if (hps_load_relaxed(&cache_count) && (int32_t)(now - hps_load_relaxed(&cache_due)) >= 0)
        cache_expire(now, hps_malloc_settings()->decay_ms);
}

size_t hps_malloc_huge_cache_trim(void)
{
    return cache_expire(hps_malloc_os_now_ms(), 0);
}

/* Grow the mapping seg of old bytes to map bytes: in place if the
 * address space after it is free, else moved to a new segment-aligned
 * range (mremap moves the page tables, nothing is copied).  The mapping at
 * its new place (owned: a moved one's old place is not), or NULL with seg
 * unchanged. */
static hps_malloc_segment_t *remap_grow(hps_malloc_segment_t *seg, size_t old, size_t map)
{
    int saved = errno;
    void *p = mremap(seg, old, map, 0);
    if (p != MAP_FAILED) {
        hps_malloc_count_mapped((int64_t)(map - old));
        return p;
    }
    void *dest = hps_malloc_os_map_aligned(map);   /* owned and counted */
    if (!dest) {
        errno = saved;
        return NULL;
    }
    p = mremap(seg, old, map, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
    errno = saved;
    if (p == MAP_FAILED) {
        hps_malloc_os_unmap(dest, map);
        return NULL;
    }
    hps_malloc_owned_set((uintptr_t)seg, 0);
    hps_malloc_count_mapped(-(int64_t)old);
    return p;
}

/* A cached mapping for map bytes, cut or grown to that size; NULL if there
 * is none.  The smallest that holds map bytes and is at most twice that;
 * else the largest smaller one, grown (its backed pages serve the start of
 * the block). */
static hps_malloc_segment_t *cache_take(size_t map)
{
    if (!hps_load_relaxed(&cache_count))
        return NULL;
    hps_malloc_segment_t **fit = NULL, **small = NULL;
    hps_malloc_spin_lock(&cache_lock);
    for (hps_malloc_segment_t **pp = &cache_head; *pp; pp = &(*pp)->next) {
        size_t m = (*pp)->map_size;
        if (m >= map && m / 2 <= map && (!fit || m < (*fit)->map_size))
            fit = pp;
        else if (m < map && (!small || m > (*small)->map_size))
            small = pp;
    }
    hps_malloc_segment_t *seg = NULL;
    if (fit || small)
        cache_unlink(fit ? fit : small, &seg);
    hps_malloc_spin_unlock(&cache_lock);
    if (!seg)
        return NULL;
    seg->next = NULL;
    int saved = errno;
    if (seg->map_size < map) {
        hps_malloc_segment_t *grown = remap_grow(seg, seg->map_size, map);
        if (!grown)
            hps_malloc_os_unmap(seg, seg->map_size);
        seg = grown;
    } else if (seg->map_size > map) {
        hps_malloc_count_mapped(-(int64_t)(seg->map_size - map));
        munmap((char *)seg + map, seg->map_size - map);
    }
    errno = saved;
    if (seg)
        seg->map_size = map;
    return seg;
}

/* Header offset of a block aligned to align (0: the heap's next colour). */
static size_t block_offset(hps_malloc_heap_t *h, size_t align)
{
    size_t off = HPS_HUGE_HDR;
    if (align > hps_malloc_geo.line) {
        off = (off + align - 1) & ~(align - 1);
    } else if (h && hps_malloc_settings()->colour) {
        off += (size_t)((h->huge_colour * 5u) & (hps_malloc_geo.sets - 1)) << hps_malloc_geo.line_shift;
        h->huge_colour++;
    }
    return off;
}

void *hps_malloc_huge_alloc(hps_malloc_heap_t *h, size_t n, size_t align, int zero)
{
    /* The block must start inside the first segment (free() masks the
     * pointer to find the header): alignments up to half a segment. */
    if (align > HPS_SEG_SIZE / 2 || n > ((size_t)1 << 46))
        return NULL;
    size_t off = block_offset(h, align);
    size_t map = (off + n + HPS_SEG_MASK) & ~(size_t)HPS_SEG_MASK;
    hps_malloc_segment_t *seg = cache_take(map);
    if (seg) {
        /* Backed memory from an earlier block: what lies past this block's
         * end is given back (it would only hold RSS), the rest is reused. */
        uintptr_t end = ((uintptr_t)seg + off + n + 4095) & ~(uintptr_t)4095;
        if (end < (uintptr_t)seg + map)
            hps_malloc_os_purge((void *)end, (uintptr_t)seg + map - end);
        if (zero)
            memset((char *)seg + off, 0, n);
        hps_malloc_owned_set((uintptr_t)seg, 1);
    } else {
        seg = hps_malloc_os_map_aligned(map);         /* fresh: zero already */
        if (!seg)
            return NULL;
    }
    seg->magic = HPS_SEG_MAGIC;
    seg->kind = HPS_SEG_HUGE;
    seg->map_size = map;
    seg->huge_block = (uintptr_t)seg + off;
    seg->huge_size = map - off;
    hps_faa_relaxed(&hps_malloc_huge_bytes, map);
    return (void *)seg->huge_block;
}

void hps_malloc_huge_free(hps_malloc_segment_t *seg)
{
    size_t map = seg->map_size;
    hps_fas_relaxed(&hps_malloc_huge_bytes, map);
    const hps_malloc_settings_t *s = hps_malloc_settings();
    uint32_t now = hps_malloc_os_now_ms();
    if (s->decay_ms == 0 || map > cap_bytes()) {
        hps_malloc_os_unmap(seg, map);
        hps_malloc_huge_tick(now);
        return;
    }
    /* Not ours for free() any more: a second free of it is invalid. */
    hps_malloc_owned_set((uintptr_t)seg, 0);
    seg->kind = HPS_SEG_HUGE_FREE;
    seg->freed_at[0] = now;
    hps_malloc_spin_lock(&cache_lock);
    seg->next = cache_head;
    cache_head = seg;
    cache_bytes += map;
    int over = cache_bytes > cap_bytes();
    uint32_t count = hps_load_relaxed(&cache_count) + 1;
    hps_store_relaxed(&cache_count, count);
    if (count == 1)
        hps_store_relaxed(&cache_due, now + s->decay_ms);
    hps_malloc_spin_unlock(&cache_lock);
    if (over)
        cache_expire(now, s->decay_ms);
    else
        hps_malloc_huge_tick(now);
}

size_t hps_malloc_huge_usable(hps_malloc_segment_t *seg)
{
    return seg->huge_size;
}

void *hps_malloc_huge_resize(hps_malloc_segment_t *seg, size_t n)
{
    size_t off = seg->huge_block - (uintptr_t)seg, old = seg->map_size;
    if (n > ((size_t)1 << 46))
        return NULL;
    size_t map = (off + n + HPS_SEG_MASK) & ~(size_t)HPS_SEG_MASK;
    if (map <= old) {
        /* Shrinking: the pages past the new end hold nothing any more. */
        uintptr_t end = ((uintptr_t)seg + off + n + 4095) & ~(uintptr_t)4095;
        if (end < (uintptr_t)seg + map)
            hps_malloc_os_purge((void *)end, (uintptr_t)seg + map - end);
        if (map < old) {
            int saved = errno;
            munmap((char *)seg + map, old - map);
            errno = saved;
            hps_malloc_count_mapped(-(int64_t)(old - map));
        }
    } else if (!(seg = remap_grow(seg, old, map))) {
        return NULL;
    }
    hps_faa_relaxed(&hps_malloc_huge_bytes, map - old);   /* wraps as a subtraction when shrinking */
    seg->map_size = map;
    seg->huge_size = map - off;
    seg->huge_block = (uintptr_t)seg + off;
    return (void *)seg->huge_block;
}
