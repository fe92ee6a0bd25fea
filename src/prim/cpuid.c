// SPDX-License-Identifier: MIT
/*
 * CPU features hpsync decides on at run time.  RTM is usable when CPUID
 * leaf 7 reports RTM (EBX bit 11; the kernel's tsx=off and microcode that
 * disables TSX clear it) and does not report RTM_ALWAYS_ABORT (EDX bit 11:
 * the instructions exist but every transaction aborts).
 */
#include "cpuid.h"

int hps_cpu_rtm_usable(void)
{
    unsigned r[4];
    if (!hps_cpuid(7, 0, r))
        return 0;
    return ((r[1] >> 11) & 1) && !((r[3] >> 11) & 1);
}
