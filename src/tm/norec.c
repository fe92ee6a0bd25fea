// SPDX-License-Identifier: MIT
/*
 * norec (Dalessandro, Spear, Scott, PPoPP 2010): one global sequence lock,
 * odd while a writer writes back.  A section remembers the even value it
 * began at and the (address, value) of each read; whenever the sequence
 * moved, it re-reads every logged address and goes on only if all values
 * are unchanged (value-based validation), so no section ever returns a
 * value from an inconsistent state (opacity).  Writes go to the hashed redo
 * log; a writer commits by moving the sequence from its snapshot to odd,
 * storing its log and making it even again.  Writers commit one at a time,
 * and a reader's values are checked against the sequence after every read,
 * so data privatized by a committed section is never read stale or
 * overwritten late: privatization safety costs nothing here.
 *
 * The common read runs inline (hpsync/tm.h, HPS_TM_MODE_NOREC): a section
 * loads the word, compares the sequence with its snapshot and appends to
 * its read log; after its first write (HPS_TM_MODE_NOREC_W) only for a word
 * whose bit in the redo log's filter is clear.  A read-only section first runs
 * with no read log at all (HPS_TM_MODE_NOREC_RO): while the sequence stays put every
 * value it read is current; if it moves, the section cannot validate and
 * restarts, logging (see hps_tm_nolog_abort).
 */
#include "internal.h"
#include "bias_trial.h"
#include "../prim/clock.h"

/* Alone on its pair of cache lines (HPS_LINEPAIR); the inline fast path
 * reaches it through the descriptor's `clock`. */
static struct {
    hps_au64 v;
} __attribute__((aligned(HPS_LINEPAIR))) g_seq;

/* ---- read-only sections on plain code ---------------------------------------
 *
 * GCC compiles a transaction twice; a read-only one's uninstrumented path
 * reads with plain loads and needs only that no write-back happens while it
 * runs.  Under GCC TM the instrumented read is a call per word (through the
 * PLT, with the caller's spills around it): the list row at 2 threads ran
 * at half the native API's speed (570 against 285 ns a lookup, ~96 reads
 * each), and plain code with no protocol at all (unsafe: an upper bound)
 * ran it 1.9x, hashset-90 1.43x, tree-64k 1.26x as fast.
 *
 * The protocol: a reader flags itself (plain_ro) and runs plain code unless
 * a write-back is in progress (the sequence is odd), else instrumented; a
 * writer, having taken the sequence, waits for the readers flagged before
 * it.  Dekker's pattern, every access sequentially consistent: the reader
 * stores its flag then loads the sequence, the writer swaps the sequence
 * then loads the flags, so one sees the other.  A reader never waits; a
 * writer waits at most a plain section, which cannot abort or block on TM.
 * HPS_TM_PLAIN_ARMED: writers load flags only once a reader has ever been eligible
 * (a writer that missed the arming swapped the sequence before that reader
 * loaded it, and the reader saw it odd).
 *
 * It costs the writers their wait, and whether it pays depends on the
 * program: bank's audit (1024 accounts, each last written by the other
 * CPU) held every transfer behind it, 5.4 M transfers/s against 18.5 M
 * instrumented (2 threads, the bias off), while the writers' wait was only
 * 2.5 % of their time: the cost is the lost overlap, not the wait.  So it
 * is on trial as the bias is with more threads than CPUs (bias_trial.c):
 * epochs of 10 ms closed, open, closed, all threads' commits counted, kept
 * open only if the open epoch beat both by 10 %.  Off while threads using
 * TM outnumber CPUs (a preempted reader would hold writers for a time
 * slice), on backends other than norec, and with HPSYNC_ITM_PLAIN_RO=0. */
/* What every read-only GCC TM begin on norec and every norec writer's
 * commit reads: a line of its own, written only when the trial moves. */
hps_au32 hps_tm_norec_plain_st_ __attribute__((aligned(HPS_LINEPAIR)));

