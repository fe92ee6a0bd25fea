// SPDX-License-Identifier: MIT
/*
 * tm_test's cases for transaction-aware condition variables
 * (hpsync/tm_cond.h), run on every backend and, for the hand-offs, both
 * wait modes (HPSYNC_TM_COND=futex|spin).
 *
 * Lost wake-ups are caught by a progress monitor, not a timeout per wait:
 * the hand-offs alternate strictly (a slot is full or empty, and each side
 * waits for the other's change), so one lost wake-up stops a pair for
 * good; the main thread fails the test when no pair moves for 5 s.  The
 * waiters do busy work between reading the condition and waiting, which
 * widens the window in which a producer can commit and signal before the
 * waiter's snapshot: removing the validating read in cond.c makes
 * cond_handoff hang here under norec and stm.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tm_test.h"
#include "hpsync/tm_cond.h"

/* ---- strict hand-offs: pairs of producer and consumer ----------------------- */

#define PAIRS_MAX 4

typedef struct pair {
    uint64_t slot;                   /* 0 empty, else the next value */
    hps_tm_cond_t full, empty;
    uint64_t got;                    /* values the consumer took (outside TM) */
    hps_au64 progress;
    char pad[64];
} pair_t;

static pair_t g_pairs[PAIRS_MAX];
static unsigned g_npairs;
static unsigned long g_handoffs;
static hps_au32 g_abort_pct;         /* sections that abort once, in percent */

/* Maybe abort this attempt (the first one only, so the section finishes). */
static void maybe_abort(uint64_t *seed, volatile int *tried)
{
    uint32_t pct = hps_load_relaxed(&g_abort_pct);
    if (pct && !*tried && hps_xorshift64(seed) % 100 < pct) {
        *tried = 1;
        hps_tm_restart();
    }
}

static void *producer(void *arg)
{
    pair_t *p = &g_pairs[(uintptr_t)arg];
    uint64_t seed = (uintptr_t)arg * 7919 + 1;
    for (uint64_t v = 1; v <= g_handoffs; v++) {
        volatile int tried = 0;
        HPS_TM_BEGIN();
        while (HPS_TM_READ(&p->slot) != 0) {
            gap();
            hps_tm_cond_wait(&p->empty);
            maybe_abort(&seed, &tried);  /* an abort after a wait re-runs from the wait */
        }
        HPS_TM_WRITE(&p->slot, v);
        hps_tm_cond_signal(&p->full);
        maybe_abort(&seed, &tried);      /* drops the signal with the write */
        HPS_TM_END();
    }
    return NULL;
}

static void *consumer(void *arg)
{
    pair_t *p = &g_pairs[(uintptr_t)arg];
    uint64_t seed = (uintptr_t)arg * 104729 + 3;
    for (uint64_t want = 1; want <= g_handoffs; want++) {
        volatile int tried = 0;
        uint64_t v;
        HPS_TM_BEGIN();
        while ((v = HPS_TM_READ(&p->slot)) == 0) {
            gap();
            hps_tm_cond_wait(&p->full);
        }
        HPS_TM_WRITE(&p->slot, 0);
        hps_tm_cond_signal(&p->empty);
        maybe_abort(&seed, &tried);
        HPS_TM_END();
        if (v != want)
            hps_test_fail("pair %u: took %llu, expected %llu (a lost or repeated hand-off)",
                          (unsigned)(uintptr_t)arg, (unsigned long long)v, (unsigned long long)want);
        p->got++;
        hps_store_relaxed(&p->progress, want);
    }
    return NULL;
}

static hps_au32 g_done;

static void *pair_main(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, producer, arg), 0);
    consumer((void *)i);
    pthread_join(t, NULL);
    (void)hps_faa_acq_rel(&g_done, 1);
    return NULL;
}

