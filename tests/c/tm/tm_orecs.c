// SPDX-License-Identifier: MIT
/*
 * The stm orec table asks for transparent huge pages (src/tm/stm.c: it
 * mirrors data addresses, so with 4 KiB pages the orecs double a
 * section's TLB footprint).  Checked in /proc/self/smaps: the mapping
 * holding the table's middle carries the "hg" flag (MADV_HUGEPAGE).
 * Skipped (77) where the kernel has no THP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tm_test.h"

extern hps_au64 hps_tm_stm_orecs_[];

void case_orecs_huge(void)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
        printf("%s: skipped: no transparent huge pages here\n", hps_test_name());
        exit(77);
    }
    uintptr_t mid = (uintptr_t)&hps_tm_stm_orecs_[(1u << HPS_TM_ORECS_BITS_) / 2];
    FILE *f = fopen("/proc/self/smaps", "r");
    HPS_CHECK(f, "cannot read /proc/self/smaps");
    char line[512];
    int in = 0, found = 0, flagged = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = mid >= lo && mid < hi;
            found |= in;
        } else if (in && !strncmp(line, "VmFlags:", 8)) {
            flagged = strstr(line, " hg") != NULL;
            in = 0;
        }
    }
    fclose(f);
    HPS_CHECK(found, "no mapping holds the orec table's middle (%#lx)", (unsigned long)mid);
    HPS_CHECK(flagged, "the orec table's mapping has no MADV_HUGEPAGE (hg) flag");
}
