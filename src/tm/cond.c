// SPDX-License-Identifier: MIT
/*
 * Transaction-aware condition variables (hpsync/tm_cond.h).
 *
 * The condvar is a sequence word that every signal and broadcast moves, and
 * that waiters sleep on (futex) or spin on.  A signal inside a section is a
 * commit action (hps_tm_on_commit): it happens after the section's writes
 * are visible, and never if the section aborts.
 *
 * A wait inside a section must not lose a wake-up: the section read its
 * condition (say "queue empty") at some point, and a producer whose commit
 * makes the condition true moves the sequence only after that commit.  So
 * the waiter
 *   1. loads the sequence (its snapshot), then
 *   2. proves its section still consistent *after* the snapshot, then
 *   3. commits, then
 *   4. sleeps while the sequence still equals the snapshot.
 * A producer that committed before step 2's moment has written something
 * the section read (else the condition was not the section's to wait for),
 * so step 2 or the commit aborts the section, which re-runs and sees the
 * new condition.  A producer that commits after that moment moves the
 * sequence after the snapshot, so step 4 does not sleep through it.
 *
 * Step 2 is needed because a commit alone does not always validate: a
 * section that wrote nothing commits without looking at memory (norec and
 * stm: consistent at its snapshot, possibly long ago), and a read-only one
 * may keep no read log at all.  It is one read through the TM of a word
 * nobody writes, after the snapshot: under norec and stm every read first
 * checks that the global clock still equals the section's snapshot, and
 * when it moved revalidates the whole read set at the present (or, with no
 * read log, restarts the section).  Sections that exclude writers by a lock
 * (sgl, solo, emulated hardware sections, irrevocable ones) are consistent
 * by construction, and a real hardware transaction has the sequence in its
 * read set: a signal before its commit aborts it.
 *
 * After the wait the section resumes: the macro takes a new checkpoint at
 * the call site and calls back here to begin a section at the saved depth.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "hpsync/tm_cond.h"
#include "../common/env.h"
#include "../common/envparse.h"
#include "../prim/futex.h"

/* Read (through the TM) by a waiter to validate its section; never written. */
static uint64_t g_probe;

static uint32_t g_spin;              /* HPSYNC_TM_COND=spin */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void mode_init(void)
{
    const char *v = hps_settings()->tm_cond;
    if (!strcmp(v, "spin"))
        g_spin = 1;
    else if (*v && strcmp(v, "futex") != 0)
        hps_env_bad_value("HPSYNC_TM_COND", v, "is not futex or spin", "futex");
}

static inline int spin_mode(void)
{
    pthread_once(&g_once, mode_init);
    return (int)g_spin;
}

HPS_EXPORT const char *hps_tm_cond_mode(void)
{
    return spin_mode() ? "spin" : "futex";
}

HPS_EXPORT void hps_tm_cond_init(hps_tm_cond_t *c)
{
    hps_init(&c->seq, 0);
    hps_init(&c->waiters, 0);
}

/* ---- signals -------------------------------------------------------------- */

/*
 * Who may need a futex wake.  `waiters` packs two counts into one word:
 *   W (low half)  threads between entering sleep_on and leaving it;
 *   P (high half) threads a futex wake took off the kernel's queue (the wait
 *                 returned 0) that have not left sleep_on yet, as far as the
 *                 wakers have added them: a waker adds what FUTEX_WAKE
 *                 returned after the call, a woken thread subtracts itself
 *                 when it leaves, so P may be briefly negative.
 * Only a wake takes a thread off the queue (nothing else futex-wakes `seq`,
 * and the kernel reports a thread that a wake dequeued as woken even if its
 * timeout or a signal came too), so P never exceeds the number of woken
 * threads still counted in W, and W - P is at least the number of threads
 * counted in W that no wake has reached: asleep, about to sleep, or leaving
 * without a wake (EAGAIN, timeout, EINTR).  A signal with W - P <= 0 has
 * nobody to wake and skips the system call.  Without P (the old rule,
 * "W != 0"), every signal while a woken thread was still on its way out
 * made another, useless, FUTEX_WAKE: in the pipeline workload, one per push.
 */
#define WAITER   ((uint64_t)1)
#define WOKEN    ((uint64_t)1 << 32)

static int64_t unwoken(uint64_t w)
{
    return (int64_t)(uint32_t)w - (int64_t)(int32_t)(uint32_t)(w >> 32);
}

static void wake(hps_tm_cond_t *c, int n)
{
    /* Sequentially consistent, both: the increment and the load of waiters
     * pair with a waiter's increment of waiters and its futex's read of the
     * sequence (Dekker), so either we see the waiter or it sees the new
     * sequence and does not sleep.  A waiter we see is unwoken, or woken
     * and counted in P by its waker or not yet (then W - P overstates, and
     * the extra wake finds nobody: harmless). */
    (void)hps_faa_seq_cst(&c->seq, 1);
    if (unwoken(hps_load_seq_cst(&c->waiters)) <= 0)
        return;
    int r = hps_futex_wake(&c->seq, n, 0);
    if (r > 0)
        (void)hps_faa_relaxed(&c->waiters, (uint64_t)r * WOKEN);
}

