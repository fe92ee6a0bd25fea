// SPDX-License-Identifier: MIT
/*
 * The public lock headers in C++: every one of hpsync/pr.h, lock.h,
 * lock/<algo>.h, lock/wait.h, lock/queued.h and elide.h compiles (this file
 * is built as C++11 and as C++20), and C++ threads share locks with the C
 * library's slow paths: per algorithm, 4 std::threads count under
 * hps_lock_lock, trylock and timedlock, and under the algorithm's own API;
 * a static hps_lock_t is an unlocked adaptive lock as in C.  Exits non-zero
 * with one line on failure.
 *   cxx_api
 */
#include "hpsync/pr.h"
#include "hpsync/lock/wait.h"
#include "hpsync/lock/queued.h"
#include "hpsync/lock/ttas.h"
#include "hpsync/lock/ticket.h"
#include "hpsync/lock/mcs.h"
#include "hpsync/lock/hemlock.h"
#include "hpsync/lock/adaptive.h"
#include "hpsync/lock.h"
#include "hpsync/elide.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

// The layout the C library and docs/api/lock.md state.
static_assert(sizeof(hps_lock_t) == 24 && alignof(hps_lock_t) == 8, "hps_lock_t layout");
static_assert(offsetof(hps_lock_t, algo) == 16, "hps_lock_t layout");
static_assert(sizeof(hps_mcs_t) == 16 && sizeof(hps_adaptive_t) == 16, "lock state layout");

[[noreturn]] static void fail(const char *what, const char *algo)
{
    std::fprintf(stderr, "cxx_api[%s]: FAIL %s\n", algo, what);
    std::_Exit(1);
}

static hps_lock_t zero_lock;     // zero bytes: an unlocked adaptive lock
static hps_mcs_t static_mcs = HPS_MCS_INITIALIZER;
static hps_elide_state_t elide_st = HPS_ELIDE_STATE_INIT;

static const int kThreads = 4, kIters = 20000;

// Run body(thread) on kThreads threads; the counter must come out exact.
template <typename F> static void count(const char *what, const char *algo, F body)
{
    long counter = 0;
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; t++)
        ts.emplace_back([&, t] {
            for (int i = 0; i < kIters; i++)
                body(t, i, counter);
        });
    for (auto &t : ts)
        t.join();
    if (counter != long(kThreads) * kIters)
        fail(what, algo);
}

int main()
{
    for (int a = HPS_LOCK_TTAS; a <= HPS_LOCK_ALGO_MAX; a++) {
        const char *name = hps_lock_algo_name(hps_lock_algo_t(a));
        hps_lock_t l;
        if (hps_lock_init(&l, hps_lock_algo_t(a)) != 0)
            fail("hps_lock_init", name);
        count("lost updates under hps_lock_lock / trylock / timedlock", name,
              [&](int t, int i, long &c) {
                  if (i % 3 == 1) {
                      while (hps_lock_trylock(&l) == EBUSY)
                          std::this_thread::yield();
                  } else if (i % 3 == 2) {
                      timespec ts;
                      clock_gettime(CLOCK_MONOTONIC, &ts);
                      ts.tv_sec += 10;
                      if (hps_lock_timedlock(&l, CLOCK_MONOTONIC, &ts) != 0)
                          fail("hps_lock_timedlock", name);
                  } else {
                      hps_lock_lock(&l);
                  }
                  c++;
                  hps_lock_unlock(&l);
                  (void)t;
              });
        if (hps_lock_is_locked(&l))
            fail("still locked at the end", name);
        timespec none = {0, 0};
        hps_lock_lock(&l);
        if (hps_lock_timedlock(&l, CLOCK_REALTIME, nullptr) != EINVAL ||
            hps_lock_timedlock(&l, CLOCK_REALTIME, &none) != ETIMEDOUT)
            fail("timedlock on a held lock", name);
        hps_lock_unlock(&l);
    }

    // The algorithms' own headers, from C++, on objects C++ set up.
    count("lost updates under hps_mcs_lock on a static MCS lock", "mcs", [](int, int, long &c) {
        hps_mcs_lock(&static_mcs);
        c++;
        hps_mcs_unlock(&static_mcs);
    });
    hps_hemlock_t hem;
    hps_hemlock_init(&hem);
    count("lost updates under hps_hemlock_lock", "hemlock", [&](int, int, long &c) {
        hps_hemlock_lock(&hem);
        c++;
        hps_hemlock_unlock(&hem);
    });
    count("lost updates under hps_elide_lock on a zeroed lock", "adaptive", [](int, int, long &c) {
        hps_elide_lock(&zero_lock, &elide_st);
        c++;
        hps_elide_unlock(&zero_lock, &elide_st);
    });
    hps_au64 n;
    hps_init(&n, 1);
    if (hps_faa_relaxed(&n, 2) != 1 || hps_load_acquire(&n) != 3)
        fail("pr.h atomics", "pr");
    std::puts("cxx_api: ok");
    return 0;
}
