// SPDX-License-Identifier: MIT
/*
 * The public elision API (hpsync/elide.h) end to end, one scenario per run:
 *   elide_api <scenario>                  (see the table at the bottom)
 *   elide_api stress <algo> [threads|Nx] [iterations]
 * Each scenario states the HPSYNC_ELIDE_BACKEND it is written for (CTest
 * sets it) and refuses to run under another, so a registration typo cannot
 * turn into a vacuous pass.  Under inject:SEQ each thread replays the
 * sequence from its first step, so single-threaded scenarios assert exact
 * counter values (helper threads here never take an elided path); the stress checks mutual exclusion
 * through the shared harness while the sequence forces every kind of abort.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "hpsync/elide.h"
#include "elide/policy.h"

/* A lock with its elision state and counters, as a user keeps them. */
typedef struct elided {
    hps_lock_t l;
    hps_elide_state_t st;
    hps_elide_stats_t stats;
} elided_t;

static void el_init(elided_t *e, hps_lock_algo_t algo)
{
    memset(e, 0, sizeof *e);
    HPS_CHECK_RC("hps_lock_init", hps_lock_init(&e->l, algo), 0);
}
static void el_lock(elided_t *e) { hps_elide_lock_ex(&e->l, &e->st, &e->stats); }
static void el_unlock(elided_t *e) { hps_elide_unlock_ex(&e->l, &e->st, &e->stats); }
static int el_trylock(elided_t *e) { return hps_elide_trylock_ex(&e->l, &e->stats); }

/* ---- counters ------------------------------------------------------------ */

typedef struct counts {
    unsigned long att, com, conflict, capacity, busy, expl, other, fb, skips, waits;
} counts_t;

static counts_t read_counts(hps_elide_stats_t *s)
{
#define L(x) (unsigned long)hps_load_relaxed(&s->x)
    return (counts_t){ L(attempts), L(commits), L(aborts[HPS_ELIDE_ABORT_CONFLICT]),
                       L(aborts[HPS_ELIDE_ABORT_CAPACITY]), L(aborts[HPS_ELIDE_ABORT_BUSY]),
                       L(aborts[HPS_ELIDE_ABORT_EXPLICIT]), L(aborts[HPS_ELIDE_ABORT_OTHER]),
                       L(fallbacks), L(skips), L(busy_waits) };
#undef L
}

static void fmt_counts(char *buf, size_t n, counts_t c)
{
    snprintf(buf, n, "attempts=%lu commits=%lu conflict=%lu capacity=%lu busy=%lu explicit=%lu "
             "other=%lu fallbacks=%lu skips=%lu busy_waits=%lu", c.att, c.com, c.conflict,
             c.capacity, c.busy, c.expl, c.other, c.fb, c.skips, c.waits);
}

static void expect_counts(const char *when, elided_t *e, counts_t want)
{
    counts_t got = read_counts(&e->stats);
    if (memcmp(&got, &want, sizeof got) != 0) {
        char g[240], w[240];
        fmt_counts(g, sizeof g, got);
        fmt_counts(w, sizeof w, want);
        hps_test_fail("%s: counters %s; want %s", when, g, w);
    }
}

#define COUNTS(...) ((counts_t){ __VA_ARGS__ })

/* ---- acquisitions as a pattern: C = elided, A = attempted then locked, S = skipped */

static char acquire(elided_t *e)
{
    counts_t before = read_counts(&e->stats);
    el_lock(e);
    int in = hps_elide_in_section();
    /* The injected backend's elided sections hold the lock for real. */
    HPS_CHECK(hps_lock_is_locked(&e->l), "lock not held after hps_elide_lock");
    counts_t mid = read_counts(&e->stats);
    el_unlock(e);
    counts_t after = read_counts(&e->stats);
    HPS_CHECK(!hps_elide_in_section(), "hps_elide_in_section() still true after unlock");
    HPS_CHECK(!hps_lock_is_locked(&e->l), "lock still held after hps_elide_unlock");
    char c = mid.skips > before.skips ? 'S' : after.com > before.com ? 'C' : 'A';
    HPS_CHECK(in == (c == 'C'), "hps_elide_in_section() was %d inside a section that %s", in,
              c == 'C' ? "committed" : "did not run elided");
    return c;
}

