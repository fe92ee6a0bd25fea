// SPDX-License-Identifier: MIT
/*
 * shmem_err CASE - provokes one error the library must report with one line
 * naming the call, ending the job with a non-zero status.  Only PE 0 makes
 * the bad call (the others wait in a barrier the job's teardown ends),
 * except where the call is collective.  Reaching the end is a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "shtest.h"

const char *t_family = "errors";

static int g_sym;

/* Set up for the cases after shmem_init (every case but before_init*). */
static int me, n;
static int *heap;

/* Reaching the end: the error went unnoticed on this PE. */
static int not_caught(const char *c)
{
    shmem_barrier_all();
    fprintf(stderr, "shmem_err: PE %d: %s was not caught\n", me, c);
    return 3;
}

static void before_init(void) { shmem_int_p(&g_sym, 1, 0); }
static void before_init_malloc(void) { shmem_malloc(8); }

static void bad_pe(void)
{
    if (me == 0)
        shmem_int_p(heap, 1, n);
}

/* A context on a one-member team: PE 1 is past the team's end, though it
 * is a valid world PE. */
static void team_ctx_pe(void)
{
    shmem_team_t t;
    shmem_ctx_t ctx;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &t) == 0 &&
        t != SHMEM_TEAM_INVALID &&
        shmem_team_create_ctx(t, 0, &ctx) == 0 && me == 0)
        shmem_ctx_int_p(ctx, heap, 1, 1);
}

static void negative_pe(void)
{
    if (me == 0)
        (void)shmem_long_atomic_fetch_add((long *)heap, 1, -1);
}

/* A local (stack) variable: not symmetric. */
static void bad_addr(void)
{
    int local = 0;
    if (me == 0)
        shmem_int_put(&local, &local, 1, n - 1);
}

static void past_end(void)
{
    if (me == 0) {
        static char buf[1 << 16];
        size_t room = shmemx_heap_size();
        shmem_putmem((char *)heap + room - 100, buf, sizeof buf, n - 1);
    }
}

static void heap_exhausted(void) { shmem_malloc(shmemx_heap_size() + 1); }

/* Past the heap size rounded up to a power of two, no address can be
 * aligned on every PE. */
static void align_too_large(void)
{
    size_t a = 8;
    while (a < shmemx_heap_size())
        a <<= 1;
    shmem_align(2 * a, 64);
}

static void bad_cmp(void)
{
    if (me == 0)
        shmem_int_wait_until(heap, 42, 0);
}

static void bad_free(void)
{
    int local = 0;
    if (me == 0)
        shmem_free(&local);
}

static void global_exit(void)
{
    if (me == n - 1)
        shmem_global_exit(7);
}

/* The others leave cleanly. */
static void after_finalize(void)
{
    shmem_finalize();
    if (me == 0)
        shmem_int_g(&g_sym, 0);
    exit(0);
}

/* 1.2-style: start_pes, no shmem_finalize.  PE 0 leaves at once and must
 * wait for the others (implicit finalize at exit), whose late put into its
 * memory still lands; the job succeeds. */
static void no_finalize(void)
{
    static int late;
    if (me == 1) {
        usleep(200000);
        shmem_int_p(&late, 5, 0);
    }
    exit(0);
}

/* The datum marks the cases that run before shmem_init. */
static const char pre_init[] = "before shmem_init";
static const hps_test_case_t cases[] = {
    { "before_init", .run = before_init, .data = pre_init },
    { "before_init_malloc", .run = before_init_malloc, .data = pre_init },
    { "bad_pe", .run = bad_pe },
    { "team_ctx_pe", .run = team_ctx_pe },
    { "negative_pe", .run = negative_pe },
    { "bad_addr", .run = bad_addr },
    { "past_end", .run = past_end },
    { "heap_exhausted", .run = heap_exhausted },
    { "align_too_large", .run = align_too_large },
    { "bad_cmp", .run = bad_cmp },
    { "bad_free", .run = bad_free },
    { "after_finalize", .run = after_finalize },
    { "no_finalize", .run = no_finalize },
    { "global_exit", .run = global_exit },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("shmem_err", cases, 30, 0);

int main(int argc, char **argv)
{
    const hps_test_case_t *c = hps_test_case_select(&suite, argc, argv);
    if (c->data) {
        hps_test_case_run(c, argc, argv);
        return 3;
    }
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    heap = shmem_malloc(64);
    hps_test_case_run(c, argc, argv);
    return not_caught(c->name);
}
