/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the cache-index-aware allocator's shared structures.
 *
 * Memory comes from the OS in 8 MiB segments aligned to 8 MiB, so the
 * segment of any pointer is the pointer with its low 23 bits cleared.  A
 * segment belongs to one thread's heap.  Its first 64 KiB slot holds the
 * segment header and one page descriptor per slot (metadata never shares a
 * line with blocks); the other 127 slots are handed out as pages of one or
 * more slots, each page holding blocks of one size class.  A request larger
 * than the biggest class gets a span: a run of slots holding that one block
 * (span.c).  One too big for a segment gets a mapping of its own ("huge").
 * Freed slots and huge mappings stay backed for reuse until they have been
 * idle for the decay time or exceed the cache cap (purge.c, huge.c).
 *
 * Cache-index awareness lives in three places:
 *   classes.c  block strides are odd multiples of the L1 line, so n
 *              consecutive blocks start in n different sets (gcd(odd, sets)=1
 *              for a power-of-two number of sets) instead of piling up;
 *   page.c     a new page's first block starts at a colour offset, rotating
 *              per heap, so pages and threads do not start on the same set;
 *   span.c     spans and huge blocks start at a rotating line offset.
 *
 * Ownership: a heap is touched only by its thread, except for the lock-free
 * thread_free stack of each page (remote frees) and the remote_full stack of
 * each segment (pages that were full when a remote free arrived).
 */
#ifndef HPS_MALLOC_INTERNAL_H
#define HPS_MALLOC_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "hpsync/pr.h"

#define HPS_SEG_SHIFT   23
#define HPS_SEG_SIZE    ((size_t)1 << HPS_SEG_SHIFT)
#define HPS_SEG_MASK    (HPS_SEG_SIZE - 1)
#define HPS_SLOT_SHIFT  16
#define HPS_SLOT_SIZE   ((size_t)1 << HPS_SLOT_SHIFT)
#define HPS_SLOTS       (HPS_SEG_SIZE / HPS_SLOT_SIZE)   /* 128 */
#define HPS_META_SLOTS  1
#define HPS_HUGE_HDR    8192          /* header bytes before a huge block's colour offset */

#define HPS_MAX_SMALL   (64 * 1024)   /* bigger requests get a span or a huge mapping */
#define HPS_SPAN_CLS    0xffff        /* pg->cls of a span: one block, on no class list */
#define HPS_MAX_CLASSES 96
#define HPS_MIN_ALIGN   16
#define HPS_MIN_BLOCKS  8             /* a page holds at least this many blocks */
#define HPS_ADOPT_TRIES 8             /* abandoned segments looked at per adoption */
#define HPS_SPARE_SLOTS 8             /* spare pages per thread: at most 512 KiB */
#define HPS_SPAN_ARENAS 8             /* span arenas at most (one per CPU allowed) */

/* A set of a segment's slots, one bit per slot. */
__extension__ typedef unsigned __int128 hps_malloc_slotset_t;
_Static_assert(HPS_SLOTS == 128, "a slot set is 128 bits");

/* The bits of the k slots from slot s (k < HPS_SLOTS: the header slot is
 * never part of a page). */
HPS_INLINE hps_malloc_slotset_t hps_malloc_slot_mask(int s, uint32_t k)
{
    return (((hps_malloc_slotset_t)1 << k) - 1) << s;
}

HPS_INLINE uint32_t hps_malloc_slotset_count(hps_malloc_slotset_t m)
{
    return (uint32_t)(__builtin_popcountll((uint64_t)m) + __builtin_popcountll((uint64_t)(m >> 64)));
}

/* The lowest slot of a nonempty set. */
HPS_INLINE int hps_malloc_slotset_first(hps_malloc_slotset_t m)
{
    uint64_t lo = (uint64_t)m;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(m >> 64));
}

