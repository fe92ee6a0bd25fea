// SPDX-License-Identifier: MIT
/*
 * Ordering (fence, quiet) and point-to-point synchronisation (wait_until,
 * test and their _all/_any/_some/_vector forms, signal_wait_until).
 *
 * Waiting follows the one policy of wait.h.
 */
#define _GNU_SOURCE
#include "hps_rand.h"
#include "internal.h"
#include "settings.h"

void hps_shmem_wait_step(hps_shmem_waiter_t *w)
{
    hps_shmem_waiter_step(w, hps_shmem_sh.ofi, hps_shmem_sh.ofi ? hps_ofi_poll() : 0);
}

void hps_shmem_wait_ge64(const uint64_t *v, uint64_t goal)
{
    hps_shmem_waiter_t w = { 0 };
    /* Acquire: what the signalling PE wrote before its signal is visible
     * once the signal is. */
    while (hps_plain_load_acquire(v) < goal)
        hps_shmem_wait_step(&w);
}

HPS_API void shmem_fence(void)
{
    hps_fence(__func__);
}

HPS_API void shmem_quiet(void)
{
    hps_quiet(__func__);
}

HPS_API void shmem_ctx_fence(shmem_ctx_t ctx)
{
    hps_shmem_ctx_fence(ctx, __func__);
}

HPS_API void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    hps_shmem_ctx_quiet(ctx, __func__);
}

/* ---- comparisons ---------------------------------------------------------------- */

static void bad_cmp(const char *fn, int cmp)
{
    hps_shmem_fatal(fn, "comparison %d is not one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE", cmp);
}

#define CMP_CASES(a, b) \
    case SHMEM_CMP_EQ: return (a) == (b); \
    case SHMEM_CMP_NE: return (a) != (b); \
    case SHMEM_CMP_GT: return (a) > (b); \
    case SHMEM_CMP_GE: return (a) >= (b); \
    case SHMEM_CMP_LT: return (a) < (b); \
    case SHMEM_CMP_LE: return (a) <= (b);

/* Acquire loads: data delivered before the value being waited for is
 * readable once the wait is over. */
#define LOAD(p) hps_plain_load_acquire(p)

/* ---- where an _any scan starts --------------------------------------------------- */

/*
 * OpenSHMEM asks that an entry which stays satisfied be returned by a
 * series of test_any (wait_until_any) calls eventually.  A scan from index
 * 0 returns the lowest satisfied entry every time, so a program that serves
 * the entry it gets and asks again never serves the others.  So each thread
 * remembers, for the arrays it scanned last, where to start next: just
 * after the index it returned last.  Entries that stay satisfied are then
 * returned in turn, each within as many calls as there are satisfied
 * entries, and the first satisfied entry after the last one served is
 * still found in one pass.
 *
 * The memory is a small direct-mapped table per thread keyed by (ivars,
 * nelems): per-thread because the state is touched on every call (no
 * sharing, no atomics), per array because a program may poll several (a
 * single rotating counter would advance by two per call on each of two
 * arrays polled in turn and skip every other start).  An array not in the
 * table (the first call, or evicted by another array on the same line)
 * starts at a pseudo-random index, so even two arrays that keep evicting
 * each other are served fairly on average: each satisfied entry is
 * returned with probability at least 1/nelems per call.
 *
 * Cost, counted with callgrind (shmem_long_test_any, gcc 12 -O2, x86-64):
 * 101 instructions when the first entry scanned is satisfied, against 71
 * for the scan from 0 it replaces (the thread's table is reached through
 * __tls_get_addr, 11 of them: the library may be loaded by dlopen, so no
 * initial-exec TLS); 183 against 225 when only the last of 8 entries is,
 * 855 against 1457 for the last of 64, as the scan now has one loop per
 * comparison instead of a switch per entry.
 */
typedef struct any_pos {
    const void *ivars;
    size_t n, next;
} any_pos_t;
#define ANY_LINES_LOG2 4
static __thread any_pos_t t_any[1u << ANY_LINES_LOG2];
static __thread uint64_t t_any_rng;

