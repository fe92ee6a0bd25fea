// SPDX-License-Identifier: MIT
/*
 * Thread heaps: one per thread, touched only by its thread.  The slow path
 * of allocation (refill), remote frees, thread exit (abandoning segments to
 * whoever needs memory next) and fork.
 *
 * Why no lock on the heap: a heap is private, so the owner's malloc and
 * free are plain loads and stores.  Other threads reach a heap's memory only
 * through the lock-free stacks of its pages (thread_free) and segments
 * (remote_full).  The few global structures (heap pool, abandoned segments,
 * segment cache) have their own small locks, taken rarely and held briefly,
 * and all of them are taken around fork().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include "internal.h"
#include "settings.h"

__thread hps_heap_t *hps_tls_heap __attribute__((tls_model("initial-exec")));

static hps_spin_t heaps_lock;          /* heap pool and the list of all heaps */
static hps_heap_t *heaps_all, *heaps_free;
static char *heap_chunk;
static size_t heap_chunk_left;
static uint32_t heap_count;

static hps_spin_t abandoned_lock;
/* Segments of exited threads, oldest first: adopted in the order they were
 * given up, so none sinks under newer ones while the blocks freed into it
 * by other threads wait for an owner to collect them. */
static hps_segment_t *abandoned, *abandoned_last;

hps_heap_t hps_heap_abandoned;      /* owner of abandoned segments: nobody's heap */

static pthread_key_t exit_key;
static int exit_key_ok;

static void heap_abandon(hps_heap_t *h);
static void reclaim(hps_heap_t *h);

static void on_thread_exit(void *arg)
{
    hps_heap_t *h = arg;
    if (h && h == hps_tls_heap) {
        hps_tls_heap = NULL;
        heap_abandon(h);
    }
}

void hps_heap_global_init(void)
{
    /* pthread_key_create does not allocate; the key's slot is among the
     * first 32, which glibc keeps inside the thread descriptor. */
    exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

static hps_heap_t *heap_new(void)
{
    hps_heap_t *h = NULL;
    hps_spin_lock(&heaps_lock);
    if (heaps_free) {
        h = heaps_free;
        heaps_free = h->next_free;
    } else {
        if (heap_chunk_left < sizeof(hps_heap_t)) {
            void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED) {
                heap_chunk = p;
                heap_chunk_left = 1 << 20;
            }
        }
        if (heap_chunk_left >= sizeof(hps_heap_t)) {
            h = (hps_heap_t *)heap_chunk;
            heap_chunk += (sizeof(hps_heap_t) + 63) & ~(size_t)63;
            heap_chunk_left -= (sizeof(hps_heap_t) + 63) & ~(size_t)63;
            h->id = heap_count++;
            h->next_all = heaps_all;
            heaps_all = h;
        }
    }
    hps_spin_unlock(&heaps_lock);
    if (!h)
        return NULL;
    uint32_t id = h->id;
    hps_heap_t *next_all = h->next_all;
    hps_heap_stats_t st = h->st;        /* statistics survive reuse: they are the process's */
    *h = (hps_heap_t){ 0 };
    h->id = id;
    h->next_all = next_all;
    h->st = st;
    /* Each heap starts at its own colour (an odd step apart), so the first
     * pages of two threads do not start on the same sets. */
    h->colour = id * 23u;
    h->huge_colour = id * 7u;
    reclaim(h);
    return h;
}

hps_heap_t *hps_heap_get(void)
{
    hps_heap_t *h = hps_tls_heap;
    if (hps_likely(h != NULL))
        return h;
    h = heap_new();
    if (!h)
        return NULL;
    hps_tls_heap = h;
    if (exit_key_ok)
        pthread_setspecific(exit_key, h);
    return h;
}

void hps_heaps_foreach(void (*fn)(hps_heap_t *, void *), void *arg)
{
    hps_spin_lock(&heaps_lock);
    for (hps_heap_t *h = heaps_all; h; h = h->next_all)
        fn(h, arg);
    hps_spin_unlock(&heaps_lock);
}

