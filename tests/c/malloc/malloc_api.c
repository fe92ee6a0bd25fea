// SPDX-License-Identifier: MIT
/*
 * The standard allocation API's semantics, checked against glibc's own
 * answers.  Whatever allocator is running (glibc, RAND, CIA), every edge
 * case (zero sizes, overflowing products, bad alignments, impossible sizes,
 * realloc to 0) must give what glibc's function gives for the same
 * arguments: NULL or not, the same errno, the same return code.  glibc's
 * answer is asked at run time (hpm_glibc: its definitions in libc.so.6), so
 * the expectations follow the glibc installed, never a table of guesses.
 * The absolute properties (alignment, zeroing, contents kept, usable size
 * writable without touching neighbours) are checked directly.
 *
 * Compiled with -fno-builtin: the compiler must not fold or drop the calls
 * under test (e.g. a malloc whose result is only freed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "malloc_util.h"

/* C23's sized frees; glibc 2.36 does not have them, our allocators do. */
extern void free_sized(void *p, size_t size) __attribute__((weak));
extern void free_aligned_sized(void *p, size_t align, size_t size) __attribute__((weak));

/* An errno value no allocator sets: shows whether a call touched errno. */
#define SENTINEL 7531
#define MAXALIGN alignof(max_align_t)

/* glibc's own functions, the reference. */
static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
} ref;

static void load_reference(void)
{
    *(void **)&ref.malloc = hpm_glibc("malloc");
    *(void **)&ref.free = hpm_glibc("free");
    *(void **)&ref.calloc = hpm_glibc("calloc");
    *(void **)&ref.realloc = hpm_glibc("realloc");
    *(void **)&ref.reallocarray = hpm_glibc("reallocarray");
    *(void **)&ref.posix_memalign = hpm_glibc("posix_memalign");
    *(void **)&ref.aligned_alloc = hpm_glibc("aligned_alloc");
    *(void **)&ref.memalign = hpm_glibc("memalign");
    *(void **)&ref.valloc = hpm_glibc("valloc");
    *(void **)&ref.pvalloc = hpm_glibc("pvalloc");
}

/* The outcome of one call: its pointer (or return code) and errno. */
struct outcome {
    void *p;
    int rc;
    int err;
};

/*
 * Compare our outcome with glibc's for the same arguments: NULL-ness, the
 * return code and, where the call failed, errno (a failure that leaves
 * errno alone must leave it alone in both).  Frees both blocks.
 */
static void same_as_glibc(const char *what, struct outcome ours, struct outcome theirs)
{
    if ((ours.p == NULL) != (theirs.p == NULL) || ours.rc != theirs.rc)
        hps_test_fail("%s: returned %p/%d, glibc %p/%d", what, ours.p, ours.rc, theirs.p, theirs.rc);
    if ((ours.p == NULL || ours.rc != 0) && ours.err != theirs.err)
        hps_test_fail("%s: errno %s, glibc's %s", what, hps_errno_name(ours.err),
                      hps_errno_name(theirs.err));
    free(ours.p);
    ref.free(theirs.p);
}

#define OUTCOME(call) ({ errno = SENTINEL; void *p_ = (call); (struct outcome){ p_, 0, errno }; })

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Fail if two of the n pointers are equal. */
static void all_distinct(void **v, size_t n, const char *what)
{
    uintptr_t *s = malloc(n * sizeof *s);
    HPS_CHECK(s, "%s: out of memory", what);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_ptr);
    for (size_t i = 1; i < n; i++)
        if (s[i] == s[i - 1])
            hps_test_fail("%s: the same block %p was handed out twice", what, (void *)s[i]);
    free(s);
}

static void dense_zero(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            hps_test_fail("%s: byte %zu of %zu is 0x%02x, not zero", what, i, n, p[i]);
}

/*
 * Usable size: at least the request, and all of it writable without
 * touching the neighbours (blocks of the same size allocated just before
 * and after, which the allocator most likely put next to it).
 */
