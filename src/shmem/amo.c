// SPDX-License-Identifier: MIT
/*
 * Atomic memory operations for the AMO type tables (standard, extended,
 * bitwise), their context twins and nbi fetching forms, and the deprecated
 * 1.3 names (fadd, finc, add, inc, cswap, swap, fetch, set).  Each routine
 * is one hps_amo() (internal.h): an atomic instruction on the peer's
 * mapping on-node, one libfabric atomic off-node.  Floating types travel as
 * their bit patterns (fetch, set and swap only move bits).
 */
#define _GNU_SOURCE
#include "internal.h"


/* A fetching AMO as an expression of type T. */
#define FETCHING(T, op, dest, val, cmp, pe) ({ \
        T v_ = (val), c_ = (cmp), r_; \
        hps_shmem_ctx_amo(ctx_, __func__, (op), (void *)(dest), &v_, &c_, &r_, sizeof(T), (pe), 0); \
        r_; })
/* A non-fetching one (result NULL), and the nbi fetching form into *fetch. */
#define NONFETCHING(T, op, dest, val, pe) do { \
        T v_ = (val); \
        hps_shmem_ctx_amo(ctx_, __func__, (op), (dest), &v_, NULL, NULL, sizeof(T), (pe), 0); \
    } while (0)
#define FETCH_NBI(T, op, fetch, dest, val, cmp, pe) do { \
        T v_ = (val), c_ = (cmp); \
        hps_shmem_ctx_amo(ctx_, __func__, (op), (void *)(dest), &v_, &c_, (fetch), sizeof(T), (pe), 1); \
    } while (0)
/* The deprecated names have no context twin: a fetching one returning
 * EXPR, a non-fetching one running STMT. */
#define OLD(R, NAME, PARAMS, EXPR) \
    HPS_API R NAME PARAMS { const shmem_ctx_t ctx_ = SHMEM_CTX_DEFAULT; return EXPR; }
#define OLDV(NAME, PARAMS, STMT) \
    HPS_API void NAME PARAMS { const shmem_ctx_t ctx_ = SHMEM_CTX_DEFAULT; STMT; }

#define DEF_AMO_EXT(T, N, A) \
    BOTH_R(T, N##_atomic_fetch, (const T *source, int pe), \
           FETCHING(T, HPS_AOP_FETCH, source, 0, 0, pe)) \
    BOTH(N##_atomic_set, (T *dest, T value, int pe), \
         NONFETCHING(T, HPS_AOP_SET, dest, value, pe)) \
    BOTH_R(T, N##_atomic_swap, (T *dest, T value, int pe), \
           FETCHING(T, HPS_AOP_SWAP, dest, value, 0, pe)) \
    BOTH(N##_atomic_fetch_nbi, (T *fetch, const T *source, int pe), \
         FETCH_NBI(T, HPS_AOP_FETCH, fetch, source, 0, 0, pe)) \
    BOTH(N##_atomic_swap_nbi, (T *fetch, T *dest, T value, int pe), \
         FETCH_NBI(T, HPS_AOP_SWAP, fetch, dest, value, 0, pe))
HPS_SHMEM_AMO_EXT_TYPES(DEF_AMO_EXT, _)

#define DEF_AMO_STD(T, N, A) \
    BOTH_R(T, N##_atomic_compare_swap, (T *dest, T cond, T value, int pe), \
           FETCHING(T, HPS_AOP_CSWAP, dest, value, cond, pe)) \
    BOTH_R(T, N##_atomic_fetch_inc, (T *dest, int pe), \
           FETCHING(T, HPS_AOP_ADD, dest, 1, 0, pe)) \
    BOTH(N##_atomic_inc, (T *dest, int pe), NONFETCHING(T, HPS_AOP_ADD, dest, 1, pe)) \
    BOTH_R(T, N##_atomic_fetch_add, (T *dest, T value, int pe), \
           FETCHING(T, HPS_AOP_ADD, dest, value, 0, pe)) \
    BOTH(N##_atomic_add, (T *dest, T value, int pe), \
         NONFETCHING(T, HPS_AOP_ADD, dest, value, pe)) \
    BOTH(N##_atomic_compare_swap_nbi, (T *fetch, T *dest, T cond, T value, int pe), \
         FETCH_NBI(T, HPS_AOP_CSWAP, fetch, dest, value, cond, pe)) \
    BOTH(N##_atomic_fetch_inc_nbi, (T *fetch, T *dest, int pe), \
         FETCH_NBI(T, HPS_AOP_ADD, fetch, dest, 1, 0, pe)) \
    BOTH(N##_atomic_fetch_add_nbi, (T *fetch, T *dest, T value, int pe), \
         FETCH_NBI(T, HPS_AOP_ADD, fetch, dest, value, 0, pe))
HPS_SHMEM_AMO_STD_TYPES(DEF_AMO_STD, _)

#define DEF_AMO_BIT1(T, N, OP, AOP) \
    BOTH_R(T, N##_atomic_fetch_##OP, (T *dest, T value, int pe), \
           FETCHING(T, AOP, dest, value, 0, pe)) \
    BOTH(N##_atomic_##OP, (T *dest, T value, int pe), NONFETCHING(T, AOP, dest, value, pe)) \
    BOTH(N##_atomic_fetch_##OP##_nbi, (T *fetch, T *dest, T value, int pe), \
         FETCH_NBI(T, AOP, fetch, dest, value, 0, pe))
#define DEF_AMO_BIT(T, N, A) \
    DEF_AMO_BIT1(T, N, and, HPS_AOP_AND) DEF_AMO_BIT1(T, N, or, HPS_AOP_OR) \
    DEF_AMO_BIT1(T, N, xor, HPS_AOP_XOR)
HPS_SHMEM_AMO_BIT_TYPES(DEF_AMO_BIT, _)

/* ---- deprecated (1.3) names ------------------------------------------------------ */

#define DEF_OLD_AMO(T, N, A) \
    OLD(T, shmem_##N##_fadd, (T *dest, T value, int pe), FETCHING(T, HPS_AOP_ADD, dest, value, 0, pe)) \
    OLD(T, shmem_##N##_finc, (T *dest, int pe), FETCHING(T, HPS_AOP_ADD, dest, 1, 0, pe)) \
    OLDV(shmem_##N##_add, (T *dest, T value, int pe), NONFETCHING(T, HPS_AOP_ADD, dest, value, pe)) \
    OLDV(shmem_##N##_inc, (T *dest, int pe), NONFETCHING(T, HPS_AOP_ADD, dest, 1, pe)) \
    OLD(T, shmem_##N##_cswap, (T *dest, T cond, T value, int pe), \
        FETCHING(T, HPS_AOP_CSWAP, dest, value, cond, pe))
HPS_SHMEM_OLD_AMO_TYPES(DEF_OLD_AMO, _)

#define DEF_OLD_AMO_EXT(T, N, A) \
    OLD(T, shmem_##N##_swap, (T *dest, T value, int pe), FETCHING(T, HPS_AOP_SWAP, dest, value, 0, pe)) \
    OLD(T, shmem_##N##_fetch, (const T *source, int pe), FETCHING(T, HPS_AOP_FETCH, source, 0, 0, pe)) \
    OLDV(shmem_##N##_set, (T *dest, T value, int pe), NONFETCHING(T, HPS_AOP_SET, dest, value, pe))
HPS_SHMEM_OLD_AMO_EXT_TYPES(DEF_OLD_AMO_EXT, _)

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
