// SPDX-License-Identifier: MIT
/*
 * Transactional coarsening (hpsync/tm_coarsen.h): loops whose iterations
 * run k to a section, k fixed (hps_tm_for) or chosen by a controller per
 * thread and call site (hps_tm_for_dynamic, controller in coarsen_ctl.c).
 *
 * A chunk is one section around the iterations [lo, end).  Its state lives
 * in a volatile record written before the checkpoint, because an abort
 * returns to the checkpoint with registers as they were then: the record
 * is how the rerun learns what happened (which iteration ran, which causes
 * were counted) and ends the chunk early where the header says.  The
 * causes come from the thread's own statistics (the core counts every
 * abort, hardware ones included, before the section body runs again), so
 * this file needs nothing from the core beyond what it already keeps.
 *
 * Why one controller per thread and site, not one shared per site: the
 * hot path then writes nothing shared (a shared controller would need
 * atomic updates from every thread at every epoch, a contended line in the
 * very loop it measures, worst at k = 1 where it matters most), and each
 * thread measures what it experiences, which already includes the other
 * threads' sections.  What the threads share is a hint: the level a
 * thread last settled on, where a thread new to the site starts.
 */
#include "internal.h"
#include "coarsen.h"
#include "hpsync/tm_coarsen.h"
#include "../prim/clock.h"

#define LMAX_DEFAULT 10              /* k up to 1024 */
#define L0_DEFAULT 4                 /* start at k = 16 */
/* An epoch ends after at least this many chunks, iterations and ns (the
 * chunk count doubles until the time is reached, so the clock is read
 * O(log) times per epoch however short the iterations). */
#define EP_CHUNKS 8
#define EP_ITERS 128
#define EP_NS 20000

typedef struct chunk {
    long lo, end, cur;
    uint64_t aborts;                 /* d->st.aborts when last looked at */
    uint64_t cap, expl, irr;         /* the causes that change the chunk */
    uint32_t irr0;                   /* irrevocable when the body began */
    uint32_t capacity;               /* capacity aborts this chunk met */
} chunk_t;

static uint64_t cap_count(const hps_tm_desc_t *d)
{
    return d->st.aborts_by_cause[HPS_TM_CAUSE_CAPACITY] +
           d->st.aborts_by_cause[HPS_TM_CAUSE_HTM_CAPACITY];
}

static void snapshot(const hps_tm_desc_t *d, volatile chunk_t *c)
{
    c->aborts = d->st.aborts;
    c->cap = cap_count(d);
    c->expl = d->st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT];
    c->irr = d->st.aborts_by_cause[HPS_TM_CAUSE_IRREVOCABLE];
}

/* The chunk is running again after an abort: shorten it where the cause
 * asks (see tm_coarsen.h).  After a hardware attempt's own abort (real
 * RTM, under htm or hybrid) the iteration that asked is unknown: its store
 * of `cur` was rolled back with the transaction.  The chunk then shrinks
 * to its first iteration, so that a request to run irrevocably never
 * covers iterations beyond the one that made it (one of them might
 * restart), and a restart commits what came before it one iteration at a
 * time.  Every software attempt's abort keeps `cur` exact. */
static HPS_NOINLINE void after_abort(const hps_tm_desc_t *d, volatile chunk_t *c)
{
    long lo = c->lo, end = c->end, cur = c->cur;
    int exact = !d->abort_hw;
    if (cap_count(d) != c->cap) {
        long half = lo + (end - lo) / 2;
        end = half > lo ? half : lo + 1;
        c->capacity++;
    }
    if (exact && d->st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT] != c->expl && cur > lo && cur < end)
        end = cur;                   /* commit the iterations before the restart */
    if (exact && d->st.aborts_by_cause[HPS_TM_CAUSE_IRREVOCABLE] != c->irr && cur < end)
        end = cur + 1;               /* run alone only up to the one that asked */
    if (!exact && (d->st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT] != c->expl ||
                   d->st.aborts_by_cause[HPS_TM_CAUSE_IRREVOCABLE] != c->irr))
        end = lo + 1;
    c->end = end;
    snapshot(d, c);
}

/* Run [lo, end) as one section, ending early as documented; returns where
 * it ended.  noinline: the checkpoint's frame is this function's alone. */
static HPS_NOINLINE long run_chunk(hps_tm_desc_t *d, long lo, long end, hps_tm_iter_fn fn,
                                   void *arg, uint32_t *capacity)
{
    volatile chunk_t c = { .lo = lo, .end = end, .cur = lo };
    snapshot(d, &c);
    HPS_TM_BEGIN();
    if (hps_unlikely(d->st.aborts != c.aborts))
        after_abort(d, &c);
    c.irr0 = d->irrev;
    for (long j = c.lo; j < c.end; j++) {
        c.cur = j;
        fn(j, arg);
        /* hps_tm_irrevocable() in this iteration, without a restart (sgl):
         * end the chunk here. */
        if (hps_unlikely(d->irrev != c.irr0)) {
            c.end = j + 1;
            break;
        }
    }
    HPS_TM_END();
    *capacity += c.capacity;
    return c.end;
}

static hps_tm_desc_t *desc(void)
{
    hps_tm_fast_t *f = hps_tm_self_;
    return (hps_tm_desc_t *)(f ? f : hps_tm_register_());
}

static long chunk_end(long i, long hi, long k)
{
    return hi - i > k ? i + k : hi;
}

