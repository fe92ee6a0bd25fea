// SPDX-License-Identifier: MIT
/* What the pools probe's workloads share (see work.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "work.h"

void *work_alloc(size_t head, int k, const size_t bytes[], void *bufs[], const char *what)
{
    size_t total = hps_bench_lines(head);
    for (int i = 0; i < k; i++)
        total += hps_bench_lines(bytes[i]);
    char *p = hps_bench_lines_alloc(total);
    if (!p) {
        hps_bench_log("out of memory for %s (%zu bytes)", what, total);
        return NULL;
    }
    size_t off = hps_bench_lines(head);
    for (int i = 0; i < k; i++) {
        bufs[i] = p + off;
        off += hps_bench_lines(bytes[i]);
    }
    return p;
}
