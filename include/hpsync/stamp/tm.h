/* SPDX-License-Identifier: MIT */
/*
 * hpsync/stamp/tm.h - STAMP 0.9.10's lib/tm.h on hpsync's transactional
 * sections (hpsync/tm.h), so the STAMP applications build unmodified: put
 * this file in place of their lib/tm.h (or make lib/tm.h one line,
 * `#include <hpsync/stamp/tm.h>`), add -I<prefix>/include, link -lhpsync,
 * and choose the backend at run time with HPSYNC_TM (docs/tm.md, "The STAMP
 * header").
 *
 * Every macro STAMP's lib/tm.h defines is here, with the meaning its
 * non-simulator builds give it:
 *   simulator interface  MAIN, MAIN_RETURN, GOTO_SIM, GOTO_REAL, IS_IN_SIM,
 *                        SIM_GET_NUM_CPU, TM_PRINTF, TM_PRINT0..3,
 *                        P_MEMORY_STARTUP, P_MEMORY_SHUTDOWN
 *   TM system            TM_ARG, TM_ARG_ALONE, TM_ARGDECL, TM_ARGDECL_ALONE,
 *                        TM_CALLABLE, TM_STARTUP, TM_SHUTDOWN, TM_THREAD_ENTER,
 *                        TM_THREAD_EXIT, P_MALLOC, P_FREE, TM_MALLOC, TM_FREE,
 *                        TM_BEGIN, TM_BEGIN_RO, TM_END, TM_RESTART,
 *                        TM_EARLY_RELEASE
 *   shared accesses      TM_SHARED_READ, TM_SHARED_WRITE, TM_LOCAL_WRITE, each
 *                        also with _P (pointers) and _F (float)
 * plus TM_PURE and TM_SAFE (the annotations of the GCC-TM ports of STAMP)
 * and the _D (double) accesses of the TinySTM port.
 *
 * How they map, and where hpsync differs from TL2's STAMP build:
 *   - TM_BEGIN()/TM_END() are statements, not a block: as in STAMP's TL2 and
 *     sequential builds, a variable declared between them is still in scope
 *     after TM_END().  They pair in one function; nesting is flat.
 *   - The thread descriptor lives in TLS, so TM_ARG* are empty (as in
 *     STAMP's sequential build) and TM_THREAD_ENTER() only registers the
 *     thread early; thread exit needs nothing.
 *   - TM_SHARED_READ/WRITE access the object at its own width and type
 *     (_Generic): TL2 reads an intptr_t word at the address whatever the
 *     type, which for kmeans's `int` counters also touches the neighbour.
 *     The _P and _F forms are the same accessor (the type decides); a read
 *     has the type of the variable, a write the value written, as in the
 *     sequential build.  Each evaluates its variable once.
 *   - TM_LOCAL_WRITE is a plain assignment, as in TL2: hpsync does not roll
 *     back locals when a section re-runs (neither does TL2).
 *   - TM_MALLOC/TM_FREE are hps_tm_malloc/hps_tm_free: undone on abort,
 *     deferred to commit.  P_FREE is hps_tm_free as well, so memory a
 *     parallel region frees after a section unlinked it is reclaimed only
 *     once no section can still read it (free() would let a doomed reader
 *     touch freed memory).  Both end in free(), so memory from either
 *     allocator may be freed by either.
 *   - TM_EARLY_RELEASE is a no-op (a hint hpsync has no use for, as in TL2).
 *   - The simulator, OpenTM and HTM builds (-DSIMULATOR, -DOTM, -DHTM) have
 *     no meaning here and are refused; -DSTM (STAMP's Makefile.stm) is fine.
 *
 * GNU C (statement expressions, __typeof__, _Generic; gcc and clang accept
 * them under -std=c99 too).  Not for C++ (hpsync/tm.h's _Generic).
 */
#ifndef HPSYNC_STAMP_TM_H
#define HPSYNC_STAMP_TM_H

#if defined(SIMULATOR) || defined(OTM) || defined(HTM)
#error "hpsync/stamp/tm.h runs STAMP on hpsync's sections: build without -DSIMULATOR, -DOTM or -DHTM"
#endif
/* STAMP's lib/tm.h guard: keep out a second tm.h that is found first. */
#ifndef TM_H
#define TM_H 1
#endif

/* What STAMP's tm.h includes in its sequential and STM builds, which the
 * applications rely on. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpsync/tm.h"

/* ---- the simulator interface (real hardware: nothing to do) ---------------- */

