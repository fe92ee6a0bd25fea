// SPDX-License-Identifier: MIT
/*
 * Reductions: the 1.5 team forms (shmem_TYPENAME_OP_reduce) over the
 * reduction type tables, and the deprecated 1.3 *_to_all forms over active
 * sets.  One element-wise combiner per (type, operator), generated from the
 * tables; the algorithm is hps_shmem_coll_reduce (coll.c).  pWrk is not needed
 * (the library has its own buffer) and is ignored.
 */
#define _GNU_SOURCE
#include "coll.h"

#define OP_and(a, b) ((a) & (b))
#define OP_or(a, b) ((a) | (b))
#define OP_xor(a, b) ((a) ^ (b))
#define OP_min(a, b) ((b) < (a) ? (b) : (a))
#define OP_max(a, b) ((b) > (a) ? (b) : (a))
#define OP_sum(a, b) ((a) + (b))
#define OP_prod(a, b) ((a) * (b))

#define DEF_COMBINE(T, N, OP) \
    static void combine_##N##_##OP(void *acc_, const void *in_, size_t n) \
    { \
        T *acc = acc_; \
        const T *in = in_; \
        for (size_t i = 0; i < n; i++) \
            acc[i] = OP_##OP(acc[i], in[i]); \
    }

#define DEF_REDUCE1(T, N, OP) \
    DEF_COMBINE(T, N, OP) \
    HPS_API int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, \
                                          size_t nreduce) \
    { \
        hps_shmem_group_t g; \
        hps_shmem_group_team(__func__, &g, team); \
        hps_shmem_coll_reduce(__func__, &g, dest, source, nreduce, sizeof(T), combine_##N##_##OP); \
        return 0; \
    }
#define DEF_REDUCE_BIT(T, N, A) DEF_REDUCE1(T, N, and) DEF_REDUCE1(T, N, or) DEF_REDUCE1(T, N, xor)
#define DEF_REDUCE_ORD(T, N, A) DEF_REDUCE1(T, N, min) DEF_REDUCE1(T, N, max)
#define DEF_REDUCE_ARITH(T, N, A) DEF_REDUCE1(T, N, sum) DEF_REDUCE1(T, N, prod)
HPS_SHMEM_REDUCE_BIT_TYPES(DEF_REDUCE_BIT, _)
HPS_SHMEM_REDUCE_ORD_TYPES(DEF_REDUCE_ORD, _)
HPS_SHMEM_REDUCE_ORD_TYPES(DEF_REDUCE_ARITH, _)
HPS_SHMEM_REDUCE_CPLX_TYPES(DEF_REDUCE_ARITH, _)

/* ---- 1.3 *_to_all ------------------------------------------------------------------ */

#define DEF_TOALL(T, N, OP) \
    HPS_API void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, \
                                           int PE_start, int logPE_stride, int PE_size, \
                                           T *pWrk, long *pSync) \
    { \
        hps_shmem_group_t g; \
        (void)pWrk; \
        hps_shmem_group_aset(__func__, &g, PE_start, logPE_stride, PE_size, pSync); \
        if (nreduce < 0) \
            hps_shmem_fatal(__func__, "nreduce %d is negative", nreduce); \
        hps_shmem_coll_reduce(__func__, &g, dest, source, (size_t)nreduce, sizeof(T), \
                        combine_##N##_##OP); \
    }
/* The bitwise 1.3 rows (short, int, long, long long) have no 1.5 combiner
 * under those names: they get their own. */
#define DEF_TOALL_BIT(T, N, A) \
    DEF_COMBINE(T, N, and) DEF_COMBINE(T, N, or) DEF_COMBINE(T, N, xor) \
    DEF_TOALL(T, N, and) DEF_TOALL(T, N, or) DEF_TOALL(T, N, xor)
#define DEF_TOALL_ORD(T, N, A) \
    DEF_TOALL(T, N, min) DEF_TOALL(T, N, max) DEF_TOALL(T, N, sum) DEF_TOALL(T, N, prod)
#define DEF_TOALL_ARITH(T, N, A) DEF_TOALL(T, N, sum) DEF_TOALL(T, N, prod)
HPS_SHMEM_TOALL_BIT_TYPES(DEF_TOALL_BIT, _)
HPS_SHMEM_TOALL_ORD_TYPES(DEF_TOALL_ORD, _)
HPS_SHMEM_REDUCE_CPLX_TYPES(DEF_TOALL_ARITH, _)

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
