// SPDX-License-Identifier: MIT
/*
 * Collectives: barrier_all, sync_all and team_sync (ordering checked with a
 * counter), then broadcast from every root, collect with a different count
 * per PE, fcollect, alltoall and alltoalls for every row of the RMA type
 * table and the mem forms, on the world team and on a team of the even PEs.
 */
#include <string.h>
#include "shtest.h"

#define NE 5
#define V(T, pe, i) ((T)((pe) * 8 + (i) + 1))

/* Barriers: nobody gets past barrier k before everyone has counted k. */
static void barriers(void)
{
    long *count = shmem_calloc(1, sizeof *count);
    int me = T_ME, n = T_N;
    for (int k = 1; k <= 50; k++) {
        shmem_long_atomic_inc(count, 0);
        /* sync_all and team_sync do not complete the increment: quiet does. */
        if (k % 3 != 1)
            shmem_quiet();
        if (k % 3 == 0)
            shmem_sync_all();
        else if (k % 3 == 1)
            shmem_barrier_all();
        else
            shmem_team_sync(SHMEM_TEAM_WORLD);
        T_CHECK(shmem_long_atomic_fetch(count, 0) >= (long)k * n, "barrier %d passed early", k);
        shmem_sync_all();
    }
    (void)me;
    shmem_free(count);
}

/* Allocation is collective over the world: every PE allocates, members of
 * the team run the collectives. */
#define TEST_COLL(T, N, A) { \
        T *src = shmem_malloc(NE * (size_t)T_N * sizeof(T)); \
        T *dst = shmem_malloc(NE * (size_t)T_N * 2 * sizeof(T)); \
        for (int root = 0; team != SHMEM_TEAM_INVALID && root < tn; root++) { \
            for (int i = 0; i < NE; i++) \
                src[i] = V(T, tme + root, i), dst[i] = 0; \
            T_CHECK(shmem_##N##_broadcast(team, dst, src, NE, root) == 0, "broadcast rc"); \
            for (int i = 0; i < NE; i++) \
                T_CHECK(dst[i] == V(T, 2 * root, i), "%s broadcast root %d", #T, root); \
        } \
        if (team != SHMEM_TEAM_INVALID) { \
        /* collect: team PE j contributes j + 1 elements */ \
        for (int i = 0; i < tme + 1; i++) \
            src[i] = V(T, tme, i); \
        shmem_##N##_collect(team, dst, src, (size_t)tme + 1); \
        for (int j = 0, at = 0; j < tn; at += ++j) \
            for (int i = 0; i <= j; i++) \
                T_CHECK(dst[at + i] == V(T, j, i), "%s collect from %d", #T, j); \
        for (int i = 0; i < NE; i++) \
            src[i] = V(T, tme, i); \
        shmem_##N##_fcollect(team, dst, src, NE); \
        for (int j = 0; j < tn; j++) \
            for (int i = 0; i < NE; i++) \
                T_CHECK(dst[j * NE + i] == V(T, j, i), "%s fcollect", #T); \
        /* alltoall: block j of src goes to team PE j */ \
        for (int j = 0; j < tn; j++) \
            for (int i = 0; i < NE; i++) \
                src[j * NE + i] = V(T, tme * tn + j, i); \
        shmem_##N##_alltoall(team, dst, src, NE); \
        for (int j = 0; j < tn; j++) \
            for (int i = 0; i < NE; i++) \
                T_CHECK(dst[j * NE + i] == V(T, j * tn + tme, i), "%s alltoall", #T); \
        /* alltoalls: dest stride 2, source stride 1 */ \
        memset(dst, 0, NE * (size_t)tn * 2 * sizeof(T)); \
        shmem_##N##_alltoalls(team, dst, src, 2, 1, NE); \
        for (int j = 0; j < tn; j++) \
            for (int i = 0; i < NE; i++) \
                T_CHECK(dst[2 * (j * NE + i)] == V(T, j * tn + tme, i) && \
                        dst[2 * (j * NE + i) + 1] == 0, "%s alltoalls", #T); \
        shmem_team_sync(team); \
        } \
        shmem_free(dst); \
        shmem_free(src); \
    }

/* team may be SHMEM_TEAM_INVALID: this PE only takes part in allocations. */
static void movement(shmem_team_t team)
{
    int tn = shmem_team_n_pes(team), tme = shmem_team_my_pe(team);
    HPS_SHMEM_RMA_TYPES(TEST_COLL, _)
    /* mem forms: bytes */
    char *s = shmem_malloc(64 * (size_t)T_N), *d = shmem_malloc(64 * (size_t)T_N * 2);
    if (team == SHMEM_TEAM_INVALID)
        goto out;
    memset(s, 'a' + tme, 64 * (size_t)tn);
    shmem_broadcastmem(team, d, s, 64, tn - 1);
    T_CHECK(d[0] == 'a' + tn - 1 && d[63] == 'a' + tn - 1, "broadcastmem");
    shmem_fcollectmem(team, d, s, 3);
    shmem_collectmem(team, d, s, 3);
    for (int j = 0; j < tn; j++)
        T_CHECK(d[3 * j] == 'a' + j && d[3 * j + 2] == 'a' + j, "collectmem/fcollectmem");
    shmem_alltoallmem(team, d, s, 2);
    shmem_alltoallsmem(team, d, s, 1, 1, 2);
    for (int j = 0; j < tn; j++)
        T_CHECK(d[2 * j] == 'a' + j, "alltoallmem");
    shmem_team_sync(team);
out:
    shmem_free(d);
    shmem_free(s);
}

void t_coll(void)
{
    barriers();
    movement(SHMEM_TEAM_WORLD);
    shmem_team_t evens;
    int n = T_N;
    T_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens) == 0,
            "split evens");
    movement(evens);
    if (evens != SHMEM_TEAM_INVALID)
        shmem_team_destroy(evens);
}
