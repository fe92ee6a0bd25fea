// SPDX-License-Identifier: MIT
/*
 * Placement policies of libhpsync-malloc that a program can observe.
 *   malloc_policy <case>
 *
 *   reuse  A block freed by its owner is the next one malloc hands out for
 *          its size, even when another page of the class has room: the
 *          block the program just touched is still in cache (LIFO across
 *          pages, as a thread cache gives).
 *   hover  A class whose live blocks move up and down across a page's
 *          capacity does not make (and fault in) a new page at every
 *          crossing: the emptied page stays as the class's spare.
 *   trim   malloc_trim(0) hands the spare back: the retired-page count moves;
 *          and freed large blocks, kept backed for reuse, go back at once.
 *   large  A loop that allocates, writes and frees blocks of 256 KiB..3 MiB
 *          takes few page faults: freed spans are reused while backed (it
 *          took one fault per 4 KiB written when every free gave the block
 *          back to the OS).
 *   huge   The same for blocks of 5..20 MiB (mappings of their own).
 *   decay  Freed large blocks stay resident for reuse, and once idle for
 *          HPSYNC_MALLOC_DECAY_MS a later allocator call gives them back.
 *   cap    No more than HPSYNC_MALLOC_CACHE_MIB of them stay resident.
 *   requeue  A full page that another thread frees into is queued for its
 *          owner once; retired and made again while still queued, it must
 *          not be queued twice (that made a cycle the owner's next refill
 *          spun on forever; the watchdog turns a hang into a failure).
 *   realloc  Growing a block from 256 KiB to 64 MiB, written as it grows,
 *          faults about once per page of the final size: spans grow in
 *          place, huge blocks move with mremap instead of being copied.
 *   chain  A chain of threads, each allocating, writing and freeing a
 *          working set and exiting before the next starts: the next one
 *          takes the exited thread's heap whole and faults on almost none
 *          of the pages it writes (an exit that gave the freed memory back
 *          cost every new thread a fault per page).
 *   parked That memory stays resident after the exit, for the next thread;
 *          once the heap has waited HPSYNC_MALLOC_DECAY_MS for one, another
 *          thread's later allocator call gives it back, and malloc_trim
 *          gives it back at once.  (A thread keeps only part of its freed
 *          page slots for the whole decay time; the rest goes after a 64th
 *          of it, which both cases leave no time for.)
 *   pagecache  Of the slots of small-block pages it freed, a thread keeps
 *          an eighth of its pages' slots, at least 512 KiB, for the
 *          decay time; the rest goes back once idle for a 64th of it.
 *   successor  A new thread whose first frees are of an exited thread's
 *          blocks takes that thread's heap (not the one parked last), so
 *          the rest of its frees of those blocks are local, not remote.
 *   arena  Large blocks one thread freed serve another live thread while
 *          still backed: threads share span arenas, one per CPU the process
 *          may run on (pinned to one CPU here, so both threads share one;
 *          with per-thread span memory the second thread faulted on every
 *          page).
 *
 * Page counts come from malloc_stats() (stderr redirected to a file) and
 * the policies are hpsync's, so CTest runs this only against the CIA
 * allocator.  decay and cap run themselves again with their setting in
 * the environment (the allocator reads it at start-up).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "malloc_util.h"

struct counts {
    unsigned long long made, retired;
};

/* malloc_stats()'s report. */
static void stats_text(char *buf, size_t size)
{
    char path[] = "/tmp/hpm-policy-XXXXXX";
    int fd = mkstemp(path);
    HPS_CHECK(fd >= 0, "mkstemp failed");
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    HPS_CHECK(saved >= 0 && dup2(fd, 2) == 2, "dup2 failed");
    malloc_stats();
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, buf, size - 1, 0);
    close(fd);
    HPS_CHECK(n > 0, "malloc_stats printed nothing");
    buf[n] = 0;
}

