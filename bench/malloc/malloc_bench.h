/* SPDX-License-Identifier: MIT */
/*
 * malloc_bench.h - what the parts of hps-bench-malloc share.
 *
 * The program calls plain malloc/free only, so LD_PRELOAD decides which
 * allocator it measures; every document says which shared object really
 * provided malloc.  Parts: spread.c (where back-to-back blocks land in the
 * L1), ring.c (the ring traversal, timed or under cachegrind), mix.c
 * (malloc/free throughput and peak RSS), patterns.c (large blocks, a
 * cross-thread stress, a server, a pipeline: throughput and peak RSS).  Each part measures first and emits
 * its rows afterwards, when bench_malloc.c writes the document.
 */
#ifndef HPS_MALLOC_BENCH_H
#define HPS_MALLOC_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include "hps_rand.h"
#include <stdio.h>
#include "hps_bench.h"
#include "hpsync/pr.h"

/* The study's ring and the spread test both use 128 blocks. */
#define MB_BLOCKS 128
#define MB_MAX_SIZES 40
#define MB_SEED 0x5EEDC0FFEE123457ull

/* One cache as the L1 set-index computation needs it. */
typedef struct mb_cache {
    uint64_t size;
    unsigned ways, line, sets;
    const char *source;        /* "sysfs" or "default" */
} mb_cache_t;

/* L1 data cache and last-level cache of CPU 0, from
 * /sys/devices/system/cpu/cpu0/cache/index*; 32 KiB 8-way 64 B lines
 * (resp. 8 MiB 16-way) when sysfs does not say. */
void mb_caches(mb_cache_t *l1d, mb_cache_t *llc);
void mb_cache_json(const char *key, const mb_cache_t *c);


/*
 * A request size as a busy program makes them: log-uniform over 16..1024
 * bytes (so small sizes dominate by count), and one request in 64 between
 * 1 KiB and 32 KiB.
 */
static inline size_t mb_mix_size(uint64_t *s)
{
    uint64_t r = hps_xorshift64(s);
    if ((r & 63) == 0)
        return 1024 + (size_t)((r >> 8) % (31 * 1024));
    size_t base = (size_t)16 << ((r >> 6) % 6);          /* 16 .. 512 */
    return base + (size_t)((r >> 12) % base);           /* base .. 2 base - 1 */
}

/*
 * A live block and what was written into it.  The tag (a random number
 * drawn at malloc) goes into the block's first and last word and is checked
 * at free: an allocator that hands one block out twice, or lets blocks
 * overlap, fails the run instead of producing a figure.  A random tag, not
 * one derived from the address, because a block handed out twice has the
 * same address both times.
 */
typedef struct mb_block {
    void *p;
    size_t size;                 /* >= 16 */
    uint64_t tag;
} mb_block_t;

static inline void mb_stamp(const mb_block_t *b)
{
    __builtin_memcpy(b->p, &b->tag, 8);
    __builtin_memcpy((char *)b->p + b->size - 8, &b->tag, 8);
}

/* Nonzero when b's stamp is intact. */
static inline int mb_stamp_ok(const mb_block_t *b)
{
    uint64_t first, last;
    __builtin_memcpy(&first, b->p, 8);
    __builtin_memcpy(&last, (const char *)b->p + b->size - 8, 8);
    return first == b->tag && last == b->tag;
}

/* Write n addresses as one compact JSON array (a spread row holds 128). */
void mb_addresses_json(const char *key, void *const *blocks, int n);

/* ---- spread.c ----------------------------------------------------------- */

/* Fresh, then after `warmup` mixed operations; returns 0 or 1 after logging. */
int mb_spread_run(long warmup);
void mb_spread_emit(void);

/* ---- ring.c --------------------------------------------------------------- */

/* Rings of every size, allocated back to back (ascending sizes); then
 * either timed (reps batches of laps per size, interleaved) or, with sim,
 * walked laps times per size untimed, for cachegrind.  0 or 1. */
int mb_ring_run(long laps, int reps, int sim);
void mb_ring_emit(void);

