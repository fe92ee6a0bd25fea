/* SPDX-License-Identifier: MIT */
/*
 * variant.c - what differs between the variants beyond tx.h's access
 * mapping: what the document says ran, and the section statistics (only
 * hpsync has them: libitm keeps none it exports, a mutex has none to keep).
 */
#include <stdlib.h>
#include "tm_bench.h"
#include "tx.h"

#if defined(TMB_MUTEX)
pthread_mutex_t tmb_sgl = PTHREAD_MUTEX_INITIALIZER;
#endif

void tmb_out_of_memory(void)
{
    hps_bench_log("out of memory in a section");
    exit(1);
}

const char *tmb_variant(void)
{
    return TMB_VARIANT;
}

#if defined(TMB_ITM)
/* The TM ABI's version query (libitm.h is not installed with gcc). */
const char *_ITM_libraryVersion(void);
#endif

void tmb_variant_json(void)
{
    hps_json_str("variant", TMB_VARIANT);
#if defined(TMB_ITM)
    /* libitm reads ITM_DEFAULT_METHOD itself and exports no way to ask which
     * method it chose: the document states the request (null: its default). */
    hps_json_str("method", getenv("ITM_DEFAULT_METHOD"));
    /* Which runtime the transactions ran on: libitm, or libhpsync-itm
     * (preloaded or found as libitm.so.1), whose version names hpsync. */
    hps_json_str("itm_library", _ITM_libraryVersion());
#else
    hps_json_null("method");
    hps_json_null("itm_library");
#endif
#if defined(TMB_HPSYNC)
    hps_json_str("backend", hps_tm_backend_name());
#else
    hps_json_null("backend");
#endif
}

#if defined(TMB_HPSYNC)
static hps_tm_stats_t g_before;
/* The backend and why, as the timed run ended (worker 0 notes it before the
 * threads exit and auto's choice changes with them). */
static char g_ran[32], g_reason[256];

void tmb_stats_note(void)
{
    snprintf(g_ran, sizeof g_ran, "%s", hps_tm_backend_name());
    hps_tm_backend_reason(g_reason, sizeof g_reason);
}

void tmb_stats_begin(void)
{
    hps_tm_stats_total(&g_before);
}

/* The statistics of the timed run: every counter's growth since begin
 * (setup ran sections too); the largest sets are the run's maxima so far. */
void tmb_stats_json(void)
{
    hps_tm_stats_t a;
    hps_tm_stats_total(&a);
    hps_json_begin_object("tm");
    hps_json_str("backend", g_ran[0] ? g_ran : hps_tm_backend_name());
    hps_json_str("reason", g_reason);
#define TMB_DELTA(f) hps_json_uint(#f, a.f - g_before.f)
    TMB_DELTA(commits);
    TMB_DELTA(commits_ro);
    TMB_DELTA(aborts);
    TMB_DELTA(retries);
    TMB_DELTA(irrevocable);
    TMB_DELTA(reads);
    TMB_DELTA(writes);
    TMB_DELTA(solo);
#undef TMB_DELTA
    hps_json_uint("max_read_set", a.max_read_set);
    hps_json_uint("max_write_set", a.max_write_set);
    hps_json_begin_object("aborts_by_cause");
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        if (a.aborts_by_cause[c] != g_before.aborts_by_cause[c])
            hps_json_uint(hps_tm_cause_name(c), a.aborts_by_cause[c] - g_before.aborts_by_cause[c]);
    hps_json_end_object();
    hps_json_end_object();
}
#else
void tmb_stats_note(void) {}
void tmb_stats_begin(void) {}
void tmb_stats_json(void) { hps_json_null("tm"); }
#endif
