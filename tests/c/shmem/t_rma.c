// SPDX-License-Identifier: MIT
/*
 * RMA: for every row of the RMA type table, put/get/p/g/iput/iget, their nbi
 * and context forms and put_signal, on the symmetric heap and on globals;
 * the sized and mem forms; a 1 MiB transfer each way.  Every PE writes to
 * its right neighbour and reads its left one, so with 2+ PEs every transfer
 * crosses processes.
 */
#include <string.h>
#include "shtest.h"

#define NE 8
/* A value for element i written by PE pe: small integers, exact in every type. */
#define VAL(T, pe, i, k) ((T)((pe) * 16 + (i) + (k) + 1))

/* Globals: the data segment must be symmetric too. */
#define DEF_GLOBAL(T, N, A) static T g_##N[NE]; T gi_##N[NE] = { 1 };
HPS_SHMEM_RMA_TYPES(DEF_GLOBAL, _)
static uint64_t g_sig;
static unsigned char g_big[1 << 20];

#define CHECK_ARR(T, arr, pe, k, stride, what) do { \
        for (int i_ = 0; i_ < NE; i_++) \
            T_CHECK((arr)[i_ * (stride)] == VAL(T, pe, i_, k), "%s[%d]: %s", #T, i_, what); \
    } while (0)

#define TEST_RMA(T, N, A) { \
        T *h = shmem_malloc(2 * NE * sizeof(T)), src[2 * NE], dst[2 * NE]; \
        T *targets[2] = { h, g_##N }; \
        for (int t = 0; t < 2; t++) { \
            T *x = targets[t]; \
            for (int i = 0; i < NE; i++) \
                src[i] = VAL(T, me, i, 0); \
            /* put, then get back what the left neighbour put here. */ \
            shmem_##N##_put(x, src, NE, right); \
            shmem_barrier_all(); \
            CHECK_ARR(T, x, left, 0, 1, "put"); \
            shmem_##N##_get(dst, x, NE, right); \
            CHECK_ARR(T, dst, me, 0, 1, "get"); \
            shmem_barrier_all(); \
            /* p and g, default context and a context of our own */ \
            for (int i = 0; i < NE; i++) \
                shmem_ctx_##N##_p(i & 1 ? ctx : SHMEM_CTX_DEFAULT, &x[i], VAL(T, me, i, 1), right); \
            shmem_ctx_quiet(ctx);           /* the barrier completes the default context's */ \
            shmem_barrier_all(); \
            CHECK_ARR(T, x, left, 1, 1, "p"); \
            for (int i = 0; i < NE; i++) \
                T_CHECK(shmem_##N##_g(&x[i], right) == VAL(T, me, i, 1), "%s g", #T); \
            shmem_barrier_all(); \
            /* nbi forms complete at quiet */ \
            for (int i = 0; i < NE; i++) \
                src[i] = VAL(T, me, i, 2); \
            shmem_##N##_put_nbi(x, src, NE, right); \
            shmem_ctx_quiet(ctx); \
            shmem_barrier_all(); \
            CHECK_ARR(T, x, left, 2, 1, "put_nbi"); \
            shmem_ctx_##N##_get_nbi(ctx, dst, x, NE, right); \
            shmem_ctx_quiet(ctx); \
            CHECK_ARR(T, dst, me, 2, 1, "get_nbi"); \
            shmem_barrier_all(); \
            /* strided: every other element of a 2*NE array */ \
            for (int i = 0; i < NE; i++) \
                src[2 * i] = VAL(T, me, i, 3); \
            shmem_##N##_iput(x, src, 2, 2, NE, right); \
            shmem_barrier_all(); \
            CHECK_ARR(T, x, left, 3, 2, "iput"); \
            shmem_##N##_iget(dst, x, 1, 2, NE, right); \
            CHECK_ARR(T, dst, me, 3, 1, "iget"); \
            shmem_barrier_all(); \
        } \
        /* put with signal: data, then the signal, ordered */ \
        for (int i = 0; i < NE; i++) \
            src[i] = VAL(T, me, i, 4); \
        shmem_##N##_put_signal(h, src, NE, &g_sig, 1, SHMEM_SIGNAL_ADD, right); \
        shmem_signal_wait_until(&g_sig, SHMEM_CMP_GE, sig_goal + 1); \
        CHECK_ARR(T, h, left, 4, 1, "put_signal"); \
        shmem_barrier_all(); \
        for (int i = 0; i < NE; i++) \
            src[i] = VAL(T, me, i, 5); \
        shmem_ctx_##N##_put_signal_nbi(ctx, h, src, NE, &g_sig, sig_goal + 2, SHMEM_SIGNAL_SET, \
                                       right); \
        shmem_ctx_quiet(ctx); \
        T_CHECK(shmem_signal_wait_until(&g_sig, SHMEM_CMP_EQ, sig_goal + 2) == sig_goal + 2, \
                "signal value"); \
        CHECK_ARR(T, h, left, 5, 1, "put_signal_nbi"); \
        sig_goal += 2; \
        shmem_barrier_all(); \
        T_CHECK(gi_##N[0] == (T)1, "%s: initialised global lost its value", #T); \
        shmem_free(h); \
    }

/* The sized forms move BITS/8-byte elements; checked byte by byte.  B(pe, i)
 * is byte i of what PE pe sends. */
#define B(pe, i, BITS) ((unsigned char)((pe) * 7 + (i) + (BITS)))
#define TEST_SIZED(BITS, T, A) { \
        enum { ES = BITS / 8, NB = NE * ES }; \
        unsigned char *h = shmem_malloc(2 * NB), src[2 * NB], dst[2 * NB]; \
        for (int i = 0; i < NB; i++) \
            src[i] = B(me, i, BITS); \
        shmem_put##BITS(h, src, NE, right); \
        shmem_barrier_all(); \
        for (int i = 0; i < NB; i++) \
            T_CHECK(h[i] == B(left, i, BITS), "put%d byte %d", BITS, i); \
        shmem_ctx_get##BITS(ctx, dst, h, NE, right); \
        T_CHECK(!memcmp(dst, src, NB), "get%d", BITS); \
        shmem_get##BITS##_nbi(dst, h, NE, left); \
        shmem_quiet(); \
        for (int i = 0; i < NB; i++) \
            T_CHECK(dst[i] == B(ll, i, BITS), "get%d_nbi byte %d", BITS, i); \
        shmem_barrier_all(); \
        shmem_iput##BITS(h, src, 2, 1, NE, right); \
        shmem_barrier_all(); \
        for (int i = 0; i < NE; i++) \
            for (int k = 0; k < ES; k++) \
                T_CHECK(h[2 * i * ES + k] == B(left, i * ES + k, BITS), "iput%d", BITS); \
        shmem_iget##BITS(dst, h, 1, 2, NE, left); \
        for (int i = 0; i < NB; i++) \
            T_CHECK(dst[i] == B(ll, i, BITS), "iget%d byte %d", BITS, i); \
        shmem_barrier_all(); \
        shmem_put##BITS##_signal(h, src, NE, &g_sig, 1, SHMEM_SIGNAL_ADD, right); \
        shmem_signal_wait_until(&g_sig, SHMEM_CMP_GE, sig_goal + 1); \
        sig_goal++; \
        for (int i = 0; i < NB; i++) \
            T_CHECK(h[i] == B(left, i, BITS), "put%d_signal", BITS); \
        shmem_barrier_all(); \
        shmem_free(h); \
    }

