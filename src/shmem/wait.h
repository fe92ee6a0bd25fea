/* SPDX-License-Identifier: MIT */
/*
 * wait.h - the one policy every wait in libhpsync-shmem follows: point-to-
 * point waits, barriers and locks (sync.c, through hps_shmem_wait_step),
 * and the libfabric transport's waits for its counters and for room in a
 * full transmit queue (ofi_progress.c).
 *
 * A waiter polls `spin` times (none when the node has more PEs than CPUs),
 * then polls with sched_yield between polls, which hands the core to any
 * runnable PE, until poll_ms after the wait began or it last saw traffic;
 * only then does it nap between polls.  Time, not a count of yields: a
 * yield takes ~1 us alone and a whole time slice when another PE runs.
 * Napping early made the tails: 2 PEs on-node, barrier median 100 ns but
 * p99 16 us and a mean of 5-8 us with a nap after 100 yields.
 *
 * With libfabric in use, other PEs' gets, fetching atomics and the reads
 * behind their quiets are answered only when this PE polls (a fetch-add
 * into a PE napping 50 us took 80 us on shm, 0.45 us into one polling), so
 * traffic (a sum of counters that only grows) restarts the clock, a waiter
 * that saw some keeps polling without yielding for 50 us more unless the
 * node is crowded, and naps stay at 50 us.
 */
#ifndef HPS_SHMEM_WAIT_H
#define HPS_SHMEM_WAIT_H

#include <stdint.h>

/* Set by shmem_init before any wait. */
typedef struct hps_wait_cfg {
    uint32_t spin;              /* polls before yielding: 0 when crowded */
    int crowded;                /* more PEs on this node than CPUs we may run on */
    uint64_t poll_ns;           /* HPSYNC_SHMEM_POLL_MS */
} hps_wait_cfg_t;
extern hps_wait_cfg_t hps_wait_cfg __attribute__((visibility("hidden")));

/* One wait's state: zero it before the first step. */
typedef struct hps_waiter {
    uint32_t n;
    uint32_t naps;
    uint64_t traffic, since;    /* last traffic stamp seen, and when */
} hps_waiter_t;

/* Called after each unsuccessful poll.  ofi: libfabric is in use, and
 * traffic is its current stamp (ignored otherwise). */
void hps_waiter_step(hps_waiter_t *w, int ofi, uint64_t traffic);

#endif
