// SPDX-License-Identifier: MIT
/*
 * tm_test's cases on how sections run: irrevocable, explicit restart,
 * nesting, statistics, sub-word and floating-point accesses, fork and
 * thread exit.
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

void case_irrevocable(void)
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


static void *setter(void *arg)
{
    usleep(20000);
    HPS_TM_BEGIN();
    hps_tm_write_u64(&g_flag, 1);
    HPS_TM_END();
    return NULL;
}

void case_restart(void)
{
    volatile int attempts = 0;  /* written in the section: volatile keeps it across an abort */
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

/* 50 000 sections that each abort once, a few calls deep (a write in a
 * section begun read-only: no backoff or wait follows that abort, unlike
 * an explicit restart's): every abort must land back at its checkpoint
 * with nothing left behind.  Under ThreadSanitizer this is
 * the case that overflowed its shadow call stack (it kept the aborted
 * frames while aborts left through the out-of-line jump: a thread died
 * after ~30 000 aborts of two frames each). */
#define MANY_ABORTS 50000
static __attribute__((noinline)) void add_one(uint64_t *w)
{
    hps_tm_write_u64(w, hps_tm_read_u64(w) + 1);
}

void case_abort_many(void)
{
    static uint64_t w;
    hps_tm_stats_t st0, st1;
    hps_tm_stats_total(&st0);
    for (unsigned i = 0; i < MANY_ABORTS; i++) {
        HPS_TM_BEGIN_RO();
        add_one(&w);
        HPS_TM_END();
    }
    hps_tm_stats_total(&st1);
    uint64_t n = st1.aborts_by_cause[HPS_TM_CAUSE_RO_WRITE] - st0.aborts_by_cause[HPS_TM_CAUSE_RO_WRITE];
    HPS_CHECK(w == MANY_ABORTS, "w %llu, expected %u", (unsigned long long)w, MANY_ABORTS);
    HPS_CHECK(n == MANY_ABORTS, "%llu read-only-write aborts counted, expected %u", (unsigned long long)n,
              MANY_ABORTS);
}

/* Reads after writes in one section: the words a section wrote read back
 * as written, whole or merged with a sub-word write, and the words it did
 * not write read from memory, also where the redo log's 512-bit filter
 * cannot tell them apart (word i and word i + 512 share a filter bit) and
 * once more words were written than the filter has bits, and rewrites
 * of words the log holds.  A restart forgets the writes, filter included. */
#define RAW_WORDS 2048
#define RAW_SPAN 1800                /* every third word below: 600 writes, all 512 bits */
/* What case_raw's a[i] holds once its second attempt wrote. */
static uint64_t raw_want(int i)
{
    if (i == 64)
        return 7;
    if (i == 4)
        return (1004 & ~0xff00ull) | 0xab00ull;
    if (i < RAW_SPAN && i % 6 == 0)
        return 6000 + (uint64_t)i;
    if (i < RAW_SPAN && i % 3 == 0)
        return 5000 + (uint64_t)i;
    return 1000 + (uint64_t)i;
}

