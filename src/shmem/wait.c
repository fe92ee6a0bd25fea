// SPDX-License-Identifier: MIT
/* The waiting policy of wait.h.  No dependency on the rest of the library:
 * the libfabric transport's own test links this file alone. */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <sys/prctl.h>
#include "hpsync/pr.h"
#include "../common/cpus.h"
#include "../common/futex.h"
#include "clock.h"
#include "wait.h"

hps_wait_cfg_t hps_wait_cfg = { 100000, 1000000000ull, 0 };
hps_park_t *hps_park_self;

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

void hps_wait_configure(int local_pes, uint32_t spin_us, uint32_t poll_ms)
{
    hps_wait_cfg.crowded = local_pes > hps_cpus_usable();
    hps_wait_cfg.spin_ns = (uint64_t)spin_us * 1000u;
    hps_wait_cfg.poll_ns = (uint64_t)poll_ms * 1000000ull;
}

/* Record the CPU this thread waits on in its PE's doorbell line (read by
 * whoever waits for this PE) and say whether the awaited PE last waited on
 * the same CPU: then it is runnable here, not running elsewhere. */
static int same_cpu(const hps_park_t *peer)
{
    int cpu = sched_getcpu();
    uint32_t mine = cpu < 0 ? 0 : (uint32_t)cpu + 1;
    hps_park_t *self = hps_park_self;
    /* Written only when it changed: every write takes the line away from
     * the PEs that read it. */
    if (self && hps_load_relaxed(&self->cpu) != mine)
        hps_store_relaxed(&self->cpu, mine);
    return peer && mine && hps_load_relaxed(&peer->cpu) == mine;
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

int hps_waiter_step(hps_waiter_t *w, int ofi, uint64_t traffic)
{
    uint32_t n = w->n++;
    if (n < HPS_WAIT_FAST_POLLS || (!w->share && n % HPS_WAIT_CLOCK_EVERY)) {
        hps_cpu_relax();
        return HPS_WAIT_POLL;
    }
    uint64_t now = hps_mono_ns();
    if (!ofi)
        traffic = 0;
    if (!w->since || traffic != w->traffic) {
        w->traffic = traffic;
        w->since = now;
    }
    /* Asked again at every clock read: the PEs migrate. */
    w->share = hps_wait_cfg.crowded || same_cpu(w->peer);
    uint64_t waited = now - w->since;
    if (waited < hps_wait_cfg.spin_ns) {
        if (w->share)
            sched_yield();
        else
            hps_cpu_relax();
        return HPS_WAIT_POLL;
    }
    if (w->self)
        return HPS_WAIT_PARK;
    if ((w->share || ofi) && waited < hps_wait_cfg.poll_ns) {
        w->share = 1;                 /* no clock-read skipping between yields */
        sched_yield();
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

uint32_t hps_park_arm(hps_park_t *p)
{
    uint32_t bell = hps_load_acquire(&p->bell);
    hps_faa_relaxed(&p->parked, 1);
    /* Dekker with the waker: our parked count is visible before we look at
     * the condition again, or the waker's publication is visible to that
     * look; its fence pairs with this one. */
    hps_fence_seq_cst();
    return bell;
}

void hps_park_finish(hps_park_t *p, uint32_t bell, int still_waiting)
{
    /* Returns at once if the bell rang after hps_park_arm read it. */
    if (still_waiting)
        hps_futex_wait((void *)&p->bell, bell, CLOCK_MONOTONIC, NULL, 1);
    hps_fas_release(&p->parked, 1);
}

void hps_park_ring(hps_park_t *p)
{
    hps_faa_release(&p->bell, 1);
    hps_futex_wake((void *)&p->bell, INT_MAX, 1);
}
