// SPDX-License-Identifier: MIT
/*
 * The adaptive lock's wake-up protocol, case by case, with the threads put
 * in the places the race needs rather than waiting for a scheduler to.
 *   adaptive_wake unclaim|backstop
 *
 * The race: an unlocker's claim of `waking` found nobody asleep, and while
 * it was on its way back another unlocker read the claim and skipped its
 * own wake-up, although a parker had gone to sleep on its hold meanwhile.
 * The parker is in a fenced epoch (an "unbounded" sleep).  Threads of
 * lockset.mutex.preload slept for good that way, once in ~1000 runs, 8
 * threads on 2 CPUs.
 *   unclaim:  the claim's undo (hps_adaptive_unclaim_) must wake it; the
 *             backstop is set to a minute, so nothing else can.
 *   backstop: the claim is dropped without the undo's re-check (the case
 *             the undo cannot see: the skipping unlock's release still in
 *             its store buffer); the backstop (20 ms here) must end the
 *             sleep.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include "harness.h"
#include "hpsync/lock.h"
#include "hpsync/lock/adaptive.h"

static hps_adaptive_t g_lock = HPS_ADAPTIVE_INITIALIZER;
static hps_au32 g_got;

static void *parker(void *arg)
{
    (void)arg;
    hps_adaptive_lock(&g_lock);
    hps_store_release(&g_got, 1);
    hps_adaptive_unlock(&g_lock);
    return NULL;
}

static void nap_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

/* Set up the race; `undo` says how the claimer gives its claim back. */
static void lost_wakeup(long backstop_ns, int undo, long within_ms, const char *what)
{
    hps_adaptive_backstop_ns = backstop_ns;
    hps_adaptive_lock(&g_lock);
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, parker, NULL), 0);
    /* The parker spins, parks, sleeps 1 ms, fences the epoch, and then
     * sleeps to its backstop: wait for the fence, then give it time to go
     * back to sleep. */
    for (int i = 0; !(hps_load_acquire(&g_lock.parked) & HPS_ADAPTIVE_FENCED); i++) {
        HPS_CHECK(i < 5000, "the parker never fenced its epoch (parked %#x)",
                  (unsigned)hps_load_relaxed(&g_lock.parked));
        nap_ms(1);
    }
    nap_ms(50);
    HPS_CHECK(!hps_load_acquire(&g_got), "the parker took a held lock");
    /* Another unlocker's claim is in flight (its futex_wake, we pretend,
     * ran before the parker's sleep and found nobody) ... */
    hps_store_seq_cst(&g_lock.waking, hps_fork_tag);
    /* ... so this unlock skips its wake-up ... */
    hps_adaptive_unlock(&g_lock);
    if (undo) {
        nap_ms(20);
        HPS_CHECK(!hps_load_acquire(&g_got), "the unlock woke the parker although a claim was in "
                  "flight (the case no longer sets up the race)");
        /* ... and the claim's undo must make it. */
        hps_adaptive_unclaim_(&g_lock);
    } else {
        /* ... and the claim goes without the undo seeing the release. */
        hps_store_seq_cst(&g_lock.waking, 0);
    }
    for (long i = 0; !hps_load_acquire(&g_got); i++) {
        HPS_CHECK(i < within_ms, "the parker is still asleep on a free lock %ld ms after %s (a lost wake-up)",
                  within_ms, what);
        nap_ms(1);
    }
    pthread_join(t, NULL);
    HPS_CHECK(hps_load_relaxed(&g_lock.waking) == 0, "waking left at %#x",
              (unsigned)hps_load_relaxed(&g_lock.waking));
}

static void case_unclaim(void) { lost_wakeup(60000000000L, 1, 2000, "the undo of a claim that woke nobody"); }
static void case_backstop(void) { lost_wakeup(20000000L, 0, 2000, "the claim was dropped (backstop 20 ms)"); }

static const hps_test_case_t cases[] = {
    { "unclaim", .run = case_unclaim },
    { "backstop", .run = case_backstop },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("adaptive_wake", cases, 30, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
