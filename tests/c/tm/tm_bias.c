// SPDX-License-Identifier: MIT
/*
 * tm_test's bias case (src/tm/bias.c): a thread that runs sections alone
 * takes the bias and runs them with plain stores of in_sec; other threads
 * that begin sections now and then revoke it.  Checked:
 *   - alone, the sections run on the bias (stats.solo), unless
 *     HPSYNC_TM_BIAS=0 or the backend is a hardware one;
 *   - a busy thread and a sporadic one (every ~200 us, so the bias is taken
 *     and revoked again and again) never see a half-done section of the
 *     other: x + y is constant inside every section, and no update is lost;
 *   - both replace a shared node (hps_tm_malloc / hps_tm_free) that the
 *     other reads inside its sections: under AddressSanitizer a block freed
 *     while the other side could still read it is a use-after-free.
 * bias_over runs two busy threads on one CPU (ctest pins it with taskset):
 * more threads than CPUs, where only the trial (src/tm/bias_trial.c) opens
 * the bias, and never on sgl.  The same invariants hold while the trial
 * opens and closes it, both threads progress, and on sgl the thread that
 * started oversubscribed never runs a section on the bias.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "hpsync/tm_coarsen.h"
#include "tm_test.h"

#define BIAS_SUM (1ull << 40)

typedef struct bias_node {
    uint64_t val, check;             /* check == ~val while the node is live */
} bias_node_t;

static bias_node_t *g_node;
static hps_au32 g_bias_stop;
static hps_au64 g_theirs;            /* the sporadic thread's sections */

/* One section: move one unit from y to x (checking the sum), and every
 * `swap` sections replace the node by a copy (freeing the old one). */
static void bias_step(unsigned long i, unsigned long swap)
{
    HPS_TM_BEGIN();
    uint64_t x = hps_tm_read_u64(&g_x), y = hps_tm_read_u64(&g_y);
    HPS_CHECK(x + y == BIAS_SUM, "a section saw x + y = %llu", (unsigned long long)(x + y));
    hps_tm_write_u64(&g_x, x + 1);
    hps_tm_write_u64(&g_y, y - 1);
    bias_node_t *n = hps_tm_read_ptr((void *const *)&g_node);
    uint64_t v = hps_tm_read_u64(&n->val);
    HPS_CHECK(hps_tm_read_u64(&n->check) == ~v, "a section read a dead node");
    if (i % swap == 0) {
        bias_node_t *m = hps_tm_malloc(sizeof *m);
        HPS_CHECK(m != NULL, "hps_tm_malloc failed");
        m->val = v + 1;
        m->check = ~(v + 1);
        hps_tm_write_ptr((void **)&g_node, m);
        hps_tm_free(n);
    }
    HPS_TM_END();
}

static void *sporadic(void *arg)
{
    (void)arg;
    while (!hps_load_acquire(&g_bias_stop)) {
        struct timespec ts = { 0, 200 * 1000 };
        nanosleep(&ts, NULL);
        bias_step(1, 1);
        hps_store_release(&g_theirs, hps_load_relaxed(&g_theirs) + 1);
    }
    return NULL;
}

static uint64_t solo_now(void)
{
    hps_tm_stats_t s;
    hps_tm_stats_get(&s);
    return s.solo;
}

/* The shared state at its start: x + y = BIAS_SUM, one live node. */
static void bias_reset(void)
{
    g_x = 0;
    g_y = BIAS_SUM;
    g_node = malloc(sizeof *g_node);
    g_node->val = 0;
    g_node->check = ~(uint64_t)0;
    hps_store_relaxed(&g_bias_stop, 0);
}

/* Sections from `mine` on, for at least min_ns, and longer (up to max_ns)
 * while the other thread's count is under `theirs_min`; then stops it.
 * Returns the next `mine`; *elapsed the time taken (ns). */
static unsigned long bias_run(unsigned long mine, long min_ns, long max_ns, const hps_au64 *theirs,
                              uint64_t theirs_min, long *elapsed)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long ns;
    do {
        for (int k = 0; k < 256; k++, mine++)
            bias_step(mine, 64);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
    } while (ns < min_ns || (ns < max_ns && hps_load_acquire(theirs) < theirs_min));
    hps_store_release(&g_bias_stop, 1);
    *elapsed = ns;
    return mine;
}

/* After both threads stopped: no update lost, the sum kept, the node whole. */
static void bias_check(unsigned long mine, unsigned long theirs)
{
    HPS_CHECK(g_x == mine + theirs, "x is %llu after %lu + %lu sections", (unsigned long long)g_x, mine,
              theirs);
    HPS_CHECK(g_x + g_y == BIAS_SUM, "x + y is %llu", (unsigned long long)(g_x + g_y));
    HPS_CHECK(g_node->check == ~g_node->val, "the last node is damaged");
}