static void expect_pattern(const char *when, elided_t *e, const char *want)
{
    char got[256];
    size_t n = strlen(want);
    HPS_CHECK(n < sizeof got, "pattern too long");
    for (size_t i = 0; i < n; i++)
        got[i] = acquire(e);
    got[n] = 0;
    if (strcmp(got, want) != 0)
        hps_test_fail("%s: acquisitions %s, want %s (C elided, A fell back, S skipped)", when, got, want);
}

/* ---- a second thread ---------------------------------------------------- */

struct other_call { int (*fn)(void *); void *arg; int rc; };

static void *other_main(void *p)
{
    struct other_call *c = p;
    c->rc = c->fn(c->arg);
    return NULL;
}

/* Run fn(arg) on another thread and return its result. */
static int on_other_thread(int (*fn)(void *), void *arg)
{
    struct other_call c = { fn, arg, -1 };
    pthread_t t;
    HPS_CHECK(pthread_create(&t, NULL, other_main, &c) == 0, "pthread_create failed");
    pthread_join(t, NULL);
    return c.rc;
}

static int other_trylock(void *p)
{
    hps_lock_t *l = p;
    int rc = hps_lock_trylock(l);
    if (rc == 0)
        hps_lock_unlock(l);
    return rc;
}

/* ---- scenarios: exact counters under inject:SEQ --------------------------- */

/* inject:retry*3,commit */
static void sc_retry_commit(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    expect_pattern("RETRY-bit aborts within the retries", &e, "C");
    expect_counts("retry*3,commit", &e, COUNTS(.att = 4, .com = 1, .conflict = 3));
    HPS_CHECK(hps_load_relaxed(&e.st.v) == 0, "state word %#x after a commit, want 0",
              (unsigned)hps_load_relaxed(&e.st.v));
}

/* inject:retry*4,commit */
static void sc_retry_exhaust(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_MCS);
    expect_pattern("4th RETRY-bit abort with retries=3", &e, "A");
    expect_counts("retry*4", &e, COUNTS(.att = 4, .conflict = 4, .fb = 1));
    HPS_CHECK(HPS_ELIDE_FAILS(hps_load_relaxed(&e.st.v)) == 1, "one fallback counts %u failures",
              HPS_ELIDE_FAILS(hps_load_relaxed(&e.st.v)));
    expect_pattern("next acquisition", &e, "C");
    expect_counts("retry*4,commit", &e, COUNTS(.att = 5, .com = 1, .conflict = 4, .fb = 1));
    HPS_CHECK(hps_load_relaxed(&e.st.v) == 0, "a commit did not reset the state word");
}

/* inject:retry*2,commit with HPSYNC_ELIDE_RETRIES=1 */
static void sc_retries_setting(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_TICKET);
    expect_pattern("HPSYNC_ELIDE_RETRIES=1", &e, "AC");
    expect_counts("retry*2,commit, retries=1", &e, COUNTS(.att = 3, .com = 1, .conflict = 2, .fb = 1));
}

/* inject:retry*2,commit with HPSYNC_ELIDE_RETRIES=1, then the API's count:
 * 0 gives up at the first RETRY-bit abort, 7 outlasts two of them. */
static void sc_retries_api(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_TTAS);
    HPS_CHECK(hps_elide_retries() == 1, "the setting's count is %u, want 1", hps_elide_retries());
    hps_elide_set_retries(0);
    HPS_CHECK(hps_elide_retries() == 0, "count %u after set_retries(0)", hps_elide_retries());
    expect_pattern("retries=0: two aborts, two fallbacks; then a commit", &e, "AAC");
    hps_elide_set_retries(7);
    expect_pattern("retries=7: two aborts retried, then the commit", &e, "C");
    expect_counts("retry*2,commit twice", &e, COUNTS(.att = 6, .com = 2, .conflict = 4, .fb = 2));
    hps_elide_set_retries(1000);
    HPS_CHECK(hps_elide_retries() == 100, "count %u after set_retries(1000), want 100",
              hps_elide_retries());
}