/* Run g_npairs pairs (2 threads each) and fail on a stall of 5 s. */
static void run_pairs(void)
{
    pthread_t t[PAIRS_MAX];
    memset(g_pairs, 0, sizeof g_pairs);
    hps_store_relaxed(&g_done, 0);
    for (uintptr_t i = 0; i < g_npairs; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, pair_main, (void *)i), 0);
    uint64_t last[PAIRS_MAX] = { 0 }, since = hps_test_now_ns();
    while (hps_load_acquire(&g_done) < g_npairs) {
        usleep(20000);
        int moved = 0;
        for (unsigned i = 0; i < g_npairs; i++) {
            uint64_t p = hps_load_relaxed(&g_pairs[i].progress);
            if (p != g_handoffs && p == last[i] && hps_test_now_ns() - since > 5000000000ull)
                hps_test_fail("pair %u stuck at hand-off %llu of %lu for 5 s: a lost wake-up "
                              "(mode %s)", i, (unsigned long long)p, g_handoffs, hps_tm_cond_mode());
            moved |= p != last[i];
            last[i] = p;
        }
        if (moved)
            since = hps_test_now_ns();
    }
    for (unsigned i = 0; i < g_npairs; i++) {
        pthread_join(t[i], NULL);
        HPS_CHECK(g_pairs[i].got == g_handoffs && g_pairs[i].slot == 0,
                  "pair %u: %llu hand-offs, slot %llu", i, (unsigned long long)g_pairs[i].got,
                  (unsigned long long)g_pairs[i].slot);
        /* Everyone left: the wait accounting returned to zero (no drift). */
        HPS_CHECK(hps_load_acquire(&g_pairs[i].full.waiters) == 0 &&
                  hps_load_acquire(&g_pairs[i].empty.waiters) == 0,
                  "pair %u: waiters words %#llx %#llx after the run", i,
                  (unsigned long long)hps_load_acquire(&g_pairs[i].full.waiters),
                  (unsigned long long)hps_load_acquire(&g_pairs[i].empty.waiters));
    }
    printf("%s: %u pairs x %lu hand-offs, mode %s\n", hps_test_name(), g_npairs, g_handoffs,
           hps_tm_cond_mode());
}

/* 1 to 4 pairs (2 to 8 threads, oversubscribed from 2 pairs on). */
void case_cond_handoff(void)
{
    unsigned long total = g_iters * 15;          /* 60 000 by default */
    for (g_npairs = 1; g_npairs <= PAIRS_MAX; g_npairs *= 2) {
        g_handoffs = total / g_npairs;
        run_pairs();
    }
}

/* The same with a third of the sections aborting once, before and after
 * waits, with signals raised in the aborted attempts. */
void case_cond_stress(void)
{
    hps_store_relaxed(&g_abort_pct, 33);
    g_npairs = PAIRS_MAX;
    g_handoffs = g_iters * 8;
    run_pairs();
    hps_store_relaxed(&g_abort_pct, 0);
}

/* ---- what a wait does to its section ----------------------------------------- */

static hps_tm_cond_t g_c = HPS_TM_COND_INITIALIZER;
static uint64_t g_before, g_after;
static hps_au32 g_seen;

static struct timespec in_ms(long ms)
{
    return hps_test_deadline(CLOCK_MONOTONIC, ms * 1000000LL);
}

/* Sees the waiter's pre-wait write (committed by the wait), then signals. */
static void *observer(void *arg)
{
    (void)arg;
    uint64_t x;
    for (;;) {
        HPS_TM_BEGIN();
        x = HPS_TM_READ(&g_before);
        HPS_TM_END();
        if (x == 1)
            break;
        usleep(1000);
    }
    hps_store_release(&g_seen, 1);
    hps_tm_cond_signal(&g_c);                    /* outside a section: at once */
    return NULL;
}

/* A wait commits the work before it, resumes at the same depth, and an
 * abort after it re-runs from the wait only; timed waits time out with the
 * section resumed. */
void case_cond_resume(void)
{
    static unsigned pre, post;                   /* runs of each part: not rolled back */
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, observer, NULL), 0);
    int r = -1;
    HPS_TM_BEGIN();
    pre++;
    HPS_TM_WRITE(&g_before, 1);
    HPS_TM_BEGIN();                              /* nested: depth 2 */
    while (!hps_load_acquire(&g_seen)) {
        struct timespec dl = in_ms(10000);
        r = hps_tm_cond_timedwait(&g_c, CLOCK_MONOTONIC, &dl);
    }
    post++;
    HPS_CHECK(hps_tm_in_section(), "not in a section after the wait");
    HPS_TM_WRITE(&g_after, HPS_TM_READ(&g_after) + 1);
    if (post == 1)
        hps_tm_restart();                        /* back to the wait, not to BEGIN */
    HPS_TM_END();
    HPS_CHECK(hps_tm_in_section(), "depth lost: out of the section after the inner END");
    HPS_TM_END();
    pthread_join(t, NULL);
    HPS_CHECK(!hps_tm_in_section(), "still in a section after the outer END");
    HPS_CHECK(r == 0, "woken wait returned %d", r);
    HPS_CHECK(pre == 1 && post == 2, "pre-wait part ran %u times, post-wait part %u (want 1, 2)", pre, post);
    HPS_CHECK(g_after == 1, "post-wait write applied %llu times", (unsigned long long)g_after);

    /* Timed out, in a section and outside one; the section goes on. */
    uint64_t t0 = hps_test_now_ns();
    HPS_TM_BEGIN();
    struct timespec dl = in_ms(50);
    r = hps_tm_cond_timedwait(&g_c, CLOCK_MONOTONIC, &dl);
    HPS_TM_WRITE(&g_after, 7);
    HPS_TM_END();
    HPS_CHECK(r == ETIMEDOUT, "timed wait in a section returned %d, expected ETIMEDOUT", r);
    HPS_CHECK(g_after == 7, "the section after a timed-out wait did not commit");
    HPS_CHECK(hps_test_now_ns() - t0 >= 45000000ull, "timed out early");
    struct timespec rt = hps_test_deadline(CLOCK_REALTIME, 20000000LL);
    HPS_CHECK_RC("timedwait (realtime, outside)", hps_tm_cond_timedwait(&g_c, CLOCK_REALTIME, &rt), ETIMEDOUT);
    struct timespec bad = { 0, 2000000000L };
    HPS_CHECK_RC("timedwait (bad deadline)", hps_tm_cond_timedwait(&g_c, CLOCK_MONOTONIC, &bad), EINVAL);
    HPS_CHECK_RC("timedwait (bad clock)", hps_tm_cond_timedwait(&g_c, CLOCK_PROCESS_CPUTIME_ID, &rt), EINVAL);
}

