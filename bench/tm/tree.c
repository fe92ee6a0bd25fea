/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the balanced tree rows: an AVL tree (1 Ki and 64 Ki keys).
 *
 * Written for transactions: an update writes a word only when its value
 * changes (a child link after a rotation, a height that moved), so a
 * section's write set is the few nodes rebalancing touches and two updates
 * in different subtrees do not conflict on the path they share.  A lookup
 * reads two or three words per level.  Insert and remove are recursive
 * (the depth is at most 1.44 log2 n, 25 levels at 64 Ki keys).
 */
#include <stdio.h>
#include "sets.h"

typedef struct tmb_tnode {
    uint64_t key;
    struct tmb_tnode *left, *right;
    int64_t height;              /* a leaf is 1 */
} tmb_tnode_t;

typedef struct tmb_tree {
    tmb_tnode_t *root;
} tmb_tree_t;

TX_CALLABLE static inline int64_t height(tmb_tnode_t *n)
{
    return n ? TX_READ(&n->height) : 0;
}

/* Store n's height from its children's, if it changed. */
TX_CALLABLE static void fix_height(tmb_tnode_t *n)
{
    int64_t l = height(TX_READP(&n->left)), r = height(TX_READP(&n->right));
    int64_t h = 1 + (l > r ? l : r);
    if (TX_READ(&n->height) != h)
        TX_WRITE(&n->height, h);
}

/* Rotate n's left child up (right rotation); the new subtree root.  The
 * rotations stay out of line: they run on few updates, and GCC 12's TM pass
 * crashes (internal compiler error in expand_call_tm) when they are inlined
 * into rebalance. */
TX_CALLABLE __attribute__((noinline)) static tmb_tnode_t *rotate_right(tmb_tnode_t *n)
{
    tmb_tnode_t *l = TX_READP(&n->left);
    TX_WRITEP(&n->left, TX_READP(&l->right));
    TX_WRITEP(&l->right, n);
    fix_height(n);
    fix_height(l);
    return l;
}

TX_CALLABLE __attribute__((noinline)) static tmb_tnode_t *rotate_left(tmb_tnode_t *n)
{
    tmb_tnode_t *r = TX_READP(&n->right);
    TX_WRITEP(&n->right, TX_READP(&r->left));
    TX_WRITEP(&r->left, n);
    fix_height(n);
    fix_height(r);
    return r;
}

/* Replace the link *link held (old) by new, if it differs. */
TX_CALLABLE static inline void relink(tmb_tnode_t **link, tmb_tnode_t *old, tmb_tnode_t *new)
{
    if (new != old)
        TX_WRITEP(link, new);
}

/* Restore the AVL condition at n after one of its subtrees changed height
 * by one; the subtree's root afterwards. */
TX_CALLABLE static tmb_tnode_t *rebalance(tmb_tnode_t *n)
{
    tmb_tnode_t *l = TX_READP(&n->left), *r = TX_READP(&n->right);
    int64_t d = height(l) - height(r);
    if (d > 1) {
        if (height(TX_READP(&l->left)) < height(TX_READP(&l->right)))
            relink(&n->left, l, rotate_left(l));
        return rotate_right(n);
    }
    if (d < -1) {
        if (height(TX_READP(&r->right)) < height(TX_READP(&r->left)))
            relink(&n->right, r, rotate_right(r));
        return rotate_left(n);
    }
    fix_height(n);
    return n;
}

/* Insert key below n; the subtree's new root.  *changed tells the callers
 * whether to rebalance (nothing changes when the key is present). */
TX_CALLABLE static tmb_tnode_t *insert_at(tmb_tnode_t *n, uint64_t key, int *changed)
{
    if (!n) {
        tmb_tnode_t *m = TX_MALLOC(sizeof *m);
        if (!m)
            tmb_out_of_memory();
        m->key = key;            /* private until linked: plain stores (tx.h) */
        m->left = m->right = NULL;
        m->height = 1;
        *changed = 1;
        return m;
    }
    uint64_t k = TX_READ(&n->key);
    if (key == k)
        return n;
    tmb_tnode_t **link = key < k ? &n->left : &n->right;
    tmb_tnode_t *child = TX_READP(link);
    relink(link, child, insert_at(child, key, changed));
    return *changed ? rebalance(n) : n;
}

