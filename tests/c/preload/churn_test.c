// SPDX-License-Identifier: MIT
/*
 * Many threads over time: 20000 short-lived threads, created in waves, each
 * locking a few mutexes (normal, recursive, errorcheck) and signalling a
 * condvar.  Per-thread state in a lock algorithm (Hemlock's record, MCS
 * nodes, the interposer's cached tid) must neither leak nor outlive its
 * thread: RSS must stay flat and the counts exact.
 *   churn_test [threads] [wave]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

static pthread_mutex_t m_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t m_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long n_normal, n_rec, n_err, n_done;     /* guarded by their mutex */

static void *short_lived(void *arg)
{
    (void)arg;
    HPS_CHECK_RC("lock normal", pthread_mutex_lock(&m_normal), 0);
    n_normal++;
    HPS_CHECK_RC("lock recursive", pthread_mutex_lock(&m_rec), 0);
    HPS_CHECK_RC("relock recursive", pthread_mutex_lock(&m_rec), 0);
    n_rec++;
    HPS_CHECK_RC("unlock recursive", pthread_mutex_unlock(&m_rec), 0);
    HPS_CHECK_RC("unlock recursive", pthread_mutex_unlock(&m_rec), 0);
    HPS_CHECK_RC("unlock normal", pthread_mutex_unlock(&m_normal), 0);
    HPS_CHECK_RC("lock errorcheck", pthread_mutex_lock(&m_err), 0);
    n_err++;
    HPS_CHECK_RC("relock errorcheck", pthread_mutex_lock(&m_err), EDEADLK);
    HPS_CHECK_RC("unlock errorcheck", pthread_mutex_unlock(&m_err), 0);
    /* Hand-over of a lock just before this thread's exit. */
    HPS_CHECK_RC("lock normal", pthread_mutex_lock(&m_normal), 0);
    n_done++;
    pthread_cond_signal(&cv);
    HPS_CHECK_RC("unlock normal", pthread_mutex_unlock(&m_normal), 0);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *algo = hps_test_preloaded() ? getenv("HPSYNC_LOCK") : "glibc";
    static char name[64];
    snprintf(name, sizeof name, "churn_test[%s]", algo ? algo : "preload-default");
    hps_test_set_name(name);
    hps_test_watchdog(100);
    unsigned long total = argc > 1 ? hps_test_ulong(argv[1], "thread count") : 20000;
    unsigned wave = argc > 2 ? (unsigned)hps_test_ulong(argv[2], "wave size") : 32;
    pthread_t *t = calloc(wave, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    hps_test_rss_t rss = HPS_TEST_RSS_INIT;
    unsigned long made = 0;
    while (made < total) {
        unsigned n = total - made < wave ? (unsigned)(total - made) : wave;
        for (unsigned i = 0; i < n; i++) {
            int rc = pthread_create(&t[i], &attr, short_lived, NULL);
            if (rc)
                hps_test_fail("pthread_create after %lu threads: %s", made + i, strerror(rc));
        }
        /* The main thread competes too, and waits on the condvar for the wave. */
        HPS_CHECK_RC("lock normal", pthread_mutex_lock(&m_normal), 0);
        while (n_done < made + n)
            HPS_CHECK_RC("cond wait", pthread_cond_wait(&cv, &m_normal), 0);
        HPS_CHECK_RC("unlock normal", pthread_mutex_unlock(&m_normal), 0);
        for (unsigned i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        made += n;
        hps_test_rss_sample(&rss, made >= total / 10);
    }
    HPS_CHECK(n_normal == total && n_rec == total && n_err == total && n_done == total,
              "lost updates: normal %lu, recursive %lu, errorcheck %lu, done %lu of %lu",
              n_normal, n_rec, n_err, n_done, total);
    /* After warm-up (thread stacks cached, tables sized) memory stays flat. */
    hps_test_rss_check(&rss, 8192, total);
    printf("%s: ok: %lu threads in waves of %u, RSS %ld kB after warm-up, peak %ld kB\n",
           name, total, wave, rss.warm, rss.peak);
    free(t);
    return 0;
}