/* How many slots from slot s on (s in m, s > 0) are in m without a gap. */
HPS_INLINE uint32_t hps_malloc_slotset_run(hps_malloc_slotset_t m, int s)
{
    /* The top s bits of ~(m >> s) are ones, so a zero bit is always found. */
    return (uint32_t)hps_malloc_slotset_first(~(m >> s));
}

/* A tiny lock for rare global paths (segment cache, abandoned list, heap list). */
typedef _Atomic uint32_t hps_malloc_spin_t;
void hps_malloc_spin_lock(hps_malloc_spin_t *l);
HPS_INLINE void hps_malloc_spin_unlock(hps_malloc_spin_t *l) { hps_store_release(l, 0); }

/* A free block: next link, and a cookie that marks it free (double-free check). */
typedef struct hps_malloc_block {
    struct hps_malloc_block *next;
    uintptr_t cookie;
} hps_malloc_block_t;

struct hps_malloc_heap;
struct hps_malloc_segment;

/* A page descriptor: two lines.  The first holds everything malloc's and
 * free's fast paths touch, so a free reads one descriptor line; the second
 * holds what other threads write (thread_free) and the owner's slow-path
 * fields, so a remote free does not take the hot line away. */
typedef struct hps_malloc_page {
    /* ---- hot line ---- */
    hps_malloc_block_t *free;             /* owner's free list: allocation pops, local free pushes */
    char *bump;                    /* never-used blocks start here (carved lazily) */
    uintptr_t start;               /* first block (after the colour offset) */
    /* ceil(2^64 / block_size): the block index of an offset by a
     * multiply-high, and "offset is a block boundary" by a multiply. */
    uint64_t div_mul;
    /* Owner heap, set for every page of a segment at once (set_owner);
     * &hps_malloc_heap_abandoned while the segment is abandoned, never NULL. */
    _Atomic(struct hps_malloc_heap *) heap;
    uint32_t block_size;           /* the stride */
    /* Live blocks as the owner knows them, plus HPS_PAGE_FULL while the
     * page is on the heap's full list: one word, so a local free tests
     * "emptied or was full" with one compare (hps_malloc_page_freed_slow).  Only
     * the owner writes it, with plain relaxed loads and stores (no
     * read-modify-write); remote frees read the flag. */
    hps_au32 used;
    uint16_t cls;
    uint8_t aligned;               /* holds interior pointers (over-aligned requests) */
    uint8_t slots;                 /* slots spanned; 0: slot is free */
    /* ---- cold line ---- */
    /* Frees from other threads: a stack of blocks, and how many it holds
     * in the top bits (HPS_TF_*), swapped in one exchange, so the owner
     * takes the blocks without walking the list. */
    _Alignas(64) _Atomic uintptr_t thread_free;
    char *bump_end;                /* one past the last whole block */
    struct hps_malloc_page *prev, *next;  /* heap class list or full list */
    struct hps_malloc_page *next_remote;  /* segment remote_full stack */
    _Atomic uint8_t notified;      /* a remote free already queued this full page */
} hps_malloc_page_t;

#define HPS_PAGE_FULL (1u << 31)

/* thread_free's count lives above the 48-bit user address space (our
 * blocks lie below 2^47); 16 bits hold it, as a page has at most 4096
 * blocks (one 64 KiB slot of 16-byte blocks). */
#define HPS_TF_SHIFT 48
#define HPS_TF_ONE ((uintptr_t)1 << HPS_TF_SHIFT)
#define HPS_TF_PTR(v) ((hps_malloc_block_t *)((v) & (HPS_TF_ONE - 1)))

/* The owner's update of pg->used; returns the new value. */
HPS_INLINE uint32_t hps_malloc_page_used_add(hps_malloc_page_t *pg, uint32_t delta)
{
    uint32_t u = hps_load_relaxed(&pg->used) + delta;
    hps_store_relaxed(&pg->used, u);
    return u;
}

HPS_INLINE uint32_t hps_malloc_page_live(const hps_malloc_page_t *pg)
{
    return hps_load_relaxed(&pg->used) & ~HPS_PAGE_FULL;
}

