/* SPDX-License-Identifier: MIT */
/*
 * tsc.h - the CPU's time-stamp counter.
 *
 * Promise: hps_tsc_read() is one RDTSC on x86, not ordered against the
 * instructions around it; hps_tsc_read_ordered() puts an LFENCE first, so
 * the read waits for the code before it to finish (the stamp for timing a
 * short section).  Both return 0 elsewhere; HPS_HAVE_TSC says which.  Whether
 * the counter is invariant, and its rate, are for the caller to find out
 * (CPUID leaf 0x80000007 via prim/cpuid.h; a calibration window).
 */
#ifndef HPS_PRIM_TSC_H
#define HPS_PRIM_TSC_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HPS_HAVE_TSC 1
static inline uint64_t hps_tsc_read(void) { return __rdtsc(); }
static inline uint64_t hps_tsc_read_ordered(void)
{
    _mm_lfence();
    return __rdtsc();
}
#else
#define HPS_HAVE_TSC 0
static inline uint64_t hps_tsc_read(void) { return 0; }
static inline uint64_t hps_tsc_read_ordered(void) { return 0; }
#endif

#endif
