// SPDX-License-Identifier: MIT
/*
 * art_olc.c - the ART under optimistic lock coupling, the strong non-TM
 * peer of the elision study (the design of Leis et al., DaMoN 2016).
 *
 * Every inner node has a version word: bit 0 obsolete (the node was
 * replaced), bit 1 locked, the rest a counter.  A reader takes no lock: it
 * notes a node's version, reads what it needs, and checks the version did
 * not move (else it restarts from the root); it notes the child's version
 * before it lets go of the parent's, so the two checks overlap (the
 * "coupling").  A writer upgrades the versions it noted to a lock by CAS,
 * which fails, and restarts it, if anything changed since it looked; it
 * locks the parent too when it must replace the node (to grow it or to
 * split its prefix).  Unlocking adds 2 (clears the lock bit, bumps the
 * counter); retiring adds 3 (also sets obsolete).
 *
 * Readers read fields that a writer may be changing: those reads are
 * relaxed atomics (pr.h), and only values a version check confirmed are
 * acted on.  A child pointer is published with a release store, so a
 * reader that sees it also sees the node it points at.  Replaced nodes are
 * never freed during the run (a reader may still be looking at one): they
 * are retired and freed with the tree.
 */
#include <sched.h>
#include <stdlib.h>
#include "art.h"
#include "hpsync/pr.h"

#define OBSOLETE 1ull
#define LOCKED 2ull

/* The version of n once no writer holds it; 0 when n is obsolete.  A
 * waiting reader yields after a while: the holder may be preempted (8
 * threads on 2 CPUs). */
static inline int read_lock(art_node_t *n, uint64_t *v)
{
    uint64_t x = hps_plain_load_acquire(&n->version);
    for (int spins = 0; x & LOCKED; x = hps_plain_load_acquire(&n->version))
        if (++spins < 64)
            hps_cpu_relax();
        else
            sched_yield();
    *v = x;
    return !(x & OBSOLETE);
}

/* Did n stay at version v?  The fence keeps the reads before it from
 * moving after the version's load (the seqlock pattern). */
static inline int check(art_node_t *n, uint64_t v)
{
    hps_fence_acquire();
    return hps_plain_load_relaxed(&n->version) == v;
}

/* Lock n if it is still at version v. Acquire: what we then read is at
 * least as new as the previous holder's release. */
static inline int upgrade(art_node_t *n, uint64_t v)
{
    uint64_t e = v;
    return hps_plain_cas_acq_rel(&n->version, &e, v + LOCKED);
}

/* Release: our stores are seen by whoever sees the new version. */
static inline void write_unlock(art_node_t *n) { hps_plain_add_acq_rel_void(&n->version, LOCKED); }
static inline void write_unlock_obsolete(art_node_t *n) { hps_plain_add_acq_rel_void(&n->version, LOCKED + OBSOLETE); }

static inline void publish(void **slot, void *c) { hps_plain_store_release(slot, c); }

static void *alloc(art_ctx_t *c, size_t n)
{
    if (c->mode == ART_ALLOC_POOL)
        return art_pool_alloc(c, n);
    void *p = malloc(n);
    if (!p) {
        /* Reported by the workload as a failed run, not a figure. */
        abort();
    }
    return p;
}

static art_node_t *new_node(art_ctx_t *c, unsigned type, uint64_t pfx)
{
    art_node_t *n = alloc(c, art_node_size(type));
    __builtin_memset(n, 0, art_node_size(type));
    n->type = type;
    n->pfx = pfx;
    return n;
}

static void *new_leaf(art_ctx_t *c, uint64_t key)
{
    art_leaf_t *l = alloc(c, sizeof *l);
    l->key = key;
    l->value = art_value_of(key);
    return art_leaf_ref(l);
}

/* The child of n for byte b and its slot, read without a lock: only
 * meaningful once n's version is checked. */
