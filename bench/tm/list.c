/* SPDX-License-Identifier: MIT */
/*
 * list.c - the sorted linked list row: one sorted chain (sets.h), so every
 * operation walks half the list on average, reading two words per node: the
 * row where per-access instrumentation costs the most.  Also the chain's
 * validation walk, which the hash set's buckets share.
 */
#include <stdio.h>
#include "sets.h"

typedef struct tmb_list {
    tmb_node_t *head;
} tmb_list_t;

long tmb_chain_walk(tmb_node_t *head, uint8_t *present, uint64_t range, char *why, size_t len)
{
    long count = 0;
    uint64_t last = 0;
    for (tmb_node_t *n = head; n; n = n->next, count++) {
        if (n->key <= last || n->key > range) {
            snprintf(why, len, "key %llu after %llu: the chain is not sorted or out of range 1..%llu",
                     (unsigned long long)n->key, (unsigned long long)last, (unsigned long long)range);
            return -1;
        }
        present[n->key] = 1;
        last = n->key;
    }
    return count;
}

void tmb_chain_destroy(tmb_node_t *head)
{
    while (head) {
        tmb_node_t *next = head->next;
        free(head);
        head = next;
    }
}

TX_CALLABLE static int list_insert_tx(tmb_list_t *l, uint64_t key) { return tmb_chain_insert(&l->head, key); }
TX_CALLABLE static int list_remove_tx(tmb_list_t *l, uint64_t key) { return tmb_chain_remove(&l->head, key); }
TX_CALLABLE static int list_contains_tx(tmb_list_t *l, uint64_t key) { return tmb_chain_contains(&l->head, key); }
TMB_SET_SECTIONS(list, tmb_list_t)

static void *list_create(long size)
{
    return calloc(1, sizeof(tmb_list_t));
}

static long list_walk(void *s, uint8_t *present, uint64_t range, char *why, size_t len)
{
    return tmb_chain_walk(((tmb_list_t *)s)->head, present, range, why, len);
}

static void list_destroy(void *s)
{
    tmb_chain_destroy(((tmb_list_t *)s)->head);
    free(s);
}

const tmb_set_ops_t tmb_list_ops = {
    list_create, list_insert, list_remove, list_contains, list_walk, list_destroy,
};
