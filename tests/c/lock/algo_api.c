// SPDX-License-Identifier: MIT
/*
 * Direct tests of each algorithm's own API (hps_<algo>_init, _lock,
 * _trylock, _timedlock, _unlock, _is_locked, HPS_<ALGO>_INITIALIZER), not
 * through the hps_lock_t dispatcher.  One table-driven harness: the table is
 * generated from hpsync/lock/algorithms.def, so a new algorithm is tested by
 * adding its row there.
 *
 *   algo_api <case> <algo> [threads|Nx] [iterations]
 *
 * Cases:
 *   basic     zeroed bytes and the static initializer are a free lock; trylock
 *             succeeds when free and fails when held (also for the holder);
 *             is_locked follows; init resets a used lock
 *   other     trylock from another thread fails while held, succeeds after
 *   timed     timedlock: 0 when free; ETIMEDOUT when held, not before the
 *             deadline, on both clocks; EINVAL for a bad tv_nsec only when it
 *             would wait; a long wait ends with 0 soon after the release
 *   blocking  lock() waits (past spinning: yields, naps or parks) while a
 *             holder keeps the lock 50 ms, and gets it after the release
 *   stress    N threads mix lock, trylock and timedlock around a non-atomic
 *             counter (tests/c/common/harness.h), counted exactly; then the
 *             algorithm's waiting room must be empty again
 *   nested    threads hold four locks of the algorithm at once (queue nodes
 *             and per-thread records of several locks alive together)
 *   churn     waves of short-lived threads, each exiting right after its
 *             last unlock (deferred hand-over work must survive thread exit)
 *
 * Every run arms a watchdog; the oversubscribed cases (4x: eight threads on
 * two CPUs here) must finish under it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "hpsync/lock.h"

typedef struct algo {
    const char *name;
    size_t size;                         /* sizeof(hps_<name>_t) */
    const void *initializer;             /* a static HPS_<NAME>_INITIALIZER object */
    void (*init)(void *l);
    void (*lock)(void *l);
    bool (*trylock)(void *l);
    int (*timedlock)(void *l, clockid_t clock, const struct timespec *abstime);
    void (*unlock)(void *l);
    bool (*is_locked)(void *l);
} algo_t;

/* Typed shims over each algorithm's inline API, and its table row. */
#define X(name, NAME, alias, doc)                                                        \
    static const hps_##name##_t name##_static_ = HPS_##NAME##_INITIALIZER;              \
    static void name##_init_(void *l) { hps_##name##_init(l); }                         \
    static void name##_lock_(void *l) { hps_##name##_lock(l); }                         \
    static bool name##_trylock_(void *l) { return hps_##name##_trylock(l); }            \
    static int name##_timedlock_(void *l, clockid_t c, const struct timespec *t)        \
    {                                                                                   \
        return hps_##name##_timedlock(l, c, t);                                         \
    }                                                                                   \
    static void name##_unlock_(void *l) { hps_##name##_unlock(l); }                     \
    static bool name##_is_locked_(void *l) { return hps_##name##_is_locked(l); }
#include "hpsync/lock/algorithms.def"
#undef X

