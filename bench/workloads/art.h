/* SPDX-License-Identifier: MIT */
/*
 * art.h - the adaptive radix tree the ART workload runs: node layout, key
 * bytes and prefixes, shared by the two implementations.
 *
 *   art_tx.c   one ART written against bench/tm/tx.h, compiled twice: under
 *              a global lock (mutex, TTS, elided TTS: plain accesses) and
 *              under hpsync TM (every shared word through the TM layer);
 *   art_olc.c  optimistic lock coupling: a version word per node, readers
 *              lock nothing and restart when a version moved.
 *
 * Both build their nodes with art_ops.h (find, add, grow: written once
 * over access macros); art_node.c has the pool, the check and teardown.
 *
 * The tree follows the published design (Leis et al., ICDE 2013): inner
 * nodes of four sizes (4, 16, 48, 256 children), key bytes taken most
 * significant first (big-endian), lazy expansion (a subtree with one key
 * is a leaf hung as high as it can be) and path compression (a node stores
 * the bytes all its keys share below its parent).  Keys are 64-bit, so a
 * prefix is at most 7 bytes and fits, with its length, in one word: a
 * section reads or replaces a node's whole prefix with one access, and no
 * "optimistic" prefix (a length without its bytes) is needed.  The root is
 * a Node256 that is never replaced, so no operation writes a root pointer.
 *
 * The workload only inserts and looks up (the study's operations), so
 * nodes only grow; a grown node is replaced and retired.  Node4 and Node16
 * keep their keys in insertion order: nothing here scans in key order, and
 * appending lets an OLC writer change one slot and the count.
 */
#ifndef WL_ART_H
#define WL_ART_H

#include <stddef.h>
#include <stdint.h>

enum { ART_N4 = 1, ART_N16, ART_N48, ART_N256 };

/*
 * Every inner node starts with this header.  version is OLC's lock word
 * (art_olc.c; unused elsewhere): bit 0 obsolete, bit 1 locked, the rest a
 * counter.  pfx holds the prefix: its bytes big-endian in bits 63..8, its
 * length (0..7) in bits 7..0.  type never changes after a node is built.
 */
typedef struct art_node {
    uint64_t version;
    uint64_t pfx;
    uint32_t count;              /* children */
    uint32_t type;
} art_node_t;

/* Node4 and Node16 keys are read and written as whole words (kw): a
 * search compares every key byte at once (art_ops.h), and a section or an
 * OLC reader reads the keys with one or two accesses, not one a byte. */
typedef struct art_n4 {
    art_node_t h;
    union {
        uint8_t key[4];
        uint32_t kw;
    };
    void *child[4];
} art_n4_t;

typedef struct art_n16 {
    art_node_t h;
    union {
        uint8_t key[16];
        uint64_t kw[2];
    };
    void *child[16];
} art_n16_t;

typedef struct art_n48 {
    art_node_t h;
    uint8_t index[256];          /* 0: no child; else slot + 1 */
    void *child[48];
} art_n48_t;

typedef struct art_n256 {
    art_node_t h;
    void *child[256];
} art_n256_t;

/* A leaf holds the whole key, so a lookup ends with one comparison.  A
 * child pointer with bit 0 set points at a leaf. */
typedef struct art_leaf {
    uint64_t key, value;
} art_leaf_t;

static inline int art_is_leaf(const void *c) { return ((uintptr_t)c & 1) != 0; }
static inline art_leaf_t *art_leaf_of(const void *c) { return (art_leaf_t *)((uintptr_t)c - 1); }
static inline void *art_leaf_ref(art_leaf_t *l) { return (void *)((uintptr_t)l + 1); }

/* The value the workload stores with a key: validation checks it, so a
 * lookup that lands on the wrong leaf is caught too. */
static inline uint64_t art_value_of(uint64_t key) { return key * 0x9E3779B97F4A7C15ull + 1; }

/* Byte d (0 = most significant) of key. */
static inline unsigned art_byte(uint64_t key, unsigned d) { return (unsigned)(key >> (56 - 8 * d)) & 0xff; }

/* The top p bytes of a word. */
static inline uint64_t art_top(unsigned p) { return p ? ~0ull << (64 - 8 * p) : 0; }

static inline unsigned art_pfx_len(uint64_t pfx) { return (unsigned)(pfx & 0xff); }
static inline unsigned art_pfx_byte(uint64_t pfx, unsigned i) { return (unsigned)(pfx >> (56 - 8 * i)) & 0xff; }

/* The prefix of p bytes of key starting at byte d. */
static inline uint64_t art_pfx_make(uint64_t key, unsigned d, unsigned p)
{
    return d < 8 ? ((key << (8 * d)) & art_top(p)) | p : p;
}

/* Where key (from byte d) leaves the prefix: its length when it matches. */
static inline unsigned art_pfx_mismatch(uint64_t pfx, uint64_t key, unsigned d)
{
    unsigned p = art_pfx_len(pfx);
    uint64_t x = ((key << (8 * d)) ^ pfx) & art_top(p);
    return x ? (unsigned)__builtin_clzll(x) / 8 : p;
}

/* The part of a prefix after byte i (split at i: byte i becomes a branch). */
static inline uint64_t art_pfx_tail(uint64_t pfx, unsigned i)
{
    unsigned rest = art_pfx_len(pfx) - i - 1;
    return ((pfx << (8 * (i + 1))) & art_top(rest)) | rest;
}

/* How many bytes from d two different keys share. */
static inline unsigned art_common(uint64_t a, uint64_t b, unsigned d)
{
    return (unsigned)__builtin_clzll((a ^ b) << (8 * d)) / 8;
}

