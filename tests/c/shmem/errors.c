// SPDX-License-Identifier: MIT
/*
 * shmem_err CASE - provokes one error the library must report with one line
 * naming the call, ending the job with a non-zero status.  Only PE 0 makes
 * the bad call (the others wait in a barrier the job's teardown ends),
 * except where the call is collective.  Reaching the end is a failure.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "shtest.h"

const char *t_family = "errors";

static int g_sym;

int main(int argc, char **argv)
{
    alarm(30);
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "before_init")) {
        shmem_int_p(&g_sym, 1, 0);
        return 3;
    }
    if (!strcmp(c, "before_init_malloc")) {
        shmem_malloc(8);
        return 3;
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int *heap = shmem_malloc(64), local = 0;
    if (!strcmp(c, "bad_pe")) {
        if (me == 0)
            shmem_int_p(heap, 1, n);
    } else if (!strcmp(c, "team_ctx_pe")) {
        /* A context on a one-member team: PE 1 is past the team's end,
         * though it is a valid world PE. */
        shmem_team_t t;
        shmem_ctx_t ctx;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &t) == 0 &&
            t != SHMEM_TEAM_INVALID &&
            shmem_team_create_ctx(t, 0, &ctx) == 0 && me == 0)
            shmem_ctx_int_p(ctx, heap, 1, 1);
    } else if (!strcmp(c, "negative_pe")) {
        if (me == 0)
            (void)shmem_long_atomic_fetch_add((long *)heap, 1, -1);
    } else if (!strcmp(c, "bad_addr")) {
        if (me == 0)
            shmem_int_put(&local, &local, 1, n - 1);
    } else if (!strcmp(c, "past_end")) {
        if (me == 0) {
            static char buf[1 << 16];
            size_t room = shmemx_heap_size();
            shmem_putmem((char *)heap + room - 100, buf, sizeof buf, n - 1);
        }
    } else if (!strcmp(c, "heap_exhausted")) {
        shmem_malloc(shmemx_heap_size() + 1);
    } else if (!strcmp(c, "align_too_large")) {
        /* Past the heap size rounded up to a power of two, no address can
         * be aligned on every PE. */
        size_t a = 8;
        while (a < shmemx_heap_size())
            a <<= 1;
        shmem_align(2 * a, 64);
    } else if (!strcmp(c, "bad_cmp")) {
        if (me == 0)
            shmem_int_wait_until(heap, 42, 0);
    } else if (!strcmp(c, "bad_free")) {
        if (me == 0)
            shmem_free(&local);
    } else if (!strcmp(c, "after_finalize")) {
        shmem_finalize();
        if (me == 0)
            shmem_int_g(&g_sym, 0);
        return 0;                   /* the others leave cleanly */
    } else if (!strcmp(c, "no_finalize")) {
        /* 1.2-style: start_pes, no shmem_finalize.  PE 0 leaves at once
         * and must wait for the others (implicit finalize at exit), whose
         * late put into its memory still lands; the job succeeds. */
        static int late;
        if (me == 1) {
            usleep(200000);
            shmem_int_p(&late, 5, 0);
        }
        if (me == 0)
            return 0;
        return 0;
    } else if (!strcmp(c, "global_exit")) {
        if (me == n - 1)
            shmem_global_exit(7);
    } else {
        fprintf(stderr, "shmem_err: unknown case '%s'\n", c);
        return 2;
    }
    shmem_barrier_all();
    fprintf(stderr, "shmem_err: PE %d: %s was not caught\n", me, c);
    return 3;
}
