// SPDX-License-Identifier: MIT
/*
 * tm_test - the one harness every TM backend runs (HPSYNC_TM picks it).
 *
 *   tm_test CASE [ARG]
 *
 * Each case asserts behaviour inside and after sections and fails with one
 * "tm.CASE: FAIL ..." line; a watchdog turns a hang into a failure.  The
 * concurrent cases run 8 threads whatever the machine (oversubscribed on
 * this 2-CPU one).  See CMakeLists.txt for the list of cases.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "hpsync/tm.h"
#include "hpsync/elide.h"

#define THREADS 8

static unsigned long g_iters = 4000;          /* per thread; scaled by cases */
static hps_au32 g_stop;

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Busy work between two reads: widens the window in which a writer can
 * commit, so that an inconsistent read would be seen. */
static void gap(void)
{
    for (int i = 0; i < 64; i++)
        hps_cpu_relax();
}

static void run_threads(unsigned n, void *(*fn)(void *))
{
    pthread_t t[64];
    for (uintptr_t i = 0; i < n; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, fn, (void *)i), 0);
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* ---- bank: transfers and audits ------------------------------------------ */

#define ACCOUNTS 64
#define START 1000
static uint64_t g_acct[ACCOUNTS];

static void bank_init(void)
{
    for (int i = 0; i < ACCOUNTS; i++)
        g_acct[i] = START;
}

static void transfer(uint64_t *s)
{
    unsigned a = rnd(s) % ACCOUNTS, b = rnd(s) % ACCOUNTS;
    uint64_t amt = rnd(s) % 50;
    HPS_TM_BEGIN();
    uint64_t x = hps_tm_read_u64(&g_acct[a]);
    if (x >= amt && a != b) {
        uint64_t y = hps_tm_read_u64(&g_acct[b]);
        hps_tm_write_u64(&g_acct[a], x - amt);
        hps_tm_write_u64(&g_acct[b], y + amt);
    }
    HPS_TM_END();
}

static void audit(void)
{
    uint64_t sum = 0;
    HPS_TM_BEGIN_RO();
    sum = 0;                         /* locals are not rolled back */
    for (int i = 0; i < ACCOUNTS; i++)
        sum += HPS_TM_READ(&g_acct[i]);
    if (sum != (uint64_t)ACCOUNTS * START)
        hps_test_fail("audit inside a section saw total %llu, not %llu",
                      (unsigned long long)sum, (unsigned long long)ACCOUNTS * START);
    HPS_TM_END();
}

static void bank_check(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < ACCOUNTS; i++)
        sum += g_acct[i];
    HPS_CHECK(sum == (uint64_t)ACCOUNTS * START, "final total %llu, not %llu",
              (unsigned long long)sum, (unsigned long long)ACCOUNTS * START);
}

static void *bank_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg * 7919 + 1;
    for (unsigned long i = 0; i < g_iters; i++) {
        if (i % 5 == 4)
            audit();
        else
            transfer(&s);
    }
    return NULL;
}

static void case_bank(void)
{
    bank_init();
    run_threads(THREADS, bank_thread);
    bank_check();
    hps_tm_stats_t st;
    hps_tm_stats_total(&st);
    HPS_CHECK(st.commits == THREADS * g_iters, "commits %llu, expected %lu",
              (unsigned long long)st.commits, THREADS * g_iters);
    HPS_CHECK(st.commits_ro >= THREADS * (g_iters / 5), "read-only commits %llu, expected >= %lu",
              (unsigned long long)st.commits_ro, THREADS * (g_iters / 5));
}

/* ---- a hot counter: every commit must count --------------------------------- */

static uint64_t g_counter[2];

static void *counter_thread(void *arg)
{
    for (unsigned long i = 0; i < g_iters; i++) {
        HPS_TM_BEGIN();
        /* Two words: commit-time locking takes two orecs, so a commit can
         * find the second one held after taking the first. */
        hps_tm_write_u64(&g_counter[0], hps_tm_read_u64(&g_counter[0]) + 1);
        hps_tm_write_u64(&g_counter[1], hps_tm_read_u64(&g_counter[1]) + 1);
        HPS_TM_END();
    }
    return NULL;
}

static void case_counter(void)
{
    g_iters *= 25;
    run_threads(THREADS, counter_thread);
    HPS_CHECK(g_counter[0] == THREADS * g_iters && g_counter[1] == THREADS * g_iters,
              "counters %llu %llu, expected %lu: lost updates", (unsigned long long)g_counter[0],
              (unsigned long long)g_counter[1], THREADS * g_iters);
}

/* ---- opacity ---------------------------------------------------------------- */

/* x + y is constant; a reader checks it between two reads. */
static struct { uint64_t x; char pad[120]; uint64_t y; } g_xy = { 500, { 0 }, 500 };
/* a == b always; 1000 / (a - b + 1) divides by zero only if a is read old
 * and b new. */
static struct { int64_t a; char pad[120]; int64_t b; } g_ab;

