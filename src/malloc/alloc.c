// SPDX-License-Identifier: MIT
/*
 * The allocator's core: initialisation, malloc/free fast paths, aligned
 * allocation, realloc, usable size, and the checks on every free.
 *
 * Fast path budget: malloc is a TLS load, a class-table load, two loads and
 * two stores on the class's hot page; free is a range compare for the
 * region, the page descriptor by arithmetic, one compare for "inside the
 * handed-out part", one multiply to confirm a block boundary, the
 * double-free cookie, the owner, and four stores (link, cookie, list head,
 * hot page).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "geometry.h"
#include "internal.h"
#include "settings.h"

_Atomic uint32_t hps_malloc_ready;
uintptr_t hps_malloc_cookie_key;

void hps_malloc_init_slow(void)
{
    static hps_malloc_spin_t init_lock;
    hps_malloc_spin_lock(&init_lock);
    if (!hps_load_relaxed(&hps_malloc_ready)) {
        hps_malloc_settings_load();
        uint32_t line, sets;
        const char *src = hps_malloc_geometry_detect(&line, &sets);
        const hps_malloc_settings_t *s = hps_malloc_settings();
        if (s->line || s->sets) {
            uint32_t l = s->line ? s->line : line, n = s->sets ? s->sets : sets;
            if (hps_malloc_geometry_valid(l, n)) {
                line = l;
                sets = n;
                src = "setting";
            } else {
                hps_malloc_report("HPSYNC_MALLOC_LINE/HPSYNC_MALLOC_SETS need powers of two "
                           "(line 16..256); using the machine's geometry", NULL);
            }
        }
        hps_malloc_classes_init(line, sets, src);
        /* The kernel's 16 random bytes for this process (no allocation, any
         * architecture), mixed with an address and the pid. */
        uint64_t seed = 0;
        const void *rnd = (const void *)getauxval(AT_RANDOM);
        if (rnd)
            memcpy(&seed, rnd, sizeof seed);
        hps_malloc_cookie_key = (seed * 0x9e3779b97f4a7c15ull) ^ (uintptr_t)&init_lock ^
                         ((uintptr_t)getpid() << 40) ^ 1;
        hps_malloc_heap_global_init();
        /* Release: a thread that sees ready sees the classes and the key. */
        hps_store_release(&hps_malloc_ready, 1);
    }
    hps_malloc_spin_unlock(&init_lock);
}

static int check_on(void)
{
    return hps_malloc_settings()->check;
}

HPS_INLINE void *alloc_small(hps_malloc_heap_t *h, size_t n)
{
    uint32_t cls = hps_malloc_class_of(n);
    hps_malloc_page_t *pg = h->hot[cls];
    if (hps_likely(pg != NULL && pg->free != NULL))
        return hps_malloc_page_pop(pg);
    return hps_malloc_heap_refill(h, cls);
}

static __attribute__((noinline)) void *malloc_slow(size_t n)
{
    if (hps_unlikely(!hps_load_acquire(&hps_malloc_ready)))
        hps_malloc_init_slow();
    hps_malloc_heap_t *h = hps_malloc_heap_get();
    void *p = NULL;
    if (h && n <= HPS_MAX_SMALL) {
        p = alloc_small(h, n);
    } else if (n <= (size_t)PTRDIFF_MAX) {
        p = hps_malloc_big_alloc(h, n, 0, 0);
    }
    if (!p)
        errno = ENOMEM;
    return p;
}

void *hps_malloc_calloc(size_t n)
{
    if (n <= HPS_MAX_SMALL) {
        void *p = hps_malloc(n);
        if (p)
            memset(p, 0, n);
        return p;
    }
    /* Spans and huge blocks zero only what may hold old data. */
    if (hps_unlikely(!hps_load_acquire(&hps_malloc_ready)))
        hps_malloc_init_slow();
    void *p = n <= (size_t)PTRDIFF_MAX ? hps_malloc_big_alloc(hps_malloc_heap_get(), n, 0, 1) : NULL;
    if (!p)
        errno = ENOMEM;
    return p;
}

static __attribute__((noinline)) void *malloc_refill(hps_malloc_heap_t *h, uint32_t cls)
{
    void *p = hps_malloc_heap_refill(h, cls);
    if (!p)
        errno = ENOMEM;
    return p;
}

void *hps_malloc(size_t n)
{
    /* A leaf on the fast path: every other case is a tail call, so no
     * registers are saved and no frame is built. */
    hps_malloc_heap_t *h = hps_malloc_tls_heap;
    if (hps_unlikely(h == NULL || n > 1024))
        return malloc_slow(n);
    uint32_t cls = hps_malloc_class_of(n);          /* n <= 1024: the table alone */
    hps_malloc_page_t *pg = h->hot[cls];
    if (hps_unlikely(pg == NULL || pg->free == NULL))
        return malloc_refill(h, cls);
    return hps_malloc_page_pop(pg);
}