void case_bias(void)
{
    const char *env = getenv("HPSYNC_TM_BIAS");
    const char *b = hps_tm_backend_name();
    int hw = !strcmp(b, "htm") || !strcmp(b, "hybrid");
    int want = !(env && !strcmp(env, "0")) && !hw;
    bias_reset();

    /* Alone: the bias is taken after a few hundred sections. */
    unsigned long mine = 0;
    for (; mine < 5000; mine++)
        bias_step(mine, 64);
    uint64_t alone = solo_now();
    if (want)
        HPS_CHECK(alone > 4000, "%s: %llu of 5000 sections alone ran on the bias", b, (unsigned long long)alone);
    else
        HPS_CHECK(alone == 0, "%s: %llu sections ran on the bias with it off", b, (unsigned long long)alone);

    /* With a sporadic second thread: taken and revoked, over and over. */
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, sporadic, NULL), 0);
    /* At least 300 ms and 100 sporadic sections (a loaded machine may take
     * seconds to run them); 10 s at most. */
    long ns;
    mine = bias_run(mine, 300000000L, 10000000000L, &g_theirs, 100, &ns);
    pthread_join(t, NULL);
    unsigned long theirs = (unsigned long)hps_load_relaxed(&g_theirs);
    uint64_t shared = solo_now() - alone;
    bias_check(mine, theirs);
    /* (The hardware backends' emulation here serializes sections on a lock
     * the busy thread takes again and again: only progress is checked.) */
    HPS_CHECK(theirs >= (hw ? 1u : 100u), "the sporadic thread ran only %lu sections in %.1f s", theirs, ns / 1e9);
    if (want)
        HPS_CHECK(shared > 0, "%s: no section ran on the bias beside a sporadic thread", b);
    printf("bias (%s, %s): alone %llu of 5000 on the bias; beside a sporadic thread %llu of %lu, "
           "sporadic sections %lu\n", b, want ? "on" : "off", (unsigned long long)alone,
           (unsigned long long)shared, mine - 5000, theirs);
    free(g_node);
}

static hps_au64 g_other_solo, g_other_n;

static void *busy(void *arg)
{
    (void)arg;
    unsigned long i = 0;
    while (!hps_load_acquire(&g_bias_stop))
        bias_step(i++, 64);
    hps_store_relaxed(&g_other_solo, solo_now());
    hps_store_release(&g_other_n, i);
    return NULL;
}

void case_bias_over(void)
{
    cpu_set_t set;
    HPS_CHECK(sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1,
              "bias_over wants one CPU (run it under taskset -c 0)");
    const char *b = hps_tm_backend_name();
    bias_reset();
    /* This thread counts as using TM from its first section: the busy one
     * starts with more threads than CPUs. */
    unsigned long mine = 0;
    for (; mine < 1000; mine++)
        bias_step(mine, 64);
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, busy, NULL), 0);
    /* 400 ms: the trial's three 10 ms epochs several times over. */
    long ns;
    mine = bias_run(mine, 400000000L, 0, &g_other_n, 0, &ns);
    pthread_join(t, NULL);
    unsigned long theirs = (unsigned long)hps_load_acquire(&g_other_n);
    uint64_t their_solo = hps_load_relaxed(&g_other_solo);
    bias_check(mine, theirs);
    HPS_CHECK(mine > 2000 && theirs > 1000, "no progress: %lu and %lu sections in 400 ms", mine - 1000, theirs);
    if (!strcmp(b, "sgl"))
        HPS_CHECK(their_solo == 0, "sgl: %llu sections on the bias with 2 threads on 1 CPU",
                  (unsigned long long)their_solo);
    printf("bias_over (%s): %lu + %lu sections on 1 CPU in %.2f s, on the bias %llu + %llu\n", b, mine, theirs, ns / 1e9,
           (unsigned long long)(solo_now()), (unsigned long long)their_solo);
    free(g_node);
}

/* ---- bias_coarse: a bias that ran coarsened sections paid ----------------- */

/* A thread runs 512 sections of 1024 iterations, then waits outside any
 * section while another runs one section (revoking the bias, if held), 30
 * rounds.  Each bias so runs about 500 sections: fewer than the BIAS_PAYS
 * sections that pay for a revocation on sgl, but on norec and stm half a
 * million iterations whose instrumentation it saved, counted in ticks
 * (bias.c, bias_paid).  So there the wait stays short and nearly every
 * section runs on the bias; counting sections only, the wait doubled at
 * every revocation (up to 4096 ticks) and about 0.2 of them did (checked).
 * Taking turns, not a timer, makes the count the same on a loaded machine
 * and under the sanitizers. */
#define COARSE_CELLS 64
#define COARSE_ROUNDS 30
#define COARSE_BATCH (512L * 1024)
static uint64_t g_cells[COARSE_CELLS];
static hps_au32 g_turn;              /* odd: the revoker's turn */

