// SPDX-License-Identifier: MIT
/*
 * Atomics over the AMO type tables: every PE hammers PE 0's copy (counts
 * must add up exactly), fetch/set/swap/compare_swap on the right neighbour,
 * the bitwise operations building a mask of all PEs, the nbi fetching forms
 * and the context forms; floating types for fetch/set/swap.
 */
#include "shtest.h"

#define K 50       /* rounds of 4 increments per PE */

#define DEF_GLOBAL(T, N, A) static T g_##N;
HPS_SHMEM_AMO_STD_TYPES(DEF_GLOBAL, _)

#define TEST_STD(T, N, A) { \
        T *c = shmem_calloc(4, sizeof(T)); \
        T *targets[2] = { c, &g_##N }; \
        for (int t = 0; t < 2; t++) { \
            T *x = targets[t]; \
            *x = 0; \
            shmem_barrier_all(); \
            /* fetch_inc results are distinct, so their sum is known */ \
            long long seen = 0; \
            for (int i = 0; i < K; i++) { \
                seen += (long long)shmem_##N##_atomic_fetch_inc(x, 0); \
                shmem_##N##_atomic_inc(x, 0); \
                shmem_ctx_##N##_atomic_add(ctx, x, (T)2, 0); \
                seen += (long long)shmem_ctx_##N##_atomic_fetch_add(ctx, x, (T)1, 0); \
            } \
            shmem_ctx_quiet(ctx);           /* the barrier completes the default context's */ \
            shmem_barrier_all(); \
            T_CHECK(shmem_##N##_atomic_fetch(x, 0) == (T)(5 * K * n), "%s adds: %lld", #T, \
                    (long long)shmem_##N##_atomic_fetch(x, 0)); \
            T_CHECK(seen > 0 || (n == 1 && K == 0), "%s fetch results", #T); \
            shmem_barrier_all(); \
            /* compare_swap: exactly one PE wins each round */ \
            if (me == 0) \
                *x = 0; \
            shmem_barrier_all(); \
            T old = shmem_##N##_atomic_compare_swap(x, (T)0, (T)(me + 1), 0); \
            shmem_barrier_all(); \
            T win = shmem_##N##_atomic_fetch(x, 0); \
            T_CHECK(win >= (T)1 && win <= (T)n, "%s cswap winner %lld", #T, (long long)win); \
            T_CHECK((old == 0) == (win == (T)(me + 1)), "%s cswap result", #T); \
            shmem_barrier_all(); \
            /* set/swap/fetch on the right neighbour */ \
            shmem_##N##_atomic_set(x, (T)(me + 3), right); \
            shmem_barrier_all(); \
            T_CHECK(*x == (T)(left + 3), "%s set", #T); \
            shmem_barrier_all(); \
            T_CHECK(shmem_##N##_atomic_swap(x, (T)(me + 9), right) == (T)(me + 3), \
                    "%s swap", #T); \
            shmem_barrier_all(); \
            T_CHECK(shmem_ctx_##N##_atomic_fetch(ctx, x, left) == (T)(ll + 9), "%s fetch", #T); \
            T_CHECK(*x == (T)(left + 9), "%s swap value", #T); \
            shmem_barrier_all(); \
            /* nbi fetching forms: results at quiet */ \
            T f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0; \
            shmem_##N##_atomic_fetch_nbi(&f1, x, right); \
            shmem_quiet(); \
            shmem_##N##_atomic_swap_nbi(&f2, x, (T)20, right); \
            shmem_quiet(); \
            shmem_##N##_atomic_compare_swap_nbi(&f3, x, (T)20, (T)21, right); \
            shmem_quiet(); \
            shmem_##N##_atomic_fetch_inc_nbi(&f4, x, right); \
            shmem_quiet(); \
            shmem_ctx_##N##_atomic_fetch_add_nbi(ctx, &f5, x, (T)4, right); \
            shmem_ctx_quiet(ctx); \
            T_CHECK(f1 == (T)(me + 9) && f2 == (T)(me + 9) && f3 == 20 && f4 == 21 && f5 == 22, \
                    "%s nbi fetches %lld %lld %lld %lld %lld", #T, (long long)f1, \
                    (long long)f2, (long long)f3, (long long)f4, (long long)f5); \
            shmem_barrier_all(); \
            T_CHECK(*x == (T)26, "%s after nbi: %lld", #T, (long long)*x); \
            shmem_barrier_all(); \
        } \
        shmem_free(c); \
    }

/* Bitwise: each PE sets its bit in PE 0's word, then clears, then flips. */
#define TEST_BIT(T, N, A) { \
        T *x = shmem_calloc(1, sizeof(T)), all = 0, got; \
        for (int i = 0; i < n && i < 30; i++) \
            all |= (T)1 << i; \
        shmem_##N##_atomic_or(x, (T)1 << (me % 30), 0); \
        shmem_barrier_all(); \
        T_CHECK(shmem_##N##_atomic_fetch(x, 0) == all, "%s or", #T); \
        shmem_barrier_all(); \
        got = shmem_##N##_atomic_fetch_and(x, (T)~((T)1 << (me % 30)), 0); \
        T_CHECK(got & ((T)1 << (me % 30)), "%s fetch_and", #T); \
        shmem_barrier_all(); \
        T_CHECK(shmem_##N##_atomic_fetch(x, 0) == 0, "%s and", #T); \
        shmem_barrier_all(); \
        shmem_ctx_##N##_atomic_xor(ctx, x, (T)3, 0); \
        shmem_ctx_quiet(ctx); \
        shmem_barrier_all(); \
        T_CHECK(shmem_##N##_atomic_fetch(x, 0) == (n % 2 ? (T)3 : (T)0), "%s xor", #T); \
        shmem_barrier_all(); \
        got = shmem_##N##_atomic_fetch_or(x, (T)0, 0); \
        T f = 0; \
        shmem_##N##_atomic_fetch_xor_nbi(&f, x, (T)0, 0); \
        shmem_quiet(); \
        T_CHECK(f == got, "%s fetch_xor_nbi", #T); \
        shmem_ctx_##N##_atomic_fetch_or_nbi(ctx, &f, x, (T)0, 0); \
        shmem_ctx_quiet(ctx); \
        shmem_##N##_atomic_fetch_and_nbi(&f, x, (T)~(T)0, 0); \
        shmem_quiet(); \
        T_CHECK(f == got && shmem_ctx_##N##_atomic_fetch_xor(ctx, x, (T)0, 0) == got && \
                shmem_##N##_atomic_fetch_or(x, (T)0, 0) == got, "%s fetch forms", #T); \
        shmem_ctx_##N##_atomic_and(ctx, x, (T)~(T)0, 0); \
        shmem_ctx_quiet(ctx); \
        shmem_barrier_all(); \
        shmem_free(x); \
    }

/* Floating types: fetch, set, swap (bit patterns). */
#define TEST_FLOAT(T) { \
        T *x = shmem_calloc(1, sizeof(T)); \
        shmem_##T##_atomic_set(x, (T)me + (T)0.5, right); \
        shmem_barrier_all(); \
        T_CHECK(shmem_##T##_atomic_fetch(x, me) == (T)left + (T)0.5, #T " set/fetch"); \
        T_CHECK(shmem_##T##_atomic_swap(x, (T)-1.25, me) == (T)left + (T)0.5, #T " swap"); \
        T f = 0; \
        shmem_ctx_##T##_atomic_swap_nbi(ctx, &f, x, (T)2.5, me); \
        shmem_ctx_quiet(ctx); \
        shmem_##T##_atomic_fetch_nbi(&f, x, me); \
        shmem_quiet(); \
        T_CHECK(f == (T)2.5, #T " nbi"); \
        shmem_barrier_all(); \
        shmem_free(x); \
    }

void t_amo(void)
{
    int me = T_ME, n = T_N, right = T_RIGHT, left = T_LEFT, ll = (me + 2 * n - 2) % n;
    shmem_ctx_t ctx;
    T_CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
    HPS_SHMEM_AMO_STD_TYPES(TEST_STD, _)
    HPS_SHMEM_AMO_BIT_TYPES(TEST_BIT, _)
    TEST_FLOAT(float)
    TEST_FLOAT(double)
    shmem_ctx_destroy(ctx);
}
