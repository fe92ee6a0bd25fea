// SPDX-License-Identifier: MIT
/*
 * tm_test's cases on the backends: hardware sections under injected
 * outcomes (htm, hybrid), the choice of backend and auto's switches.
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
void case_hw_policy(void)
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
void case_hw_own(void)
{
    volatile int attempts = 0, hw1 = 0, hw2 = 0;  /* written in sections: volatile keeps them across aborts */
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
    volatile int alone = 0;
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

void case_backend(const char *want)
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

void case_auto(void)
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

void case_auto_churn(void)
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

/* auto's rule (HPSYNC_TM_AUTO_TRIAL=0) as one thread becomes two and one
 * again: solo alone, `two` with a second thread. */
static void auto_pair(const char *two, const char *why)
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
    expect_backend(two, why);
    for (int i = 0; i < 500; i++)
        transfer(&s);
    hps_store_release(&g_stop, 1);
    pthread_join(t, NULL);
    expect_backend("solo", "after the thread exited");
    bank_check();
}

/* On a small machine (HPSYNC_TM_AUTO_CPUS=2) without RTM: sgl. */
void case_auto_small(void)
{
    auto_pair("sgl", "with 2 threads on 2 CPUs");
}

/* Where RTM speculates: hybrid from two threads, and still solo alone (a
 * thread alone is faster on the bias than in hardware transactions). */
void case_auto_rtm(void)
{
    if (strcmp(hps_elide_backend_name(), "rtm") != 0) {
        printf("%s: skipped: no RTM (elision backend %s)\n", hps_test_name(), hps_elide_backend_name());
        exit(77);
    }
    auto_pair("hybrid", "with 2 threads where RTM speculates");
}
