// SPDX-License-Identifier: MIT
/*
 * tm_test's cases on stm's ownership records: one orec covers a 32-byte
 * stripe (src/tm/stm.c), so a section can write several words of one orec
 * and two threads can conflict on different words of it (`stripe`, run on
 * every backend like the other consistency cases); and the table asks for
 * transparent huge pages (`orecs_huge`: the mapping holding the table's
 * middle carries the "hg" flag in /proc/self/smaps; skipped (77) where the
 * kernel has no THP).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tm_test.h"

extern hps_au64 hps_tm_stm_orecs32_[];

void case_orecs_huge(void)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
        printf("%s: skipped: no transparent huge pages here\n", hps_test_name());
        exit(77);
    }
    uintptr_t mid = (uintptr_t)&hps_tm_stm_orecs32_[(1u << HPS_TM_ORECS_BITS_) / 2];
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

/* ---- stripe: several words of one orec ------------------------------------- */

/* A group is one stripe: words 0..2 each counted by the threads t with
 * t % 3 == word, word 3 their total.  Every update writes two words of the
 * stripe (commit-time locking meets its orec twice in the write set,
 * encounter-time locking finds it already its own), and the threads of
 * different words collide on the orec without touching the same word. */
#define GROUPS 16
static uint64_t g_stripe[GROUPS][4] __attribute__((aligned(64)));
static uint64_t g_stripe_tally[THREADS][GROUPS];    /* each thread's own, plain */

static void *stripe_thread(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg, w = t % 3;
    uint64_t s = t * 2654435761u + 1;
    for (unsigned long i = 0; i < g_iters; i++) {
        unsigned g = (unsigned)(hps_xorshift64(&s) % GROUPS);
        if (i % 4 == 3) {
            HPS_TM_BEGIN_RO();
            uint64_t a = hps_tm_read_u64(&g_stripe[g][0]), b = hps_tm_read_u64(&g_stripe[g][1]);
            gap();
            uint64_t c = hps_tm_read_u64(&g_stripe[g][2]), total = hps_tm_read_u64(&g_stripe[g][3]);
            if (a + b + c != total)
                hps_test_fail("group %u: words %llu + %llu + %llu, total %llu: a torn stripe", g,
                              (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                              (unsigned long long)total);
            HPS_TM_END();
            continue;
        }
        HPS_TM_BEGIN();
        uint64_t x = hps_tm_read_u64(&g_stripe[g][w]);
        hps_tm_write_u64(&g_stripe[g][w], x + 1);
        gap();
        hps_tm_write_u64(&g_stripe[g][3], hps_tm_read_u64(&g_stripe[g][3]) + 1);
        HPS_TM_END();
        g_stripe_tally[t][g]++;
    }
    return NULL;
}

void case_stripe(void)
{
    /* The case tests what it says only if a group is one orec. */
    HPS_CHECK(hps_tm_stm_orec_(&g_stripe[0][0]) == hps_tm_stm_orec_(&g_stripe[0][3]) &&
                  hps_tm_stm_orec_(&g_stripe[0][0]) != hps_tm_stm_orec_(&g_stripe[1][0]),
              "a group of 4 words is not one stm orec");
    run_threads(THREADS, stripe_thread);
    for (unsigned g = 0; g < GROUPS; g++) {
        uint64_t want[3] = { 0, 0, 0 };
        for (unsigned t = 0; t < THREADS; t++)
            want[t % 3] += g_stripe_tally[t][g];
        for (unsigned w = 0; w < 3; w++)
            HPS_CHECK(g_stripe[g][w] == want[w], "group %u word %u: %llu, the threads counted %llu: lost updates",
                      g, w, (unsigned long long)g_stripe[g][w], (unsigned long long)want[w]);
        HPS_CHECK(g_stripe[g][3] == want[0] + want[1] + want[2], "group %u: total %llu, the words sum to %llu", g,
                  (unsigned long long)g_stripe[g][3], (unsigned long long)(want[0] + want[1] + want[2]));
    }
}
