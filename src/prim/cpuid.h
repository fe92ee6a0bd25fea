/* SPDX-License-Identifier: MIT */
/*
 * cpuid.h - what the CPU says about itself, read at run time.
 *
 * Promise: hps_cpuid() executes CPUID only on x86 and only for a leaf its
 * range reports (the basic range's maximum from leaf 0, the hypervisor
 * range's from 0x40000000, the extended range's from 0x80000000); elsewhere,
 * or for a leaf beyond it, it returns 0 and leaves r zeroed.  The hypervisor
 * range is only meaningful when leaf 1 reports a hypervisor (ECX bit 31).  hps_cpu_rtm_usable() is the one rule that
 * decides whether RTM instructions may ever run (see prim/rtm.h).
 */
#ifndef HPS_PRIM_CPUID_H
#define HPS_PRIM_CPUID_H

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HPS_HAVE_CPUID 1
#else
#define HPS_HAVE_CPUID 0
#endif

/* CPUID leaf/subleaf into r[] = { EAX, EBX, ECX, EDX }; 1 if the leaf exists. */
static inline int hps_cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    r[0] = r[1] = r[2] = r[3] = 0;
#if HPS_HAVE_CPUID
    if (__get_cpuid_max(leaf & 0xf0000000u, 0) < leaf)
        return 0;
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
    return 1;
#else
    (void)leaf; (void)sub;
    return 0;
#endif
}

/* CPUID: RTM present, not RTM_ALWAYS_ABORT (microcode that disables TSX). */
int hps_cpu_rtm_usable(void);

#endif
