// SPDX-License-Identifier: MIT
/*
 * Cache geometry and size classes.
 *
 * Classes below one line are multiples of 16 bytes (they live in
 * thread-private pages, so a line never mixes two threads' blocks).  From one
 * line up every class is an ODD number of lines: with a power-of-two number
 * of L1 sets S, block i of a page starts in set (c + i*k) mod S, and for odd k
 * these are all different for S consecutive blocks.  Allocators that use
 * power-of-two strides (1 KiB, 2 KiB, ...) put every block on the same few
 * sets instead.  Odd lines 1..17, then 8 classes per doubling (each rounded
 * up to odd), so internal waste stays under one line plus 1/8.  The run of
 * odd lines goes to 17 because the doubling from 16 lines starts at 18 | 1:
 * without 17 a request of 16 lines (1 KiB, a common size) would take 19, 3
 * lines more, where every larger power of two p has its class p + 1 (the
 * previous doubling's last).  Fewer bytes per block is fewer pages per
 * block too, and a walk over many blocks pays per page in the data TLB.
 */
#define _GNU_SOURCE
#include "internal.h"

hps_malloc_geometry_t hps_malloc_geo = { 64, 64, 6, "default" };
uint32_t hps_malloc_class_size[HPS_MAX_CLASSES];
uint8_t hps_malloc_class_slots[HPS_MAX_CLASSES];
uint32_t hps_malloc_nclasses;
uint8_t hps_malloc_class_by16[1024 / 16 + 1];

/* Class by size in lines, for requests above 1 KiB (up to HPS_MAX_SMALL / 16-byte lines). */
static uint8_t class_by_line[HPS_MAX_SMALL / 16 + 2];

static void add_class(uint32_t size)
{
    if (hps_malloc_nclasses && hps_malloc_class_size[hps_malloc_nclasses - 1] >= size)
        return;
    hps_malloc_class_size[hps_malloc_nclasses++] = size;
}

static uint32_t slots_for(uint32_t size)
{
    size_t want = (size_t)size * HPS_MIN_BLOCKS;
    size_t slots = (want + HPS_SLOT_SIZE - 1) / HPS_SLOT_SIZE;
    return slots ? (uint32_t)slots : 1;
}

void hps_malloc_classes_init(uint32_t line, uint32_t sets, const char *source)
{
    hps_malloc_geo.line = line;
    hps_malloc_geo.sets = sets;
    hps_malloc_geo.line_shift = (uint32_t)__builtin_ctz(line);
    hps_malloc_geo.source = source;
    hps_malloc_nclasses = 0;
    for (uint32_t s = HPS_MIN_ALIGN; s < line; s += HPS_MIN_ALIGN)
        add_class(s);
    uint32_t max_lines = HPS_MAX_SMALL / line;
    for (uint32_t k = 1; k <= 17 && k <= max_lines; k += 2)
        add_class(k * line);
    for (uint32_t base = 16; base < max_lines; base *= 2)
        for (uint32_t j = 1; j <= 8; j++) {
            uint32_t l = base + j * (base / 8);
            add_class((l | 1) * line);       /* round up to odd */
        }
    /* Every request up to HPS_MAX_SMALL must have a class. */
    if (hps_malloc_class_size[hps_malloc_nclasses - 1] < HPS_MAX_SMALL)
        add_class(((HPS_MAX_SMALL / line) | 1) * line);
    for (uint32_t c = 0; c < hps_malloc_nclasses; c++)
        hps_malloc_class_slots[c] = (uint8_t)slots_for(hps_malloc_class_size[c]);

    uint32_t c = 0;
    for (uint32_t i = 0; i <= 1024 / 16; i++) {
        size_t n = i ? (size_t)i * 16 : 1;
        while (hps_malloc_class_size[c] < n)
            c++;
        hps_malloc_class_by16[i] = (uint8_t)c;
    }
    c = 0;
    for (uint32_t l = 0; l <= max_lines + 1 && l < sizeof class_by_line; l++) {
        size_t n = l ? (size_t)l * line : 1;
        while (c + 1 < hps_malloc_nclasses && hps_malloc_class_size[c] < n)
            c++;
        class_by_line[l] = (uint8_t)c;
    }
}

uint32_t hps_malloc_class_large(size_t n)
{
    return class_by_line[(n + hps_malloc_geo.line - 1) >> hps_malloc_geo.line_shift];
}
