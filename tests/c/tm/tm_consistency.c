// SPDX-License-Identifier: MIT
/*
 * tm_test's cases on what sections see: the bank, a hot counter, opacity,
 * allocation under aborts, privatization.
 */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tm_test.h"
#include "hpsync/elide.h"

/* ---- bank: transfers and audits ------------------------------------------ */

uint64_t g_acct[ACCOUNTS];

void bank_init(void)
{
    for (int i = 0; i < ACCOUNTS; i++)
        g_acct[i] = START;
}

void transfer(uint64_t *s)
{
    unsigned a = hps_xorshift64(s) % ACCOUNTS, b = hps_xorshift64(s) % ACCOUNTS;
    uint64_t amt = hps_xorshift64(s) % 50;
    HPS_TM_BEGIN();
    uint64_t x = hps_tm_read_u64(&g_acct[a]);
    if (x >= amt && a != b) {
        uint64_t y = hps_tm_read_u64(&g_acct[b]);
        hps_tm_write_u64(&g_acct[a], x - amt);
        hps_tm_write_u64(&g_acct[b], y + amt);
    }
    HPS_TM_END();
}

void audit(void)
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

void bank_check(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < ACCOUNTS; i++)
        sum += g_acct[i];
    HPS_CHECK(sum == (uint64_t)ACCOUNTS * START, "final total %llu, not %llu",
              (unsigned long long)sum, (unsigned long long)ACCOUNTS * START);
}

void *bank_thread(void *arg)
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

void case_bank(void)
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

/* Two words in different stripes (the stm orecs cover 32 bytes each). */
static uint64_t g_counter[2 * 8] __attribute__((aligned(64)));
#define C0 g_counter[0]
#define C1 g_counter[8]

static void *counter_thread(void *arg)
{
    for (unsigned long i = 0; i < g_iters; i++) {
        HPS_TM_BEGIN();
        /* Two words: commit-time locking takes two orecs, so a commit can
         * find the second one held after taking the first. */
        hps_tm_write_u64(&C0, hps_tm_read_u64(&C0) + 1);
        hps_tm_write_u64(&C1, hps_tm_read_u64(&C1) + 1);
        HPS_TM_END();
    }
    return NULL;
}

void case_counter(void)
{
    g_iters *= 25;
    run_threads(THREADS, counter_thread);
    HPS_CHECK(C0 == THREADS * g_iters && C1 == THREADS * g_iters,
              "counters %llu %llu, expected %lu: lost updates", (unsigned long long)C0,
              (unsigned long long)C1, THREADS * g_iters);
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
            uint64_t d = hps_xorshift64(&s) % 100;
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

void on_fpe(int sig)
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
            unsigned pos = hps_xorshift64(&s) % CHAIN;
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

void case_chain(void)
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

void case_alloc(void)
{
    static void *slot;
    size_t before = heap_in_use();
    for (int i = 0; i < 20000; i++) {
        void *old = NULL;
        uint64_t r0 = tm_restarts();
        HPS_TM_BEGIN();
        void *p = hps_tm_malloc(1000);
        old = HPS_TM_READ(&slot);
        hps_tm_free(old);            /* deferred: a second free would abort */
        HPS_TM_WRITE(&slot, p);
        if (tm_restarts() == r0)
            hps_tm_restart();        /* p freed again, the free of old dropped */
        HPS_TM_END();
        HPS_CHECK(tm_restarts() == r0 + 1, "section restarted %llu times",
                  (unsigned long long)(tm_restarts() - r0));
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

void case_privatize(void)
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


void case_opacity_sum(void) { run_threads(THREADS, sum_thread); }
void case_opacity_div(void) { run_threads(THREADS, div_thread); }