HPS_INLINE int hps_malloc_page_in_full(const hps_malloc_page_t *pg)
{
    return (hps_load_relaxed(&pg->used) & HPS_PAGE_FULL) != 0;
}

/* Hand out pg's first free block (pg->free is not NULL). */
HPS_INLINE void *hps_malloc_page_pop(hps_malloc_page_t *pg)
{
    hps_malloc_block_t *b = pg->free;
    pg->free = b->next;
    b->cookie = 0;
    hps_malloc_page_used_add(pg, 1);
    return b;
}

/* A local free took pg->used to u: does the page need the slow path (it
 * emptied, or it was on the full list)?  u == 0 wraps to the top. */
HPS_INLINE int hps_malloc_page_freed_slow(uint32_t u)
{
    return u - 1 >= HPS_PAGE_FULL - 1;
}

/* A huge mapping in the cache holds no block: HPS_SEG_HUGE_FREE, and its
 * ownership bit is clear, so a stale free() of it is an invalid free. */
enum { HPS_SEG_SMALL = 1, HPS_SEG_HUGE = 2, HPS_SEG_HUGE_FREE = 3 };

typedef struct hps_malloc_segment {
    uint64_t magic;
    uint32_t kind;
    size_t map_size;                    /* bytes mapped from the segment start */
    size_t huge_size;                   /* huge: usable bytes of the block */
    uintptr_t huge_block;               /* huge: the block's address */
    hps_malloc_slotset_t free_slots;           /* bit i: slot i is not part of a page */
    /* Bit i: slot i's memory may be backed (touched since it was last
     * purged).  Meaningful for free slots; set for every slot in use. */
    hps_malloc_slotset_t dirty;
    struct hps_malloc_segment *prev, *next;    /* heap's segment list / abandoned list */
    struct hps_malloc_heap *last_heap;         /* abandoned: the heap that gave it up */
    _Atomic(hps_malloc_page_t *) remote_full;  /* full pages that got remote frees */
    /* Remote frees in progress: such a segment is never unmapped (a remote
     * free still reads its page after pushing the block).  Own line: every
     * remote freer writes it. */
    _Alignas(64) _Atomic uint32_t remote_active;
    uint8_t slot_page[HPS_SLOTS];       /* slot -> first slot of its page */
    /* When each free slot was freed (hps_malloc_os_now_ms), for the decay; a huge
     * mapping in the cache keeps its time in freed_at[0]. */
    uint32_t freed_at[HPS_SLOTS];
    _Alignas(64) hps_malloc_page_t pages[HPS_SLOTS];  /* descriptor at the page's first slot */
} hps_malloc_segment_t;

#define HPS_SEG_MAGIC 0x6870736d616c6c63ull  /* "hpsmallc" */

/* No page in seg: every slot but the header's is free. */
HPS_INLINE int hps_malloc_segment_empty(const hps_malloc_segment_t *seg)
{
    return seg->free_slots == ~(hps_malloc_slotset_t)0 << HPS_META_SLOTS;
}

/* Not the heap's only segment (it sits on h->segs). */
HPS_INLINE int hps_malloc_segment_has_sibling(const hps_malloc_segment_t *seg)
{
    return seg->prev != NULL || seg->next != NULL;
}

/* Written by the owner only; other threads read them as a snapshot. */
typedef struct hps_malloc_heap_stats {
    uint64_t refills, remote_frees;          /* slow-path allocations; frees of other threads' blocks */
    uint64_t pages_new, pages_retired, segs_adopted;
    uint64_t spans, spans_backed;            /* spans made; of them, on backed slots only */
    uint64_t purged_slots;                   /* slots given back to the OS */
    uint64_t heaps_reused, heaps_given_up;   /* taken whole by a new thread (parked); given up */
} hps_malloc_heap_stats_t;

