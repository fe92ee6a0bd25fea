// SPDX-License-Identifier: MIT
/*
 * CPU features hpsync decides on at run time.  RTM is usable when CPUID
 * leaf 7 reports RTM (EBX bit 11; the kernel's tsx=off and microcode that
 * disables TSX clear it) and does not report RTM_ALWAYS_ABORT (EDX bit 11:
 * the instructions exist but every transaction aborts).
 */
#include "../arch/rtm.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int hps_cpu_rtm_usable(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, 0) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a; (void)c;
    return ((b >> 11) & 1) && !((d >> 11) & 1);
#else
    return 0;
#endif
}