static HPS_NOINLINE void any_pos_new(any_pos_t *p, const void *ivars, size_t n)
{
    if (!t_any_rng) {
        /* Seeded from the line's address, which is this thread's. */
        uint64_t s = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
        t_any_rng = (s ^ (s >> 31)) | 1;
    }
    uint64_t x = hps_xorshift64(&t_any_rng);
    p->ivars = ivars;
    p->n = n;
    p->next = (size_t)(((unsigned __int128)x * n) >> 64);
}

static any_pos_t *any_pos(const void *ivars, size_t n)
{
    uint64_t h = (uint64_t)(uintptr_t)ivars * 0x9e3779b97f4a7c15ull;
    any_pos_t *p = t_any + (h >> (64 - ANY_LINES_LOG2));
    if (hps_unlikely(p->ivars != ivars || p->n != n))
        any_pos_new(p, ivars, n);
    return p;
}

/* r was returned: the next scan of the array starts after it. */
static void any_served(any_pos_t *p, size_t r)
{
    if (r < p->n)
        p->next = r + 1 == p->n ? 0 : r + 1;
}

/* What an _any scan found besides an index: no entry in the test set, or
 * entries but none satisfied (yet). */
#define ANY_EMPTY SIZE_MAX
#define ANY_NONE (SIZE_MAX - 1)

/* Nothing satisfied: ANY_EMPTY when the test set is empty, else ANY_NONE. */
static size_t any_idle(size_t n, const int *st)
{
    for (size_t i = 0; i < n; i++)
        if (!st || !st[i])
            return ANY_NONE;
    return ANY_EMPTY;
}

/* first_N's scan for one comparison OP (with lo, hi, ivars ... in scope). */
#define FIRST_LOOP(OP) \
    for (size_t i = lo; i < hi; i++) \
        if (!(st && st[i]) && LOAD(&ivars[i]) OP (vals ? vals[i] : v)) \
            return i; \
    return n;

/* Per type: one comparison of an ivar, then every routine as a loop over
 * it.  `vec` selects cmp_values[i] instead of the one cmp_value. */
