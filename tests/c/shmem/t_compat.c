// SPDX-License-Identifier: MIT
/*
 * The deprecated OpenSHMEM 1.2/1.3 interfaces existing programs still use:
 * start_pes, _my_pe, _num_pes, shmalloc/shfree, the old AMO names, the
 * active-set collectives with pSync (broadcast32/64, collect, fcollect,
 * alltoall(s), barrier, sync, *_to_all reductions) on the whole world and
 * on a strided set, pSync left at _SHMEM_SYNC_VALUE, and shmem_TYPE_wait.
 */
#include <string.h>
#include "shtest.h"

static long pSync[_SHMEM_BCAST_SYNC_SIZE];
static long pSync2[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];

#define TEST_OLD_AMO(T, N, A) { \
        T *x = shmalloc(sizeof(T)); \
        *x = 0; \
        shmem_barrier_all(); \
        shmem_##N##_add(x, (T)2, 0); \
        shmem_##N##_inc(x, 0); \
        (void)shmem_##N##_finc(x, 0); \
        (void)shmem_##N##_fadd(x, (T)1, 0); \
        shmem_barrier_all(); \
        T_CHECK(shmem_##N##_fetch(x, 0) == (T)(5 * n), "%s old adds", #T); \
        shmem_barrier_all(); \
        if (me == 0) \
            shmem_##N##_set(x, (T)7, 0); \
        shmem_barrier_all(); \
        T old = shmem_##N##_cswap(x, (T)7, (T)(me + 100), 0); \
        shmem_barrier_all(); \
        T_CHECK((old == 7) == (shmem_##N##_fetch(x, 0) == (T)(me + 100)), "%s cswap", #T); \
        shmem_barrier_all(); \
        (void)shmem_##N##_swap(x, (T)1, 0); \
        shmem_barrier_all(); \
        shfree(x); \
    }
#define TEST_OLD_SWAP(T) { \
        T *x = shmalloc(sizeof(T)); \
        shmem_##T##_set(x, (T)1.5, right); \
        shmem_barrier_all(); \
        T_CHECK(shmem_##T##_swap(x, (T)2.5, me) == (T)1.5 && shmem_##T##_fetch(x, me) == (T)2.5, \
                #T " swap/fetch/set"); \
        shmem_barrier_all(); \
        shfree(x); \
    }

/* The active set (start, log stride, size) this PE is in, or skip. */
static void aset(int start, int logs, int size)
{
    int me = _my_pe(), stride = 1 << logs, idx = (me - start) / stride;
    if (me < start || (me - start) % stride || idx >= size)
        return;
    static long src[8], dst[64];
    static int isrc[8], idst[8];
    for (int i = 0; i < 8; i++)
        src[i] = me * 10 + i, dst[i] = -1;
    int root = size - 1;
    shmem_broadcast64(dst, src, 8, root, start, logs, size, pSync);
    for (int i = 0; i < 8; i++)
        T_CHECK(idx == root ? dst[i] == -1 : dst[i] == (start + root * stride) * 10 + i,
                "broadcast64 (1.3: root's dest untouched)");
    shmem_barrier(start, logs, size, pSync);
    for (int i = 0; i < 8; i++)
        isrc[i] = me;
    shmem_broadcast32(idst, isrc, 8, 0, start, logs, size, pSync2);
    T_CHECK(idx == 0 || idst[7] == start, "broadcast32");
    shmem_fcollect64(dst, src, 2, start, logs, size, pSync);
    for (int j = 0; j < size; j++)
        T_CHECK(dst[2 * j] == (start + j * stride) * 10, "fcollect64");
    shmem_collect64(dst, src, (size_t)idx + 1, start, logs, size, pSync2);
    for (int j = 0, at = 0; j < size; at += ++j)
        T_CHECK(dst[at + j] == (start + j * stride) * 10 + j, "collect64");
    shmem_collect32(idst, isrc, 1, start, logs, size, pSync);
    shmem_fcollect32(idst, isrc, 1, start, logs, size, pSync2);
    for (int j = 0; j < size; j++)
        T_CHECK(idst[j] == start + j * stride, "fcollect32");
    for (int j = 0; j < size && j < 8; j++)
        src[j] = me * 100 + j;
    shmem_alltoall64(dst, src, 1, start, logs, size, pSync);
    for (int j = 0; j < size && j < 8; j++)
        T_CHECK(dst[j] == (start + j * stride) * 100 + idx, "alltoall64");
    shmem_alltoalls64(dst, src, 1, 1, 1, start, logs, size, pSync2);
    shmem_alltoall32(idst, isrc, 1, start, logs, size, pSync);
    shmem_alltoalls32(idst, isrc, 1, 1, 1, start, logs, size, pSync2);
    static int ired[4];
    static double dred[4];
    static double dsrc[4];
    for (int i = 0; i < 4; i++)
        isrc[i] = 1 << idx, dsrc[i] = idx + 0.5;
    shmem_int_or_to_all(ired, isrc, 4, start, logs, size, (int *)pWrk, pSync);
    T_CHECK(ired[3] == (1 << size) - 1, "int_or_to_all");
    shmem_double_sum_to_all(dred, dsrc, 4, start, logs, size, (double *)pWrk, pSync2);
    T_CHECK(dred[0] == size * (size - 1) / 2.0 + size * 0.5, "double_sum_to_all");
    shmem_int_max_to_all(isrc, isrc, 4, start, logs, size, (int *)pWrk, pSync);
    T_CHECK(isrc[0] == 1 << (size - 1), "int_max_to_all in place");
    shmem_sync(start, logs, size, pSync);
    for (int i = 0; i < _SHMEM_BCAST_SYNC_SIZE; i++)
        T_CHECK(pSync[i] == _SHMEM_SYNC_VALUE && pSync2[i] == SHMEM_SYNC_VALUE,
                "pSync[%d] not restored", i);
}

void t_compat(void)
{
    start_pes(0);
    int me = _my_pe(), n = _num_pes(), right = (me + 1) % n;
    T_CHECK(me == shmem_my_pe() && n == shmem_n_pes(), "_my_pe/_num_pes");
    for (int i = 0; i < _SHMEM_BCAST_SYNC_SIZE; i++)
        pSync[i] = pSync2[i] = _SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    HPS_SHMEM_OLD_AMO_TYPES(TEST_OLD_AMO, _)
    TEST_OLD_SWAP(float)
    TEST_OLD_SWAP(double)

    aset(0, 0, n);                      /* the world */
    shmem_barrier_all();
    aset(n > 1, 1, n > 1 ? n / 2 : 1);  /* the odd PEs (PE 0 alone) */
    shmem_barrier_all();

    /* shmem_TYPE_wait: waits while the value equals cmp_value. */
    static int w;
    shmem_int_p(&w, 3, right);
    shmem_int_wait(&w, 0);
    T_CHECK(w == 3, "int_wait");
    shmem_barrier_all();
    T_CHECK(_SHMEM_CMP_EQ == SHMEM_CMP_EQ && _SHMEM_MAJOR_VERSION == 1, "constants");
}
