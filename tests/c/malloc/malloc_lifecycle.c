// SPDX-License-Identifier: MIT
/*
 * Process and thread life cycles around the allocator.
 *
 *   malloc_lifecycle fork [forks]
 *     Background threads allocate, free and swap blocks nonstop while the
 *     main thread forks again and again, so forks land in the middle of
 *     allocations (an allocator lock held, a heap half updated).  Each child
 *     checks and frees the blocks the forking thread owned, allocates and
 *     frees every kind of size, reallocs an inherited block, runs a new
 *     thread that allocates, and exits 0.  A child that deadlocks on a lock
 *     held at fork is killed by its own watchdog (exit 3) or by the parent
 *     after a timeout; either fails the test.
 *
 *   malloc_lifecycle handoff [generations]
 *     Two lineages of threads, as a server hands work from thread to
 *     thread: each thread of a lineage replaces random blocks of the
 *     lineage's window (mostly small, now and then up to 512 KiB) and
 *     exits, and the next one carries on with what it left; a quarter of
 *     the blocks go to the other lineage through a transfer array, to be
 *     freed by a thread that did not allocate them, alive or exited.  Runs with a 5 ms decay, so freed memory is given
 *     back and reused all the time.  Every block is checked when freed; a
 *     thread that spins on a corrupted list is caught by the watchdog, and
 *     resident memory must stay flat across generations.
 *
 *   malloc_lifecycle threads [count] [wave]
 *     Thousands of short threads (joined or detached) each allocate blocks,
 *     free blocks that earlier, now exited, threads left in a shared pool,
 *     leave some of their own there and exit.  The main thread frees what
 *     remains at the end.  Every block's pattern is checked when freed, and
 *     resident memory must stay flat after warm-up: an allocator that leaks
 *     the heaps of exited threads grows by megabytes per wave.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "malloc_util.h"

struct block {
    unsigned char *p;
    size_t size;
    uint64_t tag;
};

static struct block make_block(uint64_t *rng, size_t max, uint64_t tag)
{
    size_t n = hpm_size(rng, max);
    unsigned char *p = malloc(n);
    if (!p)
        hps_test_fail("malloc(%zu) returned NULL", n);
    hpm_fill(p, n, tag);
    return (struct block){ p, n, tag };
}

static void drop_block(struct block *b, const char *what)
{
    hpm_verify(b->p, b->size, b->tag, what);
    free(b->p);
    b->p = NULL;
}

/* ---- a pool of blocks shared between threads ---------------------------------- */

enum { POOL = 2048 };
static struct block pool[POOL];
static size_t pool_n;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Put b in the pool; if it is full, b is swapped with a random entry and
 * that one is returned to the caller to free. */
static struct block pool_swap(struct block b, uint64_t *rng)
{
    pthread_mutex_lock(&pool_lock);
    struct block out = { NULL, 0, 0 };
    if (pool_n < POOL) {
        pool[pool_n++] = b;
    } else {
        size_t i = hps_xorshift64(rng) % POOL;
        out = pool[i];
        pool[i] = b;
    }
    pthread_mutex_unlock(&pool_lock);
    return out;
}

static struct block pool_take(void)
{
    struct block out = { NULL, 0, 0 };
    pthread_mutex_lock(&pool_lock);
    if (pool_n > 0)
        out = pool[--pool_n];
    pthread_mutex_unlock(&pool_lock);
    return out;
}

static void pool_drain(const char *what)
{
    struct block b;
    while ((b = pool_take()).p)
        drop_block(&b, what);
}

/* ---- fork during allocation ------------------------------------------------------ */

static atomic_int stop;

