// SPDX-License-Identifier: MIT
/*
 * stm: word-based, in the TL2/LSA family (TinySTM's design points).
 *
 * Ownership records: 2^20, one per 32-byte stripe (4 words), hps_tm_stm_orec_(w)
 * by the word's address (hpsync/tm.h).  An orec holds the
 * version (the global clock value of the last commit that wrote a word
 * mapped to it) shifted left by one, or, while a writer holds it, a
 * lock word: bit 0 set, the owner's thread index in bits 1..16 and, above,
 * the index of the orec's entry in the owner's lock log (where its old
 * version is kept), so that the owner finds that version in O(1).
 *
 * A section reads the clock at begin (its snapshot).  A read checks the
 * orec before and after loading the word; a version newer than the
 * snapshot extends the snapshot (timestamp extension: read the clock,
 * revalidate every read orec) instead of aborting.  Writes go to the
 * hashed redo log.  Commit-time locking (default) takes the orecs of the
 * write set at commit; encounter-time locking (HPSYNC_TM_ETL=1) takes each
 * on the first write.  Then: clock + 1 is the commit version, the read set
 * is revalidated unless no one committed since the snapshot, the log is
 * written back and the orecs released with the new version.  Read-only
 * sections commit with no atomic operation at all.
 *
 * Every read also checks that the clock still equals the snapshot (the
 * inline fast path in hpsync/tm.h does it in one load and compare; if the
 * clock moved, the read extends first).  That is stronger than TL2's
 * "version <= snapshot", and it is what makes privatization safe without
 * waiting for readers: once a section privatizes a node by its commit
 * (clock + 1), a doomed reader that still holds a pointer to the node sees
 * the clock moved at its next read, revalidates, finds the unlink and
 * aborts, before it returns any value the privatizer wrote plainly.
 *
 * The other half of privatization (HPSYNC_TM_PRIVATIZE=1, default) is a
 * late write-back: a writer that committed earlier may still be storing
 * its redo log into the node.  So a writer publishes `wb` (1 before it
 * takes its version, then version + 1 during write-back, 0 after), and
 * after its own commit waits only for writers that are still writing back
 * an older version.  It never waits for readers, which may sit preempted
 * for a whole time slice when threads outnumber cores (the old design,
 * which waited for every older section, collapsed there: tree-64k at 8
 * threads on 2 CPUs ran at 0.07x its 2-thread throughput).
 *
 * The inline read (hpsync/tm.h) needs no second look at the orec: every
 * commit takes its version from the clock before it writes anything back
 * and holds the orec until its write-back is over, so a word loaded after
 * an unlocked orec and before a clock that still equals the snapshot holds
 * its value at the snapshot.  (The orec check is not optional: a commit
 * whose version is the snapshot itself may still be writing back.)
 *
 * A read-only section first runs with no read log (HPS_TM_MODE_STM_RO): its reads
 * are consistent at the snapshot as long as the clock has not moved; when
 * it moves, the section cannot extend, and restarts with a log.
 */
#include <sys/mman.h>
#include "internal.h"

#define ORECS_BITS HPS_TM_ORECS_BITS_
#define LOCKED(o) ((o) & 1)
#define OWNER(o) ((uint32_t)((o) >> 1) & 0xffff)
#define LOCK_IDX(o) ((uint32_t)((o) >> 17))
#define LOCK_WORD(d, idx) (((uint64_t)(idx) << 17) | ((uint64_t)(d)->tid << 1) | 1)
#define MINE(d, o) (LOCKED(o) && OWNER(o) == (d)->tid)   /* orec word o: held by d */
/* Rounds a section waits for a locked orec before it aborts (the holder is
 * committing; when it was preempted, aborting and backing off is better). */
#define LOCKED_WAIT 12

/* The orecs are exported for the inline fast path; the clock, alone on its
 * pair of cache lines (HPS_LINEPAIR), is reached through the descriptor's
 * `clock`. */
HPS_EXPORT hps_au64 hps_tm_stm_orecs32_[1u << ORECS_BITS];
static struct {
    hps_au64 v;
} __attribute__((aligned(HPS_LINEPAIR))) g_clock;
#define g_orecs hps_tm_stm_orecs32_