/* ---- signals from aborted sections -------------------------------------------- */

static hps_au32 g_woken, g_waiting;

/* cond.c's accounting: waiters (low half) minus those counted woken (high). */
static int64_t waiters_unwoken(uint64_t w)
{
    return (int64_t)(uint32_t)w - (int64_t)(int32_t)(uint32_t)(w >> 32);
}
static hps_tm_cond_t g_quiet = HPS_TM_COND_INITIALIZER;

static void *sleeper(void *arg)
{
    long ms = (long)(uintptr_t)arg;
    hps_store_release(&g_waiting, 1);
    struct timespec dl = in_ms(ms);
    int r = hps_tm_cond_timedwait(&g_quiet, CLOCK_MONOTONIC, &dl);
    if (r == 0)
        hps_store_release(&g_woken, 1);
    return NULL;
}

/* Start a sleeper and give it time to take its snapshot and wait. */
static void start_sleeper(pthread_t *t, long ms)
{
    hps_store_relaxed(&g_waiting, 0);
    hps_store_relaxed(&g_woken, 0);
    HPS_CHECK_RC("pthread_create", pthread_create(t, NULL, sleeper, (void *)(uintptr_t)ms), 0);
    while (!hps_load_acquire(&g_waiting))
        usleep(1000);
    usleep(100000);
}

/* A signal or broadcast raised in an attempt that aborts never happens;
 * the one of the attempt that commits does. */
void case_cond_abort_signal(void)
{
    pthread_t t;
    start_sleeper(&t, 600);
    uint32_t seq0 = hps_load_relaxed(&g_quiet.seq);
    for (int i = 0; i < 100; i++) {
        volatile int attempt = 0;
        HPS_TM_BEGIN();
        HPS_TM_WRITE(&g_x, HPS_TM_READ(&g_x) + 1);
        if (attempt++ == 0) {
            hps_tm_cond_signal(&g_quiet);
            hps_tm_cond_broadcast(&g_quiet);
            hps_tm_restart();
        }
        HPS_TM_END();
    }
    pthread_join(t, NULL);
    HPS_CHECK(!hps_load_acquire(&g_woken), "a signal from an aborted section woke a waiter");
    HPS_CHECK(hps_load_relaxed(&g_quiet.seq) == seq0, "aborted signals moved the sequence");
    HPS_CHECK(g_x == 100, "the sections committed %llu times, want 100", (unsigned long long)g_x);
    /* The committed attempt's signal does wake. */
    start_sleeper(&t, 5000);
    volatile int attempt = 0;
    HPS_TM_BEGIN();
    HPS_TM_WRITE(&g_x, HPS_TM_READ(&g_x) + 1);
    hps_tm_cond_signal(&g_quiet);
    if (attempt++ == 0)
        hps_tm_restart();
    HPS_TM_END();
    /* The signal ran at the commit: the sleeper (asleep for 100 ms) was
     * counted, the wake took it off the queue and the waker counted it as
     * woken, so a further signal before it is back needs no system call. */
    uint64_t w = hps_load_acquire(&g_quiet.waiters);
    HPS_CHECK(!strcmp(hps_tm_cond_mode(), "spin") || waiters_unwoken(w) == 0,
              "after the wake: %u waiters, %d counted woken", (unsigned)w, (int)(w >> 32));
    pthread_join(t, NULL);
    HPS_CHECK(hps_load_acquire(&g_woken), "the committed section's signal woke nobody");
    HPS_CHECK(hps_load_acquire(&g_quiet.waiters) == 0, "waiters word %#llx after the sleeper left",
              (unsigned long long)hps_load_acquire(&g_quiet.waiters));
    HPS_CHECK(hps_load_relaxed(&g_quiet.seq) == seq0 + 1, "sequence moved %u times, want 1",
              hps_load_relaxed(&g_quiet.seq) - seq0);
}