void case_raw(void)
{
    static uint64_t a[RAW_WORDS];
    for (int i = 0; i < RAW_WORDS; i++)
        a[i] = 1000 + (uint64_t)i;
    volatile int attempts = 0;  /* written in the section: volatile keeps it across an abort */
    HPS_TM_BEGIN();
    attempts++;
    for (int i = 0; i < RAW_WORDS; i++)   /* a fresh attempt sees memory only */
        HPS_CHECK(hps_tm_read_u64(&a[i]) == 1000 + (uint64_t)i, "attempt %d: a[%d] = %llu", attempts, i,
                  (unsigned long long)hps_tm_read_u64(&a[i]));
    hps_tm_write_u64(&a[64], 7);
    HPS_CHECK(hps_tm_read_u64(&a[64]) == 7, "a write not read back");
    HPS_CHECK(hps_tm_read_u64(&a[64 + 512]) == 1576 && hps_tm_read_u64(&a[64 + 1024]) == 2088,
              "a word sharing the written word's filter bit read %llu, %llu",
              (unsigned long long)hps_tm_read_u64(&a[64 + 512]), (unsigned long long)hps_tm_read_u64(&a[64 + 1024]));
    HPS_CHECK(hps_tm_read_u64(&a[65]) == 1065, "an unwritten neighbour read wrong");
    hps_tm_write_u8((uint8_t *)&a[4] + 1, 0xab);  /* 1004 = 0x3ec: byte 1 becomes 0xab */
    HPS_CHECK(hps_tm_read_u64(&a[4]) == ((1004 & ~0xff00ull) | 0xab00ull), "a sub-word write not merged: %llx",
              (unsigned long long)hps_tm_read_u64(&a[4]));
    if (attempts == 1)
        hps_tm_restart();
    /* Past the filter's 512 bits: every third word (3 and 512 coprime). */
    for (int i = 0; i < RAW_SPAN; i += 3)
        hps_tm_write_u64(&a[i], 5000 + (uint64_t)i);
    /* Rewrites of words already logged, once the log outgrew its first
     * capacity and its linear range: entries appended inline since its last
     * search must be found, not duplicated (the index is built lazily). */
    for (int i = 0; i < RAW_SPAN; i += 6)
        hps_tm_write_u64(&a[i], 6000 + (uint64_t)i);
    for (int i = 0; i < RAW_WORDS; i++)
        HPS_CHECK(hps_tm_read_u64(&a[i]) == raw_want(i), "a[%d] read %llu in the section, want %llu", i,
                  (unsigned long long)hps_tm_read_u64(&a[i]), (unsigned long long)raw_want(i));
    HPS_TM_END();
    HPS_CHECK(attempts == 2, "%d attempts", attempts);
    for (int i = 0; i < RAW_WORDS; i++)
        HPS_CHECK(a[i] == raw_want(i), "a[%d] = %llu after the commit, want %llu", i, (unsigned long long)a[i],
                  (unsigned long long)raw_want(i));
    /* The next section starts with an empty filter: a read-only pass. */
    HPS_TM_BEGIN();
    for (int i = 0; i < RAW_WORDS; i++)
        HPS_CHECK(hps_tm_read_u64(&a[i]) == a[i], "a[%d] read wrong in the next section", i);
    HPS_TM_END();
}

void case_nesting(void)
{
    volatile int attempts = 0;  /* written in the section: volatile keeps it across an abort */
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

void case_stats(void)
{
    const char *b = hps_tm_backend_name();
    /* Hardware sections read with plain loads and may abort for hardware
     * causes (injected here); those aborts are counted apart, and hybrid's
     * software sections log their reads. */
    int hw = !strcmp(b, "htm") || !strcmp(b, "hybrid");
    int instrumented = strcmp(b, "sgl") != 0 && strcmp(b, "htm") != 0 && strcmp(b, "solo") != 0;
    for (int i = 0; i < 10; i++) {    /* 10 sections: 3 reads, 2 writes */
        uint64_t r0 = tm_restarts();
        HPS_TM_BEGIN();
        uint64_t a = hps_tm_read_u64(&g_x), b = hps_tm_read_u64(&g_y);
        (void)hps_tm_read_u64(&g_flag);
        hps_tm_write_u64(&g_x, a + 1);
        hps_tm_write_u64(&g_y, b + 1);
        if (i < 4 && tm_restarts() == r0)
            hps_tm_restart();
        HPS_TM_END();
    }
    for (int i = 0; i < 5; i++) {     /* 5 read-only sections */
        HPS_TM_BEGIN_RO();
        (void)hps_tm_read_u64(&g_x);
        HPS_TM_END();
    }
    /* A write in BEGIN_RO: one restart (counted as RO_WRITE below). */
    HPS_TM_BEGIN_RO();
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
    HPS_CHECK(g_flag == 7, "read-only write: the flag is %llu", (unsigned long long)g_flag);
    /* hps_tm_stats_add: this thread's counts twice over a made-up set whose
     * largest sets are bigger on one side and smaller on the other. */
    hps_tm_stats_t sum = { .commits = 1, .aborts_by_cause[HPS_TM_CAUSE_EXPLICIT] = 2, .writes = 3,
                           .max_write_set = 9, .max_read_set = 0 };
    hps_tm_stats_t mine = st;
    hps_tm_stats_add(&sum, &mine);
    hps_tm_stats_add(&sum, &mine);
    HPS_CHECK(sum.commits == 1 + 2 * mine.commits && sum.commits_ro == 2 * mine.commits_ro &&
                  sum.aborts == 2 * mine.aborts && sum.retries == 2 * mine.retries &&
                  sum.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT] == 2 + 2 * 4 &&
                  sum.aborts_by_cause[HPS_TM_CAUSE_RO_WRITE] == 2 && sum.writes == 3 + 2 * 21 &&
                  sum.reads == 2 * mine.reads && sum.solo == 2 * mine.solo &&
                  sum.max_write_set == 9 && sum.max_read_set == mine.max_read_set,
              "hps_tm_stats_add: commits %llu explicit %llu writes %llu largest sets %llu, %llu",
              (unsigned long long)sum.commits, (unsigned long long)sum.aborts_by_cause[HPS_TM_CAUSE_EXPLICIT],
              (unsigned long long)sum.writes, (unsigned long long)sum.max_write_set,
              (unsigned long long)sum.max_read_set);
    /* An exited thread's counts stay in the total. */
    run_threads(1, stats_thread);
    hps_tm_stats_total(&st);
    EQ(commits, 116);
    HPS_CHECK(!strcmp(hps_tm_cause_name(HPS_TM_CAUSE_EXPLICIT), "explicit"), "cause name");
#undef EQ
}

