// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <stdlib.h>
#include "envparse.h"
#include "settings.h"

extern char **environ;

static hps_malloc_settings_t g_settings;
static int g_env_read;

const hps_malloc_settings_t *hps_malloc_settings(void)
{
    return &g_settings;
}

void hps_malloc_settings_load(void)
{
    /* Read the environment once; before libc has set environ there is
     * nothing to read, so the defaults stand until the constructor retries. */
    if (g_env_read)
        return;
    char **env = environ;
#define X(field, name, kind, def, lo, hi, doc) \
    hps_env_row_##kind(#name, env ? secure_getenv(#name) : NULL, def, lo, hi, &g_settings.field);
#include "settings.def"
#undef X
    g_env_read = env != NULL;
}