/* Pages made and retired so far. */
static struct counts page_counts(void)
{
    char buf[2048];
    stats_text(buf, sizeof buf);
    struct counts c;
    const char *line = strstr(buf, "pages ");
    HPS_CHECK(line && sscanf(line, "pages %llu made, %llu retired", &c.made, &c.retired) == 2,
              "no page counts in malloc_stats output: %s", buf);
    return c;
}

static void case_reuse(void)
{
    /* Enough 100-byte blocks for several pages (64 KiB holds ~340). */
    enum { N = 3000 };
    static void *b[N];
    for (int i = 0; i < N; i++) {
        b[i] = malloc(100);
        HPS_CHECK(b[i], "malloc(100) returned NULL");
    }
    void *early = b[5], *late = b[N - 500];
    HPS_CHECK((uintptr_t)late - (uintptr_t)early >= 65536,
              "blocks %p and %p should lie on different pages", early, late);
    free(early);
    free(late);
    void *p = malloc(100);
    HPS_CHECK(p == late, "malloc after free(%p) returned %p, not the block just freed", late, p);
    free(p);
    void *q = malloc(100);
    HPS_CHECK(q == p, "free + malloc of the same size moved from %p to %p", p, q);
    b[5] = malloc(100);
    HPS_CHECK(b[5], "malloc(100) returned NULL");
    b[N - 500] = q;
    for (int i = 0; i < N; i++)
        free(b[i]);
}

/* A window of W slots of SIZE-byte blocks, random malloc/free: the live
 * count hovers around W/2. */
/* The program's arguments, for hpm_rerun_with. */
static char **prog_argv;

static int W = 16, SIZE = 30000;     /* pages of 9 blocks: ~1 page live */
enum { OPS = 20000 };
static void *win[256];

static void hover(unsigned long ops)
{
    uint64_t rng = 0x5eed;
    for (unsigned long k = 0; k < ops; k++) {
        int i = (int)(hps_xorshift64(&rng) % W);
        if (win[i]) {
            free(win[i]);
            win[i] = NULL;
        } else {
            win[i] = malloc((size_t)SIZE);
            HPS_CHECK(win[i], "malloc(%d) returned NULL", SIZE);
        }
    }
}

static void case_hover(void)
{
    hover(2000);                                /* settle: pages for the peak */
    struct counts before = page_counts();
    hover(OPS);
    struct counts after = page_counts();
    unsigned long long made = after.made - before.made;
    printf("hover: %llu pages made in %d operations\n", made, OPS);
    /* Retiring each page as it empties made 237 pages here; with a spare
     * per class, 1.  (Other window/size pairs: malloc_policy hover W SIZE.) */
    HPS_CHECK(made <= 20, "%llu pages made in %d operations around a page boundary", made, OPS);
}

/* ---- large blocks ----------------------------------------------------------- */

enum { PAGE = 4096 };

static long minor_faults(void)
{
    struct rusage ru;
    HPS_CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage failed");
    return ru.ru_minflt;
}

/* Pages of [p, p + n) resident now (an unmapped range counts as none). */
static size_t resident(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
    size_t pages = ((uintptr_t)p + n - a + PAGE - 1) / PAGE, in = 0;
    static unsigned char vec[(64u << 20) / PAGE + 1];
    HPS_CHECK(pages <= sizeof vec, "range too long for mincore's vector");
    if (mincore((void *)a, pages * PAGE, vec) != 0)
        return 0;
    for (size_t i = 0; i < pages; i++)
        in += vec[i] & 1;
    return in;
}

/* Blocks of lo..hi bytes, a window of `live` of them, `iters` replacements;
 * every block written whole.  Fails unless the page faults stay under
 * 1/part of the pages written (an allocator that gives every freed block
 * back to the OS faults on every page written). */