/* ---- a restart after a streak of conflicts ------------------------------------- */

/* Every thread increments one hot word, and restarts each section on
 * purpose on its second and third attempts.  With HPSYNC_TM_RETRIES=1 (set
 * by CTest) any conflict abort makes the next attempt run serialized
 * (alone behind the gate), so the restart lands there too: it must roll
 * the increment back and retry, not end the process (it did, when that
 * attempt ran irrevocably: tm.stamp.stm under ThreadSanitizer). */
static uint64_t g_hot;
static hps_au64 g_restarted;

static void *serial_restart_thread(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < g_iters; i++) {
        volatile int attempt = 0;    /* written in the section: kept across an abort */
        HPS_TM_BEGIN();
        int a = attempt++;
        uint64_t v = hps_tm_read_u64(&g_hot);
        for (int k = 0; k < 64; k++)     /* a window for others' commits: conflicts */
            hps_cpu_relax();
        hps_tm_write_u64(&g_hot, v + 1);
        if (a == 1 || a == 2)
            hps_tm_restart();
        HPS_TM_END();
        if (attempt > 1)
            (void)hps_faa_relaxed(&g_restarted, 1);
    }
    return NULL;
}

void case_serial_restart(void)
{
    g_iters = 2000;
    /* Under a backend with conflicts the case must reach its point: rounds
     * until some attempts ran serialized (threads that never overlap, as
     * on a loaded machine, make no conflicts). */
    const char *b = getenv("HPSYNC_TM");
    int want = b && (!strcmp(b, "norec") || !strcmp(b, "stm"));
    uint64_t serial = 0;
    unsigned long sections = 0;
    for (int round = 0; round < 50 && (round == 0 || (want && serial == 0)); round++) {
        hps_tm_stats_t s0, s1;
        hps_tm_stats_total(&s0);
        run_threads(THREADS, serial_restart_thread);
        hps_tm_stats_total(&s1);
        sections += THREADS * g_iters;
        HPS_CHECK(g_hot == sections, "hot word %llu, want %lu: a restart did not roll back",
                  (unsigned long long)g_hot, sections);
        serial += s1.serial - s0.serial;
    }
    printf("serial_restart: %lu sections, %llu restarted after a conflict, %llu attempts serialized\n",
           sections, (unsigned long long)hps_load_relaxed(&g_restarted), (unsigned long long)serial);
    HPS_CHECK(!want || serial > 0, "no attempt ran serialized in 50 rounds: the case did not set up its race");
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

void case_subword(void)
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

static hps_au32 g_fork_warm;          /* workers past their first sections */

static void *fork_worker(void *arg)
{
    uint64_t s = (uintptr_t)arg + 11;
    for (int i = 0; i < 100; i++)
        transfer(&s);
    atomic_fetch_add(&g_fork_warm, 1);
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

void case_fork(void)
{
    bank_init();
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, fork_worker, (void *)i);
    /* Fork only once the workers have started and grown their logs: a
     * thread inside malloc at fork() leaves AddressSanitizer's allocator
     * (gcc 12's does not lock it around fork, unlike glibc's malloc) locked
     * in the child for ever. */
    while (atomic_load(&g_fork_warm) < 4)
        usleep(100);
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

void case_thread_exit(void)
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

/* ---- section actions ------------------------------------------------------------ */

static char g_act[32];
static unsigned g_nact;
static uint64_t g_act_x;

static void act(void *arg)
{
    if (g_nact < sizeof g_act - 1)
        g_act[g_nact++] = (char)(uintptr_t)arg;
}

/* A commit action that runs a section of its own (it runs after the
 * section is over). */
static void act_section(void *arg)
{
    HPS_TM_BEGIN();
    hps_tm_write_u64(&g_act_x, hps_tm_read_u64(&g_act_x) + 1);
    hps_tm_on_commit(act, arg);
    HPS_TM_END();
}

static void act_expect(const char *want, const char *when)
{
    HPS_CHECK(g_nact == strlen(want) && memcmp(g_act, want, g_nact) == 0,
              "%s: actions ran as \"%.*s\", expected \"%s\"", when, (int)g_nact, g_act, want);
    g_nact = 0;
}

void case_actions(void)
{
    /* Outside a section: commit actions run at once, abort actions never. */
    hps_tm_on_commit(act, (void *)'a');
    hps_tm_on_abort(act, (void *)'X');
    act_expect("a", "outside a section");
    /* Commit actions in order after the commit, none on abort; abort actions
     * newest first on each abort, after the writes are undone. */
    volatile int attempts = 0;  /* written in the section: volatile keeps it across an abort */
    HPS_TM_BEGIN();
    attempts++;
    hps_tm_write_u64(&g_x, hps_tm_read_u64(&g_x) + 10);
    hps_tm_on_commit(act, (void *)'c');
    hps_tm_on_commit(act, (void *)'d');
    hps_tm_on_abort(act, (void *)'1');
    hps_tm_on_abort(act, (void *)'2');
    HPS_CHECK(g_nact == 2u * (attempts - 1), "%u actions ran by attempt %d", g_nact, attempts);
    if (attempts < 3)
        hps_tm_restart();
    HPS_TM_END();
    act_expect("2121cd", "two restarts then a commit");
    HPS_CHECK(g_x == 10, "x is %llu after two rolled-back additions and one committed",
              (unsigned long long)g_x);
    /* Nested sections share the outermost section's actions. */
    HPS_TM_BEGIN();
    hps_tm_on_commit(act, (void *)'n');
    HPS_TM_BEGIN();
    hps_tm_on_commit(act, (void *)'m');
    HPS_TM_END();
    HPS_CHECK(g_nact == 0, "an inner END ran the actions");
    HPS_TM_END();
    act_expect("nm", "nested sections");
    /* An irrevocable section defers its commit actions too, and has no
     * abort actions. */
    HPS_TM_BEGIN();
    hps_tm_irrevocable();
    hps_tm_on_commit(act, (void *)'i');
    hps_tm_on_abort(act, (void *)'Y');
    HPS_CHECK(g_nact == 0, "a commit action ran inside an irrevocable section");
    HPS_TM_END();
    act_expect("i", "irrevocable section");
    /* A commit action may run a section with its own actions. */
    HPS_TM_BEGIN();
    hps_tm_on_commit(act_section, (void *)'s');
    hps_tm_on_commit(act, (void *)'t');
    HPS_TM_END();
    act_expect("st", "a commit action that runs a section");
    HPS_CHECK(g_act_x == 1 && !hps_tm_in_section(), "the action's section: x %llu",
              (unsigned long long)g_act_x);
}