HPS_EXPORT void hps_tm_for(long lo, long hi, long k, hps_tm_iter_fn fn, void *arg)
{
    if (lo >= hi)
        return;
    hps_tm_desc_t *d = desc();
    if (d->fast.depth) {             /* part of the enclosing section */
        for (long i = lo; i < hi; i++)
            fn(i, arg);
        return;
    }
    if (k < 1)
        k = 1;
    for (long i = lo; i < hi;) {
        uint32_t capacity = 0;
        i = run_chunk(d, i, chunk_end(i, hi, k), fn, arg, &capacity);
        if (capacity)                /* the rest of the call: at most half */
            while (capacity-- && k > 1)
                k /= 2;
    }
}

/* ---- the dynamic form ------------------------------------------------------ */

/* A thread's controllers, one per site it uses, direct-mapped by the
 * site's address; a collision evicts (the evicted site starts again from
 * its hint).  Static TLS: nothing to free at thread exit. */
#define SLOTS 16
typedef struct slot {
    const hps_tm_coarsen_t *site;
    hps_tm_ctl_t ctl;
    uint64_t iters_total;
    /* The epoch in progress (it may span calls; time between calls is not
     * counted). */
    uint64_t ep_iters, ep_chunks, ep_ns, ep_aborts, ep_cap, ep_target;
} slot_t;
static __thread slot_t t_slots[SLOTS];

static unsigned log2_floor(uint32_t v)
{
    return v ? 31u - (unsigned)__builtin_clz(v) : 0;
}

static slot_t *slot_find(const hps_tm_coarsen_t *site)
{
    uintptr_t h = (uintptr_t)site;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    return &t_slots[(h >> 40) % SLOTS];
}

static uint64_t ep_target(unsigned level)
{
    uint64_t by_iters = EP_ITERS >> (level < 16 ? level : 16);
    return by_iters > EP_CHUNKS ? by_iters : EP_CHUNKS;
}

static slot_t *slot_get(hps_tm_coarsen_t *site)
{
    slot_t *s = slot_find(site);
    if (s->site == site)
        return s;
    unsigned lmax = site->kmax ? log2_floor(site->kmax) : LMAX_DEFAULT;
    /* Relaxed: the hint is advice; any value a thread left is a valid level. */
    uint32_t hint = hps_load_relaxed(&site->hint);
    unsigned l0 = hint ? hint - 1 : site->k0 ? log2_floor(site->k0) : L0_DEFAULT;
    *s = (slot_t){ .site = site };
    hps_tm_ctl_init(&s->ctl, l0, lmax);
    s->ep_target = ep_target(hps_tm_ctl_level(&s->ctl));
    return s;
}

HPS_EXPORT void hps_tm_for_dynamic(hps_tm_coarsen_t *site, long lo, long hi, hps_tm_iter_fn fn,
                                   void *arg)
{
    if (lo >= hi)
        return;
    hps_tm_desc_t *d = desc();
    if (d->fast.depth) {
        for (long i = lo; i < hi; i++)
            fn(i, arg);
        return;
    }
    slot_t *s = slot_get(site);
    uint64_t t0 = hps_mono_ns(), a0 = d->st.aborts, c0 = cap_count(d);
    s->iters_total += (uint64_t)(hi - lo);
    for (long i = lo; i < hi;) {
        long k = 1L << hps_tm_ctl_level(&s->ctl);
        uint32_t capacity = 0;
        long end = run_chunk(d, i, chunk_end(i, hi, k), fn, arg, &capacity);
        s->ep_iters += (uint64_t)(end - i);
        s->ep_chunks++;
        i = end;
        /* A capacity abort ends the epoch at once: the level must drop now. */
        if (!capacity && (s->ep_chunks < s->ep_target || s->ep_iters < EP_ITERS))
            continue;
        uint64_t t = hps_mono_ns();
        s->ep_ns += t - t0;
        t0 = t;
        if (s->ep_ns < EP_NS && !capacity) {
            s->ep_target *= 2;
            continue;
        }
        uint64_t a = d->st.aborts, c = cap_count(d);
        hps_tm_ctl_sample_t smp = { s->ep_iters, s->ep_ns, s->ep_chunks,
                                    s->ep_aborts + (a - a0), s->ep_cap + (c - c0) };
        a0 = a;
        c0 = c;
        unsigned before = s->ctl.phase;
        hps_tm_ctl_epoch(&s->ctl, &smp);
        if (s->ctl.phase == HPS_TM_CTL_SETTLED && before != HPS_TM_CTL_SETTLED &&
            hps_load_relaxed(&site->hint) != s->ctl.level + 1u)
            hps_store_relaxed(&site->hint, s->ctl.level + 1u);
        s->ep_iters = s->ep_chunks = s->ep_ns = s->ep_aborts = s->ep_cap = 0;
        s->ep_target = ep_target(hps_tm_ctl_level(&s->ctl));
    }
    /* Carry the partial epoch to the next call. */
    s->ep_ns += hps_mono_ns() - t0;
    s->ep_aborts += d->st.aborts - a0;
    s->ep_cap += cap_count(d) - c0;
}

HPS_EXPORT void hps_tm_coarsen_info(const hps_tm_coarsen_t *site, hps_tm_coarsen_info_t *out)
{
    *out = (hps_tm_coarsen_info_t){ 0 };
    slot_t *s = slot_find(site);
    if (s->site != site)
        return;
    out->k = 1u << hps_tm_ctl_level(&s->ctl);
    out->k_cap = 1u << s->ctl.cap;
    out->settled = s->ctl.phase == HPS_TM_CTL_SETTLED;
    out->epochs = s->ctl.epochs;
    out->moves = s->ctl.moves;
    out->probes = s->ctl.probes;
    out->iterations = s->iters_total;
}
