/* SPDX-License-Identifier: MIT */
/*
 * hashset.c - the hash set rows: one sorted chain (sets.h) per bucket, as
 * many buckets as keys at the start, so an operation reads a handful of
 * words: the row where instrumentation costs least, and where two threads
 * rarely touch the same bucket.
 */
#include <stdio.h>
#include "sets.h"

typedef struct tmb_hashset {
    uint64_t mask;               /* buckets - 1, a power of two */
    tmb_node_t *bucket[];
} tmb_hashset_t;

/* Fibonacci hashing spreads consecutive keys over the buckets. */
TX_CALLABLE static inline uint64_t bucket_of(uint64_t key, uint64_t mask)
{
    return (key * 0x9E3779B97F4A7C15ull >> 32) & mask;
}

TX_CALLABLE static int hashset_insert_tx(tmb_hashset_t *h, uint64_t key)
{
    return tmb_chain_insert(&h->bucket[bucket_of(key, h->mask)], key);
}
TX_CALLABLE static int hashset_remove_tx(tmb_hashset_t *h, uint64_t key)
{
    return tmb_chain_remove(&h->bucket[bucket_of(key, h->mask)], key);
}
TX_CALLABLE static int hashset_contains_tx(tmb_hashset_t *h, uint64_t key)
{
    return tmb_chain_contains(&h->bucket[bucket_of(key, h->mask)], key);
}
TMB_SET_SECTIONS(hashset, tmb_hashset_t)

static void *hashset_create(long size)
{
    uint64_t n = 1;
    while ((long)n < size)
        n <<= 1;
    tmb_hashset_t *h = calloc(1, sizeof *h + n * sizeof h->bucket[0]);
    if (h)
        h->mask = n - 1;
    return h;
}

static long hashset_walk(void *s, uint8_t *present, uint64_t range, char *why, size_t len)
{
    tmb_hashset_t *h = s;
    long total = 0;
    for (uint64_t b = 0; b <= h->mask; b++) {
        long n = tmb_chain_walk(h->bucket[b], present, range, why, len);
        if (n < 0)
            return -1;
        for (tmb_node_t *x = h->bucket[b]; x; x = x->next) {
            if (bucket_of(x->key, h->mask) != b) {
                snprintf(why, len, "key %llu is in bucket %llu, not its own",
                         (unsigned long long)x->key, (unsigned long long)b);
                return -1;
            }
        }
        total += n;
    }
    return total;
}

static void hashset_destroy(void *s)
{
    tmb_hashset_t *h = s;
    for (uint64_t b = 0; b <= h->mask; b++)
        tmb_chain_destroy(h->bucket[b]);
    free(h);
}

const tmb_set_ops_t tmb_hashset_ops = {
    hashset_create, hashset_insert, hashset_remove, hashset_contains, hashset_walk, hashset_destroy,
};