static void usable_writable(void *p, size_t request, const char *what)
{
    size_t usable = malloc_usable_size(p);
    if (usable < request)
        hps_test_fail("%s: malloc_usable_size %zu < request %zu", what, usable, request);
    void *before = malloc(request), *after = malloc(request);
    HPS_CHECK(before && after, "%s: out of memory", what);
    hpm_fill(before, request, 1);
    hpm_fill(after, request, 2);
    memset(p, 0x5a, usable);
    hpm_verify(before, request, 1, what);
    hpm_verify(after, request, 2, what);
    free(before);
    free(after);
}

static const size_t sizes[] = { 1, 7, 16, 24, 100, 1000, 4096, 10000, 100000, 300000, 2u << 20 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* ---- malloc, free, alignment ---------------------------------------------------- */

static void check_malloc(void)
{
    enum { N = 256 };
    void *v[N];
    for (int i = 0; i < N; i++) {
        v[i] = malloc(0);
        HPS_CHECK(v[i], "malloc(0) returned NULL");
        hpm_check_aligned(v[i], MAXALIGN, "malloc(0)");
    }
    all_distinct(v, N, "malloc(0)");
    for (int i = 0; i < N; i++)
        free(v[i]);

    /* Every size up to 2 KiB, then growing by 1/8: all size classes. */
    static void *live[4096];
    size_t n = 0;
    for (size_t s = 1; s < (8u << 20) && n < 4096; s = s < 2048 ? s + 1 : s + s / 8) {
        live[n] = malloc(s);
        HPS_CHECK(live[n], "malloc(%zu) returned NULL", s);
        hpm_check_aligned(live[n], MAXALIGN, "malloc");
        hpm_fill(live[n], s, s);
        n++;
    }
    all_distinct(live, n, "malloc of every size");
    size_t s = 1;
    for (size_t i = 0; i < n; i++, s = s < 2048 ? s + 1 : s + s / 8) {
        hpm_verify(live[i], s, s, "malloc of every size");
        free(live[i]);
    }
    free(NULL);
    printf("malloc: ok (malloc(0) x %d distinct, %zu sizes aligned to %zu, no overlap)\n", N, n,
           (size_t)MAXALIGN);
}

/* ---- calloc ------------------------------------------------------------------ */

static void check_calloc(void)
{
    /* Dirty blocks freed, then the same sizes calloc'ed: most come back
     * from the free lists, and must be zero all the same. */
    for (int round = 0; round < 3; round++) {
        void *dirty[NSIZES];
        for (size_t i = 0; i < NSIZES; i++) {
            dirty[i] = malloc(sizes[i]);
            HPS_CHECK(dirty[i], "malloc(%zu) returned NULL", sizes[i]);
            memset(dirty[i], 0xa5, malloc_usable_size(dirty[i]));
        }
        for (size_t i = 0; i < NSIZES; i++)
            free(dirty[i]);
        for (size_t i = 0; i < NSIZES; i++) {
            size_t n = round == 1 ? sizes[i] : 1, m = round == 1 ? 1 : sizes[i];
            unsigned char *p = calloc(n, m);
            HPS_CHECK(p, "calloc(%zu, %zu) returned NULL", n, m);
            hpm_check_aligned(p, MAXALIGN, "calloc");
            dense_zero(p, sizes[i], "calloc after dirty free");
            free(p);
        }
    }
    same_as_glibc("calloc(0, 5)", OUTCOME(calloc(0, 5)), OUTCOME(ref.calloc(0, 5)));
    same_as_glibc("calloc(5, 0)", OUTCOME(calloc(5, 0)), OUTCOME(ref.calloc(5, 0)));
    static const size_t over[][2] = {
        { SIZE_MAX / 2 + 1, 2 }, { SIZE_MAX, SIZE_MAX }, { (size_t)1 << 32, (size_t)1 << 32 },
        { 3, SIZE_MAX / 3 + 1 }, { 1, SIZE_MAX / 2 }, { SIZE_MAX / 2, 1 }, { 1, SIZE_MAX },
    };
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        size_t a = over[i][0], b = over[i][1];
        struct outcome o = OUTCOME(calloc(a, b));
        if (o.p || o.err != ENOMEM)
            hps_test_fail("calloc(%zu, %zu): %p errno %s, expected NULL and ENOMEM", a, b, o.p,
                          hps_errno_name(o.err));
        same_as_glibc("calloc overflow", o, OUTCOME(ref.calloc(a, b)));
    }
    printf("calloc: ok (zeroed after dirty reuse, 0 sizes, overflow -> ENOMEM)\n");
}

