// SPDX-License-Identifier: MIT
/*
 * shmem_align: the address each PE sees is aligned, for every power of two
 * up to the heap size (rounded up), and the block is symmetric (the same offset on every
 * PE, checked by comparing each PE's distance to an object allocated first,
 * and by moving data through it); then a long random mix of shmem_malloc,
 * shmem_align, shmem_realloc and shmem_free (the same sequence on every PE)
 * checking alignment, symmetry and contents after every step.  Sizes and
 * alignments scale with the heap, so the run under a 1 MiB heap checks the
 * same things.
 */
#include <stdint.h>
#include <string.h>
#include "shtest.h"

static int me, n, right, left;
static char *g_ref;             /* the first object: offsets are measured from it */
static long *g_offs;            /* every PE's offset, gathered */

/* p is symmetric: its distance from g_ref is the same on every PE. */
static void check_symmetric(const void *p, const char *what, size_t align)
{
    static long off;
    off = (long)((const char *)p - g_ref);
    shmem_long_fcollect(SHMEM_TEAM_WORLD, g_offs, &off, 1);
    for (int pe = 0; pe < n; pe++)
        T_CHECK(g_offs[pe] == off, "%s (alignment %zu): offset %ld on PE %d, %ld here", what,
                align, g_offs[pe], pe, off);
}

static void check_aligned(const void *p, size_t align, const char *what)
{
    T_CHECK(p && ((uintptr_t)p & (align - 1)) == 0, "%s: %p is not aligned to %zu", what, p,
            align);
}

/* Bytes of an object filled by the left neighbour with a pattern of its
 * own and of a tag no earlier fill used, so stale bytes never pass; the
 * first and last 64 (or all) are checked.  A block whose offset differs
 * between neighbours fails this check too. */
static unsigned char pat(int pe, int tag, size_t i)
{
    return (unsigned char)(pe * 31 + tag * 7 + i + (i >> 8));
}

static int g_tag;               /* the same sequence of tags on every PE */

static void fill_right(char *p, size_t size, int tag)
{
    static unsigned char buf[1 << 16];
    for (size_t at = 0; at < size; at += sizeof buf) {
        size_t k = size - at < sizeof buf ? size - at : sizeof buf;
        for (size_t i = 0; i < k; i++)
            buf[i] = pat(me, tag, at + i);
        shmem_putmem(p + at, buf, k, right);
    }
}

static void check_filled(const char *p, size_t size, int tag, const char *what)
{
    for (size_t i = 0; i < size; i++) {
        if (i == 64 && size > 128)
            i = size - 64;
        T_CHECK((unsigned char)p[i] == pat(left, tag, i), "%s: byte %zu of %zu", what, i, size);
    }
}

/* The heap size rounded up to a power of two. */
static size_t heap_top(size_t heap)
{
    size_t top = 8;
    while (top < heap)
        top <<= 1;
    return top;
}

/* The largest alignment, the heap size rounded up: only the heap's first
 * byte can have it, so it is tried on an empty heap, and symmetry is
 * checked by the data moved through it. */
static void largest(size_t heap)
{
    size_t top = heap_top(heap);
    char *p = shmem_align(top, 64);
    check_aligned(p, top, "shmem_align to the heap size on an empty heap");
    int tag = ++g_tag;
    fill_right(p, 64, tag);
    shmem_barrier_all();
    check_filled(p, 64, tag, "data through a block aligned to the heap size");
    shmem_free(p);
}

/* Every power of two from 8 to half the heap size rounded up, with a small
 * block and a block as large as the alignment (where it fits), while a
 * small object and the previous blocks' frees keep the heap from starting
 * aligned. */
