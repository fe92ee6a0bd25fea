/* SPDX-License-Identifier: MIT */
/*
 * harness_sync.h - wl_sync.h's global-lock variants as a harness workload's
 * own variants (the ring and the tree): mutex, tts, elide, stm.
 *
 * The workload lists WL_SYNC_VARIANTS in its wl_workload_t (mutex first:
 * the baseline); its
 * prepare hook calls wl_sync_harness_use() before it builds anything a
 * lock or a TM section guards, then wl_sync_stats_begin(); its validate
 * hook adds the run's statistics (wl_sync_stats_add) to the variant's
 * wl_sync_stats_t, and its variant_json hook writes them
 * (wl_sync_stats_write).  main is wl_sync_main(): the stm variant needs
 * HPSYNC_TM=stm from the process's start (wl_sync_settle_env).
 */
#ifndef WL_HARNESS_SYNC_H
#define WL_HARNESS_SYNC_H

#include "harness.h"
#include "wl_sync.h"

enum { WL_SYNC_MUTEX, WL_SYNC_TTS, WL_SYNC_ELIDE, WL_SYNC_STM, WL_SYNC_N };

extern const char *const wl_sync_variant_names[WL_SYNC_N];
extern const char *const wl_sync_variant_kinds[WL_SYNC_N];    /* --describe's kinds */
extern const char *const wl_sync_variant_tm[WL_SYNC_N];       /* stm: HPSYNC_TM=stm */

/* In the workload's wl_workload_t: the variants, and
 * what --describe says of them; no TM sweep; a run per allocator (the
 * workloads on these locks are the allocator study's). */
#define WL_SYNC_VARIANTS                                                                   \
    .variants = wl_sync_variant_names, .nvariants = WL_SYNC_N, .mutex_variant = WL_SYNC_MUTEX, \
    .no_tm = 1, .kinds = wl_sync_variant_kinds, .tm_backend = wl_sync_variant_tm, .allocators = 1

/* The variant v (one of the list) as wl_sync.h knows it. */
const wl_sync_t *wl_sync_of(const wl_variant_t *v);

/* Make v (one of the names above) the variant tmb_lock_enter() and the
 * statistics follow; returns its wl_sync_t. */
const wl_sync_t *wl_sync_harness_use(const wl_variant_t *v);

/* The whole main(): settles HPSYNC_TM when stm will run, then wl_main. */
int wl_sync_main(const wl_workload_t *w, int argc, char **argv);

#endif