static void churn(size_t lo, size_t hi, int live, int iters, unsigned part, const char *what)
{
    void *blk[8] = { 0 };
    uint64_t rng = 0x1a59e;
    size_t written = 0;
    long before = minor_faults();
    for (int i = 0; i < iters; i++) {
        int j = (int)(hps_xorshift64(&rng) % (uint64_t)live);
        free(blk[j]);
        size_t n = lo + hps_xorshift64(&rng) % (hi - lo);
        blk[j] = malloc(n);
        HPS_CHECK(blk[j], "malloc(%zu) returned NULL", n);
        memset(blk[j], i, n);
        written += (n + PAGE - 1) / PAGE;
    }
    long faults = minor_faults() - before;
    for (int j = 0; j < live; j++)
        free(blk[j]);
    printf("%s: %ld page faults for %zu pages written\n", what, faults, written);
    HPS_CHECK((size_t)faults * part < written,
              "%s: %ld page faults for %zu pages written: freed blocks are not reused while backed",
              what, faults, written);
}

static void case_large(void) { churn(256u << 10, 3u << 20, 4, 400, 10, "large"); }
/* A reused huge mapping gives back what lies past its new block, so a
 * bigger block after a smaller one faults on the difference: about a
 * sixth of the pages here, by the sizes' spread. */
static void case_huge(void) { churn(5u << 20, 20u << 20, 2, 60, 4, "huge"); }

/* Allocate and write n blocks of size bytes, free them all; the blocks'
 * addresses are kept in out (for mincore). */
static void write_and_free(void **out, int n, size_t size)
{
    for (int i = 0; i < n; i++) {
        out[i] = malloc(size);
        HPS_CHECK(out[i], "malloc(%zu) returned NULL", size);
        memset(out[i], 7, size);
    }
    for (int i = 0; i < n; i++)
        free(out[i]);
}

static size_t resident_all(void *const *blk, int n, size_t size)
{
    size_t in = 0;
    for (int i = 0; i < n; i++)
        in += resident(blk[i], size);
    return in;
}

enum { NBIG = 16 };
#define BIG ((size_t)1 << 20)
#define BIG_PAGES (NBIG * BIG / PAGE)

static void case_decay(void)
{
    hpm_rerun_with(prog_argv, "HPSYNC_MALLOC_DECAY_MS", "200");
    void *blk[NBIG], *huge;
    write_and_free(blk, NBIG, BIG);
    write_and_free(&huge, 1, 12u << 20);
    size_t kept = resident_all(blk, NBIG, BIG), kept_huge = resident(huge, 12u << 20);
    printf("decay: %zu of %zu pages resident after the frees, huge block %zu\n", kept, (size_t)BIG_PAGES,
           kept_huge);
    HPS_CHECK(kept >= BIG_PAGES * 9 / 10, "freed large blocks went back to the OS at once (%zu of %zu "
              "pages resident): nothing left to reuse", kept, (size_t)BIG_PAGES);
    HPS_CHECK(kept_huge >= (12u << 20) / PAGE * 9 / 10, "a freed huge block was unmapped at once");
    struct timespec idle = { 0, 600 * 1000 * 1000 };
    nanosleep(&idle, NULL);
    free(malloc(200u << 10));            /* a later call: the clock is looked at */
    size_t left = resident_all(blk, NBIG, BIG), left_huge = resident(huge, 12u << 20);
    printf("decay: %zu pages resident after 600 ms idle and one call, huge block %zu\n", left,
           left_huge);
    HPS_CHECK(left <= BIG_PAGES / 10, "%zu of %zu pages still resident after the decay time", left,
              (size_t)BIG_PAGES);
    HPS_CHECK(left_huge == 0, "the huge block's %zu pages are still resident after the decay time",
              left_huge);
}

