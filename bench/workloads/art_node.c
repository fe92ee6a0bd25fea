// SPDX-License-Identifier: MIT
/*
 * art_node.c - what both ART implementations share outside their
 * operations: the node pool, retired nodes, the root, and the structural
 * check validation runs once the threads are joined.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "art.h"

/* Large enough that a 16 M key run takes a few hundred chunks, small
 * enough that a tiny test run does not touch much memory. */
#define POOL_CHUNK (4u << 20)

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "hps-workload-art: out of memory\n");
        exit(1);
    }
    return q;
}

/* Pool chunks come from mmap, not malloc: the pool is then the same
 * whichever malloc the process has and whatever that malloc did in the
 * previous repetition (glibc serves 4 MiB by mmap or from its heap
 * depending on what was freed before).  populate: fault every page in now. */
static void pool_add_chunk(art_pool_t *p, int populate)
{
    if (p->nchunks == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->chunks = xrealloc(p->chunks, p->cap * sizeof *p->chunks);
    }
    void *chunk = mmap(NULL, POOL_CHUNK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
    if (chunk == MAP_FAILED) {
        fprintf(stderr, "hps-workload-art: out of memory (pool chunk)\n");
        exit(1);
    }
    p->chunks[p->nchunks++] = chunk;
}

void art_pool_prefill(art_ctx_t *c, size_t bytes)
{
    for (size_t n = (bytes + POOL_CHUNK - 1) / POOL_CHUNK; n > 0; n--)
        pool_add_chunk(&c->pool, 1);
}

void *art_pool_alloc(art_ctx_t *c, size_t n)
{
    art_pool_t *p = &c->pool;
    n = (n + 15) & ~(size_t)15;
    if ((size_t)(p->end - p->at) < n) {
        /* The next chunk: a pre-faulted one while they last, then a new
         * one whose pages fault in as the thread first writes them. */
        if (p->next == p->nchunks)
            pool_add_chunk(p, 0);
        p->at = p->chunks[p->next++];
        p->end = p->at + POOL_CHUNK;
    }
    void *r = p->at;
    p->at += n;
    return r;
}

size_t art_pool_used(const art_ctx_t *c)
{
    const art_pool_t *p = &c->pool;
    return p->next ? (p->next - 1) * (size_t)POOL_CHUNK + (size_t)(POOL_CHUNK - (p->end - p->at)) : 0;
}

void art_retire(art_ctx_t *c, void *node)
{
    if (c->nretired == c->cap_retired) {
        c->cap_retired = c->cap_retired ? 2 * c->cap_retired : 256;
        c->retired = xrealloc(c->retired, c->cap_retired * sizeof *c->retired);
    }
    c->retired[c->nretired++] = node;
}

void art_ctx_release(art_ctx_t *c)
{
    for (size_t i = 0; i < c->pool.nchunks; i++)
        munmap(c->pool.chunks[i], POOL_CHUNK);
    free(c->pool.chunks);
    for (size_t i = 0; i < c->nretired; i++)
        free(c->retired[i]);
    if (c->mode == ART_ALLOC_MALLOC)    /* pool blocks went with their chunk */
        for (size_t t = 0; t < sizeof c->spare / sizeof *c->spare; t++)
            free(c->spare[t]);
    free(c->retired);
    memset(c, 0, sizeof *c);
}

art_n256_t *art_new(void)
{
    art_n256_t *r = calloc(1, sizeof *r);
    if (r)
        r->h.type = ART_N256;
    return r;
}

/* The children of inner node n as (byte, child) pairs; how many. */
static unsigned children(const art_node_t *n, unsigned *bytes, void **kids)
{
    unsigned k = 0;
    switch (n->type) {
    case ART_N4:
    case ART_N16: {
        const uint8_t *keys = n->type == ART_N4 ? ((const art_n4_t *)n)->key : ((const art_n16_t *)n)->key;
        void *const *child = n->type == ART_N4 ? ((const art_n4_t *)n)->child : ((const art_n16_t *)n)->child;
        for (uint32_t i = 0; i < n->count && i < art_capacity(n->type); i++) {
            bytes[k] = keys[i];
            kids[k++] = child[i];
        }
        break;
    }
    case ART_N48:
        for (unsigned b = 0; b < 256; b++)
            if (((const art_n48_t *)n)->index[b]) {
                bytes[k] = b;
                kids[k++] = ((const art_n48_t *)n)->child[((const art_n48_t *)n)->index[b] - 1];
            }
        break;
    default:
        for (unsigned b = 0; b < 256; b++)
            if (((const art_n256_t *)n)->child[b]) {
                bytes[k] = b;
                kids[k++] = ((const art_n256_t *)n)->child[b];
            }
        break;
    }
    return k;
}

/* path: the key bytes above depth d (top bytes of the word). */
static int check_at(const art_node_t *n, uint64_t path, unsigned d, uint64_t *leaves, char *why,
                    size_t len)
{
    if (n->type < ART_N4 || n->type > ART_N256) {
        snprintf(why, len, "node at depth %u has type %u", d, n->type);
        return -1;
    }
    if (n->version & 3) {
        snprintf(why, len, "node at depth %u is still locked or obsolete (version %#llx)", d,
                 (unsigned long long)n->version);
        return -1;
    }
    unsigned p = art_pfx_len(n->pfx);
    if (d + p > 7) {
        snprintf(why, len, "node at depth %u has a %u-byte prefix: deeper than a key", d, p);
        return -1;
    }
    path |= (n->pfx & art_top(p)) >> (8 * d);
    d += p;
    unsigned bytes[256];
    void *kids[256];
    unsigned k = children(n, bytes, kids);
    if (k != n->count || (k < 2 && d > 0)) {
        snprintf(why, len, "node at depth %u counts %u children, holds %u", d, n->count, k);
        return -1;
    }
    for (unsigned i = 0; i < k; i++) {
        for (unsigned j = 0; j < i; j++)
            if (bytes[j] == bytes[i]) {
                snprintf(why, len, "node at depth %u has byte %u twice", d, bytes[i]);
                return -1;
            }
        uint64_t below = path | ((uint64_t)bytes[i] << (56 - 8 * d));
        if (!kids[i]) {
            snprintf(why, len, "node at depth %u: null child for byte %u", d, bytes[i]);
            return -1;
        }
        if (art_is_leaf(kids[i])) {
            const art_leaf_t *l = art_leaf_of(kids[i]);
            if ((l->key & art_top(d + 1)) != below || l->value != art_value_of(l->key)) {
                snprintf(why, len, "leaf %#llx sits under path %#llx (depth %u) or holds a wrong value",
                         (unsigned long long)l->key, (unsigned long long)below, d);
                return -1;
            }
            ++*leaves;
        } else if (d >= 7) {
            snprintf(why, len, "inner node below the last key byte");
            return -1;
        } else if (check_at(kids[i], below, d + 1, leaves, why, len) != 0) {
            return -1;
        }
    }
    return 0;
}

int art_check(const art_n256_t *root, uint64_t *leaves, char *why, size_t len)
{
    *leaves = 0;
    if (root->h.pfx != 0) {
        snprintf(why, len, "the root has a prefix");
        return -1;
    }
    return check_at(&root->h, 0, 0, leaves, why, len);
}

static void destroy_at(art_node_t *n, art_alloc_mode_t mode)
{
    unsigned bytes[256];
    void *kids[256];
    unsigned k = children(n, bytes, kids);
    for (unsigned i = 0; i < k; i++) {
        if (art_is_leaf(kids[i]))
            free(art_leaf_of(kids[i]));
        else
            destroy_at(kids[i], mode);
    }
    free(n);
}

void art_destroy(art_n256_t *root, art_alloc_mode_t mode)
{
    if (mode == ART_ALLOC_MALLOC) {
        destroy_at(&root->h, mode);
        return;
    }
    free(root);                  /* the rest lives in the pools */
}
