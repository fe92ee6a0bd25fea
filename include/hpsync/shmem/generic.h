/* SPDX-License-Identifier: MIT */
/*
 * hpsync/shmem/generic.h - OpenSHMEM's C11 type-generic interfaces
 * (included by <shmem.h> in C11 and later; do not include directly).
 *
 * shmem_put(dest, source, nelems, pe) picks shmem_TYPENAME_put from the type
 * of *dest.  Routines with a context form take an optional leading ctx: the
 * argument count chooses shmem_put or shmem_ctx_put, then _Generic the
 * type.  shmem_sync(team) is the 1.5 team sync; with four arguments it is
 * the deprecated active-set routine of the same name.
 *
 * The association lists come from the type tables in <shmem.h>.  Every row
 * of HPS_SHMEM_<TABLE>_C, whose types are distinct, is one association of
 * the outer selection; its default is a chain of nested selections, one per
 * row of HPS_SHMEM_<TABLE>_FIX, so a fixed-width type that is an alias of a type
 * listed earlier (int32_t is int on Linux) is never a second association,
 * and one that is not (int32_t where the table lists no int) is still
 * found.  Every association is compiled, selected or not, so the innermost
 * selection needs a default too: hps_shmem_type_not_in_table, a function
 * that exists nowhere, whose call GCC and clang refuse at compile time (and
 * any other compiler at link time): a type outside the table does not build.
 */
#ifndef HPSYNC_SHMEM_GENERIC_H
#define HPSYNC_SHMEM_GENERIC_H

#define HPS_SHMEM_NARGS(...) HPS_SHMEM_NARGS_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define HPS_SHMEM_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, n, ...) n
#define HPS_SHMEM_CAT(a, b) HPS_SHMEM_CAT_(a, b)
#define HPS_SHMEM_CAT_(a, b) a##b
#define HPS_SHMEM_ID(...) __VA_ARGS__
#define HPS_SHMEM_APPLY(m, args) m args

#if defined(__GNUC__) || defined(__clang__)
void hps_shmem_type_not_in_table(const volatile void *, ...)
    __attribute__((error("the argument's type is not in this OpenSHMEM routine's type table")));
#else
void hps_shmem_type_not_in_table(const volatile void *, ...);
#endif

/*
 * The selection for the type of *(a).  TAB is a table's stem
 * (HPS_SHMEM_RMA ...), FORM HPS_SHMEM_PLAIN (shmem_TYPENAME<S>) or
 * HPS_SHMEM_CTX (shmem_ctx_TYPENAME<S>), S the suffix (_put, _atomic_and
 * ...).  Stems and forms are tokens no macro has as its name, so a
 * program's own macros cannot change them on the way through.
 */