static void *churn(void *arg)
{
    uint64_t rng = 0x51ED2701u + (uintptr_t)arg, tag = (uint64_t)(uintptr_t)arg << 40;
    struct block local[64] = { { 0 } };
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        /* Mostly bare allocator calls, so a fork most likely lands inside
         * one (holding whatever the allocator locks) ... */
        void *quick[16];
        for (unsigned k = 0; k < 16; k++)
            quick[k] = malloc(hpm_size(&rng, 4096));
        for (unsigned k = 0; k < 16; k++)
            free(quick[k]);
        /* ... and some blocks that live on and are checked. */
        unsigned i = (unsigned)(hps_xorshift64(&rng) % 64);
        if (local[i].p)
            drop_block(&local[i], "churn");
        local[i] = make_block(&rng, 1u << 20, ++tag);
        if ((hps_xorshift64(&rng) & 3) == 0) {
            /* Through the pool: freed by whichever thread takes it. */
            struct block old = pool_swap(local[i], &rng);
            local[i] = old;
        }
    }
    for (unsigned i = 0; i < 64; i++)
        if (local[i].p)
            drop_block(&local[i], "churn at exit");
    return NULL;
}

static void *child_thread(void *arg)
{
    uint64_t rng = 77;
    for (int i = 0; i < 200; i++) {
        struct block b = make_block(&rng, 1u << 20, (uint64_t)i + 1);
        drop_block(&b, "child thread");
    }
    return arg;
}

/* Runs in the child: only the forking thread's blocks are known to be
 * whole (other threads were stopped mid-write), and the pool's mutex may
 * be held by a thread that no longer exists, so it stays untouched. */
static void child(struct block *mine, unsigned n)
{
    hps_test_set_name("malloc_lifecycle[fork child]");
    hps_test_watchdog(10);
    for (unsigned i = 0; i + 1 < n; i++)
        drop_block(&mine[i], "inherited block");
    unsigned char *grown = realloc(mine[n - 1].p, mine[n - 1].size * 2 + 100);
    if (!grown)
        hps_test_fail("realloc of an inherited block returned NULL");
    hpm_verify_prefix(grown, mine[n - 1].size, mine[n - 1].size, mine[n - 1].tag,
                      "realloc of an inherited block");
    free(grown);
    uint64_t rng = 99;
    for (int i = 0; i < 300; i++) {
        struct block b = make_block(&rng, 4u << 20, 1000u + (uint64_t)i);
        drop_block(&b, "child");
    }
    void *z = calloc(1000, 100);
    HPS_CHECK(z, "calloc in the child returned NULL");
    hpm_verify_zero(z, 100000, "calloc in the child");
    free(z);
    pthread_t t;
    void *ret = NULL;
    if (pthread_create(&t, NULL, child_thread, &rng) != 0 || pthread_join(t, &ret) != 0 || ret != &rng)
        hps_test_fail("thread in the child failed");
    _exit(0);
}

static void test_fork(unsigned forks)
{
    enum { THREADS = 3, MINE = 16 };
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, churn, (void *)(i + 1)) != 0)
            hps_test_fail("pthread_create failed");
    uint64_t rng = 5, tag = 1;
    for (unsigned f = 0; f < forks; f++) {
        struct block mine[MINE];
        for (unsigned i = 0; i < MINE; i++)
            mine[i] = make_block(&rng, 2u << 20, tag++);
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            hps_test_fail("fork: %s", strerror(errno));
        if (pid == 0)
            child(mine, MINE);
        int st = hpm_wait_child(pid, 30, "fork child");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            hps_test_fail("fork %u: child %s %d", f, WIFEXITED(st) ? "exited with" : "killed by signal",
                          WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        for (unsigned i = 0; i < MINE; i++)
            drop_block(&mine[i], "parent after fork");
    }
    atomic_store(&stop, 1);
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pool_drain("pool after fork test");
    printf("malloc_lifecycle fork: ok: %u forks while %d threads allocated\n", forks, THREADS);
}

/* ---- thread exit --------------------------------------------------------------------- */

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static unsigned long detached_done;
static atomic_ulong inherited;        /* blocks freed by a thread that did not allocate them */