static void *sum_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg + 1;
    for (unsigned long i = 0; i < g_iters; i++) {
        if ((uintptr_t)arg % 2) {
            uint64_t d = rnd(&s) % 100;
            HPS_TM_BEGIN();
            uint64_t x = hps_tm_read_u64(&g_xy.x), y = hps_tm_read_u64(&g_xy.y);
            if (x >= d) {
                hps_tm_write_u64(&g_xy.x, x - d);
                gap();               /* a window for backends that store in place */
                hps_tm_write_u64(&g_xy.y, y + d);
            }
            HPS_TM_END();
        } else {
            HPS_TM_BEGIN_RO();
            uint64_t x = hps_tm_read_u64(&g_xy.x);
            gap();
            uint64_t y = hps_tm_read_u64(&g_xy.y);
            if (x + y != 1000)
                hps_test_fail("a section saw x + y = %llu (x %llu, y %llu): not opaque",
                              (unsigned long long)(x + y), (unsigned long long)x, (unsigned long long)y);
            HPS_TM_END();
        }
    }
    return NULL;
}

static void on_fpe(int sig)
{
    static const char m[] = "tm: FAIL divided by zero: a section used an inconsistent read\n";
    (void)!write(2, m, sizeof m - 1);
    _exit(1);
}

static void *div_thread(void *arg)
{
    for (unsigned long i = 0; i < g_iters; i++) {
        if ((uintptr_t)arg % 2) {
            HPS_TM_BEGIN();
            int64_t k = HPS_TM_READ(&g_ab.a);
            HPS_TM_WRITE(&g_ab.a, k + 1);
            gap();
            HPS_TM_WRITE(&g_ab.b, k + 1);
            HPS_TM_END();
        } else {
            HPS_TM_BEGIN_RO();
            int64_t a = HPS_TM_READ(&g_ab.a);
            gap();
            int64_t b = HPS_TM_READ(&g_ab.b);
            volatile int64_t q = 1000 / (a - b + 1);
            if (q != 1000)
                hps_test_fail("a section saw a %lld, b %lld: not opaque", (long long)a, (long long)b);
            HPS_TM_END();
        }
    }
    return NULL;
}

/* A chain of nodes that writers unlink (marking them dead) and free, and
 * replace with new ones; readers walk it.  Nodes are above the mmap
 * threshold, so a freed node is unmapped: a reader that touched one after
 * its reclamation would fault. */
#define CHAIN 32
#define NODE_BYTES (80 * 1024)
enum { LIVE = 0x11fe, DEAD = 0xdead };
typedef struct node {
    uint64_t magic;
    char body[NODE_BYTES - 2 * sizeof(uint64_t)];
    struct node *next;
} node_t;
static node_t *g_head;

static node_t *new_node(void)
{
    node_t *n = hps_tm_malloc(sizeof *n);
    HPS_CHECK(n != NULL, "hps_tm_malloc failed");
    n->magic = LIVE;                 /* private until the section commits */
    n->next = NULL;
    return n;
}

static void *chain_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg * 31 + 7;
    for (unsigned long i = 0; i < g_iters; i++) {
        if ((uintptr_t)arg % 2) {
            unsigned pos = rnd(&s) % CHAIN;
            node_t *fresh = NULL;
            HPS_TM_BEGIN();
            fresh = new_node();      /* freed again if this attempt aborts */
            node_t **link = &g_head;
            for (unsigned k = 0; k < pos; k++)
                link = &((node_t *)HPS_TM_READ(link))->next;
            node_t *victim = HPS_TM_READ(link);
            fresh->next = HPS_TM_READ(&victim->next);
            HPS_TM_WRITE(link, fresh);
            HPS_TM_WRITE(&victim->magic, (uint64_t)DEAD);
            hps_tm_free(victim);
            HPS_TM_END();
        } else {
            HPS_TM_BEGIN_RO();
            unsigned len = 0;
            for (node_t *n = HPS_TM_READ(&g_head); n; n = HPS_TM_READ(&n->next)) {
                if (HPS_TM_READ(&n->magic) != LIVE)
                    hps_test_fail("a section reached a node with magic %#llx: not opaque",
                                  (unsigned long long)HPS_TM_READ(&n->magic));
                if (++len > CHAIN)
                    hps_test_fail("a section walked more than %d nodes", CHAIN);
                gap();
            }
            if (len != CHAIN)
                hps_test_fail("a section walked %u nodes, not %d", len, CHAIN);
            HPS_TM_END();
        }
    }
    return NULL;
}

static void case_chain(void)
{
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's allocator ignores mallopt; it holds freed nodes in
     * quarantine instead and reports any read of one, which is stricter. */
#else
    HPS_CHECK(mallopt(M_MMAP_THRESHOLD, 64 * 1024) == 1, "mallopt failed");
#endif
    node_t **link = &g_head;
    for (int i = 0; i < CHAIN; i++) {
        *link = new_node();
        link = &(*link)->next;
    }
    g_iters /= 4;
    run_threads(THREADS, chain_thread);
    unsigned len = 0;
    for (node_t *n = g_head; n; n = n->next, len++)
        HPS_CHECK(n->magic == LIVE, "a dead node is linked after the run");
    HPS_CHECK(len == CHAIN, "the chain has %u nodes after the run", len);
}