#define HPS_SHMEM_SEL(TAB, FORM, S, a) \
    _Generic(*(a) TAB##_C(FORM##_GA, S) TAB##_FIX(FORM##_GN, (S, a)) \
             , default: hps_shmem_type_not_in_table TAB##_FIX(HPS_SHMEM_GCLOSE, _))
/* A _C row: one association. */
#define HPS_SHMEM_PLAIN_GA(T, N, S) , T: shmem_##N##S
#define HPS_SHMEM_CTX_GA(T, N, S) , T: shmem_ctx_##N##S
/* A _FIX row (A is (S, a)): a nested selection in the default of the one
 * before, left open; HPS_SHMEM_GCLOSE closes one per row. */
#define HPS_SHMEM_PLAIN_GN(T, N, SA) HPS_SHMEM_APPLY(HPS_SHMEM_PLAIN_GN_, (T, N, HPS_SHMEM_ID SA))
#define HPS_SHMEM_CTX_GN(T, N, SA) HPS_SHMEM_APPLY(HPS_SHMEM_CTX_GN_, (T, N, HPS_SHMEM_ID SA))
#define HPS_SHMEM_PLAIN_GN_(T, N, S, a) , default: _Generic(*(a), T: shmem_##N##S
#define HPS_SHMEM_CTX_GN_(T, N, S, a) , default: _Generic(*(a), T: shmem_ctx_##N##S
#define HPS_SHMEM_GCLOSE(T, N, A) )

/*
 * Routines with an optional context: HPS_SHMEM_G(TAB, SUFFIX, B, args...)
 * where B is the argument count without a context.  With B arguments the
 * first one's type picks shmem_TYPENAME<SUFFIX>; with B + 1 the first is
 * the context and the second's type picks shmem_ctx_TYPENAME<SUFFIX>.
 */
#define HPS_SHMEM_PLAIN_G(TAB, SUF, a, ...) HPS_SHMEM_SEL(TAB, HPS_SHMEM_PLAIN, SUF, a)(a, __VA_ARGS__)
#define HPS_SHMEM_CTX_G(TAB, SUF, c, a, ...) HPS_SHMEM_SEL(TAB, HPS_SHMEM_CTX, SUF, a)(c, a, __VA_ARGS__)
/* HPS_SHMEM_FORM_<B>_<n>: which of the two a call with n arguments is. */
#define HPS_SHMEM_FORM_2_2 HPS_SHMEM_PLAIN
#define HPS_SHMEM_FORM_2_3 HPS_SHMEM_CTX
#define HPS_SHMEM_FORM_3_3 HPS_SHMEM_PLAIN
#define HPS_SHMEM_FORM_3_4 HPS_SHMEM_CTX
#define HPS_SHMEM_FORM_4_4 HPS_SHMEM_PLAIN
#define HPS_SHMEM_FORM_4_5 HPS_SHMEM_CTX
#define HPS_SHMEM_FORM_5_5 HPS_SHMEM_PLAIN
#define HPS_SHMEM_FORM_5_6 HPS_SHMEM_CTX
#define HPS_SHMEM_FORM_6_6 HPS_SHMEM_PLAIN
#define HPS_SHMEM_FORM_6_7 HPS_SHMEM_CTX
#define HPS_SHMEM_FORM_7_7 HPS_SHMEM_PLAIN
#define HPS_SHMEM_FORM_7_8 HPS_SHMEM_CTX
#define HPS_SHMEM_FORM(B, n) HPS_SHMEM_CAT(HPS_SHMEM_FORM_, HPS_SHMEM_CAT(B, HPS_SHMEM_CAT(_, n)))
#define HPS_SHMEM_G(TAB, SUF, B, ...) \
    HPS_SHMEM_CAT(HPS_SHMEM_FORM(B, HPS_SHMEM_NARGS(__VA_ARGS__)), _G)(TAB, SUF, __VA_ARGS__)

/* RMA: typed on *dest (*source for g). */
#define shmem_put(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _put, 4, __VA_ARGS__)
#define shmem_get(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _get, 4, __VA_ARGS__)
#define shmem_put_nbi(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _put_nbi, 4, __VA_ARGS__)
#define shmem_get_nbi(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _get_nbi, 4, __VA_ARGS__)
#define shmem_p(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _p, 3, __VA_ARGS__)
#define shmem_g(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _g, 2, __VA_ARGS__)
#define shmem_iput(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _iput, 6, __VA_ARGS__)
#define shmem_iget(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _iget, 6, __VA_ARGS__)
#define shmem_put_signal(...) HPS_SHMEM_G(HPS_SHMEM_RMA, _put_signal, 7, __VA_ARGS__)
#define shmem_put_signal_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_RMA, _put_signal_nbi, 7, __VA_ARGS__)

/* AMOs: typed on *dest (*source for fetch; *fetch for the nbi forms). */
#define shmem_atomic_fetch(...) HPS_SHMEM_G(HPS_SHMEM_AMO_EXT, _atomic_fetch, 2, __VA_ARGS__)
#define shmem_atomic_set(...) HPS_SHMEM_G(HPS_SHMEM_AMO_EXT, _atomic_set, 3, __VA_ARGS__)
#define shmem_atomic_swap(...) HPS_SHMEM_G(HPS_SHMEM_AMO_EXT, _atomic_swap, 3, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_compare_swap, 4, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_fetch_inc, 2, __VA_ARGS__)
#define shmem_atomic_inc(...) HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_inc, 2, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_fetch_add, 3, __VA_ARGS__)
#define shmem_atomic_add(...) HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_add, 3, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_fetch_and, 3, __VA_ARGS__)
#define shmem_atomic_and(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_and, 3, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_fetch_or, 3, __VA_ARGS__)
#define shmem_atomic_or(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_or, 3, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_fetch_xor, 3, __VA_ARGS__)
#define shmem_atomic_xor(...) HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_xor, 3, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_EXT, _atomic_fetch_nbi, 3, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_EXT, _atomic_swap_nbi, 4, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_compare_swap_nbi, 5, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_fetch_inc_nbi, 3, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_STD, _atomic_fetch_add_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_fetch_and_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_fetch_or_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
    HPS_SHMEM_G(HPS_SHMEM_AMO_BIT, _atomic_fetch_xor_nbi, 4, __VA_ARGS__)

/* Deprecated (1.3) generic AMO names: no context forms. */
#define shmem_fadd(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO, HPS_SHMEM_PLAIN, _fadd, d)(d, v, pe)
#define shmem_finc(d, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO, HPS_SHMEM_PLAIN, _finc, d)(d, pe)
#define shmem_add(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO, HPS_SHMEM_PLAIN, _add, d)(d, v, pe)
#define shmem_inc(d, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO, HPS_SHMEM_PLAIN, _inc, d)(d, pe)
#define shmem_cswap(d, k, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO, HPS_SHMEM_PLAIN, _cswap, d)(d, k, v, pe)
#define shmem_swap(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_EXT, HPS_SHMEM_PLAIN, _swap, d)(d, v, pe)
#define shmem_fetch(s, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_EXT, HPS_SHMEM_PLAIN, _fetch, s)(s, pe)
#define shmem_set(d, v, pe) HPS_SHMEM_SEL(HPS_SHMEM_OLD_AMO_EXT, HPS_SHMEM_PLAIN, _set, d)(d, v, pe)

/* Point-to-point synchronisation: the type of *ivar(s). */
#define HPS_SHMEM_GSYNC(SUF, a) HPS_SHMEM_SEL(HPS_SHMEM_SYNC, HPS_SHMEM_PLAIN, SUF, a)
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
#define HPS_SHMEM_GCOLL(TAB, SUF, t, d) HPS_SHMEM_SEL(TAB, HPS_SHMEM_PLAIN, SUF, d)
#define shmem_broadcast(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_RMA, _broadcast, t, d)(t, d, __VA_ARGS__)
#define shmem_collect(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_RMA, _collect, t, d)(t, d, __VA_ARGS__)
#define shmem_fcollect(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_RMA, _fcollect, t, d)(t, d, __VA_ARGS__)
#define shmem_alltoall(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_RMA, _alltoall, t, d)(t, d, __VA_ARGS__)
#define shmem_alltoalls(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_RMA, _alltoalls, t, d)(t, d, __VA_ARGS__)
#define shmem_and_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_BIT, _and_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_or_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_BIT, _or_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_xor_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_BIT, _xor_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_min_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ORD, _min_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_max_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ORD, _max_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_sum_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ARITH, _sum_reduce, t, d)(t, d, __VA_ARGS__)
#define shmem_prod_reduce(t, d, ...) HPS_SHMEM_GCOLL(HPS_SHMEM_REDUCE_ARITH, _prod_reduce, t, d)(t, d, __VA_ARGS__)

/* Teams: shmem_sync(team) is 1.5's generic name of shmem_team_sync; the
 * deprecated active-set shmem_sync(PE_start, logPE_stride, PE_size, pSync)
 * keeps its four arguments (the parentheses call the function, not this
 * macro). */
#define shmem_sync(...) HPS_SHMEM_CAT(HPS_SHMEM_SYNC_, HPS_SHMEM_NARGS(__VA_ARGS__))(__VA_ARGS__)
#define HPS_SHMEM_SYNC_1(team) shmem_team_sync(team)
#define HPS_SHMEM_SYNC_4(start, log_stride, size, psync) (shmem_sync)(start, log_stride, size, psync)

#endif /* HPSYNC_SHMEM_GENERIC_H */