typedef struct hps_malloc_heap {
    /* The page malloc serves a class from: the page of the latest local
     * free (or refill).  Its free list's head is the block the program
     * freed last, still in cache, so reuse is LIFO across the class's pages
     * as with a thread cache, without one.  NULL, or a live page of this
     * heap and class (retire and abandon clear it); may sit on the full
     * list with nothing free, and malloc then refills. */
    hps_malloc_page_t *hot[HPS_MAX_CLASSES];
    hps_malloc_page_t *avail[HPS_MAX_CLASSES];  /* pages with room, current first */
    /* An emptied page kept for its class (on avail, not retired): a class
     * whose live blocks hover around a page's capacity would otherwise make
     * and retire a page, and fault its memory back in, at every crossing.
     * Stale once allocated from again (hps_malloc_page_live != 0); cleared when
     * retired.  spare_slots: slots of the non-NULL entries, at most
     * HPS_SPARE_SLOTS. */
    hps_malloc_page_t *spare[HPS_MAX_CLASSES];
    uint32_t spare_slots;
    hps_malloc_page_t *full[HPS_MAX_CLASSES];   /* pages without room */
    hps_malloc_segment_t *segs;
    uint32_t colour;                     /* next page's colour (in lines) */
    uint32_t huge_colour;
    uint32_t dirty_slots;                /* freed but still backed, over all segments */
    uint32_t used_slots;                 /* in pages (or spans), over all segments */
    uint32_t decay_at;                   /* ms: the next decay pass is due (with dirty_slots) */
    uint32_t ticks;                      /* refills since the clock was last read */
    uint32_t id;
    hps_malloc_heap_stats_t st;
    struct hps_malloc_heap *next_all;           /* every heap ever made */
    uint8_t state;                       /* HPS_HEAP_*; changes under the heap pool's lock */
    uint32_t parked_at;                  /* ms: when its thread exited (parked) */
    struct hps_malloc_heap *next_free, *prev_free;  /* parked list (newest first) or empty pool */
} hps_malloc_heap_t;

/* A heap serves a thread (live), waits whole for the next new thread after
 * its thread exited (parked), or holds nothing (empty, in the pool). */
enum { HPS_HEAP_LIVE = 0, HPS_HEAP_PARKED = 1, HPS_HEAP_EMPTY = 2 };

/* ---- geometry and size classes (classes.c) ---- */
typedef struct hps_malloc_geometry {
    uint32_t line, sets;
    uint32_t line_shift;
    const char *source;                  /* "sysfs", "sysconf", "default", "setting" */
} hps_malloc_geometry_t;
extern hps_malloc_geometry_t hps_malloc_geo;
extern uint32_t hps_malloc_class_size[HPS_MAX_CLASSES];
extern uint8_t hps_malloc_class_slots[HPS_MAX_CLASSES];
extern uint32_t hps_malloc_nclasses;
void hps_malloc_classes_init(uint32_t line, uint32_t sets, const char *source);
/* Class of a request of 1024 < n <= HPS_MAX_SMALL bytes. */
uint32_t hps_malloc_class_large(size_t n);
extern uint8_t hps_malloc_class_by16[];         /* n <= 1024: hps_malloc_class_by16[(n + 15) >> 4] */

/* Class of a request of n bytes (1 <= n <= HPS_MAX_SMALL). */
HPS_INLINE uint32_t hps_malloc_class_of(size_t n)
{
    if (hps_likely(n <= 1024))
        return hps_malloc_class_by16[(n + 15) >> 4];
    return hps_malloc_class_large(n);
}

/* ---- OS memory and the ownership map (os.c) ---- */
/* Small-block segments come from one reserved region at a fixed address
 * when the kernel grants it, so free() recognises them with a subtraction
 * and a compare, and their headers stay readable even after release. */