/* ---- full pages and remote frees ------------------------------------------ */

static void page_to_full(hps_heap_t *h, hps_page_t *pg)
{
    hps_page_unlink(&h->avail[pg->cls], pg);
    hps_page_link(&h->full[pg->cls], pg);
    /* Seq-cst against the remote free's push-then-load: either it sees
     * the full flag and queues the page, or we see its block here. */
    atomic_store_explicit(&pg->used, hps_load_relaxed(&pg->used) | HPS_PAGE_FULL,
                          memory_order_seq_cst);
    if (atomic_load_explicit(&pg->thread_free, memory_order_seq_cst))
        hps_heap_page_unfull(h, pg);
}

void hps_heap_page_unfull(hps_heap_t *h, hps_page_t *pg)
{
    hps_page_unlink(&h->full[pg->cls], pg);
    /* Behind the current page, not in front: the current page keeps
     * serving, and this one gathers more frees before it is used again
     * (in front, a page with one free block would bounce between the lists
     * on every allocation). */
    hps_page_t *cur = h->avail[pg->cls];
    if (cur) {
        pg->prev = cur;
        pg->next = cur->next;
        if (cur->next)
            cur->next->prev = pg;
        cur->next = pg;
    } else {
        hps_page_link(&h->avail[pg->cls], pg);
    }
    hps_store_relaxed(&pg->used, hps_page_live(pg));
}

void hps_remote_free(hps_segment_t *seg, hps_page_t *pg, hps_block_t *b)
{
    /* Outside the region, announce ourselves first: the owner never unmaps
     * a segment with a remote free in flight, and we read the page after
     * the push.  Region segments are never unmapped, so they skip the two
     * atomics on a line every remote freer shares. */
    int counted = !hps_in_region(seg);
    if (counted)
        hps_faa_acquire(&seg->remote_active, 1);
    b->cookie = (uintptr_t)b ^ hps_cookie_key;
    uintptr_t head = hps_load_relaxed(&pg->thread_free);
    do {
        b->next = HPS_TF_PTR(head);
    } while (!atomic_compare_exchange_weak_explicit(&pg->thread_free, &head,
                                                    (uintptr_t)b + (head & ~(HPS_TF_ONE - 1)) + HPS_TF_ONE,
                                                    memory_order_seq_cst, memory_order_relaxed));
    if ((atomic_load_explicit(&pg->used, memory_order_seq_cst) & HPS_PAGE_FULL) &&
        !hps_xchg_acq_rel(&pg->notified, 1)) {
        hps_page_t *top = hps_load_relaxed(&seg->remote_full);
        do {
            pg->next_remote = top;
        } while (!atomic_compare_exchange_weak_explicit(&seg->remote_full, &top, pg,
                                                        memory_order_release, memory_order_relaxed));
    }
    if (counted)
        hps_fas_release(&seg->remote_active, 1);
    hps_heap_t *h = hps_tls_heap;
    if (h)
        h->st.remote_frees++;
}

/* Move full pages that received remote frees back to their class lists,
 * and retire the spans whose block another thread freed. */
static int drain_remote(hps_heap_t *h, hps_segment_t *seg)
{
    int moved = 0;
    if (!hps_load_relaxed(&seg->remote_full))
        return 0;
    hps_page_t *pg = hps_xchg_acquire(&seg->remote_full, NULL);
    while (pg) {
        hps_page_t *next = pg->next_remote;
        /* Reset before collecting: a free that lands after the collect
         * queues the page again. */
        atomic_store_explicit(&pg->notified, 0, memory_order_seq_cst);
        hps_page_collect(pg);
        if (pg->slots && pg->cls == HPS_SPAN_CLS) {
            if (hps_page_live(pg) == 0)
                hps_page_retire(h, pg);
        } else if (pg->slots && hps_page_in_full(pg) && pg->free) {
            hps_heap_page_unfull(h, pg);
            moved = 1;
        }
        pg = next;
    }
    return moved;
}

int hps_heap_drain_all(hps_heap_t *h)
{
    int moved = 0;
    for (hps_segment_t *seg = h->segs; seg; seg = seg->next)
        moved |= drain_remote(h, seg);
    return moved;
}

