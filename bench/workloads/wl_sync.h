/* SPDX-License-Identifier: MIT */
/*
 * wl_sync.h - the global-lock synchronization variants the tree, ring and
 * ART workloads share, chosen at run time by name.
 *
 *   mutex       one glibc pthread mutex (the baseline every speed-up is
 *               measured against)
 *   tts         one hpsync test-and-test-and-set lock (HPS_LOCK_TTAS)
 *   elide       that lock elided (hpsync/elide.h), the process's restart
 *               count (HPSYNC_ELIDE_RETRIES, default 3)
 *   elide-rN    elided with N restarts (hps_elide_set_retries), N 0..100
 *   stm         hpsync TM sections (hpsync/tm.h) on the stm backend: the
 *               program's TM build of its structure, not a lock
 *
 * Code written against bench/tm/tx.h's TMB_LOCK mapping calls
 * tmb_lock_enter()/tmb_lock_exit(), which take the chosen lock.  Without
 * RTM (this machine) elision runs its policy but takes the lock for real:
 * elided variants then measure the layer's cost, not speculation.
 */
#ifndef WL_SYNC_H
#define WL_SYNC_H

#include <stdint.h>

typedef enum { WL_MUTEX, WL_TTS, WL_ELIDE, WL_STM, WL_OTHER } wl_sync_kind_t;

typedef struct wl_sync {
    wl_sync_kind_t kind;
    int retries;                 /* elide: the restart count, -1 for the setting's */
    char name[24];
} wl_sync_t;

/* Parse a variant name into *s: 0, or -1 when it is none of the above
 * (the caller may know more names, such as the ART's "olc": WL_OTHER). */
int wl_sync_parse(const char *name, wl_sync_t *s);

/*
 * Call first thing in main with the variants the run will use.  hpsync TM
 * picks its backend from HPSYNC_TM when the library loads, so a run with
 * the stm variant and HPSYNC_TM unset re-executes itself once with
 * HPSYNC_TM=stm (the setting is only for this process and its children).
 * Returns only when the backend is settled.
 */
void wl_sync_settle_env(char **argv, int wants_stm);

/* Make s the lock tmb_lock_enter() takes; resets the statistics.  Call
 * before the threads start. */
void wl_sync_use(const wl_sync_t *s);

/* The chosen global lock (tx.h's TMB_LOCK mapping). */
void tmb_lock_enter(void);
void tmb_lock_exit(void);

/* Write the statistics of the runs since wl_sync_use() into the open JSON
 * object: "elision" (begun, commits, aborts by cause, fallbacks; elide
 * variants), "tm" (commits, aborts by cause; stm), or nulls. */
void wl_sync_stats_begin(void);
void wl_sync_stats_json(void);

/* The same statistics added up over several runs (a harness workload's
 * repetitions, interleaved with other variants' runs): after each run,
 * wl_sync_stats_add() adds what it counted since wl_sync_stats_begin();
 * wl_sync_stats_write() writes "elision" and "tm" (or nulls) for s. */
typedef struct wl_sync_stats {
    uint64_t begun, commits, aborts[5], fallbacks, skips;      /* elide */
    uint64_t tm_commits, tm_commits_ro, tm_aborts, tm_retries, tm_irrevocable;
    uint64_t tm_reads, tm_writes, tm_by_cause[16];              /* stm */
} wl_sync_stats_t;
void wl_sync_stats_add(wl_sync_stats_t *acc);
void wl_sync_stats_write(const wl_sync_t *s, const wl_sync_stats_t *acc);

/* The TM backend in use ("stm", ...), for the document. */
const char *wl_sync_tm_backend(void);

#endif
