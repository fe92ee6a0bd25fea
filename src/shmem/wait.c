// SPDX-License-Identifier: MIT
/* The waiting policy of wait.h.  No dependency on the rest of the library:
 * the libfabric transport's own test links this file alone. */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "hpsync/pr.h"
#include "../prim/cpus.h"
#include "../prim/futex.h"
#include "../prim/clock.h"
#include "../prim/yield.h"
#include "wait.h"

hps_shmem_wait_cfg_t hps_shmem_wait_cfg = { 100000, 1000000000ull, 0, 1, NULL, 0 };
hps_shmem_park_t *hps_shmem_park_self;

/* Polls before the first clock read (~1 us): most waits end here, and a
 * clock read costs as much as a poll in a VM (83 ns measured here). */
#define HPS_WAIT_FAST_POLLS 16
/* While spinning, the clock is read every this many polls. */
#define HPS_WAIT_CLOCK_EVERY 16
/* Naps: over libfabric a fixed 50 us (the PE answers others' gets only
 * when it polls); on-node 1/8 of the time waited so far, within these. */
#define HPS_NAP_OFI_NS 50000
#define HPS_NAP_MIN_NS 50000
#define HPS_NAP_MAX_NS 1000000

void hps_shmem_wait_configure(int local_pes, uint32_t spin_us, uint32_t poll_ms)
{
    int cpus = hps_cpus_usable();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus == 1 && online > 1)
        cpus = (int)online;
    hps_shmem_wait_cfg.local_pes = local_pes;
    hps_shmem_wait_cfg.crowded = local_pes > cpus;
    hps_shmem_wait_cfg.spin_ns = (uint64_t)spin_us * 1000u;
    hps_shmem_wait_cfg.poll_ns = (uint64_t)poll_ms * 1000000ull;
}

void hps_shmem_wait_set_node_cpus(int cpus)
{
    hps_shmem_wait_cfg.crowded = hps_shmem_wait_cfg.local_pes > cpus;
}

/* Record the CPU this thread waits on in its PE's doorbell line (read by
 * whoever waits for this PE) and say whether the awaited PE last waited on
 * the same CPU: then it is runnable here, not running elsewhere.  When the
 * awaited PE is not known (a variable any PE may write), any other PE of
 * this node that last waited here counts. */
static int same_cpu(const hps_shmem_park_t *peer)
{
    int cpu = sched_getcpu();
    uint32_t mine = cpu < 0 ? 0 : (uint32_t)cpu + 1;
    hps_shmem_park_t *self = hps_shmem_park_self;
    /* Written only when it changed: every write takes the line away from
     * the PEs that read it. */
    if (self && hps_load_relaxed(&self->cpu) != mine)
        hps_store_relaxed(&self->cpu, mine);
    if (!mine)
        return 0;
    if (peer)
        return hps_load_relaxed(&peer->cpu) == mine;
    for (int i = 0; i < hps_shmem_wait_cfg.nneighbours; i++)
        if (hps_load_relaxed(&hps_shmem_wait_cfg.neighbours[i]->cpu) == mine)
            return 1;
    return 0;
}

static void nap(uint64_t ns)
{
    static __thread int slack_set;
    if (!slack_set) {
        /* The default 50 us timer slack would double every nap. */
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        slack_set = 1;
    }
    hps_sleep_ns(ns);
}

/* A yield that comes back this late ran somebody else's time slice, not a
 * PE's few microseconds of work: another program wants the CPU, and every
 * further yield would hand it a slice.  After two of those in a row the
 * thread blocks instead of yielding for a while.  (4 PEs on 2 CPUs beside two busy loops, one run
 * each: barrier 2 ms yielding, 0.13 ms parking at once; without the busy
 * loops yielding is the faster, 5.5 against 15 us.) */
#define HPS_YIELD_LATE_NS 250000
#define HPS_YIELD_HOLDOFF_NS 20000000
static __thread hps_yield_guard_t t_yield;

int hps_shmem_waiter_step(hps_shmem_waiter_t *w, int ofi, uint64_t traffic)
{
    uint32_t n = w->n++;
    if (n < HPS_WAIT_FAST_POLLS || (!w->share && n % HPS_WAIT_CLOCK_EVERY)) {
        hps_cpu_relax();
        return HPS_WAIT_POLL;
    }
    uint64_t now = hps_mono_ns();
    if (w->yielded) {
        hps_yield_took(&t_yield, now - w->last, now, HPS_YIELD_LATE_NS, HPS_YIELD_HOLDOFF_NS);
    }
    w->yielded = 0;
    w->last = now;
    if (!ofi)
        traffic = 0;
    if (!w->since || traffic != w->traffic) {
        w->traffic = traffic;
        w->since = now;
    }
    /* Asked again at every clock read: the PEs migrate. */
    w->share = hps_shmem_wait_cfg.crowded || same_cpu(w->peer);
    uint64_t waited = now - w->since;
    int may_yield = hps_yield_allowed(&t_yield, now);
    if (waited < hps_shmem_wait_cfg.spin_ns) {
        if (!w->share) {
            hps_cpu_relax();
            return HPS_WAIT_POLL;
        }
        if (may_yield) {
            sched_yield();
            w->yielded = 1;
            return HPS_WAIT_POLL;
        }
        /* It needs this CPU, and yielding would feed another program:
         * block at once. */
    }
    if (w->self)
        return HPS_WAIT_PARK;
    if ((w->share || ofi) && waited < hps_shmem_wait_cfg.poll_ns && may_yield) {
        w->share = 1;                 /* no clock-read skipping between yields */
        sched_yield();
        w->yielded = 1;
        return HPS_WAIT_POLL;
    }
    if (ofi) {
        nap(HPS_NAP_OFI_NS);
        return HPS_WAIT_POLL;
    }
    uint64_t ns = waited / 8;
    nap(ns < HPS_NAP_MIN_NS ? HPS_NAP_MIN_NS : ns > HPS_NAP_MAX_NS ? HPS_NAP_MAX_NS : ns);
    return HPS_WAIT_POLL;
}

/* ---- doorbells -------------------------------------------------------------- */

uint32_t hps_shmem_park_arm(hps_shmem_park_t *p)
{
    uint32_t bell = hps_load_acquire(&p->bell);
    hps_faa_relaxed(&p->parked, 1);
    /* Dekker with the waker: our parked count is visible before we look at
     * the condition again, or the waker's publication is visible to that
     * look; its fence pairs with this one. */
    hps_fence_seq_cst();
    return bell;
}

void hps_shmem_park_finish(hps_shmem_park_t *p, uint32_t bell, int still_waiting)
{
    /* Returns at once if the bell rang after hps_shmem_park_arm read it. */
    if (still_waiting)
        hps_futex_wait((void *)&p->bell, bell, CLOCK_MONOTONIC, NULL, 1);
    hps_fas_release(&p->parked, 1);
}

void hps_shmem_park_ring(hps_shmem_park_t *p)
{
    hps_faa_release(&p->bell, 1);
    hps_futex_wake((void *)&p->bell, INT_MAX, 1);
}