static void *short_lived(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = 0x2545F4914F6CDD1Dull * (id + 1), tag = (uint64_t)id << 20;
    enum { N = 24 };
    struct block own[N];
    for (unsigned i = 0; i < N; i++)
        own[i] = make_block(&rng, (hps_xorshift64(&rng) & 15) ? 64u << 10 : 2u << 20, ++tag);
    /* Free blocks of threads that have (mostly) exited already ... */
    for (unsigned i = 0; i < N / 2; i++) {
        struct block b = pool_take();
        if (b.p) {
            drop_block(&b, "block of an exited thread");
            atomic_fetch_add_explicit(&inherited, 1, memory_order_relaxed);
        }
    }
    /* ... and leave half of ours for later threads, free the rest. */
    for (unsigned i = 0; i < N; i++) {
        if (i % 2 == 0) {
            struct block out = pool_swap(own[i], &rng);
            if (out.p) {
                drop_block(&out, "block of an exited thread");
                atomic_fetch_add_explicit(&inherited, 1, memory_order_relaxed);
            }
        } else {
            drop_block(&own[i], "own block");
        }
    }
    if (id % 4 == 0) {
        pthread_mutex_lock(&done_lock);
        detached_done++;
        pthread_cond_signal(&done_cv);
        pthread_mutex_unlock(&done_lock);
    }
    return NULL;
}

static void test_threads(unsigned long total, unsigned wave)
{
    pthread_t *t = calloc(wave, sizeof *t);
    HPS_CHECK(t, "out of memory");
    pthread_attr_t joinable, detached;
    pthread_attr_init(&joinable);
    pthread_attr_init(&detached);
    pthread_attr_setstacksize(&joinable, 128 * 1024);
    pthread_attr_setstacksize(&detached, 128 * 1024);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    hps_test_rss_t rss = HPS_TEST_RSS_INIT;
    unsigned long made = 0, detached_made = 0;
    while (made < total) {
        unsigned n = total - made < wave ? (unsigned)(total - made) : wave;
        for (unsigned i = 0; i < n; i++) {
            uintptr_t id = made + i;
            int det = id % 4 == 0;
            int rc = pthread_create(&t[i], det ? &detached : &joinable, short_lived, (void *)id);
            if (rc)
                hps_test_fail("pthread_create after %lu threads: %s", made + i, strerror(rc));
            detached_made += (unsigned long)det;
        }
        for (unsigned i = 0; i < n; i++)
            if ((made + i) % 4 != 0)
                pthread_join(t[i], NULL);
        pthread_mutex_lock(&done_lock);
        while (detached_done < detached_made)
            pthread_cond_wait(&done_cv, &done_lock);
        pthread_mutex_unlock(&done_lock);
        made += n;
        hps_test_rss_sample(&rss, made >= total / 5);
    }
    size_t left = pool_n;
    pool_drain("block left by an exited thread");
    /* The pool holds up to POOL blocks of up to 2 MiB throughout; beyond
     * warm-up, growth means memory of exited threads is not reused. */
    hps_test_rss_check(&rss, 32 * 1024, total);
    printf("malloc_lifecycle threads: ok: %lu threads (%lu detached) in waves of %u; %lu blocks "
           "freed by other threads, %zu by main after all exited; RSS %ld kB after warm-up, "
           "peak %ld kB\n", total, detached_made, wave, atomic_load(&inherited), left, rss.warm,
           rss.peak);
    free(t);
}

/* ---- lineages of threads ---------------------------------------------------------- */

enum { LINEAGES = 2, WINDOW = 2048, REPLACE = 3000, TRANSFER = 64 };

struct lineage {
    struct block w[WINDOW];      /* touched only by the lineage's current thread */
    uint64_t rng, tag;
    unsigned id, gens;
};

static struct lineage lineages[LINEAGES];
/* Blocks on their way from one lineage to the other, each entry behind a
 * mutex of its own (a spin lock would starve a preempted holder's peers on
 * a crowded machine). */
static struct block transfer[TRANSFER];
static pthread_mutex_t transfer_lock[TRANSFER];

static struct block transfer_swap(unsigned j, struct block b)
{
    pthread_mutex_lock(&transfer_lock[j]);
    struct block out = transfer[j];
    transfer[j] = b;
    pthread_mutex_unlock(&transfer_lock[j]);
    return out;
}