/* A burst of single-element puts of three sizes, heap and globals, with no
 * quiet between: more than a provider's transmit queue holds (shm's takes
 * 1024), so over libfabric some meet a full queue and go through p's
 * fallback.  Every one must land, the last value of each element winning. */
#define BURST 4096
static long g_burst_l[BURST];
static short g_burst_s[BURST];

static void burst(int me, int right, int left)
{
    int *h = shmem_malloc(BURST * sizeof(int));
    for (int rep = 0; rep < 3; rep++)
        for (int i = 0; i < BURST; i++) {
            shmem_long_p(&g_burst_l[i], rep * 100000L + i + me, right);
            shmem_short_p(&g_burst_s[i], (short)(rep + i + me), right);
            shmem_int_p(&h[i], rep * 7 + i + me, right);
        }
    shmem_quiet();
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < BURST; i++)
        bad += g_burst_l[i] != 200000L + i + left || g_burst_s[i] != (short)(2 + i + left) ||
               h[i] != 14 + i + left;
    T_CHECK(bad == 0, "p burst: %d of %d elements wrong", bad, BURST);
    shmem_barrier_all();
    shmem_free(h);
}

void t_rma(void)
{
    int me = T_ME, n = T_N, right = T_RIGHT, left = T_LEFT, ll = (me + 2 * n - 2) % n;
    uint64_t sig_goal = 0;
    shmem_ctx_t ctx;
    T_CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    HPS_SHMEM_RMA_TYPES(TEST_RMA, _)
    HPS_SHMEM_SIZES(TEST_SIZED, _)

    /* putmem/getmem, 1 MiB each way, on a global (data segment). */
    for (size_t i = 0; i < sizeof g_big; i++)
        g_big[i] = (unsigned char)(i * 13 + (size_t)me);
    shmem_barrier_all();
    static unsigned char buf[1 << 20];
    shmem_getmem(buf, g_big, sizeof buf, right);
    for (size_t i = 0; i < sizeof buf; i += 4093)
        T_CHECK(buf[i] == (unsigned char)(i * 13 + (size_t)right), "getmem 1 MiB at %zu", i);
    shmem_barrier_all();
    char *h = shmem_malloc(sizeof buf);
    shmem_putmem_nbi(h, buf, sizeof buf, left);
    shmem_ctx_putmem(ctx, h, buf, 100, left);
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    shmem_barrier_all();
    for (size_t i = 0; i < sizeof buf; i += 4093)
        T_CHECK((unsigned char)h[i] == (unsigned char)(i * 13 + (size_t)((me + 2) % n)),
                "putmem 1 MiB at %zu", i);
    shmem_barrier_all();
    shmem_putmem_signal(h, buf, 1, &g_sig, 7, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(&g_sig, SHMEM_CMP_EQ, 7);
    shmem_barrier_all();
    shmem_free(h);
    burst(me, right, left);
    (void)n;
    shmem_ctx_destroy(ctx);
}
