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

__thread hps_malloc_heap_t *hps_malloc_tls_heap __attribute__((tls_model("initial-exec")));
/* The owner of the last block this thread freed before it had a heap: the
 * parked heap it should take (see heap_new). */
static __thread hps_malloc_heap_t *tls_freed_into __attribute__((tls_model("initial-exec")));

static hps_malloc_spin_t heaps_lock;          /* heap pool, parked heaps, the list of all heaps */
static hps_malloc_heap_t *heaps_all, *heaps_free;
static char *heap_chunk;
static size_t heap_chunk_left;
static uint32_t heap_count;

/* Heaps of exited threads, whole, newest first: the next new thread takes
 * one (its pages, freed memory and spares serve it at once), and one
 * parked for the decay time gives its memory up, oldest first.  parked_any
 * and parked_since (the oldest's parked_at) are read without the lock, as
 * a hint, by every tick. */
static hps_malloc_heap_t *parked_new, *parked_old;
static hps_au32 parked_any, parked_since;

static hps_malloc_spin_t abandoned_lock;
/* Segments of exited threads, oldest first: adopted in the order they were
 * given up, so none sinks under newer ones while the blocks freed into it
 * by other threads wait for an owner to collect them. */
static hps_malloc_segment_t *abandoned, *abandoned_last;

hps_malloc_heap_t hps_malloc_heap_abandoned;      /* owner of abandoned segments: nobody's heap */

static pthread_key_t exit_key;
static int exit_key_ok;

static void heap_park(hps_malloc_heap_t *h);
static void heap_dissolve(hps_malloc_heap_t *h);
static void reclaim(hps_malloc_heap_t *h);

static void on_thread_exit(void *arg)
{
    hps_malloc_heap_t *h = arg;
    if (h && h == hps_malloc_tls_heap) {
        hps_malloc_tls_heap = NULL;
        heap_park(h);
    }
}