static void *generation(void *arg)
{
    struct lineage *l = arg;
    for (int k = 0; k < REPLACE; k++) {
        uint64_t r = hps_xorshift64(&l->rng);
        struct block *b = &l->w[r % WINDOW];
        if ((r >> 32) % 4 == 0) {
            /* Through the transfer array: freed by the other lineage's
             * thread, alive or not yet born. */
            *b = transfer_swap((unsigned)(r >> 40) % TRANSFER, *b);
            continue;
        }
        if (b->p)
            drop_block(b, "handed-off block");
        /* Mostly small blocks (many pages, often full), now and then one
         * of up to 512 KiB (a span). */
        *b = make_block(&l->rng, (r >> 48) % 64 ? 4096 : 512u << 10, ++l->tag);
    }
    return NULL;
}

static void *lineage_run(void *arg)
{
    struct lineage *l = arg;
    for (unsigned g = 0; g < l->gens; g++) {
        pthread_t t;
        if (pthread_create(&t, NULL, generation, l) != 0 || pthread_join(t, NULL) != 0)
            hps_test_fail("generation %u of lineage %u: thread failed", g, l->id);
    }
    return NULL;
}

/* The program's arguments, for hpm_rerun_with. */
static char **prog_argv;

static void test_handoff(unsigned gens)
{
    hpm_rerun_with(prog_argv, "HPSYNC_MALLOC_DECAY_MS", "5");
    for (unsigned j = 0; j < TRANSFER; j++)
        pthread_mutex_init(&transfer_lock[j], NULL);
    hps_test_rss_t rss = HPS_TEST_RSS_INIT;
    enum { ROUNDS = 5 };
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t t[LINEAGES];
        for (unsigned i = 0; i < LINEAGES; i++) {
            lineages[i].id = i;
            lineages[i].gens = gens / ROUNDS;
            lineages[i].rng = 0x9E3779B97F4A7C15ull * (i + 1) + (uint64_t)round;
            lineages[i].tag = ((uint64_t)i << 40) + ((uint64_t)round << 32);
            if (pthread_create(&t[i], NULL, lineage_run, &lineages[i]) != 0)
                hps_test_fail("pthread_create failed");
        }
        for (unsigned i = 0; i < LINEAGES; i++)
            pthread_join(t[i], NULL);
        hps_test_rss_sample(&rss, round >= 1);
    }
    for (unsigned i = 0; i < LINEAGES; i++)
        for (unsigned j = 0; j < WINDOW; j++)
            if (lineages[i].w[j].p)
                drop_block(&lineages[i].w[j], "lineage block at the end");
    for (unsigned j = 0; j < TRANSFER; j++)
        if (transfer[j].p)
            drop_block(&transfer[j], "block in transfer at the end");
    /* Two windows of 2048 blocks (a few of up to 512 KiB) live throughout. */
    hps_test_rss_check(&rss, 32 * 1024, gens);
    printf("malloc_lifecycle handoff: ok: %u generations in %d lineages; RSS %ld kB after "
           "warm-up, peak %ld kB\n", gens, LINEAGES, rss.warm, rss.peak);
}

static int case_fork(const hps_test_case_t *c, int argc, char **argv)
{
    test_fork(argc > 1 ? (unsigned)hps_test_ulong(argv[1], "fork count") : 50);
    return 0;
}

static int case_handoff(const hps_test_case_t *c, int argc, char **argv)
{
    test_handoff(argc > 1 ? (unsigned)hps_test_ulong(argv[1], "generations") : 300);
    return 0;
}

static int case_threads(const hps_test_case_t *c, int argc, char **argv)
{
    test_threads(argc > 1 ? hps_test_ulong(argv[1], "thread count") : 4000,
                 argc > 2 ? (unsigned)hps_test_ulong(argv[2], "wave size") : 16);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "fork", .run_args = case_fork, .args = "[forks]", .max_args = 1 },
    { "handoff", .run_args = case_handoff, .args = "[generations]", .max_args = 1 },
    { "threads", .run_args = case_threads, .args = "[count] [wave]", .max_args = 2 },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("malloc_lifecycle", cases, 100, 0);

int main(int argc, char **argv)
{
    hpm_init("malloc_lifecycle");
    prog_argv = argv;
    return hps_test_main(&suite, argc, argv);
}
