/* SPDX-License-Identifier: MIT */
/*
 * settings.h - libhpsync-malloc's settings (src/malloc/settings.def).
 *
 * Promise: hps_malloc_settings() never fails and never allocates.  Until the
 * environment can be read (the first malloc may come from the dynamic
 * loader before libc has set up environ) it answers the defaults; the
 * library's constructor reads the environment again.
 */
#ifndef HPS_MALLOC_SETTINGS_H
#define HPS_MALLOC_SETTINGS_H

#include <stdint.h>
#include <stdio.h>

typedef struct hps_malloc_settings {
#define X(field, env, kind, def, lo, hi, doc) uint32_t field;
#include "settings.def"
#undef X
} hps_malloc_settings_t;

const hps_malloc_settings_t *hps_malloc_settings(void);
/* Parse the environment once it exists; called at init and by the constructor. */
void hps_malloc_settings_load(void);

#endif
