// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "env.h"
#include "envparse.h"

static hps_settings_t g_settings;
static hps_au32 g_state;             /* 0 unparsed, 1 parsing, 2 ready */

static void hps_env_row_LOCK(const char *env, const char *val, const char *def,
                             unsigned long lo, unsigned long hi, hps_lock_algo_t *out)
{
    hps_lock_algo_parse(def, out);
    if (val && *val && hps_lock_algo_parse(val, out) != 0) {
        char why[128];
        snprintf(why, sizeof why, "is not a lock algorithm (%s)", hps_lock_algo_names());
        hps_env_bad_value(env, val, why, def);
        hps_lock_algo_parse(def, out);
    }
}

static void parse_all(void)
{
#define X(field, env, kind, def, lo, hi, doc) \
    hps_env_row_##kind(#env, secure_getenv(#env), def, lo, hi, &g_settings.field);
#include "settings.def"
#undef X
    hps_wait_spin_limit = g_settings.spin;
    hps_wait_yield_limit = g_settings.yields;
}

const hps_settings_t *hps_settings(void)
{
    if (hps_likely(hps_load_acquire(&g_state) == 2))
        return &g_settings;
    uint32_t e = 0;
    if (hps_cas_acq_rel(&g_state, &e, 1)) {
        parse_all();
        /* Release: readers that see 2 see every field. */
        hps_store_release(&g_state, 2);
    } else {
        while (hps_load_acquire(&g_state) != 2)
            hps_cpu_relax();
    }
    return &g_settings;
}

void hps_settings_dump_json_ex(FILE *out, void (*more)(FILE *out, int *first))
{
    (void)hps_settings();
    int first = 1;
    fputs("[", out);
#define X(field, env, kind, def, lo, hi, doc) hps_env_json_row(out, &first, #env, #kind, def, doc);
#include "settings.def"
#undef X
    if (more)
        more(out, &first);
    fputs("\n]", out);
}

void hps_settings_dump_json(FILE *out)
{
    hps_settings_dump_json_ex(out, NULL);
}
