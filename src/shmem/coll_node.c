// SPDX-License-Identifier: MIT
/*
 * The collectives on the on-node path (node.h): every member's heap is
 * mapped here, so data moves by memcpy through those mappings and members
 * signal each other with node.c's messages.
 *
 * Small data (a member's contribution fits a ring slot, HPS_RING_BYTES)
 * goes in one step: each sender copies its source into its ring and posts
 * it, each receiver copies what it needs into its own dest and releases
 * the slot.  Nobody waits for anybody to be ready: the source is free once
 * copied, and a dest is only written by its owner, inside its own call.
 * A broadcast root therefore does not wait at all (up to HPS_PAIRQ calls
 * ahead of the slowest member), and an all-to-all kind of collective ends
 * when the last contribution arrives.
 *
 * Large data is read where it lies: a barrier (every source is ready),
 * each member copies from the others' sources into its dest, a second
 * barrier (every source may be reused).  A broadcast needs only the root's
 * "ready" and the others' "done".
 *
 * Reductions combine the members' data in member order, so every member
 * computes bit-identical results (floating point included).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "coll.h"

/* Member k's copy of the symmetric object at addr (len bytes). */
static const char *peer_obj(const char *fn, const hps_ngrp_t *g, int k, const void *addr,
                            size_t len)
{
    if (k == g->me)
        return addr;
    int r;
    size_t o;
    return hps_target(fn, addr, len, g->m[k].pe, &r, &o);
}

void hps_shmem_node_broadcast(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                        size_t len, int root, int root_copies)
{
    if (len <= HPS_RING_BYTES) {
        if (g->me == root) {
            int slot;
            memcpy(hps_shmem_node_post_begin(g, &slot), src, len);
            hps_shmem_node_post(g, slot, len, 0);
            if (root_copies)
                memmove(dest, src, len);
        } else {
            hps_shmem_node_msg_t msg;
            hps_shmem_node_recv(g, root, &msg, 0, len);
            memcpy(dest, msg.data, len);
            hps_shmem_node_release(g, &msg);
        }
        return;
    }
    if (g->me == root) {
        hps_shmem_node_signal_all(g);
        if (root_copies)
            memmove(dest, src, len);
        hps_shmem_node_wait_all(g);
    } else {
        hps_shmem_node_wait(g, root);
        memcpy(dest, peer_obj(fn, g, root, src, len), len);
        hps_shmem_node_signal(g, root);
    }
}

/* Member k's block for this member: from k's source at k_off (large), or
 * from k's message at msg_off (small), to dest + d_off. */
static void pull_all(const char *fn, const hps_ngrp_t *g, char *dest, const char *src,
                     size_t len, size_t post_len, int alltoall)
{
    size_t mine = alltoall ? (size_t)g->me * len : 0;
    if (post_len <= HPS_RING_BYTES) {
        int slot;
        memcpy(hps_shmem_node_post_begin(g, &slot), src, post_len);
        hps_shmem_node_post(g, slot, post_len, alltoall ? len : 0);
        memmove(dest + (size_t)g->me * len, src + mine, len);
        for (int d = 1; d < g->n; d++) {
            int k = (g->me + d) % g->n;
            hps_shmem_node_msg_t msg;
            hps_shmem_node_recv(g, k, &msg, mine, len);
            memcpy(dest + (size_t)k * len, msg.data, len);
            hps_shmem_node_release(g, &msg);
        }
        return;
    }
    hps_shmem_node_barrier(g);
    for (int d = 0; d < g->n; d++) {
        int k = (g->me + d) % g->n;
        memmove(dest + (size_t)k * len, peer_obj(fn, g, k, src + mine, len), len);
    }
    hps_shmem_node_barrier(g);
}

void hps_shmem_node_fcollect(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                       size_t len)
{
    pull_all(fn, g, dest, src, len, len, 0);
}

void hps_shmem_node_alltoall(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                       size_t len)
{
    /* Small: the whole source goes out once; each member takes its block. */
    pull_all(fn, g, dest, src, len, (size_t)g->n * len, 1);
}

/* Strided blocks: nelems elements of es bytes, strides in elements. */
static void copy_strided(char *d, ptrdiff_t dst, const char *s, ptrdiff_t sst, size_t nelems,
                         size_t es)
{
    for (size_t e = 0; e < nelems; e++)
        memmove(d + e * (size_t)dst * es, s + e * (size_t)sst * es, es);
}

