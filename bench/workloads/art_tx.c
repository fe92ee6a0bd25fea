// SPDX-License-Identifier: MIT
/*
 * art_tx.c - the ART's insert and lookup as sections (bench/tm/tx.h),
 * written once and compiled twice: WL_ART_LOCK (TMB_LOCK: the global-lock
 * variants, plain accesses) gives art_lock_*, WL_ART_TM (TMB_HPSYNC: every
 * shared word through hpsync's TM) gives art_tm_*.
 *
 * One operation is one section.  Shared words (a node's prefix, count,
 * keys, child slots) go through TX_READ/TX_WRITE; a node's type and a
 * leaf's key and value are written before the node or leaf is published
 * and never again, so they are read plainly (tx.h's rule).  A node that
 * grows is replaced by a bigger copy: under a lock the old one is freed at
 * once (nobody else is inside), under TM hps_tm_free defers it to commit and
 * past every section that may still read it.
 */
#include <stdio.h>
#include <stdlib.h>
#include "art.h"
#include "tx.h"

#if defined(TMB_LOCK)
#define ART_FN(name) art_lock_##name
#else
#define ART_FN(name) art_tm_##name
#endif

TX_CALLABLE static void *alloc(art_ctx_t *c, size_t n)
{
    /* Pool blocks taken by a section that aborts are lost, not reused: the
     * pool only moves forward, which costs memory, never correctness. */
    if (c->mode == ART_ALLOC_POOL)
        return art_pool_alloc(c, n);
    void *p = TX_MALLOC(n);
    if (!p)
        tmb_out_of_memory();
    return p;
}

TX_CALLABLE static art_node_t *new_node(art_ctx_t *c, unsigned type, uint64_t pfx)
{
    art_node_t *n = alloc(c, art_node_size(type));
    /* Private until a TX_WRITEP publishes it: plain stores (tx.h). */
    __builtin_memset(n, 0, art_node_size(type));
    n->type = type;
    n->pfx = pfx;
    return n;
}

TX_CALLABLE static void *new_leaf(art_ctx_t *c, uint64_t key)
{
    art_leaf_t *l = alloc(c, sizeof *l);
    l->key = key;
    l->value = art_value_of(key);
    return art_leaf_ref(l);
}

/* The child of n for byte b (NULL: none), and its slot. */
TX_CALLABLE static void *find(art_node_t *n, unsigned b, void ***slot)
{
    void **s = NULL;
    switch (n->type) {
    case ART_N4:
    case ART_N16: {
        uint8_t *keys = n->type == ART_N4 ? ((art_n4_t *)n)->key : ((art_n16_t *)n)->key;
        void **child = n->type == ART_N4 ? ((art_n4_t *)n)->child : ((art_n16_t *)n)->child;
        uint32_t cnt = TX_READ(&n->count);
        for (uint32_t i = 0; i < cnt; i++)
            if (TX_READ(&keys[i]) == b) {
                s = &child[i];
                break;
            }
        break;
    }
    case ART_N48: {
        unsigned ix = TX_READ(&((art_n48_t *)n)->index[b]);
        if (ix)
            s = &((art_n48_t *)n)->child[ix - 1];
        break;
    }
    default:
        s = &((art_n256_t *)n)->child[b];
        break;
    }
    void *c = s ? TX_READP(s) : NULL;
    *slot = s;
    return c;
}

/* Add child c for byte b to n, which has room (slot cnt is free). */
TX_CALLABLE static void put(art_node_t *n, uint32_t cnt, unsigned b, void *c)
{
    switch (n->type) {
    case ART_N4:
        TX_WRITE(&((art_n4_t *)n)->key[cnt], (uint8_t)b);
        TX_WRITEP(&((art_n4_t *)n)->child[cnt], c);
        break;
    case ART_N16:
        TX_WRITE(&((art_n16_t *)n)->key[cnt], (uint8_t)b);
        TX_WRITEP(&((art_n16_t *)n)->child[cnt], c);
        break;
    case ART_N48:
        /* No child is ever removed, so slots fill in order. */
        TX_WRITEP(&((art_n48_t *)n)->child[cnt], c);
        TX_WRITE(&((art_n48_t *)n)->index[b], (uint8_t)(cnt + 1));
        break;
    default:
        TX_WRITEP(&((art_n256_t *)n)->child[b], c);
        break;
    }
    TX_WRITE(&n->count, cnt + 1);
}

