// SPDX-License-Identifier: MIT
/*
 * The RTM elision backend: the only file that executes RTM instructions
 * (compiled with -mrtm on x86).  backend.c selects it only when
 * hps_cpu_rtm_usable() said yes, so XBEGIN never runs on a CPU without RTM.
 */
#define HPS_WANT_RTM 1
#include "backend.h"

HPS_RTM_ABORT_FN(0xff)
HPS_RTM_ABORT_FN(0xfe)
HPS_RTM_ABORT_FN(0xfd)
HPS_RTM_ABORT_FN(0xfc)
HPS_RTM_ABORT_FN(0xfb)
HPS_RTM_ABORT_FN(0xfa)

static unsigned rtm_begin(hps_lock_state_t *s, hps_lock_algo_t a)
{
    unsigned st = hps_rtm_begin();
    if (st == HPS_TX_STARTED) {
        /* Reading the word puts it in our read set: a real acquisition by
         * another thread now aborts us. */
        if (!hps_lockstate_is_locked(s, a))
            return HPS_TX_STARTED;
        hps_rtm_abort(0xff);
        return HPS_TX_EXPLICIT | (HPS_ABORT_BUSY << 24);   /* not reached */
    }
    return st;
}

static unsigned rtm_end(hps_lock_state_t *s, hps_lock_algo_t a)
{
    /*
     * Elided only if the word is free *and* we are in a transaction: XEND
     * outside one would fault, and a lock really held (taken before the
     * transaction began, or on a skip) must really be released.  Unlocking
     * an unlocked lock thus behaves as without elision.
     */
    if (!hps_lockstate_is_locked(s, a) && hps_rtm_test()) {
        hps_rtm_end();
        /* Only the outermost commit counts (see hps_elide_ops_t.speculative). */
        return hps_rtm_test() ? 0 : HPS_ELIDE_END_COMMIT;
    }
    return HPS_ELIDE_END_RELEASE;
}

static int rtm_test(void) { return hps_rtm_test(); }

static void rtm_abort(unsigned code)
{
    /* XABORT outside a transaction is a no-op, but cheap to skip. */
    if (!hps_rtm_test())
        return;
    switch (code) {
    case HPS_ABORT_BUSY: hps_rtm_abort(0xff); break;
    case HPS_ABORT_COND: hps_rtm_abort(0xfe); break;
    case HPS_ABORT_TRYLOCK: hps_rtm_abort(0xfd); break;
    case HPS_ABORT_TM_RESTART: hps_rtm_abort(0xfc); break;
    case HPS_ABORT_TM_RO: hps_rtm_abort(0xfb); break;
    case HPS_ABORT_TM_IRREV: hps_rtm_abort(0xfa); break;
    default: break;
    }
}

const hps_elide_ops_t hps_elide_ops_rtm = {
    .name = "rtm", .speculative = 1,
    .begin = rtm_begin, .end = rtm_end, .abort = rtm_abort, .test = rtm_test,
};
