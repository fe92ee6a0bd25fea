// SPDX-License-Identifier: MIT
/*
 * Transactional coarsening (hpsync/tm_coarsen.h): loops whose iterations
 * run k to a section, k fixed (hps_tm_for) or chosen by a controller per
 * call site (hps_tm_for_dynamic, the controller in coarsen_ctl.c).
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
 * The dynamic form's controller: one per call site, run by one of the
 * threads using it (the leader; why, and what it costs, is at "the
 * dynamic form" below), which judges a level by the iterations every
 * thread committed in its epochs' time.
 */
#include <string.h>
#include "internal.h"
#include "coarsen.h"
#include "hpsync/tm_coarsen.h"
#include "../common/env.h"
#include "../prim/clock.h"

#define LMAX_DEFAULT 10              /* k up to 1024 */
/* Where a site without k0 stands before its first scan (the controller,
 * coarsen_ctl.c, measures k = 4, 64 and 1024 first and climbs from the
 * cheapest), and the k of a thread with no memory for a controller.
 * Before the scan every search started here, at k = 256: from k = 16 the
 * climb took 4-13 ms of a 40 ms histogram run at 2 threads, and most rows
 * then had their best k at 256-1024; after stm's and norec's cheaper
 * writes (2026-11-29) scatter's large zones had theirs at 4-16 and
 * histogram's 16 bins at 1024, and no start served both within one
 * run. */
#define L0_DEFAULT 8
/* An epoch ends after at least this many chunks, iterations and ns (the
 * chunk count doubles until the time is reached, so the clock is read
 * O(log) times per epoch however short the iterations). */
#define EP_CHUNKS HPS_TM_CTL_STAY_CHUNKS   /* a whole epoch, as the stays count it */
#define EP_ITERS 128
#define EP_NS 20000
/* Long chunks (k >= 256, and serialized ones, which run at kmax): an epoch
 * of at least 2 of them and 40 us, unless threads outnumber the CPUs.  8
 * chunks of 1024 made the serial arm's and k = 1024's epochs 0.3-0.5 ms
 * where iterations miss the cache (histogram's 1 Mi bins at 2 threads), so
 * a probe of either (three epochs at 1.3-2x the settled level's cost) took
 * 1-1.5 ms, and a settled serial arm needed 1.5 ms of epochs off its
 * baseline to see the input change (b1m-b16 under norec at 2 threads:
 * `tm-dyn` over the best static choice 0.73-0.79 -> 0.84-0.90, two A/Bs
 * of 12 processes; stm's b1m 0.78-0.84 -> 0.86-0.90).  With cheap
 * iterations 8 long chunks took ~40 us, which the time floor keeps (a 20
 * us floor cost histogram b16 under stm 4-8 %), and stays count such short
 * epochs by their share (coarsen.h), so a settled level is probed as
 * often in time as before.  While crowded, a leader's epoch averages over
 * the others' time slices, and 2 chunks did not (scatter large-low under
 * stm at 8 threads: 0.96-0.99 -> 0.87-0.92 of the best static choice). */
#define EP_LONG_LEVEL 8
#define EP_LONG_CHUNKS 2
#define EP_LONG_NS 40000
/* While threads outnumber the CPUs, a leader's epoch that costs near what
 * the controller already holds (hps_tm_ctl_near: within 3x) lasts at
 * least this long.  In 20 us the site's sum counts whatever the other
 * CPUs happen to run: 8 threads on 2 CPUs, histogram's 1 Mi bins under
 * norec, the epochs at k = 64 right after the serial arm's held the
 * leader's iterations alone (95-110 ns a key against 42-54 for the serial
 * arm, whose leader runs its chunks back to back while the followers are
 * parked), so the scan chose the serial arm, at half of static k = 64's
 * throughput; later in the same run concurrent k = 64-1024 measured 12-13.
 * Only near ones: a level far dearer is answered in 20 us as before (every
 * epoch at 200 us cost scatter's large zones, whose rescans from the serial
 * arm start at k = 4 at 3-10x its cost, 18-25 %).  A/B against the rule's
 * absence, 16 processes each, 8 threads: histogram b1m norec 1.54x, the
 * other 17 row-backends of histogram and scatter 0.93-1.08x, within their
 * quartiles (2026-11-29). */
