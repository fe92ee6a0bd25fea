// SPDX-License-Identifier: MIT
/*
 * shmem_prof - an OpenSHMEM program run under the test profiling tool
 * (prof_tool.c): on every PE it makes a known set of calls, checks their
 * results, then checks that the tool counted each routine exactly as often
 * as the program called it (CALL below keeps the program's own tally).
 * Routines the library could implement with one another (shmalloc and
 * shmem_malloc ...) are called one at a time, so a library that called its
 * own API would show as a count the program did not make; shmem_pcontrol
 * at 0 must stop the count and the levels above must reach the tool.
 * Prints "shmem_prof: ok ..." on PE 0.
 *
 * Built with the tool linked in (shmem_prof, shmem_prof_static), or
 * without it (shmem_prof_plain, PROF_PRELOADED) to be run with the tool's
 * library in LD_PRELOAD, where it finds the tool with dlsym.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pshmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "prof_tool.h"

static long expect[PROF_N];
/* A call the tool must count. */
#define CALL(NAME, ...) (expect[PROF_##NAME]++, NAME(__VA_ARGS__))

#define PROF_NAME_V(NAME, PARAMS, ARGS) #NAME,
#define PROF_NAME_R(TYPE, NAME, PARAMS, ARGS) #NAME,
static const char *const names[PROF_N] = { PROF_ROUTINES(PROF_NAME_V, PROF_NAME_R) };

static int me = -1;

static void fail(int line, const char *what)
{
    fprintf(stderr, "shmem_prof: PE %d: FAIL %s (prof_main.c:%d)\n", me, what, line);
    pshmem_global_exit(1);
}
#define CHECK(cond) do { if (!(cond)) fail(__LINE__, #cond); } while (0)

static const struct prof_state *find_tool(void)
{
#ifdef PROF_PRELOADED
    const struct prof_state *(*get)(void) =
        (const struct prof_state *(*)(void))dlsym(RTLD_DEFAULT, "hps_prof_state");
    if (!get) {
        fprintf(stderr, "shmem_prof: the profiling tool is not loaded (LD_PRELOAD its library)\n");
        _exit(2);
    }
    return get();
#else
    return hps_prof_state();
#endif
}

enum { N = 16, ADDS = 10, UNCOUNTED = 5 };

static long counter;
static uint64_t sig;
static long payload[4];
static long red_src, red_dest;

