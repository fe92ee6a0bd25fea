// SPDX-License-Identifier: MIT
/*
 * Huge blocks (above HPS_MAX_SMALL): a segment-aligned mapping each, so
 * free() finds the header with the same mask as for small blocks.  The
 * block starts after an 8 KiB header at a rotating line offset: mappings
 * are page-aligned, and without the offset every huge block's first lines
 * would land on the same L1 sets.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "settings.h"

void *hps_huge_alloc(hps_heap_t *h, size_t n, size_t align)
{
    /* The block must start inside the first segment (free() masks the
     * pointer to find the header): alignments up to half a segment. */
    if (align > HPS_SEG_SIZE / 2 || n > ((size_t)1 << 46))
        return NULL;
    size_t off = HPS_HUGE_HDR;
    if (align > hps_geo.line) {
        off = (off + align - 1) & ~(align - 1);
    } else if (h && hps_malloc_settings()->colour) {
        off += (size_t)((h->huge_colour * 5u) & (hps_geo.sets - 1)) << hps_geo.line_shift;
        h->huge_colour++;
    }
    size_t map = (off + n + HPS_SEG_MASK) & ~(size_t)HPS_SEG_MASK;
    hps_segment_t *seg = hps_os_map_aligned(map);
    if (!seg)
        return NULL;
    seg->magic = HPS_SEG_MAGIC;
    seg->kind = HPS_SEG_HUGE;
    seg->map_size = map;
    seg->huge_block = (uintptr_t)seg + off;
    seg->huge_size = map - off;
    hps_faa_relaxed(&hps_huge_bytes, map);
    return (void *)seg->huge_block;
}

void hps_huge_free(hps_segment_t *seg)
{
    size_t map = seg->map_size;
    atomic_fetch_sub_explicit(&hps_huge_bytes, map, memory_order_relaxed);
    hps_os_unmap(seg, map);
}

size_t hps_huge_usable(hps_segment_t *seg)
{
    return seg->huge_size;
}