void hps_malloc_heap_global_init(void)
{
    /* pthread_key_create does not allocate; the key's slot is among the
     * first 32, which glibc keeps inside the thread descriptor. */
    exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* ---- parked heaps -------------------------------------------------------------
 *
 * A thread that exits leaves its heap as it is: pages, free lists, spares,
 * freed slots still backed.  The next thread to start takes it whole, so a
 * program that hands work from exiting threads to new ones (a server's
 * thread per connection) runs each new thread on memory that is already
 * there.  Giving the freed memory back at exit, as this allocator did, cost
 * every new thread a page fault per 4 KiB it touched again, and the exit a
 * madvise that shoots down TLB entries on the other CPUs (server pattern:
 * 30 faults per thread, 0.3 s of system time in 0.4 s).  A parked heap has
 * no thread, so other threads look after it: one parked for the decay time
 * gives its memory up on another thread's tick, as if its thread had
 * exited then (heap_dissolve), and its segments become adoptable.  Until
 * then a live thread that runs out of room maps new memory rather than
 * take a parked heap over: in a server the next thread comes within
 * microseconds, and taking its heap from it started it empty (server
 * pattern: 10 segments mapped instead of 7).  Blocks freed into a parked heap wait on their
 * pages' remote stacks for whoever takes it.  Everything here is under
 * heaps_lock, so fork never sees a heap half moved. */

static void parked_hint(void)
{
    hps_store_relaxed(&parked_since, parked_old ? parked_old->parked_at : 0);
    hps_store_relaxed(&parked_any, parked_old != NULL);
}

static void parked_push(hps_malloc_heap_t *h)
{
    h->state = HPS_HEAP_PARKED;
    h->parked_at = hps_malloc_os_now_ms();
    h->prev_free = NULL;
    h->next_free = parked_new;
    if (parked_new)
        parked_new->prev_free = h;
    else
        parked_old = h;
    parked_new = h;
    parked_hint();
}

static void parked_unlink(hps_malloc_heap_t *h)
{
    if (h->prev_free)
        h->prev_free->next_free = h->next_free;
    else
        parked_new = h->next_free;
    if (h->next_free)
        h->next_free->prev_free = h->prev_free;
    else
        parked_old = h->prev_free;
    h->next_free = h->prev_free = NULL;
    parked_hint();
}

/* An empty heap goes to the pool. */
static void pool_push(hps_malloc_heap_t *h)
{
    h->state = HPS_HEAP_EMPTY;
    h->prev_free = NULL;
    h->next_free = heaps_free;
    heaps_free = h;
}

static void heap_park(hps_malloc_heap_t *h)
{
    /* What has been idle for the decay time goes back now, as on any of
     * the thread's slow paths; the rest stays for the next thread. */
    hps_malloc_heap_tick(h);
    hps_malloc_spin_lock(&heaps_lock);
    if (h->segs)
        parked_push(h);
    else
        pool_push(h);
    hps_malloc_spin_unlock(&heaps_lock);
}

void hps_malloc_heaps_parked_tick(uint32_t now)
{
    uint32_t decay = hps_malloc_settings()->decay_ms;
    if (!hps_load_relaxed(&parked_any) ||
        (int32_t)(now - hps_load_relaxed(&parked_since)) < (int32_t)decay)
        return;
    hps_malloc_spin_lock(&heaps_lock);
    while (parked_old && (int32_t)(now - parked_old->parked_at) >= (int32_t)decay) {
        hps_malloc_heap_t *p = parked_old;
        parked_unlink(p);
        heap_dissolve(p);
    }
    hps_malloc_spin_unlock(&heaps_lock);
}

size_t hps_malloc_heaps_parked_trim(void)
{
    size_t bytes = 0;
    hps_malloc_spin_lock(&heaps_lock);
    while (parked_old) {
        hps_malloc_heap_t *p = parked_old;
        parked_unlink(p);
        bytes += (size_t)p->dirty_slots << HPS_SLOT_SHIFT;
        heap_dissolve(p);
    }
    hps_malloc_spin_unlock(&heaps_lock);
    return bytes;
}

static hps_malloc_heap_t *heap_new(void)
{
    hps_malloc_heap_t *h = NULL;
    hps_malloc_spin_lock(&heaps_lock);
    if (parked_new) {
        /* Whole, as its thread left it: nothing to set up.  The heap this
         * thread has freed into already, if it is parked: a thread that
         * carries on an exited one's work frees that one's blocks, and in
         * its heap those frees are local (server pattern: 21 % of frees
         * were remote frees into another lineage's heap when new threads
         * took the newest parked heap, 0.5 % now).  Else the newest. */
        hps_malloc_heap_t *hint = tls_freed_into;
        h = hint && hint->state == HPS_HEAP_PARKED ? hint : parked_new;
        parked_unlink(h);
        h->state = HPS_HEAP_LIVE;
        h->st.heaps_reused++;
        hps_malloc_spin_unlock(&heaps_lock);
        return h;
    }
    if (heaps_free) {
        h = heaps_free;
        heaps_free = h->next_free;
    } else {
        if (heap_chunk_left < sizeof(hps_malloc_heap_t)) {
            void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED) {
                heap_chunk = p;
                heap_chunk_left = 1 << 20;
            }
        }
        if (heap_chunk_left >= sizeof(hps_malloc_heap_t)) {
            h = (hps_malloc_heap_t *)heap_chunk;
            heap_chunk += (sizeof(hps_malloc_heap_t) + 63) & ~(size_t)63;
            heap_chunk_left -= (sizeof(hps_malloc_heap_t) + 63) & ~(size_t)63;
            h->id = heap_count++;
            h->next_all = heaps_all;
            heaps_all = h;
        }
    }
    hps_malloc_spin_unlock(&heaps_lock);
    if (!h)
        return NULL;
    uint32_t id = h->id;
    hps_malloc_heap_t *next_all = h->next_all;
    hps_malloc_heap_stats_t st = h->st;        /* statistics survive reuse: they are the process's */
    *h = (hps_malloc_heap_t){ 0 };
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

hps_malloc_heap_t *hps_malloc_heap_get(void)
{
    hps_malloc_heap_t *h = hps_malloc_tls_heap;
    if (hps_likely(h != NULL))
        return h;
    h = heap_new();
    if (!h)
        return NULL;
    hps_malloc_tls_heap = h;
    if (exit_key_ok)
        pthread_setspecific(exit_key, h);
    return h;
}

void hps_malloc_heaps_foreach(void (*fn)(hps_malloc_heap_t *, void *), void *arg)
{
    hps_malloc_spin_lock(&heaps_lock);
    for (hps_malloc_heap_t *h = heaps_all; h; h = h->next_all)
        fn(h, arg);
    hps_malloc_spin_unlock(&heaps_lock);
}

/* ---- full pages and remote frees ------------------------------------------ */

static void page_to_full(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    hps_malloc_page_unlink(&h->avail[pg->cls], pg);
    hps_malloc_page_link(&h->full[pg->cls], pg);
    /* Seq-cst against the remote free's push-then-load: either it sees
     * the full flag and queues the page, or we see its block here. */
    hps_store_seq_cst(&pg->used, hps_load_relaxed(&pg->used) | HPS_PAGE_FULL);
    if (hps_load_seq_cst(&pg->thread_free))
        hps_malloc_heap_page_unfull(h, pg);
}

void hps_malloc_heap_page_unfull(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    hps_malloc_page_unlink(&h->full[pg->cls], pg);
    /* Behind the current page, not in front: the current page keeps
     * serving, and this one gathers more frees before it is used again
     * (in front, a page with one free block would bounce between the lists
     * on every allocation). */
    hps_malloc_page_t *cur = h->avail[pg->cls];
    if (cur) {
        pg->prev = cur;
        pg->next = cur->next;
        if (cur->next)
            cur->next->prev = pg;
        cur->next = pg;
    } else {
        hps_malloc_page_link(&h->avail[pg->cls], pg);
    }
    hps_store_relaxed(&pg->used, hps_malloc_page_live(pg));
}

void hps_malloc_remote_free(hps_malloc_segment_t *seg, hps_malloc_page_t *pg, hps_malloc_block_t *b)
{
    /* Outside the region, announce ourselves first: the owner never unmaps
     * a segment with a remote free in flight, and we read the page after
     * the push.  Region segments are never unmapped, so they skip the two
     * atomics on a line every remote freer shares. */
    int counted = !hps_malloc_in_region(seg);
    if (counted)
        hps_faa_acquire(&seg->remote_active, 1);
    b->cookie = (uintptr_t)b ^ hps_malloc_cookie_key;
    uintptr_t head = hps_load_relaxed(&pg->thread_free);
    do {
        b->next = HPS_TF_PTR(head);
    } while (!hps_cas_weak_seq_cst(&pg->thread_free, &head,
                                   (uintptr_t)b + (head & ~(HPS_TF_ONE - 1)) + HPS_TF_ONE));
    if ((hps_load_seq_cst(&pg->used) & HPS_PAGE_FULL) &&
        !hps_xchg_acq_rel(&pg->notified, 1)) {
        hps_malloc_page_t *top = hps_load_relaxed(&seg->remote_full);
        do {
            pg->next_remote = top;
        } while (!hps_cas_weak_release(&seg->remote_full, &top, pg));
    }
    if (counted)
        hps_fas_release(&seg->remote_active, 1);
    hps_malloc_heap_t *h = hps_malloc_tls_heap;
    if (h)
        h->st.remote_frees++;
    else
        tls_freed_into = hps_load_relaxed(&pg->heap);
}

/* Move full pages that received remote frees back to their class lists. */
static int drain_remote(hps_malloc_heap_t *h, hps_malloc_segment_t *seg)
{
    int moved = 0;
    if (!hps_load_relaxed(&seg->remote_full))
        return 0;
    hps_malloc_page_t *pg = hps_xchg_acquire(&seg->remote_full, NULL);
    while (pg) {
        hps_malloc_page_t *next = pg->next_remote;
        /* Reset before collecting: a free that lands after the collect
         * queues the page again. */
        hps_store_seq_cst(&pg->notified, 0);
        hps_malloc_page_collect(pg);
        if (pg->slots && hps_malloc_page_in_full(pg) && pg->free) {
            hps_malloc_heap_page_unfull(h, pg);
            moved = 1;
        }
        pg = next;
    }
    return moved;
}

int hps_malloc_heap_drain_all(hps_malloc_heap_t *h)
{
    int moved = 0;
    for (hps_malloc_segment_t *seg = h->segs; seg; seg = seg->next)
        moved |= drain_remote(h, seg);
    return moved;
}

/* Make the emptied pg its class's spare, if the class has no empty spare
 * and the budget allows; 1 if kept. */
static int keep_spare(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    hps_malloc_page_t **sp = &h->spare[pg->cls];
    if (*sp == pg)
        return 1;
    if (*sp) {
        if (hps_malloc_page_live(*sp) == 0)
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

static void page_unlink_any(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    if (hps_malloc_page_in_full(pg))
        hps_malloc_page_unlink(&h->full[pg->cls], pg);
    else
        hps_malloc_page_unlink(&h->avail[pg->cls], pg);
}

void hps_malloc_heap_page_empty(hps_malloc_heap_t *h, hps_malloc_page_t *pg)
{
    /* Keep a class's last page with room: a program that frees and
     * allocates one block in a loop must not map and purge a page each time. */
    if (h->avail[pg->cls] == pg && !pg->next)
        return;
    if (keep_spare(h, pg)) {
        if (hps_malloc_page_in_full(pg))
            hps_malloc_heap_page_unfull(h, pg);
        return;
    }
    page_unlink_any(h, pg);
    hps_malloc_page_retire(h, pg);
    hps_malloc_heap_tick(h);
}

size_t hps_malloc_heap_drop_spares(hps_malloc_heap_t *h)
{
    size_t bytes = 0;
    for (uint32_t c = 0; c < HPS_MAX_CLASSES; c++) {
        hps_malloc_page_t *pg = h->spare[c];
        if (!pg || hps_malloc_page_live(pg) != 0)   /* stale: in use again */
            continue;
        bytes += (size_t)pg->slots << HPS_SLOT_SHIFT;
        page_unlink_any(h, pg);
        hps_malloc_page_retire(h, pg);          /* clears the entry */
    }
    return bytes;
}

/* ---- abandoned segments ---------------------------------------------------- */

static void adopt_pages(hps_malloc_heap_t *h, hps_malloc_segment_t *seg)
{
    /* The queue of full pages that got remote frees is taken and dropped
     * (every page is collected below), and the flag of each descriptor on
     * it cleared, as drain_remote does: only whoever takes a descriptor off
     * the queue may clear its flag, or a remote free about to queue it
     * could queue it twice.  (A retired page's descriptor may be queued
     * still: the flag outlives its page, see page_init.) */
    hps_malloc_page_t *q = hps_xchg_acquire(&seg->remote_full, NULL);
    while (q) {
        hps_malloc_page_t *next = q->next_remote;
        hps_store_seq_cst(&q->notified, 0);
        q = next;
    }
    h->dirty_slots += hps_malloc_slotset_count(seg->free_slots & seg->dirty);
    h->used_slots += HPS_SLOTS - HPS_META_SLOTS - hps_malloc_slotset_count(seg->free_slots);
    int s = HPS_META_SLOTS;
    for (hps_malloc_page_t *pg; (pg = hps_malloc_segment_next_page(seg, &s));) {
        hps_store_relaxed(&pg->used, hps_malloc_page_live(pg));
        hps_malloc_page_collect(pg);
        if (hps_malloc_page_live(pg) == 0) {
            hps_malloc_page_retire(h, pg);
        } else {
            hps_malloc_page_link(&h->avail[pg->cls], pg);
            if (!pg->free && pg->bump >= pg->bump_end)
                page_to_full(h, pg);
        }
    }
}

/* Put seg at the back of the abandoned queue. */
static void abandoned_append(hps_malloc_segment_t *seg)
{
    seg->next = NULL;
    hps_malloc_spin_lock(&abandoned_lock);
    if (abandoned_last)
        abandoned_last->next = seg;
    else
        abandoned = seg;
    abandoned_last = seg;
    hps_malloc_spin_unlock(&abandoned_lock);
}

/* Collect the remote frees of an abandoned segment's pages (it is off the
 * list and has no owner, so that is ours to do): can it serve class cls
 * (a page with a free block) or a new page of k slots? */
static int segment_serves(hps_malloc_segment_t *seg, uint32_t cls, uint32_t k)
{
    hps_malloc_slotset_t free = seg->free_slots;
    int s = HPS_META_SLOTS;
    for (hps_malloc_page_t *pg; (pg = hps_malloc_segment_next_page(seg, &s));) {
        hps_malloc_page_collect(pg);
        if (hps_malloc_page_live(pg) == 0)      /* retired when adopted */
            free |= hps_malloc_slot_mask((int)(pg - seg->pages), pg->slots);
        else if (pg->cls == cls && (pg->free || pg->bump < pg->bump_end))
            return 1;
    }
    return hps_malloc_slots_fit(free, k);
}

/* h holds no segment any more: no page on its lists. */
static void heap_forget_pages(hps_malloc_heap_t *h)
{
    for (uint32_t c = 0; c < HPS_MAX_CLASSES; c++)
        h->avail[c] = h->full[c] = h->hot[c] = h->spare[c] = NULL;
    h->spare_slots = 0;
    h->dirty_slots = 0;
    h->used_slots = 0;
}

int hps_malloc_heap_adopt(hps_malloc_heap_t *h, uint32_t cls, uint32_t k)
{
    /* A few tries, oldest first: a segment that cannot serve this request
     * goes to the back, for a thread that needs something else (adopting
     * every segment in turn would hoard the exited threads' memory in the
     * first heap that looks). */
    for (int tries = 0; tries < HPS_ADOPT_TRIES; tries++) {
        if (!hps_load_relaxed((_Atomic(hps_malloc_segment_t *) *)&abandoned))
            return 0;
        hps_malloc_spin_lock(&abandoned_lock);
        hps_malloc_segment_t *seg = abandoned;
        if (seg && !(abandoned = seg->next))
            abandoned_last = NULL;
        hps_malloc_spin_unlock(&abandoned_lock);
        if (!seg)
            return 0;
        if (!segment_serves(seg, cls, k)) {
            abandoned_append(seg);
            continue;
        }
        hps_malloc_segment_attach(h, seg);
        h->st.segs_adopted++;
        adopt_pages(h, seg);
        if (hps_malloc_segment_empty(seg) && hps_malloc_segment_has_sibling(seg))
            hps_malloc_segment_drop(h, seg);      /* nothing live in it: we have room elsewhere */
        return 1;
    }
    return 0;
}

/* Give up h's memory, as an exited thread did before parking: empty pages
 * become free slots, every freed slot goes back to the OS (nobody will
 * reuse it soon: the heap waited a decay time for a thread, or its thread
 * is gone with fork), and the segments, with their live blocks, queue for
 * adoption, oldest first; h goes to the pool empty.  Under heaps_lock. */
static void heap_dissolve(hps_malloc_heap_t *h)
{
    for (hps_malloc_segment_t *seg = h->segs; seg; seg = seg->next) {
        int s = HPS_META_SLOTS;
        for (hps_malloc_page_t *pg; (pg = hps_malloc_segment_next_page(seg, &s));) {
            hps_malloc_page_collect(pg);
            if (hps_malloc_page_live(pg) == 0)
                hps_malloc_page_retire(h, pg);
        }
    }
    hps_malloc_heap_shrink(h, 0);
    hps_malloc_segment_t *seg = h->segs;
    while (seg) {
        hps_malloc_segment_t *next = seg->next;
        /* Release: whoever adopts the segment sees our last writes.  Not
         * NULL: free() compares a page's owner with the caller's heap,
         * which is NULL in a thread that never allocated. */
        hps_malloc_segment_set_owner(seg, &hps_malloc_heap_abandoned);
        seg->last_heap = h;
        seg->prev = NULL;
        abandoned_append(seg);
        seg = next;
    }
    h->segs = NULL;
    h->st.heaps_given_up++;
    heap_forget_pages(h);
    pool_push(h);
}

/* A heap that was given up (heap_dissolve) and is reused by a new thread
 * takes back the segments it gave up that nobody adopted since: their
 * pages, with whatever blocks were freed into them meanwhile, serve the
 * new thread at once.  A program that starts threads more slowly than the
 * decay time would otherwise start every thread on empty pages while the
 * old ones wait, partly free, for someone to adopt them. */
static void reclaim(hps_malloc_heap_t *h)
{
    if (!hps_load_relaxed((_Atomic(hps_malloc_segment_t *) *)&abandoned))
        return;
    hps_malloc_segment_t *mine = NULL, *prev = NULL;
    hps_malloc_spin_lock(&abandoned_lock);
    for (hps_malloc_segment_t *seg = abandoned, *next; seg; seg = next) {
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
    hps_malloc_spin_unlock(&abandoned_lock);
    while (mine) {
        hps_malloc_segment_t *seg = mine;
        mine = seg->next;
        hps_malloc_segment_attach(h, seg);
        h->st.segs_adopted++;
        adopt_pages(h, seg);
    }
}

/* ---- the slow path of a small allocation --------------------------------- */

/* Serve from pg (it has a free block): make it the class's current and hot page. */
static void *refill_from(hps_malloc_heap_t *h, uint32_t cls, hps_malloc_page_t *pg)
{
    if (h->avail[cls] != pg) {
        hps_malloc_page_unlink(&h->avail[cls], pg);
        hps_malloc_page_link(&h->avail[cls], pg);
    }
    h->hot[cls] = pg;
    h->st.refills++;
    return hps_malloc_page_pop(pg);
}

void *hps_malloc_heap_refill(hps_malloc_heap_t *h, uint32_t cls)
{
    hps_malloc_heap_tick_refill(h);
    int drained = 0;
    for (;;) {
        /* Freed blocks first, then never-used ones: carving touches fresh
         * memory, so it waits until neither the class's pages (collecting
         * what other threads freed into them) nor the full pages queued
         * with remote frees have a block. */
        hps_malloc_page_t *carve = NULL;
        for (hps_malloc_page_t *pg = h->avail[cls], *next; pg; pg = next) {
            next = pg->next;
            if (!pg->free)
                hps_malloc_page_collect(pg);
            if (pg->free)
                return refill_from(h, cls, pg);
            if (pg->bump < pg->bump_end)
                carve = carve ? carve : pg;
            else
                page_to_full(h, pg);
        }
        if (!drained) {
            drained = 1;
            if (hps_malloc_heap_drain_all(h) && h->avail[cls])
                continue;
        }
        if (carve) {
            hps_malloc_page_carve(carve);
            return refill_from(h, cls, carve);
        }
        /* A new page in our own free slots before adopting an exited
         * thread's segment: a live thread that adopted whatever it could
         * would take the segments a new thread reusing the exited one's
         * heap is about to take back (reclaim), and hoard them. */
        hps_malloc_page_t *pg = hps_malloc_page_new(h, cls, 0);
        if (!pg && hps_malloc_heap_adopt(h, cls, hps_malloc_class_slots[cls]))
            continue;
        if (!pg && !(pg = hps_malloc_page_new(h, cls, 1)))
            return NULL;
        hps_malloc_page_link(&h->avail[cls], pg);
    }
}

/* ---- fork ------------------------------------------------------------------ */

void hps_malloc_fork_lock(void)
{
    hps_malloc_span_lock_all();                 /* first: an arena's holder may take the segment cache's */
    hps_malloc_spin_lock(&heaps_lock);
    hps_malloc_spin_lock(&abandoned_lock);
    hps_malloc_spin_lock(hps_malloc_segment_cache_lock());
    hps_malloc_spin_lock(hps_malloc_huge_cache_lock());
}

void hps_malloc_fork_unlock(int child)
{
    hps_malloc_spin_unlock(hps_malloc_huge_cache_lock());
    hps_malloc_spin_unlock(hps_malloc_segment_cache_lock());
    hps_malloc_spin_unlock(&abandoned_lock);
    hps_malloc_span_unlock_all();
    if (!child) {
        hps_malloc_spin_unlock(&heaps_lock);
        return;
    }
    /* In the child only this thread exists: every other live heap's
     * thread is gone, so its segments are abandoned for this thread to
     * adopt.  Parked heaps stay parked (they are whole). */
    for (hps_malloc_heap_t *h = heaps_all; h; h = h->next_all)
        if (h != hps_malloc_tls_heap && h->state == HPS_HEAP_LIVE)
            heap_dissolve(h);
    hps_malloc_spin_unlock(&heaps_lock);
}