/*
 * Why stripes of 32 bytes and not an orec per word: the table follows data
 * addresses (modulo 32 MiB), so with an orec per word the orecs a section
 * touched spanned as many pages and cache lines as its data, doubling its
 * TLB and cache footprint; a stripe's orec takes a quarter, and a section
 * that writes a run of words locks a quarter of the orecs.  Measured on
 * the workloads, one thread, every access instrumented (docs/tm.md, "stm
 * stripes"): large scatter zones 1.1-1.5x as fast, physics 1.15-1.65x,
 * graph clustering on 1 Mi vertices 1.4-1.9x, a 1 Mi-bin histogram 1.2x,
 * the 2 KiB ring's 1.3x climb over the 64 B one gone.  The price: false
 * conflicts between neighbours (graph clustering's 4-byte parents at 2
 * threads: 2-4x the aborts) and a shift a read (the 64 B ring's dense walk,
 * 1.12x the time per node).  TinySTM's default stripe is 32 bytes too.
 *
 * Transparent huge pages for the table (the kernel's "madvise" mode, the
 * usual default, gives them only to ranges asked for) may shrink the
 * orecs' TLB share further (on the development KVM guest they gained
 * nothing measurable: docs/workloads.md, the ring).  The array is not
 * 2 MiB-aligned (an exported symbol's alignment would reach every
 * executable that copies it), so the aligned interior is advised: at least
 * 6 of its 8 MiB.  Best effort: a kernel without THP changes nothing.
 */
__attribute__((constructor)) static void orecs_huge_pages(void)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)g_orecs + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)(g_orecs + (1u << ORECS_BITS))) & ~(huge - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

static void stm_begin(hps_tm_desc_t *d)
{
    d->clock = &g_clock.v;
    d->snap = hps_load_acquire(&g_clock.v);
}

/* Does the orec still hold what the read saw (or our own lock over it)? */
static inline int still_valid(hps_tm_desc_t *d, hps_au64 *orec, uint64_t seen)
{
    uint64_t o = hps_load_acquire(orec);
    if (o == seen)
        return 1;
    return MINE(d, o) && d->ulog.e[LOCK_IDX(o)].v == seen;
}

static int validate(hps_tm_desc_t *d)
{
    for (uint32_t i = 0; i < d->rlog.n; i++)
        if (!still_valid(d, (hps_au64 *)d->rlog.e[i].a, d->rlog.e[i].v))
            return 0;
    return 1;
}

/* Move the snapshot to now, or abort if a read no longer holds. */
static void extend(hps_tm_desc_t *d)
{
    uint64_t now = hps_load_acquire(&g_clock.v);
    if (!validate(d))
        hps_tm_abort(d, HPS_TM_CAUSE_VALIDATION);
    d->snap = now;
}

static void wait_locked(hps_tm_desc_t *d, uint32_t *n)
{
    if (*n >= LOCKED_WAIT)
        hps_tm_abort(d, HPS_TM_CAUSE_CONFLICT);
    hps_tm_wait(n);
}

static uint64_t stm_read(hps_tm_fast_t *f, const uint64_t *w)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    hps_tm_went_t *e = NULL;
    if (d->ws.n) {
        e = hps_tm_wset_find(&d->ws, w);
        if (e && e->mask == ~(uint64_t)0)
            return e->val;
    }
    hps_au64 *orec = hps_tm_stm_orec_(w);
    uint32_t n = 0;
    uint64_t v;
    for (;;) {
        /* Acquire, acquire: orec, then word, then orec again, in order. */
        uint64_t o = hps_load_acquire(orec);
        if (hps_unlikely(LOCKED(o))) {
            if (OWNER(o) == d->tid) {
                /* Ours (encounter-time locking): nobody else writes it. */
                v = hps_plain_load_relaxed(w);
                break;
            }
            wait_locked(d, &n);
            continue;
        }
        v = hps_plain_load_acquire(w);
        if (hps_unlikely(hps_load_relaxed(orec) != o))
            continue;
        /* A commit since the snapshot (the orec's version may be newer,
         * or the word privatized): revalidate at the present clock. */
        if (hps_unlikely(hps_load_relaxed(&g_clock.v) != d->snap)) {
            if (d->nolog)
                hps_tm_nolog_abort(d);
            extend(d);
            continue;
        }
        if (!d->nolog)
            hps_tm_log_push(&d->rlog, (uintptr_t)orec, o);
        break;
    }
    return e ? (v & ~e->mask) | e->val : v;
}

/* Take orec for this section (or see that it already has it); 0 if another
 * writer holds it. */
static int lock_orec(hps_tm_desc_t *d, hps_au64 *orec, int check_version)
{
    uint32_t n = 0;
    for (;;) {
        uint64_t o = hps_load_relaxed(orec);
        if (LOCKED(o)) {
            if (OWNER(o) == d->tid)
                return 1;
            if (n >= LOCKED_WAIT)
                return 0;
            hps_tm_wait(&n);
            continue;
        }
        /* Encounter time: a newer version may hide a word we read, and
         * reads of our own locked orecs are not checked again. */
        if (check_version && (o >> 1) > d->snap) {
            extend(d);
            continue;
        }
        /* Acquire: the word is read and written only after the lock. */
        if (hps_cas_acquire(orec, &o, LOCK_WORD(d, d->ulog.n))) {
            hps_tm_log_push(&d->ulog, (uintptr_t)orec, o);
            return 1;
        }
    }
}

