// SPDX-License-Identifier: MIT
/*
 * Ordering (fence, quiet) and point-to-point synchronisation (wait_until,
 * test and their _all/_any/_some/_vector forms, signal_wait_until).
 *
 * Waiting follows the one policy of wait.h.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "settings.h"

void hps_shmem_wait_step(hps_waiter_t *w)
{
    hps_waiter_step(w, hps_sh.ofi, hps_sh.ofi ? hps_ofi_poll() : 0);
}

void hps_wait_ge64(const uint64_t *v, uint64_t goal)
{
    hps_waiter_t w = { 0 };
    /* Acquire: what the signalling PE wrote before its signal is visible
     * once the signal is. */
    while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < goal)
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
    hps_ctx_fence(ctx, __func__);
}

HPS_API void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    hps_ctx_quiet(ctx, __func__);
}

/* ---- comparisons ---------------------------------------------------------------- */

static void bad_cmp(const char *fn, int cmp)
{
    hps_fatal(fn, "comparison %d is not one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE", cmp);
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
#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

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
    /* Satisfied, not excluded, entries; SIZE_MAX when all are excluded. */ \
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
                if (!want_all && !idx) \
                    return i; \
            } \
        } \
        if (!live) \
            return SIZE_MAX; \
        if (want_all) \
            return hit == live; \
        return idx ? hit : SIZE_MAX - 1; \
    } \
    HPS_API int shmem_##N##_test(T *ivar, int cmp, T v) \
    { \
        return cmp_##N(__func__, ivar, cmp, v); \
    } \
    static void wait_##N(const char *fn, T *ivar, int cmp, T v) \
    { \
        hps_waiter_t w = { 0 }; \
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
        size_t r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 1); \
        return r == SIZE_MAX || r == 1; \
    } \
    HPS_API size_t shmem_##N##_test_any##SUF(T *ivars, size_t n, const int *st, int cmp, \
                                            VPARAM) \
    { \
        size_t r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 0); \
        return r >= SIZE_MAX - 1 ? SIZE_MAX : r; \
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
        hps_waiter_t w = { 0 }; \
        size_t r; \
        while ((r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 1)) == 0) \
            hps_shmem_wait_step(&w); \
    } \
    HPS_API size_t shmem_##N##_wait_until_any##SUF(T *ivars, size_t n, const int *st, \
                                                   int cmp, VPARAM) \
    { \
        hps_waiter_t w = { 0 }; \
        size_t r; \
        while ((r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 0)) == SIZE_MAX - 1) \
            hps_shmem_wait_step(&w); \
        return r; \
    } \
    HPS_API size_t shmem_##N##_wait_until_some##SUF(T *ivars, size_t n, size_t *idx, \
                                                    const int *st, int cmp, VPARAM) \
    { \
        hps_waiter_t w = { 0 }; \
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
    shmem_uint64_wait_until(sig_addr, cmp, cmp_value);
    return LOAD(sig_addr);
}
