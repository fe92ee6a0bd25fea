// SPDX-License-Identifier: MIT
/*
 * The adaptive lock's wake-up protocol, case by case, with the threads put
 * in the places the race needs rather than waiting for a scheduler to.
 *   adaptive_wake unclaim
 *
 * unclaim: an unlocker's claim of `waking` found nobody asleep, and while
 * it was on its way back another unlocker read the claim and skipped its
 * own wake-up, although a parker had gone to sleep on its hold in the
 * meantime.  The undo (hps_adaptive_unclaim_) must make that wake-up:
 * otherwise the parker, in a fenced epoch (an unbounded sleep), sleeps on a
 * free lock for good (threads of lockset.mutex.preload did, once in ~1000
 * runs, 8 threads on 2 CPUs).
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

static void case_unclaim(void)
{
    hps_adaptive_lock(&g_lock);
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, parker, NULL), 0);
    /* The parker spins, parks, sleeps 1 ms, fences the epoch, and then
     * sleeps without a limit: wait for the fence, then give it time to go
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
    nap_ms(20);
    HPS_CHECK(!hps_load_acquire(&g_got), "the unlock woke the parker although a claim was in flight "
              "(the case no longer sets up the race)");
    /* ... and the claim's undo must make it. */
    hps_adaptive_unclaim_(&g_lock);
    for (int i = 0; !hps_load_acquire(&g_got); i++) {
        HPS_CHECK(i < 2000, "the parker is still asleep on a free lock 2 s after the undo of a claim "
                  "that woke nobody (a lost wake-up)");
        nap_ms(1);
    }
    pthread_join(t, NULL);
    HPS_CHECK(hps_load_relaxed(&g_lock.waking) == 0, "waking left at %#x", (unsigned)hps_load_relaxed(&g_lock.waking));
}

static const hps_test_case_t cases[] = {
    { "unclaim", .run = case_unclaim },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("adaptive_wake", cases, 30, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