static void signal_now(void *c) { wake(c, 1); }
static void broadcast_now(void *c) { wake(c, INT_MAX); }

HPS_EXPORT void hps_tm_cond_signal(hps_tm_cond_t *c)
{
    hps_tm_on_commit(signal_now, c);
}

HPS_EXPORT void hps_tm_cond_broadcast(hps_tm_cond_t *c)
{
    hps_tm_on_commit(broadcast_now, c);
}

/* ---- waits ---------------------------------------------------------------- */

static int deadline_ok(clockid_t clock, const struct timespec *abs)
{
    return (clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC) &&
           (!abs || (abs->tv_sec >= 0 && abs->tv_nsec >= 0 && abs->tv_nsec < 1000000000L));
}

static int passed(clockid_t clock, const struct timespec *abs)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return now.tv_sec > abs->tv_sec || (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
}

/* The busy-wait variant: poll with PAUSE, about 50 us (6 us when threads
 * outnumber CPUs: the signaler may be waiting for this one's), then let
 * others run (hps_tm_wait_long: a yield, or a nap once yields come back
 * late).  Until 2026-11-28 it yielded after 256 polls whatever
 * happened: beside two busy processes every hand-off of
 * tm.cond_handoff_spin then took about a time slice and the test ran out
 * of time (over 90 s; 1-2 s quiet). */
static int spin_wait(hps_tm_cond_t *c, uint32_t snap, clockid_t clock, const struct timespec *abs)
{
    for (uint32_t n = 0;; n++) {
        /* Acquire: the signaler's commit is visible once its increment is. */
        if (hps_load_acquire(&c->seq) != snap)
            return 0;
        if (abs && (n & 63) == 0 && passed(clock, abs))
            return ETIMEDOUT;
        if (n < 256 || (n < 2048 && !hps_tm_crowded()))
            hps_cpu_relax();
        else
            hps_tm_wait_long();
    }
}

/* Sleep while the sequence equals snap: 0 (woken, or it moved), ETIMEDOUT. */
static int sleep_on(hps_tm_cond_t *c, uint32_t snap, clockid_t clock, const struct timespec *abs)
{
    if (spin_mode())
        return spin_wait(c, snap, clock, abs);
    /* Sequentially consistent: see wake(). */
    (void)hps_faa_seq_cst(&c->waiters, WAITER);
    /* A signal that came since the snapshot: leave without the system call
     * (the kernel would return EAGAIN; in a busy hand-off most waits end
     * here).  Sequentially consistent: ordered after our increment, like
     * the futex's own read. */
    int r = hps_load_seq_cst(&c->seq) != snap ? EAGAIN
                                               : hps_futex_wait(&c->seq, snap, clock, abs, 0);
    /* Leave W, and P too if a wake took us off the queue (0: nothing else
     * returns 0, see above).  Both at once: a signaler must never see us
     * gone from W but still in P, which would hide an unwoken sleeper. */
    (void)hps_fas_release(&c->waiters, r == 0 ? WAITER + WOKEN : WAITER);
    /* EAGAIN (it moved before we slept) and EINTR count as wake-ups. */
    return r == ETIMEDOUT ? ETIMEDOUT : 0;
}

HPS_EXPORT hps_tm_fast_t *hps_tm_cond_enter_(hps_tm_cond_t *c, clockid_t clock,
                                             const struct timespec *abs, int *result)
{
    if (!deadline_ok(clock, abs)) {
        *result = EINVAL;
        return NULL;
    }
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || d->fast.depth == 0) {
        /* Outside a section: wait for a signal raised after this call. */
        *result = sleep_on(c, hps_load_acquire(&c->seq), clock, abs);
        return NULL;
    }
    /* 1. The snapshot.  Acquire: the validating read below comes after it. */
    uint32_t snap = hps_load_acquire(&c->seq);
    /* 2. Validate the section now (may abort it: nothing is done yet). */
    (void)hps_tm_read_u64(&g_probe);
    /* 3. Commit (may abort too: the checkpoint in force, and what it
     * resumes, must stay those of the section being committed). */
    uint32_t depth = d->fast.depth, ro = d->ro;
    d->fast.depth = 0;
    hps_tm_commit_(&d->fast);
    d->cond_depth = depth;
    d->cond_ro = ro;
    /* 4. Sleep. */
    *result = sleep_on(c, snap, clock, abs);
    return &d->fast;
}

HPS_EXPORT void hps_tm_cond_resume_(hps_tm_fast_t *f)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    uint32_t depth = d->cond_depth;
    hps_tm_begin_(f, (int)d->cond_ro);
    f->depth = depth;
}
