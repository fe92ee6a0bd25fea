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

void hps_env_bad_value(const char *env, const char *val, const char *why, const char *def);
void hps_env_row_UINT(const char *env, const char *val, const char *def,
                      unsigned long lo, unsigned long hi, uint32_t *out);
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