#define EP_NS_CROWDED 200000

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
 * it ended.  serial: its first attempt runs serialized (alone behind the
 * gate, as solo; a rerun after a restart runs as any section does).
 * noinline: the checkpoint's frame is this function's alone. */
static HPS_NOINLINE long run_chunk(hps_tm_desc_t *d, long lo, long end, hps_tm_iter_fn fn,
                                   void *arg, uint32_t *capacity, int serial)
{
    volatile chunk_t c = { .lo = lo, .end = end, .cur = lo };
    snapshot(d, &c);
    /* The request is read on begin's slow path, which a tick due sends it
     * to: begin's fast check stays the two words it was. */
    d->want_serial = (uint32_t)serial;
    if (hps_unlikely(serial))
        hps_tm_tick_soon(d);
    HPS_TM_BEGIN();
    d->want_serial = 0;              /* taken, or not needed (the bias's owner) */
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

/* A tick per HPS_TM_TICK iterations, however few sections they make.  The
 * core's per-thread duties run every 64 sections (counting a thread in,
 * auto's clock, the bias); a coarsened loop's sections are k iterations
 * long, so at k = 256 a lone thread waited 64 x 256 iterations for its
 * bias: scatter large-low under stm at 1 thread ran its first 16 000
 * iterations at 10x the biased cost, 7 of 31 ms, and the best static k
 * came out as the one with the shortest wait, not the shortest sections.
 * `since` counts the caller's iterations since its last tick. */
static void tick_by_iterations(hps_tm_desc_t *d, long *since, long n)
{
    *since += n;
    if (*since >= HPS_TM_TICK) {
        *since = 0;
        hps_tm_tick_soon(d);
    }
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

static void tm_for(long lo, long hi, long k, hps_tm_iter_fn fn, void *arg, int serial)
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
    long since = 0;
    for (long i = lo; i < hi;) {
        uint32_t capacity = 0;
        long end = run_chunk(d, i, chunk_end(i, hi, k), fn, arg, &capacity, serial);
        tick_by_iterations(d, &since, end - i);
        i = end;
        if (capacity)                /* the rest of the call: at most half */
            while (capacity-- && k > 1)
                k /= 2;
    }
}

HPS_EXPORT void hps_tm_for(long lo, long hi, long k, hps_tm_iter_fn fn, void *arg)
{
    tm_for(lo, hi, k, fn, arg, 0);
}

HPS_EXPORT void hps_tm_for_serial(long lo, long hi, long k, hps_tm_iter_fn fn, void *arg)
{
    tm_for(lo, hi, k, fn, arg, 1);
}

/* ---- the dynamic form ------------------------------------------------------ */

/*
 * One controller per site, run by one of its threads (the leader), whose
 * level every thread of the site follows.  Until issue 16's last round
 * each thread ran a controller of its own.  Threads whose sections
 * conflict then play a game with their chunk sizes: the shorter chunk
 * commits first and the longer one aborts, so each thread, measuring only
 * itself, finds a level below its partner's better and steps down; both
 * end far below the level that is best when both run it.  Measured:
 * histogram b16 under stm, 2 threads, 12 processes each: k = 512, 1024
 * and 2048 all 152-155 M keys/s by median, per-thread controllers 134 M
 * with a low tail (44-93 M; the threads ended at k = 1024 and 8).  The
 * leader's probe moves every thread, so what it measures is the level's
 * cost when everybody runs it.
 *
 * The leader judges a level by every thread's committed iterations in its
 * epochs' time (each thread's co_done, summed; see epoch_end for why), so
 * two sites running at once judge their levels by the total.
 *
 * Cost of sharing: a follower reads the site's level word before every
 * chunk (a line written once per leader epoch, 20 us or more: the
 * heartbeat and the controller's copy) and the heartbeat once per epoch;
 * the leader writes the heartbeat and its controller's copy once per
 * epoch and the level when it changes, and reads every thread's counter
 * once per epoch (a miss per thread that ran).  The hot path (a chunk)
 * writes only the thread's own counter.  Followers took the level once
 * per epoch until this round: one back from a time slice away then ran up
 * to 8 more chunks at a level the leader had left, and with threads
 * outnumbering CPUs every probe measured a mix of levels.
 *
 * A leader that stops (its thread ended, or left the loop while others
 * go on) is replaced by the first follower to find its heartbeat older
 * than 8 of its own typical epochs (ep_typical; at least 1 ms): no write
 * at thread exit, so a site that has gone away is never touched.  A leader
 * that was only preempted finds at its next epoch that another thread
 * leads, and follows.  The new leader goes on with the controller where
 * the last one left it (the site keeps a copy, below).
 */
#define SLOTS 16
#define STALE_EPOCHS 8
#define STALE_MIN_NS 1000000ull
#define ALONE_NS 50000000ull         /* the leader is alone at the site after 50 ms without others */
/* Away from the site this long between calls (50 short epochs), a
 * leader's comparison under way starts again (hps_tm_ctl_gap). */
#define GAP_NS 1000000ull

/* A thread's view of the sites it uses, direct-mapped by the site's
 * address; a collision evicts (the evicted site is joined again).  In the
 * thread's TM descriptor (co_slots), cleared when the descriptor is
 * retired. */
typedef struct slot {
    const hps_tm_coarsen_t *site;
    hps_tm_ctl_t ctl;                /* the site's controller, while leading */
    uint8_t leads, run, lmax, fcap;  /* fcap: a follower's own capacity cap */
    uint8_t ser;                     /* run serialized chunks (k = 2^lmax) */
    uint32_t seen;                   /* the level word last followed */
    uint64_t iters_total, epochs, moves, probes;
    uint64_t ep_min[2];              /* the shortest epoch of the last 8, and of the 8 before */
    uint64_t done_seen;              /* leading: every thread's co_done summed, at the last look */
    uint64_t ep_done;                /* leading: their iterations in the epoch in progress */
    /* The epoch in progress (it may span calls; time between calls is not
     * counted). */
    uint64_t ep_iters, ep_chunks, ep_ns, ep_aborts, ep_cap, ep_target;
    uint64_t ep_solo;                /* of ep_chunks, those that ran on the bias */
    uint8_t ep_one;                  /* a chunk of the epoch ran one at a time (one_at_a_time) */
    uint8_t ep_long;                 /* the epoch is a long chunks' one (ep_begin) */
    uint64_t others_ns;              /* leading: when another thread last worked at the site, or
                                      * when this one took the lead of a site that has company */
    uint64_t left_ns;                /* when its last call at the site returned (0: none yet) */
    uint8_t unserialized;            /* leading: the published run just left serialized chunks */
    uint64_t ser_chunk_ns;           /* leading: a serialized chunk's time in its last epoch */
    uint64_t unser_end;              /* leading: epochs begun before this (ns) waited on the
                                      * others' last serialized chunks, and are not fed */
} slot_t;
struct hps_tm_co_slots {
    slot_t s[SLOTS];
    uint64_t token;                  /* this thread, as a site's leader (never 0) */
};
static hps_au64 g_tokens;

static uint64_t new_token(void)
{
    return hps_faa_relaxed(&g_tokens, 1) + 1;
}

/* The thread's slots (NULL if they cannot be allocated). */
static struct hps_tm_co_slots *slots_of(hps_tm_desc_t *d)
{
    if (hps_unlikely(!d->co_slots)) {
        d->co_slots = calloc(1, sizeof *d->co_slots);
        if (!d->co_slots)
            return NULL;
        d->co_slots->token = new_token();
    }
    return d->co_slots;
}

/* The next thread to own the descriptor is another leader. */
void hps_tm_co_retire(hps_tm_desc_t *d)
{
    if (d->co_slots) {
        memset(d->co_slots, 0, sizeof *d->co_slots);
        d->co_slots->token = new_token();
    }
}

/* The site's level word: the level run now (a probe's while the leader
 * measures one) and the level it last settled on, each + 1 (0: none),
 * and the arm run now and settled on (1: serialized), bits 16 and 17. */
static uint32_t word_of(unsigned run, unsigned settled, unsigned ser, unsigned ser_settled)
{
    return (run + 1u) | (settled + 1u) << 8 | ser << 16 | ser_settled << 17;
}
static unsigned word_run(uint32_t w) { return (w & 0xff) - 1u; }
static unsigned word_settled(uint32_t w) { return (w >> 8 & 0xff) - 1u; }
static unsigned word_ser(uint32_t w) { return w >> 16 & 1u; }
static unsigned word_ser_settled(uint32_t w) { return w >> 17 & 1u; }
/* What a follower's capacity cap lasts for: the settled level and arm. */
static uint32_t word_settled_all(uint32_t w) { return (w >> 8 & 0xffu) | (w >> 17 & 1u) << 8; }

static unsigned log2_floor(uint32_t v)
{
    return v ? 31u - (unsigned)__builtin_clz(v) : 0;
}

static slot_t *slot_find(struct hps_tm_co_slots *t, const hps_tm_coarsen_t *site)
{
    uintptr_t h = (uintptr_t)site;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    return &t->s[(h >> 40) % SLOTS];
}

/* The site's settings as levels: the largest, and where a search starts. */
static unsigned site_lmax(const hps_tm_coarsen_t *site)
{
    unsigned lmax = site->kmax ? log2_floor(site->kmax) : LMAX_DEFAULT;
    return lmax > HPS_TM_CTL_LMAX ? HPS_TM_CTL_LMAX : lmax;
}

static unsigned site_l0(const hps_tm_coarsen_t *site)
{
    unsigned l0 = site->k0 ? log2_floor(site->k0) : L0_DEFAULT, lmax = site_lmax(site);
    return l0 < lmax ? l0 : lmax;
}

/* 0 if another thread took the lead over while this one was away. */
static int still_leads(const hps_tm_coarsen_t *site, slot_t *s, uint64_t token)
{
    if (s->leads && hps_load_relaxed(&site->leader) != token)
        s->leads = 0;
    return s->leads;
}

static void set_run(slot_t *s, unsigned level, unsigned ser)
{
    if (level != s->run || ser != s->ser) {
        s->run = (uint8_t)level;
        s->ser = (uint8_t)ser;
        s->moves++;
    }
}

/* The chunk size the slot runs now, and the epoch's chunk target. */
static unsigned run_level(const slot_t *s)
{
    return s->ser ? s->lmax : s->run;
}

/* 1: the slot's chunks are long ones (EP_LONG_LEVEL). */
static int long_chunks(const slot_t *s)
{
    return run_level(s) >= EP_LONG_LEVEL && !hps_tm_crowded();
}

/* Start an epoch: its chunk target, and whether it is a long chunks' one
 * (decided once, so its target and its time floor agree even if the
 * process becomes crowded meanwhile). */
static void ep_begin(slot_t *s)
{
    unsigned level = run_level(s);
    uint64_t by_iters = EP_ITERS >> (level < 16 ? level : 16);
    s->ep_long = (uint8_t)long_chunks(s);
    uint64_t chunks = s->ep_long ? EP_LONG_CHUNKS : EP_CHUNKS;
    s->ep_target = by_iters > chunks ? by_iters : chunks;
}

/* 1 while the backend runs one section at a time (sgl, and auto's solo for
 * a lone thread: ops.free_at_once).  There the controller has nothing to
 * find: sections cannot conflict, nothing overflows, a restart keeps the
 * iterations before it, so longer sections only save begins and commits
 * (and serializing them saves nothing more).  Chunks then run at kmax,
 * unserialized, their epochs are not fed, and the controller moves to the
 * k that ran (hps_tm_ctl_pinned): the search resumes from there when the
 * backend changes (auto).  Searching there cost: at 8
 * threads on 2 CPUs, the scan's k = 4 and 64 hand the lock over every few
 * iterations among threads that are mostly descheduled, and the climb
 * back up needs the long run's word (crowded); on histogram and scatter
 * the controller ran 0.74-0.88x sgl's best static choice (run 62, 3
 * rounds), which was k = 1024 or serialized chunks on 12 rows of 13 there
 * and 9 of 13 in run 61; where a smaller k won (scatter's large zones),
 * k = 1024 was within 6 % of it in an A/B of 8 processes. */
static int one_at_a_time(void)
{
    return hps_tm_ops_now()->free_at_once;
}

/* Publish the leader's level (written only when it changes). */
static void publish(hps_tm_coarsen_t *site, slot_t *s)
{
    unsigned ser = (unsigned)hps_tm_ctl_serial(&s->ctl);
    if (s->ser && !ser)
        s->unserialized = 1;
    uint32_t w = word_of(hps_tm_ctl_level(&s->ctl), s->ctl.level, ser, s->ctl.serial);
    if (hps_load_relaxed(&site->level) != w)
        hps_store_relaxed(&site->level, w);
    set_run(s, hps_tm_ctl_level(&s->ctl), ser);
}

/* The controller lives in the leader's slot while it leads and is copied
 * to the site after every epoch, so that a thread taking the lead over
 * goes on with the search where it stood.  (Every new leader starting
 * from scratch never finished one when threads outnumber the CPUs: a
 * leader is preempted for a few time slices every few ms, the next one
 * measured the current level and probed upwards first, and lost the lead
 * before it ever looked down; scatter large-low at 8 threads under stm
 * sat at k = 256-512 for whole runs, at 0.6x k = 16.)  A sequence word
 * guards the copy: odd while a writer copies (claimed by CAS, so a
 * deposed leader that still writes cannot tear it), and the reader
 * retries a changed sequence a few times, then starts afresh. */
#define CTL_WORDS ((sizeof(hps_tm_ctl_t) + 7) / 8)
_Static_assert(CTL_WORDS <= sizeof(((hps_tm_coarsen_t *)0)->ctl_) / sizeof(hps_au64),
               "the site's copy of the controller is too small");

static void ctl_save(hps_tm_coarsen_t *site, const hps_tm_ctl_t *c)
{
    uint64_t seq = hps_load_relaxed(&site->ctl_seq_), w[CTL_WORDS] = { 0 };
    if ((seq & 1) || !hps_cas_acq_rel(&site->ctl_seq_, &seq, seq + 1))
        return;                      /* another writer is at it: skip this one */
    memcpy(w, c, sizeof *c);
    for (size_t i = 0; i < CTL_WORDS; i++)
        hps_store_relaxed(&site->ctl_[i], w[i]);
    hps_store_release(&site->ctl_seq_, seq + 2);
}

static int ctl_load(hps_tm_coarsen_t *site, hps_tm_ctl_t *c)
{
    for (int tries = 0; tries < 4; tries++) {
        uint64_t seq = hps_load_acquire(&site->ctl_seq_), w[CTL_WORDS];
        if (seq == 0)
            return 0;                /* no leader has saved one yet */
        if (seq & 1)
            continue;
        for (size_t i = 0; i < CTL_WORDS; i++)
            w[i] = hps_load_relaxed(&site->ctl_[i]);
        hps_fence_acquire();
        if (hps_load_relaxed(&site->ctl_seq_) == seq) {
            memcpy(c, w, sizeof *c);
            return 1;
        }
    }
    return 0;
}

/* How long this thread's epochs take, preemptions left out: the shortest
 * of its last 8 to 16.  (Its last epoch was the measure until 2026-11-29:
 * the epoch a thread ends when it comes back from a time slice away holds
 * that time slice, and it is exactly then that it looks at the leader's
 * heartbeat; at 8 threads on 2 CPUs a preempted leader was replaced after
 * 5 ms instead of 1, while the whole site ran the level it was probing,
 * scatter's k = 4 at 10x the serial arm's cost.) */
static uint64_t ep_typical(const slot_t *s)
{
    uint64_t a = s->ep_min[0], b = s->ep_min[1];
    return b && b < a ? b : a;
}

static void ep_record(slot_t *s, uint64_t ns)
{
    if ((s->epochs & 7) == 1) {      /* epochs counts this one: a window of 8 begins */
        s->ep_min[1] = s->ep_min[0];
        s->ep_min[0] = ns;
    } else if (ns < s->ep_min[0] || !s->ep_min[0]) {
        s->ep_min[0] = ns;
    }
}

/* Leading: every thread's iterations at the site in the epoch so far,
 * given the sum of their counters now. */
static uint64_t site_done(const slot_t *s, uint64_t sum)
{
    return s->ep_done + (sum - s->done_seen);
}

/* Lead the site if nobody does, or if its leader's heartbeat is stale. */
static void try_lead(hps_tm_coarsen_t *site, slot_t *s, uint64_t token, uint64_t now)
{
    uint64_t leader = hps_load_relaxed(&site->leader);
    if (leader) {
        uint64_t beat = hps_load_relaxed(&site->beat);
        uint64_t stale = STALE_EPOCHS * ep_typical(s);
        if (stale < STALE_MIN_NS)
            stale = STALE_MIN_NS;
        if (now < beat || now - beat <= stale)
            return;
    }
    if (!hps_cas_acq_rel(&site->leader, &leader, token))
        return;
    hps_store_relaxed(&site->beat, now);
    uint32_t w = hps_load_relaxed(&site->level);
    /* The copy is checked: a site that was not initialized (malloc'd
     * memory) must not hand the controller a level past kmax. */
    if (!ctl_load(site, &s->ctl) || !hps_tm_ctl_valid(&s->ctl, s->lmax)) {
        hps_tm_ctl_init(&s->ctl, w ? word_settled(w) : s->run, s->lmax);
        s->ctl.no_serial = !hps_settings()->tm_coarsen_serial;
        /* A site that never settled, with no start given: scan first. */
        if (!w && !site->k0)
            hps_tm_ctl_scan(&s->ctl);
    }
    s->leads = 1;
    /* Whether the site has company is the controller's word, not this
     * thread's: a new leader that had not yet seen the others itself fed
     * its epochs on the bias as a lone thread's (physics b256 under stm, 8
     * threads: a restarted scan measured concurrent k = 1024 on the bias at
     * the serial arm's cost, 16 ns a pair, then ran it at 70-90 for most of
     * the run).  It counts as having seen them now; 50 ms without them
     * (ALONE_NS) makes it alone again. */
    s->others_ns = s->ctl.shared ? now : 0;
    s->done_seen = hps_tm_co_done_total();
    s->ep_done = 0;
    publish(site, s);
}

/* A follower's level: the site's, below its own capacity cap (which
 * lasts until the site's settled level changes). */
static void follow(hps_tm_coarsen_t *site, slot_t *s, const hps_tm_ctl_sample_t *smp)
{
    uint32_t w = hps_load_relaxed(&site->level);
    if (!w)
        return;
    if (word_settled_all(w) != word_settled_all(s->seen))
        s->fcap = s->lmax;
    s->seen = w;
    if (smp && smp->cap_aborts && !s->ser)
        s->fcap = (uint8_t)(s->run > 0 ? s->run - 1 : 0);
    unsigned l = word_run(w);
    set_run(s, l < s->fcap ? l : s->fcap, word_ser(w));
}

static slot_t *slot_get(hps_tm_desc_t *d, hps_tm_coarsen_t *site)
{
    struct hps_tm_co_slots *t = slots_of(d);
    if (hps_unlikely(!t))
        return NULL;
    slot_t *s = slot_find(t, site);
    if (s->site == site)
        return s;
    unsigned lmax = site_lmax(site);
    *s = (slot_t){ .site = site, .lmax = (uint8_t)lmax, .fcap = (uint8_t)lmax,
                   .run = (uint8_t)site_l0(site) };
    uint64_t now = hps_mono_ns();
    try_lead(site, s, t->token, now);
    if (!s->leads)
        follow(site, s, NULL);
    s->moves = 0;
    ep_begin(s);
    return s;
}

/* An epoch ended: the leader feeds its controller, a follower rereads the
 * site's level. */
static void epoch_end(hps_tm_coarsen_t *site, slot_t *s, uint64_t token,
                      const hps_tm_ctl_sample_t *smp, uint64_t solo, int one, uint64_t now)
{
    s->epochs++;
    ep_record(s, smp->ns);
    if (!still_leads(site, s, token))
        try_lead(site, s, token, now);
    if (s->leads) {
        /* The leader judges the level by what every thread got done in the
         * epoch's time, not by its own cost alone: a thread whose partner
         * sleeps in a backoff runs alone, twice as fast, so its own cost
         * swung 3.5x between the partner's storms and calm, while the
         * level's real effect was 4-10 %. */
        uint64_t sum = hps_tm_co_done_total();
        hps_tm_ctl_sample_t site_smp = *smp;
        site_smp.iters = site_done(s, sum);
        site_smp.crowded = (uint32_t)hps_tm_crowded();
        s->done_seen = sum;
        s->ep_done = 0;
        if (!site_smp.iters)
            site_smp.iters = smp->iters;
        /* An epoch the leader spent mostly on the bias, while other
         * threads work at the site too, ran while they waited: its cost
         * (a tenth of a shared epoch's, with 8 threads on 2 CPUs) measures
         * the bias, not the level, and mixed with shared epochs it let the
         * noise pick the level.  A thread alone at the site runs every
         * epoch on the bias: those are comparable, and fed. */
        int feed = !one;             /* a chunk at kmax one at a time measured no level */
        if (site_smp.iters > smp->iters) {
            /* Others arrived: a scan of the leader's lone start (a thread
             * started 2-3 ms before its partner is common here) measured
             * the bias, not the levels (scatter's 16 large zones under sgl:
             * k = 4 alone at 31 ns an entry against 43-62 shared, which
             * then beat every shared point). */
            if (hps_tm_ctl_joined(&s->ctl, !site->k0)) {
                feed = 0;
                ctl_save(site, &s->ctl);
            }
            s->others_ns = now;
        }
        /* The first epoch after serialized chunks, with company, waited
         * for the others' last serialized chunk (they see the new level
         * at their next chunk): histogram's 1 Mi bins under norec at 2
         * threads, k = 128 at 107-116 ns a key there against 50-66 around
         * it, which made the serial arm (58) look cheaper in its probe's
         * A-B-A; the serial arm then held 70 % of a run at 1.4x the cost.
         * So may every epoch begun before that chunk could have ended (two
         * of the leader's own serialized chunks' time after the switch),
         * and none is fed: a rescan's first points are short (k = 4: 8
         * chunks of 4 iterations), several fit into one serialized chunk
         * of 1024 (60-80 us), and only the first was dropped.  A/B of
         * tm-dyn over the best static choice: better in 8 of 11
         * configurations, each within its spread (docs/tm-coarsen.md). */
        if (s->ctl.shared && (s->unserialized || now - smp->ns < s->unser_end))
            feed = 0;
        s->unserialized = 0;
        if (feed && (2 * solo <= smp->chunks || !s->ctl.shared || now - s->others_ns > ALONE_NS)) {
            uint32_t p = s->ctl.probes;
            hps_tm_ctl_epoch(&s->ctl, &site_smp);
            s->probes += (uint32_t)(s->ctl.probes - p);
            ctl_save(site, &s->ctl);  /* unchanged otherwise */
        }
        if (one && hps_tm_ctl_pinned(&s->ctl))
            ctl_save(site, &s->ctl);
        if (s->ser && smp->chunks)
            s->ser_chunk_ns = smp->ns / smp->chunks;
        hps_store_relaxed(&site->beat, now);
        publish(site, s);
        if (s->unserialized)
            s->unser_end = now + 2 * s->ser_chunk_ns;
    } else {
        follow(site, s, smp);
    }
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
    slot_t *s = slot_get(d, site);
    if (hps_unlikely(!s)) {
        hps_tm_for(lo, hi, 1L << site_l0(site), fn, arg);   /* no memory for a controller */
        return;
    }
    uint64_t token = d->co_slots->token;
    long since = 0;
    uint64_t t0 = hps_mono_ns(), a0 = d->st.aborts, c0 = cap_count(d), so0 = d->st.solo;
    s->iters_total += (uint64_t)(hi - lo);
    /* A leader that was deposed while away finds out here, not at its
     * next epoch's end: until then it would scan every thread's counter
     * twice a call (with 8 threads on 2 CPUs the lead changes hands every
     * few ms, and short calls made most of the scans stale ones). */
    if (still_leads(site, s, token)) {
        s->done_seen = hps_tm_co_done_total();   /* time between calls is not counted: nor what ran in it */
        if (s->left_ns && t0 - s->left_ns > GAP_NS)
            hps_tm_ctl_gap(&s->ctl);
    }
    for (long i = lo; i < hi;) {
        if (!s->leads && hps_load_relaxed(&site->level) != s->seen)
            follow(site, s, NULL);   /* the leader moved: from this chunk on */
        int one = one_at_a_time();
        long k = 1L << (one ? s->lmax : run_level(s));
        uint32_t capacity = 0;
        long end = run_chunk(d, i, chunk_end(i, hi, k), fn, arg, &capacity, one ? 0 : s->ser);
        s->ep_one |= (uint8_t)one;
        hps_store_relaxed(&d->co_done, hps_load_relaxed(&d->co_done) + (uint64_t)(end - i));
        tick_by_iterations(d, &since, end - i);
        s->ep_iters += (uint64_t)(end - i);
        s->ep_chunks++;
        i = end;
        /* A capacity abort ends the epoch at once: the level must drop now. */
        if (!capacity && (s->ep_chunks < s->ep_target || s->ep_iters < EP_ITERS))
            continue;
        uint64_t t = hps_mono_ns();
        s->ep_ns += t - t0;
        t0 = t;
        if (s->ep_ns < (s->ep_long ? EP_LONG_NS : EP_NS) && !capacity) {
            s->ep_target *= 2;
            continue;
        }
        if (s->leads && !capacity && s->ep_ns < EP_NS_CROWDED && hps_tm_crowded() &&
            hps_tm_ctl_near(&s->ctl, s->ep_ns, site_done(s, hps_tm_co_done_total()))) {
            s->ep_target *= 2;
            continue;
        }
        uint64_t a = d->st.aborts, c = cap_count(d);
        hps_tm_ctl_sample_t smp = { s->ep_iters, s->ep_ns, s->ep_chunks,
                                    s->ep_aborts + (a - a0), s->ep_cap + (c - c0), 0 };
        uint64_t so = d->st.solo;
        a0 = a;
        c0 = c;
        epoch_end(site, s, token, &smp, s->ep_solo + (so - so0), s->ep_one, t);
        so0 = so;
        s->ep_iters = s->ep_chunks = s->ep_ns = s->ep_aborts = s->ep_cap = s->ep_solo = 0;
        s->ep_one = 0;
        ep_begin(s);
    }
    /* Carry the partial epoch to the next call. */
    if (s->leads) {
        uint64_t sum = hps_tm_co_done_total();
        s->ep_done += sum - s->done_seen;
        s->done_seen = sum;
    }
    s->left_ns = hps_mono_ns();
    s->ep_ns += s->left_ns - t0;
    s->ep_aborts += d->st.aborts - a0;
    s->ep_cap += cap_count(d) - c0;
    s->ep_solo += d->st.solo - so0;
}

HPS_EXPORT void hps_tm_coarsen_info(const hps_tm_coarsen_t *site, hps_tm_coarsen_info_t *out)
{
    *out = (hps_tm_coarsen_info_t){ 0 };
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || !d->co_slots)
        return;
    slot_t *s = slot_find(d->co_slots, site);
    if (s->site != site)
        return;
    out->pinned = (uint32_t)one_at_a_time();
    out->k = 1u << (out->pinned ? s->lmax : run_level(s));
    out->serial = out->pinned ? 0 : s->ser;
    out->leads = s->leads;
    /* The site's choice: pinned, the k that runs; else the leader's
     * controller, or the settled half of the word a follower reads. */
    out->k_held = out->k;
    out->serial_held = out->serial;
    if (s->leads) {
        out->k_cap = 1u << s->ctl.cap;
        out->settled = s->ctl.phase == HPS_TM_CTL_SETTLED;
        out->ctl_epochs = s->ctl.epochs;
        if (!out->pinned) {
            out->serial_held = s->ctl.serial;
            out->k_held = 1u << (s->ctl.serial ? s->lmax : s->ctl.level);
        }
    } else {
        uint32_t w = hps_load_relaxed(&site->level);
        unsigned cap = w && word_settled(w) == word_settled(s->seen) ? s->fcap : s->lmax;
        out->k_cap = 1u << cap;
        out->settled = w && word_run(w) == word_settled(w);
        if (!out->pinned && w) {
            out->serial_held = word_ser_settled(w);
            out->k_held = 1u << (out->serial_held ? s->lmax : word_settled(w));
        }
    }
    out->epochs = s->epochs;
    out->moves = s->moves;
    out->probes = s->probes;
    out->iterations = s->iters_total;
}