int main(void)
{
    alarm(60);                          /* a hang is a failure, not a CTest timeout */
    const struct prof_state *tool = find_tool();

    /* The library's own shmem_pcontrol ignores every level and argument,
     * before shmem_init too; called by its twin it bypasses the tool. */
    pshmem_pcontrol(0);
    pshmem_pcontrol(2);
    pshmem_pcontrol(7, "tool-defined", 1.5);
    CHECK(tool->pcontrol == 0 && tool->level == 1);

    CALL(start_pes, 0);
    CALL(shmem_init);
    int provided = -1;
    CHECK(CALL(shmem_init_thread, SHMEM_THREAD_SINGLE, &provided) == 0);
    CHECK(provided == SHMEM_THREAD_SINGLE);
    me = CALL(shmem_my_pe);
    int npes = CALL(shmem_n_pes);
    CHECK(CALL(_my_pe) == me && CALL(_num_pes) == npes);
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    /* Symmetric heap, under both generations of names. */
    long *a = CALL(shmem_malloc, N * sizeof(long));
    long *b = CALL(shmalloc, N * sizeof(long));
    long *c = CALL(shmem_align, 256, N * sizeof(long));
    long *d = CALL(shmemalign, 512, N * sizeof(long));
    CHECK(a && b && c && d && (uintptr_t)c % 256 == 0 && (uintptr_t)d % 512 == 0);
    for (int i = 0; i < N; i++)
        a[i] = b[i] = me * 100 + i;
    a = CALL(shmem_realloc, a, 4 * N * sizeof(long));
    b = CALL(shrealloc, b, 4 * N * sizeof(long));
    CHECK(a && b);
    for (int i = 0; i < N; i++)
        CHECK(a[i] == me * 100 + i && b[i] == me * 100 + i);

    /* Puts around the ring, on the default context and on two others. */
    for (int i = 0; i < N; i++) {
        long v = me * 1000 + i;
        CALL(shmem_putmem, &c[i], &v, sizeof v, right);
    }
    CALL(shmem_quiet);
    shmem_ctx_t ctx, team_ctx;
    CHECK(CALL(shmem_ctx_create, 0, &ctx) == 0);
    CHECK(CALL(shmem_team_create_ctx, SHMEM_TEAM_WORLD, 0, &team_ctx) == 0);
    long v1 = me + 77, v2 = me + 99;
    CALL(shmem_ctx_putmem, ctx, &d[0], &v1, sizeof v1, right);
    CALL(shmem_ctx_putmem, team_ctx, &d[1], &v2, sizeof v2, right);
    CALL(shmem_ctx_destroy, ctx);       /* completes its puts */
    CALL(shmem_ctx_destroy, team_ctx);
    CALL(shmem_barrier_all);
    for (int i = 0; i < N; i++)
        CHECK(c[i] == left * 1000 + i);
    CHECK(d[0] == left + 77 && d[1] == left + 99);

    /* Atomics: every PE adds 1 + 2 + ... + ADDS on PE 0. */
    for (long i = 1; i <= ADDS; i++)
        CALL(shmem_long_atomic_add, &counter, i, 0);
    CALL(shmem_barrier_all);
    if (me == 0)
        CHECK(CALL(shmem_long_atomic_fetch, &counter, 0) == (long)npes * ADDS * (ADDS + 1) / 2);

    /* Put with signal, and the two waits. */
    long out[4] = { me, me + 1, me + 2, me + 3 };
    CALL(shmem_putmem_signal, payload, out, sizeof out, &sig, (uint64_t)me + 1, SHMEM_SIGNAL_SET,
         right);
    CHECK(CALL(shmem_signal_wait_until, &sig, SHMEM_CMP_EQ, (uint64_t)left + 1) ==
          (uint64_t)left + 1);
    CALL(shmem_uint64_wait_until, &sig, SHMEM_CMP_EQ, (uint64_t)left + 1);
    for (int k = 0; k < 4; k++)
        CHECK(payload[k] == left + k);

    CHECK(CALL(shmem_ptr, a, me) == a);
    CHECK(CALL(shmem_team_ptr, SHMEM_TEAM_WORLD, a, me) == a);
    red_src = me + 1;
    CHECK(CALL(shmem_long_sum_reduce, SHMEM_TEAM_WORLD, &red_dest, &red_src, 1) == 0);
    CHECK(red_dest == (long)npes * (npes + 1) / 2);

    /* shmem_pcontrol: level 0 stops the count (these puts and this barrier
     * are not counted, but still done), 1 resumes it, 2 flushes, above 2
     * carries the tool's own arguments. */
    shmem_pcontrol(0);
    for (int i = 0; i < UNCOUNTED; i++) {
        long v = -(me * 1000 + i);
        shmem_putmem(&c[i], &v, sizeof v, right);
    }
    shmem_barrier_all();
    shmem_pcontrol(1);
    for (int i = 0; i < UNCOUNTED; i++)
        CHECK(c[i] == -(left * 1000 + i));
    shmem_pcontrol(2);
    shmem_pcontrol(3, 40);
    shmem_pcontrol(4, 2);
    CHECK(CALL(shmem_my_pe) == me);     /* counted: a level above 0 profiles */
    shmem_pcontrol(1);
    CHECK(tool->pcontrol == 6 && tool->flushes == 1 && tool->extra == 42 && tool->level == 1);

    const char *transport = shmemx_transport(right);
    CALL(shmem_barrier_all);
    CALL(shmem_free, a);
    CALL(shfree, b);
    CALL(shmem_free, c);
    CALL(shfree, d);
    CALL(shmem_finalize);
    pshmem_pcontrol(1);                 /* after shmem_finalize too */

    long total = 0;
    for (int i = 0; i < PROF_N; i++) {
        if (tool->calls[i] != expect[i]) {
            fprintf(stderr, "shmem_prof: PE %d: FAIL the tool counted %ld calls of %s, the "
                    "program made %ld\n", me, tool->calls[i], names[i], expect[i]);
            return 1;
        }
        total += expect[i];
    }
    if (me == 0)
        printf("shmem_prof: ok (%d PEs, transport %s): %ld calls of %d routines counted "
               "exactly, %d uncounted at level 0\n", npes, transport, total, PROF_N,
               UNCOUNTED + 1);
    return 0;
}
