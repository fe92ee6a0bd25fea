/* SPDX-License-Identifier: MIT */
/*
 * wait.h - the one policy every wait in libhpsync-shmem follows: point-to-
 * point waits and locks (sync.c, lock.c, through hps_shmem_wait_step), the
 * on-node collectives' waits (node.c), and the libfabric transport's waits
 * for its counters and for room in a full transmit queue (ofi_progress.c).
 *
 * Per wait, the question is whether the PE being waited for can be running
 * on another CPU right now.
 *  - Yes (this job's PEs on this node fit in the CPUs they may use, and the
 *    awaited PE, or for a wait on a variable any PE may write any PE of
 *    this node, did not last wait on this PE's CPU): poll with PAUSE for up
 *    to HPSYNC_SHMEM_SPIN_US.  Never sched_yield here: when other programs
 *    load the machine a yield hands this CPU to one of them for a whole time
 *    slice (2 PEs on-node, 200 polls then yields: barrier 14.6 us under
 *    load against 0.1-0.4 us spinning).
 *  - No (more PEs than CPUs, or the awaited PE last ran here): poll with
 *    sched_yield between polls, which runs a PE waiting for this CPU; but
 *    once two yields in a row came back late (250 us: another program's
 *    time slice ran, not a PE's few microseconds) block at once, for 20 ms.
 * Then the wait blocks.  A wait whose waker is this library on this node
 * (collectives, barriers) parks: it sleeps on its PE's doorbell, a futex
 * in the PE's symmetric heap, and whoever publishes what it waits for
 * rings the doorbell, paying a system call only when someone sleeps
 * (hps_shmem_park_*), and the sleeper is runnable the moment it may go on,
 * where a spinner whose time slice ended waits for its next one.  Waits
 * nobody will wake (a user's variable, libfabric counters) keep yielding
 * until HPSYNC_SHMEM_POLL_MS on a crowded node or over libfabric, then nap
 * between polls: on-node for 1/8 of the time waited so far (50 us to
 * 1 ms), over libfabric 50 us.
 *
 * With libfabric in use, other PEs' gets, fetching atomics and the reads
 * behind their quiets are answered only when this PE polls (a fetch-add
 * into a PE napping 50 us took 80 us on shm, 0.45 us into one polling), so
 * traffic (a sum of counters that only grows) restarts the clock.
 */
#ifndef HPS_SHMEM_WAIT_H
#define HPS_SHMEM_WAIT_H

#include <stdint.h>
#include "hpsync/pr.h"

/* Set by shmem_init (hps_shmem_wait_configure) before any wait. */
typedef struct hps_shmem_wait_cfg {
    uint64_t spin_ns;           /* HPSYNC_SHMEM_SPIN_US */
    uint64_t poll_ns;           /* HPSYNC_SHMEM_POLL_MS */
    int crowded;                /* more PEs on this node than CPUs they may run on */
    int local_pes;              /* this job's PEs on this node */
    /* The doorbell lines of the other PEs of this node that this one maps,
     * for waits that do not know whom they wait for (node.c sets them). */
    const struct hps_park *const *neighbours;
    int nneighbours;
} hps_shmem_wait_cfg_t;
extern hps_shmem_wait_cfg_t hps_shmem_wait_cfg __attribute__((visibility("hidden")));

/* From this job's PEs on this node and the settings (HPSYNC_SHMEM_SPIN_US,
 * HPSYNC_SHMEM_POLL_MS: passed in, so this file needs nothing else of the
 * library).  Until the PEs' CPU sets are known, a PE held to one CPU counts
 * the machine's: a launcher that binds gives each PE a CPU of its own, and
 * taking that for a crowded node would make every PE yield. */
void hps_shmem_wait_configure(int local_pes, uint32_t spin_us, uint32_t poll_ms);
/* The CPUs this node's PEs may use together (the union of their sets),
 * once every one of them has published its set. */
void hps_shmem_wait_set_node_cpus(int cpus);

/*
 * A PE's doorbell: one cache line in its symmetric heap, so the PEs that
 * map the heap can ring it.  bell is the futex word; parked counts this
 * PE's threads asleep on it; cpu is the CPU (+ 1, 0 unknown) the PE last
 * started to wait on, for the awaited PE's "same CPU" test.
 */
typedef struct hps_park {
    hps_au32 bell;
    hps_au32 parked;
    hps_au32 cpu;
    uint32_t pad_[13];
} hps_shmem_park_t;

/* This PE's doorbell (node.c sets it once the heap exists; NULL before,
 * and then nothing parks). */
extern hps_shmem_park_t *hps_shmem_park_self __attribute__((visibility("hidden")));

/* The waker's side, after it published what a waiter may wait for and a
 * full fence (hps_fence_seq_cst): wake p's owner if it sleeps. */
void hps_shmem_park_ring(hps_shmem_park_t *p);
HPS_INLINE void hps_shmem_park_wake(hps_shmem_park_t *p)
{
    if (hps_unlikely(hps_load_relaxed(&p->parked) != 0))
        hps_shmem_park_ring(p);
}

/* One wait's state: zero it (or set only self and peer) before the first
 * step.  self: park on this doorbell when polling is over (someone will
 * ring it); peer: the awaited PE's doorbell line, or NULL if unknown. */
typedef struct hps_shmem_waiter {
    uint32_t n;
    int share;                  /* the awaited PE may need this CPU: yield */
    int yielded;                /* the last step yielded, at time last */
    uint64_t last;
    uint64_t traffic, since;    /* last traffic stamp seen, and when */
    hps_shmem_park_t *self;
    const hps_shmem_park_t *peer;
} hps_shmem_waiter_t;

enum { HPS_WAIT_POLL = 0, HPS_WAIT_PARK = 1 };

/* Called after each unsuccessful poll.  ofi: libfabric is in use, and
 * traffic is its current stamp (ignored otherwise).  Returns HPS_WAIT_PARK
 * when a parkable wait (self set) should sleep: the caller then arms the
 * doorbell, checks its condition once more and sleeps (hps_shmem_park_sleep). */
int hps_shmem_waiter_step(hps_shmem_waiter_t *w, int ofi, uint64_t traffic);

/* Parking: arm p (returns the bell to sleep on), check the condition once
 * more, then finish: sleep (if still waiting) until the bell rings, and
 * disarm. */
uint32_t hps_shmem_park_arm(hps_shmem_park_t *p);
void hps_shmem_park_finish(hps_shmem_park_t *p, uint32_t bell, int still_waiting);

#endif
