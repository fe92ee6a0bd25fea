/* SPDX-License-Identifier: MIT */
/*
 * hps_probe_locks.h - the table of lock variants the mutex and handoff
 * probes measure: glibc's default mutex, glibc's PTHREAD_MUTEX_ADAPTIVE_NP,
 * then every hpsync algorithm through the generic hps_lock_t API (its inline
 * switch included, as a library user calls it).  Each lock sits on its own
 * cache line, as a lock alone in a hot structure would.
 *
 * Needs libhpsync (bench/common/probe_locks.c is compiled into the probes
 * that link it).  Lock and unlock are inline so the timed loops call the
 * locks exactly as a user's code does.
 */
#ifndef HPS_PROBE_LOCKS_H
#define HPS_PROBE_LOCKS_H

#include <pthread.h>
#include "hpsync/lock.h"

enum { HPS_PROBE_NGLIBC = 2, HPS_PROBE_NLOCKS = HPS_PROBE_NGLIBC + HPS_LOCK_ALGO_MAX };

extern struct hps_probe_pm {
    pthread_mutex_t m;
} __attribute__((aligned(64))) hps_probe_pm[HPS_PROBE_NGLIBC];
extern struct hps_probe_hl {
    hps_lock_t l;
} __attribute__((aligned(64))) hps_probe_hl[HPS_LOCK_ALGO_MAX + 1];

/* Initialise every lock and fill names[0..HPS_PROBE_NLOCKS) with the
 * variants' names ("glibc", "glibc_adaptive_np", then the algorithms). */
void hps_probe_locks_init(const char *names[HPS_PROBE_NLOCKS]);

/* Variant v's glibc mutex (v < HPS_PROBE_NGLIBC) or hpsync lock (else). */
static inline pthread_mutex_t *hps_probe_lock_glibc(int v) { return &hps_probe_pm[v].m; }
static inline hps_lock_t *hps_probe_lock_hps(int v)
{
    return &hps_probe_hl[v - HPS_PROBE_NGLIBC + 1].l;
}

static inline void hps_probe_lock(int v)
{
    if (v < HPS_PROBE_NGLIBC)
        pthread_mutex_lock(hps_probe_lock_glibc(v));
    else
        hps_lock_lock(hps_probe_lock_hps(v));
}

static inline void hps_probe_unlock(int v)
{
    if (v < HPS_PROBE_NGLIBC)
        pthread_mutex_unlock(hps_probe_lock_glibc(v));
    else
        hps_lock_unlock(hps_probe_lock_hps(v));
}

#endif
