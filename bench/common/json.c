// SPDX-License-Identifier: MIT
/*
 * Streaming JSON writer on stdout.  A stack of "has this container had a
 * member yet" flags is all the state needed to place commas; indentation
 * follows the depth so a human can read a document with `less`.
 */
#include <math.h>
#include <stdio.h>
#include "hps_bench.h"

#define MAX_DEPTH 32

static int g_depth;
static unsigned char g_has_member[MAX_DEPTH];

static void indent(void)
{
    for (int i = 0; i < g_depth; i++)
        fputs("  ", stdout);
}

static void put_string(const char *s)
{
    fputc('"', stdout);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (*p < 0x20)
                printf("\\u%04x", *p);
            else
                fputc(*p, stdout);
        }
    }
    fputc('"', stdout);
}

/* Comma, newline and key before a new member; nothing at the top level. */
static void member(const char *key)
{
    if (g_depth > 0) {
        if (g_has_member[g_depth - 1])
            fputc(',', stdout);
        g_has_member[g_depth - 1] = 1;
        fputc('\n', stdout);
        indent();
    }
    if (key) {
        put_string(key);
        fputs(": ", stdout);
    }
}

static void open_container(const char *key, char c)
{
    member(key);
    fputc(c, stdout);
    if (g_depth < MAX_DEPTH)
        g_has_member[g_depth] = 0;
    g_depth++;
}

static void close_container(char c)
{
    int had = g_depth > 0 && g_depth <= MAX_DEPTH && g_has_member[g_depth - 1];
    g_depth--;
    if (had) {
        fputc('\n', stdout);
        indent();
    }
    fputc(c, stdout);
}

void hps_json_begin_object(const char *key) { open_container(key, '{'); }
void hps_json_end_object(void) { close_container('}'); }
void hps_json_begin_array(const char *key) { open_container(key, '['); }
void hps_json_end_array(void) { close_container(']'); }

void hps_json_str(const char *key, const char *val)
{
    member(key);
    if (val)
        put_string(val);
    else
        fputs("null", stdout);
}

void hps_json_int(const char *key, int64_t val)
{
    member(key);
    printf("%lld", (long long)val);
}

void hps_json_uint(const char *key, uint64_t val)
{
    member(key);
    printf("%llu", (unsigned long long)val);
}

void hps_json_num(const char *key, double val)
{
    member(key);
    /* JSON has no NaN or infinity; null says "not measured" honestly. */
    if (isfinite(val))
        printf("%.10g", val);
    else
        fputs("null", stdout);
}

void hps_json_bool(const char *key, int val)
{
    member(key);
    fputs(val ? "true" : "false", stdout);
}

void hps_json_null(const char *key)
{
    member(key);
    fputs("null", stdout);
}

void hps_json_num_array(const char *key, const double *v, int n)
{
    hps_json_begin_array(key);
    for (int i = 0; i < n; i++)
        hps_json_num(NULL, v[i]);
    hps_json_end_array();
}

FILE *hps_json_raw(const char *key)
{
    member(key);
    return stdout;
}

int hps_json_finish(void)
{
    fputc('\n', stdout);
    return fflush(stdout) != 0 || ferror(stdout);
}