static void sweep(size_t heap)
{
    size_t top = heap_top(heap);
    char *pad = shmem_malloc(100);
    for (size_t align = 8; align <= top / 2; align <<= 1) {
        size_t sizes[2] = { 64, align <= heap / 4 ? align : 64 };
        for (int k = 0; k < 2; k++) {
            char *p = shmem_align(align, sizes[k]);
            check_aligned(p, align, "shmem_align");
            check_symmetric(p, "shmem_align", align);
            int tag = ++g_tag;
            fill_right(p, sizes[k], tag);
            shmem_barrier_all();
            check_filled(p, sizes[k], tag, "data through an aligned block");
            /* The peers' views (shmem_ptr) keep the alignment too. */
            for (int pe = 0; pe < n; pe++) {
                char *q = shmem_ptr(p, pe);
                T_CHECK(!q || ((uintptr_t)q & (align - 1)) == 0,
                        "shmem_ptr(PE %d) of a block aligned to %zu: %p", pe, align, (void *)q);
            }
            shmem_free(p);
        }
        /* Grow the padding so the next round starts elsewhere. */
        pad = shmem_realloc(pad, 100 + align % 4096);
    }
    shmem_free(pad);
}

/* The same pseudo-random sequence on every PE (xorshift from a fixed seed). */
static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(uint64_t below)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng % below;
}

/* Live objects of the random mix. */
#define NOBJ 16
typedef struct obj {
    char *p;
    size_t size, align;         /* align: what it was allocated with */
    int tag;                    /* of its contents */
} obj_t;

static void mix(size_t heap)
{
    enum { STEPS = 150 };
    obj_t o[NOBJ] = { { 0 } };
    size_t top = heap_top(heap);
    /* Alignments up to 1/64 of the heap and sizes up to 1/256, with at most
     * NOBJ live: an aligned place is always free. */
    int max_log = 3;
    while (((size_t)1 << (max_log + 1)) <= top / 64)
        max_log++;
    for (int step = 0; step < STEPS; step++) {
        int k = (int)rnd(NOBJ), op = (int)rnd(4);
        size_t scale[4] = { 64, 4096, 65536, heap / 256 };
        size_t size = 1 + rnd(scale[rnd(4)]);
        size_t align = (size_t)1 << (3 + rnd((uint64_t)max_log - 2));
        obj_t *x = &o[k];
        const char *what;
        if (!x->p || op >= 2) {
            if (x->p)
                shmem_free(x->p);
            if (op % 2) {
                x->p = shmem_malloc(size), x->align = 8, what = "shmem_malloc";
            } else {
                x->p = shmem_align(align, size), x->align = align, what = "shmem_align";
            }
            x->size = size;
        } else if (op == 0) {
            shmem_free(x->p);
            x->p = NULL;
            continue;
        } else {
            /* Contents up to the smaller size survive; alignment is what
             * shmem_malloc promises (8), as for realloc. */
            char *p = shmem_realloc(x->p, size);
            size_t keep = size < x->size ? size : x->size;
            check_filled(p, keep, x->tag, "contents kept by shmem_realloc");
            x->p = p, x->size = size, x->align = 8, what = "shmem_realloc";
        }
        check_aligned(x->p, x->align, what);
        check_symmetric(x->p, what, x->align);
        x->tag = ++g_tag;
        fill_right(x->p, x->size, x->tag);
        shmem_barrier_all();
        check_filled(x->p, x->size, x->tag, what);
        /* Every live object is still where it was, with its contents. */
        for (int j = 0; j < NOBJ; j++)
            if (o[j].p && j != k) {
                check_aligned(o[j].p, o[j].align, "a live object");
                check_filled(o[j].p, o[j].size, o[j].tag, "a live object");
            }
        shmem_barrier_all();
    }
    for (int j = 0; j < NOBJ; j++)
        shmem_free(o[j].p);
}

void t_align(void)
{
    me = T_ME, n = T_N, right = T_RIGHT, left = T_LEFT;
    size_t heap = shmemx_heap_size(), before = shmemx_heap_free();
    largest(heap);
    g_ref = shmem_malloc(64);
    g_offs = shmem_malloc((size_t)n * sizeof *g_offs);
    sweep(heap);
    mix(heap);
    shmem_free(g_offs);
    shmem_free(g_ref);
    T_CHECK(shmemx_heap_free() == before, "heap not all given back: %zu of %zu free",
            shmemx_heap_free(), before);
}
