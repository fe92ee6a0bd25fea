/* SPDX-License-Identifier: MIT */
/*
 * ring_build.h - the ring of the CIA-Malloc study, as built by both
 * programs that traverse it: hps-bench-malloc's ring part (bench/malloc/
 * ring.c: one thread, timed or under cachegrind) and the ring workload
 * (bench/workloads/ring.c: threads and synchronization variants).
 */
#ifndef HPS_RING_BUILD_H
#define HPS_RING_BUILD_H

#include <stddef.h>
#include <stdint.h>

/* A node's first line: the traversal reads only these two words; the rest
 * of the node (its size is the experiment's variable) is padding. */
typedef struct mb_ring_node {
    struct mb_ring_node *next;
    uint64_t value;
} mb_ring_node_t;

/* The order the study fixes, so every size and allocator walks the same one. */
#define MB_RING_SEED 0x5EEDC0FFEE123457ull

/*
 * Allocate n nodes of size bytes back to back with malloc (whatever
 * allocator the process has), zero them whole, number them (value = i) and
 * link them into one cycle in a random order fixed by MB_RING_SEED.
 * Checks the result is one cycle through all n.  0, or 1 after logging.
 */
int mb_ring_build(mb_ring_node_t **nodes, int n, size_t size);

/* Where the nodes' first lines lie, which is all a lap touches: how many
 * distinct pages of page bytes (the data TLB's load: hps-probe-tlb), and the
 * most first lines on one L1 set of sets sets of line bytes (the cache's). */
typedef struct mb_ring_footprint {
    int pages, max_per_set;
} mb_ring_footprint_t;
mb_ring_footprint_t mb_ring_footprint(mb_ring_node_t *const *nodes, int n, size_t page, unsigned line,
                                      unsigned sets);

/* The sum of the values of one lap of n nodes: what each lap must add. */
static inline uint64_t mb_ring_lap_sum(int n) { return (uint64_t)n * (uint64_t)(n - 1) / 2; }

#endif