#define HPS_REGION_BASE  ((uintptr_t)0x200000000000)   /* 32 TiB */
#define HPS_REGION_SHIFT 36                             /* 64 GiB */
#define HPS_REGION_SIZE  ((uintptr_t)1 << HPS_REGION_SHIFT)
HPS_INLINE int hps_malloc_in_region(const void *p)
{
    return ((uintptr_t)p - HPS_REGION_BASE) >> HPS_REGION_SHIFT == 0;
}
int hps_malloc_region_reserve(void);             /* 1 if the region is ours */
void *hps_malloc_os_map_aligned(size_t size);    /* SEG_SIZE-aligned, zeroed, or NULL */
void hps_malloc_count_mapped(int64_t delta);
void hps_malloc_os_unmap(void *p, size_t size);
void hps_malloc_os_purge(void *p, size_t size);  /* give the pages back, keep the range */
uint32_t hps_malloc_os_now_ms(void);             /* a coarse monotonic clock, wrapping */
void hps_malloc_owned_set(uintptr_t seg, int on);
#define HPS_OWNED_BITS ((uintptr_t)1 << (47 - HPS_SEG_SHIFT))
extern _Atomic uint64_t hps_malloc_owned_bits[HPS_OWNED_BITS / 64];

/* Is seg the start of a segment we mapped?  A pointer outside the 47-bit
 * user address space (or NULL) reads as not ours.  Relaxed: a pointer we
 * handed out reached its freer through the program's own synchronization,
 * which orders our setting of the bit before this read. */
HPS_INLINE int hps_malloc_owned(uintptr_t seg)
{
    uintptr_t i = seg >> HPS_SEG_SHIFT;
    if (hps_unlikely(i >= HPS_OWNED_BITS))
        return 0;
    return (int)((hps_load_relaxed(&hps_malloc_owned_bits[i >> 6]) >> (i & 63)) & 1);
}
extern _Atomic uint64_t hps_malloc_mapped_bytes, hps_malloc_mapped_peak, hps_malloc_huge_bytes;

/* ---- segments and pages (page.c) ---- */
/* A new page of class cls in h's free slots, or in a new segment if
 * new_segment; NULL if none. */
hps_malloc_page_t *hps_malloc_page_new(hps_malloc_heap_t *h, uint32_t cls, int new_segment);
/* A run of k free slots in h's segments: the shortest that is all backed,
 * else the one covering the most backed slots (*slot: its first); NULL if
 * none.  A thread's segments hold pages, the span arena's spans: small
 * pages in the gaps between spans would split the runs later spans need. */
hps_malloc_segment_t *hps_malloc_slots_find(hps_malloc_heap_t *h, uint32_t k, int *slot);
int hps_malloc_slots_fit(hps_malloc_slotset_t free, uint32_t k);   /* free holds a run of k slots */
hps_malloc_segment_t *hps_malloc_segment_new(hps_malloc_heap_t *h);   /* an empty segment for h, or NULL */
void hps_malloc_page_collect(hps_malloc_page_t *pg);           /* thread_free -> free */
/* Give pg's slots back to its segment (they stay backed; purge.c decides). */
void hps_malloc_page_retire(hps_malloc_heap_t *h, hps_malloc_page_t *pg);
void hps_malloc_segment_drop(hps_malloc_heap_t *h, hps_malloc_segment_t *seg);   /* unlink an empty segment and release it */
void hps_malloc_page_carve(hps_malloc_page_t *pg);
void hps_malloc_segment_release(hps_malloc_segment_t *seg);    /* unmap (or cache) an empty segment */
size_t hps_malloc_segment_cache_trim(void);             /* unmap cached segments; bytes */
hps_malloc_spin_t *hps_malloc_segment_cache_lock(void);
uintptr_t hps_malloc_region_end(void);                  /* end of the region's segments handed out so far */
/* ---- giving memory back (purge.c) ---- */
/* Slots [s, s+k) of seg become part of the page whose first slot is page. */
void hps_malloc_slots_take(hps_malloc_heap_t *h, hps_malloc_segment_t *seg, int page, int s, uint32_t k);
/* Slots [s, s+k) of seg are free again, still backed, idle from now. */
void hps_malloc_slots_free(hps_malloc_heap_t *h, hps_malloc_segment_t *seg, int s, uint32_t k);
uint32_t hps_malloc_segment_purge(hps_malloc_segment_t *seg, hps_malloc_slotset_t slots);  /* purge those slots; how many */
/* The decay and the cap: purge what has been idle too long or is too
 * much, release emptied segments.  Only where h's lists are consistent. */