/* inject:capacity */
static void sc_capacity(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    expect_pattern("capacity: three fallbacks", &e, "AAA");
    expect_counts("capacity x3", &e, COUNTS(.att = 3, .capacity = 3, .fb = 3));
    HPS_CHECK(HPS_ELIDE_SKIP(hps_load_relaxed(&e.st.v)) == 16, "skip %u after 3 fallbacks, want 16",
              HPS_ELIDE_SKIP(hps_load_relaxed(&e.st.v)));
    expect_pattern("capacity: skip period then a probe", &e, "SSSSSSSSSSSSSSSSA");
    expect_counts("capacity x4 + 16 skips", &e, COUNTS(.att = 4, .capacity = 4, .fb = 4, .skips = 16));
}

/* inject:capacity with HPSYNC_ELIDE_SKIP=2 HPSYNC_ELIDE_SKIP_MAX=8 */
static void sc_capacity_probe(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    /* Periods 2, 4, 8, 8 (cap), each followed by one failed probe. */
    expect_pattern("failed probes double the skip up to SKIP_MAX", &e, "AAASSASSSSASSSSSSSSASSSSSSSSA");
    expect_counts("after 4 periods", &e, COUNTS(.att = 7, .capacity = 7, .fb = 7, .skips = 22));
}

/* inject:capacity*3,commit */
static void sc_commit_resets_backoff(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    /* The probe commits: the next period is SKIP again, not 2 x SKIP. */
    expect_pattern("a committed probe resets the backoff", &e,
                   "AAASSSSSSSSSSSSSSSSC" "AAASSSSSSSSSSSSSSSSC");
}

/* inject:capacity*2,commit */
static void sc_commit_resets_fails(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    expect_pattern("failures must be consecutive", &e, "AACAACAACAAC");
    expect_counts("4 rounds", &e, COUNTS(.att = 12, .com = 4, .capacity = 8, .fb = 8));
}

/* inject:busy,commit */
static void sc_busy_free(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    expect_pattern("busy, lock free at once", &e, "C");
    expect_counts("busy,commit", &e, COUNTS(.att = 2, .com = 1, .busy = 1, .waits = 1));
}

/* inject:busy*4,commit */
static void sc_busy_exhaust(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    expect_pattern("4 busy aborts with retries=3", &e, "A");
    expect_counts("busy*4", &e, COUNTS(.att = 4, .busy = 4, .fb = 1, .waits = 3));
    expect_pattern("next acquisition", &e, "C");
}

static hps_au32 g_held;

static void *hold_until_fallback(void *p)
{
    elided_t *e = p;
    hps_lock_lock(&e->l);
    hps_store_release(&g_held, 1);
    /* Hold until the main thread has given up waiting outside and queued
     * for the lock (its fallback is counted just before it does); only the
     * value matters, so relaxed. */
    while (hps_load_relaxed(&e->stats.fallbacks) == 0)
        sched_yield();
    hps_lock_unlock(&e->l);
    return NULL;
}

/* inject:busy,commit; the lock really held by another thread throughout */
static void sc_busy_held(void)
{
    static elided_t e;
    el_init(&e, HPS_LOCK_ADAPTIVE);
    pthread_t t;
    HPS_CHECK(pthread_create(&t, NULL, hold_until_fallback, &e) == 0, "pthread_create failed");
    while (!hps_load_acquire(&g_held))
        sched_yield();
    /* Busy, wait outside gives up (the holder does not leave), take the lock. */
    el_lock(&e);
    HPS_CHECK(!hps_elide_in_section(), "a fallback acquisition counts as elided");
    el_unlock(&e);
    pthread_join(t, NULL);
    expect_counts("busy while held", &e, COUNTS(.att = 1, .busy = 1, .fb = 1, .waits = 1));
    expect_pattern("next acquisition", &e, "C");
}

/* inject:explicit:7,explicit:0xfe,explicit:0xfd,conflict,debug,nested,zero,commit
 * with HPSYNC_ELIDE_FAILS=10 (seven failures in a row must not skip) */
static void sc_abort_causes(void)
{
    elided_t e;
    el_init(&e, HPS_LOCK_TTAS);
    expect_pattern("each abort that gives up at once", &e, "AAAAAAAC");
    expect_counts("explicit x3, conflict, debug, nested, zero, commit", &e,
                  COUNTS(.att = 8, .com = 1, .conflict = 1, .expl = 3, .other = 3, .fb = 7));
}