/* ---- allocation under aborts -------------------------------------------- */

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void case_alloc(void)
{
    static void *slot;
    size_t before = heap_in_use();
    for (int i = 0; i < 20000; i++) {
        int attempt = 0;
        void *old = NULL;
        HPS_TM_BEGIN();
        attempt++;
        void *p = hps_tm_malloc(1000);
        old = HPS_TM_READ(&slot);
        hps_tm_free(old);            /* deferred: a second free would abort */
        HPS_TM_WRITE(&slot, p);
        if (attempt == 1)
            hps_tm_restart();        /* p freed again, the free of old dropped */
        HPS_TM_END();
        HPS_CHECK(attempt == 2, "section ran %d times", attempt);
    }
    hps_tm_free(slot);
    /* One live block, some retired ones waiting for reclamation; the 20000
     * blocks of the aborted attempts (20 MB) must not be among them. */
    size_t after = heap_in_use();
    HPS_CHECK(after < before + 1024 * 1024, "heap grew by %zu bytes: aborted allocations leak",
              after - before);
    hps_tm_stats_t st;
    hps_tm_stats_get(&st);
    HPS_CHECK(st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT] == 20000, "explicit aborts %llu",
              (unsigned long long)st.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT]);
}

/* ---- irrevocable sections --------------------------------------------------- */

static int g_log_fd;
static hps_au64 g_irrev_done;

static void *irrev_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg * 13 + 5;
    for (unsigned long i = 0; i < g_iters; i++) {
        if ((uintptr_t)arg < 2 && i % 50 == 0) {
            uint64_t snap[ACCOUNTS];
            HPS_TM_BEGIN();
            uint64_t x = hps_tm_read_u64(&g_acct[0]);
            hps_tm_irrevocable();
            x = hps_tm_read_u64(&g_acct[0]);
            /* Alone: the bank is whole and nobody commits while we wait. */
            uint64_t sum = 0;
            for (int k = 0; k < ACCOUNTS; k++)
                sum += snap[k] = g_acct[k];
            HPS_CHECK(sum == (uint64_t)ACCOUNTS * START, "irrevocable section saw total %llu",
                      (unsigned long long)sum);
            usleep(200);
            for (int k = 0; k < ACCOUNTS; k++)
                HPS_CHECK(g_acct[k] == snap[k], "account %d changed during an irrevocable section", k);
            char line[64];
            int n = snprintf(line, sizeof line, "%lu %lu\n", (unsigned long)(uintptr_t)arg, i);
            HPS_CHECK(write(g_log_fd, line, n) == n, "write failed");
            hps_tm_write_u64(&g_acct[0], x);
            HPS_TM_END();
            atomic_fetch_add(&g_irrev_done, 1);
        } else {
            transfer(&s);
        }
    }
    return NULL;
}

static void case_irrevocable(void)
{
    char path[] = "/tmp/hps_tm_irrevXXXXXX";
    g_log_fd = mkstemp(path);
    HPS_CHECK(g_log_fd >= 0, "mkstemp failed");
    unlink(path);
    bank_init();
    run_threads(THREADS, irrev_thread);
    bank_check();
    off_t len = lseek(g_log_fd, 0, SEEK_END);
    char *buf = malloc(len + 1);
    HPS_CHECK(pread(g_log_fd, buf, len, 0) == len, "read back failed");
    unsigned long lines = 0;
    for (off_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    free(buf);
    uint64_t done = atomic_load(&g_irrev_done);
    HPS_CHECK(done == 2 * ((g_iters + 49) / 50), "%llu irrevocable sections ran", (unsigned long long)done);
    HPS_CHECK(lines == done, "%lu lines written by %llu irrevocable sections: I/O not exactly once",
              lines, (unsigned long long)done);
    hps_tm_stats_t st;
    hps_tm_stats_total(&st);
    HPS_CHECK(st.irrevocable >= done, "stats count %llu irrevocable sections, %llu ran",
              (unsigned long long)st.irrevocable, (unsigned long long)done);
}

/* ---- explicit restart, nesting, statistics ---------------------------------- */

static uint64_t g_x, g_y, g_flag;

static void *setter(void *arg)
{
    usleep(20000);
    HPS_TM_BEGIN();
    hps_tm_write_u64(&g_flag, 1);
    HPS_TM_END();
    return NULL;
}

static void case_restart(void)
{
    int attempts = 0;
    HPS_TM_BEGIN();
    attempts++;
    hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 1);
    if (attempts < 3)
        hps_tm_restart();
    HPS_TM_END();
    HPS_CHECK(g_x == 1 && attempts == 3, "x %llu after %d attempts: restart did not roll back",
              (unsigned long long)g_x, attempts);
    /* A restart as a wait for another thread's commit. */
    pthread_t t;
    pthread_create(&t, NULL, setter, NULL);
    HPS_TM_BEGIN();
    if (hps_tm_read_u64(&g_flag) == 0)
        hps_tm_restart();
    HPS_TM_END();
    pthread_join(t, NULL);
    HPS_CHECK(hps_tm_in_section() == 0, "in a section after END");
    /* Whole-word and sub-word writes over the same words, undone newest
     * first (sgl's undo log mixes one- and two-entry records). */
    static uint64_t mix[2];
    mix[0] = 0x1111111111111111ull;
    mix[1] = 0x2222222222222222ull;
    attempts = 0;
    HPS_TM_BEGIN();
    attempts++;
    if (attempts == 1) {
        hps_tm_write_u8((uint8_t *)&mix[0] + 1, 0xaa);
        hps_tm_write_u64(&mix[0], 5);
        hps_tm_write_u16((uint16_t *)&mix[1] + 2, 0xbbbb);
        hps_tm_write_u64(&mix[1], 7);
        hps_tm_write_u32((uint32_t *)&mix[0], 9);
        hps_tm_write_u8((uint8_t *)&mix[1] + 7, 0xcc);
        hps_tm_restart();
    }
    HPS_TM_END();
    HPS_CHECK(mix[0] == 0x1111111111111111ull && mix[1] == 0x2222222222222222ull,
              "after a rollback the words hold %016llx %016llx", (unsigned long long)mix[0],
              (unsigned long long)mix[1]);
}

