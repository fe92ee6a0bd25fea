/* SPDX-License-Identifier: MIT */
/*
 * hpsync/tm_coarsen.h - transactional coarsening: a loop whose iterations
 * run in TM sections of k iterations each (reference: docs/api/tm.md).
 *
 *   static void add(long i, void *arg)          // one tiny critical section
 *   {
 *       uint64_t *bin = &hist[key[i] % B];
 *       HPS_TM_WRITE(bin, HPS_TM_READ(bin) + 1);
 *   }
 *   hps_tm_for(0, n, 64, add, NULL);            // sections of 64 iterations
 *
 *   static hps_tm_coarsen_t site = HPS_TM_COARSEN_INIT;
 *   hps_tm_for_dynamic(&site, 0, n, add, NULL); // k chosen at run time
 *
 * Semantics.  Iterations lo, lo+1, ..., hi-1 run in that order on the
 * calling thread, grouped into consecutive chunks; each chunk is one
 * section, so its iterations' effects become visible to other threads
 * together when it commits, and a later chunk sees every earlier one's.
 * An abort reruns only the current chunk.  The iteration function runs
 * inside the section: every shared access goes through the TM accessors,
 * and it may run more than once (a rerun after an abort), so what it does
 * outside TM memory (locals, private counters, I/O) must be harmless to
 * repeat, or be deferred with hps_tm_on_commit(), or come after
 * hps_tm_irrevocable().  A chunk ends early, committing the iterations
 * before the point where:
 *   - an iteration called hps_tm_irrevocable(): the chunk runs (or, under
 *     norec and stm, reruns) irrevocably and ends after that iteration,
 *     so only the iterations up to it run alone;
 *   - an iteration called hps_tm_restart(): the iterations before it
 *     commit first, then it begins a chunk of its own (so a wait for
 *     another thread never waits for this thread's own uncommitted work);
 *     with real RTM under htm or hybrid the split point is lost with the
 *     transaction, and the chunk shrinks to its first iteration;
 *   - a hardware capacity abort: the chunk is halved, and so is the
 *     call's k for its remaining chunks (hps_tm_for) or the controller's
 *     level (hps_tm_for_dynamic).
 * Inside a section the loop adds no sections: it runs as part of the
 * enclosing one (nesting is flat).  The function must not leave the loop
 * by longjmp or leave sections open.
 */
#ifndef HPSYNC_TM_COARSEN_H
#define HPSYNC_TM_COARSEN_H

#include <stdint.h>
#include "hpsync/tm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*hps_tm_iter_fn)(long i, void *arg);

/* Iterations [lo, hi) in sections of k (k < 1 runs as 1; k >= hi - lo is
 * one section for the whole range). */
void hps_tm_for(long lo, long hi, long k, hps_tm_iter_fn fn, void *arg);
/* The same with each chunk serialized: it runs alone behind the TM gate
 * (every other section in the process waits for it), with plain reads and
 * in-place writes under an undo log, so it cannot conflict and can still
 * restart (a rerun after hps_tm_restart() runs concurrently, as any
 * section).  Where conflicts or the instrumentation of a software backend
 * cost more than the concurrency gains, one thread at a time is faster;
 * the dynamic form measures both (see hps_tm_for_dynamic). */
void hps_tm_for_serial(long lo, long hi, long k, hps_tm_iter_fn fn, void *arg);

/*
 * A call site of the dynamic form.  Declare it static (or with the data it
 * serves) and initialize it with HPS_TM_COARSEN_INIT, or with
 * HPS_TM_COARSEN_INIT_K(k0, kmax) to choose where the search starts (k0;
 * without it the site first measures k = 4, 64 and 1024 and starts from
 * the cheapest) and the largest k it may use (kmax, at most 65536); both are rounded
 * down to powers of 2.  The threads using a site run one k: one of them
 * (the leader) runs the site's controller and publishes its k, the others
 * follow it (see docs/tm-coarsen.md).  The fields after the settings are
 * the library's.
 */
typedef struct hps_tm_coarsen {
    uint32_t k0, kmax;               /* settings (0: a scan, and 1024) */
    hps_au32 level;                  /* the site's k: (run + 1) | (settled + 1) << 8, arms << 16; 0: none yet */
    uint32_t pad_;
    hps_au64 leader;                 /* the leading thread's token (0: none) */
    hps_au64 beat;                   /* when the leader last ended an epoch (ns) */
    /* The controller's state, as the leader left it at its last epoch
     * (a sequence-locked copy): a thread that takes the lead over goes on
     * from there instead of starting the search again. */
    hps_au64 ctl_seq_;
    hps_au64 ctl_[32];
} hps_tm_coarsen_t;
#define HPS_TM_COARSEN_INIT { 0, 0, 0, 0, 0, 0, 0, { 0 } }
#define HPS_TM_COARSEN_INIT_K(k0, kmax) { (k0), (kmax), 0, 0, 0, 0, 0, { 0 } }

/* Iterations [lo, hi) in sections of k iterations, k chosen and adapted at
 * run time by the site's controller, which also measures serialized
 * chunks (as hps_tm_for_serial, at k = kmax) and runs them where they
 * cost less per iteration than any concurrent k it found.  Under a backend
 * that runs one section at a time (sgl) there is nothing to choose: it
 * runs k = kmax. */
void hps_tm_for_dynamic(hps_tm_coarsen_t *site, long lo, long hi, hps_tm_iter_fn fn, void *arg);

/* What this thread does at a site (zeros if the thread has not used it). */
typedef struct hps_tm_coarsen_info {
    uint32_t k;                      /* the chunk size it runs now */
    uint32_t k_cap;                  /* the largest it may try (lowered by capacity aborts) */
    uint32_t settled;                /* 1: the site holds k between probes */
    uint32_t leads;                  /* 1: this thread runs the site's controller */
    uint64_t epochs;                 /* this thread's measurement epochs so far */
    uint64_t moves;                  /* changes of its k */
    uint64_t probes;                 /* neighbouring sizes it measured while leading */
    uint64_t iterations;             /* iterations it ran through the site */
    uint64_t ctl_epochs;             /* leading: epochs the site's controller was fed, by every leader so far */
    uint32_t serial;                 /* 1: its chunks run serialized (k is then kmax) */
    uint32_t pinned;                 /* 1: the backend runs one section at a time (sgl): k is
                                      * kmax, and the controller waits for another backend */
    /* The site's choice: what its controller holds between probes and
     * scans.  `k` above is what runs now, which may be a probe's neighbour
     * or a scan's point (k = 4 while a settled serial arm rescans); a
     * report of where the controller ended wants these. */
    uint32_t k_held;                 /* the chunk size held (kmax when serial_held) */
    uint32_t serial_held;            /* 1: the site holds serialized chunks */
} hps_tm_coarsen_info_t;
void hps_tm_coarsen_info(const hps_tm_coarsen_t *site, hps_tm_coarsen_info_t *out);

#ifdef __cplusplus
}
#endif
#endif /* HPSYNC_TM_COARSEN_H */
