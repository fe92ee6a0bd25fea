/* SPDX-License-Identifier: MIT */
/*
 * art_ops.h - the ART's node operations (make a node or a leaf, find a
 * child, add one, grow a full node), written once over how a shared word
 * is read and written.  Two files include it:
 *
 *   art_tx.c   tx.h's accesses: plain under a global lock, through the TM
 *              layer under hpsync TM;
 *   art_olc.c  relaxed loads and release stores (pr.h), whose values only
 *              count once a node version confirms them.
 *
 * Define before including:
 *   ART_FN              the functions' qualifiers (static, TX_CALLABLE)
 *   ART_LOAD(p)         read a shared integer (count, key word, index byte)
 *   ART_LOADP(p)        read a shared child pointer
 *   ART_STORE(p, v)     write a key word
 *   ART_PUBLISH(p, v)   write what lets a reader find a child (a count, a
 *                       Node48 index byte): after the child it leads to
 *   ART_PUBLISHP(p, v)  write a child pointer (whoever reads it sees the
 *                       node or leaf it points at)
 *   ART_MALLOC(n)       a block from the heap (NULL: out of memory)
 *   ART_OOM()           out of memory (does not return)
 *
 * The writers below (put, grow) run on a node no other writer can touch:
 * under the global lock, inside a section, or with the OLC lock held (or
 * on a node not yet published).  Readers (find) may race with a writer
 * only under OLC, which validates by version afterwards; the bounds checks
 * there keep a torn count or index inside the node.
 */
#ifndef WL_ART_OPS_H
#define WL_ART_OPS_H

#include "art.h"

ART_FN void *art_alloc(art_ctx_t *c, size_t n)
{
    /* Pool blocks taken by a section that aborts are lost, not reused: the
     * pool only moves forward, which costs memory, never correctness. */
    if (c->mode == ART_ALLOC_POOL)
        return art_pool_alloc(c, n);
    void *p = ART_MALLOC(n);
    if (!p)
        ART_OOM();
    return p;
}

/* A block for a node of this type: the one reserved (art_reserve), if
 * any, else a new one. */
ART_FN void *art_node_block(art_ctx_t *c, unsigned type)
{
    void *n = c->spare[type];
    if (!n)
        return art_alloc(c, art_node_size(type));
    c->spare[type] = NULL;
    return n;
}

/* Have a block for a node of this type ready, before taking locks. */
ART_FN void art_reserve(art_ctx_t *c, unsigned type)
{
    if (!c->spare[type])
        c->spare[type] = art_alloc(c, art_node_size(type));
}

ART_FN art_node_t *art_new_node(art_ctx_t *c, unsigned type, uint64_t pfx)
{
    art_node_t *n = art_node_block(c, type);
    /* Private until a child pointer publishes it: plain stores. */
    __builtin_memset(n, 0, art_node_size(type));
    n->type = type;
    n->pfx = pfx;
    return n;
}

ART_FN void *art_new_leaf(art_ctx_t *c, uint64_t key)
{
    art_leaf_t *l = art_alloc(c, sizeof *l);
    l->key = key;
    l->value = art_value_of(key);
    return art_leaf_ref(l);
}

/* The child of n for byte b (NULL: none), and its slot.  Node4 and Node16
 * compare all their key bytes at once (art_match): one or two reads. */
ART_FN void *art_find(art_node_t *n, unsigned b, void ***slot)
{
    void **s = NULL;
    switch (n->type) {
    case ART_N4: {
        art_n4_t *m = (art_n4_t *)n;
        uint32_t cnt = ART_LOAD(&n->count);
        uint64_t z = art_match(ART_LOAD(&m->kw), b, cnt < 4 ? cnt : 4);
        if (z)
            s = &m->child[art_lane(z)];
        break;
    }
    case ART_N16: {
        art_n16_t *m = (art_n16_t *)n;
        uint32_t cnt = ART_LOAD(&n->count);
        cnt = cnt < 16 ? cnt : 16;
        uint64_t z = art_match(ART_LOAD(&m->kw[0]), b, cnt);
        if (z)
            s = &m->child[art_lane(z)];
        else if (cnt > 8 && (z = art_match(ART_LOAD(&m->kw[1]), b, cnt - 8)) != 0)
            s = &m->child[8 + art_lane(z)];
        break;
    }
    case ART_N48: {
        unsigned ix = ART_LOAD(&((art_n48_t *)n)->index[b]);
        if (ix && ix <= 48)
            s = &((art_n48_t *)n)->child[ix - 1];
        break;
    }
    default:
        s = &((art_n256_t *)n)->child[b];
        break;
    }
    *slot = s;
    return s ? ART_LOADP(s) : NULL;
}

/* Add child c for byte b to n, which has room (slot cnt is free).  The
 * child goes in before the count or index that lets a reader find it. */
ART_FN void art_put(art_node_t *n, uint32_t cnt, unsigned b, void *c)
{
    switch (n->type) {
    case ART_N4: {
        art_n4_t *m = (art_n4_t *)n;
        ART_STORE(&m->kw, (uint32_t)art_word_set(ART_LOAD(&m->kw), cnt, b));
        ART_PUBLISHP(&m->child[cnt], c);
        break;
    }
    case ART_N16: {
        art_n16_t *m = (art_n16_t *)n;
        uint64_t *w = &m->kw[cnt / 8];
        ART_STORE(w, art_word_set(ART_LOAD(w), cnt % 8, b));
        ART_PUBLISHP(&m->child[cnt], c);
        break;
    }
    case ART_N48:
        /* No child is ever removed, so slots fill in order. */
        ART_PUBLISHP(&((art_n48_t *)n)->child[cnt], c);
        ART_PUBLISH(&((art_n48_t *)n)->index[b], (uint8_t)(cnt + 1));
        break;
    default:
        ART_PUBLISHP(&((art_n256_t *)n)->child[b], c);
        break;
    }
    ART_PUBLISH(&n->count, cnt + 1);
}

/* A copy of the full node n (cnt children) one size up; private, so it is
 * filled with plain stores. */
ART_FN art_node_t *art_grow(art_ctx_t *c, art_node_t *n, uint32_t cnt)
{
    art_node_t *g = art_new_node(c, n->type + 1, ART_LOAD(&n->pfx));
    g->count = cnt;
    switch (n->type) {
    case ART_N4: {
        art_n4_t *o = (art_n4_t *)n;
        art_n16_t *d = (art_n16_t *)g;
        d->kw[0] = ART_LOAD(&o->kw);
        for (uint32_t i = 0; i < cnt; i++)
            d->child[i] = ART_LOADP(&o->child[i]);
        break;
    }
    case ART_N16: {
        art_n16_t *o = (art_n16_t *)n;
        art_n48_t *d = (art_n48_t *)g;
        uint64_t w[2] = { ART_LOAD(&o->kw[0]), ART_LOAD(&o->kw[1]) };
        for (uint32_t i = 0; i < cnt; i++) {
            d->index[art_word_byte(w[i / 8], i % 8)] = (uint8_t)(i + 1);
            d->child[i] = ART_LOADP(&o->child[i]);
        }
        break;
    }
    default: {
        art_n48_t *o = (art_n48_t *)n;
        for (unsigned b = 0; b < 256; b++) {
            unsigned ix = ART_LOAD(&o->index[b]);
            if (ix)
                ((art_n256_t *)g)->child[b] = ART_LOADP(&o->child[ix - 1]);
        }
        break;
    }
    }
    return g;
}

#endif