/* Make the emptied pg its class's spare, if the class has no empty spare
 * and the budget allows; 1 if kept. */
static int keep_spare(hps_heap_t *h, hps_page_t *pg)
{
    hps_page_t **sp = &h->spare[pg->cls];
    if (*sp == pg)
        return 1;
    if (*sp) {
        if (hps_page_live(*sp) == 0)
            return 0;                     /* the class has an empty page already */
        h->spare_slots -= (*sp)->slots;   /* stale: allocated from since */
        *sp = NULL;
    }
    if (h->spare_slots + pg->slots > HPS_SPARE_SLOTS)
        return 0;
    h->spare_slots += pg->slots;
    *sp = pg;
    return 1;
}

static void page_unlink_any(hps_heap_t *h, hps_page_t *pg)
{
    if (hps_page_in_full(pg))
        hps_page_unlink(&h->full[pg->cls], pg);
    else
        hps_page_unlink(&h->avail[pg->cls], pg);
}

void hps_heap_page_empty(hps_heap_t *h, hps_page_t *pg)
{
    /* Keep a class's last page with room: a program that frees and
     * allocates one block in a loop must not map and purge a page each time. */
    if (h->avail[pg->cls] == pg && !pg->next)
        return;
    if (keep_spare(h, pg)) {
        if (hps_page_in_full(pg))
            hps_heap_page_unfull(h, pg);
        return;
    }
    page_unlink_any(h, pg);
    hps_page_retire(h, pg);
    hps_heap_tick(h);
}

size_t hps_heap_drop_spares(hps_heap_t *h)
{
    size_t bytes = 0;
    for (uint32_t c = 0; c < HPS_MAX_CLASSES; c++) {
        hps_page_t *pg = h->spare[c];
        if (!pg || hps_page_live(pg) != 0)   /* stale: in use again */
            continue;
        bytes += (size_t)pg->slots << HPS_SLOT_SHIFT;
        page_unlink_any(h, pg);
        hps_page_retire(h, pg);          /* clears the entry */
    }
    return bytes;
}

/* ---- abandoned segments ---------------------------------------------------- */

static void adopt_pages(hps_heap_t *h, hps_segment_t *seg)
{
    /* The queue of full pages that got remote frees is taken and dropped
     * (every page is collected below), and the flag of each descriptor on
     * it cleared, as drain_remote does: only whoever takes a descriptor off
     * the queue may clear its flag, or a remote free about to queue it
     * could queue it twice.  (A retired page's descriptor may be queued
     * still: the flag outlives its page, see page_init.) */
    hps_page_t *q = hps_xchg_acquire(&seg->remote_full, NULL);
    while (q) {
        hps_page_t *next = q->next_remote;
        atomic_store_explicit(&q->notified, 0, memory_order_seq_cst);
        q = next;
    }
    h->dirty_slots += hps_slotset_count(seg->free_slots & seg->dirty);
    int s = HPS_META_SLOTS;
    for (hps_page_t *pg; (pg = hps_segment_next_page(seg, &s));) {
        if (pg->cls != HPS_SPAN_CLS)     /* a live span stays "full" */
            hps_store_relaxed(&pg->used, hps_page_live(pg));
        hps_page_collect(pg);
        if (hps_page_live(pg) == 0) {
            hps_page_retire(h, pg);
        } else if (pg->cls != HPS_SPAN_CLS) {
            hps_page_link(&h->avail[pg->cls], pg);
            if (!pg->free && pg->bump >= pg->bump_end)
                page_to_full(h, pg);
        }
    }
}

/* Put seg at the back of the abandoned queue. */
static void abandoned_append(hps_segment_t *seg)
{
    seg->next = NULL;
    hps_spin_lock(&abandoned_lock);
    if (abandoned_last)
        abandoned_last->next = seg;
    else
        abandoned = seg;
    abandoned_last = seg;
    hps_spin_unlock(&abandoned_lock);
}