/* Remove key below n; the subtree's new root. */
TX_CALLABLE static tmb_tnode_t *remove_at(tmb_tnode_t *n, uint64_t key, int *changed)
{
    if (!n)
        return NULL;
    uint64_t k = TX_READ(&n->key);
    if (key != k) {
        tmb_tnode_t **link = key < k ? &n->left : &n->right;
        tmb_tnode_t *child = TX_READP(link);
        relink(link, child, remove_at(child, key, changed));
        return *changed ? rebalance(n) : n;
    }
    *changed = 1;
    tmb_tnode_t *l = TX_READP(&n->left), *r = TX_READP(&n->right);
    if (!l || !r) {
        TX_FREE(n);
        return l ? l : r;
    }
    /* Two children: n takes its successor's key, which then leaves the
     * right subtree (where it has no left child). */
    tmb_tnode_t *s = r, *sl;
    while ((sl = TX_READP(&s->left)))
        s = sl;
    uint64_t sk = TX_READ(&s->key);
    TX_WRITE(&n->key, sk);
    relink(&n->right, r, remove_at(r, sk, changed));
    return rebalance(n);
}

TX_CALLABLE static int tree_insert_tx(tmb_tree_t *t, uint64_t key)
{
    int changed = 0;
    tmb_tnode_t *root = TX_READP(&t->root);
    relink(&t->root, root, insert_at(root, key, &changed));
    return changed;
}

TX_CALLABLE static int tree_remove_tx(tmb_tree_t *t, uint64_t key)
{
    int changed = 0;
    tmb_tnode_t *root = TX_READP(&t->root);
    relink(&t->root, root, remove_at(root, key, &changed));
    return changed;
}

TX_CALLABLE static int tree_contains_tx(tmb_tree_t *t, uint64_t key)
{
    tmb_tnode_t *n = TX_READP(&t->root);
    while (n) {
        uint64_t k = TX_READ(&n->key);
        if (k == key)
            return 1;
        n = key < k ? TX_READP(&n->left) : TX_READP(&n->right);
    }
    return 0;
}

TMB_SET_SECTIONS(tree, tmb_tree_t)

static void *tree_create(long size)
{
    return calloc(1, sizeof(tmb_tree_t));
}

/* Check the subtree below n: keys strictly within (lo, hi), stored heights
 * right, children's heights within one; its height, or -1 with why. */
static int64_t check_at(const tmb_tnode_t *n, uint64_t lo, uint64_t hi, uint8_t *present,
                        long *count, char *why, size_t len)
{
    if (!n)
        return 0;
    if (n->key <= lo || n->key >= hi) {
        snprintf(why, len, "key %llu outside its subtree's range (%llu, %llu): order broken",
                 (unsigned long long)n->key, (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    int64_t l = check_at(n->left, lo, n->key, present, count, why, len);
    int64_t r = l < 0 ? -1 : check_at(n->right, n->key, hi, present, count, why, len);
    if (r < 0)
        return -1;
    int64_t h = 1 + (l > r ? l : r);
    if (l - r > 1 || r - l > 1 || n->height != h) {
        snprintf(why, len, "node %llu: subtree heights %lld and %lld, stored height %lld: "
                 "balance broken", (unsigned long long)n->key, (long long)l, (long long)r,
                 (long long)n->height);
        return -1;
    }
    present[n->key] = 1;
    ++*count;
    return h;
}

static long tree_walk(void *s, uint8_t *present, uint64_t range, char *why, size_t len)
{
    long count = 0;
    return check_at(((tmb_tree_t *)s)->root, 0, range + 1, present, &count, why, len) < 0 ? -1 : count;
}

static void destroy_at(tmb_tnode_t *n)
{
    if (n) {
        destroy_at(n->left);
        destroy_at(n->right);
        free(n);
    }
}

static void tree_destroy(void *s)
{
    destroy_at(((tmb_tree_t *)s)->root);
    free(s);
}

const tmb_set_ops_t tmb_tree_ops = {
    tree_create, tree_insert, tree_remove, tree_contains, tree_walk, tree_destroy,
};
