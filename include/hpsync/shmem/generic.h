/* SPDX-License-Identifier: MIT */
/*
 * hpsync/shmem/generic.h - OpenSHMEM's C11 type-generic interfaces
 * (included by <shmem.h> in C11 and later; do not include directly).
 *
 * shmem_put(dest, source, nelems, pe) picks shmem_TYPENAME_put from the type
 * of *dest.  Routines with a context form take an optional leading ctx: the
 * argument count chooses shmem_put or shmem_ctx_put, then _Generic the
 * type.  The association lists come from the type tables in <shmem.h>, each
 * row contributing ", TYPE: shmem_TYPENAME<suffix>".  Only the rows whose C
 * types are distinct appear (int32_t is int, size_t is unsigned long ...).
 */
#ifndef HPSYNC_SHMEM_GENERIC_H
#define HPSYNC_SHMEM_GENERIC_H

#define HPS_SHMEM_NARGS(...) HPS_SHMEM_NARGS_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define HPS_SHMEM_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, n, ...) n
#define HPS_SHMEM_CAT(a, b) HPS_SHMEM_CAT_(a, b)
#define HPS_SHMEM_CAT_(a, b) a##b

/* One association: plain and context-taking routine names. */
#define HPS_SHMEM_GA(T, N, S) , T: shmem_##N##S
#define HPS_SHMEM_GCA(T, N, S) , T: shmem_ctx_##N##S

/*
 * Routines with an optional context: HPS_SHMEM_G(TABLE, SUFFIX, B, args...)
 * where B is the argument count without a context.  With B arguments the
 * first one's type picks shmem_TYPENAME<SUFFIX>; with B + 1 the first is
 * the context and the second's type picks shmem_ctx_TYPENAME<SUFFIX>.
 */
#define HPS_SHMEM_SEL(TABLE, SUF, a) _Generic(*(a) TABLE(HPS_SHMEM_GA, SUF))
#define HPS_SHMEM_SELC(TABLE, SUF, a) _Generic(*(a) TABLE(HPS_SHMEM_GCA, SUF))
#define HPS_SHMEM_G_PLAIN(TABLE, SUF, a, ...) HPS_SHMEM_SEL(TABLE, SUF, a)(a, __VA_ARGS__)
#define HPS_SHMEM_G_CTX(TABLE, SUF, c, a, ...) HPS_SHMEM_SELC(TABLE, SUF, a)(c, a, __VA_ARGS__)
/* HPS_SHMEM_FORM_<B>_<n>: which of the two a call with n arguments is. */
#define HPS_SHMEM_FORM_2_2 PLAIN
#define HPS_SHMEM_FORM_2_3 CTX
#define HPS_SHMEM_FORM_3_3 PLAIN
#define HPS_SHMEM_FORM_3_4 CTX
#define HPS_SHMEM_FORM_4_4 PLAIN
#define HPS_SHMEM_FORM_4_5 CTX
#define HPS_SHMEM_FORM_5_5 PLAIN
#define HPS_SHMEM_FORM_5_6 CTX
#define HPS_SHMEM_FORM_6_6 PLAIN
#define HPS_SHMEM_FORM_6_7 CTX
#define HPS_SHMEM_FORM_7_7 PLAIN
#define HPS_SHMEM_FORM_7_8 CTX
#define HPS_SHMEM_FORM(B, n) HPS_SHMEM_CAT(HPS_SHMEM_FORM_, HPS_SHMEM_CAT(B, HPS_SHMEM_CAT(_, n)))
#define HPS_SHMEM_G(TABLE, SUF, B, ...) \
    HPS_SHMEM_CAT(HPS_SHMEM_G_, HPS_SHMEM_FORM(B, HPS_SHMEM_NARGS(__VA_ARGS__)))(TABLE, SUF, __VA_ARGS__)

/* RMA: typed on *dest (*source for g). */
#define shmem_put(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _put, 4, __VA_ARGS__)
#define shmem_get(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _get, 4, __VA_ARGS__)
#define shmem_put_nbi(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _put_nbi, 4, __VA_ARGS__)
#define shmem_get_nbi(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _get_nbi, 4, __VA_ARGS__)
#define shmem_p(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _p, 3, __VA_ARGS__)
#define shmem_g(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _g, 2, __VA_ARGS__)
#define shmem_iput(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _iput, 6, __VA_ARGS__)
#define shmem_iget(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _iget, 6, __VA_ARGS__)
#define shmem_put_signal(...) HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _put_signal, 7, __VA_ARGS__)
#define shmem_put_signal_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_STD_TYPES, _put_signal_nbi, 7, __VA_ARGS__)

