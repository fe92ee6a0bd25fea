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

/* The shared node operations (art_ops.h) over relaxed loads and release
 * stores: what a reader reads counts only once a version check confirms
 * it; what a writer stores under its lock is published by release. */
#define ART_FN static inline
#define ART_LOAD(p) hps_plain_load_relaxed(p)
#define ART_LOADP(p) hps_plain_load_relaxed(p)
#define ART_STORE(p, v) hps_plain_store_relaxed(p, v)
#define ART_PUBLISH(p, v) hps_plain_store_release(p, v)
#define ART_PUBLISHP(p, v) publish(p, v)
#define ART_MALLOC(n) malloc(n)
/* Reported by the workload as a failed run, not a figure. */
#define ART_OOM() abort()
#include "art_ops.h"

/* Restarts of this thread's operations, for the document: how often a
 * version moved under a reader or an upgrade lost a race. */
static __thread art_olc_restarts_t t_restarts;

void art_olc_restarts_take(art_olc_restarts_t *into)
{
    into->insert += t_restarts.insert;
    into->lookup += t_restarts.lookup;
    t_restarts.insert = t_restarts.lookup = 0;
}

#define RESTART(op)                                                                                \
    do {                                                                                           \
        t_restarts.op++;                                                                           \
        goto restart;                                                                              \
    } while (0)

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
            RESTART(insert);
        uint64_t pfx = hps_plain_load_relaxed(&node->pfx);
        unsigned p = art_pfx_len(pfx), i = art_pfx_mismatch(pfx, key, d);
        if (i < p) {
            /* Split node's prefix (never the root's: it has none). */
            if (!leaf)
                leaf = art_new_leaf(c, key);
            art_reserve(c, ART_N4);
            if (!upgrade(parent, pv))
                RESTART(insert);
            if (!upgrade(node, v)) {
                write_unlock(parent);
                RESTART(insert);
            }
            art_node_t *n = art_new_node(c, ART_N4, (pfx & art_top(i)) | i);
            art_put(n, 0, art_pfx_byte(pfx, i), node);
            art_put(n, 1, art_byte(key, d + i), leaf);
            publish(pslot, n);
            hps_plain_store_relaxed(&node->pfx, art_pfx_tail(pfx, i));
            write_unlock(node);
            write_unlock(parent);
            return 1;
        }
        d += p;
        unsigned b = art_byte(key, d);
        void *child = art_find(node, b, &slot);
        if (child)
            art_prefetch(child, key, d + 1);
        uint32_t cnt = hps_plain_load_relaxed(&node->count);
        if (!check(node, v))
            RESTART(insert);
        if (!child) {
            if (!leaf)
                leaf = art_new_leaf(c, key);
            if (cnt == art_capacity(node->type)) {
                /* Full: replace it with a bigger copy (never the root). */
                art_reserve(c, node->type + 1);
                if (!upgrade(parent, pv))
                    RESTART(insert);
                if (!upgrade(node, v)) {
                    write_unlock(parent);
                    RESTART(insert);
                }
                art_node_t *g = art_grow(c, node, cnt);
                art_put(g, cnt, b, leaf);
                publish(pslot, g);
                write_unlock_obsolete(node);
                if (c->mode == ART_ALLOC_MALLOC)
                    art_retire(c, node);
                write_unlock(parent);
            } else {
                if (!upgrade(node, v))
                    RESTART(insert);
                if (parent && !check(parent, pv)) {
                    write_unlock(node);
                    RESTART(insert);
                }
                art_put(node, cnt, b, leaf);
                write_unlock(node);
            }
            return 1;
        }
        if (parent && !check(parent, pv))
            RESTART(insert);
        if (art_is_leaf(child)) {
            /* A leaf never changes once published: its key is safe to read. */
            uint64_t lk = art_leaf_of(child)->key;
            if (lk == key) {
                drop_leaf(c, leaf);
                return 0;
            }
            if (!leaf)
                leaf = art_new_leaf(c, key);
            art_reserve(c, ART_N4);
            if (!upgrade(node, v))
                RESTART(insert);
            unsigned q = art_common(lk, key, d + 1);
            art_node_t *n = art_new_node(c, ART_N4, art_pfx_make(key, d + 1, q));
            art_put(n, 0, art_byte(lk, d + 1 + q), child);
            art_put(n, 1, art_byte(key, d + 1 + q), leaf);
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
        RESTART(lookup);
    for (unsigned d = 0;; d++) {
        uint64_t pfx = hps_plain_load_relaxed(&node->pfx);
        unsigned p = art_pfx_len(pfx);
        if (art_pfx_mismatch(pfx, key, d) < p) {
            if (!check(node, v))
                RESTART(lookup);
            return 0;
        }
        d += p;
        void **slot;
        void *child = art_find(node, art_byte(key, d), &slot);
        if (child)
            art_prefetch(child, key, d + 1);
        if (!check(node, v))
            RESTART(lookup);
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
            RESTART(lookup);
        node = child;
        v = cv;
    }
}
