// SPDX-License-Identifier: MIT
/*
 * tm_cost - the program behind tm.h's instruction budgets (not a test).
 *
 *   valgrind --tool=callgrind tm_cost read|readro|readw|write N ROUNDS
 *
 * ROUNDS sections, each doing N reads (or writes) of distinct words;
 * readro's sections are read-only ones (HPS_TM_BEGIN_RO); readw's first
 * write one word that none of the reads touches (reads in a section that
 * has written).  The
 * budget per access is (instructions at ROUNDS=3 - at ROUNDS=2) / N: the
 * difference is one section whose logs have already grown to size, so it
 * cancels start-up, registration and log growth; what is left over one
 * section's begin and commit is spread over N accesses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpsync/tm.h"

static uint64_t g_words[1 << 16];

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "read") && strcmp(argv[1], "readro") && strcmp(argv[1], "readw") &&
                      strcmp(argv[1], "write"))) {
        fprintf(stderr, "usage: tm_cost read|readro|readw|write N ROUNDS\n");
        return 2;
    }
    int wr = !strcmp(argv[1], "write"), ro = !strcmp(argv[1], "readro"), rw = !strcmp(argv[1], "readw");
    unsigned long n = strtoul(argv[2], NULL, 0);
    if (n == 0 || n >= sizeof g_words / sizeof g_words[0]) {
        fprintf(stderr, "tm_cost: N must be 1..%zu\n", sizeof g_words / sizeof g_words[0] - 1);
        return 2;
    }
    unsigned long rounds = strtoul(argv[3], NULL, 0);
    uint64_t sum = 0;
    for (unsigned long round = 0; round < rounds; round++) {
        if (ro) {
            HPS_TM_BEGIN_RO();
            sum = 0;
            for (unsigned long i = 0; i < n; i++)
                sum += hps_tm_read_u64(&g_words[i]);
            HPS_TM_END();
            continue;
        }
        HPS_TM_BEGIN();
        sum = 0;
        if (rw)                      /* the last word: no read touches it */
            hps_tm_write_u64(&g_words[sizeof g_words / sizeof g_words[0] - 1], round);
        for (unsigned long i = 0; i < n; i++) {
            if (wr)
                hps_tm_write_u64(&g_words[i], i);
            else
                sum += hps_tm_read_u64(&g_words[i]);
        }
        HPS_TM_END();
    }
    printf("%s %s %lu %llu\n", hps_tm_backend_name(), argv[1], n, (unsigned long long)sum);
    return 0;
}
