// SPDX-License-Identifier: MIT
/*
 * The logs every backend keeps: growable pair arrays and the hashed redo
 * log.  Growth is the only place that allocates, and it doubles, so a
 * thread reaches its steady state after a few sections.
 */
#include <stdio.h>
#include <string.h>
#include "internal.h"

static void *grow(void *p, uint32_t *cap, size_t elem)
{
    uint32_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(p, (size_t)c * elem);
    if (!q) {
        static const char msg[] = "hpsync: TM log allocation failed\n";
        (void)!fwrite(msg, 1, sizeof msg - 1, stderr);
        abort();
    }
    *cap = c;
    return q;
}

void hps_tm_log_grow(hps_tm_log_t *l)
{
    l->e = grow(l->e, &l->cap, sizeof *l->e);
}

void hps_tm_pvec_push(hps_tm_pvec_t *v, void *p)
{
    if (v->n == v->cap)
        v->p = grow(v->p, &v->cap, sizeof *v->p);
    v->p[v->n++] = p;
}

static inline uint32_t hash(const uint64_t *w, uint32_t bits)
{
    /* Fibonacci hashing of the word index: consecutive words spread out. */
    return (uint32_t)((((uintptr_t)w >> 3) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static void index_entry(hps_tm_wset_t *ws, uint32_t i)
{
    uint32_t m = (1u << ws->bits) - 1, h = hash(ws->e[i].addr, ws->bits);
    while ((uint32_t)(ws->slot[h] >> 32) == ws->gen)
        h = (h + 1) & m;
    ws->slot[h] = (uint64_t)ws->gen << 32 | i;
}

/* Up to this many entries the write set is searched linearly and not
 * indexed: most sections write a few words, and a scan of a few entries is
 * cheaper than hashing each write into the index (24 instructions). */
#define LINEAR_MAX 8

/* The index keeps at least twice as many slots as entries can exist. */
static void rebuild(hps_tm_wset_t *ws)
{
    free(ws->slot);
    ws->bits = 1;
    while ((1u << ws->bits) < 2 * ws->cap)
        ws->bits++;
    ws->slot = calloc((size_t)1 << ws->bits, sizeof *ws->slot);
    if (!ws->slot) {
        static const char msg[] = "hpsync: TM write-set allocation failed\n";
        (void)!fwrite(msg, 1, sizeof msg - 1, stderr);
        abort();
    }
    ws->gen = 1;
    ws->nidx = 0;                    /* the next search indexes them all */
}

/* The entry for w in the index, or NULL with *empty set to the free slot
 * the probe ended on (where w's entry belongs). */
static inline hps_tm_went_t *probe(const hps_tm_wset_t *ws, const uint64_t *w, uint32_t *empty)
{
    uint32_t m = (1u << ws->bits) - 1, h = hash(w, ws->bits);
    for (;;) {
        uint64_t s = ws->slot[h];
        if ((uint32_t)(s >> 32) != ws->gen) {
            *empty = h;
            return NULL;
        }
        hps_tm_went_t *e = &ws->e[(uint32_t)s];
        if (e->addr == w)
            return e;
        h = (h + 1) & m;
    }
}

static inline hps_tm_went_t *scan(const hps_tm_wset_t *ws, const uint64_t *w)
{
    for (uint32_t i = 0; i < ws->n; i++)
        if (ws->e[i].addr == w)
            return &ws->e[i];
    return NULL;
}

/* Entries appended since the last search (hps_tm_wset_put's appends after
 * a clear filter bit, the inline append of hpsync/tm.h) join the index. */
static HPS_NOINLINE void index_rest(hps_tm_wset_t *ws)
{
    while (ws->nidx < ws->n)
        index_entry(ws, ws->nidx++);
}

/* Out of line and reached by a tail call: the common search stays a leaf
 * function, with no registers to save. */
static HPS_NOINLINE hps_tm_went_t *index_rest_and_probe(hps_tm_wset_t *ws, const uint64_t *w)
{
    uint32_t empty;
    index_rest(ws);
    return probe(ws, w, &empty);
}

hps_tm_went_t *hps_tm_wset_find(hps_tm_wset_t *ws, const uint64_t *w)
{
    if (!HPS_TM_WSET_MAY_HOLD_(ws, w))
        return NULL;
    if (ws->n <= LINEAR_MAX)
        return scan(ws, w);
    if (hps_unlikely(ws->nidx < ws->n))
        return index_rest_and_probe(ws, w);
    uint32_t empty;
    return probe(ws, w, &empty);
}

/* Append w's entry; `empty` is the free slot a probe for w ended on
 * (UINT32_MAX: none), where the entry is indexed at once rather than hashed
 * and probed again at the next search. */
static HPS_NOINLINE hps_tm_went_t *append(hps_tm_wset_t *ws, uint64_t *w, uint64_t v, uint64_t mask,
                                          uint32_t empty)
{
    if (ws->n == ws->cap) {
        ws->e = grow(ws->e, &ws->cap, sizeof *ws->e);
        rebuild(ws);
        empty = UINT32_MAX;          /* a new index, empty */
    }
    uint32_t i = ws->n++;
    ws->e[i] = (hps_tm_went_t){ w, v & mask, mask };
    HPS_TM_WSET_MARK_(ws, w);
    if (empty != UINT32_MAX && ws->nidx == i) {
        ws->slot[empty] = (uint64_t)ws->gen << 32 | i;
        ws->nidx = i + 1;
    }
    return &ws->e[i];
}

static HPS_NOINLINE hps_tm_went_t *put_indexing(hps_tm_wset_t *ws, uint64_t *w, uint64_t v, uint64_t mask)
{
    index_rest(ws);
    return hps_tm_wset_put(ws, w, v, mask);
}

/* The rare paths are tail calls: a write to a word already in the log (a
 * section's repeated read-modify-writes) stays a leaf function. */
hps_tm_went_t *hps_tm_wset_put(hps_tm_wset_t *ws, uint64_t *w, uint64_t v, uint64_t mask)
{
    uint32_t empty = UINT32_MAX;
    if (HPS_TM_WSET_MAY_HOLD_(ws, w)) {
        hps_tm_went_t *e;
        if (ws->n <= LINEAR_MAX)
            e = scan(ws, w);
        else if (hps_likely(ws->nidx == ws->n))
            e = probe(ws, w, &empty);
        else
            return put_indexing(ws, w, v, mask);
        if (e) {
            e->val = (e->val & ~mask) | (v & mask);
            e->mask |= mask;
            return e;
        }
    }
    return append(ws, w, v, mask, empty);
}

void hps_tm_wset_clear(hps_tm_wset_t *ws)
{
    /* A few entries clear their own filter words: a small section then
     * touches the one or two words (and cache lines) it set, not all 8. */
    if (ws->n <= LINEAR_MAX) {
        for (uint32_t i = 0; i < ws->n; i++)
            HPS_TM_WSET_W_(ws, ws->e[i].addr) = 0;
    } else {
        memset(ws->filt, 0, sizeof ws->filt);
    }
    ws->n = 0;
    if (ws->nidx == 0)
        return;                      /* no slot of this generation was used */
    ws->nidx = 0;
    if (++ws->gen == 0) {            /* wrapped: old slots would look current */
        memset(ws->slot, 0, sizeof *ws->slot << ws->bits);
        ws->gen = 1;
    }
}

/* Sub-word entries are stored with stores of their own width, so that a
 * neighbour in the same word written outside any section (privatized data
 * next to shared data) is never overwritten with a stale copy. */
void hps_tm_wset_store(const hps_tm_went_t *e)
{
    uint64_t m = e->mask;
    if (m == ~(uint64_t)0) {
        hps_plain_store_relaxed(e->addr, e->val);
        return;
    }
    unsigned char *b = (unsigned char *)e->addr;
    for (unsigned i = 0; i < 8;) {
        if (!((m >> (8 * i)) & 0xff)) {
            i++;
            continue;
        }
        if (i % 4 == 0 && ((m >> (8 * i)) & 0xffffffffu) == 0xffffffffu) {
            hps_plain_store_relaxed((uint32_t *)(b + i), (uint32_t)(e->val >> (8 * i)));
            i += 4;
        } else if (i % 2 == 0 && ((m >> (8 * i)) & 0xffff) == 0xffff) {
            hps_plain_store_relaxed((uint16_t *)(b + i), (uint16_t)(e->val >> (8 * i)));
            i += 2;
        } else {
            hps_plain_store_relaxed(b + i, (unsigned char)(e->val >> (8 * i)));
            i++;
        }
    }
}

void hps_tm_wset_write_back(const hps_tm_wset_t *ws)
{
    const hps_tm_went_t *e = ws->e, *end = e + ws->n;
    for (; e != end; e++) {
        /* Whole words, nearly all of them, without the call. */
        if (e->mask == ~(uint64_t)0)
            hps_plain_store_relaxed(e->addr, e->val);
        else
            hps_tm_wset_store(e);
    }
}
