/* SPDX-License-Identifier: MIT */
/*
 * map.h - page mappings: aligned placement, release, purge.
 *
 * Promise: hps_map_aligned() returns a read-write mapping of `size` bytes
 * at an address p with p + lead a multiple of `align` (a power of two, at
 * least a page; lead below align), or NULL with errno set.  The kernel
 * aligns a mapping to a page only, so the call over-reserves size + align
 * bytes of address space and gives back the unused ends at once: the
 * extra is address space only, never memory, and never outlives the call.
 * Anonymous mappings (fd < 0) are made read-write directly; a file or
 * shared-memory object is mapped MAP_FIXED over a PROT_NONE reservation.
 * Header-only (static inline): each library that maps pages gets its own
 * copy and no symbol is shared between them.
 */
#ifndef HPS_PRIM_MAP_H
#define HPS_PRIM_MAP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

static inline void *hps_map_aligned(size_t size, size_t align, size_t lead, int flags, int fd)
{
    size_t span = size + align;
    if (span < size) {
        errno = ENOMEM;
        return NULL;
    }
    int anon = fd < 0;
    char *r = mmap(NULL, span, anon ? PROT_READ | PROT_WRITE : PROT_NONE,
                   anon ? flags : MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    char *p = (char *)((((uintptr_t)r + lead + align - 1) & ~(uintptr_t)(align - 1)) - lead);
    if (!anon && mmap(p, size, PROT_READ | PROT_WRITE, flags | MAP_FIXED, fd, 0) == MAP_FAILED) {
        int e = errno;
        munmap(r, span);
        errno = e;
        return NULL;
    }
    if (p > r)
        munmap(r, (size_t)(p - r));
    if (r + span > p + size)
        munmap(p + size, (size_t)(r + span - (p + size)));
    return p;
}

/* Give a mapping back; errno is kept, so callers on malloc's paths (which
 * must not change errno on success) need not save it. */
static inline void hps_map_release(void *p, size_t size)
{
    int saved = errno;
    munmap(p, size);
    errno = saved;
}

/* Drop the pages' contents and memory, keep the range mapped (it reads back
 * as zeros): DONTNEED, not FREE, so RSS falls at once.  errno is kept. */
static inline void hps_map_purge(void *p, size_t size)
{
    int saved = errno;
    madvise(p, size, MADV_DONTNEED);
    errno = saved;
}

#endif
