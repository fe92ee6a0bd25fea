// SPDX-License-Identifier: MIT
/*
 * Every C11 generic of OpenSHMEM 1.5 with every type its table lists, plain
 * and with a context where it has one.  The tables are written out here from
 * the specification (section 9: standard RMA types, standard, extended and
 * bitwise AMO types, point-to-point synchronization types, the reduction
 * table per operator), not taken from <shmem.h>, so the header is checked
 * against the specification rather than against itself: a type the header
 * rejects fails the build of this file.  Each call then runs and its effect
 * is checked, so a generic that picks a routine of another width (int8_t
 * handled as int, say) fails at run time.  Values are small integers, exact
 * in every type, char and float included.
 */
#include <complex.h>
#include <stdint.h>
#include <string.h>
#include "shtest.h"

/* ---- the specification's tables --------------------------------------------- */

#define SPEC_INTS_FIXED(X) X(int8_t) X(int16_t) X(int32_t) X(int64_t) \
    X(uint8_t) X(uint16_t) X(uint32_t) X(uint64_t) X(size_t)
/* Table 5: standard RMA types. */
#define SPEC_RMA(X) X(float) X(double) X(long double) X(char) X(signed char) X(short) X(int) \
    X(long) X(long long) X(unsigned char) X(unsigned short) X(unsigned int) X(unsigned long) \
    X(unsigned long long) SPEC_INTS_FIXED(X) X(ptrdiff_t)
/* Table 6: standard AMO types. */
#define SPEC_AMO_STD(X) X(int) X(long) X(long long) X(unsigned int) X(unsigned long) \
    X(unsigned long long) X(int32_t) X(int64_t) X(uint32_t) X(uint64_t) X(size_t) X(ptrdiff_t)
/* Table 7: extended AMO types. */
#define SPEC_AMO_EXT(X) X(float) X(double) SPEC_AMO_STD(X)
/* Table 8: bitwise AMO types. */
#define SPEC_AMO_BIT(X) X(unsigned int) X(unsigned long) X(unsigned long long) X(int32_t) \
    X(int64_t) X(uint32_t) X(uint64_t)
/* Table 10: point-to-point synchronization types. */
#define SPEC_SYNC(X) X(short) X(int) X(long) X(long long) X(unsigned short) X(unsigned int) \
    X(unsigned long) X(unsigned long long) X(int32_t) X(int64_t) X(uint32_t) X(uint64_t) \
    X(size_t) X(ptrdiff_t)
/* Table 11, per operator: AND/OR/XOR; MAX/MIN; SUM/PROD (the MAX/MIN rows
 * and the two complex ones). */
#define SPEC_RED_BIT(X) X(unsigned char) X(unsigned short) X(unsigned int) X(unsigned long) \
    X(unsigned long long) SPEC_INTS_FIXED(X)
#define SPEC_RED_ORD(X) X(char) X(signed char) X(short) X(int) X(long) X(long long) \
    X(ptrdiff_t) SPEC_RED_BIT(X) X(float) X(double) X(long double)
#define SPEC_RED_CPLX(X) X(double _Complex) X(float _Complex)

/* The PEs and the context every block below uses. */
static int me, n, right, left;
static shmem_ctx_t ctx;

/* ---- RMA (put, get, nbi, p, g, iput, iget, put_signal[_nbi]) ------------------ */