/* Where p's block starts, or 0 if p is not a live-looking block pointer of
 * ours.  *pgp and *segp receive the page and segment. */
static uintptr_t block_of(const void *p, hps_malloc_segment_t **segp, hps_malloc_page_t **pgp)
{
    hps_malloc_segment_t *seg = hps_malloc_segment_of(p);
    if (hps_unlikely(!hps_malloc_owned((uintptr_t)seg)))
        return 0;
    *segp = seg;
    if (hps_unlikely(seg->kind != HPS_SEG_SMALL)) {
        *pgp = NULL;
        return seg->kind == HPS_SEG_HUGE && (uintptr_t)p == seg->huge_block ? (uintptr_t)p : 0;
    }
    hps_malloc_page_t *pg = hps_malloc_page_of(seg, p);
    *pgp = pg;
    uintptr_t a = (uintptr_t)p;
    if (hps_unlikely(!pg->slots || a < pg->start || a >= (uintptr_t)pg->bump_end))
        return 0;
    uintptr_t off = a - pg->start;
    uint64_t idx = (uint64_t)(((unsigned __int128)off * pg->div_mul) >> 64);
    uintptr_t start = pg->start + (uintptr_t)idx * pg->block_size;
    if (hps_unlikely(start != a) && !pg->aligned)
        return 0;
    return start;
}

static __attribute__((noinline, cold)) void bad_free(const char *what, const void *p)
{
    if (check_on())
        hps_malloc_report(what, p);
}

/* A local free that emptied its page or landed on a full one. */
static __attribute__((noinline)) void free_local_page(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    if (hps_malloc_page_live(pg) == 0)
        hps_malloc_heap_page_empty(h, pg);
    else
        hps_malloc_heap_page_unfull(h, pg);
}

/* The owner frees block b of pg; mark is the block's free cookie. */
HPS_INLINE void free_local(hps_malloc_heap_t *h, hps_malloc_page_t *pg, hps_malloc_block_t *b, uintptr_t mark)
{
    b->next = pg->free;
    b->cookie = mark;
    pg->free = b;
    h->hot[pg->cls] = pg;
    if (hps_unlikely(hps_malloc_page_freed_slow(hps_malloc_page_used_add(pg, (uint32_t)-1))))
        free_local_page(h, pg);
}

/* Everything free() does off its fast path: NULL, foreign pointers, huge
 * blocks, interior pointers of aligned blocks, double frees, frees from
 * another thread, and a page that empties or leaves the full list. */
static __attribute__((noinline)) void free_slow(void *p)
{
    if (p == NULL)
        return;
    hps_malloc_segment_t *seg;
    hps_malloc_page_t *pg;
    uintptr_t start = block_of(p, &seg, &pg);
    if (hps_unlikely(start == 0)) {
        bad_free("invalid free: pointer not allocated by hpsync-malloc (ignored)", p);
        return;
    }
    if (pg == NULL) {
        hps_malloc_huge_free(seg);
        return;
    }
    if (pg->cls == HPS_SPAN_CLS) {
        if (!hps_malloc_span_free(pg, start))
            bad_free("invalid free: pointer not allocated by hpsync-malloc (ignored)", p);
        return;
    }
    hps_malloc_block_t *b = (hps_malloc_block_t *)start;
    if (b->cookie == (start ^ hps_malloc_cookie_key)) {
        bad_free("double free (ignored)", p);
        return;
    }
    hps_malloc_heap_t *h = hps_malloc_tls_heap;
    if (h == NULL || hps_load_relaxed(&pg->heap) != h) {
        hps_malloc_remote_free(seg, pg, b);
        return;
    }
    if (start >= (uintptr_t)pg->bump) {
        bad_free("invalid free: block was never allocated (ignored)", p);
        return;
    }
    free_local(h, pg, b, start ^ hps_malloc_cookie_key);
}