/* AMOs: typed on *dest (*source for fetch; *fetch for the nbi forms). */
#define shmem_atomic_fetch(...) HPS_SHMEM_G(HPS_SHMEM_AMO_EXT_C, _atomic_fetch, 2, __VA_ARGS__)
#define shmem_atomic_set(...) HPS_SHMEM_G(HPS_SHMEM_AMO_EXT_C, _atomic_set, 3, __VA_ARGS__)
#define shmem_atomic_swap(...) HPS_SHMEM_G(HPS_SHMEM_AMO_EXT_C, _atomic_swap, 3, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_compare_swap, 4, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_fetch_inc, 2, __VA_ARGS__)
#define shmem_atomic_inc(...) HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_inc, 2, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_fetch_add, 3, __VA_ARGS__)
#define shmem_atomic_add(...) HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_add, 3, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_fetch_and, 3, __VA_ARGS__)
#define shmem_atomic_and(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_and, 3, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_fetch_or, 3, __VA_ARGS__)
#define shmem_atomic_or(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_or, 3, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_fetch_xor, 3, __VA_ARGS__)
#define shmem_atomic_xor(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_xor, 3, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_EXT_C, _atomic_fetch_nbi, 3, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_EXT_C, _atomic_swap_nbi, 4, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_compare_swap_nbi, 5, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_fetch_inc_nbi, 3, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD_C, _atomic_fetch_add_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_fetch_and_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_fetch_or_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT_C, _atomic_fetch_xor_nbi, 4, __VA_ARGS__)

/* Deprecated (1.3) generic AMO names: no context forms. */
#define shmem_fadd(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_TYPES, _fadd, d)(d, v, pe)
#define shmem_finc(d, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_TYPES, _finc, d)(d, pe)
#define shmem_add(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_TYPES, _add, d)(d, v, pe)
#define shmem_inc(d, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_TYPES, _inc, d)(d, pe)
#define shmem_cswap(d, k, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_TYPES, _cswap, d)(d, k, v, pe)
#define shmem_swap(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_EXT_TYPES, _swap, d)(d, v, pe)
#define shmem_fetch(s, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_EXT_TYPES, _fetch, s)(s, pe)
#define shmem_set(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_EXT_TYPES, _set, d)(d, v, pe)

/* Point-to-point synchronisation: the type of *ivar(s). */
#define HPS_SHMEM_GSYNC(SUF, a) HPS_SHMEM_SEL(HPS_SHMEM_SYNC_C, SUF, a)
#define shmem_wait_until(v, ...) HPS_SHMEM_GSYNC(_wait_until, v)(v, __VA_ARGS__)
#define shmem_wait_until_all(v, ...) HPS_SHMEM_GSYNC(_wait_until_all, v)(v, __VA_ARGS__)
#define shmem_wait_until_any(v, ...) HPS_SHMEM_GSYNC(_wait_until_any, v)(v, __VA_ARGS__)
#define shmem_wait_until_some(v, ...) HPS_SHMEM_GSYNC(_wait_until_some, v)(v, __VA_ARGS__)
#define shmem_wait_until_all_vector(v, ...) \
    HPS_SHMEM_GSYNC(_wait_until_all_vector, v)(v, __VA_ARGS__)
#define shmem_wait_until_any_vector(v, ...) \
    HPS_SHMEM_GSYNC(_wait_until_any_vector, v)(v, __VA_ARGS__)
#define shmem_wait_until_some_vector(v, ...) \
    HPS_SHMEM_GSYNC(_wait_until_some_vector, v)(v, __VA_ARGS__)
#define shmem_test(v, ...) HPS_SHMEM_GSYNC(_test, v)(v, __VA_ARGS__)
#define shmem_test_all(v, ...) HPS_SHMEM_GSYNC(_test_all, v)(v, __VA_ARGS__)
#define shmem_test_any(v, ...) HPS_SHMEM_GSYNC(_test_any, v)(v, __VA_ARGS__)
#define shmem_test_some(v, ...) HPS_SHMEM_GSYNC(_test_some, v)(v, __VA_ARGS__)
#define shmem_test_all_vector(v, ...) HPS_SHMEM_GSYNC(_test_all_vector, v)(v, __VA_ARGS__)
#define shmem_test_any_vector(v, ...) HPS_SHMEM_GSYNC(_test_any_vector, v)(v, __VA_ARGS__)
#define shmem_test_some_vector(v, ...) HPS_SHMEM_GSYNC(_test_some_vector, v)(v, __VA_ARGS__)
#define shmem_wait(v, ...) HPS_SHMEM_GSYNC(_wait, v)(v, __VA_ARGS__)

/* Collectives: (team, dest, ...); the type of *dest. */
#define HPS_SHMEM_GCOLL(TABLE, SUF, t, d) HPS_SHMEM_SEL(TABLE, SUF, d)
#define shmem_broadcast(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_STD_TYPES, _broadcast, t, d)(t, d, __VA_ARGS__)
#define shmem_collect(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_STD_TYPES, _collect, t, d)(t, d, __VA_ARGS__)
#define shmem_fcollect(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_STD_TYPES, _fcollect, t, d)(t, d, __VA_ARGS__)
#define shmem_alltoall(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_STD_TYPES, _alltoall, t, d)(t, d, __VA_ARGS__)
#define shmem_alltoalls(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_STD_TYPES, _alltoalls, t, d)(t, d, __VA_ARGS__)
#define shmem_and_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_BIT_C, _and_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_or_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_BIT_C, _or_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_xor_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_BIT_C, _xor_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_min_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ORD_C, _min_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_max_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ORD_C, _max_reduce, t, d)(t, d, __VA_ARGS__)
#define HPS_SHMEM_REDUCE_ARITH_C(X, A) HPS_SHMEM_REDUCE_ORD_C(X, A) HPS_SHMEM_REDUCE_CPLX_TYPES(X, A)
#define shmem_sum_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ARITH_C, _sum_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_prod_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ARITH_C, _prod_reduce, t, d)(t, d, __VA_ARGS__)

#endif /* HPSYNC_SHMEM_GENERIC_H */