/* ---- realloc, reallocarray ------------------------------------------------------------ */

static void check_realloc(void)
{
    /* One block through small, page, mmap-sized and back: contents kept. */
    static const size_t chain[] = { 1, 24, 100, 5000, 70000, 300000, 5u << 20, 100, 33,
                                    65536, 9u << 20, 7, 0x1000, 1 };
    size_t old = 0;
    unsigned char *p = NULL;
    for (size_t i = 0; i < sizeof chain / sizeof chain[0]; i++) {
        size_t n = chain[i];
        unsigned char *q = realloc(p, n);
        HPS_CHECK(q, "realloc(%p, %zu) returned NULL", (void *)p, n);
        hpm_check_aligned(q, MAXALIGN, "realloc");
        if (p)
            hpm_verify_prefix(q, old, old < n ? old : n, 77, "realloc");
        hpm_fill(q, n, 77);
        p = q;
        old = n;
    }
    usable_writable(p, old, "realloc chain");
    free(p);

    same_as_glibc("realloc(NULL, 0)", OUTCOME(realloc(NULL, 0)), OUTCOME(ref.realloc(NULL, 0)));
    same_as_glibc("realloc(NULL, 100)", OUTCOME(realloc(NULL, 100)), OUTCOME(ref.realloc(NULL, 100)));
    /* glibc frees and returns NULL; an allocator keeping the block would
     * make every realloc(p, 0) caller leak or double free. */
    for (size_t i = 0; i < NSIZES; i++) {
        void *mine = malloc(sizes[i]), *theirs = ref.malloc(sizes[i]);
        HPS_CHECK(mine && theirs, "out of memory");
        same_as_glibc("realloc(p, 0)", OUTCOME(realloc(mine, 0)), OUTCOME(ref.realloc(theirs, 0)));
    }
    /* A failed realloc leaves the block as it was. */
    static const size_t huge[] = { SIZE_MAX / 2, SIZE_MAX, PTRDIFF_MAX, SIZE_MAX - 4096 };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        void *mine = malloc(1000), *theirs = ref.malloc(1000);
        HPS_CHECK(mine && theirs, "out of memory");
        hpm_fill(mine, 1000, 5);
        struct outcome o = OUTCOME(realloc(mine, huge[i]));
        struct outcome r = OUTCOME(ref.realloc(theirs, huge[i]));
        if (!o.p)
            hpm_verify(mine, 1000, 5, "block after a failed realloc");
        same_as_glibc("realloc to an impossible size", o, r);
        free(mine);
        ref.free(theirs);
    }

    unsigned char *a = reallocarray(NULL, 10, 10);
    HPS_CHECK(a, "reallocarray(NULL, 10, 10) returned NULL");
    hpm_fill(a, 100, 9);
    a = reallocarray(a, 300, 100);
    HPS_CHECK(a, "reallocarray(p, 300, 100) returned NULL");
    hpm_verify_prefix(a, 100, 100, 9, "reallocarray grow");
    /* Overflowing products only: glibc's reallocarray calls realloc through
     * the PLT, i.e. the interposed one, so only its overflow answer is
     * glibc's own. */
    static const size_t over[][2] = { { SIZE_MAX / 2, 3 }, { (size_t)1 << 33, (size_t)1 << 31 },
                                      { SIZE_MAX, 2 }, { 3, SIZE_MAX / 2 } };
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        void *theirs = ref.malloc(100);
        struct outcome o = OUTCOME(reallocarray(a, over[i][0], over[i][1]));
        struct outcome r = OUTCOME(ref.reallocarray(theirs, over[i][0], over[i][1]));
        if (o.p || o.err != ENOMEM)
            hps_test_fail("reallocarray(p, %zu, %zu): %p errno %s, expected NULL and ENOMEM",
                          over[i][0], over[i][1], o.p, hps_errno_name(o.err));
        hpm_verify_prefix(a, 100, 100, 9, "block after a failed reallocarray");
        same_as_glibc("reallocarray overflow", o, r);
        ref.free(theirs);
    }
    free(a);
    printf("realloc: ok (contents kept through %zu sizes, realloc(p, 0) and failures as glibc)\n",
           sizeof chain / sizeof chain[0]);
}