static struct {
    hps_tm_trial_run_t run;
} __attribute__((aligned(HPS_LINEPAIR))) g_plain;

static void set_open(int open)
{
    uint32_t st = hps_load_relaxed(&hps_tm_norec_plain_st_);
    uint32_t want = open ? st | HPS_TM_PLAIN_OPEN : st & ~(uint32_t)HPS_TM_PLAIN_OPEN;
    if (want != st)
        hps_store_relaxed(&hps_tm_norec_plain_st_, want);
}

/* The first eligible reader: arm the writers and the trial, or note that
 * the setting is off (HPS_TM_PLAIN_OFF: nobody asks again). */
void hps_tm_norec_plain_arm(int on)
{
    uint32_t st = hps_load_relaxed(&hps_tm_norec_plain_st_);
    if (st == 0)
        hps_store_seq_cst(&hps_tm_norec_plain_st_, on ? HPS_TM_PLAIN_ARMED : HPS_TM_PLAIN_OFF);
}

/* Every 8th tick of a thread once armed: a clock read, and once per epoch
 * one thread adds up the commits. */
void hps_tm_norec_plain_tick(hps_tm_desc_t *d)
{
    if (!(hps_load_relaxed(&hps_tm_norec_plain_st_) & HPS_TM_PLAIN_ARMED) || (d->ticks & 7) != 0)
        return;
    if (hps_tm_crowded() || hps_tm_ops_now() != &hps_tm_norec_ops) {
        hps_tm_norec_plain_reset();
        return;
    }
    hps_tm_trial_run_tick(&g_plain.run, hps_mono_ns(), hps_tm_commits_total, set_open);
}

void hps_tm_norec_plain_fork_child(void)
{
    hps_store_relaxed(&g_plain.run.busy, 0);
    hps_tm_norec_plain_reset();
}

void hps_tm_norec_plain_reset(void)
{
    if (hps_load_relaxed(&g_plain.run.on) || (hps_load_relaxed(&hps_tm_norec_plain_st_) & HPS_TM_PLAIN_OPEN)) {
        hps_store_relaxed(&g_plain.run.on, 0);
        set_open(0);
    }
}

int hps_tm_norec_plain_enter(hps_tm_desc_t *d)
{
    hps_store_seq_cst(&d->plain_ro.v, 1);
    if (!(hps_load_seq_cst(&g_seq.v) & 1)) {
        hps_store_relaxed(&d->plain_ro_n, hps_load_relaxed(&d->plain_ro_n) + 1);
        return 1;
    }
    hps_store_release(&d->plain_ro.v, 0);
    return 0;
}

void hps_tm_norec_plain_exit(hps_tm_desc_t *d)
{
    /* Release: the section's plain loads complete before a writer can see
     * the flag down and write back. */
    hps_store_release(&d->plain_ro.v, 0);
}

/* A writer holds the sequence (odd): wait for plain readers flagged before. */
static HPS_NOINLINE void wait_plain_readers(const hps_tm_desc_t *self)
{
    uint32_t n = hps_tm_desc_count();
    for (uint32_t i = 0; i < n; i++) {
        hps_tm_desc_t *o = hps_tm_desc_at(i);
        if (o == self || o == NULL)
            continue;
        uint32_t k = 0;
        while (hps_load_seq_cst(&o->plain_ro.v))
            hps_tm_wait(&k);
    }
}

void hps_tm_norec_plain_summary(FILE *f)
{
    if (!(hps_load_relaxed(&hps_tm_norec_plain_st_) & HPS_TM_PLAIN_ARMED))
        return;
    uint64_t n = hps_tm_desc_sum(offsetof(hps_tm_desc_t, plain_ro_n));
    fprintf(f, "hpsync tm: GCC TM read-only transactions on plain code %llu; trials %llu, kept %llu\n",
            (unsigned long long)n, (unsigned long long)g_plain.run.t.trials,
            (unsigned long long)g_plain.run.t.kept);
}