static const algo_t k_algos[] = {
#define X(name, NAME, alias, doc)                                                        \
    { #name, sizeof(hps_##name##_t), &name##_static_, name##_init_, name##_lock_,       \
      name##_trylock_, name##_timedlock_, name##_unlock_, name##_is_locked_ },
#include "hpsync/lock/algorithms.def"
#undef X
};

/*
 * Per-algorithm extras: once no thread uses the lock, its waiting room is
 * empty again.  A queue that kept a stale entry (an MCS node from a dead
 * stack frame, a ticket never served) would make the next contended locker
 * wait for ever.  Algorithms without an entry have no room to check.
 */
static void ticket_quiet(void *p)
{
    hps_ticket_t *l = p;
    uint32_t next = hps_load_relaxed(&l->next), owner = hps_load_relaxed(&l->owner);
    HPS_CHECK(next == owner, "tickets handed out (%u) != tickets served (%u) after all threads left",
              next, owner);
}
static void mcs_quiet(void *p)
{
    HPS_CHECK(hps_load_relaxed(&((hps_mcs_t *)p)->tail) == NULL, "MCS tail still set after all threads left");
}
static void hemlock_quiet(void *p)
{
    HPS_CHECK(hps_load_relaxed(&((hps_hemlock_t *)p)->tail) == NULL,
              "Hemlock tail still set after all threads left");
}
static void adaptive_quiet(void *p)
{
    uint32_t parked = hps_load_relaxed(&((hps_adaptive_t *)p)->parked) & ~HPS_ADAPTIVE_FENCED;
    HPS_CHECK(parked == 0, "%u threads still counted as parked after all threads left", parked);
    /* A wake-up claim left behind would make every later unlock skip its
     * wake-up (src/lock/adaptive.c): each woken thread gives its back. */
    uint32_t waking = hps_load_relaxed(&((hps_adaptive_t *)p)->waking);
    HPS_CHECK(waking == 0, "a wake-up still marked in flight (%#x) after all threads left", waking);
}
static const struct extra {
    const char *name;
    void (*quiet)(void *l);
} k_extras[] = {
    { "ticket", ticket_quiet }, { "mcs", mcs_quiet }, { "hemlock", hemlock_quiet },
    { "adaptive", adaptive_quiet },
};

static const algo_t *A;                  /* the algorithm under test */

static void check_quiet(void *l)
{
    HPS_CHECK(!A->is_locked(l), "lock still held after every thread unlocked");
    for (size_t i = 0; i < sizeof k_extras / sizeof k_extras[0]; i++)
        if (strcmp(k_extras[i].name, A->name) == 0)
            k_extras[i].quiet(l);
}

/* A lock object of the algorithm, alone on its cache lines. */
static void *new_lock(void)
{
    void *l = NULL;
    HPS_CHECK(posix_memalign(&l, 128, (A->size + 127) / 128 * 128) == 0, "posix_memalign failed");
    A->init(l);
    return l;
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    HPS_CHECK(pthread_create(t, NULL, fn, arg) == 0, "pthread_create failed");
}

static void join(pthread_t t)
{
    HPS_CHECK(pthread_join(t, NULL) == 0, "pthread_join failed");
}

/* ---- basic ---------------------------------------------------------------- */

static void free_then_held(void *l, const char *what)
{
    HPS_CHECK(!A->is_locked(l), "%s reads as locked", what);
    HPS_CHECK(A->trylock(l), "trylock of %s failed", what);
    HPS_CHECK(A->is_locked(l), "is_locked false after trylock of %s", what);
    HPS_CHECK(!A->trylock(l), "trylock of %s succeeded while held", what);
    A->unlock(l);
    HPS_CHECK(!A->is_locked(l), "%s reads as locked after unlock", what);
}

static void case_basic(hps_stress_cfg_t *cfg)
{
    unsigned char zero[256] __attribute__((aligned(64)));
    HPS_CHECK(A->size <= sizeof zero, "lock of %zu bytes: enlarge the test's buffer", A->size);
    memset(zero, 0, sizeof zero);
    free_then_held(zero, "an all-zero lock");
    unsigned char stat[256] __attribute__((aligned(64)));
    memcpy(stat, A->initializer, A->size);
    free_then_held(stat, "a statically initialised lock");

    void *l = new_lock();
    free_then_held(l, "an initialised lock");
    for (int i = 0; i < 1000; i++) {          /* lock() and trylock() alternate */
        if (i & 1)
            A->lock(l);
        else
            HPS_CHECK(A->trylock(l), "uncontended trylock %d failed", i);
        HPS_CHECK(!A->trylock(l), "trylock succeeded on a held lock (round %d)", i);
        A->unlock(l);
    }
    A->lock(l);
    A->init(l);                               /* init makes a lock free again */
    free_then_held(l, "a re-initialised lock");
    check_quiet(l);
    free(l);
}

/* ---- other: trylock from another thread -------------------------------------- */

static void *try_once(void *l)
{
    return (void *)(uintptr_t)(A->trylock(l) ? 1 : 2);
}

static int try_from_thread(void *l)
{
    pthread_t t;
    void *r;
    start(&t, try_once, l);
    HPS_CHECK(pthread_join(t, &r) == 0, "pthread_join failed");
    return (int)(uintptr_t)r;
}

static void case_other(hps_stress_cfg_t *cfg)
{
    void *l = new_lock();
    A->lock(l);
    HPS_CHECK(try_from_thread(l) == 2, "another thread's trylock succeeded while the lock was held");
    A->unlock(l);
    HPS_CHECK(try_from_thread(l) == 1, "another thread's trylock of a free lock failed");
    /* That thread took the lock and exited holding it: it is still held. */
    HPS_CHECK(A->is_locked(l) && !A->trylock(l), "a lock taken by another thread reads as free");
    A->unlock(l);
    check_quiet(l);
    free(l);
}

/* ---- timed ------------------------------------------------------------------------- */

struct holder {
    void *lock;
    long hold_ms;
    hps_au32 taken, may_go;
};

/* Take the lock, say so, hold it until told to go (or hold_ms), release. */
static void *hold(void *arg)
{
    struct holder *h = arg;
    A->lock(h->lock);
    hps_store_release(&h->taken, 1);
    if (h->hold_ms > 0) {
        struct timespec d = { h->hold_ms / 1000, (h->hold_ms % 1000) * 1000000L };
        nanosleep(&d, NULL);
    } else {
        while (!hps_load_acquire(&h->may_go))
            sched_yield();
    }
    A->unlock(h->lock);
    return NULL;
}

static void wait_taken(struct holder *h)
{
    while (!hps_load_acquire(&h->taken))
        sched_yield();
}

static void case_timed(hps_stress_cfg_t *cfg)
{
    static const clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    void *l = new_lock();
    for (int c = 0; c < 2; c++) {
        struct timespec d = hps_test_deadline(clocks[c], 1000000000LL);
        HPS_CHECK_RC("timedlock of a free lock", A->timedlock(l, clocks[c], &d), 0);
        HPS_CHECK(A->is_locked(l), "is_locked false after a timedlock");
        A->unlock(l);
    }
    struct timespec bad = hps_test_deadline(CLOCK_MONOTONIC, 0);
    bad.tv_nsec = 1000000000L;
    HPS_CHECK_RC("timedlock of a free lock with tv_nsec = 1e9 (not checked: no wait)",
                 A->timedlock(l, CLOCK_MONOTONIC, &bad), 0);
    A->unlock(l);

    struct holder h = { .lock = l };
    pthread_t t;
    start(&t, hold, &h);
    wait_taken(&h);
    HPS_CHECK_RC("timedlock of a held lock with tv_nsec = 1e9", A->timedlock(l, CLOCK_MONOTONIC, &bad), EINVAL);
    bad.tv_nsec = -1;
    HPS_CHECK_RC("timedlock of a held lock with tv_nsec = -1", A->timedlock(l, CLOCK_MONOTONIC, &bad), EINVAL);
    struct timespec past = hps_test_deadline(CLOCK_MONOTONIC, -1000000LL);
    HPS_CHECK_RC("timedlock of a held lock, deadline passed", A->timedlock(l, CLOCK_MONOTONIC, &past), ETIMEDOUT);
    for (int c = 0; c < 2; c++) {
        uint64_t t0 = hps_test_now_ns();
        struct timespec d = hps_test_deadline(clocks[c], 20000000LL);
        HPS_CHECK_RC("timedlock of a held lock, 20 ms", A->timedlock(l, clocks[c], &d), ETIMEDOUT);
        uint64_t waited = hps_test_now_ns() - t0;
        /* Not before the deadline (1 ms of slack for the clocks' steps). */
        HPS_CHECK(waited >= 19000000u, "timedlock gave ETIMEDOUT after %.1f ms of a 20 ms wait",
                  (double)waited / 1e6);
    }
    HPS_CHECK(A->is_locked(l), "a timed-out timedlock released the holder's lock");
    /* A long timed wait ends soon after the release, with the lock. */
    hps_store_release(&h.may_go, 1);
    uint64_t t0 = hps_test_now_ns();
    struct timespec d = hps_test_deadline(CLOCK_MONOTONIC, 10000000000LL);
    HPS_CHECK_RC("timedlock while the holder releases (10 s deadline)",
                 A->timedlock(l, CLOCK_MONOTONIC, &d), 0);
    HPS_CHECK(hps_test_now_ns() - t0 < 5000000000u, "timedlock took over 5 s to see a release");
    A->unlock(l);
    join(t);
    check_quiet(l);
    free(l);
}

/* ---- blocking --------------------------------------------------------------- */

static void case_blocking(hps_stress_cfg_t *cfg)
{
    void *l = new_lock();
    struct holder h = { .lock = l, .hold_ms = 50 };
    pthread_t t;
    uint64_t t0 = hps_test_now_ns();
    start(&t, hold, &h);
    wait_taken(&h);
    A->lock(l);
    uint64_t waited = hps_test_now_ns() - t0;
    /* The holder slept 50 ms after taking the lock; 45 for the clocks' steps. */
    HPS_CHECK(waited >= 45000000u, "lock() returned after %.1f ms while another thread held it 50 ms",
              (double)waited / 1e6);
    A->unlock(l);
    join(t);
    check_quiet(l);
    free(l);
}

/* ---- stress: the shared harness over the algorithm's own calls ---------------- */

static int s_lock(void *l) { A->lock(l); return 0; }
static int s_trylock(void *l) { return A->trylock(l) ? 0 : EBUSY; }
static int s_unlock(void *l) { A->unlock(l); return 0; }
static void s_in_cs(void *l)
{
    HPS_CHECK(A->is_locked(l), "is_locked false inside the critical section");
    HPS_CHECK(!A->trylock(l), "the holder's trylock succeeded inside the critical section");
}

static void case_stress(hps_stress_cfg_t *cfg)
{
    hps_stress_ops_t ops = {
        .size = sizeof ops, .name = hps_test_name(), .lock = s_lock, .trylock = s_trylock,
        .timedlock = A->timedlock, .unlock = s_unlock, .in_cs = s_in_cs,
        .clocks = { CLOCK_MONOTONIC, CLOCK_REALTIME },
    };
    cfg->ops = &ops;
    cfg->lock = new_lock();
    hps_stress_run(cfg);
    check_quiet(cfg->lock);
    free(cfg->lock);
}

/* ---- nested: several locks held at once ----------------------------------------- */

enum { NEST = 4 };
static void *g_nest[NEST];
static unsigned long g_nest_count[NEST], g_nest_iters;

static void *nest_worker(void *arg)
{
    unsigned long seed = (uintptr_t)arg;
    for (unsigned long i = 0; i < g_nest_iters; i++) {
        /* Always in index order (no deadlock); a varying first lock so
         * threads meet on every lock, holding 1 to 4 at once. */
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int first = (int)(seed >> 62);
        for (int k = first; k < NEST; k++)
            A->lock(g_nest[k]);
        for (int k = first; k < NEST; k++)
            g_nest_count[k]++;
        for (int k = NEST - 1; k >= first; k--)
            A->unlock(g_nest[k]);
    }
    return NULL;
}

static void case_nested(hps_stress_cfg_t *cfg)
{
    unsigned threads = cfg->threads;
    unsigned long iters = cfg->iters;
    for (int k = 0; k < NEST; k++)
        g_nest[k] = new_lock();
    g_nest_iters = iters;
    pthread_t t[256];
    HPS_CHECK(threads <= 256, "at most 256 threads");
    for (unsigned i = 0; i < threads; i++)
        start(&t[i], nest_worker, (void *)(uintptr_t)(i * 7919 + 1));
    for (unsigned i = 0; i < threads; i++)
        join(t[i]);
    /* Lock k was taken whenever first <= k: compare with a replay of the seeds. */
    unsigned long want[NEST] = { 0 };
    for (unsigned i = 0; i < threads; i++) {
        unsigned long seed = i * 7919 + 1;
        for (unsigned long n = 0; n < iters; n++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            for (int k = (int)(seed >> 62); k < NEST; k++)
                want[k]++;
        }
    }
    for (int k = 0; k < NEST; k++) {
        HPS_CHECK(g_nest_count[k] == want[k], "lock %d: counter %lu, expected %lu (lost updates)",
                  k, g_nest_count[k], want[k]);
        check_quiet(g_nest[k]);
        free(g_nest[k]);
    }
}

/* ---- churn: threads that exit right after their last unlock --------------------- */

static void *g_churn_lock;
static unsigned long g_churn_count;

static void *churn_worker(void *arg)
{
    for (int i = 0; i < 4; i++) {
        A->lock(g_churn_lock);
        g_churn_count++;
        A->unlock(g_churn_lock);
    }
    return NULL;
}

static void case_churn(hps_stress_cfg_t *cfg)
{
    unsigned threads = cfg->threads;
    unsigned long waves = cfg->iters;
    g_churn_lock = new_lock();
    pthread_t t[256];
    HPS_CHECK(threads <= 256, "at most 256 threads");
    for (unsigned long w = 0; w < waves; w++) {
        for (unsigned i = 0; i < threads; i++)
            start(&t[i], churn_worker, NULL);
        for (unsigned i = 0; i < threads; i++)
            join(t[i]);
    }
    HPS_CHECK(g_churn_count == waves * threads * 4, "counter %lu, expected %lu (lost updates)",
              g_churn_count, waves * threads * 4);
    check_quiet(g_churn_lock);
    free(g_churn_lock);
}

/* Every case: the algorithm named by its first argument, then threads and
 * iterations (tests/c/common/harness.h's stress arguments). */
typedef void algo_case_fn(hps_stress_cfg_t *cfg);

static int run_case(const hps_test_case_t *c, int argc, char **argv)
{
    A = NULL;
    for (size_t i = 0; i < sizeof k_algos / sizeof k_algos[0]; i++)
        if (strcmp(argv[1], k_algos[i].name) == 0)
            A = &k_algos[i];
    HPS_CHECK(A, "unknown lock algorithm '%s' (choose from %s)", argv[1], hps_lock_algo_names());
    hps_stress_cfg_t cfg = { .watchdog_s = 100 };
    hps_stress_args(argc, argv, 2, &cfg, 3, 20000);
    (*(algo_case_fn *const *)c->data)(&cfg);
    printf("%s: ok\n", hps_test_name());
    return 0;
}

#define ALGO_CASE(name)                                                              \
    { #name, .run_args = run_case, .args = "<algo> [threads|Nx] [iterations]",       \
      .min_args = 1, .max_args = 3, .data = &(algo_case_fn *const){ case_##name } }
static const hps_test_case_t cases[] = {
    ALGO_CASE(basic), ALGO_CASE(other), ALGO_CASE(timed), ALGO_CASE(blocking),
    ALGO_CASE(stress), ALGO_CASE(nested), ALGO_CASE(churn),
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("algo_api", cases, 100, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
