// SPDX-License-Identifier: MIT
/*
 * tm_test's cases on auto's measurement: with two or more threads auto
 * runs each of sgl, norec and stm for a window and keeps the one that
 * commits the most sections per second (src/tm/auto.c).  The workloads
 * make the right answer hold by a wide margin on a loaded machine too:
 *   - "sleepers": sections that each wait 100 us inside (a stand-in for
 *     long, disjoint work).  sgl runs them one at a time; norec and stm
 *     run all threads' at once, so they commit about THREADS x as many.
 *     Waiting takes no CPU, so other processes on the cores do not
 *     change the ratio.
 *   - "scanners": sections that read 4096 shared words and then write
 *     one word every section reads.  Under norec and stm each commit
 *     invalidates every other section in flight, and instrumented reads
 *     cost several times sgl's plain loads; sgl commits several times
 *     more.
 * Run with HPSYNC_TM_AUTO_TRIAL=2 (2 ms windows) and HPSYNC_TM_AUTO_CPUS
 * set so that the rule's first pick is the wrong one for the workload.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tm_test.h"

#define AUTO_THREADS 4
#define SCAN_WORDS 4096

static uint64_t g_words[SCAN_WORDS];
static uint64_t g_slot[AUTO_THREADS * 8];     /* one word per thread, a line apart */
static hps_au32 g_phase;                      /* 0 sleepers, 1 scanners, 2 stop */

static void sleep_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    uint32_t ph;
    while ((ph = hps_load_acquire(&g_phase)) != 2) {
        if (ph == 0) {
            HPS_TM_BEGIN();
            uint64_t v = hps_tm_read_u64(&g_slot[me * 8]);
            sleep_us(100);
            hps_tm_write_u64(&g_slot[me * 8], v + 1);
            HPS_TM_END();
        } else {
            HPS_TM_BEGIN();
            uint64_t sum = 0;
            for (int i = 0; i < SCAN_WORDS; i++)
                sum += hps_tm_read_u64(&g_words[i]);
            /* Every word but the first stays 0: the sum is the first. */
            HPS_CHECK(sum == hps_tm_read_u64(&g_words[0]), "scanner saw sum %llu, first word %llu",
                      (unsigned long long)sum, (unsigned long long)hps_tm_read_u64(&g_words[0]));
            hps_tm_write_u64(&g_words[0], sum + 1);
            HPS_TM_END();
        }
    }
    return NULL;
}

/* Wait (up to 10 s) until auto has finished a trial after trial `after`
 * at AUTO_THREADS threads and holds a backend; return its name and set
 * *trial to the trial's number. */
static const char *measured(unsigned long long after, unsigned long long *trial)
{
    char why[256];
    for (int i = 0; i < 1000; i++) {
        const char *b = hps_tm_backend_name();
        hps_tm_backend_reason(why, sizeof why);
        const char *t = strstr(why, "(trial ");
        if (!strncmp(why, "auto: measured at 4 threads", 27) && t &&
            sscanf(t, "(trial %llu", trial) == 1 && *trial > after &&
            !strcmp(b, hps_tm_backend_name()))
            return b;
        sleep_us(10000);
    }
    HPS_CHECK(0, "auto did not finish a measurement in 10 s: \"%s\"", why);
    return NULL;
}

/* The backend a trial's reason names with the most commits/s
 * ("... commits/s sgl 6.02e+04, norec 1.12e+05, stm 9.25e+04 (trial 3 ..."). */
static const char *trial_best(const char *why)
{
    static const char *const names[] = { "sgl", "norec", "stm" };
    const char *best = NULL;
    double most = -1;
    for (int i = 0; i < 3; i++) {
        char key[16];
        snprintf(key, sizeof key, " %s ", names[i]);
        const char *p = strstr(why, key);
        double v;
        if (p && sscanf(p + strlen(key), "%lf", &v) == 1 && v > most) {
            most = v;
            best = names[i];
        }
    }
    return best;
}

static int software_tm(const char *name)
{
    return !strcmp(name, "norec") || !strcmp(name, "stm");
}

/* Sleepers: auto leaves the rule's sgl (HPSYNC_TM_AUTO_CPUS=2) for norec or
 * stm; then the same threads turn into scanners and auto, seeing the abort
 * ratio jump (or its hold end), measures again and holds what that trial
 * measured best: sgl by about 2x on an idle machine, but on a heavily
 * loaded one (load average 30 here, with other builds) sgl's preempted lock
 * holders can make norec win, and auto is right to keep it then. */
void case_auto_measure(void)
{
    pthread_t t[AUTO_THREADS];
    for (uintptr_t i = 0; i < AUTO_THREADS; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, worker, (void *)i), 0);
    unsigned long long t1, t2;
    const char *b = measured(0, &t1);
    char why[256];
    hps_tm_backend_reason(why, sizeof why);
    HPS_CHECK(software_tm(b), "sleepers: auto kept %s (%s)", b, why);
    hps_store_release(&g_phase, 1);
    /* The sleepers' winner sees aborts soar, or its hold (64 windows of 2 ms,
     * doubling) ends: auto measures again. */
    const char *now = measured(t1, &t2);
    hps_tm_backend_reason(why, sizeof why);
    const char *best = trial_best(why);
    HPS_CHECK(best && !strcmp(now, best), "scanners: auto holds %s, but its trial measured %s best (%s)", now,
              best ? best : "nothing", why);
    if (strcmp(now, "sgl") != 0)
        printf("auto: scanners measured best on %s, not sgl: a loaded machine (%s)\n", now, why);
    hps_store_release(&g_phase, 2);
    for (int i = 0; i < AUTO_THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < AUTO_THREADS; i++)
        HPS_CHECK(g_slot[i * 8] > 0, "thread %d committed no sleeper section", i);
    printf("auto: sleepers -> %s, scanners -> %s (%s)\n", b, now, why);
}
