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
#define ART_API(name) art_lock_##name
#else
#define ART_API(name) art_tm_##name
#endif

/* The shared node operations (art_ops.h) over tx.h's accesses. */
#define ART_FN TX_CALLABLE static __attribute__((unused))   /* art_reserve is OLC's */
#define ART_LOAD(p) TX_READ(p)
#define ART_LOADP(p) TX_READP(p)
#define ART_STORE(p, v) TX_WRITE(p, v)
#define ART_PUBLISH(p, v) TX_WRITE(p, v)
#define ART_PUBLISHP(p, v) TX_WRITEP(p, v)
#define ART_MALLOC(n) TX_MALLOC(n)
#define ART_OOM() tmb_out_of_memory()
#include "art_ops.h"

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
            art_node_t *n = art_new_node(c, ART_N4, (pfx & art_top(i)) | i);
            art_put(n, 0, art_pfx_byte(pfx, i), node);
            art_put(n, 1, art_byte(key, d + i), art_new_leaf(c, key));
            TX_WRITE(&node->pfx, art_pfx_tail(pfx, i));
            TX_WRITEP(ref, n);
            return 1;
        }
        d += p;
        unsigned b = art_byte(key, d);
        void **slot;
        void *child = art_find(node, b, &slot);
        if (!child) {
            uint32_t cnt = TX_READ(&node->count);
            if (cnt < art_capacity(node->type)) {
                art_put(node, cnt, b, art_new_leaf(c, key));
            } else {
                /* Full (never the root: a Node256 missing b has room). */
                art_node_t *g = art_grow(c, node, cnt);
                art_put(g, cnt, b, art_new_leaf(c, key));
                TX_WRITEP(ref, g);
                if (c->mode == ART_ALLOC_MALLOC)
                    TX_FREE(node);
            }
            return 1;
        }
        art_prefetch(child, key, d + 1);
        if (art_is_leaf(child)) {
            uint64_t lk = art_leaf_of(child)->key;
            if (lk == key)
                return 0;
            /* Lazy expansion ends here: both keys under a Node4 whose
             * prefix is what they share after byte d. */
            unsigned q = art_common(lk, key, d + 1);
            art_node_t *n = art_new_node(c, ART_N4, art_pfx_make(key, d + 1, q));
            art_put(n, 0, art_byte(lk, d + 1 + q), child);
            art_put(n, 1, art_byte(key, d + 1 + q), art_new_leaf(c, key));
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
        void *child = art_find(node, art_byte(key, d), &slot);
        if (!child)
            return 0;
        art_prefetch(child, key, d + 1);
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

int ART_API(insert)(art_n256_t *root, uint64_t key, art_ctx_t *c)
{
    int r;
    TX_BEGIN();
    r = insert_tx(root, key, c);
    TX_END();
    return r;
}

int ART_API(lookup)(art_n256_t *root, uint64_t key, uint64_t *value)
{
    int r;
    uint64_t v = 0;
    TX_BEGIN_RO();
    r = lookup_tx(root, key, &v);
    TX_END();
    *value = v;
    return r;
}