/*
 * Key search in a word of Node4/Node16 key bytes (byte i of the array is
 * bits 8i..8i+7 of the word: little-endian).  The classic zero-byte test
 * on w ^ (b in every byte) sets bit 7 of each byte that matched; it can
 * also flag a byte above a real match (a borrow), never one below, so the
 * lowest flag is exact.  Only the first `lanes` bytes count: the rest are
 * unused slots.  The keys of a node are distinct, so one match at most.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "art.h: key words assume a little-endian byte order"
#endif
static inline uint64_t art_match(uint64_t w, unsigned b, unsigned lanes)
{
    uint64_t x = w ^ (0x0101010101010101ull * (b & 0xff));
    uint64_t z = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
    return lanes >= 8 ? z : z & ((1ull << (8 * lanes)) - 1);
}

/* The lane of the lowest flag of a non-zero art_match. */
static inline unsigned art_lane(uint64_t z) { return (unsigned)__builtin_ctzll(z) / 8; }

/* Byte i of a key word, and the word with byte i set to b. */
static inline unsigned art_word_byte(uint64_t w, unsigned i) { return (unsigned)(w >> (8 * i)) & 0xff; }
static inline uint64_t art_word_set(uint64_t w, unsigned i, unsigned b)
{
    return (w & ~(0xffull << (8 * i))) | ((uint64_t)(b & 0xff) << (8 * i));
}

/*
 * A hint, given as soon as a child's address is known: fetch the slot a
 * Node256 without a prefix would hold for key byte d.  Finding the real
 * slot needs the child's header (type, prefix), so without the hint a
 * large tree pays two cache misses in a row per level (header, then slot);
 * with it they overlap.  Big trees are mostly Node256 without prefixes
 * below the root (dense keys, and random ones down to where they thin
 * out); for another node the hint fetches a line that is not used, and a
 * prefetch never faults.
 */
static inline void art_prefetch(const void *child, uint64_t key, unsigned d)
{
    if (!art_is_leaf(child) && d < 8)
        __builtin_prefetch(&((const art_n256_t *)child)->child[art_byte(key, d)]);
}

static inline size_t art_node_size(unsigned type)
{
    switch (type) {
    case ART_N4: return sizeof(art_n4_t);
    case ART_N16: return sizeof(art_n16_t);
    case ART_N48: return sizeof(art_n48_t);
    default: return sizeof(art_n256_t);
    }
}

static inline unsigned art_capacity(unsigned type)
{
    return type == ART_N4 ? 4 : type == ART_N16 ? 16 : type == ART_N48 ? 48 : 256;
}

/*
 * Where nodes and leaves come from: malloc (whatever allocator the process
 * has: glibc, or one LD_PRELOAD put there) or a pool each thread carves
 * from large chunks (the study's pre-allocated node pool).  A pool block
 * is never freed singly; the pool goes at the end.
 */
typedef enum { ART_ALLOC_MALLOC, ART_ALLOC_POOL } art_alloc_mode_t;

typedef struct art_pool {
    char *at, *end;
    char **chunks;
    size_t nchunks, cap;
    size_t next;                 /* chunks[next] is the first not yet carved */
} art_pool_t;

/* Per thread: its pool, the nodes it replaced (OLC frees them only when
 * the run is over, since a reader may still be looking at one), and a
 * block per node type reserved before taking locks (OLC: an allocation
 * that page-faults or takes malloc's slow path must not happen while
 * other threads wait on our lock; a restart keeps the block for later). */
typedef struct art_ctx {
    art_alloc_mode_t mode;
    art_pool_t pool;
    void **retired;
    size_t nretired, cap_retired;
    void *spare[ART_N256 + 1];
} art_ctx_t;

/* n bytes, 16-aligned, from the context's pool (exits on out of memory). */
void *art_pool_alloc(art_ctx_t *c, size_t n);
/* Map and fault in enough chunks for bytes more, before the timed phase:
 * the pool is pre-allocated, so its first touch is not timed. */
void art_pool_prefill(art_ctx_t *c, size_t bytes);
/* Bytes carved from the pool so far. */
size_t art_pool_used(const art_ctx_t *c);
/* Free every chunk and retired node of c. */
void art_ctx_release(art_ctx_t *c);
/* Remember a replaced node, for art_ctx_release. */
void art_retire(art_ctx_t *c, void *node);

/* Validation (threads joined, plain reads): walk the tree from root; check
 * every leaf sits where its key's bytes lead, prefixes match, node counts
 * agree with their slots; count the leaves.  0, or -1 with why. */
int art_check(const art_n256_t *root, uint64_t *leaves, char *why, size_t len);
/* Free every node and (malloc mode) leaf below root, and root. */
void art_destroy(art_n256_t *root, art_alloc_mode_t mode);

/* The two implementations, same shape: the root is created by art_new. */
art_n256_t *art_new(void);
/* art_tx.c, mapping selected at build time: WL_ART_TX_NAME(insert) etc. */
int art_lock_insert(art_n256_t *root, uint64_t key, art_ctx_t *c);
int art_lock_lookup(art_n256_t *root, uint64_t key, uint64_t *value);
int art_tm_insert(art_n256_t *root, uint64_t key, art_ctx_t *c);
int art_tm_lookup(art_n256_t *root, uint64_t key, uint64_t *value);
/* art_olc.c */
int art_olc_insert(art_n256_t *root, uint64_t key, art_ctx_t *c);
int art_olc_lookup(art_n256_t *root, uint64_t key, uint64_t *value);
/* The calling thread's OLC restarts since its last call, added to *into. */
typedef struct art_olc_restarts {
    uint64_t insert, lookup;
} art_olc_restarts_t;
void art_olc_restarts_take(art_olc_restarts_t *into);

#endif
