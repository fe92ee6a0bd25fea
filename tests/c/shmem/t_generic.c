// SPDX-License-Identifier: MIT
/*
 * The C11 type-generic interfaces: the same calls on several types pick
 * the typed routines (checked by their effect), with and without a context.
 */
#include <stdint.h>
#include "shtest.h"

#define GEN(T) { \
        T *x = shmem_calloc(4, sizeof(T)), v[4] = { 1, 2, 3, 4 }, out[4]; \
        shmem_put(x, v, 4, right); \
        shmem_barrier_all(); \
        shmem_get(out, x, 4, left); \
        T_CHECK(out[3] == 4 && shmem_g(&x[2], right) == 3, #T " put/get/g"); \
        shmem_barrier_all(); \
        shmem_p(SHMEM_CTX_DEFAULT, &x[0], (T)9, right); \
        shmem_put_nbi(SHMEM_CTX_DEFAULT, &x[1], v, 1, right); \
        shmem_quiet(); \
        shmem_barrier_all(); \
        T_CHECK(x[0] == 9 && x[1] == 1, #T " ctx p/put_nbi"); \
        shmem_barrier_all(); \
        shmem_free(x); \
    }

#define GEN_AMO(T) { \
        T *x = shmem_calloc(1, sizeof(T)); \
        shmem_atomic_add(x, (T)1, 0); \
        shmem_atomic_inc(SHMEM_CTX_DEFAULT, x, 0); \
        shmem_barrier_all(); \
        T_CHECK(shmem_atomic_fetch(x, 0) == (T)(2 * n), #T " atomic add/inc/fetch"); \
        T_CHECK(shmem_atomic_compare_swap(x, (T)-1, (T)0, 0) == (T)(2 * n), #T " cswap"); \
        shmem_barrier_all(); \
        T s; \
        shmem_sum_reduce(SHMEM_TEAM_WORLD, &s, x, 1); \
        T_CHECK(s == (T)(2 * n), #T " sum_reduce"); \
        shmem_barrier_all(); \
        shmem_free(x); \
    }

/* Every generic routine once, plain and with a context, on this PE: each
 * must compile to the typed routine and leave the value it should. */
static void every_form(void)
{
    static long a[4], b[4];
    static uint64_t sig;
    long f = 0;
    int me = T_ME;
    shmem_ctx_t c = SHMEM_CTX_DEFAULT;
    long v[4] = { 1, 2, 3, 4 };
    shmem_put(a, v, 4, me); shmem_put(c, b, v, 4, me);
    shmem_get(v, a, 4, me); shmem_get(c, v, b, 4, me);
    shmem_put_nbi(a, v, 4, me); shmem_put_nbi(c, b, v, 4, me);
    shmem_get_nbi(v, a, 4, me); shmem_get_nbi(c, v, b, 4, me);
    shmem_quiet();
    shmem_iput(a, v, 1, 1, 2, me); shmem_iput(c, b, v, 1, 1, 2, me);
    shmem_iget(v, a, 1, 1, 2, me); shmem_iget(c, v, b, 1, 1, 2, me);
    shmem_put_signal(a, v, 1, &sig, 1, SHMEM_SIGNAL_ADD, me);
    shmem_put_signal(c, a, v, 1, &sig, 1, SHMEM_SIGNAL_ADD, me);
    shmem_put_signal_nbi(a, v, 1, &sig, 1, SHMEM_SIGNAL_ADD, me);
    shmem_put_signal_nbi(c, a, v, 1, &sig, 1, SHMEM_SIGNAL_ADD, me);
    shmem_quiet();
    T_CHECK(shmem_signal_fetch(&sig) == 4 && shmem_g(&a[0], me) == 1 && shmem_g(c, &b[1], me) == 2,
            "generic RMA");
    shmem_p(&a[0], 10L, me); shmem_p(c, &a[0], 11L, me);
    shmem_quiet();
    shmem_atomic_set(&a[0], 1L, me); shmem_atomic_set(c, &a[0], 2L, me);
    shmem_atomic_add(&a[0], 1L, me); shmem_atomic_add(c, &a[0], 1L, me);
    shmem_atomic_inc(&a[0], me); shmem_atomic_inc(c, &a[0], me);
    f += shmem_atomic_fetch_add(&a[0], 1L, me) + shmem_atomic_fetch_add(c, &a[0], 1L, me);
    f += shmem_atomic_fetch_inc(&a[0], me) + shmem_atomic_fetch_inc(c, &a[0], me);
    f += shmem_atomic_swap(&a[0], 0L, me) + shmem_atomic_swap(c, &a[0], 0L, me);
    f += shmem_atomic_compare_swap(&a[0], 0L, 5L, me) + shmem_atomic_compare_swap(c, &a[0], 5L, 6L, me);
    T_CHECK(shmem_atomic_fetch(&a[0], me) == 6 && shmem_atomic_fetch(c, &a[0], me) == 6 &&
            f == 6 + 7 + 8 + 9 + 10 + 0 + 0 + 5, "generic AMOs: %ld", f);
    shmem_atomic_fetch_nbi(&f, &a[0], me); shmem_atomic_fetch_nbi(c, &f, &a[0], me);
    shmem_atomic_swap_nbi(&f, &a[0], 6L, me); shmem_atomic_swap_nbi(c, &f, &a[0], 6L, me);
    shmem_quiet();
    shmem_atomic_compare_swap_nbi(&f, &a[0], 6L, 7L, me);
    shmem_quiet();
    shmem_atomic_compare_swap_nbi(c, &f, &a[0], 7L, 8L, me);
    shmem_quiet();
    shmem_atomic_fetch_inc_nbi(&f, &a[0], me); shmem_atomic_fetch_inc_nbi(c, &f, &a[0], me);
    shmem_atomic_fetch_add_nbi(&f, &a[0], 1L, me); shmem_atomic_fetch_add_nbi(c, &f, &a[0], 1L, me);
    shmem_quiet();
    T_CHECK(a[0] == 12, "generic nbi AMOs: %ld", a[0]);
    static unsigned long u;
    unsigned long uf;
    shmem_atomic_or(&u, 6UL, me); shmem_atomic_or(c, &u, 1UL, me);
    shmem_atomic_and(&u, 5UL, me); shmem_atomic_and(c, &u, 7UL, me);
    shmem_atomic_xor(&u, 1UL, me); shmem_atomic_xor(c, &u, 0UL, me);
    shmem_quiet();                      /* non-fetching AMOs complete here */
    uf = shmem_atomic_fetch_or(&u, 0UL, me) + shmem_atomic_fetch_or(c, &u, 0UL, me) +
         shmem_atomic_fetch_and(&u, ~0UL, me) + shmem_atomic_fetch_and(c, &u, ~0UL, me) +
         shmem_atomic_fetch_xor(&u, 0UL, me) + shmem_atomic_fetch_xor(c, &u, 0UL, me);
    T_CHECK(u == 4 && uf == 24, "generic bitwise AMOs");
    shmem_atomic_fetch_or_nbi(&uf, &u, 0UL, me); shmem_atomic_fetch_or_nbi(c, &uf, &u, 0UL, me);
    shmem_atomic_fetch_and_nbi(&uf, &u, ~0UL, me); shmem_atomic_fetch_and_nbi(c, &uf, &u, ~0UL, me);
    shmem_atomic_fetch_xor_nbi(&uf, &u, 0UL, me); shmem_atomic_fetch_xor_nbi(c, &uf, &u, 0UL, me);
    shmem_quiet();
    T_CHECK(uf == 4, "generic bitwise nbi");
    /* Point-to-point and the deprecated generics. */
    size_t idx[4];
    int st[4] = { 0, 0, 0, 0 };
    long cmps[4] = { 12, 2, 3, 4 };
    a[1] = 2, a[2] = 3, a[3] = 4;
    shmem_wait_until_all(a, 4, st, SHMEM_CMP_GE, 2L);
    T_CHECK(shmem_wait_until_any(a, 4, st, SHMEM_CMP_EQ, 3L) == 2 &&
            shmem_wait_until_some(a, 4, idx, st, SHMEM_CMP_GT, 3L) == 2 &&
            shmem_test_all(a, 4, st, SHMEM_CMP_GT, 1L) && shmem_test_any(a, 4, st, SHMEM_CMP_EQ, 4L) == 3 &&
            shmem_test_some(a, 4, idx, st, SHMEM_CMP_LT, 4L) == 2, "generic waits");
    shmem_wait_until_all_vector(a, 4, st, SHMEM_CMP_EQ, cmps);
    T_CHECK(shmem_wait_until_any_vector(a, 4, st, SHMEM_CMP_EQ, cmps) < 4 &&
            shmem_wait_until_some_vector(a, 4, idx, st, SHMEM_CMP_EQ, cmps) == 4 &&
            shmem_test_all_vector(a, 4, st, SHMEM_CMP_EQ, cmps) &&
            shmem_test_any_vector(a, 4, st, SHMEM_CMP_NE, cmps) == SIZE_MAX &&
            shmem_test_some_vector(a, 4, idx, st, SHMEM_CMP_NE, cmps) == 0, "generic vector waits");
    shmem_wait(&a[0], 0L);
    long old = shmem_fadd(&a[0], 1L, me) + shmem_finc(&a[0], me) + shmem_cswap(&a[0], 14L, 0L, me) +
               shmem_swap(&a[0], 1L, me) + shmem_fetch(&a[0], me);
    shmem_add(&a[0], 1L, me);
    shmem_inc(&a[0], me);
    shmem_set(&b[0], 3L, me);
    shmem_quiet();
    T_CHECK(old == 12 + 13 + 14 + 0 + 1 && a[0] == 3 && b[0] == 3, "deprecated generics");
    shmem_barrier_all();
}

void t_generic(void)
{
    every_form();
    int right = T_RIGHT, left = T_LEFT, n = T_N;
    GEN(int)
    GEN(double)
    GEN(unsigned char)
    GEN(long long)
    GEN_AMO(int)
    GEN_AMO(unsigned long)
    GEN_AMO(long long)
    static long flag;
    shmem_atomic_set(&flag, 5L, right);
    shmem_wait_until(&flag, SHMEM_CMP_EQ, 5L);
    T_CHECK(shmem_test(&flag, SHMEM_CMP_EQ, 5L), "wait_until/test");
    shmem_barrier_all();
    unsigned int bits = 0;
    static unsigned int ub;
    shmem_atomic_fetch_or_nbi(&bits, &ub, 1u, right);
    shmem_quiet();
    shmem_barrier_all();
    T_CHECK(ub == 1u, "generic atomic_fetch_or_nbi");
    (void)bits;
}
