/* SPDX-License-Identifier: MIT */
/*
 * prof_tool.h - the routines the test profiling tool (prof_tool.c)
 * observes, and what it tells the program (prof_main.c) about them.
 *
 * PROF_ROUTINES(V, R) lists them: V(NAME, PARAMS, ARGS) for a routine
 * returning nothing, R(TYPE, NAME, PARAMS, ARGS) for one returning TYPE.
 * The list pairs routines whose work the library might be tempted to do by
 * calling another listed one (shmem_init / shmem_init_thread, shmalloc /
 * shmem_malloc, shmem_ctx_create / shmem_team_create_ctx,
 * shmem_signal_wait_until / shmem_uint64_wait_until, shmem_team_ptr /
 * shmem_ptr ...), so a call counted twice shows.
 */
#ifndef HPS_PROF_TOOL_H
#define HPS_PROF_TOOL_H

#include <shmem.h>

#define PROF_ROUTINES(V, R) \
    V(start_pes, (int npes), (npes)) \
    V(shmem_init, (void), ()) \
    R(int, shmem_init_thread, (int requested, int *provided), (requested, provided)) \
    V(shmem_finalize, (void), ()) \
    R(int, shmem_my_pe, (void), ()) \
    R(int, _my_pe, (void), ()) \
    R(int, shmem_n_pes, (void), ()) \
    R(int, _num_pes, (void), ()) \
    R(void *, shmem_malloc, (size_t size), (size)) \
    R(void *, shmalloc, (size_t size), (size)) \
    R(void *, shmem_align, (size_t alignment, size_t size), (alignment, size)) \
    R(void *, shmemalign, (size_t alignment, size_t size), (alignment, size)) \
    R(void *, shmem_realloc, (void *ptr, size_t size), (ptr, size)) \
    R(void *, shrealloc, (void *ptr, size_t size), (ptr, size)) \
    V(shmem_free, (void *ptr), (ptr)) \
    V(shfree, (void *ptr), (ptr)) \
    R(void *, shmem_ptr, (const void *dest, int pe), (dest, pe)) \
    R(void *, shmem_team_ptr, (shmem_team_t team, const void *dest, int pe), (team, dest, pe)) \
    R(int, shmem_ctx_create, (long options, shmem_ctx_t *ctx), (options, ctx)) \
    R(int, shmem_team_create_ctx, (shmem_team_t team, long options, shmem_ctx_t *ctx), \
      (team, options, ctx)) \
    V(shmem_ctx_destroy, (shmem_ctx_t ctx), (ctx)) \
    V(shmem_putmem, (void *dest, const void *source, size_t nelems, int pe), \
      (dest, source, nelems, pe)) \
    V(shmem_ctx_putmem, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe), \
      (ctx, dest, source, nelems, pe)) \
    V(shmem_putmem_signal, (void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                            uint64_t signal, int sig_op, int pe), \
      (dest, source, nelems, sig_addr, signal, sig_op, pe)) \
    R(uint64_t, shmem_signal_wait_until, (uint64_t *sig_addr, int cmp, uint64_t cmp_value), \
      (sig_addr, cmp, cmp_value)) \
    V(shmem_uint64_wait_until, (uint64_t *ivar, int cmp, uint64_t cmp_value), \
      (ivar, cmp, cmp_value)) \
    V(shmem_long_atomic_add, (long *dest, long value, int pe), (dest, value, pe)) \
    R(long, shmem_long_atomic_fetch, (const long *source, int pe), (source, pe)) \
    R(int, shmem_long_sum_reduce, (shmem_team_t team, long *dest, const long *source, \
                                   size_t nreduce), (team, dest, source, nreduce)) \
    V(shmem_quiet, (void), ()) \
    V(shmem_barrier_all, (void), ())

#define PROF_ID_V(NAME, PARAMS, ARGS) PROF_##NAME,
#define PROF_ID_R(TYPE, NAME, PARAMS, ARGS) PROF_##NAME,
enum { PROF_ROUTINES(PROF_ID_V, PROF_ID_R) PROF_N };

/* What the tool has seen: calls per routine while profiling was on,
 * shmem_pcontrol's own calls (always counted), level 2's flushes, the sum
 * of the int each level above 2 carried, and the level now. */
struct prof_state {
    long calls[PROF_N];
    long pcontrol;
    long flushes;
    long extra;
    int level;
};

/* The tool's one entry point of its own. */
const struct prof_state *hps_prof_state(void);

#endif
