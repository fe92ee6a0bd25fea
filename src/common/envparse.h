/* SPDX-License-Identifier: MIT */
/*
 * envparse.h - one settings row from its environment value.
 *
 * Promise: each hps_env_row_KIND stores the default, then the value if it
 * is valid; an invalid value costs one line on stderr ("hpsync: NAME='v' is
 * not ...; using DEFAULT") written with write(2), and the default stays.
 * Nothing allocates.
 */
#ifndef HPS_ENVPARSE_H
#define HPS_ENVPARSE_H

#include <stdint.h>
#include <stdio.h>

/*
 * Each library that compiles envparse.c (libhpsync, libhpsync-shmem, the
 * allocator) carries its own copy, so each copy is named with that
 * library's prefix: its build defines HPS_ENV_PREFIX (hps_shmem_env_ for
 * libhpsync-shmem), and the hps_env_* names below stand for the prefixed
 * ones, so callers and settings tables keep writing hps_env_*.  Were the
 * copies named alike, a program linking libhpsync.a and libhpsync-shmem.a
 * would silently use one library's copy, or fail on a duplicate
 * definition.  libhpsync's copy, the default, keeps the hps_env_ prefix.
 */
#ifndef HPS_ENV_PREFIX
#define HPS_ENV_PREFIX hps_env_
#endif
#define HPS_ENV_CAT_(a, b) a##b
#define HPS_ENV_CAT(a, b) HPS_ENV_CAT_(a, b)
#define hps_env_bad_value HPS_ENV_CAT(HPS_ENV_PREFIX, bad_value)
#define hps_env_row_UINT HPS_ENV_CAT(HPS_ENV_PREFIX, row_UINT)
#define hps_env_row_BOOL HPS_ENV_CAT(HPS_ENV_PREFIX, row_BOOL)
#define hps_env_parse_bool HPS_ENV_CAT(HPS_ENV_PREFIX, parse_bool)
#define hps_env_row_STR HPS_ENV_CAT(HPS_ENV_PREFIX, row_STR)
#define hps_env_json_row HPS_ENV_CAT(HPS_ENV_PREFIX, json_row)

void hps_env_bad_value(const char *env, const char *val, const char *why, const char *def);
void hps_env_row_UINT(const char *env, const char *val, const char *def,
                      unsigned long lo, unsigned long hi, uint32_t *out);
/* A boolean value as the BOOL rows read it (1 yes true on / 0 no false off
 * and empty): 0 with *out set, -1 if it is neither (nothing printed). */
int hps_env_parse_bool(const char *val, uint32_t *out);
void hps_env_row_BOOL(const char *env, const char *val, const char *def,
                      unsigned long lo, unsigned long hi, uint32_t *out);
void hps_env_row_STR(const char *env, const char *val, const char *def,
                     unsigned long lo, unsigned long hi, const char **out);
/* One settings row as a JSON object (for `hpsync doctor`): name, kind,
 * default, current value (null when unset) and doc; *first tracks commas.
 * Uses stdio: never called from the allocator. */
void hps_env_json_row(FILE *out, int *first, const char *name, const char *kind,
                      const char *def, const char *doc);

#endif
