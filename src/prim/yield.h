/* SPDX-License-Identifier: MIT */
/*
 * yield.h - when a wait may still call sched_yield: the rule the
 * OpenSHMEM waits (src/shmem/wait.c) and TM's retries (src/tm/core.c)
 * share.  On Linux's EEVDF scheduler a yield hands the CPU to whatever
 * else is runnable and pushes the yielder's deadline back: among the
 * program's own threads that is what a wait wants, but beside busy
 * processes every yield runs one of their time slices and a thread that
 * keeps yielding starves.  The sign is a yield that came back late: after
 * HPS_YIELD_LATE_RUN of them in a row the thread stops yielding for a
 * hold-off and blocks or naps instead.  Per thread; the caller keeps the
 * state in TLS and picks what "late" means for its waits.
 */
#ifndef HPS_PRIM_YIELD_H
#define HPS_PRIM_YIELD_H

#include <stdint.h>

#define HPS_YIELD_LATE_RUN 2              /* one late yield can be a daemon waking */

typedef struct hps_yield_guard {
    uint64_t until;                       /* no yield before (CLOCK_MONOTONIC ns) */
    uint32_t run;                         /* late yields in a row */
} hps_yield_guard_t;

static inline int hps_yield_allowed(const hps_yield_guard_t *g, uint64_t now)
{
    return now >= g->until;
}

/* A yield took `took` ns, seen at `now`: late if over late_ns. */
static inline void hps_yield_took(hps_yield_guard_t *g, uint64_t took, uint64_t now, uint64_t late_ns,
                                  uint64_t holdoff_ns)
{
    g->run = took > late_ns ? g->run + 1 : 0;
    if (g->run >= HPS_YIELD_LATE_RUN)
        g->until = now + holdoff_ns;
}

#endif