void hps_malloc_heap_tick(hps_malloc_heap_t *h);
/* The decay of h's freed slots, and at most cap of them backed, beyond
 * which those idle for min_idle ms go (a span arena's, under its lock,
 * with the cap strict): hps_malloc_heap_tick without the process-wide parts. */
void hps_malloc_heap_decay(hps_malloc_heap_t *h, uint32_t cap, uint32_t min_idle);
uint32_t hps_malloc_cache_cap_slots(void);              /* HPSYNC_MALLOC_CACHE_MIB in slots */
void hps_malloc_heap_tick_refill(hps_malloc_heap_t *h);        /* every 64th refill: hps_malloc_heap_tick */
/* Purge the longest idle of h's freed slots until at most keep stay
 * backed, release emptied segments; bytes purged.  keep 0: malloc_trim. */
size_t hps_malloc_heap_shrink(hps_malloc_heap_t *h, uint32_t keep);
/* Purge seg's free slots idle for min_age ms or more; how many. */
uint32_t hps_malloc_segment_purge_idle(hps_malloc_segment_t *seg, uint32_t now, uint32_t min_age);
void hps_malloc_page_link(hps_malloc_page_t **list, hps_malloc_page_t *pg);
void hps_malloc_page_unlink(hps_malloc_page_t **list, hps_malloc_page_t *pg);

HPS_INLINE hps_malloc_segment_t *hps_malloc_segment_of(const void *p)
{
    return (hps_malloc_segment_t *)((uintptr_t)p & ~(uintptr_t)HPS_SEG_MASK);
}

_Static_assert(sizeof(hps_malloc_page_t) == 128, "page descriptors are two lines");
_Static_assert(sizeof(hps_malloc_segment_t) <= HPS_SLOT_SIZE * HPS_META_SLOTS, "the header fits its slot");

/* Set the owner of a segment and of each of its pages. */
void hps_malloc_segment_set_owner(hps_malloc_segment_t *seg, hps_malloc_heap_t *h);
/* Put seg at the head of h's segment list and make h its owner. */
void hps_malloc_segment_attach(hps_malloc_heap_t *h, hps_malloc_segment_t *seg);

/* The first page of seg at slot *s or after it, or NULL; *s moves past
 * the page, so the caller may retire it.  Owner (or no-owner) side only. */
HPS_INLINE hps_malloc_page_t *hps_malloc_segment_next_page(hps_malloc_segment_t *seg, int *s)
{
    while (*s < (int)HPS_SLOTS) {
        hps_malloc_page_t *pg = &seg->pages[*s];
        if (pg->slots) {
            *s += pg->slots;
            return pg;
        }
        (*s)++;
    }
    return NULL;
}

HPS_INLINE hps_malloc_page_t *hps_malloc_page_of(hps_malloc_segment_t *seg, const void *p)
{
    size_t slot = ((uintptr_t)p - (uintptr_t)seg) >> HPS_SLOT_SHIFT;
    return &seg->pages[seg->slot_page[slot]];
}

/* ---- heaps (heap.c) ---- */
extern hps_malloc_heap_t hps_malloc_heap_abandoned;
extern __thread hps_malloc_heap_t *hps_malloc_tls_heap __attribute__((tls_model("initial-exec")));
hps_malloc_heap_t *hps_malloc_heap_get(void);                  /* this thread's heap, made on first use */
void hps_malloc_heap_global_init(void);                 /* once, at start-up (the thread-exit key) */
void *hps_malloc_heap_refill(hps_malloc_heap_t *h, uint32_t cls);  /* slow path of a small allocation */
int hps_malloc_heap_drain_all(hps_malloc_heap_t *h);           /* take in the remote frees queued on full pages */
/* Adopt an exited thread's segment that can serve class cls (a page with
 * a free block, or room for a new page of k slots); 1 if one was adopted. */
