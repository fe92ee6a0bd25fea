// SPDX-License-Identifier: MIT
/*
 * The exported malloc surface: what a program gets by preloading
 * libhpsync-malloc.so or linking -lhpsync-malloc.  Results and errno follow
 * glibc 2.36: malloc(0) is a unique pointer, overflow is ENOMEM, a bad
 * posix_memalign alignment is EINVAL, realloc(p, 0) frees and returns NULL,
 * memalign/aligned_alloc round a non-power-of-two alignment up.  malloc and
 * free themselves are aliases defined in alloc.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array_bytes.h"
#include "internal.h"
#include "settings.h"

#define API HPS_EXPORT

static size_t page_size(void)
{
    static size_t ps;
    if (!ps)
        ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

/* glibc's memalign: alignments below 16 need nothing, others round up to a power of two. */
static void *memalign_glibc(size_t align, size_t n)
{
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    if (align & (align - 1))
        align = (size_t)1 << (64 - __builtin_clzll(align));
    return hps_malloc_aligned(align, n);
}

API void *realloc(void *p, size_t n) { return hps_malloc_realloc(p, n); }
API size_t malloc_usable_size(void *p) { return hps_malloc_usable_size(p); }
API void *memalign(size_t align, size_t n) { return memalign_glibc(align, n); }
API void *aligned_alloc(size_t align, size_t n) { return memalign_glibc(align, n); }
API void *valloc(size_t n) { return hps_malloc_aligned(page_size(), n); }

API void *calloc(size_t count, size_t size)
{
    size_t n;
    if (hps_malloc_array_bytes(count, size, &n))
        return NULL;
    return hps_malloc_calloc(n);
}

API void *reallocarray(void *p, size_t count, size_t size)
{
    size_t n;
    if (hps_malloc_array_bytes(count, size, &n))
        return NULL;
    return hps_malloc_realloc(p, n);
}

API int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = hps_malloc_aligned(align, n);
    if (!p)
        return ENOMEM;          /* errno is ENOMEM too, as with glibc */
    *out = p;
    return 0;
}

API void *pvalloc(size_t n)
{
    size_t ps = page_size(), r;
    if (__builtin_add_overflow(n, ps - 1, &r)) {
        errno = ENOMEM;
        return NULL;
    }
    r &= ~(ps - 1);
    return hps_malloc_aligned(ps, r ? r : ps);
}

/* C23; glibc 2.36 does not have them yet, programs built for newer libcs call them. */
API void free_sized(void *p, size_t n) { (void)n; hps_malloc_free(p); }
API void free_aligned_sized(void *p, size_t align, size_t n) { (void)align, (void)n; hps_malloc_free(p); }

/* The __libc_* names: some programs and libraries call glibc's allocator by
 * these; they must reach the same heap as malloc/free. */
API void *__libc_calloc(size_t c, size_t s) { return calloc(c, s); }
API void *__libc_realloc(void *p, size_t n) { return hps_malloc_realloc(p, n); }
API void *__libc_memalign(size_t a, size_t n) { return memalign_glibc(a, n); }
API void *__libc_valloc(size_t n) { return valloc(n); }
API void *__libc_pvalloc(size_t n) { return pvalloc(n); }
API int __posix_memalign(void **out, size_t a, size_t n) { return posix_memalign(out, a, n); }

/* ---- glibc's introspection calls, answered from our own figures ---------- */

API struct mallinfo2 mallinfo2(void)
{
    if (!hps_load_acquire(&hps_malloc_ready))
        hps_malloc_init_slow();
    hps_malloc_totals_t t;
    hps_malloc_totals(&t);
    struct mallinfo2 m = { 0 };
    m.arena = t.mapped - t.huge;            /* segments for small blocks */
    m.hblks = 0;
    m.hblkhd = t.huge;                      /* huge blocks' mappings */
    m.uordblks = t.in_use > t.huge ? t.in_use - t.huge : 0;
    m.fordblks = m.arena > m.uordblks ? m.arena - m.uordblks : 0;
    m.usmblks = (size_t)hps_load_relaxed(&hps_malloc_mapped_peak);
    m.keepcost = 0;
    return m;
}

static int clamp_int(size_t v) { return v > 0x7fffffff ? 0x7fffffff : (int)v; }

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
API struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo m = { 0 };
    m.arena = clamp_int(m2.arena);
    m.hblkhd = clamp_int(m2.hblkhd);
    m.uordblks = clamp_int(m2.uordblks);
    m.fordblks = clamp_int(m2.fordblks);
    m.usmblks = clamp_int(m2.usmblks);
    return m;
}
API struct mallinfo __libc_mallinfo(void) { return mallinfo(); }

API int malloc_trim(size_t pad)
{
    (void)pad;
    if (!hps_load_acquire(&hps_malloc_ready))
        return 0;
    size_t freed = 0;
    hps_malloc_heap_t *h = hps_malloc_tls_heap;
    if (h) {
        freed += hps_malloc_heap_drop_spares(h);
        freed += hps_malloc_heap_shrink(h, 0);
    }
    freed += hps_malloc_heaps_parked_trim();
    freed += hps_malloc_span_trim();
    freed += hps_malloc_segment_cache_trim();
    freed += hps_malloc_huge_cache_trim();
    return freed != 0;
}

API int mallopt(int param, int value)
{
    (void)value;
    /* glibc's parameters are accepted (and have no effect here); unknown ones fail as in glibc. */
    switch (param) {
    case M_MXFAST: case M_TRIM_THRESHOLD: case M_TOP_PAD: case M_MMAP_THRESHOLD:
    case M_MMAP_MAX: case M_CHECK_ACTION: case M_PERTURB: case M_ARENA_TEST: case M_ARENA_MAX:
        return 1;
    default:
        return 0;
    }
}
API int __libc_mallopt(int param, int value) { return mallopt(param, value); }

API void malloc_stats(void)
{
    if (!hps_load_acquire(&hps_malloc_ready))
        hps_malloc_init_slow();
    hps_malloc_stats_print(2);
}

API int malloc_info(int options, FILE *fp)
{
    if (options != 0) {
        errno = EINVAL;
        return -1;
    }
    hps_malloc_totals_t t;
    hps_malloc_totals(&t);
    fprintf(fp, "<malloc version=\"hpsync-1\">\n<total type=\"mapped\" size=\"%zu\"/>\n"
                "<total type=\"huge\" size=\"%zu\"/>\n<total type=\"in_use\" size=\"%zu\"/>\n</malloc>\n",
            t.mapped, t.huge, t.in_use);
    return 0;
}

/* ---- process hooks --------------------------------------------------------- */

static void fork_prepare(void) { hps_malloc_fork_lock(); }
static void fork_parent(void) { hps_malloc_fork_unlock(0); }
static void fork_child(void) { hps_malloc_fork_unlock(1); }

__attribute__((constructor)) static void hps_malloc_ctor(void)
{
    if (!hps_load_acquire(&hps_malloc_ready))
        hps_malloc_init_slow();
    /* The first malloc may have come before libc set environ. */
    hps_malloc_settings_load();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

__attribute__((destructor)) static void hps_malloc_dtor(void)
{
    if (hps_malloc_settings()->stats)
        hps_malloc_stats_print(2);
}