/* ---- mix.c ---------------------------------------------------------------- */

/* pattern "local" (every thread its own window), "prodcons" (pairs:
 * producers allocate, consumers free), or one of patterns.c's; 0, 1 on
 * failure, 2 on bad args. */
int mb_mix_run(const char *pattern, int threads, long duration_ms, long window);
void mb_mix_emit(void);

/* A window of slots, each empty (p NULL) or holding one stamped block. */
typedef struct mb_window {
    mb_block_t *slot;
    long n;
} mb_window_t;

/* An array of n empty slots; 0, or -1 when out of memory. */
int mb_window_init(mb_window_t *w, long n);
/* Free slot i's block after checking its stamp; -1 if it was damaged. */
int mb_window_drop(mb_window_t *w, long i);
/* A new block of a mix size, stamped; 0, or -1 when malloc failed. */
int mb_new_block(mb_block_t *b, uint64_t *seed);
/* Wait politely: spin a little, then give the CPU away (a pair may share
 * one CPU with the other pair, and spinning would only starve the partner). */
void mb_backoff(int *spins);
/* The process's peak RSS in KiB; *source says what was read (VmHWM from
 * /proc/self/status, or getrusage's ru_maxrss where /proc is missing). */
long mb_peak_rss_kib(const char **source);

/*
 * The indices of a single-producer single-consumer ring (mix.c's prodcons,
 * patterns.c's pipeline), each on its own line so the two threads do not
 * false-share what they each write.  The waits return 0 once the run is
 * stopped (g), 1 when the slot is there.
 */
typedef struct mb_ring {
    _Alignas(64) atomic_ulong head;          /* consumer's */
    _Alignas(64) atomic_ulong tail;          /* producer's */
} mb_ring_t;

/* Producer: wait for room for item tail in a ring of depth slots. */
static inline int mb_ring_wait_room(mb_ring_t *r, unsigned long tail, unsigned long depth,
                                    hps_bench_gate_t *g)
{
    int spins = 0;
    /* Acquire: the consumer is done with the slot before we reuse it. */
    while (tail - atomic_load_explicit(&r->head, memory_order_acquire) == depth)
        if (hps_bench_gate_stopped(g))
            return 0;
        else
            mb_backoff(&spins);
    return !hps_bench_gate_stopped(g);
}

/* Consumer: wait for item head. */
static inline int mb_ring_wait_item(mb_ring_t *r, unsigned long head, hps_bench_gate_t *g)
{
    int spins = 0;
    /* Acquire: pairs with the producer's release of tail. */
    while (head == atomic_load_explicit(&r->tail, memory_order_acquire))
        if (hps_bench_gate_stopped(g))
            return 0;
        else
            mb_backoff(&spins);
    return !hps_bench_gate_stopped(g);
}

/* Publish an index: release, so the slot's contents (the producer's block
 * and its stamp; the consumer being done with it) are seen before it. */
static inline void mb_ring_publish(atomic_ulong *index, unsigned long value)
{
    atomic_store_explicit(index, value, memory_order_release);
}

/* ---- patterns.c ------------------------------------------------------------- */

/* Is name one of patterns.c's (large, stress, server, pipeline)? */
int mb_pattern_known(const char *name);
/* Run pattern name with threads threads for duration_ms; the operation
 * counts and the peak RSS right after the run.  0, 1 on failure (a broken
 * block or a failed malloc), 2 on bad arguments. */
int mb_pattern_run(const char *name, int threads, long duration_ms, hps_bench_totals_t *t,
                   uint64_t *mallocs, uint64_t *frees, long *rss_peak_kib);

/*
 * The warm-up spread.c runs: ops operations of the mix on a fresh window of
 * slots, then every block freed except every 8th slot's (the long-lived
 * objects a running program keeps).  Returns how many stay live, or -1
 * after logging.
 */
long mb_warm_up(long ops, long slots, mb_window_t *w);
/* Free (and check) every block of w, then w's arrays; 0, or -1 if a block
 * was overwritten. */
int mb_window_free(mb_window_t *w);

#endif
