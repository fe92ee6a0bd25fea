/* SPDX-License-Identifier: MIT */
/*
 * sets.h - what the set rows (hash set, sorted list, tree) share: the
 * section wrappers of their operations and the sorted chain that the list
 * is and that every hash bucket holds.
 */
#ifndef TMB_SETS_H
#define TMB_SETS_H

#include "tm_bench.h"
#include "tx.h"

/* One operation of set type T as one section: NAME_OP(void *, key) runs
 * NAME_OP_tx between BEGIN and TX_END. */
#define TMB_SET_SECTION(NAME, OP, T, BEGIN)                                                       \
    static int NAME##_##OP(void *s, uint64_t key)                                                 \
    {                                                                                             \
        int r;                                                                                    \
        BEGIN();                                                                                  \
        r = NAME##_##OP##_tx((T *)s, key);                                                        \
        TX_END();                                                                                 \
        return r;                                                                                 \
    }

/* The three sections of a set whose in-section operations are
 * NAME_insert_tx, NAME_remove_tx and NAME_contains_tx (T *, uint64_t): one
 * section per operation, read-only for a lookup. */
#define TMB_SET_SECTIONS(NAME, T)                                                                 \
    TMB_SET_SECTION(NAME, insert, T, TX_BEGIN)                                                    \
    TMB_SET_SECTION(NAME, remove, T, TX_BEGIN)                                                    \
    TMB_SET_SECTION(NAME, contains, T, TX_BEGIN_RO)

/* ---- the sorted chain: NULL-terminated, keys strictly ascending, < UINT64_MAX ---- */

typedef struct tmb_node {
    uint64_t key;
    struct tmb_node *next;
} tmb_node_t;

/* Where key is or would go: the link that points at the first node whose
 * key is >= key, that node (or NULL) and its key (UINT64_MAX for none).
 * Returned by value, so no section writes through a pointer to a local:
 * each node costs two instrumented reads, its key and its link. */
typedef struct tmb_pos {
    tmb_node_t **link;
    tmb_node_t *node;
    uint64_t key;
} tmb_pos_t;

TX_CALLABLE static inline tmb_pos_t tmb_chain_find(tmb_node_t **link, uint64_t key)
{
    for (;;) {
        tmb_node_t *n = TX_READP(link);
        uint64_t k = n ? TX_READ(&n->key) : UINT64_MAX;
        if (k >= key)
            return (tmb_pos_t){ link, n, k };
        link = &n->next;
    }
}

TX_CALLABLE static inline int tmb_chain_insert(tmb_node_t **head, uint64_t key)
{
    tmb_pos_t p = tmb_chain_find(head, key);
    if (p.key == key)
        return 0;
    tmb_node_t *n = TX_MALLOC(sizeof *n);
    if (!n)
        tmb_out_of_memory();
    /* Private until the link below publishes it: plain stores (tx.h). */
    n->key = key;
    n->next = p.node;
    TX_WRITEP(p.link, n);
    return 1;
}

TX_CALLABLE static inline int tmb_chain_remove(tmb_node_t **head, uint64_t key)
{
    tmb_pos_t p = tmb_chain_find(head, key);
    if (p.key != key)
        return 0;
    TX_WRITEP(p.link, TX_READP(&p.node->next));
    TX_FREE(p.node);
    return 1;
}

TX_CALLABLE static inline int tmb_chain_contains(tmb_node_t **head, uint64_t key)
{
    return tmb_chain_find(head, key).key == key;
}

/* Validation (outside sections): mark the chain's keys in present and
 * check they ascend strictly within 1..range; the number of keys, or -1
 * with one line in why. */
long tmb_chain_walk(tmb_node_t *head, uint8_t *present, uint64_t range, char *why, size_t len);
void tmb_chain_destroy(tmb_node_t *head);

#endif