static void case_nesting(void)
{
    int attempts = 0;
    HPS_CHECK(!hps_tm_in_section(), "in a section before BEGIN");
    HPS_TM_BEGIN();
    attempts++;
    HPS_CHECK(hps_tm_read_u64(&g_x) == 0 && hps_tm_read_u64(&g_y) == 0,
              "attempt %d saw writes of an aborted attempt", attempts);
    hps_tm_write_u64(&g_x, 1);
    HPS_TM_BEGIN();
    hps_tm_write_u64(&g_y, 1);
    if (attempts == 1)
        hps_tm_restart();            /* restarts the outermost section */
    HPS_TM_END();
    HPS_CHECK(hps_tm_in_section(), "an inner END left the section");
    HPS_CHECK(hps_tm_read_u64(&g_y) == 1, "inner write lost at the inner END");
    HPS_TM_END();
    HPS_CHECK(!hps_tm_in_section(), "in a section after the outer END");
    HPS_CHECK(attempts == 2 && g_x == 1 && g_y == 1, "attempts %d, x %llu, y %llu", attempts,
              (unsigned long long)g_x, (unsigned long long)g_y);
}

static void *stats_thread(void *arg)
{
    for (int i = 0; i < 100; i++) {
        HPS_TM_BEGIN();
        hps_tm_write_u64(&g_y, hps_tm_read_u64(&g_y) + 1);
        HPS_TM_END();
    }
    return NULL;
}

static void case_stats(void)
{
    const char *b = hps_tm_backend_name();
    /* Hardware sections read with plain loads and may abort for hardware
     * causes (injected here); those aborts are counted apart, and hybrid's
     * software sections log their reads. */
    int hw = !strcmp(b, "htm") || !strcmp(b, "hybrid");
    int instrumented = strcmp(b, "sgl") != 0 && strcmp(b, "htm") != 0 && strcmp(b, "solo") != 0;
    for (int i = 0; i < 10; i++) {    /* 10 sections: 3 reads, 2 writes */
        int tries = 0;
        HPS_TM_BEGIN();
        tries++;
        uint64_t a = hps_tm_read_u64(&g_x), b = hps_tm_read_u64(&g_y);
        (void)hps_tm_read_u64(&g_flag);
        hps_tm_write_u64(&g_x, a + 1);
        hps_tm_write_u64(&g_y, b + 1);
        if (i < 4 && tries == 1)
            hps_tm_restart();
        HPS_TM_END();
    }
    for (int i = 0; i < 5; i++) {     /* 5 read-only sections */
        HPS_TM_BEGIN_RO();
        (void)hps_tm_read_u64(&g_x);
        HPS_TM_END();
    }
    int tries = 0;                    /* a write in BEGIN_RO: one restart */
    HPS_TM_BEGIN_RO();
    tries++;
    hps_tm_write_u64(&g_flag, 7);
    HPS_TM_END();
    hps_tm_stats_t st;
    hps_tm_stats_get(&st);
#define EQ(field, want) HPS_CHECK(st.field == (want), #field " is %llu, expected %llu", \
                                  (unsigned long long)st.field, (unsigned long long)(want))
    uint64_t hw_aborts = st.aborts_by_cause[HPS_TM_CAUSE_HTM_CONFLICT] +
                         st.aborts_by_cause[HPS_TM_CAUSE_HTM_CAPACITY] +
                         st.aborts_by_cause[HPS_TM_CAUSE_HTM_OTHER];
    HPS_CHECK(hw || hw_aborts == 0, "%llu hardware aborts on a software backend",
              (unsigned long long)hw_aborts);
    EQ(commits, 16);
    EQ(commits_ro, 5);
    EQ(aborts - hw_aborts, 5);
    EQ(aborts_by_cause[HPS_TM_CAUSE_EXPLICIT], 4);
    EQ(aborts_by_cause[HPS_TM_CAUSE_RO_WRITE], 1);
    if (hw)
        HPS_CHECK(st.retries >= 5 && st.retries <= 16, "retries %llu", (unsigned long long)st.retries);
    else
        EQ(retries, 5);
    EQ(writes, 21);
    EQ(max_write_set, 2);
    if (hw && instrumented) {          /* hybrid: only its software sections log reads */
        HPS_CHECK(st.reads <= 35 && st.max_read_set <= 3, "reads %llu, largest read set %llu",
                  (unsigned long long)st.reads, (unsigned long long)st.max_read_set);
    } else {
        /* The read-only sections' first attempts keep no read log. */
        EQ(reads, instrumented ? 30 : 0);
        EQ(max_read_set, instrumented ? 3 : 0);
    }
    HPS_CHECK(tries == 2 && g_flag == 7, "read-only write: %d tries", tries);
    /* An exited thread's counts stay in the total. */
    run_threads(1, stats_thread);
    hps_tm_stats_total(&st);
    EQ(commits, 116);
    HPS_CHECK(!strcmp(hps_tm_cause_name(HPS_TM_CAUSE_EXPLICIT), "explicit"), "cause name");