static void case_cap(void)
{
    hpm_rerun_with(prog_argv, "HPSYNC_MALLOC_CACHE_MIB", "8");
    enum { N = 48 };
    void *blk[N];
    write_and_free(blk, N, BIG);
    size_t left = resident_all(blk, N, BIG), cap = (8u << 20) / PAGE;
    printf("cap: %zu pages of %d MiB freed stay resident (cap %zu)\n", left, N, cap);
    HPS_CHECK(left <= cap + cap / 4, "%zu pages stay resident, over the cap of %zu", left, cap);
    HPS_CHECK(left >= cap / 2, "only %zu pages stay resident: the cache keeps much less than its cap",
              left);
}

static void case_trim(void)
{
    hover(2000);
    for (int i = 0; i < W; i++) {
        free(win[i]);
        win[i] = NULL;
    }
    void *blk[NBIG], *huge;
    write_and_free(blk, NBIG, BIG);
    write_and_free(&huge, 1, 12u << 20);
    struct counts before = page_counts();
    size_t kept = resident_all(blk, NBIG, BIG);
    HPS_CHECK(malloc_trim(0) == 1, "malloc_trim(0) released nothing after freeing everything");
    struct counts after = page_counts();
    HPS_CHECK(after.retired > before.retired, "malloc_trim retired no page (spare kept)");
    size_t left = resident_all(blk, NBIG, BIG), left_huge = resident(huge, 12u << 20);
    printf("trim: %zu -> %zu pages of freed large blocks resident, huge block %zu\n", kept, left,
           left_huge);
    HPS_CHECK(kept >= BIG_PAGES / 2 && left <= BIG_PAGES / 10 && left_huge == 0,
              "malloc_trim did not give the cached large blocks back (%zu -> %zu pages, huge %zu)",
              kept, left, left_huge);
}

/* ---- a page queued by a remote free, retired and made again ------------------------- */

enum { RQ_N = 4000, RQ_SIZE = 1000 };
static void *rq_blk[RQ_N];

/* Free one block of every 64 KiB slot the blocks cover (each slot a page
 * of the 1000-byte class). */
static void *free_one_per_page(void *arg)
{
    (void)arg;
    uintptr_t last = 0;
    for (int i = 0; i < RQ_N; i++) {
        uintptr_t slot = (uintptr_t)rq_blk[i] >> 16;
        if (rq_blk[i] && slot != last) {
            last = slot;
            free(rq_blk[i]);
            rq_blk[i] = NULL;
        }
    }
    return NULL;
}

/* The same from another thread: remote frees into full pages. */
static void remote_round(void)
{
    pthread_t t;
    HPS_CHECK(pthread_create(&t, NULL, free_one_per_page, NULL) == 0 && pthread_join(t, NULL) == 0,
              "thread failed");
}

static void fill(void)
{
    for (int i = 0; i < RQ_N; i++)
        if (!rq_blk[i]) {
            rq_blk[i] = malloc(RQ_SIZE);
            HPS_CHECK(rq_blk[i], "malloc failed");
        }
}

static void case_requeue(void)
{
    hps_test_watchdog(20);
    fill();                      /* full pages */
    remote_round();              /* each queued once for its owner */
    /* Owner: free one block per page locally (the page leaves the full
     * list), allocate again (collecting the remote frees), then free
     * everything: the pages empty and retire while still queued. */
    free_one_per_page(NULL);
    fill();
    for (int i = 0; i < RQ_N; i++) {
        free(rq_blk[i]);
        rq_blk[i] = NULL;
    }
    /* New pages in the same slots, full; remote frees queue them again;
     * then enough allocations that the owner takes its queue. */
    for (int round = 0; round < 3; round++) {
        fill();
        remote_round();
        fill();
    }
    for (int i = 0; i < RQ_N; i++)
        free(rq_blk[i]);
    printf("requeue: the owner took its queues of remotely freed full pages\n");
}