/* ---- aligned allocation ---------------------------------------------------------------- */

static struct outcome pm_outcome(int (*fn)(void **, size_t, size_t), size_t align, size_t size)
{
    void *marker = &marker, *out = marker;
    errno = SENTINEL;
    int rc = fn(&out, align, size);
    int err = errno;
    if (rc != 0 && out != marker)
        hps_test_fail("posix_memalign(%zu, %zu) failed with %s but wrote *memptr", align, size,
                      hps_errno_name(rc));
    return (struct outcome){ rc == 0 ? out : NULL, rc, err };
}

/* The largest power of two dividing align, but at least max_align_t's:
 * what any successful answer must be aligned to. */
static size_t min_alignment(size_t align)
{
    size_t low = align & -align;
    return low > MAXALIGN ? low : MAXALIGN;
}

static void check_aligned(void)
{
    static const size_t asizes[] = { 0, 1, 100, 5000, 200000 };
    void *keep[64];
    size_t nkeep = 0;
    for (size_t align = 8; align <= (1u << 20); align *= 2) {
        for (size_t i = 0; i < sizeof asizes / sizeof asizes[0]; i++) {
            size_t s = asizes[i];
            void *p = NULL;
            HPS_CHECK_RC("posix_memalign", posix_memalign(&p, align, s), 0);
            hpm_check_aligned(p, align, "posix_memalign");
            memset(p, 0x11, s);
            void *q = aligned_alloc(align, s);
            HPS_CHECK(q, "aligned_alloc(%zu, %zu) returned NULL", align, s);
            hpm_check_aligned(q, align, "aligned_alloc");
            void *r = memalign(align, s);
            HPS_CHECK(r, "memalign(%zu, %zu) returned NULL", align, s);
            hpm_check_aligned(r, align, "memalign");
            usable_writable(q, s, "aligned_alloc");
            free(p);
            free_aligned_sized ? free_aligned_sized(q, align, s) : free(q);
            if (nkeep < 64)
                keep[nkeep++] = r;   /* live while the others come and go */
            else
                free(r);
        }
    }
    all_distinct(keep, nkeep, "memalign");
    for (size_t i = 0; i < nkeep; i++)
        free(keep[i]);

    /* Zero-size aligned blocks, like malloc(0): distinct and freeable. */
    for (size_t align = 32; align <= 8192; align *= 2) {
        enum { Z = 48 };
        void *z[Z];
        for (int i = 0; i < Z; i++) {
            if (i % 3 == 0)
                HPS_CHECK_RC("posix_memalign(align, 0)", posix_memalign(&z[i], align, 0), 0);
            else
                z[i] = i % 3 == 1 ? aligned_alloc(align, 0) : memalign(align, 0);
            HPS_CHECK(z[i], "aligned allocation of 0 bytes at %zu returned NULL", align);
            hpm_check_aligned(z[i], align, "aligned allocation of 0 bytes");
        }
        char what[64];
        snprintf(what, sizeof what, "aligned allocations of 0 bytes at %zu", align);
        all_distinct(z, Z, what);
        for (int i = 0; i < Z; i++)
            free(z[i]);
    }

    /* Bad alignments, impossible sizes: glibc's answers. */
    static const size_t edge[][2] = {
        { 0, 64 }, { 3, 64 }, { 4, 64 }, { 12, 64 }, { 24, 64 }, { 24, 100 }, { 48, 0 },
        { SIZE_MAX / 2 + 1, 64 }, { SIZE_MAX / 2 + 2, 64 }, { SIZE_MAX, 64 },
        { 64, SIZE_MAX / 2 }, { 64, SIZE_MAX }, { 4096, SIZE_MAX - 4096 }, { 8, 0 }, { 16, 1 },
    };
    char what[96];
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        size_t a = edge[i][0], s = edge[i][1];
        struct outcome o, r;
        snprintf(what, sizeof what, "posix_memalign(%zu, %zu)", a, s);
        o = pm_outcome(posix_memalign, a, s);
        r = pm_outcome(ref.posix_memalign, a, s);
        if (o.rc == EINVAL && o.err != SENTINEL)
            hps_test_fail("%s: EINVAL but errno changed to %s", what, hps_errno_name(o.err));
        /* On ENOMEM glibc also sets errno; POSIX only asks for the return
         * code, so leaving errno alone is as good. */
        if (o.rc == ENOMEM && o.err == SENTINEL)
            o.err = r.err;
        if (o.p)
            hpm_check_aligned(o.p, a, what);
        same_as_glibc(what, o, r);

        snprintf(what, sizeof what, "aligned_alloc(%zu, %zu)", a, s);
        o = OUTCOME(aligned_alloc(a, s));
        if (o.p)
            hpm_check_aligned(o.p, min_alignment(a), what);
        same_as_glibc(what, o, OUTCOME(ref.aligned_alloc(a, s)));

        snprintf(what, sizeof what, "memalign(%zu, %zu)", a, s);
        o = OUTCOME(memalign(a, s));
        if (o.p)
            hpm_check_aligned(o.p, min_alignment(a), what);
        same_as_glibc(what, o, OUTCOME(ref.memalign(a, s)));
    }
    int bad[] = { 0, 3, 24 };
    for (size_t i = 0; i < 3; i++) {
        void *out = NULL;
        errno = SENTINEL;
        HPS_CHECK_RC("posix_memalign with a bad alignment", posix_memalign(&out, bad[i], 64), EINVAL);
        HPS_CHECK(errno == SENTINEL, "posix_memalign(%d): errno changed", bad[i]);
    }
    printf("aligned: ok (posix_memalign/aligned_alloc/memalign 8..1 MiB, %zu edge cases as glibc)\n",
           sizeof edge / sizeof edge[0]);
}

