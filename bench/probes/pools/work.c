// SPDX-License-Identifier: MIT
/* What the pools probe's workloads share (see work.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "work.h"

static size_t round64(size_t v) { return (v + 63) & ~(size_t)63; }

void *work_alloc(size_t head, int k, const size_t bytes[], void *bufs[], const char *what)
{
    size_t total = round64(head);
    for (int i = 0; i < k; i++)
        total += round64(bytes[i]);
    char *p = aligned_alloc(64, total);
    if (!p) {
        hps_bench_log("out of memory for %s (%zu bytes)", what, total);
        return NULL;
    }
    memset(p, 0, total);
    size_t off = round64(head);
    for (int i = 0; i < k; i++) {
        bufs[i] = p + off;
        off += round64(bytes[i]);
    }
    return p;
}
