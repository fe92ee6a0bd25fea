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

void wl_sync_stats_begin(void)
{
    memset(&g_elide_stats, 0, sizeof g_elide_stats);
    tmb_stats_begin();
}

void wl_sync_stats_json(void)
{
    if (g_sync.kind == WL_ELIDE) {
        hps_elide_stats_t *e = &g_elide_stats;
        static const char *const causes[HPS_ELIDE_NCAUSES] = { "conflict", "capacity", "busy",
                                                               "explicit", "other" };
        hps_json_begin_object("elision");
        hps_json_str("backend", hps_elide_backend_name());
        hps_json_uint("restarts", hps_elide_retries());
        hps_json_uint("begun", hps_load_relaxed(&e->attempts));
        hps_json_uint("commits", hps_load_relaxed(&e->commits));
        hps_json_begin_object("aborts_by_cause");
        for (int c = 0; c < HPS_ELIDE_NCAUSES; c++)
            hps_json_uint(causes[c], hps_load_relaxed(&e->aborts[c]));
        hps_json_end_object();
        hps_json_uint("fallbacks", hps_load_relaxed(&e->fallbacks));
        hps_json_uint("skips", hps_load_relaxed(&e->skips));
        hps_json_end_object();
    } else {
        hps_json_null("elision");
    }
    if (g_sync.kind == WL_STM)
        tmb_stats_json();
    else
        hps_json_null("tm");
}
