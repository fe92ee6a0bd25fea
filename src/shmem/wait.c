// SPDX-License-Identifier: MIT
/* The waiting policy of wait.h. */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/prctl.h>
#include "hpsync/pr.h"
#include "clock.h"
#include "wait.h"

hps_wait_cfg_t hps_wait_cfg = { 200, 0, 1000000000ull };

/* After traffic, poll without yielding this long: a sched_yield per poll
 * adds its system call (~1 us here) to every answer a busy peer waits for.
 * Not when this node has more PEs than CPUs: there the spinning held the
 * core a peer needed (4 PEs on 2 CPUs, add + barrier: 156 us a round with
 * it, 110 without). */
#define HPS_OFI_SPIN_AFTER_NS 50000
#define HPS_NAP_NS 50000

void hps_waiter_step(hps_waiter_t *w, int ofi, uint64_t traffic)
{
    uint32_t n = w->n++;
    if (n < hps_wait_cfg.spin) {
        hps_cpu_relax();
        return;
    }
    uint64_t now = hps_mono_ns();
    if (!ofi)
        traffic = 0;
    if (traffic != w->traffic || !w->since) {
        w->traffic = traffic;
        w->since = now;
        w->naps = 0;
    }
    uint64_t quiet_for = now - w->since;
    if (ofi && quiet_for < HPS_OFI_SPIN_AFTER_NS && !hps_wait_cfg.crowded) {
        hps_cpu_relax();              /* more is likely on its way */
        return;
    }
    if (quiet_for < hps_wait_cfg.poll_ns) {
        sched_yield();
        return;
    }
    if (ofi) {
        static __thread int slack_set;
        if (!slack_set) {
            /* The default 50 us timer slack would double every nap. */
            prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
            slack_set = 1;
        }
        hps_sleep_ns(HPS_NAP_NS);
        return;
    }
    uint32_t k = w->naps++;
    hps_sleep_ns((uint64_t)HPS_NAP_NS << (k < 5 ? k : 5));   /* doubling to 1.6 ms */
}
