/* SPDX-License-Identifier: MIT */
/*
 * settings.h - libhpsync-shmem's settings (src/shmem/settings.def).
 *
 * Promise: hps_shmem_settings_load() reads the environment once (at
 * shmem_init); a bad value costs one line and leaves the default.
 * hps_shmem_heap_bytes() is the heap size the settings ask for.
 */
#ifndef HPS_SHMEM_SETTINGS_H
#define HPS_SHMEM_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define HPS_SHMEM_SETTING_UINT uint32_t
#define HPS_SHMEM_SETTING_BOOL uint32_t
#define HPS_SHMEM_SETTING_STR const char *
typedef struct hps_shmem_settings {
#define X(field, env, kind, def, lo, hi, doc) HPS_SHMEM_SETTING_##kind field;
#include "settings.def"
#undef X
} hps_shmem_settings_t;

#define HPS_SHMEM_HEAP_MIN ((size_t)1 << 20)

extern hps_shmem_settings_t hps_shmem_set;
void hps_shmem_settings_load(void);
size_t hps_shmem_heap_bytes(void);

#endif