/* Collect the remote frees of an abandoned segment's pages (it is off the
 * list and has no owner, so that is ours to do): can it serve class cls
 * (a page with a free block) or a new page or span of k slots? */
static int segment_serves(hps_segment_t *seg, uint32_t cls, uint32_t k)
{
    hps_slotset_t free = seg->free_slots;
    int s = HPS_META_SLOTS;
    for (hps_page_t *pg; (pg = hps_segment_next_page(seg, &s));) {
        hps_page_collect(pg);
        if (hps_page_live(pg) == 0)      /* retired when adopted */
            free |= hps_slot_mask((int)(pg - seg->pages), pg->slots);
        else if (pg->cls == cls && cls != HPS_SPAN_CLS && (pg->free || pg->bump < pg->bump_end))
            return 1;
    }
    /* New pages and spans do not share a segment (hps_segment_t.use). */
    int use = cls == HPS_SPAN_CLS ? HPS_USE_SPANS : HPS_USE_PAGES;
    int empty = free == ~(hps_slotset_t)0 << HPS_META_SLOTS;
    return (seg->use == use || empty) && hps_slots_fit(free, k);
}

int hps_heap_adopt(hps_heap_t *h, uint32_t cls, uint32_t k)
{
    /* A few tries, oldest first: a segment that cannot serve this request
     * goes to the back, for a thread that needs something else (adopting
     * every segment in turn would hoard the exited threads' memory in the
     * first heap that looks). */
    for (int tries = 0; tries < HPS_ADOPT_TRIES; tries++) {
        if (!atomic_load_explicit((_Atomic(hps_segment_t *) *)&abandoned, memory_order_relaxed))
            return 0;
        hps_spin_lock(&abandoned_lock);
        hps_segment_t *seg = abandoned;
        if (seg && !(abandoned = seg->next))
            abandoned_last = NULL;
        hps_spin_unlock(&abandoned_lock);
        if (!seg)
            return 0;
        if (!segment_serves(seg, cls, k)) {
            abandoned_append(seg);
            continue;
        }
        hps_segment_attach(h, seg);
        h->st.segs_adopted++;
        adopt_pages(h, seg);
        if (hps_segment_empty(seg) && hps_segment_has_sibling(seg))
            hps_segment_drop(h, seg);      /* nothing live in it: we have room elsewhere */
        return 1;
    }
    return 0;
}

static void heap_abandon(hps_heap_t *h)
{
    /* Empty pages become free slots, and every freed slot goes back to the
     * OS: an exited thread keeps no cache (purge.c). */
    for (hps_segment_t *seg = h->segs; seg; seg = seg->next) {
        int s = HPS_META_SLOTS;
        for (hps_page_t *pg; (pg = hps_segment_next_page(seg, &s));) {
            hps_page_collect(pg);
            if (hps_page_live(pg) == 0)
                hps_page_retire(h, pg);
        }
    }
    hps_heap_shrink(h, 0);
    hps_segment_t *seg = h->segs;
    while (seg) {
        hps_segment_t *next = seg->next;
        /* Release: whoever adopts the segment sees our last writes.  Not
         * NULL: free() compares a page's owner with the caller's heap,
         * which is NULL in a thread that never allocated. */
        hps_segment_set_owner(seg, &hps_heap_abandoned);
        seg->last_heap = h;
        seg->prev = NULL;
        abandoned_append(seg);
        seg = next;
    }
    h->segs = NULL;
    for (uint32_t c = 0; c < HPS_MAX_CLASSES; c++)
        h->avail[c] = h->full[c] = h->hot[c] = h->spare[c] = NULL;
    h->spare_slots = 0;
    hps_spin_lock(&heaps_lock);
    h->dead = 1;
    h->next_free = heaps_free;
    heaps_free = h;
    hps_spin_unlock(&heaps_lock);
}

/* A heap reused by a new thread takes back the segments it gave up that
 * nobody adopted since: their pages, with whatever blocks were freed into
 * them meanwhile, serve the new thread at once.  A program that hands
 * work from exiting threads to new ones (a server's thread per task)
 * would otherwise start every thread on empty pages while the old ones
 * wait, partly free, for someone to adopt them: memory grows with every
 * generation of threads. */
