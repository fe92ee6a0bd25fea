/* SPDX-License-Identifier: MIT */
/*
 * env.h - libhpsync settings, parsed once from the environment.
 *
 * Promise: hps_settings() never fails and never allocates.  It reads each
 * variable with secure_getenv; a malformed value gets one line on stderr
 * naming the variable, the value and the default used instead.
 */
#ifndef HPS_ENV_H
#define HPS_ENV_H

#include <stdint.h>
#include <stdio.h>
#include "hpsync/lock.h"

typedef struct hps_settings {
#define HPS_FIELD_UINT uint32_t
#define HPS_FIELD_BOOL uint32_t
#define HPS_FIELD_LOCK hps_lock_algo_t
#define HPS_FIELD_STR  const char *
#define X(field, env, kind, def, lo, hi, doc) HPS_FIELD_##kind field;
#include "settings.def"
#undef X
} hps_settings_t;

/* Parsed on first use (thread-safe, idempotent). */
const hps_settings_t *hps_settings(void);

/* Write the table with current values as JSON (for `hpsync doctor`). */
void hps_settings_dump_json(FILE *out);
/* The same, with more rows appended by more() (another library's table). */
void hps_settings_dump_json_ex(FILE *out, void (*more)(FILE *out, int *first));

#endif