#define MAIN(argc, argv)            int main(int argc, char **argv)
#define MAIN_RETURN(val)            return val
#define GOTO_SIM()                  /* nothing */
#define GOTO_REAL()                 /* nothing */
#define IS_IN_SIM()                 (0)
#define SIM_GET_NUM_CPU(var)        /* nothing */
#define TM_PRINTF                   printf
#define TM_PRINT0                   printf
#define TM_PRINT1                   printf
#define TM_PRINT2                   printf
#define TM_PRINT3                   printf
#define P_MEMORY_STARTUP(numThread) ((void)(numThread))
#define P_MEMORY_SHUTDOWN()         ((void)0)

/* ---- the TM system --------------------------------------------------------- */

/* The thread's descriptor is hpsync's TLS, not an argument. */
#define TM_ARG                      /* nothing */
#define TM_ARG_ALONE                /* nothing */
#define TM_ARGDECL                  /* nothing */
#define TM_ARGDECL_ALONE            /* nothing */
#define TM_CALLABLE                 /* nothing */
#define TM_PURE                     /* nothing */
#define TM_SAFE                     /* nothing */

/* hpsync starts on the first section and reports at exit (HPSYNC_TM_STATS). */
#define TM_STARTUP(numThread)       ((void)(numThread))
#define TM_SHUTDOWN()               ((void)0)
/* Registering at the start of the parallel region, not at the first
 * section, lets auto's choice see every thread of the pool at once. */
#define TM_THREAD_ENTER()           ((void)(hps_tm_self_ ? hps_tm_self_ : hps_tm_register_()))
#define TM_THREAD_EXIT()            ((void)0)

#define P_MALLOC(size)              malloc(size)
#define P_FREE(ptr)                 hps_tm_free(ptr)
#define TM_MALLOC(size)             hps_tm_malloc(size)
#define TM_FREE(ptr)                hps_tm_free(ptr)

/*
 * A section as two statements.  hpsync/tm.h's HPS_TM_BEGIN opens a block
 * that HPS_TM_END closes; STAMP's sections do not scope, so these take the
 * same checkpoint without one.  Nothing but constants is live across the
 * checkpoint: after an abort returns to it, the descriptor is read again
 * from TLS (a local declared in a block that has ended may share its stack
 * slot with a later one).
 */
#define HPS_STAMP_BEGIN_(ro) do { \
    hps_tm_fast_t *const hps_stamp_f_ = hps_likely(hps_tm_self_ != NULL) ? hps_tm_self_ \
                                                                          : hps_tm_register_(); \
    if (hps_likely(hps_stamp_f_->depth == 0)) { \
        (void)HPS_TM_CKPT_(hps_tm_self_->jb); \
        hps_tm_begin_(hps_tm_self_, (ro)); \
    } else { \
        hps_stamp_f_->depth++; \
    } \
} while (0)
#define TM_BEGIN()                  HPS_STAMP_BEGIN_(0)
#define TM_BEGIN_RO()               HPS_STAMP_BEGIN_(1)
#define TM_END() do { \
    hps_tm_fast_t *const hps_stamp_f_ = hps_tm_self_; \
    if (--hps_stamp_f_->depth == 0) \
        hps_tm_commit_(hps_stamp_f_); \
} while (0)
#define TM_RESTART()                hps_tm_restart()
#define TM_EARLY_RELEASE(var)       ((void)0)

/* ---- shared and local accesses --------------------------------------------- */

#define HPS_STAMP_READ_(var) ({ \
    __typeof__(var) *const hps_stamp_p_ = &(var); \
    (__typeof__(var))HPS_TM_READ(hps_stamp_p_); })
#define HPS_STAMP_WRITE_(var, val) ({ \
    __typeof__(var) *const hps_stamp_p_ = &(var); \
    __typeof__(var) hps_stamp_v_ = (val); \
    HPS_TM_WRITE(hps_stamp_p_, hps_stamp_v_); \
    hps_stamp_v_; })

#define TM_SHARED_READ(var)         HPS_STAMP_READ_(var)
#define TM_SHARED_READ_P(var)       HPS_STAMP_READ_(var)
#define TM_SHARED_READ_F(var)       HPS_STAMP_READ_(var)
#define TM_SHARED_READ_D(var)       HPS_STAMP_READ_(var)
#define TM_SHARED_WRITE(var, val)   HPS_STAMP_WRITE_(var, val)
#define TM_SHARED_WRITE_P(var, val) HPS_STAMP_WRITE_(var, val)
#define TM_SHARED_WRITE_F(var, val) HPS_STAMP_WRITE_(var, val)
#define TM_SHARED_WRITE_D(var, val) HPS_STAMP_WRITE_(var, val)
#define TM_LOCAL_WRITE(var, val)    ((var) = (val))
#define TM_LOCAL_WRITE_P(var, val)  ((var) = (val))
#define TM_LOCAL_WRITE_F(var, val)  ((var) = (val))
#define TM_LOCAL_WRITE_D(var, val)  ((var) = (val))

#endif /* HPSYNC_STAMP_TM_H */
