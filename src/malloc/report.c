// SPDX-License-Identifier: MIT
/*
 * Error lines and statistics.  Both are written with write(2) from a stack
 * buffer: the allocator cannot use stdio (it allocates) and must not abort
 * the host program over a bad free.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include "internal.h"
#include "settings.h"

static _Atomic uint32_t reports;
#define MAX_REPORTS 100

void hps_malloc_report(const char *what, const void *p)
{
    uint32_t n = hps_faa_relaxed(&reports, 1);
    if (n >= MAX_REPORTS)
        return;
    char buf[256];
    int len;
    if (p)
        len = snprintf(buf, sizeof buf, "hpsync-malloc: %s: %p%s\n", what, p,
                       n + 1 == MAX_REPORTS ? " (further reports suppressed)" : "");
    else
        len = snprintf(buf, sizeof buf, "hpsync-malloc: %s\n", what);
    if (len > 0)
        (void)!write(2, buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
}

/* Other heaps' counters (and the span arena's) are read without their
 * owners' cooperation: a snapshot.  Heaps are never unmapped, so the reads
 * are safe. */
static void stats_add(hps_malloc_heap_stats_t *t, const volatile hps_malloc_heap_stats_t *st)
{
    t->refills += st->refills;
    t->remote_frees += st->remote_frees;
    t->pages_new += st->pages_new;
    t->pages_retired += st->pages_retired;
    t->segs_adopted += st->segs_adopted;
    t->spans += st->spans;
    t->spans_backed += st->spans_backed;
    t->purged_slots += st->purged_slots;
    t->heaps_reused += st->heaps_reused;
    t->heaps_given_up += st->heaps_given_up;
}

static void heap_sum(hps_malloc_heap_t *h, void *arg)
{
    hps_malloc_totals_t *t = arg;
    t->heaps += h->state == HPS_HEAP_LIVE;
    t->parked += h->state == HPS_HEAP_PARKED;
    stats_add(&t->st, &h->st);
}

void hps_malloc_totals(hps_malloc_totals_t *t)
{
    *t = (hps_malloc_totals_t){ 0 };
    t->mapped = hps_load_relaxed(&hps_malloc_mapped_bytes);
    t->huge = hps_load_relaxed(&hps_malloc_huge_bytes);
    hps_malloc_heaps_foreach(heap_sum, t);
    hps_malloc_span_stats(&t->st, stats_add);
    /* Bytes in blocks: the live counts of every page of the region's
     * segments (always mapped, so reading them is safe while their owners
     * run; the figure is a snapshot).  Blocks freed by other threads count
     * until their owner collects them; segments outside the region (only
     * when the region could not be reserved) are not counted. */
    for (uintptr_t a = HPS_REGION_BASE; a < hps_malloc_region_end(); a += HPS_SEG_SIZE) {
        volatile hps_malloc_segment_t *seg = (hps_malloc_segment_t *)a;
        if (seg->magic != HPS_SEG_MAGIC || seg->kind != HPS_SEG_SMALL)
            continue;
        for (int s = HPS_META_SLOTS; s < (int)HPS_SLOTS;) {
            volatile hps_malloc_page_t *pg = &seg->pages[s];
            uint32_t k = pg->slots;
            if (!k || s + (int)k > (int)HPS_SLOTS) {
                s++;
                continue;
            }
            t->in_use += (size_t)hps_malloc_page_live((const hps_malloc_page_t *)pg) * pg->block_size;
            s += (int)k;
        }
    }
    t->in_use += t->huge;
}

void hps_malloc_stats_print(int fd)
{
    hps_malloc_totals_t t;
    hps_malloc_totals(&t);
    char buf[1024];
    int n = snprintf(buf, sizeof buf,
        "hpsync-malloc statistics (pid %d)\n"
        "  L1 geometry      %u B lines, %u sets (%s); %u size classes\n"
        "  mapped           %zu KiB now, %llu KiB peak; huge %zu KiB\n"
        "  in use           %zu KiB in blocks (huge included)\n"
        "  heaps            %zu live (threads that allocated and have not exited), %zu parked; "
        "%llu taken whole by a new thread, %llu given up\n"
        "  slow paths       %llu allocations refilled a page, %llu frees came from another thread\n"
        "  pages            %llu made, %llu retired; %llu segments adopted from exited threads\n"
        "  spans            %llu made, %llu of them on backed memory only; %llu MiB purged\n",
        (int)getpid(), hps_malloc_geo.line, hps_malloc_geo.sets, hps_malloc_geo.source, hps_malloc_nclasses,
        t.mapped >> 10, (unsigned long long)(hps_load_relaxed(&hps_malloc_mapped_peak) >> 10), t.huge >> 10,
        t.in_use >> 10, t.heaps, t.parked, (unsigned long long)t.st.heaps_reused,
        (unsigned long long)t.st.heaps_given_up,
        (unsigned long long)t.st.refills, (unsigned long long)t.st.remote_frees, (unsigned long long)t.st.pages_new,
        (unsigned long long)t.st.pages_retired, (unsigned long long)t.st.segs_adopted,
        (unsigned long long)t.st.spans, (unsigned long long)t.st.spans_backed,
        (unsigned long long)(t.st.purged_slots >> (20 - HPS_SLOT_SHIFT)));
    if (n > 0)
        (void)!write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}