int hps_malloc_heap_adopt(hps_malloc_heap_t *h, uint32_t cls, uint32_t k);
/* Parked heaps idle for the decay time give their memory up (another
 * thread's tick runs it: a parked heap has no thread of its own). */
void hps_malloc_heaps_parked_tick(uint32_t now);
size_t hps_malloc_heaps_parked_trim(void);           /* give up every parked heap; bytes purged */
size_t hps_malloc_heap_drop_spares(hps_malloc_heap_t *h);   /* retire empty spares; bytes */
void hps_malloc_heap_page_unfull(hps_malloc_heap_t *h, hps_malloc_page_t *pg);
void hps_malloc_heap_page_empty(hps_malloc_heap_t *h, hps_malloc_page_t *pg);
void hps_malloc_heaps_foreach(void (*fn)(hps_malloc_heap_t *, void *), void *arg);
void hps_malloc_remote_free(hps_malloc_segment_t *seg, hps_malloc_page_t *pg, hps_malloc_block_t *b);
void hps_malloc_fork_lock(void);                      /* fork: every allocator lock */
void hps_malloc_fork_unlock(int child);

/* ---- spans (span.c) and huge blocks (huge.c) ---- */
/* A block above HPS_MAX_SMALL: a span if it fits a segment, else huge;
 * zero: the block must read as zero (calloc).  NULL when out of memory.
 * h: the caller's heap (its colours and clock work). */
void *hps_malloc_big_alloc(hps_malloc_heap_t *h, size_t n, size_t align, int zero);
/* Free the span pg whose block starts at start, by any thread; 0 if it is
 * not a live span (a double free racing with its reuse). */
int hps_malloc_span_free(hps_malloc_page_t *pg, uintptr_t start);
int hps_malloc_span_resize(hps_malloc_page_t *pg, uintptr_t start, size_t n);  /* in place; 1 if done */
size_t hps_malloc_span_trim(void);                      /* purge the arenas' freed slots; bytes */
void hps_malloc_span_lock_all(void);                    /* fork */
void hps_malloc_span_unlock_all(void);
/* Add every arena's statistics to sum with add. */
void hps_malloc_span_stats(hps_malloc_heap_stats_t *sum, void (*add)(hps_malloc_heap_stats_t *, const volatile hps_malloc_heap_stats_t *));
void *hps_malloc_huge_alloc(hps_malloc_heap_t *h, size_t n, size_t align, int zero);
void hps_malloc_huge_free(hps_malloc_segment_t *seg);
size_t hps_malloc_huge_usable(hps_malloc_segment_t *seg);
void *hps_malloc_huge_resize(hps_malloc_segment_t *seg, size_t n);  /* mremap; the new block or NULL */
void hps_malloc_huge_tick(uint32_t now);                /* unmap cached mappings past the decay */
size_t hps_malloc_huge_cache_trim(void);                /* unmap every cached mapping; bytes */
hps_malloc_spin_t *hps_malloc_huge_cache_lock(void);

/* ---- core (alloc.c) ---- */
void hps_malloc_init_slow(void);
extern _Atomic uint32_t hps_malloc_ready;
void *hps_malloc(size_t n);
void *hps_malloc_calloc(size_t n);                      /* n bytes of zeros */
void *hps_malloc_aligned(size_t align, size_t n);
void hps_malloc_free(void *p);
void *hps_malloc_realloc(void *p, size_t n);
size_t hps_malloc_usable_size(const void *p);
extern uintptr_t hps_malloc_cookie_key;

/* ---- errors and statistics (report.c) ---- */
void hps_malloc_report(const char *what, const void *p);  /* one line on stderr, never aborts */
void hps_malloc_stats_print(int fd);
typedef struct hps_malloc_totals {
    size_t mapped, huge, in_use, heaps, parked;
    hps_malloc_heap_stats_t st;
} hps_malloc_totals_t;

void hps_malloc_totals(hps_malloc_totals_t *t);


#endif