static void check_page_aligned(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t psizes[] = { 1, 100, page - 1, page, page + 1, 3 * page + 5, (1u << 20) + 3 };
    for (size_t i = 0; i < sizeof psizes / sizeof psizes[0]; i++) {
        size_t s = psizes[i], rounded = (s + page - 1) & ~(page - 1);
        void *v = valloc(s);
        HPS_CHECK(v, "valloc(%zu) returned NULL", s);
        hpm_check_aligned(v, page, "valloc");
        usable_writable(v, s, "valloc");
        free(v);
        void *p = pvalloc(s);
        HPS_CHECK(p, "pvalloc(%zu) returned NULL", s);
        hpm_check_aligned(p, page, "pvalloc");
        /* pvalloc's promise: whole pages, usable to the rounded size. */
        usable_writable(p, rounded, "pvalloc");
        free(p);
    }
    static const size_t edge[] = { 0, SIZE_MAX, SIZE_MAX - 4096, SIZE_MAX / 2 };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        struct outcome o = OUTCOME(valloc(edge[i]));
        if (o.p)
            hpm_check_aligned(o.p, page, "valloc");
        same_as_glibc("valloc", o, OUTCOME(ref.valloc(edge[i])));
        o = OUTCOME(pvalloc(edge[i]));
        if (o.p)
            hpm_check_aligned(o.p, page, "pvalloc");
        same_as_glibc("pvalloc", o, OUTCOME(ref.pvalloc(edge[i])));
    }
    printf("valloc/pvalloc: ok (page aligned, pvalloc usable to whole pages)\n");
}

/* ---- usable size, sized frees, huge requests ----------------------------------------------- */

