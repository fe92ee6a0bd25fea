// SPDX-License-Identifier: MIT
/*
 * rand.c - RAND, the comparison variant of the CIA-Malloc paper: a thin layer
 * over glibc's malloc that pads every request by 0..3 cache lines chosen at
 * random.  Padding shifts where the *next* blocks land, so the cache indices
 * of a program's hot blocks become random instead of being decided by the
 * size classes; CIA-Malloc's claim is that placing them on purpose beats
 * scattering them, and this layer is what it is measured against.
 *
 * Built as libhpsync-malloc-rand.so: LD_PRELOAD it, or link it with
 * -lhpsync-malloc-rand ahead of libc.
 *
 * Rules this file keeps, because it runs inside every allocation of the host
 * program, before and during its initialisation:
 *  - glibc is reached through its exported __libc_* entry points, never via
 *    dlsym (which allocates and would recurse into us);
 *  - nothing here allocates, locks or makes a system call;
 *  - the random state is initial-exec TLS, which needs no allocation on
 *    first touch (general-dynamic TLS may call malloc);
 *  - results and errno are glibc's: the padding is added only where it
 *    cannot change them (a request glibc would refuse is passed through
 *    unpadded, so glibc refuses it with its own errno).
 * mallinfo, mallinfo2, malloc_trim, mallopt, malloc_stats and malloc_info
 * are not defined here: glibc's own run and describe the heap our blocks
 * live in.
 * The library is unversioned on purpose: a versioned definition would not
 * interpose the program's malloc@GLIBC_2.2.5 references.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "array_bytes.h"
#include "hps_rand.h"
#include "hpsync/pr.h"

/* glibc's own allocator, exported (GLIBC_2.2.5) for exactly this purpose. */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

enum {
    LINE = 64,            /* the cache line the padding is counted in */
    MAX_PAD_LINES = 3,    /* pad by 0..3 lines */
};

/*
 * Requests above this are passed through unpadded.  glibc refuses anything
 * above PTRDIFF_MAX with ENOMEM; leaving those untouched keeps its answer
 * and makes size + pad unable to wrap around.
 */
#define PAD_LIMIT ((size_t)PTRDIFF_MAX - (size_t)(MAX_PAD_LINES * LINE))

static __thread uint64_t rng_state __attribute__((tls_model("initial-exec")));

/*
 * xorshift64, seeded per thread from the address of its TLS block (distinct
 * for live threads, free to obtain), mixed so neighbouring addresses give
 * unrelated sequences.  Zero is xorshift's fixed point, hence the |1.
 */
static inline uint64_t next_random(void)
{
    if (__builtin_expect(rng_state == 0, 0)) {
        uint64_t x = (uint64_t)(uintptr_t)&rng_state * 0x9E3779B97F4A7C15ull;
        rng_state = (x ^ x >> 31) | 1;
    }
    return hps_xorshift64(&rng_state);
}

/* The request plus 0..3 cache lines, or the request itself if too large. */
static inline size_t padded(size_t size)
{
    if (__builtin_expect(size > PAD_LIMIT, 0))
        return size;
    /* The top two bits (xorshift64's better mixed ones): 0..3 lines. */
    _Static_assert(MAX_PAD_LINES == 3, "the shift below draws 2 bits");
    return size + (size_t)(next_random() >> 62) * LINE;
}

HPS_EXPORT void *malloc(size_t size)
{
    return __libc_malloc(padded(size));
}

HPS_EXPORT void free(void *p)
{
    __libc_free(p);
}

HPS_EXPORT void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (hps_malloc_array_bytes(n, size, &bytes))
        return NULL;
    return __libc_calloc(1, padded(bytes));
}

HPS_EXPORT void *realloc(void *p, size_t size)
{
    /* glibc frees and returns NULL here (REALLOC_ZERO_BYTES_FREES); padding
     * would turn it into a shrink that keeps the block. */
    if (size == 0 && p != NULL) {
        __libc_free(p);
        return NULL;
    }
    return __libc_realloc(p, padded(size));
}

HPS_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (hps_malloc_array_bytes(n, size, &bytes))
        return NULL;
    return realloc(p, bytes);
}

/*
 * memalign and aligned_alloc are one function in glibc 2.36 (the same
 * address): an alignment that is not a power of two is rounded up (no
 * EINVAL), only one above SIZE_MAX/2+1 fails with EINVAL.  Passing the
 * alignment through leaves all of that to glibc.
 */
HPS_EXPORT void *memalign(size_t align, size_t size)
{
    return __libc_memalign(align, padded(size));
}

HPS_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    return __libc_memalign(align, padded(size));
}

HPS_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    /* glibc's test: a power-of-two multiple of sizeof(void *).  A bad
     * alignment leaves errno and *out alone; running out of memory sets
     * errno to ENOMEM as well, as glibc's does. */
    if (align == 0 || align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
        return EINVAL;
    void *p = __libc_memalign(align, padded(size));
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

/* glibc's own page rounding (including its choice for 0 bytes) happens on
 * the padded size: the result is still page aligned and at least a rounded
 * request long. */
HPS_EXPORT void *valloc(size_t size)
{
    return __libc_valloc(padded(size));
}

HPS_EXPORT void *pvalloc(size_t size)
{
    return __libc_pvalloc(padded(size));
}

/*
 * glibc's malloc_usable_size cannot be called: this library defines the
 * same name, and glibc exports no __libc_ alias for it.  So it is computed
 * the way glibc's musable() does, from the chunk header in front of the
 * block: the size word at p - 8, whose low 3 bits are flags (PREV_INUSE,
 * IS_MMAPPED = 2, NON_MAIN_ARENA).  An mmapped chunk carries a 16-byte
 * header of its own; any other chunk also lends the user the next chunk's
 * prev_size word, hence size - 8.  Every block we hand out comes from glibc,
 * so the header is always there.  (Not under memcheck with
 * --soname-synonyms=somalloc=nouserintercepts: glibc's allocator is then
 * memcheck's but this function is still ours, and p - 8 is a red zone.)
 */
HPS_EXPORT size_t malloc_usable_size(void *p)
{
    if (p == NULL)
        return 0;
    size_t word = ((const size_t *)p)[-1];
    size_t chunk = word & ~(size_t)7;
    return (word & 2) ? chunk - 2 * sizeof(size_t) : chunk - sizeof(size_t);
}

/* C23's sized frees (glibc 2.36 lacks them): the size is only a hint. */
HPS_EXPORT void free_sized(void *p, size_t size)
{
    (void)size;
    __libc_free(p);
}

HPS_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    __libc_free(p);
}