/* Slots of d written by the left neighbour: every form its own. */
#define RMA_SLOTS 30
#define RMA_T(T) { \
        typedef T ty; \
        ty *d = shmem_calloc(RMA_SLOTS, sizeof(ty)), src[4], out[4]; \
        uint64_t *sig = shmem_calloc(1, sizeof *sig); \
        for (int k = 0; k < 4; k++) \
            src[k] = (ty)(k + 1 + 2 * me); \
        shmem_put(d, src, 4, right); \
        shmem_put(ctx, d + 4, src, 4, right); \
        shmem_put_nbi(d + 8, src, 4, right); \
        shmem_put_nbi(ctx, d + 12, src, 4, right); \
        shmem_p(d + 16, src[0], right); \
        shmem_p(ctx, d + 17, src[1], right); \
        shmem_iput(d + 18, src, 2, 1, 2, right); \
        shmem_iput(ctx, d + 19, src + 2, 2, 1, 2, right); \
        shmem_put_signal(d + 22, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right); \
        shmem_put_signal(ctx, d + 24, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right); \
        shmem_put_signal_nbi(d + 26, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right); \
        shmem_put_signal_nbi(ctx, d + 28, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right); \
        shmem_quiet(); \
        shmem_ctx_quiet(ctx); \
        shmem_barrier_all(); \
        ty w[RMA_SLOTS]; \
        for (int k = 0; k < 16; k++) \
            w[k] = (ty)(k % 4 + 1 + 2 * left); \
        w[16] = (ty)(1 + 2 * left), w[17] = (ty)(2 + 2 * left); \
        for (int k = 0; k < 4; k++) \
            w[18 + k] = (ty)((k % 2) * 2 + k / 2 + 1 + 2 * left); \
        for (int k = 22; k < RMA_SLOTS; k++) \
            w[k] = (ty)(k % 2 + 1 + 2 * left); \
        for (int k = 0; k < RMA_SLOTS; k++) \
            T_CHECK(d[k] == w[k], "%s put forms: slot %d", #T, k); \
        T_CHECK(*sig == 4, "%s put_signal forms: signal %llu", #T, (unsigned long long)*sig); \
        /* Gets read back what this PE put on its right neighbour. */ \
        shmem_get(out, d, 4, right); \
        T_CHECK(!memcmp(out, src, sizeof src), "%s get", #T); \
        shmem_get(ctx, out, d + 4, 4, right); \
        T_CHECK(!memcmp(out, src, sizeof src), "%s ctx get", #T); \
        shmem_get_nbi(out, d + 8, 4, right); \
        shmem_quiet(); \
        T_CHECK(!memcmp(out, src, sizeof src), "%s get_nbi", #T); \
        shmem_get_nbi(ctx, out, d + 12, 4, right); \
        shmem_ctx_quiet(ctx); \
        T_CHECK(!memcmp(out, src, sizeof src), "%s ctx get_nbi", #T); \
        T_CHECK(shmem_g(d + 16, right) == src[0] && shmem_g(ctx, d + 17, right) == src[1], \
                "%s g", #T); \
        shmem_iget(out, d + 18, 1, 2, 2, right); \
        shmem_iget(ctx, out + 2, d + 19, 1, 2, 2, right); \
        T_CHECK(!memcmp(out, src, sizeof src), "%s iget", #T); \
        shmem_barrier_all(); \
        shmem_free(sig); \
        shmem_free(d); \
    }

/* ---- collectives on the standard RMA types ------------------------------------- */

/* PE p's source element j is p * 4 + j + 1 (at most 16: fits a char). */
#define COLL_T(T) { \
        typedef T ty; \
        ty *s = shmem_malloc((size_t)n * sizeof(ty)), *d = shmem_malloc((size_t)n * sizeof(ty)); \
        for (int j = 0; j < n; j++) \
            s[j] = (ty)(me * 4 + j + 1); \
        T_CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, d, s, 1, 0) == 0 && d[0] == (ty)1, \
                "%s broadcast", #T); \
        T_CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, d, s, 1) == 0, "%s fcollect", #T); \
        for (int p = 0; p < n; p++) \
            T_CHECK(d[p] == (ty)(p * 4 + 1), "%s fcollect[%d]", #T, p); \
        memset(d, 0, (size_t)n * sizeof(ty)); \
        T_CHECK(shmem_collect(SHMEM_TEAM_WORLD, d, s, 1) == 0, "%s collect", #T); \
        for (int p = 0; p < n; p++) \
            T_CHECK(d[p] == (ty)(p * 4 + 1), "%s collect[%d]", #T, p); \
        T_CHECK(shmem_alltoall(SHMEM_TEAM_WORLD, d, s, 1) == 0, "%s alltoall", #T); \
        for (int p = 0; p < n; p++) \
            T_CHECK(d[p] == (ty)(p * 4 + me + 1), "%s alltoall[%d]", #T, p); \
        memset(d, 0, (size_t)n * sizeof(ty)); \
        T_CHECK(shmem_alltoalls(SHMEM_TEAM_WORLD, d, s, 1, 1, 1) == 0, "%s alltoalls", #T); \
        for (int p = 0; p < n; p++) \
            T_CHECK(d[p] == (ty)(p * 4 + me + 1), "%s alltoalls[%d]", #T, p); \
        shmem_barrier_all(); \
        shmem_free(d); \
        shmem_free(s); \
    }

/* ---- AMOs ---------------------------------------------------------------------- */

/* Each PE's x[k] starts at k + 1 and is changed by the left neighbour only,
 * one form per slot; fetched values must be the slot's start. */
#define AMO_SETUP(T, SLOTS) \
        typedef T ty; \
        ty *x = shmem_malloc((SLOTS) * sizeof(ty)), f[SLOTS]; \
        for (int k = 0; k < (SLOTS); k++) \
            x[k] = (ty)(k + 1), f[k] = (ty)0; \
        shmem_barrier_all();
#define AMO_END \
        shmem_barrier_all(); \
        shmem_free(x);

#define AMO_STD_T(T) { \
        AMO_SETUP(T, 16) \
        shmem_atomic_add(&x[0], (ty)2, right); \
        shmem_atomic_add(ctx, &x[1], (ty)3, right); \
        shmem_atomic_inc(&x[2], right); \
        shmem_atomic_inc(ctx, &x[3], right); \
        f[4] = shmem_atomic_fetch_add(&x[4], (ty)4, right); \
        f[5] = shmem_atomic_fetch_add(ctx, &x[5], (ty)5, right); \
        f[6] = shmem_atomic_fetch_inc(&x[6], right); \
        f[7] = shmem_atomic_fetch_inc(ctx, &x[7], right); \
        f[8] = shmem_atomic_compare_swap(&x[8], (ty)9, (ty)30, right); \
        f[9] = shmem_atomic_compare_swap(ctx, &x[9], (ty)10, (ty)31, right); \
        shmem_atomic_fetch_add_nbi(&f[10], &x[10], (ty)6, right); \
        shmem_atomic_fetch_add_nbi(ctx, &f[11], &x[11], (ty)7, right); \
        shmem_atomic_fetch_inc_nbi(&f[12], &x[12], right); \
        shmem_atomic_fetch_inc_nbi(ctx, &f[13], &x[13], right); \
        shmem_atomic_compare_swap_nbi(&f[14], &x[14], (ty)15, (ty)32, right); \
        shmem_atomic_compare_swap_nbi(ctx, &f[15], &x[15], (ty)16, (ty)33, right); \
        shmem_quiet(); \
        shmem_ctx_quiet(ctx); \
        shmem_barrier_all(); \
        static const int add[16] = { 2, 3, 1, 1, 4, 5, 1, 1, 21, 21, 6, 7, 1, 1, 17, 17 }; \
        for (int k = 0; k < 16; k++) \
            T_CHECK(x[k] == (ty)(k + 1 + add[k]), "%s standard AMO slot %d", #T, k); \
        for (int k = 4; k < 16; k++) \
            T_CHECK(f[k] == (ty)(k + 1), "%s standard AMO fetched %d", #T, k); \
        AMO_END \
    }

#define AMO_EXT_T(T) { \
        AMO_SETUP(T, 10) \
        f[0] = shmem_atomic_fetch(&x[0], right); \
        f[1] = shmem_atomic_fetch(ctx, &x[1], right); \
        shmem_atomic_set(&x[2], (ty)20, right); \
        shmem_atomic_set(ctx, &x[3], (ty)21, right); \
        f[4] = shmem_atomic_swap(&x[4], (ty)22, right); \
        f[5] = shmem_atomic_swap(ctx, &x[5], (ty)23, right); \
        shmem_atomic_fetch_nbi(&f[6], &x[6], right); \
        shmem_atomic_fetch_nbi(ctx, &f[7], &x[7], right); \
        shmem_atomic_swap_nbi(&f[8], &x[8], (ty)24, right); \
        shmem_atomic_swap_nbi(ctx, &f[9], &x[9], (ty)25, right); \
        shmem_quiet(); \
        shmem_ctx_quiet(ctx); \
        shmem_barrier_all(); \
        static const int after[10] = { 1, 2, 20, 21, 22, 23, 7, 8, 24, 25 }; \
        for (int k = 0; k < 10; k++) \
            T_CHECK(x[k] == (ty)after[k], "%s extended AMO slot %d", #T, k); \
        for (int k = 0; k < 10; k++) \
            T_CHECK(k == 2 || k == 3 || f[k] == (ty)(k + 1), "%s extended AMO fetched %d", #T, k); \
        AMO_END \
    }

/* Every slot starts at 12 (0b1100); the operand is 10 (0b1010). */
#define AMO_BIT_T(T) { \
        AMO_SETUP(T, 18) \
        for (int k = 0; k < 18; k++) \
            x[k] = (ty)12; \
        shmem_barrier_all(); \
        shmem_atomic_and(&x[0], (ty)10, right); \
        shmem_atomic_and(ctx, &x[1], (ty)10, right); \
        shmem_atomic_or(&x[2], (ty)10, right); \
        shmem_atomic_or(ctx, &x[3], (ty)10, right); \
        shmem_atomic_xor(&x[4], (ty)10, right); \
        shmem_atomic_xor(ctx, &x[5], (ty)10, right); \
        f[6] = shmem_atomic_fetch_and(&x[6], (ty)10, right); \
        f[7] = shmem_atomic_fetch_and(ctx, &x[7], (ty)10, right); \
        f[8] = shmem_atomic_fetch_or(&x[8], (ty)10, right); \
        f[9] = shmem_atomic_fetch_or(ctx, &x[9], (ty)10, right); \
        f[10] = shmem_atomic_fetch_xor(&x[10], (ty)10, right); \
        f[11] = shmem_atomic_fetch_xor(ctx, &x[11], (ty)10, right); \
        shmem_atomic_fetch_and_nbi(&f[12], &x[12], (ty)10, right); \
        shmem_atomic_fetch_and_nbi(ctx, &f[13], &x[13], (ty)10, right); \
        shmem_atomic_fetch_or_nbi(&f[14], &x[14], (ty)10, right); \
        shmem_atomic_fetch_or_nbi(ctx, &f[15], &x[15], (ty)10, right); \
        shmem_atomic_fetch_xor_nbi(&f[16], &x[16], (ty)10, right); \
        shmem_atomic_fetch_xor_nbi(ctx, &f[17], &x[17], (ty)10, right); \
        shmem_quiet(); \
        shmem_ctx_quiet(ctx); \
        shmem_barrier_all(); \
        static const int after[3] = { 8, 14, 6 };  /* and, or, xor */ \
        for (int k = 0; k < 18; k++) \
            T_CHECK(x[k] == (ty)after[(k < 6 ? k : k - 6) / 2 % 3], "%s bitwise AMO slot %d", #T, k); \
        for (int k = 6; k < 18; k++) \
            T_CHECK(f[k] == (ty)12, "%s bitwise AMO fetched %d", #T, k); \
        AMO_END \
    }

/* ---- point-to-point synchronization -------------------------------------------- */

/* Local ivars { 1, 5, 2, 5 }, already set: every wait returns at once, and
 * a routine of another width would read other values. */
#define SYNC_T(T) { \
        typedef T ty; \
        ty *v = shmem_malloc(4 * sizeof(ty)); \
        ty cmps[4] = { 1, 5, 2, 5 }, other[4] = { 1, 0, 2, 0 }; \
        memcpy(v, cmps, sizeof cmps); \
        int only2[4] = { 1, 1, 0, 1 }, not1[4] = { 0, 1, 0, 0 }; \
        size_t idx[4] = { 9, 9, 9, 9 }; \
        T_CHECK(shmem_test(&v[1], SHMEM_CMP_EQ, (ty)5) && !shmem_test(&v[0], SHMEM_CMP_EQ, (ty)5), \
                "%s test", #T); \
        shmem_wait_until(&v[1], SHMEM_CMP_EQ, (ty)5); \
        shmem_wait(&v[1], (ty)0); \
        T_CHECK(shmem_test_all(v, 4, NULL, SHMEM_CMP_GE, (ty)1) && \
                !shmem_test_all(v, 4, NULL, SHMEM_CMP_GE, (ty)2), "%s test_all", #T); \
        shmem_wait_until_all(v, 4, NULL, SHMEM_CMP_GE, (ty)1); \
        T_CHECK(shmem_test_any(v, 4, NULL, SHMEM_CMP_EQ, (ty)2) == 2 && \
                shmem_wait_until_any(v, 4, NULL, SHMEM_CMP_EQ, (ty)2) == 2, "%s any", #T); \
        T_CHECK(shmem_test_some(v, 4, idx, NULL, SHMEM_CMP_EQ, (ty)5) == 2 && idx[0] == 1 && \
                idx[1] == 3, "%s test_some", #T); \
        T_CHECK(shmem_wait_until_some(v, 4, idx, not1, SHMEM_CMP_EQ, (ty)5) == 1 && idx[0] == 3, \
                "%s wait_until_some", #T); \
        T_CHECK(shmem_test_all_vector(v, 4, NULL, SHMEM_CMP_EQ, cmps) && \
                !shmem_test_all_vector(v, 4, NULL, SHMEM_CMP_EQ, other), "%s test_all_vector", #T); \
        shmem_wait_until_all_vector(v, 4, NULL, SHMEM_CMP_EQ, cmps); \
        T_CHECK(shmem_test_any_vector(v, 4, only2, SHMEM_CMP_EQ, cmps) == 2 && \
                shmem_wait_until_any_vector(v, 4, only2, SHMEM_CMP_EQ, cmps) == 2, "%s any_vector", #T); \
        T_CHECK(shmem_test_some_vector(v, 4, idx, NULL, SHMEM_CMP_NE, other) == 2 && \
                idx[0] == 1 && idx[1] == 3, "%s test_some_vector", #T); \
        T_CHECK(shmem_wait_until_some_vector(v, 4, idx, NULL, SHMEM_CMP_GT, other) == 2 && \
                idx[0] == 1 && idx[1] == 3, "%s wait_until_some_vector", #T); \
        shmem_barrier_all(); \
        shmem_free(v); \
    }

/* ---- reductions ---------------------------------------------------------------- */

#define RED_SETUP(T) \
        typedef T ty; \
        ty *s = shmem_malloc(2 * sizeof(ty)), *d = shmem_malloc(2 * sizeof(ty));
#define RED_END \
        shmem_barrier_all(); \
        shmem_free(d); \
        shmem_free(s);

/* One bit per PE and one all have: and = 16 (17 alone), or = 16 + 2^n - 1,
 * xor = the PE bits, plus 16 for an odd n. */
#define RED_BIT_T(T) { \
        RED_SETUP(T) \
        s[0] = (ty)(16 | (1 << me)), s[1] = (ty)16; \
        unsigned all = (1u << n) - 1; \
        T_CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && \
                d[0] == (ty)(n == 1 ? 17 : 16) && d[1] == (ty)16, "%s and_reduce", #T); \
        T_CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && d[0] == (ty)(16 | all) && \
                d[1] == (ty)16, "%s or_reduce", #T); \
        T_CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && \
                d[0] == (ty)((n % 2 ? 16 : 0) | all) && d[1] == (ty)(n % 2 ? 16 : 0), \
                "%s xor_reduce", #T); \
        RED_END \
    }

#define RED_ORD_T(T) { \
        RED_SETUP(T) \
        s[0] = (ty)(me + 1), s[1] = (ty)(10 - me); \
        T_CHECK(shmem_min_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && d[0] == (ty)1 && \
                d[1] == (ty)(11 - n), "%s min_reduce", #T); \
        T_CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && d[0] == (ty)n && \
                d[1] == (ty)10, "%s max_reduce", #T); \
        RED_END \
    }

/* sum and prod of PE p's p + 1 (+ i for the complex types): the expected
 * value computed here in the same type. */
#define RED_ARITH_T(T, IMAG) { \
        RED_SETUP(T) \
        ty sum = 0, prod = 1; \
        for (int p = 0; p < n; p++) \
            sum += (ty)(p + 1) + (IMAG), prod *= (ty)(p + 1) + (IMAG); \
        s[0] = (ty)(me + 1) + (IMAG), s[1] = (ty)2; \
        T_CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && d[0] == sum && \
                d[1] == (ty)(2 * n), "%s sum_reduce", #T); \
        T_CHECK(shmem_prod_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && d[0] == prod && \
                d[1] == (ty)(1 << n), "%s prod_reduce", #T); \
        RED_END \
    }
#define RED_REAL_T(T) RED_ARITH_T(T, 0)
#define RED_CPLX_T(T) RED_ARITH_T(T, I)

/* ---- the deprecated generics and shmem_sync ------------------------------------ */

static void deprecated_and_sync(void)
{
#define OLD_T(T) { \
        typedef T ty; \
        ty *x = shmem_calloc(8, sizeof(ty)); \
        shmem_barrier_all(); \
        ty old = shmem_fadd(&x[0], (ty)3, right) + shmem_finc(&x[1], right) + \
                 shmem_cswap(&x[2], (ty)0, (ty)4, right); \
        shmem_add(&x[3], (ty)5, right); \
        shmem_inc(&x[4], right); \
        shmem_quiet(); \
        shmem_barrier_all(); \
        T_CHECK(old == 0 && x[0] == 3 && x[1] == 1 && x[2] == 4 && x[3] == 5 && x[4] == 1, \
                "%s deprecated fadd/finc/cswap/add/inc", #T); \
        shmem_barrier_all(); \
        shmem_free(x); \
    }
#define OLD_EXT_T(T) { \
        typedef T ty; \
        ty *x = shmem_calloc(4, sizeof(ty)); \
        shmem_barrier_all(); \
        shmem_set(&x[0], (ty)6, right); \
        ty old = shmem_swap(&x[1], (ty)7, right); \
        shmem_quiet(); \
        shmem_barrier_all(); \
        T_CHECK(old == 0 && shmem_fetch(&x[0], me) == 6 && x[1] == 7, \
                "%s deprecated set/swap/fetch", #T); \
        shmem_barrier_all(); \
        shmem_free(x); \
    }
    /* 1.5 keeps these for int, long and long long (fetch, set, swap also for
     * float and double). */
    OLD_T(int) OLD_T(long) OLD_T(long long)
    OLD_EXT_T(int) OLD_EXT_T(long) OLD_EXT_T(long long) OLD_EXT_T(float) OLD_EXT_T(double)

    /* shmem_sync(team) orders this PE's stores before the others' loads
     * after it; the 1.3 active-set shmem_sync keeps its four arguments. */
    static int word;
    static long psync[SHMEM_SYNC_SIZE];
    word = me + 1;
    T_CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team)");
    T_CHECK(shmem_int_g(&word, right) == right + 1, "shmem_sync(team) ordering");
    T_CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team)");
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    word = 0;
    shmem_sync(0, 0, n, psync);
    shmem_sync(0, 0, n, psync);
    T_CHECK(psync[0] == SHMEM_SYNC_VALUE, "active-set shmem_sync");
}

void t_gtypes(void)
{
    me = T_ME, n = T_N, right = T_RIGHT, left = T_LEFT;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    SPEC_RMA(RMA_T)
    SPEC_RMA(COLL_T)
    SPEC_AMO_STD(AMO_STD_T)
    SPEC_AMO_EXT(AMO_EXT_T)
    SPEC_AMO_BIT(AMO_BIT_T)
    SPEC_SYNC(SYNC_T)
    SPEC_RED_BIT(RED_BIT_T)
    SPEC_RED_ORD(RED_ORD_T)
    SPEC_RED_ORD(RED_REAL_T)
    SPEC_RED_CPLX(RED_CPLX_T)
    deprecated_and_sync();
    shmem_ctx_destroy(ctx);
}