/* ---- scenarios: semantics ------------------------------------------------ */

/* inject:commit */
static void sc_trylock(void)
{
    static elided_t a, b;
    el_init(&a, HPS_LOCK_DEFAULT);
    el_init(&b, HPS_LOCK_MCS);
    /* An elided trylock of a free lock succeeds and is a section. */
    HPS_CHECK_RC("hps_elide_trylock (free)", el_trylock(&a), 0);
    HPS_CHECK(hps_elide_in_section(), "not in a section after an elided trylock");
    /* POSIX: the holder's trylock of the same lock fails. */
    HPS_CHECK_RC("hps_elide_trylock by the holder", el_trylock(&a), EBUSY);
    HPS_CHECK_RC("hps_lock_trylock by the holder", hps_lock_trylock(&a.l), EBUSY);
    HPS_CHECK_RC("trylock by another thread", on_other_thread(other_trylock, &a.l), EBUSY);
    /* A different, free lock inside the section. */
    HPS_CHECK_RC("hps_elide_trylock (other lock, inside)", el_trylock(&b), 0);
    el_unlock(&b);
    HPS_CHECK(hps_elide_in_section(), "unlocking the inner lock ended the outer section");
    el_unlock(&a);
    HPS_CHECK(!hps_elide_in_section(), "in a section after unlock");
    HPS_CHECK(!hps_lock_is_locked(&a.l) && !hps_lock_is_locked(&b.l), "a lock is still held");
    /* Same from inside an elided lock. */
    el_lock(&a);
    HPS_CHECK_RC("hps_elide_trylock inside hps_elide_lock", el_trylock(&a), EBUSY);
    el_unlock(&a);
    HPS_CHECK_RC("hps_elide_trylock after unlock", el_trylock(&a), 0);
    el_unlock(&a);
    HPS_CHECK(!hps_lock_is_locked(&a.l), "lock still held");
    HPS_CHECK(read_counts(&a.stats).com == 3, "%lu commits, want 3 (two trylocks, one lock)",
              read_counts(&a.stats).com);
}

/* inject:retry,commit,capacity,busy,conflict,commit,explicit:7 */
static void sc_trylock_mixed(void)
{
    static elided_t a;
    el_init(&a, HPS_LOCK_DEFAULT);
    /* Whatever the outcome of the lock and the trylock, the holder gets EBUSY. */
    for (int i = 0; i < 50; i++) {
        el_lock(&a);
        HPS_CHECK_RC("hps_elide_trylock by the holder", el_trylock(&a), EBUSY);
        el_unlock(&a);
        HPS_CHECK(!hps_lock_is_locked(&a.l), "lock still held after unlock (round %d)", i);
        int rc = el_trylock(&a);
        HPS_CHECK_RC("hps_elide_trylock of a free lock", rc, 0);
        el_unlock(&a);
    }
    HPS_CHECK(!hps_elide_in_section(), "in a section after the last unlock");
}

/* Unlocking an unlocked lock: same state as without elision, lock usable. */
static void unlock_unlocked(hps_lock_algo_t algo)
{
    static elided_t a, c;
    hps_lock_t ref;
    memset(&ref, 0, sizeof ref);      /* compared bytewise below, like el_init's */
    el_init(&a, algo);
    el_init(&c, algo);
    HPS_CHECK_RC("hps_lock_init", hps_lock_init(&ref, algo), 0);
    hps_lock_unlock(&ref);
    el_unlock(&a);
    HPS_CHECK(memcmp(&a.l.u, &ref.u, sizeof ref.u) == 0,
              "%s: lock word after unlocking an unlocked lock differs from plain hps_lock_unlock",
              hps_lock_algo_name(algo));
    expect_counts("unlock of an unlocked lock", &a, COUNTS(.att = 0));
    expect_pattern("lock usable afterwards", &a, "CC");
    /* While another lock is held elided: that section is not ended by it. */
    el_lock(&a);
    el_unlock(&c);
    HPS_CHECK(hps_elide_in_section(), "%s: unlocking an unrelated unlocked lock ended the section",
              hps_lock_algo_name(algo));
    HPS_CHECK(hps_lock_is_locked(&a.l), "unlocking another lock released this one");
    el_unlock(&a);
    expect_counts("after", &a, COUNTS(.att = 3, .com = 3));
    HPS_CHECK_RC("hps_elide_trylock afterwards", el_trylock(&c), 0);
    el_unlock(&c);
    HPS_CHECK(!hps_lock_is_locked(&a.l) && !hps_lock_is_locked(&c.l), "a lock is still held");
}