static void case_realloc(void)
{
    size_t n = 256u << 10, last = 64u << 20, written = 0;
    unsigned char *p = malloc(n);
    HPS_CHECK(p, "malloc failed");
    memset(p, 1, n);
    long before = minor_faults();
    for (unsigned char v = 2; n < last; v++) {
        size_t m = n * 2;
        p = realloc(p, m);
        HPS_CHECK(p, "realloc to %zu returned NULL", m);
        HPS_CHECK(p[0] == v - 1 && p[n - 1] == v - 1 && p[n / 2] == v - 1,
                  "realloc to %zu lost the contents", m);
        memset(p, v, m);
        written += m / PAGE;
        n = m;
    }
    long faults = minor_faults() - before;
    free(p);
    printf("realloc: %ld page faults growing to %zu MiB (%zu pages)\n", faults, last >> 20, last / PAGE);
    HPS_CHECK((size_t)faults < last / PAGE * 3 / 2,
              "%ld page faults growing a block to %zu pages: it was copied, not moved", faults,
              last / PAGE);
}

/* ---- exited threads' heaps and the span arena ----------------------------------- */

enum { SET_BLOCKS = 4000 };
static void *set_blk[SET_BLOCKS];
static size_t set_pages;                 /* pages a working set writes */

/* Allocate and write a working set of 64..1087-byte blocks (about 2 MiB in
 * pages of many classes), then free it all. */
static void *working_set(void *arg)
{
    (void)arg;
    uint64_t rng = 0xc4a1;
    size_t bytes = 0;
    for (int i = 0; i < SET_BLOCKS; i++) {
        size_t n = 64 + hps_xorshift64(&rng) % 1024;
        set_blk[i] = malloc(n);
        HPS_CHECK(set_blk[i], "malloc(%zu) returned NULL", n);
        memset(set_blk[i], i, n);
        bytes += n;
    }
    for (int i = 0; i < SET_BLOCKS; i++)
        free(set_blk[i]);
    set_pages = bytes / PAGE;
    return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    pthread_attr_t a;
    /* One stack size throughout: glibc reuses a joined thread's stack, so
     * thread creation itself faults on nothing new. */
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256u << 10);
    HPS_CHECK(pthread_create(&t, &a, fn, arg) == 0 && pthread_join(t, NULL) == 0, "thread failed");
    pthread_attr_destroy(&a);
}

static void case_chain(void)
{
    /* A long decay: the test is about the heap handed over, not about how
     * long a thread's freed page slots beyond its cap wait (a 64th of the
     * decay time), which a loaded machine could stretch a generation past. */
    hpm_rerun_with(prog_argv, "HPSYNC_MALLOC_DECAY_MS", "60000");
    enum { WARM = 5, GENS = 50 };
    for (int g = 0; g < WARM; g++)
        run_thread(working_set, NULL);
    long before = minor_faults();
    for (int g = 0; g < GENS; g++)
        run_thread(working_set, NULL);
    long faults = minor_faults() - before;
    printf("chain: %ld page faults in %d threads, each writing %zu pages\n", faults, GENS, set_pages);
    HPS_CHECK((size_t)faults * 10 < set_pages * GENS,
              "%ld page faults in %d threads writing %zu pages each: a new thread does not reuse "
              "the memory the exited one freed", faults, GENS, set_pages);
}

/* Pages of the last working set's blocks resident now. */
static size_t set_resident(void)
{
    size_t in = 0;
    for (int i = 0; i < SET_BLOCKS; i++)
        in += resident(set_blk[i], 64);
    return in;
}