static void reclaim(hps_heap_t *h)
{
    if (!atomic_load_explicit((_Atomic(hps_segment_t *) *)&abandoned, memory_order_relaxed))
        return;
    hps_segment_t *mine = NULL, *prev = NULL;
    hps_spin_lock(&abandoned_lock);
    for (hps_segment_t *seg = abandoned, *next; seg; seg = next) {
        next = seg->next;
        if (seg->last_heap != h) {
            prev = seg;
            continue;
        }
        if (prev)
            prev->next = next;
        else
            abandoned = next;
        if (abandoned_last == seg)
            abandoned_last = prev;
        seg->next = mine;
        mine = seg;
    }
    hps_spin_unlock(&abandoned_lock);
    while (mine) {
        hps_segment_t *seg = mine;
        mine = seg->next;
        hps_segment_attach(h, seg);
        h->st.segs_adopted++;
        adopt_pages(h, seg);
    }
}

/* ---- the slow path of a small allocation --------------------------------- */

/* Serve from pg (it has a free block): make it the class's current and hot page. */
static void *refill_from(hps_heap_t *h, uint32_t cls, hps_page_t *pg)
{
    if (h->avail[cls] != pg) {
        hps_page_unlink(&h->avail[cls], pg);
        hps_page_link(&h->avail[cls], pg);
    }
    h->hot[cls] = pg;
    h->st.refills++;
    return hps_page_pop(pg);
}

void *hps_heap_refill(hps_heap_t *h, uint32_t cls)
{
    hps_heap_tick_refill(h);
    int drained = 0;
    for (;;) {
        /* Freed blocks first, then never-used ones: carving touches fresh
         * memory, so it waits until neither the class's pages (collecting
         * what other threads freed into them) nor the full pages queued
         * with remote frees have a block. */
        hps_page_t *carve = NULL;
        for (hps_page_t *pg = h->avail[cls], *next; pg; pg = next) {
            next = pg->next;
            if (!pg->free)
                hps_page_collect(pg);
            if (pg->free)
                return refill_from(h, cls, pg);
            if (pg->bump < pg->bump_end)
                carve = carve ? carve : pg;
            else
                page_to_full(h, pg);
        }
        if (!drained) {
            drained = 1;
            if (hps_heap_drain_all(h) && h->avail[cls])
                continue;
        }
        if (carve) {
            hps_page_carve(carve);
            return refill_from(h, cls, carve);
        }
        /* A new page in our own free slots before adopting an exited
         * thread's segment: a live thread that adopted whatever it could
         * would take the segments a new thread reusing the exited one's
         * heap is about to take back (reclaim), and hoard them. */
        hps_page_t *pg = hps_page_new(h, cls, 0);
        if (!pg && hps_heap_adopt(h, cls, hps_class_slots[cls]))
            continue;
        if (!pg && !(pg = hps_page_new(h, cls, 1)))
            return NULL;
        hps_page_link(&h->avail[cls], pg);
    }
}

/* ---- fork ------------------------------------------------------------------ */

void hps_lock_global(void)
{
    hps_spin_lock(&heaps_lock);
    hps_spin_lock(&abandoned_lock);
    hps_spin_lock(hps_segment_cache_lock());
    hps_spin_lock(hps_huge_cache_lock());
}

void hps_unlock_global(int child)
{
    hps_spin_unlock(hps_huge_cache_lock());
    hps_spin_unlock(hps_segment_cache_lock());
    hps_spin_unlock(&abandoned_lock);
    if (!child) {
        hps_spin_unlock(&heaps_lock);
        return;
    }
    /* In the child only this thread exists: every other heap's thread is
     * gone, so its segments are abandoned for this thread to adopt. */
    hps_heap_t *all = heaps_all;
    hps_spin_unlock(&heaps_lock);
    for (hps_heap_t *h = all; h; h = h->next_all)
        if (h != hps_tls_heap && h->segs)
            heap_abandon(h);
}
