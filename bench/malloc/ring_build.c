// SPDX-License-Identifier: MIT
/* Building the study's ring (ring_build.h). */
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "hps_rand.h"
#include "ring_build.h"

int mb_ring_build(mb_ring_node_t **nodes, int n, size_t size)
{
    for (int i = 0; i < n; i++) {
        nodes[i] = malloc(size);
        if (!nodes[i]) {
            hps_bench_log("malloc(%zu) failed", size);
            return 1;
        }
        /* Initialise the whole node, as a program would: its pages are
         * faulted in now, not during a timed lap. */
        memset(nodes[i], 0, size);
        nodes[i]->value = (uint64_t)i;
    }
    int *order = malloc(sizeof *order * (size_t)n);
    if (!order) {
        hps_bench_log("out of memory");
        return 1;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    uint64_t seed = MB_RING_SEED;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(hps_xorshift64(&seed) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n; i++)
        nodes[order[i]]->next = nodes[order[(i + 1) % n]];
    free(order);
    /* One cycle through all nodes, or the figures would be for a shorter ring. */
    mb_ring_node_t *p = nodes[0];
    for (int i = 1; i < n; i++) {
        p = p->next;
        if (p == nodes[0]) {
            hps_bench_log("ring of %zu B nodes closes after %d nodes", size, i);
            return 1;
        }
    }
    if (p->next != nodes[0]) {
        hps_bench_log("ring of %zu B nodes does not close", size);
        return 1;
    }
    return 0;
}

mb_ring_footprint_t mb_ring_footprint(mb_ring_node_t *const *nodes, int n, size_t page, unsigned line,
                                      unsigned sets)
{
    mb_ring_footprint_t f = { 0, 0 };
    for (int i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)nodes[i];
        int first_in_page = 1, same_set = 0;
        for (int j = 0; j < i; j++) {           /* n is 128: quadratic is nothing */
            uintptr_t b = (uintptr_t)nodes[j];
            first_in_page &= a / page != b / page;
            same_set += (a / line) % sets == (b / line) % sets;
        }
        f.pages += first_in_page;
        if (same_set + 1 > f.max_per_set)
            f.max_per_set = same_set + 1;
    }
    return f;
}