#undef EQ
}

/* ---- sub-word and floating-point accesses ------------------------------------ */

static struct {
    uint8_t b[8];
    uint16_t h[4];
    uint32_t w[2];
    float f;
    double d;
    uint8_t mixed[8];                 /* [0] in sections, [7] plain by thread 0 */
} g_sw;

static void *subword_thread(void *arg)
{
    unsigned t = (uintptr_t)arg;
    for (unsigned long i = 0; i < g_iters; i++) {
        HPS_TM_BEGIN();
        HPS_TM_WRITE(&g_sw.b[t], HPS_TM_READ(&g_sw.b[t]) + 1);
        HPS_TM_WRITE(&g_sw.h[t % 4], HPS_TM_READ(&g_sw.h[t % 4]) + 1);
        HPS_TM_WRITE(&g_sw.w[t % 2], HPS_TM_READ(&g_sw.w[t % 2]) + 1);
        hps_tm_write_float(&g_sw.f, hps_tm_read_float(&g_sw.f) + 1.0f);
        hps_tm_write_double(&g_sw.d, hps_tm_read_double(&g_sw.d) + 1.0);
        hps_tm_write_u8(&g_sw.mixed[0], hps_tm_read_u8(&g_sw.mixed[0]) + 1);
        HPS_TM_END();
        if (t == 0)                  /* a neighbour byte that no section writes */
            __atomic_store_n(&g_sw.mixed[7], (uint8_t)(i + 1), __ATOMIC_RELAXED);
    }
    return NULL;
}

static void case_subword(void)
{
    g_iters = 200;                   /* the 8-bit counters must not wrap */
    run_threads(THREADS, subword_thread);
    for (int t = 0; t < 8; t++)
        HPS_CHECK(g_sw.b[t] == 200, "b[%d] = %u", t, g_sw.b[t]);
    for (int t = 0; t < 4; t++)
        HPS_CHECK(g_sw.h[t] == 400, "h[%d] = %u", t, g_sw.h[t]);
    HPS_CHECK(g_sw.w[0] == 800 && g_sw.w[1] == 800, "w = %u %u", g_sw.w[0], g_sw.w[1]);
    HPS_CHECK(g_sw.f == 1600.0f && g_sw.d == 1600.0, "f %g d %g", g_sw.f, g_sw.d);
    HPS_CHECK(g_sw.mixed[0] == (uint8_t)1600 && g_sw.mixed[7] == 200,
              "mixed word: %u and %u: a write-back overwrote a neighbour", g_sw.mixed[0], g_sw.mixed[7]);
}

/* ---- fork and thread exit ------------------------------------------------------ */

static void *fork_worker(void *arg)
{
    uint64_t s = (uintptr_t)arg + 11;
    while (!atomic_load(&g_stop))
        transfer(&s);
    return NULL;
}

static void child_work(void)
{
    hps_test_watchdog(30);
    g_iters = 300;
    run_threads(2, bank_thread);
    bank_check();
    _exit(0);
}

static void case_fork(void)
{
    bank_init();
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, fork_worker, (void *)i);
    for (int i = 0; i < 20; i++) {
        pid_t pid;
        if (i % 4 == 3) {            /* from inside an irrevocable section */
            HPS_TM_BEGIN();
            hps_tm_irrevocable();
            pid = fork();
            HPS_TM_END();
            if (pid == 0)
                child_work();
        } else {
            pid = fork();
            if (pid == 0)
                child_work();
        }
        HPS_CHECK(pid > 0, "fork failed");
        int status;
        HPS_CHECK(waitpid(pid, &status, 0) == pid, "waitpid failed");
        HPS_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed (status %#x)", i, status);
        usleep(1000);
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    bank_check();
}

static void *exit_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg + 3;
    for (int i = 0; i < 100; i++)
        transfer(&s);
    return NULL;
}

