// SPDX-License-Identifier: MIT
/*
 * OS memory for the allocator: segment-aligned mappings, purging, and the
 * ownership map that lets free() tell our pointers from foreign ones before
 * it reads any header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include "internal.h"
#include "../prim/map.h"

_Atomic uint64_t hps_malloc_mapped_bytes, hps_malloc_mapped_peak, hps_malloc_huge_bytes;

/* One bit per 8 MiB segment of the 47-bit user address space: 2^24 bits,
 * a 2 MiB array in .bss.  Untouched pages of it read as the shared zero page and
 * cost no memory; only the words covering segments we own get written. */
_Atomic uint64_t hps_malloc_owned_bits[HPS_OWNED_BITS / 64];

void hps_malloc_owned_set(uintptr_t seg, int on)
{
    uintptr_t i = seg >> HPS_SEG_SHIFT;
    if (i >= HPS_OWNED_BITS)
        return;
    uint64_t bit = (uint64_t)1 << (i & 63);
    if (on)
        hps_fetch_or_release(&hps_malloc_owned_bits[i >> 6], bit);
    else
        hps_fetch_and_release(&hps_malloc_owned_bits[i >> 6], ~bit);
}

void hps_malloc_count_mapped(int64_t delta)
{
    uint64_t now = hps_faa_relaxed(&hps_malloc_mapped_bytes, (uint64_t)delta) + (uint64_t)delta;
    uint64_t peak = hps_load_relaxed(&hps_malloc_mapped_peak);
    while (now > peak && !hps_cas_weak_relaxed(&hps_malloc_mapped_peak, &peak, now))
        ;
}

void *hps_malloc_os_map_aligned(size_t size)
{
    size = (size + HPS_SEG_MASK) & ~(size_t)HPS_SEG_MASK;
    if (size == 0 || size > ((size_t)1 << 46))
        return NULL;
    int saved = errno;
    void *a = hps_map_aligned(size, HPS_SEG_SIZE, 0, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
    if (!a) {
        errno = saved;
        return NULL;
    }
    hps_malloc_owned_set((uintptr_t)a, 1);
    hps_malloc_count_mapped((int64_t)size);
    return a;
}

void hps_malloc_os_unmap(void *p, size_t size)
{
    hps_malloc_owned_set((uintptr_t)p, 0);
    hps_map_release(p, size);
    hps_malloc_count_mapped(-(int64_t)size);
}

int hps_malloc_region_reserve(void)
{
    /* NORESERVE: the 64 GiB cost nothing until touched.  Where the address
     * is taken, the kernel is too old for FIXED_NOREPLACE (it then maps
     * elsewhere) or overcommit is strict, segments come from mmap one by
     * one and free() takes its slower path for them. */
    void *p = mmap((void *)HPS_REGION_BASE, HPS_REGION_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == (void *)HPS_REGION_BASE)
        return 1;
    if (p != MAP_FAILED)
        munmap(p, HPS_REGION_SIZE);
    return 0;
}

void hps_malloc_os_purge(void *p, size_t size)
{
    /* DONTNEED, not FREE: RSS drops at once, which is what a user who freed
     * a lot expects to see; the range stays mapped and reads back as zero. */
    hps_map_purge(p, size);
}

uint32_t hps_malloc_os_now_ms(void)
{
    /* Coarse: read from the vDSO without a syscall or a TSC read, with the
     * kernel tick's resolution (1-4 ms), enough for a decay in milliseconds. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

void hps_malloc_spin_lock(hps_malloc_spin_t *l)
{
    for (unsigned n = 0;; n++) {
        uint32_t e = 0;
        if (hps_load_relaxed(l) == 0 && hps_cas_acquire(l, &e, 1))
            return;
        if (n < 64)
            hps_cpu_relax();
        else
            sched_yield();   /* the holder may be preempted on an oversubscribed machine */
    }
}