/* A copy of the full node n one size up (private: plain stores). */
TX_CALLABLE static art_node_t *grow(art_ctx_t *c, art_node_t *n, uint32_t cnt)
{
    art_node_t *g = new_node(c, n->type + 1, TX_READ(&n->pfx));
    g->count = cnt;
    if (n->type == ART_N4 || n->type == ART_N16) {
        uint8_t *keys = n->type == ART_N4 ? ((art_n4_t *)n)->key : ((art_n16_t *)n)->key;
        void **child = n->type == ART_N4 ? ((art_n4_t *)n)->child : ((art_n16_t *)n)->child;
        for (uint32_t i = 0; i < cnt; i++) {
            unsigned k = TX_READ(&keys[i]);
            void *ch = TX_READP(&child[i]);
            if (n->type == ART_N4) {
                ((art_n16_t *)g)->key[i] = (uint8_t)k;
                ((art_n16_t *)g)->child[i] = ch;
            } else {
                ((art_n48_t *)g)->index[k] = (uint8_t)(i + 1);
                ((art_n48_t *)g)->child[i] = ch;
            }
        }
    } else {
        art_n48_t *o = (art_n48_t *)n;
        for (unsigned b = 0; b < 256; b++) {
            unsigned ix = TX_READ(&o->index[b]);
            if (ix)
                ((art_n256_t *)g)->child[b] = TX_READP(&o->child[ix - 1]);
        }
    }
    return g;
}

TX_CALLABLE static int insert_tx(art_n256_t *root, uint64_t key, art_ctx_t *c)
{
    art_node_t *node = &root->h;
    void **ref = NULL;           /* the slot that holds node (NULL: the root) */
    for (unsigned d = 0;; d++) {
        uint64_t pfx = TX_READ(&node->pfx);
        unsigned p = art_pfx_len(pfx), i = art_pfx_mismatch(pfx, key, d);
        if (i < p) {
            /* The key leaves node's prefix at byte i: a Node4 takes the
             * shared part, node keeps what follows byte i. */
            art_node_t *n = new_node(c, ART_N4, (pfx & art_top(i)) | i);
            put(n, 0, art_pfx_byte(pfx, i), node);
            put(n, 1, art_byte(key, d + i), new_leaf(c, key));
            TX_WRITE(&node->pfx, art_pfx_tail(pfx, i));
            TX_WRITEP(ref, n);
            return 1;
        }
        d += p;
        unsigned b = art_byte(key, d);
        void **slot;
        void *child = find(node, b, &slot);
        if (!child) {
            uint32_t cnt = TX_READ(&node->count);
            if (cnt < art_capacity(node->type)) {
                put(node, cnt, b, new_leaf(c, key));
            } else {
                /* Full (never the root: a Node256 missing b has room). */
                art_node_t *g = grow(c, node, cnt);
                put(g, cnt, b, new_leaf(c, key));
                TX_WRITEP(ref, g);
                if (c->mode == ART_ALLOC_MALLOC)
                    TX_FREE(node);
            }
            return 1;
        }
        if (art_is_leaf(child)) {
            uint64_t lk = art_leaf_of(child)->key;
            if (lk == key)
                return 0;
            /* Lazy expansion ends here: both keys under a Node4 whose
             * prefix is what they share after byte d. */
            unsigned q = art_common(lk, key, d + 1);
            art_node_t *n = new_node(c, ART_N4, art_pfx_make(key, d + 1, q));
            put(n, 0, art_byte(lk, d + 1 + q), child);
            put(n, 1, art_byte(key, d + 1 + q), new_leaf(c, key));
            TX_WRITEP(slot, n);
            return 1;
        }
        ref = slot;
        node = child;
    }
}

TX_CALLABLE static int lookup_tx(art_n256_t *root, uint64_t key, uint64_t *value)
{
    art_node_t *node = &root->h;
    for (unsigned d = 0;; d++) {
        uint64_t pfx = TX_READ(&node->pfx);
        unsigned p = art_pfx_len(pfx);
        if (art_pfx_mismatch(pfx, key, d) < p)
            return 0;
        d += p;
        void **slot;
        void *child = find(node, art_byte(key, d), &slot);
        if (!child)
            return 0;
        if (art_is_leaf(child)) {
            const art_leaf_t *l = art_leaf_of(child);
            if (l->key != key)
                return 0;
            *value = l->value;
            return 1;
        }
        node = child;
    }
}

int ART_FN(insert)(art_n256_t *root, uint64_t key, art_ctx_t *c)
{
    int r;
    TX_BEGIN();
    r = insert_tx(root, key, c);
    TX_END();
    return r;
}

int ART_FN(lookup)(art_n256_t *root, uint64_t key, uint64_t *value)
{
    int r;
    uint64_t v = 0;
    TX_BEGIN_RO();
    r = lookup_tx(root, key, &v);
    TX_END();
    *value = v;
    return r;
}
