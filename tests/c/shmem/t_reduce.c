// SPDX-License-Identifier: MIT
/*
 * Reductions: every (type, operator) of the reduction tables on the world
 * team and the team of the odd PEs (world when alone), out of place and in
 * place, with values whose results are exact in every type.
 */
#include <complex.h>
#include "shtest.h"

#define NR 5

/* Team PE j's element i for each operator family, and the expected result. */
#define SRC_arith(T, j, i) ((T)((j) + (i) + 1))
#define SRC_prod(T, j, i) ((T)(((j) + (i)) % 2 + 1))
/* A bit per PE (up to 4 PEs), one bit all have, and i in bits 4-5. */
#define SRC_bit(T, j, i) ((T)((1u << ((j) % 4)) | 0x40u | (((unsigned)(i) % 4) << 4)))

static int odd_count(int tn, int i)
{
    int c = 0;
    for (int j = 0; j < tn; j++)
        c += (j + i) % 2;
    return c;
}

/* Allocation is world-collective; only team members reduce. */
#define RUN(T, N, OP, SRCM, EXPECT) { \
        T *src = shmem_malloc(NR * sizeof(T)), *dst = shmem_malloc(NR * sizeof(T)); \
        for (int in_place = 0; team != SHMEM_TEAM_INVALID && in_place < 2; in_place++) { \
            T *d = in_place ? src : dst; \
            for (int i = 0; i < NR; i++) \
                src[i] = SRCM(T, tme, i); \
            T_CHECK(shmem_##N##_##OP##_reduce(team, d, src, NR) == 0, "rc"); \
            for (int i = 0; i < NR; i++) \
                T_CHECK(d[i] == (T)(EXPECT), "%s %s_reduce[%d] (%d PEs, in place %d)", #T, #OP, \
                        i, tn, in_place); \
        } \
        shmem_free(dst); \
        shmem_free(src); \
    }

#define SUM_EXPECT (tn * (i + 1) + tn * (tn - 1) / 2)
#define PROD_EXPECT (1 << odd_count(tn, i))
#define COMMON_BITS (0x40u | (((unsigned)i % 4) << 4))
#define PE_BITS ((1u << (tn < 4 ? tn : 4)) - 1u)
#define AND_EXPECT (COMMON_BITS | (tn == 1 ? 1u : 0u))
#define OR_EXPECT (COMMON_BITS | PE_BITS)
#define XOR_EXPECT (((tn % 2) ? COMMON_BITS : 0u) | PE_BITS)

#define TEST_BIT(T, N, A) \
    RUN(T, N, and, SRC_bit, AND_EXPECT) RUN(T, N, or, SRC_bit, OR_EXPECT) \
    RUN(T, N, xor, SRC_bit, XOR_EXPECT)
#define TEST_ORD(T, N, A) \
    RUN(T, N, min, SRC_arith, i + 1) RUN(T, N, max, SRC_arith, tn + i)
#define TEST_ARITH(T, N, A) \
    RUN(T, N, sum, SRC_arith, SUM_EXPECT) RUN(T, N, prod, SRC_prod, PROD_EXPECT)

static void all_ops(shmem_team_t team)
{
    int tn = shmem_team_n_pes(team), tme = shmem_team_my_pe(team);
    HPS_SHMEM_REDUCE_BIT_TYPES(TEST_BIT, _)
    HPS_SHMEM_REDUCE_ORD_TYPES(TEST_ORD, _)
    HPS_SHMEM_REDUCE_ORD_TYPES(TEST_ARITH, _)
    HPS_SHMEM_REDUCE_CPLX_TYPES(TEST_ARITH, _)
    if (team != SHMEM_TEAM_INVALID)
        shmem_team_sync(team);
}

void t_reduce(void)
{
    int n = T_N;
    all_ops(SHMEM_TEAM_WORLD);
    shmem_team_t odds = SHMEM_TEAM_INVALID;
    int start = n > 1, size = n > 1 ? n / 2 : 1;
    T_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &odds) == 0,
            "split odds");
    all_ops(odds);
    if (odds != SHMEM_TEAM_INVALID)
        shmem_team_destroy(odds);
    /* A large reduction crosses the library's chunk size. */
    enum { BIG = 100000 };
    long *s = shmem_malloc(BIG * sizeof *s), *d = shmem_malloc(BIG * sizeof *d);
    for (long i = 0; i < BIG; i++)
        s[i] = i + T_ME;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, s, BIG);
    for (long i = 0; i < BIG; i += 997)
        T_CHECK(d[i] == i * n + (long)n * (n - 1) / 2, "long sum of %d at %ld", BIG, i);
    shmem_free(d);
    shmem_free(s);
}