static void check_usable_and_frees(void)
{
    HPS_CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL) is %zu, not 0",
              malloc_usable_size(NULL));
    for (size_t i = 0; i < NSIZES; i++) {
        void *p = malloc(sizes[i]);
        HPS_CHECK(p, "malloc(%zu) returned NULL", sizes[i]);
        usable_writable(p, sizes[i], "malloc_usable_size");
        free(p);
        void *c = calloc(1, sizes[i]);
        HPS_CHECK(c, "calloc(1, %zu) returned NULL", sizes[i]);
        usable_writable(c, sizes[i], "malloc_usable_size of calloc");
        free(c);
    }

    /* The weak references resolve iff some loaded object defines them;
     * ours must.  dlsym cross-checks that the weak binding is not stale. */
    int have = free_sized != NULL, have2 = free_aligned_sized != NULL;
    if (have != (strcmp(hpm_provider("free_sized"), "?") != 0))
        hps_test_fail("free_sized: weak reference and dlsym disagree");
    if (hpm_replaced() && !(have && have2))
        hps_test_fail("%s does not define free_sized/free_aligned_sized", hpm_provider("malloc"));
    if (have) {
        for (size_t i = 0; i < NSIZES; i++) {
            void *p = malloc(sizes[i]);
            HPS_CHECK(p, "out of memory");
            free_sized(p, sizes[i]);
        }
        free_sized(NULL, 0);
    }
    if (have2) {
        for (size_t align = 16; align <= 65536; align *= 4) {
            void *p = aligned_alloc(align, 3 * align);
            HPS_CHECK(p, "out of memory");
            free_aligned_sized(p, align, 3 * align);
        }
        free_aligned_sized(NULL, 64, 0);
    }
    /* What the sized frees released is usable again. */
    void *v[NSIZES];
    for (size_t i = 0; i < NSIZES; i++) {
        v[i] = malloc(sizes[i]);
        HPS_CHECK(v[i], "out of memory");
        hpm_fill(v[i], sizes[i], i);
    }
    for (size_t i = 0; i < NSIZES; i++) {
        hpm_verify(v[i], sizes[i], i, "after sized frees");
        free(v[i]);
    }

    static const size_t huge[] = { SIZE_MAX / 2, SIZE_MAX, PTRDIFF_MAX, SIZE_MAX - 64,
                                   (size_t)1 << 62 };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        struct outcome o = OUTCOME(malloc(huge[i]));
        if (o.p || o.err != ENOMEM)
            hps_test_fail("malloc(%zu): %p errno %s, expected NULL and ENOMEM", huge[i], o.p,
                          hps_errno_name(o.err));
        same_as_glibc("malloc of an impossible size", o, OUTCOME(ref.malloc(huge[i])));
    }
    printf("usable size and frees: ok (free_sized %s, impossible sizes -> ENOMEM)\n",
           have ? "present" : "absent in this libc");
}

/* ---- glibc's statistics and tuning calls --------------------------------------------------- */

static void check_mallinfo_and_friends(void)
{
    struct mallinfo2 m2 = mallinfo2();
    /* Deprecated (int fields), but programs still call it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct mallinfo m = mallinfo();
#pragma GCC diagnostic pop
    HPS_CHECK(m2.uordblks <= m2.arena && m2.fordblks <= m2.arena,
              "mallinfo2: in use %zu or free %zu exceeds the arena %zu", m2.uordblks, m2.fordblks,
              m2.arena);
    if (m2.arena < (size_t)INT32_MAX && (size_t)m.arena != m2.arena)
        hps_test_fail("mallinfo arena %d != mallinfo2 arena %zu", m.arena, m2.arena);
    int t = malloc_trim(0);
    HPS_CHECK(t == 0 || t == 1, "malloc_trim returned %d", t);
    HPS_CHECK(mallopt(M_TRIM_THRESHOLD, 128 * 1024) == 1, "mallopt(M_TRIM_THRESHOLD) failed");

    /* malloc_stats reports on stderr: catch it in a memory file. */
    fflush(stdout);
    fflush(stderr);
    int fd = memfd_create("malloc_stats", 0), saved = dup(2);
    HPS_CHECK(fd >= 0 && saved >= 0, "memfd_create/dup failed");
    dup2(fd, 2);
    malloc_stats();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    close(fd);
    HPS_CHECK(n > 0, "malloc_stats wrote nothing to stderr");
    printf("mallinfo2/mallinfo/malloc_trim/mallopt/malloc_stats: ok (stats: %ld bytes)\n", (long)n);
}

int main(void)
{
    hpm_init("malloc_api");
    hps_test_watchdog(60);
    load_reference();
    check_malloc();
    check_calloc();
    check_realloc();
    check_aligned();
    check_page_aligned();
    check_usable_and_frees();
    check_mallinfo_and_friends();
    return 0;
}