static uint64_t wait_even(void)
{
    uint32_t n = 0;
    uint64_t s;
    /* Acquire: a writer's stores are visible once its even value is. */
    while ((s = hps_load_acquire(&g_seq.v)) & 1)
        hps_tm_wait(&n);
    return s;
}

/* The even sequence at which every logged read still holds, or an abort. */
static uint64_t validate(hps_tm_desc_t *d)
{
    for (;;) {
        uint64_t s = wait_even();
        for (uint32_t i = 0; i < d->rlog.n; i++)
            if (hps_plain_load_relaxed((const uint64_t *)d->rlog.e[i].a) != d->rlog.e[i].v)
                hps_tm_abort(d, HPS_TM_CAUSE_VALIDATION);
        /* Acquire fence: the value loads above complete before the
         * sequence is read again. */
        hps_fence_acquire();
        if (hps_load_relaxed(&g_seq.v) == s)
            return s;
    }
}

static void norec_begin(hps_tm_desc_t *d)
{
    d->clock = &g_seq.v;
    d->snap = wait_even();
}

static uint64_t norec_read(hps_tm_fast_t *f, const uint64_t *w)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    hps_tm_went_t *e = NULL;
    if (d->ws.n) {
        e = hps_tm_wset_find(&d->ws, w);
        if (e && e->mask == ~(uint64_t)0)
            return e->val;
    }
    /* Acquire: the value is read before the sequence check below. */
    uint64_t v = hps_plain_load_acquire(w);
    while (hps_unlikely(hps_load_relaxed(&g_seq.v) != d->snap)) {
        if (d->nolog)
            hps_tm_nolog_abort(d);
        d->snap = validate(d);
        v = hps_plain_load_acquire(w);
    }
    if (!d->nolog)
        hps_tm_log_push(&d->rlog, (uintptr_t)w, v);
    return e ? (v & ~e->mask) | e->val : v;
}

static void norec_write(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    if (hps_unlikely(d->ro))
        hps_tm_abort(d, HPS_TM_CAUSE_RO_WRITE);
    /* Reads from now on test the redo log's filter (hpsync/tm.h). */
    if (f->mode == HPS_TM_MODE_NOREC)
        f->mode = HPS_TM_MODE_NOREC_W;
    hps_tm_wset_put(&d->ws, w, v, mask);
}

static int norec_commit(hps_tm_desc_t *d)
{
    if (d->ws.n == 0)
        return HPS_TM_COMMITTED;     /* read-only: consistent at d->snap */
    for (;;) {
        uint64_t s = d->snap;
        /* Acquire-release: the write-back below stays after taking the
         * sequence, and our reads before it. */
        /* Sequentially consistent: against plain readers (above). */
        if (hps_cas_seq_cst(&g_seq.v, &s, s + 1))
            break;
        d->snap = validate(d);
    }
    if (hps_load_seq_cst(&hps_tm_norec_plain_st_) & HPS_TM_PLAIN_ARMED)
        wait_plain_readers(d);
    hps_tm_wset_write_back(&d->ws);
    /* Release: the write-back is visible before the even value. */
    hps_store_release(&g_seq.v, d->snap + 2);
    return HPS_TM_COMMITTED;
}

const hps_tm_ops_t hps_tm_norec_ops = {
    .size = sizeof(hps_tm_ops_t),
    .name = "norec",
    .instrument_reads = 1,
    .begin = norec_begin,
    .read = norec_read,
    .write = norec_write,
    .commit = norec_commit,
    .rollback = hps_tm_op_none,
    .end = hps_tm_op_none,
    .mode = HPS_TM_MODE_NOREC,
    .mode_ro = HPS_TM_MODE_NOREC_RO,
};

/* hybrid.c: hardware sections read it and advance it when they commit. */
hps_au64 *const hps_tm_norec_seq = &g_seq.v;