static void *find(art_node_t *n, unsigned b, void ***slot)
{
    void **s = NULL;
    switch (n->type) {
    case ART_N4:
    case ART_N16: {
        uint8_t *keys = n->type == ART_N4 ? ((art_n4_t *)n)->key : ((art_n16_t *)n)->key;
        void **child = n->type == ART_N4 ? ((art_n4_t *)n)->child : ((art_n16_t *)n)->child;
        uint32_t cnt = hps_plain_load_relaxed(&n->count), cap = art_capacity(n->type);
        for (uint32_t i = 0; i < cnt && i < cap; i++)
            if (hps_plain_load_relaxed(&keys[i]) == b) {
                s = &child[i];
                break;
            }
        break;
    }
    case ART_N48: {
        unsigned ix = hps_plain_load_relaxed(&((art_n48_t *)n)->index[b]);
        if (ix && ix <= 48)
            s = &((art_n48_t *)n)->child[ix - 1];
        break;
    }
    default:
        s = &((art_n256_t *)n)->child[b];
        break;
    }
    *slot = s;
    return s ? hps_plain_load_relaxed(s) : NULL;
}

/* Add child c for byte b in slot cnt of n (locked, or still private). The
 * child goes in before the count or index that lets readers find it. */
static void put(art_node_t *n, uint32_t cnt, unsigned b, void *c)
{
    switch (n->type) {
    case ART_N4:
        hps_plain_store_relaxed(&((art_n4_t *)n)->key[cnt], (uint8_t)b);
        publish(&((art_n4_t *)n)->child[cnt], c);
        break;
    case ART_N16:
        hps_plain_store_relaxed(&((art_n16_t *)n)->key[cnt], (uint8_t)b);
        publish(&((art_n16_t *)n)->child[cnt], c);
        break;
    case ART_N48:
        publish(&((art_n48_t *)n)->child[cnt], c);
        hps_plain_store_release(&((art_n48_t *)n)->index[b], (uint8_t)(cnt + 1));
        break;
    default:
        publish(&((art_n256_t *)n)->child[b], c);
        break;
    }
    hps_plain_store_release(&n->count, cnt + 1);
}

/* A copy of the full, locked node n one size up. */
static art_node_t *grow(art_ctx_t *c, art_node_t *n, uint32_t cnt)
{
    art_node_t *g = new_node(c, n->type + 1, n->pfx);
    g->count = cnt;
    if (n->type == ART_N4 || n->type == ART_N16) {
        uint8_t *keys = n->type == ART_N4 ? ((art_n4_t *)n)->key : ((art_n16_t *)n)->key;
        void **child = n->type == ART_N4 ? ((art_n4_t *)n)->child : ((art_n16_t *)n)->child;
        for (uint32_t i = 0; i < cnt; i++) {
            if (n->type == ART_N4) {
                ((art_n16_t *)g)->key[i] = keys[i];
                ((art_n16_t *)g)->child[i] = child[i];
            } else {
                ((art_n48_t *)g)->index[keys[i]] = (uint8_t)(i + 1);
                ((art_n48_t *)g)->child[i] = child[i];
            }
        }
    } else {
        art_n48_t *o = (art_n48_t *)n;
        for (unsigned b = 0; b < 256; b++)
            if (o->index[b])
                ((art_n256_t *)g)->child[b] = o->child[o->index[b] - 1];
    }
    return g;
}

static void drop_leaf(art_ctx_t *c, void *leaf)
{
    if (leaf && c->mode == ART_ALLOC_MALLOC)
        free(art_leaf_of(leaf));
}