/* inject:commit; only algorithms whose plain unlock tolerates it */
static void sc_unlock_unlocked(void)
{
    unlock_unlocked(HPS_LOCK_TTAS);
    unlock_unlocked(HPS_LOCK_ADAPTIVE);
}

/* inject:commit,capacity */
static void sc_in_section(void)
{
    static elided_t a, b;
    el_init(&a, HPS_LOCK_DEFAULT);
    el_init(&b, HPS_LOCK_DEFAULT);
    HPS_CHECK(!hps_elide_in_section(), "in a section before any lock");
    expect_pattern("commit then capacity", &a, "CA");   /* acquire() checks inside */
    /* Outer elided (commit), inner falls back (capacity): still inside. */
    el_lock(&a);
    HPS_CHECK(hps_elide_in_section(), "not in a section after an elided lock");
    el_lock(&b);
    HPS_CHECK(hps_elide_in_section(), "an inner fallback ended the outer section");
    el_unlock(&b);
    HPS_CHECK(hps_elide_in_section(), "inner unlock ended the outer section");
    el_unlock(&a);
    HPS_CHECK(!hps_elide_in_section(), "in a section after the outer unlock");
    HPS_CHECK(!hps_lock_is_locked(&a.l) && !hps_lock_is_locked(&b.l), "a lock is still held");
}

/* inject:commit */
static void sc_before_blocking(void)
{
    static elided_t a, b;
    el_init(&a, HPS_LOCK_DEFAULT);
    el_init(&b, HPS_LOCK_HEMLOCK);
    hps_elide_before_blocking();      /* outside: nothing to do */
    HPS_CHECK(!hps_elide_in_section(), "before_blocking outside a section entered one");
    el_lock(&a);
    el_lock(&b);
    HPS_CHECK(hps_elide_in_section(), "not in a section after two elided locks");
    hps_elide_before_blocking();
    HPS_CHECK(!hps_elide_in_section(), "still in a section after hps_elide_before_blocking");
    /* Demoted, not dropped: both locks still exclude others. */
    HPS_CHECK_RC("trylock by another thread (outer)", on_other_thread(other_trylock, &a.l), EBUSY);
    HPS_CHECK_RC("trylock by another thread (inner)", on_other_thread(other_trylock, &b.l), EBUSY);
    el_unlock(&b);
    el_unlock(&a);
    HPS_CHECK(!hps_lock_is_locked(&a.l) && !hps_lock_is_locked(&b.l),
              "unlock did not release a demoted lock");
    /* Nested sections may go uncounted (docs/elision.md), so only the
     * outer one has exact counters; neither may count as elided. */
    expect_counts("demoted section", &a, COUNTS(.att = 1));
    HPS_CHECK(read_counts(&b.stats).com == 0, "a demoted nested section counted as a commit");
    expect_pattern("elided again afterwards", &a, "C");
}

/* inject:commit */
static void sc_nested_noskip(void)
{
    static elided_t a, b;
    el_init(&a, HPS_LOCK_DEFAULT);
    el_init(&b, HPS_LOCK_DEFAULT);
    hps_store_relaxed(&b.st.v, 5u);   /* b is skipping: 5 acquisitions to go */
    expect_pattern("outside a section a skipping lock skips", &b, "S");
    el_lock(&a);
    el_lock(&b);
    HPS_CHECK(hps_elide_in_section(), "not in a section");
    HPS_CHECK(hps_lock_is_locked(&b.l), "inner lock not held");
    el_unlock(&b);
    el_unlock(&a);
    /* Nested sections may go uncounted (docs/elision.md): only skips are exact. */
    HPS_CHECK(read_counts(&b.stats).skips == 1, "a lock nested in an elided section skipped (%lu skips, want 1)",
              read_counts(&b.stats).skips);
    HPS_CHECK(!hps_lock_is_locked(&a.l) && !hps_lock_is_locked(&b.l), "a lock is still held");
}

