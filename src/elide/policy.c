// SPDX-License-Identifier: MIT
/* The elision policy (see policy.h and docs/elision.md for the reasons). */
#include "policy.h"
#include "hpsync/elide.h"

hps_elide_action_t hps_elide_decide(const hps_elide_cfg_t *cfg, unsigned status, unsigned attempt)
{
    if (status & HPS_TX_EXPLICIT) {
        /*
         * The lock was held when we looked: retrying at once would abort
         * again (and a crowd of retriers keeps each other from ever seeing it
         * free: the lemming effect).  Wait for it outside, then retry.
         */
        if (HPS_TX_CODE(status) == HPS_ABORT_BUSY)
            return attempt < cfg->retries ? HPS_ELIDE_WAIT_RETRY : HPS_ELIDE_LOCK;
        /* Our own aborts for operations a transaction cannot contain. */
        return HPS_ELIDE_LOCK;
    }
    /* The section does not fit in the cache: it never will. */
    if (status & HPS_TX_CAPACITY)
        return HPS_ELIDE_LOCK;
    /* The hardware says a retry may succeed (typically a data conflict). */
    if (status & HPS_TX_RETRY)
        return attempt < cfg->retries ? HPS_ELIDE_RETRY : HPS_ELIDE_LOCK;
    /* Conflict without RETRY, interrupt, debug, nesting overflow, unknown. */
    return HPS_ELIDE_LOCK;
}

int hps_elide_cause(unsigned status)
{
    if (status & HPS_TX_EXPLICIT)
        return HPS_TX_CODE(status) == HPS_ABORT_BUSY ? HPS_ELIDE_ABORT_BUSY : HPS_ELIDE_ABORT_EXPLICIT;
    if (status & HPS_TX_CAPACITY)
        return HPS_ELIDE_ABORT_CAPACITY;
    if (status & (HPS_TX_CONFLICT | HPS_TX_RETRY))
        return HPS_ELIDE_ABORT_CONFLICT;
    return HPS_ELIDE_ABORT_OTHER;
}

int hps_elide_take_skip(uint32_t *v)
{
    if (HPS_ELIDE_SKIP(*v) == 0)
        return 0;
    *v -= 1;
    return 1;
}

uint32_t hps_elide_after_fallback(const hps_elide_cfg_t *cfg, uint32_t v)
{
    uint32_t fails = HPS_ELIDE_FAILS(v) + 1, backoff = HPS_ELIDE_BACKOFF(v), skip = 0;
    /* After a skip period the next acquisition is a probe: one failure is
     * enough to start the next, twice as long, period. */
    if (fails >= cfg->fails || backoff > 0) {
        uint64_t len = (uint64_t)cfg->skip << (backoff < 16 ? backoff : 16);
        skip = (uint32_t)(len < cfg->skip_max ? len : cfg->skip_max);
        if (skip > 0xffff)
            skip = 0xffff;
        fails = 0;
        if (backoff < 16)
            backoff++;
    }
    if (fails > 0xff)
        fails = 0xff;
    return (backoff << 24) | (fails << 16) | skip;
}

uint32_t hps_elide_after_commit(uint32_t v)
{
    (void)v;
    return 0;
}
