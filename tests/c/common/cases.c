// SPDX-License-Identifier: MIT
/* The case dispatcher of test programs (see harness.h). */
#define _GNU_SOURCE
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hps_test_impl(void)
{
    if (!hps_test_preloaded())
        return "glibc";
    const char *algo = getenv("HPSYNC_LOCK");
    return algo && *algo ? algo : "preload-default";
}

/* "usage: prog a [x] | b | c" on f, without the newline. */
static void usage(FILE *f, const hps_test_suite_t *s)
{
    fprintf(f, "usage: %s", s->prog);
    for (size_t i = 0; i < s->ncases; i++) {
        const hps_test_case_t *c = &s->cases[i];
        fprintf(f, "%s%s%s%s", i ? " | " : " ", c->name, c->args ? " " : "", c->args ? c->args : "");
    }
}

/* One line: what was wrong, then the usage; exit 2. */
static void __attribute__((noreturn, format(printf, 2, 3)))
usage_error(const hps_test_suite_t *s, const char *fmt, ...)
{
    /* Built in one buffer and written at once, so the line stays whole. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(f, "%s: ", s->prog);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fputs("; ", f);
        usage(f, s);
        fputc('\n', f);
        fclose(f);
        fputs(buf, stderr);
    }
    exit(2);
}

const hps_test_case_t *hps_test_case_select(const hps_test_suite_t *s, int argc, char **argv)
{
    if (argc < 2)
        usage_error(s, "no case given");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout, s);
        putchar('\n');
        exit(0);
    }
    const hps_test_case_t *c = NULL;
    for (size_t i = 0; i < s->ncases && !c; i++)
        if (!strcmp(argv[1], s->cases[i].name))
            c = &s->cases[i];
    if (!c)
        usage_error(s, "unknown case '%s'", argv[1]);
    unsigned nargs = (unsigned)argc - 2;
    unsigned lo = c->run_args ? c->min_args : 0, hi = c->run_args ? c->max_args : 0;
    if (nargs < lo || nargs > hi) {
        if (lo == hi)
            usage_error(s, "case '%s' takes %u argument%s, got %u", c->name, lo, lo == 1 ? "" : "s", nargs);
        usage_error(s, "case '%s' takes %u to %u arguments, got %u", c->name, lo, hi, nargs);
    }

    /* The name lives as long as the process: FAIL lines come from anywhere. */
    static char name[160];
    int n = snprintf(name, sizeof name, "%s[%s", s->prog, c->name);
    for (int i = 2; i < argc && n > 0 && (size_t)n < sizeof name; i++)
        n += snprintf(name + n, sizeof name - (size_t)n, ",%s", argv[i]);
    if (n > 0 && (size_t)n < sizeof name && (s->flags & HPS_TEST_NAME_IMPL))
        n += snprintf(name + n, sizeof name - (size_t)n, ",%s", hps_test_impl());
    if (n > 0 && (size_t)n < sizeof name - 1)
        snprintf(name + n, sizeof name - (size_t)n, "]");
    else
        snprintf(name + sizeof name - 5, 5, "...]");
    hps_test_set_name(name);
    if (s->watchdog_s)
        hps_test_watchdog(s->watchdog_s);
    return c;
}

int hps_test_case_run(const hps_test_case_t *c, int argc, char **argv)
{
    if (c->run_args)
        return c->run_args(c, argc - 1, argv + 1);
    c->run();
    return 0;
}

int hps_test_main(const hps_test_suite_t *s, int argc, char **argv)
{
    return hps_test_case_run(hps_test_case_select(s, argc, argv), argc, argv);
}