static void stm_write(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    if (hps_unlikely(d->ro))
        hps_tm_abort(d, HPS_TM_CAUSE_RO_WRITE);
    /* Reads from now on test the redo log's filter, and writes of words
     * not in it append inline (hpsync/tm.h).  Not under encounter-time
     * locking, whose every write must lock its orec here; its reads need
     * no filter either: a word it wrote lies under an orec it holds, which
     * sends the inline read here. */
    if (f->mode == HPS_TM_MODE_STM && !hps_tm_etl)
        f->mode = HPS_TM_MODE_STM_W;
    if (hps_tm_etl && !lock_orec(d, hps_tm_stm_orec_(w), 1))
        hps_tm_abort(d, HPS_TM_CAUSE_CONFLICT);
    hps_tm_wset_put(&d->ws, w, v, mask);
}

static int stm_commit(hps_tm_desc_t *d)
{
    d->wv = 0;
    if (d->ws.n == 0)
        return HPS_TM_COMMITTED;     /* read-only: valid at the snapshot */
    if (!hps_tm_etl) {
        /* Consecutive words share a stripe: its orec is taken once.  A
         * stripe taken earlier in the loop is seen taken here, without the
         * call: the words of a few stripes often alternate (a physics pair
         * writes its two bodies' components in turn: 6 of its 8 entries
         * found their orec taken, 96 instructions a pair in calls). */
        hps_au64 *last = NULL;
        const hps_tm_went_t *e = d->ws.e;
        for (uint32_t i = 0, n = d->ws.n; i < n; i++) {
            hps_au64 *orec = hps_tm_stm_orec_(e[i].addr);
            if (orec == last)
                continue;
            last = orec;
            /* Relaxed: while an orec is ours, only we write it. */
            if (MINE(d, hps_load_relaxed(orec)))
                continue;
            if (!lock_orec(d, orec, 0))
                return HPS_TM_CAUSE_CONFLICT;
        }
    }
    /* "Committing" is published before the version is taken: the clock's
     * increment below is a release, and a later writer's increment (an
     * acquire reading from it) makes this store visible to that writer's
     * wait in stm_end. */
    if (hps_tm_privatize)
        hps_store_relaxed(&d->wb, 1);
    /* Acquire-release: the locks are taken before the version exists, and
     * the write-back comes after it. */
    uint64_t wv = hps_faa_acq_rel(&g_clock.v, 1) + 1;
    if (hps_tm_privatize)
        hps_store_relaxed(&d->wb, wv + 1);
    if (wv != d->snap + 1 && !validate(d))
        return HPS_TM_CAUSE_VALIDATION;
    hps_tm_wset_write_back(&d->ws);
    /* Release: the written words are visible before the new version. */
    for (uint32_t i = 0, n = d->ulog.n; i < n; i++)
        hps_store_release((hps_au64 *)d->ulog.e[i].a, wv << 1);
    /* Release: the write-back is complete before "done". */
    hps_store_release(&d->wb, 0);
    d->ulog.n = 0;
    d->wv = wv;
    return HPS_TM_COMMITTED;
}

static void stm_rollback(hps_tm_desc_t *d)
{
    /* Release: give each orec back its old version. */
    for (uint32_t i = 0; i < d->ulog.n; i++)
        hps_store_release((hps_au64 *)d->ulog.e[i].a, d->ulog.e[i].v);
    hps_store_release(&d->wb, 0);
    d->ulog.n = 0;
    d->wv = 0;
}

/* Wait until no other writer is still writing back a version older than
 * wv (or is about to take a version that may be older). */
static void wait_write_backs(hps_tm_desc_t *self, uint64_t wv)
{
    uint32_t n = hps_tm_desc_count();
    for (uint32_t i = 0; i < n; i++) {
        hps_tm_desc_t *o = hps_tm_desc_at(i);
        uint32_t w = 0;
        if (o == self)
            continue;
        for (;;) {
            /* Acquire: its write-back is visible once we see it done. */
            uint64_t b = hps_load_acquire(&o->wb);
            if (b == 0 || (b > 1 && b - 1 > wv))
                break;
            hps_tm_wait(&w);
        }
    }
}

static void stm_end(hps_tm_desc_t *d)
{
    if (d->wv && hps_tm_privatize)
        wait_write_backs(d, d->wv);
    d->wv = 0;
}

const hps_tm_ops_t hps_tm_stm_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "stm",
    .instrument_reads = 1,
    .begin = stm_begin,
    .read = stm_read,
    .write = stm_write,
    .commit = stm_commit,
    .rollback = stm_rollback,
    .end = stm_end,
    .mode = HPS_TM_MODE_STM,
    .mode_ro = HPS_TM_MODE_STM_RO,
};
