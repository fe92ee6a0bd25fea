// SPDX-License-Identifier: MIT
/* wl_sync.h's variants on the workload harness (harness_sync.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "harness_sync.h"

const char *const wl_sync_variant_names[WL_SYNC_N] = { "mutex", "tts", "elide", "stm" };
const char *const wl_sync_variant_kinds[WL_SYNC_N] = { "lock", "lock", "elide", "tm" };
const char *const wl_sync_variant_tm[WL_SYNC_N] = { NULL, NULL, NULL, "stm" };

const wl_sync_t *wl_sync_of(const wl_variant_t *v)
{
    static wl_sync_t table[WL_SYNC_N];
    static int parsed;
    if (!parsed) {
        for (int i = 0; i < WL_SYNC_N; i++)
            (void)wl_sync_parse(wl_sync_variant_names[i], &table[i]);
        parsed = 1;
    }
    /* The harness only hands over the variants of the list (ids 0..N-1). */
    return &table[v->id];
}

const wl_sync_t *wl_sync_harness_use(const wl_variant_t *v)
{
    const wl_sync_t *s = wl_sync_of(v);
    wl_sync_use(s);
    return s;
}

int wl_sync_main(const wl_workload_t *w, int argc, char **argv)
{
    /* Which variants will run: --variants' list, or all (stm among them). */
    int wants_stm = 1;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--variants")) {
            char *copy = strdup(argv[i + 1]), *save = NULL;
            wants_stm = 0;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                wants_stm |= !strcmp(t, "stm");
            free(copy);
        }
    if (!(argc == 2 && !strcmp(argv[1], "--describe")))
        wl_sync_settle_env(argv, wants_stm);
    return wl_main(w, argc, argv);
}