static void case_parked(void)
{
    hpm_rerun_with(prog_argv, "HPSYNC_MALLOC_DECAY_MS", "1000");
    struct timespec idle = { 1, 300 * 1000 * 1000 };
    for (int round = 0; round < 2; round++) {
        run_thread(working_set, NULL);
        size_t kept = set_resident();
        if (round == 0) {
            nanosleep(&idle, NULL);
            free(malloc(200u << 10));    /* a later call looks at the clock */
        } else {
            malloc_trim(0);
        }
        size_t left = set_resident();
        const char *how = round == 0 ? "1.3 s and one call" : "malloc_trim";
        printf("parked: %zu of %d blocks' first pages resident after the exit, %zu after %s\n", kept,
               SET_BLOCKS, left, how);
        /* An eighth at least: the thread's freed slots beyond its cache
         * (an eighth of its pages' slots, at least 512 KiB, of the working
         * set's 2-3 MiB) go once idle for 15 ms, which a thread preempted
         * between its frees and its exit reaches on a loaded machine; the
         * cache itself stays. */
        HPS_CHECK(kept >= SET_BLOCKS / 8, "an exited thread's freed memory went back at once "
                  "(%zu of %d blocks resident): nothing left for the next thread", kept, SET_BLOCKS);
        HPS_CHECK(left <= SET_BLOCKS / 10, "%zu of %d blocks still resident after %s", left,
                  SET_BLOCKS, how);
    }
}

static void case_pagecache(void)
{
    hpm_rerun_with(prog_argv, "HPSYNC_MALLOC_DECAY_MS", "1000");
    enum { N = 16384 };
    static void *blk[N];
    uint64_t rng = 0x9a6e;
    for (int i = 0; i < N; i++) {              /* about 10 MiB in pages of many classes */
        size_t n = 64 + hps_xorshift64(&rng) % 1200;
        blk[i] = malloc(n);
        HPS_CHECK(blk[i], "malloc(%zu) returned NULL", n);
        memset(blk[i], 1, n);
    }
    for (int i = 0; i < N; i++)
        free(blk[i]);
    size_t kept = 0, left = 0;
    for (int i = 0; i < N; i++)
        kept += resident(blk[i], 64) != 0;
    struct timespec idle = { 0, 100 * 1000 * 1000 };
    nanosleep(&idle, NULL);
    free(malloc(200u << 10));                   /* a later call looks at the clock */
    for (int i = 0; i < N; i++)
        left += resident(blk[i], 64) != 0;
    printf("pagecache: %zu of %d freed blocks resident after the frees, %zu 100 ms later\n", kept,
           N, left);
    HPS_CHECK(left <= N / 4, "%zu of %d freed blocks still resident: the thread keeps far more than "
              "its page-slot cache", left, N);
}

/* Frees that came from another thread so far. */
static unsigned long long remote_frees(void)
{
    char buf[2048];
    stats_text(buf, sizeof buf);
    unsigned long long refills, remote;
    const char *line = strstr(buf, "slow paths ");
    HPS_CHECK(line && sscanf(line, "slow paths %llu allocations refilled a page, %llu frees", &refills,
                             &remote) == 2, "no remote-free count in malloc_stats output: %s", buf);
    return remote;
}

enum { SUCC_N = 2000 };
static void *succ_blk[SUCC_N];

static pthread_barrier_t succ_bar;

/* The first thread allocates the blocks and exits; the other, alive at
 * the same time (so it has a heap of its own), exits after it. */
static void *succ_alloc(void *arg)
{
    for (int i = 0; i < SUCC_N; i++) {
        succ_blk[i] = malloc(200);
        HPS_CHECK(succ_blk[i], "malloc failed");
    }
    pthread_barrier_wait(&succ_bar);
    (void)arg;
    return NULL;
}

static void *succ_other(void *arg)
{
    free(malloc(200));
    pthread_barrier_wait(&succ_bar);
    pthread_join(*(pthread_t *)arg, NULL);
    return NULL;
}

/* Free the first thread's blocks, one malloc in between. */
static void *succ_free(void *arg)
{
    free(succ_blk[0]);
    free(malloc(200));
    for (int i = 1; i < SUCC_N; i++)
        free(succ_blk[i]);
    (void)arg;
    return NULL;
}

