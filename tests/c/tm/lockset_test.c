// SPDX-License-Identifier: MIT
/*
 * lockset_test - lockset elision (hpsync/lockset.h).
 *
 *   lockset_test CASE
 *
 * CTest runs the cases with no hardware path (HPSYNC_ELIDE_BACKEND=off),
 * with the injected backend (sets run as emulated transactions, retry,
 * wait for busy locks, skip and fall back), and the mutex cases with and
 * without the interposer.
 *
 * The concurrent cases: 8 threads (oversubscribed) pick random pairs and
 * triples of 16 cells, duplicates included, in random order, and update
 * every cell of the set non-atomically (owner mark, busy gap, check, add).
 * Each cell's final value must equal the sequential model: the sum of the
 * amounts the threads logged for it.  Two threads inside one cell at once
 * fail at the owner check, and a set taken in caller order rather than
 * address order deadlocks (the watchdog fails the test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "hps_rand.h"
#include "hpsync/lockset.h"

#define THREADS 8
#define CELLS 16

typedef struct cell {
    hps_lock_t lock;
    pthread_mutex_t mu;
    uint64_t value;
    hps_au32 owner;                  /* thread + 1 inside, 0 outside */
    char pad[64];
} cell_t;

static cell_t g_cell[CELLS];
static uint64_t g_model[THREADS][CELLS];
static unsigned long g_iters = 20000;
static int g_mutex;                  /* the pthread form */
static int g_mixed;                  /* odd threads lock plainly */
static hps_au64 g_elided, g_locked;  /* the workers' lockset statistics */

static void busy(void)
{
    for (int i = 0; i < 32; i++)
        hps_cpu_relax();
}

/* Inside a critical section over cell c. */
static void touch(unsigned self, unsigned c, uint64_t amount)
{
    uint32_t was = hps_xchg_acq_rel(&g_cell[c].owner, self + 1);
    if (was != 0)
        hps_test_fail("cell %u entered by thread %u while thread %u was inside", c, self, was - 1);
    uint64_t v = g_cell[c].value;
    busy();
    g_cell[c].value = v + amount;
    g_model[self][c] += amount;
    if (hps_xchg_acq_rel(&g_cell[c].owner, 0) != self + 1)
        hps_test_fail("cell %u: owner changed under thread %u", c, self);
}

/* The distinct cells of a set, once each. */
static void touch_set(unsigned self, const unsigned *idx, unsigned n, uint64_t amount)
{
    for (unsigned i = 0; i < n; i++) {
        int dup = 0;
        for (unsigned j = 0; j < i; j++)
            dup |= idx[j] == idx[i];
        if (!dup)
            touch(self, idx[i], amount);
    }
}

/* Plain locking of the same locks: one lock, or two in address order. */
static void plain_op(unsigned self, uint64_t *seed)
{
    unsigned a = (unsigned)(hps_xorshift64(seed) % CELLS), b = (unsigned)(hps_xorshift64(seed) % CELLS);
    if (a > b) {
        unsigned t = a;
        a = b;
        b = t;
    }
    if (g_mutex) {
        pthread_mutex_lock(&g_cell[a].mu);
        if (b != a)
            pthread_mutex_lock(&g_cell[b].mu);
    } else {
        hps_lock_lock(&g_cell[a].lock);
        if (b != a)
            hps_lock_lock(&g_cell[b].lock);
    }
    touch(self, a, 1);
    if (b != a)
        touch(self, b, 1);
    if (g_mutex) {
        if (b != a)
            pthread_mutex_unlock(&g_cell[b].mu);
        pthread_mutex_unlock(&g_cell[a].mu);
    } else {
        if (b != a)
            hps_lock_unlock(&g_cell[b].lock);
        hps_lock_unlock(&g_cell[a].lock);
    }
}