static void case_thread_exit(void)
{
    bank_init();
    for (int wave = 0; wave < 40; wave++)
        run_threads(THREADS, exit_thread);
    bank_check();
    hps_tm_stats_t st;
    hps_tm_stats_total(&st);
    HPS_CHECK(st.commits == 40 * THREADS * 100, "total commits %llu after threads exited, expected %d",
              (unsigned long long)st.commits, 40 * THREADS * 100);
}

/* ---- privatization --------------------------------------------------------- */

/* One thread publishes a node (x + y == PRIV_SUM) through g_pub in a section,
 * later unlinks it in a section and then, outside any section, writes the
 * node plainly into a state that breaks the sum before it repairs and
 * republishes it.  Readers follow g_pub inside sections and check the sum
 * between two reads: a doomed reader that kept the pointer past the unlink
 * must abort rather than see the plain writes (opacity with privatization). */
#define PRIV_SUM 1000
#define PRIV_NODES 4
typedef struct pnode {
    uint64_t x, y;
} pnode_t;
static pnode_t g_pnodes[PRIV_NODES];
static pnode_t *g_pub;

/* Inside a section: follow g_pub, check the node's sum between two reads
 * (and, in a read-write section, write something). */
static void priv_visit(int write)
{
    pnode_t *p = hps_tm_read_ptr((void *const *)&g_pub);
    if (!p)
        return;
    uint64_t a = hps_tm_read_u64(&p->x);
    gap();
    uint64_t b = hps_tm_read_u64(&p->y);
    if (a + b != PRIV_SUM)
        hps_test_fail("a %s section saw a privatized node: %llu + %llu",
                      write ? "read-write" : "read-only", (unsigned long long)a,
                      (unsigned long long)b);
    if (write)
        hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 1);
}

static void *priv_reader(void *arg)
{
    int ro = (uintptr_t)arg & 1;
    while (!hps_load_acquire(&g_stop)) {
        if (ro) {
            HPS_TM_BEGIN_RO();
            priv_visit(0);
            HPS_TM_END();
        } else {
            HPS_TM_BEGIN();
            priv_visit(1);
            HPS_TM_END();
        }
    }
    return NULL;
}

static void case_privatize(void)
{
    pthread_t t[THREADS - 1];
    for (int i = 0; i < PRIV_NODES; i++)
        g_pnodes[i] = (pnode_t){ i, PRIV_SUM - i };
    g_pub = &g_pnodes[0];
    for (uintptr_t i = 0; i < THREADS - 1; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, priv_reader, (void *)i), 0);
    for (unsigned long k = 1; k <= 3000; k++) {
        pnode_t *p = NULL;
        HPS_TM_BEGIN();
        p = hps_tm_read_ptr((void *const *)&g_pub);
        hps_tm_write_ptr((void **)&g_pub, NULL);
        HPS_TM_END();
        /* Private now: break the sum, then repair it with new values. */
        p->x = 1;
        gap();
        p->y = 1;
        gap();
        p->x = k;
        p->y = PRIV_SUM - k;
        pnode_t *q = &g_pnodes[k % PRIV_NODES];
        HPS_TM_BEGIN();
        hps_tm_write_ptr((void **)&g_pub, q);
        HPS_TM_END();
        if (k % 64 == 0)
            sched_yield();           /* let the readers run into the gaps */
    }
    hps_store_release(&g_stop, 1);
    for (int i = 0; i < THREADS - 1; i++)
        pthread_join(t[i], NULL);
}

/* ---- hardware sections under injected outcomes (htm, hybrid) ---------------- */

/* One section that adds 1 to g_x; 1 if it ran as a hardware section (the
 * injected backend holds the section's lock: elision says "in a section"). */
static int hw_section(void)
{
    int hw = 0;
    HPS_TM_BEGIN();
    hw = hps_elide_in_section();
    hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 1);
    HPS_TM_END();
    HPS_CHECK(!hps_elide_in_section(), "still in an elided section after END");
    return hw;
}

#define CAUSE(st, c) ((unsigned long long)(st).aborts_by_cause[HPS_TM_CAUSE_##c])

/* The elision policy, end to end: run with HPSYNC_ELIDE_BACKEND=
 * inject:retry*3,commit,capacity,busy*3,conflict,explicit:1,commit and
 * elision's defaults (3 retries, 3 failures before a skip of 16). */