static void coarse_iter(long i, void *arg)
{
    (void)arg;
    uint64_t *c = &g_cells[i % COARSE_CELLS];
    hps_tm_write_u64(c, hps_tm_read_u64(c) + 1);
}

static void wait_turn(uint32_t want)
{
    while (hps_load_acquire(&g_turn) != want)
        sched_yield();
}

static void *revoker(void *arg)
{
    (void)arg;
    for (uint32_t r = 0; r < COARSE_ROUNDS; r++) {
        wait_turn(2 * r + 1);
        HPS_TM_BEGIN();
        hps_tm_write_u64(&g_y, hps_tm_read_u64(&g_y) + 1);
        HPS_TM_END();
        hps_store_release(&g_turn, 2 * r + 2);
    }
    return NULL;
}

void case_bias_coarse(void)
{
    const char *env = getenv("HPSYNC_TM_BIAS");
    const char *b = hps_tm_backend_name();
    int want = !(env && !strcmp(env, "0")) && (!strcmp(b, "norec") || !strcmp(b, "stm"));
    memset(g_cells, 0, sizeof g_cells);
    g_y = 0;
    hps_store_relaxed(&g_turn, 0);
    pthread_t t;
    HPS_CHECK_RC("pthread_create", pthread_create(&t, NULL, revoker, NULL), 0);
    hps_tm_stats_t s0, s1;
    hps_tm_stats_get(&s0);
    long n = 0;
    for (uint32_t r = 0; r < COARSE_ROUNDS; r++) {
        wait_turn(2 * r);
        hps_tm_for(n, n + COARSE_BATCH, 1024, coarse_iter, NULL);
        n += COARSE_BATCH;
        hps_store_release(&g_turn, 2 * r + 1);
    }
    hps_tm_stats_get(&s1);
    pthread_join(t, NULL);
    for (int i = 0; i < COARSE_CELLS; i++)
        HPS_CHECK(g_cells[i] == (uint64_t)n / COARSE_CELLS, "cell %d is %llu after %ld iterations", i,
                  (unsigned long long)g_cells[i], n);
    HPS_CHECK(g_y == COARSE_ROUNDS, "the revoker's %d sections left %llu", COARSE_ROUNDS,
              (unsigned long long)g_y);
    uint64_t solo = s1.solo - s0.solo, secs = s1.commits - s0.commits;
    double share = secs ? (double)solo / (double)secs : 0;
    printf("bias_coarse (%s): %llu of %llu sections of 1024 on the bias (%.2f), revoked %d times\n", b,
           (unsigned long long)solo, (unsigned long long)secs, share, COARSE_ROUNDS);
    if (want)
        HPS_CHECK(share >= 0.5, "%s: %.2f of the sections of 1024 ran on the bias between revocations "
                  "512 sections apart, want 0.5+", b, share);
}

/* ---- membarrier_early: registered at load ---------------------------------- */

static uint64_t g_first_ns[2];

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *first_section(void *arg)
{
    uint64_t t0 = mono_ns();
    HPS_TM_BEGIN();
    hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 1);
    HPS_TM_END();
    g_first_ns[(uintptr_t)arg] = mono_ns() - t0;
    return NULL;
}

/* The library registers the process for membarrier(PRIVATE_EXPEDITED) when
 * it is loaded (src/tm/bias.c: registering costs an RCU grace period once a
 * second thread exists, which every thread's first section used to wait
 * for).  The expedited barrier itself fails with EPERM in a process that
 * has not registered, so it tells, before any section has run, whether the
 * load did: yes by default, no under HPSYNC_TM_BIAS=0 (TM_TEST_MB_WANT=0).
 * Then a second thread's first section must not take a grace period:
 * 2 threads begin their first sections together, the faster under 5 ms
 * (both took 10-14 ms with the registration at the first section here;
 * the faster one, so that one thread preempted on a loaded machine does
 * not fail the case). */
void case_membarrier_early(void)
{
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
        printf("%s: skipped: no membarrier(PRIVATE_EXPEDITED) here\n", hps_test_name());
        exit(77);
    }
    const char *want = getenv("TM_TEST_MB_WANT");
    int want_reg = !want || strcmp(want, "0") != 0;
    errno = 0;
    long r = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    HPS_CHECK((r == 0) == want_reg, "before any section: membarrier(PRIVATE_EXPEDITED) returned %ld (%s), want %s",
              r, r ? strerror(errno) : "ok", want_reg ? "registered at load" : "not registered (HPSYNC_TM_BIAS=0)");
    if (!want_reg)
        return;
    run_threads(2, first_section);
    uint64_t fast = g_first_ns[0] < g_first_ns[1] ? g_first_ns[0] : g_first_ns[1];
    HPS_CHECK(fast < 5000000, "the threads' first sections took %.3f and %.3f ms", (double)g_first_ns[0] / 1e6,
              (double)g_first_ns[1] / 1e6);
    HPS_CHECK(g_x == 2, "x is %llu after two sections", (unsigned long long)g_x);
}
