// SPDX-License-Identifier: MIT
/*
 * Collective data movement: broadcast, collect, fcollect, alltoall(s) over
 * teams (1.5) and active sets (1.3 broadcast32/64 ...), and the reduction
 * engine behind reduce.c.
 *
 * When every member's heap is mapped here the on-node algorithms run
 * (coll_node.c, through hps_shmem_group_node).  Otherwise, with some member
 * behind libfabric, the point-to-point ones below: every algorithm pulls:
 * after a sync (every member has arrived, so every source is ready) each
 * member gets what it needs from the others' symmetric sources with the
 * internal get, then a second sync keeps the sources alive until all have
 * read them.  Pulling means a PE writes only its own memory, needs no
 * scratch space (collect's counts excepted) and runs unchanged over shared
 * memory and libfabric; O(n) gets per PE suits node-sized teams.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "coll.h"

/* Member i's copy of the symmetric object at src into local dst. */
static void pull(const char *fn, const hps_shmem_group_t *g, void *dst, const void *src, size_t len,
                 int i)
{
    if (!len)
        return;
    if (i == g->me)
        memmove(dst, src, len);
    else
        hps_get(fn, dst, src, len, hps_shmem_group_pe(g, i));
}

/* The on-node view of g, if it has one: NODE(g) declares ng_ for it. */
#define NODE(g) \
    hps_ngrp_t ng_; \
    hps_shmem_node_peer_t nm_[HPS_NODE_MAX]; \
    int node_ = hps_shmem_group_node((g), &ng_, nm_)

void hps_shmem_coll_broadcast(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                        size_t len, int root, int root_copies)
{
    if (root < 0 || root >= g->size)
        hps_shmem_fatal(fn, "PE_root %d out of range 0..%d", root, g->size - 1);
    NODE(g);
    if (node_) {
        hps_shmem_node_broadcast(fn, &ng_, dest, src, len, root, root_copies);
        return;
    }
    hps_shmem_group_sync(fn, g);
    if (g->me != root)
        pull(fn, g, dest, src, len, root);
    else if (root_copies)
        memmove(dest, src, len);
    hps_shmem_group_sync(fn, g);
}

/* Member i's len bytes at src + src_off go to dest + i * len, for every
 * member: fcollect (src_off 0) and alltoall (this member's block). */
static void pull_all(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                     size_t src_off, size_t len)
{
    hps_shmem_group_sync(fn, g);
    /* Start with the next member, so the members do not all read from
     * member 0 at once. */
    for (int k = 0; k < g->size; k++) {
        int i = (g->me + 1 + k) % g->size;
        pull(fn, g, (char *)dest + (size_t)i * len, (const char *)src + src_off, len, i);
    }
    hps_shmem_group_sync(fn, g);
}

void hps_shmem_coll_fcollect(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                       size_t len)
{
    NODE(g);
    if (node_)
        hps_shmem_node_fcollect(fn, &ng_, dest, src, len);
    else
        pull_all(fn, g, dest, src, 0, len);
}

void hps_shmem_coll_collect(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                      size_t len)
{
    NODE(g);
    if (node_) {
        hps_shmem_node_collect(fn, &ng_, dest, src, len);
        return;
    }
    uint64_t *count = hps_shmem_group_scratch(g), c;
    *count = len;
    hps_shmem_group_sync(fn, g);
    size_t at = 0;
    for (int i = 0; i < g->size; i++) {
        pull(fn, g, &c, count, sizeof c, i);
        pull(fn, g, (char *)dest + at, src, c, i);
        at += c;
    }
    hps_shmem_group_sync(fn, g);
    /* An active set's scratch is pSync[1]: back to SHMEM_SYNC_VALUE. */
    if (!g->team)
        *count = 0;
}

void hps_shmem_coll_alltoall(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                       size_t len)
{
    NODE(g);
    if (node_)
        hps_shmem_node_alltoall(fn, &ng_, dest, src, len);
    else
        pull_all(fn, g, dest, src, (size_t)g->me * len, len);
}

void hps_shmem_coll_alltoalls(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es)
{
    if (dst < 1 || sst < 1)
        hps_shmem_fatal(fn, "strides %td and %td must be positive", dst, sst);
    NODE(g);
    if (node_) {
        hps_shmem_node_alltoalls(fn, &ng_, dest, src, dst, sst, nelems, es);
        return;
    }
    hps_shmem_group_sync(fn, g);
    for (int k = 0; k < g->size && nelems; k++) {
        int i = (g->me + 1 + k) % g->size;
        char *d = (char *)dest + (size_t)i * nelems * (size_t)dst * es;
        const char *s = (const char *)src + (size_t)g->me * nelems * (size_t)sst * es;
        if (i == g->me)
            for (size_t e = 0; e < nelems; e++)
                memmove(d + e * (size_t)dst * es, s + e * (size_t)sst * es, es);
        else
            hps_iget(fn, d, s, dst, sst, nelems, es, hps_shmem_group_pe(g, i));
    }
    hps_shmem_group_sync(fn, g);
}

/* Members' sources are combined in member order, chunk by chunk, so every
 * PE computes bit-identical results (floating point included).  The result
 * goes to dest only after the closing sync when dest is the source. */
