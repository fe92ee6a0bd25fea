// SPDX-License-Identifier: MIT
/*
 * Streaming JSON writer, on stdout unless hps_json_open() names another
 * stream.  A stack of "has this container had a member yet" flags is all the
 * state needed to place commas; indentation follows the depth so a human can
 * read a document with `less`, except in compact mode, where a document is
 * one line (a line of a JSON Lines file).
 */
#include <math.h>
#include <stdio.h>
#include "hps_bench.h"

#define MAX_DEPTH 32

static int g_depth;
static unsigned char g_has_member[MAX_DEPTH];
static FILE *g_out;
static int g_compact;

#define OUT (g_out ? g_out : stdout)

void hps_json_open(FILE *f, int compact)
{
    g_out = f;
    g_compact = compact;
    g_depth = 0;
}

static void newline_indent(void)
{
    if (g_compact)
        return;
    fputc('\n', OUT);
    for (int i = 0; i < g_depth; i++)
        fputs("  ", OUT);
}

static void put_string(const char *s)
{
    FILE *f = OUT;
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Comma, newline and key before a new member; nothing at the top level. */
static void member(const char *key)
{
    if (g_depth > 0) {
        if (g_has_member[g_depth - 1])
            fputc(',', OUT);
        g_has_member[g_depth - 1] = 1;
        newline_indent();
    }
    if (key) {
        put_string(key);
        fputs(g_compact ? ":" : ": ", OUT);
    }
}

static void open_container(const char *key, char c)
{
    member(key);
    fputc(c, OUT);
    if (g_depth < MAX_DEPTH)
        g_has_member[g_depth] = 0;
    g_depth++;
}

static void close_container(char c)
{
    int had = g_depth > 0 && g_depth <= MAX_DEPTH && g_has_member[g_depth - 1];
    g_depth--;
    if (had)
        newline_indent();
    fputc(c, OUT);
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
        fputs("null", OUT);
}

void hps_json_int(const char *key, int64_t val)
{
    member(key);
    fprintf(OUT, "%lld", (long long)val);
}

void hps_json_uint(const char *key, uint64_t val)
{
    member(key);
    fprintf(OUT, "%llu", (unsigned long long)val);
}

void hps_json_num(const char *key, double val)
{
    member(key);
    /* JSON has no NaN or infinity; null says "not measured" honestly. */
    if (isfinite(val))
        fprintf(OUT, "%.10g", val);
    else
        fputs("null", OUT);
}

void hps_json_bool(const char *key, int val)
{
    member(key);
    fputs(val ? "true" : "false", OUT);
}

void hps_json_null(const char *key)
{
    member(key);
    fputs("null", OUT);
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
    return OUT;
}

int hps_json_finish(void)
{
    fputc('\n', OUT);
    return fflush(OUT) != 0 || ferror(OUT);
}