static void *worker(void *arg)
{
    unsigned self = (unsigned)(uintptr_t)arg;
    uint64_t seed = self * 0x9E3779B97F4A7C15ull + 1;
    for (unsigned long it = 0; it < g_iters; it++) {
        if (g_mixed && (self & 1) && it % 2) {
            plain_op(self, &seed);
            continue;
        }
        unsigned n = 2 + (unsigned)(hps_xorshift64(&seed) % 2), idx[3];
        hps_lock_t *l[3];
        pthread_mutex_t *m[3];
        for (unsigned i = 0; i < n; i++) {
            /* Small range: duplicates are frequent. */
            idx[i] = (unsigned)(hps_xorshift64(&seed) % CELLS);
            l[i] = &g_cell[idx[i]].lock;
            m[i] = &g_cell[idx[i]].mu;
        }
        uint64_t amount = 1 + hps_xorshift64(&seed) % 5;
        int try = it % 4 == 3;
        int r = g_mutex ? (try ? hps_lockset_mutex_trylock(m, n) : hps_lockset_mutex_lock(m, n))
                        : (try ? hps_lockset_trylock(l, n) : hps_lockset_lock(l, n));
        if (r == EBUSY && try)
            continue;
        HPS_CHECK_RC("lockset lock", r, 0);
        touch_set(self, idx, n, amount);
        /* Unlock with the set in another order: the same set. */
        if (n == 3) {
            hps_lock_t *tl = l[0];
            l[0] = l[2];
            l[2] = tl;
            pthread_mutex_t *tm = m[0];
            m[0] = m[2];
            m[2] = tm;
        }
        HPS_CHECK_RC("lockset unlock", g_mutex ? hps_lockset_mutex_unlock(m, n) : hps_lockset_unlock(l, n), 0);
    }
    hps_lockset_stats_t st;
    hps_lockset_stats_get(&st);
    (void)hps_faa_relaxed(&g_elided, st.elided);
    (void)hps_faa_relaxed(&g_locked, st.locked);
    return NULL;
}

static void run(void)
{
    memset(g_model, 0, sizeof g_model);
    for (unsigned c = 0; c < CELLS; c++) {
        /* Mixed algorithms: every set spans several kinds of lock word. */
        hps_lock_algo_t a = (hps_lock_algo_t)(HPS_LOCK_ALGO_MIN + c % HPS_LOCK_ALGO_COUNT);
        HPS_CHECK_RC("hps_lock_init", hps_lock_init(&g_cell[c].lock, a), 0);
        pthread_mutex_init(&g_cell[c].mu, NULL);
        g_cell[c].value = 0;
    }
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, worker, (void *)i), 0);
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t total = 0;
    for (unsigned c = 0; c < CELLS; c++) {
        uint64_t want = 0;
        for (unsigned i = 0; i < THREADS; i++)
            want += g_model[i][c];
        HPS_CHECK(g_cell[c].value == want, "cell %u holds %llu, the model says %llu (a lost update)", c,
                  (unsigned long long)g_cell[c].value, (unsigned long long)want);
        total += want;
    }
    HPS_CHECK(total > 0, "nothing ran");
    /* Which path ran: the hardware one (emulated here) exactly where the
     * backend can run it: injected, over hpsync locks or interposed mutexes. */
    uint64_t el = hps_load_relaxed(&g_elided), lo = hps_load_relaxed(&g_locked);
    const char *b = getenv("HPSYNC_ELIDE_BACKEND");
    int hw = b && !strncmp(b, "inject:", 7) && (!g_mutex || hps_test_preloaded());
    HPS_CHECK(hw ? el > 0 && lo > 0 : el == 0 && lo > 0,
              "sets elided %llu, locked %llu: wrong for this backend", (unsigned long long)el,
              (unsigned long long)lo);
    printf("%s: %u threads x %lu sets, total %llu; sets elided %llu, locked %llu\n", hps_test_name(),
           THREADS, g_iters, (unsigned long long)total, (unsigned long long)el, (unsigned long long)lo);
}

static void case_sets(void) { run(); }
static void case_mixed(void) { g_mixed = 1; run(); }
static void case_mutex(void) { g_mutex = 1; run(); }
static void case_mutex_mixed(void) { g_mutex = 1; g_mixed = 1; run(); }

/* ---- single-thread semantics ----------------------------------------------- */