void hps_shmem_coll_reduce(const char *fn, const hps_shmem_group_t *g, void *dest, const void *src,
                     size_t n, size_t es, hps_reduce_fn op)
{
    NODE(g);
    if (node_) {
        hps_shmem_node_reduce(fn, &ng_, dest, src, n, es, op);
        return;
    }
    size_t total = n * es, chunk = 16384 / es ? 16384 / es * es : es;
    int in_place = dest == src;
    char *acc = in_place ? malloc(total ? total : 1) : dest, *tmp = malloc(chunk);
    if (!acc || !tmp)
        hps_shmem_fatal(fn, "out of memory for a %zu-byte reduction", total);
    hps_shmem_group_sync(fn, g);
    for (size_t off = 0; off < total; off += chunk) {
        size_t len = total - off < chunk ? total - off : chunk;
        pull(fn, g, acc + off, (const char *)src + off, len, 0);
        for (int i = 1; i < g->size; i++) {
            pull(fn, g, tmp, (const char *)src + off, len, i);
            op(acc + off, tmp, len / es);
        }
    }
    hps_shmem_group_sync(fn, g);
    if (in_place) {
        memcpy(dest, acc, total);
        free(acc);
    }
    free(tmp);
}

/* ---- the 1.5 team routines ---------------------------------------------------- */

#define TEAM(fn, team) \
    hps_shmem_group_t g_; \
    hps_shmem_group_team(fn, &g_, team)

#define DEF_COLL(T, N, A) \
    HPS_API int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, \
                                      size_t nelems, int PE_root) \
    { \
        TEAM(__func__, team); \
        hps_shmem_coll_broadcast(__func__, &g_, dest, source, nelems * sizeof(T), PE_root, 1); \
        return 0; \
    } \
    HPS_API int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems) \
    { \
        TEAM(__func__, team); \
        hps_shmem_coll_collect(__func__, &g_, dest, source, nelems * sizeof(T)); \
        return 0; \
    } \
    HPS_API int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, \
                                     size_t nelems) \
    { \
        TEAM(__func__, team); \
        hps_shmem_coll_fcollect(__func__, &g_, dest, source, nelems * sizeof(T)); \
        return 0; \
    } \
    HPS_API int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, \
                                     size_t nelems) \
    { \
        TEAM(__func__, team); \
        hps_shmem_coll_alltoall(__func__, &g_, dest, source, nelems * sizeof(T)); \
        return 0; \
    } \
    HPS_API int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, \
                                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems) \
    { \
        TEAM(__func__, team); \
        hps_shmem_coll_alltoalls(__func__, &g_, dest, source, dst, sst, nelems, sizeof(T)); \
        return 0; \
    }
HPS_SHMEM_RMA_TYPES(DEF_COLL, _)

/* The mem forms are the typed ones on unsigned char. */
HPS_API int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                               int PE_root)
{
    TEAM(__func__, team);
    hps_shmem_coll_broadcast(__func__, &g_, dest, source, nelems, PE_root, 1);
    return 0;
}

HPS_API int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    TEAM(__func__, team);
    hps_shmem_coll_collect(__func__, &g_, dest, source, nelems);
    return 0;
}

HPS_API int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    TEAM(__func__, team);
    hps_shmem_coll_fcollect(__func__, &g_, dest, source, nelems);
    return 0;
}

HPS_API int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    TEAM(__func__, team);
    hps_shmem_coll_alltoall(__func__, &g_, dest, source, nelems);
    return 0;
}

HPS_API int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                               ptrdiff_t sst, size_t nelems)
{
    TEAM(__func__, team);
    hps_shmem_coll_alltoalls(__func__, &g_, dest, source, dst, sst, nelems, 1);
    return 0;
}

/* ---- the 1.3 active-set routines ------------------------------------------------- */

#define ASET(fn) \
    hps_shmem_group_t g_; \
    hps_shmem_group_aset(fn, &g_, PE_start, logPE_stride, PE_size, pSync)
#define ASET_PARAMS int PE_start, int logPE_stride, int PE_size, long *pSync

#define DEF_OLD_COLL(BITS) \
    HPS_API void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, \
                                       int PE_root, ASET_PARAMS) \
    { \
        /* 1.3 semantics: the root's dest is left alone. */ \
        ASET(__func__); \
        hps_shmem_coll_broadcast(__func__, &g_, dest, source, nelems * (BITS / 8), PE_root, 0); \
    } \
    HPS_API void shmem_collect##BITS(void *dest, const void *source, size_t nelems, \
                                     ASET_PARAMS) \
    { \
        ASET(__func__); \
        hps_shmem_coll_collect(__func__, &g_, dest, source, nelems * (BITS / 8)); \
    } \
    HPS_API void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, \
                                      ASET_PARAMS) \
    { \
        ASET(__func__); \
        hps_shmem_coll_fcollect(__func__, &g_, dest, source, nelems * (BITS / 8)); \
    } \
    HPS_API void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, \
                                      ASET_PARAMS) \
    { \
        ASET(__func__); \
        hps_shmem_coll_alltoall(__func__, &g_, dest, source, nelems * (BITS / 8)); \
    } \
    HPS_API void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, \
                                       ptrdiff_t sst, size_t nelems, ASET_PARAMS) \
    { \
        ASET(__func__); \
        hps_shmem_coll_alltoalls(__func__, &g_, dest, source, dst, sst, nelems, BITS / 8); \
    }
DEF_OLD_COLL(32)
DEF_OLD_COLL(64)

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