/* ---- scenarios: backend selection ---------------------------------------- */

static void check_plain(const char *backend)
{
    static elided_t e;
    el_init(&e, HPS_LOCK_DEFAULT);
    el_lock(&e);
    HPS_CHECK(hps_lock_is_locked(&e.l), "%s: not locked", backend);
    HPS_CHECK(!hps_elide_in_section(), "%s: in a section with elision off", backend);
    HPS_CHECK_RC("hps_elide_trylock by the holder", el_trylock(&e), EBUSY);
    hps_elide_before_blocking();
    HPS_CHECK(hps_lock_is_locked(&e.l), "%s: before_blocking released the lock", backend);
    el_unlock(&e);
    HPS_CHECK_RC("hps_elide_trylock", el_trylock(&e), 0);
    el_unlock(&e);
    HPS_CHECK(!hps_lock_is_locked(&e.l), "%s: still locked", backend);
    expect_counts("elision off", &e, COUNTS(.att = 0));
}

static void expect_backend(const char *want)
{
    const char *got = hps_elide_backend_name();
    HPS_CHECK(got && strcmp(got, want) == 0, "backend '%s', want '%s'", got ? got : "(null)", want);
    int active = strcmp(want, "off") != 0;
    HPS_CHECK(hps_elide_active == active, "hps_elide_active=%d with backend %s", hps_elide_active, want);
    if (!active)
        check_plain(want);
}

/* What auto picks on this machine. */
static const char *auto_backend(void) { return hps_cpu_rtm_usable() ? "rtm" : "off"; }

static void sc_off(void) { expect_backend("off"); }
static void sc_auto(void) { expect_backend(auto_backend()); }
/* rtm where the CPU has none falls back to off (with one line on stderr). */
static void sc_rtm(void) { expect_backend(auto_backend()); }
/* A bad HPSYNC_ELIDE_BACKEND: the default, and (checked by the script) one line. */
static void sc_fallback(void) { expect_backend(auto_backend()); }

/* ---- stress: the shared harness over elided locks ------------------------ */

static int st_lock(void *p) { el_lock(p); return 0; }
static int st_trylock(void *p) { return el_trylock(p); }
/* No elided timed lock in the API: a real hold, which hps_elide_unlock
 * must then release like any other. */
static int st_timedlock(void *p, clockid_t clock, const struct timespec *abs)
{
    return hps_lock_timedlock(&((elided_t *)p)->l, clock, abs);
}
static int st_unlock(void *p) { el_unlock(p); return 0; }
static void st_in_cs(void *p)
{
    elided_t *e = p;
    HPS_CHECK(hps_lock_is_locked(&e->l), "injected section does not hold the lock");
    HPS_CHECK_RC("hps_elide_trylock by the holder", el_trylock(e), EBUSY);
}

static int stress(const hps_test_case_t *tc, int argc, char **argv)
{
    static elided_t e;
    hps_lock_algo_t algo;
    const char *name = hps_test_name();
    if (hps_lock_algo_parse(argv[1], &algo) != 0) {
        fprintf(stderr, "elide_api: unknown lock algorithm '%s'; algorithms: %s\n", argv[1],
                hps_lock_algo_names());
        return 2;
    }
    HPS_CHECK(hps_elide_active, "elision is off (backend %s): the stress needs inject:SEQ",
              hps_elide_backend_name());
    el_init(&e, algo);
    hps_stress_ops_t ops = {
        .size = sizeof ops, .name = name,
        .lock = st_lock, .trylock = st_trylock, .timedlock = st_timedlock,
        .unlock = st_unlock, .in_cs = st_in_cs,
        .clocks = { CLOCK_MONOTONIC, CLOCK_REALTIME },
    };
    hps_stress_cfg_t cfg = { .ops = &ops, .lock = &e, .watchdog_s = 100 };
    hps_stress_args(argc, argv, 2, &cfg, 3, 20000);
    hps_stress_run(&cfg);
    HPS_CHECK(!hps_lock_is_locked(&e.l), "lock still held after every thread unlocked");
    HPS_CHECK(!hps_elide_in_section(), "main thread in a section");
    /* Every transaction begun either committed or aborted, once. */
    counts_t c = read_counts(&e.stats);
    char buf[240];
    fmt_counts(buf, sizeof buf, c);
    printf("%s: %s\n", name, buf);
    HPS_CHECK(c.att == c.com + c.conflict + c.capacity + c.busy + c.expl + c.other,
              "attempts != commits + aborts: %s", buf);
    HPS_CHECK(c.com && c.fb, "the sequence should give commits and fallbacks: %s", buf);
    return 0;
}