static void case_hw_policy(void)
{
    /* Section: outcomes consumed -> where it ran. */
    int want[22], got[22];
    want[0] = 1;                      /* retry x3 (retried: 3 < 3 retries), commit */
    want[1] = 0;                      /* capacity: never retried */
    want[2] = 0;                      /* busy x3 (waits, retries), conflict without RETRY */
    want[3] = 0;                      /* explicit:1; the third failure in a row */
    for (int i = 4; i < 20; i++)
        want[i] = 0;                  /* the skip period: 16 sections, no outcome consumed */
    want[20] = 1;                     /* commit */
    want[21] = 1;                     /* the sequence again: retry x3, commit */
    for (int i = 0; i < 22; i++)
        got[i] = hw_section();
    for (int i = 0; i < 22; i++)
        HPS_CHECK(got[i] == want[i], "section %d ran in %s, expected %s", i,
                  got[i] ? "hardware" : "software", want[i] ? "hardware" : "software");
    hps_tm_stats_t st;
    hps_tm_stats_get(&st);
    HPS_CHECK(g_x == 22, "x is %llu after 22 sections", (unsigned long long)g_x);
    HPS_CHECK(st.commits == 22 && st.aborts == 12 && st.retries == 5,
              "commits %llu aborts %llu retried %llu, expected 22, 12, 5",
              (unsigned long long)st.commits, (unsigned long long)st.aborts,
              (unsigned long long)st.retries);
    /* busy (the lock held) counts as a hardware conflict. */
    HPS_CHECK(CAUSE(st, HTM_CONFLICT) == 10 && CAUSE(st, HTM_CAPACITY) == 1 && CAUSE(st, HTM_OTHER) == 1,
              "htm_conflict %llu htm_capacity %llu htm_other %llu, expected 10, 1, 1",
              CAUSE(st, HTM_CONFLICT), CAUSE(st, HTM_CAPACITY), CAUSE(st, HTM_OTHER));
}

/* A section's own aborts inside a hardware section: run with
 * HPSYNC_ELIDE_BACKEND=inject:commit (every begin starts). */
static void case_hw_own(void)
{
    int attempts = 0, hw1 = 0, hw2 = 0;
    HPS_TM_BEGIN();                   /* restart: rolled back, re-run in hardware */
    attempts++;
    *(attempts == 1 ? &hw1 : &hw2) = hps_elide_in_section();
    hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 1);
    if (attempts == 1)
        hps_tm_restart();
    HPS_TM_END();
    HPS_CHECK(attempts == 2 && hw1 && hw2 && g_x == 1, "restart: %d attempts (hardware %d %d), x %llu",
              attempts, hw1, hw2, (unsigned long long)g_x);
    attempts = 0;
    HPS_TM_BEGIN_RO();                /* a write in a read-only section: re-run read-write */
    attempts++;
    hps_tm_write_u64(&g_y, 5);
    HPS_TM_END();
    HPS_CHECK(attempts == 2 && g_y == 5, "read-only write: %d attempts, y %llu", attempts,
              (unsigned long long)g_y);
    attempts = 0;
    int alone = 0;
    HPS_TM_BEGIN();                   /* irrevocable: leaves hardware, then runs alone */
    attempts++;
    hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 1);
    hps_tm_irrevocable();
    alone = !hps_elide_in_section();
    HPS_TM_END();
    HPS_CHECK(attempts == 2 && alone && g_x == 2, "irrevocable: %d attempts, hardware %d, x %llu",
              attempts, !alone, (unsigned long long)g_x);
    hps_tm_stats_t st;
    hps_tm_stats_get(&st);
    /* Writes: the restarted and the read-only sections' (an irrevocable one logs none). */
    HPS_CHECK(st.commits == 3 && st.aborts == 3 && CAUSE(st, EXPLICIT) == 1 && CAUSE(st, RO_WRITE) == 1 &&
              CAUSE(st, IRREVOCABLE) == 1 && st.irrevocable == 1 && st.writes == 2,
              "commits %llu aborts %llu explicit %llu ro_write %llu irrevocable %llu/%llu writes %llu",
              (unsigned long long)st.commits, (unsigned long long)st.aborts, CAUSE(st, EXPLICIT),
              CAUSE(st, RO_WRITE), CAUSE(st, IRREVOCABLE), (unsigned long long)st.irrevocable,
              (unsigned long long)st.writes);
}
#undef CAUSE

/* ---- the backend choice ------------------------------------------------------ */

static void case_backend(const char *want)
{
    HPS_CHECK(want != NULL, "usage: tm_test backend NAME");
    HPS_CHECK(!strcmp(hps_tm_backend_name(), want), "backend %s, expected %s", hps_tm_backend_name(), want);
    /* It works, whatever was chosen. */
    g_iters = 200;
    bank_init();
    run_threads(2, bank_thread);
    bank_check();
}

/* auto (run with HPSYNC_TM_AUTO_CPUS=64, so that its rule does not depend on
 * this machine): solo (sgl without the lock) for one thread, norec for 2 to
 * 4, stm beyond, and back when threads exit. */
static pthread_barrier_t g_bar;

static void *auto_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg + 1;
    transfer(&s);                    /* counts the thread in */
    pthread_barrier_wait(&g_bar);    /* all at once */
    return bank_thread(arg);
}

static void expect_backend(const char *want, const char *when)
{
    HPS_CHECK(!strcmp(hps_tm_backend_name(), want), "auto %s runs %s, expected %s", when,
              hps_tm_backend_name(), want);
}