static void case_successor(void)
{
    pthread_t first, other;
    HPS_CHECK(pthread_barrier_init(&succ_bar, NULL, 2) == 0, "pthread_barrier_init failed");
    HPS_CHECK(pthread_create(&first, NULL, succ_alloc, NULL) == 0 &&
              pthread_create(&other, NULL, succ_other, &first) == 0 && pthread_join(other, NULL) == 0,
              "thread failed");
    unsigned long long before = remote_frees();
    run_thread(succ_free, NULL);
    unsigned long long remote = remote_frees() - before;
    printf("successor: %llu of %d frees of an exited thread's blocks were remote\n", remote, SUCC_N);
    HPS_CHECK(remote <= 1, "%llu of %d frees were remote: the new thread did not take the heap of "
              "the exited thread whose blocks it freed", remote, SUCC_N);
}

enum { ARENA_N = 16 };
static void *arena_blk[ARENA_N];
static pthread_barrier_t arena_bar;

/* Write and free large blocks, then stay alive (idle) until told. */
static void *arena_first(void *arg)
{
    (void)arg;
    write_and_free(arena_blk, ARENA_N, BIG);
    pthread_barrier_wait(&arena_bar);
    pthread_barrier_wait(&arena_bar);
    return NULL;
}

static void case_arena(void)
{
    /* One CPU allowed before the first large block: one arena. */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    HPS_CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity failed");
    pthread_t t;
    HPS_CHECK(pthread_barrier_init(&arena_bar, NULL, 2) == 0, "pthread_barrier_init failed");
    HPS_CHECK(pthread_create(&t, NULL, arena_first, NULL) == 0, "pthread_create failed");
    pthread_barrier_wait(&arena_bar);
    long before = minor_faults();
    write_and_free(arena_blk, ARENA_N, BIG);
    long faults = minor_faults() - before;
    pthread_barrier_wait(&arena_bar);
    pthread_join(t, NULL);
    printf("arena: %ld page faults writing %zu pages another live thread freed\n", faults,
           (size_t)BIG_PAGES);
    HPS_CHECK((size_t)faults * 10 < BIG_PAGES, "%ld page faults for %zu pages: large blocks another "
              "thread freed are not reused while backed", faults, (size_t)BIG_PAGES);
}
/* hover and trim take other window/size pairs, for exploring (W up to 256). */
static void set_window(int argc, char **argv)
{
    if (argc > 1)
        W = (int)hps_test_ulong(argv[1], "window");
    if (argc > 2)
        SIZE = (int)hps_test_ulong(argv[2], "block size");
    HPS_CHECK(W <= (int)(sizeof win / sizeof win[0]), "a window of %d slots: at most %zu", W,
              sizeof win / sizeof win[0]);
}

static int case_hover_args(const hps_test_case_t *c, int argc, char **argv)
{
    set_window(argc, argv);
    case_hover();
    return 0;
}

static int case_trim_args(const hps_test_case_t *c, int argc, char **argv)
{
    set_window(argc, argv);
    case_trim();
    return 0;
}

static const hps_test_case_t cases[] = {
    { "reuse", .run = case_reuse },
    { "hover", .run_args = case_hover_args, .args = "[window] [size]", .max_args = 2 },
    { "trim", .run_args = case_trim_args, .args = "[window] [size]", .max_args = 2 },
    { "large", .run = case_large },
    { "huge", .run = case_huge },
    { "decay", .run = case_decay },
    { "cap", .run = case_cap },
    { "realloc", .run = case_realloc },
    { "requeue", .run = case_requeue },
    { "chain", .run = case_chain },
    { "parked", .run = case_parked },
    { "pagecache", .run = case_pagecache },
    { "successor", .run = case_successor },
    { "arena", .run = case_arena },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("malloc_policy", cases, 60, 0);

int main(int argc, char **argv)
{
    hpm_init("malloc_policy");
    prog_argv = argv;
    int rc = hps_test_main(&suite, argc, argv);
    if (rc == 0)
        printf("%s: ok\n", hps_test_name());
    return rc;
}