/* ---- table --------------------------------------------------------------- */

/*
 * One case per scenario, the HPSYNC_ELIDE_BACKEND it is written for as its
 * datum ("" = unset, NULL = any); and the stress.
 */
static const hps_test_case_t cases[] = {
    { "retry_commit", .run = sc_retry_commit, .data = "inject:retry*3,commit" },
    { "retry_exhaust", .run = sc_retry_exhaust, .data = "inject:retry*4,commit" },
    { "retries_setting", .run = sc_retries_setting, .data = "inject:retry*2,commit" },
    { "retries_api", .run = sc_retries_api, .data = "inject:retry*2,commit" },
    { "capacity", .run = sc_capacity, .data = "inject:capacity" },
    { "capacity_probe", .run = sc_capacity_probe, .data = "inject:capacity" },
    { "commit_resets_backoff", .run = sc_commit_resets_backoff, .data = "inject:capacity*3,commit" },
    { "commit_resets_fails", .run = sc_commit_resets_fails, .data = "inject:capacity*2,commit" },
    { "busy_free", .run = sc_busy_free, .data = "inject:busy,commit" },
    { "busy_exhaust", .run = sc_busy_exhaust, .data = "inject:busy*4,commit" },
    { "busy_held", .run = sc_busy_held, .data = "inject:busy,commit" },
    { "abort_causes", .run = sc_abort_causes,
      .data = "inject:explicit:7,explicit:0xfe,explicit:0xfd,conflict,debug,nested,zero,commit" },
    { "trylock", .run = sc_trylock, .data = "inject:commit" },
    { "trylock_mixed", .run = sc_trylock_mixed,
      .data = "inject:retry,commit,capacity,busy,conflict,commit,explicit:7" },
    { "unlock_unlocked", .run = sc_unlock_unlocked, .data = "inject:commit" },
    { "in_section", .run = sc_in_section, .data = "inject:commit,capacity" },
    { "before_blocking", .run = sc_before_blocking, .data = "inject:commit" },
    { "nested_noskip", .run = sc_nested_noskip, .data = "inject:commit" },
    { "off", .run = sc_off, .data = "off" },
    { "auto", .run = sc_auto, .data = "" },
    { "rtm", .run = sc_rtm, .data = "rtm" },
    { "fallback", .run = sc_fallback, .data = NULL },
    { "stress", .run_args = stress, .args = "<algo> [threads|Nx] [iterations]",
      .min_args = 1, .max_args = 3 },
};
/* Scenarios take milliseconds; within CTest's 60 s (the stress re-arms it). */
static const hps_test_suite_t suite = HPS_TEST_SUITE("elide_api", cases, 30, 0);

int main(int argc, char **argv)
{
    const hps_test_case_t *c = hps_test_case_select(&suite, argc, argv);
    const char *want = c->data, *env = getenv("HPSYNC_ELIDE_BACKEND");
    if (want && strcmp(env ? env : "", want) != 0)
        hps_test_fail("written for HPSYNC_ELIDE_BACKEND='%s', run with '%s'", want, env ? env : "");
    if (want && strncmp(want, "inject:", 7) == 0)
        HPS_CHECK(hps_elide_active && strcmp(hps_elide_backend_name(), "inject") == 0,
                  "backend %s (active %d), want inject", hps_elide_backend_name(), hps_elide_active);
    int rc = hps_test_case_run(c, argc, argv);
    if (rc == 0 && c->run)
        printf("%s: ok\n", hps_test_name());
    return rc;
}