static void case_api(void)
{
    hps_lock_t a, b, c;
    hps_lock_init(&a, HPS_LOCK_DEFAULT);
    hps_lock_init(&b, HPS_LOCK_TICKET);
    hps_lock_init(&c, HPS_LOCK_MCS);
    hps_lock_t *set[4] = { &c, &a, &c, &b };
    HPS_CHECK_RC("lock (empty)", hps_lockset_lock(set, 0), EINVAL);
    HPS_CHECK_RC("lock (too many)", hps_lockset_lock(set, HPS_LOCKSET_MAX + 1), EINVAL);
    hps_lock_t *withnull[2] = { &a, NULL };
    HPS_CHECK_RC("lock (NULL)", hps_lockset_lock(withnull, 2), EINVAL);
    HPS_CHECK_RC("unlock (none held)", hps_lockset_unlock(set, 4), EPERM);

    HPS_CHECK_RC("lock", hps_lockset_lock(set, 4), 0);
    hps_lock_t *other[1] = { &b };
    HPS_CHECK_RC("unlock (another set)", hps_lockset_unlock(other, 1), EPERM);
    hps_lock_t *again[3] = { &b, &c, &a };
    HPS_CHECK_RC("unlock (same set, other order)", hps_lockset_unlock(again, 3), 0);
    HPS_CHECK(!hps_lock_is_locked(&a) && !hps_lock_is_locked(&b) && !hps_lock_is_locked(&c),
              "a lock stayed held after unlock");

    /* trylock: a set with a lock held elsewhere is EBUSY and holds nothing. */
    hps_lock_lock(&b);
    HPS_CHECK_RC("trylock (one held)", hps_lockset_trylock(set, 4), EBUSY);
    HPS_CHECK(!hps_lock_is_locked(&a) && !hps_lock_is_locked(&c), "a failed trylock kept a lock");
    hps_lock_unlock(&b);
    HPS_CHECK_RC("trylock", hps_lockset_trylock(set, 4), 0);
    HPS_CHECK_RC("unlock", hps_lockset_unlock(set, 4), 0);

    /* Nesting: disjoint sets, innermost unlocked first. */
    hps_lock_t *s1[1] = { &a }, *s2[2] = { &c, &b };
    HPS_CHECK_RC("lock outer", hps_lockset_lock(s1, 1), 0);
    HPS_CHECK_RC("lock inner", hps_lockset_lock(s2, 2), 0);
    HPS_CHECK_RC("unlock outer first", hps_lockset_unlock(s1, 1), EPERM);
    HPS_CHECK_RC("unlock inner", hps_lockset_unlock(s2, 2), 0);
    HPS_CHECK_RC("unlock outer", hps_lockset_unlock(s1, 1), 0);

    /* The depth limit. */
    hps_lock_t many[HPS_LOCKSET_DEPTH + 1];
    for (int i = 0; i <= HPS_LOCKSET_DEPTH; i++) {
        hps_lock_init(&many[i], HPS_LOCK_TTAS);
        hps_lock_t *one[1] = { &many[i] };
        HPS_CHECK_RC("lock (depth)", hps_lockset_lock(one, 1), i < HPS_LOCKSET_DEPTH ? 0 : EAGAIN);
    }
    for (int i = HPS_LOCKSET_DEPTH; i-- > 0;) {
        hps_lock_t *one[1] = { &many[i] };
        HPS_CHECK_RC("unlock (depth)", hps_lockset_unlock(one, 1), 0);
    }
    printf("%s: ok\n", hps_test_name());
}

/* Under HPSYNC_ELIDE_BACKEND=inject:retry*3,commit,capacity,commit with
 * HPSYNC_ELIDE_RETRIES=3 (see CMakeLists.txt): exact counts of where each
 * set ran.  Without a hardware path every set is taken lock by lock. */
static void case_policy(void)
{
    const char *eb = getenv("HPSYNC_ELIDE_BACKEND");
    int hw = eb && !strncmp(eb, "inject:", 7);
    hps_lock_t a, b;
    hps_lock_init(&a, HPS_LOCK_DEFAULT);
    hps_lock_init(&b, HPS_LOCK_HEMLOCK);
    hps_lock_t *set[2] = { &b, &a };
    hps_lockset_stats_t s0, s1;
    hps_lockset_stats_get(&s0);
    /* 1: retry x3 then commit: elided after 3 aborts.  2: capacity: locked
     * at once.  3: commit: elided. */
    for (int i = 0; i < 3; i++) {
        HPS_CHECK_RC("lock", hps_lockset_lock(set, 2), 0);
        /* Emulated or taken: both locks really held. */
        HPS_CHECK(hps_lock_is_locked(&a) && hps_lock_is_locked(&b), "set %d: a lock is not held", i);
        HPS_CHECK_RC("unlock", hps_lockset_unlock(set, 2), 0);
    }
    hps_lockset_stats_get(&s1);
    uint64_t el = s1.elided - s0.elided, lo = s1.locked - s0.locked, ab = s1.aborts - s0.aborts;
    if (hw)
        HPS_CHECK(el == 2 && lo == 1 && ab == 4, "elided %llu locked %llu aborts %llu; want 2 1 4",
                  (unsigned long long)el, (unsigned long long)lo, (unsigned long long)ab);
    else
        HPS_CHECK(el == 0 && lo == 3 && ab == 0, "elided %llu locked %llu aborts %llu; want 0 3 0",
                  (unsigned long long)el, (unsigned long long)lo, (unsigned long long)ab);
    printf("%s: elided %llu, locked %llu, aborts %llu\n", hps_test_name(), (unsigned long long)el,
           (unsigned long long)lo, (unsigned long long)ab);
}

static const hps_test_case_t cases[] = {
    { "sets", .run = case_sets },
    { "mixed", .run = case_mixed },
    { "mutex", .run = case_mutex },
    { "mutex_mixed", .run = case_mutex_mixed },
    { "api", .run = case_api },
    { "policy", .run = case_policy },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("lockset_test", cases, 90, 0);

int main(int argc, char **argv)
{
    return hps_test_main(&suite, argc, argv);
}