void hps_shmem_node_alltoalls(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es)
{
    size_t blk = nelems * es, dblk = nelems * (size_t)dst * es, sblk = nelems * (size_t)sst * es;
    char *d = dest;
    const char *s = src;
    if ((size_t)g->n * blk <= HPS_RING_BYTES) {
        /* Block j of the message is member j's, packed. */
        int slot;
        char *out = hps_shmem_node_post_begin(g, &slot);
        for (int j = 0; j < g->n; j++)
            copy_strided(out + (size_t)j * blk, 1, s + (size_t)j * sblk, sst, nelems, es);
        hps_shmem_node_post(g, slot, (size_t)g->n * blk, blk);
        copy_strided(d + (size_t)g->me * dblk, dst, s + (size_t)g->me * sblk, sst, nelems, es);
        for (int i = 1; i < g->n; i++) {
            int k = (g->me + i) % g->n;
            hps_shmem_node_msg_t msg;
            hps_shmem_node_recv(g, k, &msg, (size_t)g->me * blk, blk);
            copy_strided(d + (size_t)k * dblk, dst, (const char *)msg.data, 1, nelems, es);
            hps_shmem_node_release(g, &msg);
        }
        return;
    }
    hps_shmem_node_barrier(g);
    for (int i = 0; i < g->n; i++) {
        int k = (g->me + i) % g->n;
        const char *from = peer_obj(fn, g, k, s + (size_t)g->me * sblk,
                                    nelems ? (nelems - 1) * (size_t)sst * es + es : 0);
        copy_strided(d + (size_t)k * dblk, dst, from, sst, nelems, es);
    }
    hps_shmem_node_barrier(g);
}

/*
 * collect: every member posts its byte count, and its data too when both
 * fit a slot.  Data that did not fit is read from its owner's source, and
 * the owner waits for a "done" from every reader before it returns; all
 * members know whose that is from the counts, so the messages match.
 */
void hps_shmem_node_collect(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                      size_t len)
{
    const size_t room = HPS_RING_BYTES - sizeof(uint64_t);
    uint64_t count = len;
    int slot;
    unsigned char *out = hps_shmem_node_post_begin(g, &slot);
    memcpy(out, &count, sizeof count);
    if (len <= room)
        memcpy(out + sizeof count, src, len);
    hps_shmem_node_post(g, slot, sizeof count + (len <= room ? len : 0), 0);
    hps_shmem_node_msg_t msg[HPS_NODE_MAX];
    for (int k = 0; k < g->n; k++)
        if (k != g->me)
            hps_shmem_node_recv(g, k, &msg[k], 0, HPS_INLINE_BYTES);
    size_t at = 0;
    for (int k = 0; k < g->n; k++) {
        uint64_t c = len;
        if (k != g->me)
            memcpy(&c, msg[k].data, sizeof c);
        if (k == g->me)
            memmove((char *)dest + at, src, len);
        else if (c <= room)
            memcpy((char *)dest + at,
                   (msg[k].inl && sizeof c + c <= HPS_INLINE_BYTES ? msg[k].data : msg[k].ring) +
                   sizeof c, c);
        else
            memcpy((char *)dest + at, peer_obj(fn, g, k, src, c), c);
        at += c;
    }
    for (int k = 0; k < g->n; k++) {
        if (k == g->me)
            continue;
        uint64_t c;
        memcpy(&c, msg[k].data, sizeof c);
        hps_shmem_node_release(g, &msg[k]);
        if (c > room)
            hps_shmem_node_signal(g, k);      /* done with k's source */
    }
    if (len > room)
        hps_shmem_node_wait_all(g);
}

void hps_shmem_node_reduce(const char *fn, const hps_ngrp_t *g, void *dest, const void *src,
                     size_t n, size_t es, hps_reduce_fn op)
{
    size_t total = n * es;
    if (total <= HPS_RING_BYTES) {
        /* Our own contribution is read back from our slot: in place, dest
         * is the source and gets overwritten by member 0's data first. */
        int slot;
        unsigned char *own = hps_shmem_node_post_begin(g, &slot);
        memcpy(own, src, total);
        hps_shmem_node_post(g, slot, total, 0);
        hps_shmem_node_msg_t msg[HPS_NODE_MAX];
        for (int k = 0; k < g->n; k++)
            if (k != g->me)
                hps_shmem_node_recv(g, k, &msg[k], 0, total);
        for (int k = 0; k < g->n; k++) {
            const void *in = k == g->me ? own : msg[k].data;
            if (k == 0)
                memmove(dest, in, total);
            else
                op(dest, in, n);
        }
        for (int k = 0; k < g->n; k++)
            if (k != g->me)
                hps_shmem_node_release(g, &msg[k]);
        return;
    }
    /* Large: combine straight from the members' sources, chunk by chunk
     * so the partial result stays in cache. */
    size_t chunk = 16384 / es ? 16384 / es * es : es;
    int in_place = dest == src;
    char *acc = in_place ? malloc(total) : dest;
    if (!acc)
        hps_shmem_fatal(fn, "out of memory for a %zu-byte reduction", total);
    const char *from[HPS_NODE_MAX];
    for (int k = 0; k < g->n; k++)
        from[k] = peer_obj(fn, g, k, src, total);
    hps_shmem_node_barrier(g);
    for (size_t off = 0; off < total; off += chunk) {
        size_t len = total - off < chunk ? total - off : chunk;
        memcpy(acc + off, from[0] + off, len);
        for (int k = 1; k < g->n; k++)
            op(acc + off, from[k] + off, len / es);
    }
    hps_shmem_node_barrier(g);
    if (in_place) {
        memcpy(dest, acc, total);
        free(acc);
    }
}