#define DEF_SYNC(T, N, A) \
    static int cmp_##N(const char *fn, const T *ivar, int cmp, T v) \
    { \
        T x = LOAD(ivar); \
        switch (cmp) { CMP_CASES(x, v) } \
        bad_cmp(fn, cmp); \
        return 0; \
    } \
    /* all (want_all): 1 when every entry of the test set is satisfied, else \
     * 0; some: the number satisfied, their indices in idx.  SIZE_MAX when \
     * the test set is empty. */ \
    static size_t scan_##N(const char *fn, T *ivars, size_t n, size_t *idx, const int *st, \
                           int cmp, const T *vals, T v, int want_all) \
    { \
        size_t hit = 0, live = 0; \
        for (size_t i = 0; i < n; i++) { \
            if (st && st[i]) \
                continue; \
            live++; \
            if (cmp_##N(fn, &ivars[i], cmp, vals ? vals[i] : v)) { \
                if (idx) \
                    idx[hit] = i; \
                hit++; \
            } else if (want_all) { \
                return 0; \
            } \
        } \
        if (!live) \
            return SIZE_MAX; \
        return want_all ? 1 : hit; \
    } \
    /* The first satisfied entry of the test set in [lo, hi), or n: one \
     * loop per comparison, so the switch is not in the loop. */ \
    HPS_INLINE size_t first_##N(const char *fn, T *ivars, size_t lo, size_t hi, size_t n, \
                            const int *st, int cmp, const T *vals, T v) \
    { \
        switch (cmp) { \
        case SHMEM_CMP_EQ: FIRST_LOOP(==) \
        case SHMEM_CMP_NE: FIRST_LOOP(!=) \
        case SHMEM_CMP_GT: FIRST_LOOP(>) \
        case SHMEM_CMP_GE: FIRST_LOOP(>=) \
        case SHMEM_CMP_LT: FIRST_LOOP(<) \
        case SHMEM_CMP_LE: FIRST_LOOP(<=) \
        } \
        bad_cmp(fn, cmp); \
        return n; \
    } \
    /* any: the first satisfied entry from start on, wrapping at n; else \
     * ANY_NONE or ANY_EMPTY. */ \
    static size_t any_##N(const char *fn, T *ivars, size_t n, const int *st, int cmp, \
                          const T *vals, T v, size_t start) \
    { \
        size_t r = first_##N(fn, ivars, start, n, n, st, cmp, vals, v); \
        if (r == n && start) \
            r = first_##N(fn, ivars, 0, start, n, st, cmp, vals, v); \
        return r < n ? r : any_idle(n, st); \
    } \
    HPS_API int shmem_##N##_test(T *ivar, int cmp, T v) \
    { \
        return cmp_##N(__func__, ivar, cmp, v); \
    } \
    static void wait_##N(const char *fn, T *ivar, int cmp, T v) \
    { \
        hps_shmem_waiter_t w = { 0 }; \
        while (!cmp_##N(fn, ivar, cmp, v)) \
            hps_shmem_wait_step(&w); \
    } \
    HPS_API void shmem_##N##_wait_until(T *ivar, int cmp, T v) \
    { \
        wait_##N(__func__, ivar, cmp, v); \
    } \
    HPS_API void shmem_##N##_wait(T *ivar, T v) \
    { \
        wait_##N(__func__, ivar, SHMEM_CMP_NE, v); \
    } \
    DEF_SYNC_FORMS(T, N, , T v, NULL, v) \
    DEF_SYNC_FORMS(T, N, _vector, T *vals, vals, 0)

/* all/any/some for one way of passing the comparison values. */
#define DEF_SYNC_FORMS(T, N, SUF, VPARAM, VALS, V) \
    HPS_API int shmem_##N##_test_all##SUF(T *ivars, size_t n, const int *st, int cmp, VPARAM) \
    { \
        return scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 1) != 0; \
    } \
    HPS_API size_t shmem_##N##_test_any##SUF(T *ivars, size_t n, const int *st, int cmp, \
                                            VPARAM) \
    { \
        any_pos_t *p = any_pos(ivars, n); \
        size_t r = any_##N(__func__, ivars, n, st, cmp, VALS, V, p->next); \
        any_served(p, r); \
        return r < n ? r : SIZE_MAX; \
    } \
    HPS_API size_t shmem_##N##_test_some##SUF(T *ivars, size_t n, size_t *idx, \
                                             const int *st, int cmp, VPARAM) \
    { \
        size_t r = scan_##N(__func__, ivars, n, idx, st, cmp, VALS, V, 0); \
        return r == SIZE_MAX ? 0 : r; \
    } \
    HPS_API void shmem_##N##_wait_until_all##SUF(T *ivars, size_t n, const int *st, int cmp, \
                                                 VPARAM) \
    { \
        hps_shmem_waiter_t w = { 0 }; \
        while (scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 1) == 0) \
            hps_shmem_wait_step(&w); \
    } \
    HPS_API size_t shmem_##N##_wait_until_any##SUF(T *ivars, size_t n, const int *st, \
                                                   int cmp, VPARAM) \
    { \
        hps_shmem_waiter_t w = { 0 }; \
        any_pos_t *p = any_pos(ivars, n); \
        size_t r; \
        while ((r = any_##N(__func__, ivars, n, st, cmp, VALS, V, p->next)) == ANY_NONE) \
            hps_shmem_wait_step(&w); \
        any_served(p, r); \
        return r < n ? r : SIZE_MAX; \
    } \
    HPS_API size_t shmem_##N##_wait_until_some##SUF(T *ivars, size_t n, size_t *idx, \
                                                    const int *st, int cmp, VPARAM) \
    { \
        hps_shmem_waiter_t w = { 0 }; \
        size_t r; \
        while ((r = scan_##N(__func__, ivars, n, idx, st, cmp, VALS, V, 0)) == 0) \
            hps_shmem_wait_step(&w); \
        return r == SIZE_MAX ? 0 : r; \
    }

HPS_SHMEM_SYNC_TYPES(DEF_SYNC, _)

/* ---- signals ------------------------------------------------------------------------ */

HPS_API uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    return LOAD(sig_addr);
}

HPS_API uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    wait_uint64(__func__, sig_addr, cmp, cmp_value);
    return LOAD(sig_addr);
}

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