static void case_auto(void)
{
    uint64_t s = 1;
    bank_init();
    transfer(&s);
    expect_backend("solo", "with 1 thread");
    g_iters = 300;
    pthread_barrier_init(&g_bar, NULL, THREADS);
    run_threads(THREADS, auto_thread);
    bank_check();
    /* The last to exit switched back. */
    expect_backend("solo", "after the threads exited");
    transfer(&s);
    bank_check();
}

/* auto switching with sections in flight: background threads run
 * transfers and audits without pause while others come and go, so each
 * switch (solo -> norec -> stm -> solo) drains running sections, and a
 * lone thread's lock-free solo sections end before a second thread's
 * first one begins. */
static hps_au32 g_started;

static void *churn_thread(void *arg)
{
    uint64_t s = (uintptr_t)arg * 31 + 7;
    transfer(&s);
    hps_faa_release(&g_started, 1);
    for (unsigned long i = 0; !hps_load_acquire(&g_stop); i++) {
        if (i % 5 == 4)
            audit();
        else
            transfer(&s);
    }
    return NULL;
}

static void wait_started(uint32_t n)
{
    while (hps_load_acquire(&g_started) < n)
        sched_yield();
}

static void case_auto_churn(void)
{
    uint64_t s = 3;
    bank_init();
    for (int round = 0; round < 3; round++) {
        pthread_t t[THREADS];
        hps_store_relaxed(&g_stop, 0);
        hps_store_relaxed(&g_started, 0);
        transfer(&s);
        expect_backend("solo", "with 1 thread");
        HPS_CHECK_RC("pthread_create", pthread_create(&t[0], NULL, churn_thread, (void *)0), 0);
        wait_started(1);
        expect_backend("norec", "with 2 threads");
        for (int i = 0; i < 200; i++)
            transfer(&s);
        for (uintptr_t i = 1; i < THREADS; i++)
            HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, churn_thread, (void *)i), 0);
        wait_started(THREADS);
        expect_backend("stm", "with 9 threads");
        for (int i = 0; i < 200; i++)
            transfer(&s);
        hps_store_release(&g_stop, 1);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        expect_backend("solo", "after the threads exited");
        bank_check();
    }
}

/* auto on a small machine (HPSYNC_TM_AUTO_CPUS=2): solo alone, sgl with two
 * threads. */
static void case_auto_small(void)
{
    uint64_t s = 5;
    bank_init();
    transfer(&s);
    expect_backend("solo", "with 1 thread");
    pthread_t t;
    hps_store_relaxed(&g_stop, 0);
    hps_store_relaxed(&g_started, 0);
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, churn_thread, (void *)0), 0);
    wait_started(1);
    expect_backend("sgl", "with 2 threads on 2 CPUs");
    for (int i = 0; i < 500; i++)
        transfer(&s);
    hps_store_release(&g_stop, 1);
    pthread_join(t, NULL);
    expect_backend("solo", "after the thread exited");
    bank_check();
}

int main(int argc, char **argv)
{
    HPS_CHECK(argc >= 2, "usage: tm_test CASE [ARG]");
    static char name[64];
    snprintf(name, sizeof name, "tm.%s", argv[1]);
    hps_test_set_name(name);
    hps_test_watchdog(90);
    signal(SIGFPE, on_fpe);
    const char *c = argv[1];
    if (!strcmp(c, "bank")) {
        if (argc > 2)                /* a longer run, for timing by hand */
            g_iters = hps_test_ulong(argv[2], "iterations");
        case_bank();
    }
    else if (!strcmp(c, "counter"))
        case_counter();
    else if (!strcmp(c, "opacity_sum"))
        run_threads(THREADS, sum_thread);
    else if (!strcmp(c, "opacity_div"))
        run_threads(THREADS, div_thread);
    else if (!strcmp(c, "opacity_chain"))
        case_chain();
    else if (!strcmp(c, "alloc"))
        case_alloc();
    else if (!strcmp(c, "irrevocable"))
        case_irrevocable();
    else if (!strcmp(c, "restart"))
        case_restart();
    else if (!strcmp(c, "nesting"))
        case_nesting();
    else if (!strcmp(c, "stats"))
        case_stats();
    else if (!strcmp(c, "subword"))
        case_subword();
    else if (!strcmp(c, "fork"))
        case_fork();
    else if (!strcmp(c, "thread_exit"))
        case_thread_exit();
    else if (!strcmp(c, "hw_policy"))
        case_hw_policy();
    else if (!strcmp(c, "hw_own"))
        case_hw_own();
    else if (!strcmp(c, "auto"))
        case_auto();
    else if (!strcmp(c, "privatize"))
        case_privatize();
    else if (!strcmp(c, "auto_churn"))
        case_auto_churn();
    else if (!strcmp(c, "auto_small"))
        case_auto_small();
    else if (!strcmp(c, "backend"))
        case_backend(argv[2]);
    else
        hps_test_fail("unknown case %s", c);
    printf("%s: ok (backend %s)\n", name, hps_tm_backend_name());
    return 0;
}
