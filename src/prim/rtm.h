/* SPDX-License-Identifier: MIT */
/*
 * rtm.h - Intel RTM instructions, and nothing else CPU-specific.
 *
 * Promise: the instruction wrappers are only ever called after
 * hps_cpu_rtm_usable() (prim/cpuid.h) said yes at run time: only the RTM
 * elision backend (src/elide/rtm.c) calls them, and src/elide/backend.c
 * never selects it otherwise.  On a CPU without RTM,
 * XBEGIN would raise #UD; no path reaches it.  Where RTM cannot be compiled
 * they are "never started" stubs.
 */
#ifndef HPS_PRIM_RTM_H
#define HPS_PRIM_RTM_H

#include <stdint.h>
#include "cpuid.h"   /* hps_cpu_rtm_usable(): the gate */

#define HPS_TX_STARTED (~0u)
/* Abort status bits, as the hardware reports them in EAX. */
#define HPS_TX_EXPLICIT   (1u << 0)
#define HPS_TX_RETRY      (1u << 1)
#define HPS_TX_CONFLICT   (1u << 2)
#define HPS_TX_CAPACITY   (1u << 3)
#define HPS_TX_DEBUG      (1u << 4)
#define HPS_TX_NESTED     (1u << 5)
#define HPS_TX_CODE(s)    (((s) >> 24) & 0xffu)

/*
 * The instructions, for the one file that runs transactions (src/elide/
 * rtm.c, compiled with -mrtm on x86; -mrtm only makes the intrinsics
 * available, the compiler never emits RTM instructions on its own).
 */
#if defined(HPS_WANT_RTM)
#if defined(__RTM__)
#include <immintrin.h>
static inline unsigned hps_rtm_begin(void) { return _xbegin(); }
static inline void hps_rtm_end(void) { _xend(); }
static inline int hps_rtm_test(void) { return _xtest(); }
/* XABORT takes an immediate, so each code gets its own function.  Inside a
 * transaction it does not return (execution resumes at XBEGIN with the
 * status); outside one it is a no-op, so callers check XTEST first. */
#define hps_rtm_abort(code) hps_rtm_abort_##code()
#define HPS_RTM_ABORT_FN(code) \
    __attribute__((noinline, unused)) static void hps_rtm_abort_##code(void) { _xabort(code); }
#else
static inline unsigned hps_rtm_begin(void) { return 0; }
static inline void hps_rtm_end(void) {}
static inline int hps_rtm_test(void) { return 0; }
#define hps_rtm_abort(code) ((void)0)
#define HPS_RTM_ABORT_FN(code)
#endif
#endif

#endif
