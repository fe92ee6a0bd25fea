// SPDX-License-Identifier: MIT
/*
 * Parsers for one row of a settings table (src/common/settings.def,
 * src/malloc/settings.def).  They never allocate: the allocator parses its
 * settings from inside malloc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "envparse.h"

/* One line per problem; write(2) because stdio may not be usable yet. */
void hps_env_bad_value(const char *env, const char *val, const char *why, const char *def)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "hpsync: %s='%s' %s; using %s\n", env, val, why, def);
    if (n > 0)
        (void)!write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, uint32_t *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

void hps_env_row_UINT(const char *env, const char *val, const char *def,
                      unsigned long lo, unsigned long hi, uint32_t *out)
{
    parse_uint(def, 0, ~0ul, out);
    if (val && parse_uint(val, lo, hi, out) != 0) {
        char why[96];
        snprintf(why, sizeof why, "is not a whole number in %lu..%lu", lo, hi);
        hps_env_bad_value(env, val, why, def);
    }
}

int hps_env_parse_bool(const char *val, uint32_t *out)
{
    if (!strcmp(val, "1") || !strcasecmp(val, "yes") || !strcasecmp(val, "true") || !strcasecmp(val, "on"))
        *out = 1;
    else if (!strcmp(val, "0") || !strcasecmp(val, "no") || !strcasecmp(val, "false") || !strcasecmp(val, "off") || !*val)
        *out = 0;
    else
        return -1;
    return 0;
}

void hps_env_row_BOOL(const char *env, const char *val, const char *def,
                      unsigned long lo, unsigned long hi, uint32_t *out)
{
    *out = def[0] == '1';
    if (val && hps_env_parse_bool(val, out) != 0)
        hps_env_bad_value(env, val, "is not 0 or 1", def);
}

void hps_env_row_STR(const char *env, const char *val, const char *def,
                     unsigned long lo, unsigned long hi, const char **out)
{
    (void)env, (void)lo, (void)hi;
    *out = val ? val : def;
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

void hps_env_json_row(FILE *out, int *first, const char *name, const char *kind,
                      const char *def, const char *doc)
{
    const char *v = secure_getenv(name);
    fprintf(out, "%s\n  {\"name\": ", *first ? "" : ",");
    *first = 0;
    json_str(out, name);
    fputs(", \"kind\": ", out);
    json_str(out, kind);
    fputs(", \"default\": ", out);
    json_str(out, def);
    fputs(", \"value\": ", out);
    if (v)
        json_str(out, v);
    else
        fputs("null", out);
    fputs(", \"doc\": ", out);
    json_str(out, doc);
    fputs("}", out);
}
