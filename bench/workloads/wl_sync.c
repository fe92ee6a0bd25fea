// SPDX-License-Identifier: MIT
/* The workloads' global-lock variants (wl_sync.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hps_bench.h"
#include "hpsync/elide.h"
#include "hpsync/lock.h"
#include "hpsync/tm.h"
#include "tm_bench.h"
#include "wl_sync.h"

static wl_sync_t g_sync;
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
/* The TTS lock, on its own line: the data it protects must not share it. */
static _Alignas(64) hps_lock_t g_lock;
static hps_elide_state_t g_elide_state = HPS_ELIDE_STATE_INIT;
/* One set of counters for every thread: elision counts outside its
 * transactions, so sharing them costs atomics, not aborts. */
static hps_elide_stats_t g_elide_stats;
static const char *const k_elide_causes[HPS_ELIDE_NCAUSES] = { "conflict", "capacity", "busy",
                                                               "explicit", "other" };

int wl_sync_parse(const char *name, wl_sync_t *s)
{
    memset(s, 0, sizeof *s);
    s->retries = -1;
    snprintf(s->name, sizeof s->name, "%s", name);
    if (!strcmp(name, "mutex"))
        s->kind = WL_MUTEX;
    else if (!strcmp(name, "tts"))
        s->kind = WL_TTS;
    else if (!strcmp(name, "elide"))
        s->kind = WL_ELIDE;
    else if (!strcmp(name, "stm"))
        s->kind = WL_STM;
    else if (!strncmp(name, "elide-r", 7) && name[7]) {
        char *end;
        long n = strtol(name + 7, &end, 10);
        if (*end || n < 0 || n > 100)
            return -1;
        s->kind = WL_ELIDE;
        s->retries = (int)n;
    } else {
        s->kind = WL_OTHER;
        return -1;
    }
    return 0;
}

void wl_sync_settle_env(char **argv, int wants_stm)
{
    if (!wants_stm || getenv("HPSYNC_TM"))
        return;
    /* The library read its settings before main: only a new image sees the
     * backend.  HPSYNC_TM being set now stops a second re-execution. */
    setenv("HPSYNC_TM", "stm", 1);
    execv("/proc/self/exe", argv);
    hps_bench_log("cannot re-execute with HPSYNC_TM=stm; set it yourself");
    exit(2);
}

void wl_sync_use(const wl_sync_t *s)
{
    g_sync = *s;
    hps_lock_init(&g_lock, HPS_LOCK_TTAS);
    hps_init(&g_elide_state.v, 0);
    if (s->kind == WL_ELIDE && s->retries >= 0)
        hps_elide_set_retries((unsigned)s->retries);
}

void tmb_lock_enter(void)
{
    switch (g_sync.kind) {
    case WL_MUTEX:
        pthread_mutex_lock(&g_mutex);
        break;
    case WL_ELIDE:
        hps_elide_lock_ex(&g_lock, &g_elide_state, &g_elide_stats);
        break;
    default:
        hps_lock_lock(&g_lock);
        break;
    }
}

void tmb_lock_exit(void)
{
    switch (g_sync.kind) {
    case WL_MUTEX:
        pthread_mutex_unlock(&g_mutex);
        break;
    case WL_ELIDE:
        hps_elide_unlock_ex(&g_lock, &g_elide_state, &g_elide_stats);
        break;
    default:
        hps_lock_unlock(&g_lock);
        break;
    }
}

const char *wl_sync_tm_backend(void)
{
    return hps_tm_backend_name();
}

static hps_tm_stats_t g_tm_before;

void wl_sync_stats_begin(void)
{
    memset(&g_elide_stats, 0, sizeof g_elide_stats);
    tmb_stats_begin();
    hps_tm_stats_total(&g_tm_before);
}

_Static_assert(HPS_ELIDE_NCAUSES == 5 && HPS_TM_CAUSES <= 16, "wl_sync_stats_t's arrays");

void wl_sync_stats_add(wl_sync_stats_t *acc)
{
    hps_elide_stats_t *e = &g_elide_stats;
    acc->begun += hps_load_relaxed(&e->attempts);
    acc->commits += hps_load_relaxed(&e->commits);
    for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
        acc->aborts[c] += hps_load_relaxed(&e->aborts[c]);
    acc->fallbacks += hps_load_relaxed(&e->fallbacks);
    acc->skips += hps_load_relaxed(&e->skips);
    hps_tm_stats_t a, *b = &g_tm_before;
    hps_tm_stats_total(&a);
    acc->tm_commits += a.commits - b->commits;
    acc->tm_commits_ro += a.commits_ro - b->commits_ro;
    acc->tm_aborts += a.aborts - b->aborts;
    acc->tm_retries += a.retries - b->retries;
    acc->tm_irrevocable += a.irrevocable - b->irrevocable;
    acc->tm_reads += a.reads - b->reads;
    acc->tm_writes += a.writes - b->writes;
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        acc->tm_by_cause[c] += a.aborts_by_cause[c] - b->aborts_by_cause[c];
}

static void elision_json(const wl_sync_t *s, const wl_sync_stats_t *acc)
{
    if (s->kind != WL_ELIDE) {
        hps_json_null("elision");
        return;
    }
    hps_json_begin_object("elision");
    hps_json_str("backend", hps_elide_backend_name());
    hps_json_uint("restarts", hps_elide_retries());
    hps_json_uint("begun", acc->begun);
    hps_json_uint("commits", acc->commits);
    hps_json_begin_object("aborts_by_cause");
    for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
        hps_json_uint(k_elide_causes[c], acc->aborts[c]);
    hps_json_end_object();
    hps_json_uint("fallbacks", acc->fallbacks);
    hps_json_uint("skips", acc->skips);
    hps_json_end_object();
}

void wl_sync_stats_write(const wl_sync_t *s, const wl_sync_stats_t *acc)
{
    elision_json(s, acc);
    if (s->kind != WL_STM) {
        hps_json_null("tm");
        return;
    }
    hps_json_begin_object("tm");
    hps_json_str("backend", hps_tm_backend_name());
    hps_json_uint("commits", acc->tm_commits);
    hps_json_uint("commits_ro", acc->tm_commits_ro);
    hps_json_uint("aborts", acc->tm_aborts);
    hps_json_uint("retries", acc->tm_retries);
    hps_json_uint("irrevocable", acc->tm_irrevocable);
    hps_json_uint("reads", acc->tm_reads);
    hps_json_uint("writes", acc->tm_writes);
    hps_json_begin_object("aborts_by_cause");
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        if (acc->tm_by_cause[c])
            hps_json_uint(hps_tm_cause_name(c), acc->tm_by_cause[c]);
    hps_json_end_object();
    hps_json_end_object();
}

/* One run's statistics (the tree and ring before the harness; the ART). */
void wl_sync_stats_json(void)
{
    wl_sync_stats_t acc;
    memset(&acc, 0, sizeof acc);
    wl_sync_stats_add(&acc);
    elision_json(&g_sync, &acc);
    if (g_sync.kind == WL_STM)
        tmb_stats_json();
    else
        hps_json_null("tm");
}