int art_olc_insert(art_n256_t *root, uint64_t key, art_ctx_t *c)
{
    /* The new leaf is made once, outside every lock, and survives restarts. */
    void *leaf = NULL;
restart:;
    art_node_t *node = NULL, *next = &root->h, *parent;
    void **slot = NULL, **pslot;
    uint64_t v = 0, pv;
    for (unsigned d = 0;; d++) {
        parent = node;
        pv = v;
        pslot = slot;
        node = next;
        if (!read_lock(node, &v))
            goto restart;
        uint64_t pfx = hps_plain_load_relaxed(&node->pfx);
        unsigned p = art_pfx_len(pfx), i = art_pfx_mismatch(pfx, key, d);
        if (i < p) {
            /* Split node's prefix (never the root's: it has none). */
            if (!leaf)
                leaf = new_leaf(c, key);
            if (!upgrade(parent, pv))
                goto restart;
            if (!upgrade(node, v)) {
                write_unlock(parent);
                goto restart;
            }
            art_node_t *n = new_node(c, ART_N4, (pfx & art_top(i)) | i);
            put(n, 0, art_pfx_byte(pfx, i), node);
            put(n, 1, art_byte(key, d + i), leaf);
            publish(pslot, n);
            hps_plain_store_relaxed(&node->pfx, art_pfx_tail(pfx, i));
            write_unlock(node);
            write_unlock(parent);
            return 1;
        }
        d += p;
        unsigned b = art_byte(key, d);
        void *child = find(node, b, &slot);
        uint32_t cnt = hps_plain_load_relaxed(&node->count);
        if (!check(node, v))
            goto restart;
        if (!child) {
            if (!leaf)
                leaf = new_leaf(c, key);
            if (cnt == art_capacity(node->type)) {
                /* Full: replace it with a bigger copy (never the root). */
                if (!upgrade(parent, pv))
                    goto restart;
                if (!upgrade(node, v)) {
                    write_unlock(parent);
                    goto restart;
                }
                art_node_t *g = grow(c, node, cnt);
                put(g, cnt, b, leaf);
                publish(pslot, g);
                write_unlock_obsolete(node);
                if (c->mode == ART_ALLOC_MALLOC)
                    art_retire(c, node);
                write_unlock(parent);
            } else {
                if (!upgrade(node, v))
                    goto restart;
                if (parent && !check(parent, pv)) {
                    write_unlock(node);
                    goto restart;
                }
                put(node, cnt, b, leaf);
                write_unlock(node);
            }
            return 1;
        }
        if (parent && !check(parent, pv))
            goto restart;
        if (art_is_leaf(child)) {
            /* A leaf never changes once published: its key is safe to read. */
            uint64_t lk = art_leaf_of(child)->key;
            if (lk == key) {
                drop_leaf(c, leaf);
                return 0;
            }
            if (!leaf)
                leaf = new_leaf(c, key);
            if (!upgrade(node, v))
                goto restart;
            unsigned q = art_common(lk, key, d + 1);
            art_node_t *n = new_node(c, ART_N4, art_pfx_make(key, d + 1, q));
            put(n, 0, art_byte(lk, d + 1 + q), child);
            put(n, 1, art_byte(key, d + 1 + q), leaf);
            publish(slot, n);
            write_unlock(node);
            return 1;
        }
        next = child;
    }
}

int art_olc_lookup(art_n256_t *root, uint64_t key, uint64_t *value)
{
restart:;
    art_node_t *node = &root->h;
    uint64_t v;
    if (!read_lock(node, &v))
        goto restart;
    for (unsigned d = 0;; d++) {
        uint64_t pfx = hps_plain_load_relaxed(&node->pfx);
        unsigned p = art_pfx_len(pfx);
        if (art_pfx_mismatch(pfx, key, d) < p) {
            if (!check(node, v))
                goto restart;
            return 0;
        }
        d += p;
        void **slot;
        void *child = find(node, art_byte(key, d), &slot);
        if (!check(node, v))
            goto restart;
        if (!child)
            return 0;
        if (art_is_leaf(child)) {
            const art_leaf_t *l = art_leaf_of(child);
            if (l->key != key)
                return 0;
            *value = l->value;
            return 1;
        }
        uint64_t cv;
        if (!read_lock(child, &cv) || !check(node, v))
            goto restart;
        node = child;
        v = cv;
    }
}
