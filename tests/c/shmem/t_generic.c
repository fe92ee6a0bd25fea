// SPDX-License-Identifier: MIT
/*
 * The C11 type-generic interfaces: the same calls on several types pick
 * the typed routines (checked by their effect), with and without a context.
 */
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

void t_generic(void)
{
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