void hps_malloc_free(void *p)
{
    /* The fast path: a small block in the region (whose headers are always
     * readable: released and never-used segments read as zero or as a
     * segment owned by nobody), at a block boundary, not marked free, and
     * freed by its owner.  Everything else, foreign pointers included, goes
     * to free_slow. */
    if (hps_likely(hps_malloc_in_region(p))) {
        /* The descriptor at p's own slot, without the slot_page lookup: it
         * is the page's when p lies in a page's first slot.  The other
         * slots of a multi-slot page (classes over 8 KiB) hold an empty
         * range, so those blocks go to free_slow, which looks the page up. */
        hps_malloc_segment_t *seg = hps_malloc_segment_of(p);
        hps_malloc_page_t *pg = &seg->pages[((uintptr_t)p - (uintptr_t)seg) >> HPS_SLOT_SHIFT];
        uintptr_t start = pg->start, off = (uintptr_t)p - start;
        hps_malloc_block_t *b = p;
        /* One compare for "handed out before": p in [start, bump) (below
         * start, off wraps; retired, never-used and continuation slots have
         * bump == start).  Then a block boundary: off is a multiple of the
         * block size iff off * ceil(2^64 / size) mod 2^64 < ceil(2^64 /
         * size), for off < 2^32 (Lemire, Kaser & Kurz 2019). */
        if (hps_likely(off < (uintptr_t)pg->bump - start && off * pg->div_mul < pg->div_mul)) {
            uintptr_t mark = (uintptr_t)p ^ hps_malloc_cookie_key;
            hps_malloc_heap_t *h = hps_malloc_tls_heap;
            if (hps_likely(b->cookie != mark &&
                           hps_load_relaxed(&pg->heap) == h)) {
                free_local(h, pg, b, mark);
                return;
            }
        }
    }
    free_slow(p);
}

size_t hps_malloc_usable_size(const void *p)
{
    if (!p)
        return 0;
    hps_malloc_segment_t *seg;
    hps_malloc_page_t *pg;
    uintptr_t start = block_of(p, &seg, &pg);
    if (!start)
        return 0;
    if (!pg)
        return hps_malloc_huge_usable(seg);
    return pg->block_size - ((uintptr_t)p - start);
}

void *hps_malloc_aligned(size_t align, size_t n)
{
    if (align <= HPS_MIN_ALIGN)
        return hps_malloc(n);
    if (hps_unlikely(!hps_load_acquire(&hps_malloc_ready)))
        hps_malloc_init_slow();
    hps_malloc_heap_t *h = hps_malloc_heap_get();
    size_t line = hps_malloc_geo.line;
    void *p = NULL;
    if (h && align <= line && n <= HPS_MAX_SMALL) {
        /* Classes of a line or more are line-aligned. */
        p = alloc_small(h, n < line ? line : n);
    } else if (h && align <= HPS_SLOT_SIZE && n <= HPS_MAX_SMALL - align) {
        /* A line-aligned block with room to slide to the alignment; free()
         * finds the block from the interior pointer on pages marked aligned.
         * At least one byte: a zero-byte request could slide to the block's
         * end, which is the next block. */
        void *b = alloc_small(h, (n ? n : 1) + align - line);
        if (b) {
            uintptr_t a = ((uintptr_t)b + align - 1) & ~(uintptr_t)(align - 1);
            if (a != (uintptr_t)b)
                hps_malloc_page_of(hps_malloc_segment_of(b), b)->aligned = 1;
            p = (void *)a;
        }
    } else if (n <= (size_t)PTRDIFF_MAX) {
        p = hps_malloc_big_alloc(h, n, align, 0);
    }
    if (!p)
        errno = ENOMEM;
    return p;
}

void *hps_malloc_realloc(void *p, size_t n)
{
    if (!p)
        return hps_malloc(n);
    if (n == 0) {                      /* glibc frees and returns NULL */
        hps_malloc_free(p);
        return NULL;
    }
    size_t old = hps_malloc_usable_size(p);
    if (old == 0) {
        bad_free("invalid realloc: pointer not allocated by hpsync-malloc", p);
        errno = EINVAL;
        return NULL;
    }
    /* Stay in place when the block fits and would not waste over half. */
    if (n <= old && n >= old / 2)
        return p;
    if (n > HPS_MAX_SMALL) {
        /* A span grows or shrinks in place when the slots are there; a
         * huge block is moved by the kernel. */
        hps_malloc_segment_t *seg;
        hps_malloc_page_t *pg;
        uintptr_t start = block_of(p, &seg, &pg);
        if (pg && pg->cls == HPS_SPAN_CLS && start == (uintptr_t)p && hps_malloc_span_resize(pg, start, n))
            return p;
        /* Above half a segment; a smaller block packs better as a span. */
        if (!pg && n > HPS_SEG_SIZE / 2) {
            void *q = hps_malloc_huge_resize(seg, n);
            if (q)
                return q;
        }
    }
    void *q = hps_malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, n < old ? n : old);
    hps_malloc_free(p);
    return q;
}

/* The exported names are aliases, not wrappers: no extra call on the
 * fast paths. */
HPS_EXPORT void *malloc(size_t n) __attribute__((alias("hps_malloc")));
HPS_EXPORT void free(void *p) __attribute__((alias("hps_malloc_free")));
HPS_EXPORT void *__libc_malloc(size_t n) __attribute__((alias("hps_malloc")));
HPS_EXPORT void __libc_free(void *p) __attribute__((alias("hps_malloc_free")));
