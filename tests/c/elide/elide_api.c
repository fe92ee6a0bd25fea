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

static int stress(int argc, char **argv)
{
    static char name[64];
    static elided_t e;
    hps_lock_algo_t algo;
    if (argc < 3 || hps_lock_algo_parse(argv[2], &algo) != 0) {
        fprintf(stderr, "usage: %s stress <%s> [threads|Nx] [iterations]\n", argv[0], hps_lock_algo_names());
        return 2;
    }
    snprintf(name, sizeof name, "elide_api[stress,%s]", argv[2]);
    hps_test_set_name(name);
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
    hps_stress_args(argc, argv, 3, &cfg, 3, 20000);
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

static const struct scenario {
    const char *name;
    /* HPSYNC_ELIDE_BACKEND it is written for; "" = unset, NULL = any. */
    const char *backend;
    void (*fn)(void);
} scenarios[] = {
    { "retry_commit", "inject:retry*3,commit", sc_retry_commit },
    { "retry_exhaust", "inject:retry*4,commit", sc_retry_exhaust },
    { "retries_setting", "inject:retry*2,commit", sc_retries_setting },
    { "capacity", "inject:capacity", sc_capacity },
    { "capacity_probe", "inject:capacity", sc_capacity_probe },
    { "commit_resets_backoff", "inject:capacity*3,commit", sc_commit_resets_backoff },
    { "commit_resets_fails", "inject:capacity*2,commit", sc_commit_resets_fails },
    { "busy_free", "inject:busy,commit", sc_busy_free },
    { "busy_exhaust", "inject:busy*4,commit", sc_busy_exhaust },
    { "busy_held", "inject:busy,commit", sc_busy_held },
    { "abort_causes", "inject:explicit:7,explicit:0xfe,explicit:0xfd,conflict,debug,nested,zero,commit",
      sc_abort_causes },
    { "trylock", "inject:commit", sc_trylock },
    { "trylock_mixed", "inject:retry,commit,capacity,busy,conflict,commit,explicit:7", sc_trylock_mixed },
    { "unlock_unlocked", "inject:commit", sc_unlock_unlocked },
    { "in_section", "inject:commit,capacity", sc_in_section },
    { "before_blocking", "inject:commit", sc_before_blocking },
    { "nested_noskip", "inject:commit", sc_nested_noskip },
    { "off", "off", sc_off },
    { "auto", "", sc_auto },
    { "rtm", "rtm", sc_rtm },
    { "fallback", NULL, sc_fallback },
};

int main(int argc, char **argv)
{
    static char name[64];
    /* Scenarios take milliseconds; within CTest's 60 s (the stress re-arms it). */
    hps_test_watchdog(30);
    if (argc >= 2 && strcmp(argv[1], "stress") == 0)
        return stress(argc, argv);
    for (size_t i = 0; argc == 2 && i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const struct scenario *s = &scenarios[i];
        if (strcmp(argv[1], s->name) != 0)
            continue;
        snprintf(name, sizeof name, "elide_api[%s]", s->name);
        hps_test_set_name(name);
        const char *env = getenv("HPSYNC_ELIDE_BACKEND");
        if (s->backend && strcmp(env ? env : "", s->backend) != 0)
            hps_test_fail("written for HPSYNC_ELIDE_BACKEND='%s', run with '%s'", s->backend, env ? env : "");
        if (s->backend && strncmp(s->backend, "inject:", 7) == 0)
            HPS_CHECK(hps_elide_active && strcmp(hps_elide_backend_name(), "inject") == 0,
                      "backend %s (active %d), want inject", hps_elide_backend_name(), hps_elide_active);
        s->fn();
        printf("%s: ok\n", name);
        return 0;
    }
    fprintf(stderr, "usage: %s <scenario> | stress <algo> [threads|Nx] [iterations]\nscenarios:", argv[0]);
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        fprintf(stderr, " %s", scenarios[i].name);
    fprintf(stderr, "\n");
    return 2;
}
