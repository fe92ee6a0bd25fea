/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lockset.h - lockset elision: take several locks as one
 * (reference: docs/api/lockset.md).
 *
 *   hps_lock_t *pair[2] = { &body[i].lock, &body[j].lock };
 *   hps_lockset_lock(pair, 2);        // i == j is fine: duplicates count once
 *   ... update body[i] and body[j] ...
 *   hps_lockset_unlock(pair, 2);
 *
 * Where hardware transactions run (RTM, or the elision layer's injected
 * backend in tests), one transaction reads every lock word of the set and
 * runs the critical section speculatively: two locksets that share no
 * data run in parallel, and a thread that really holds one of the locks
 * (plain hps_lock_lock, or another lockset that fell back) aborts it.  The
 * elision layer's policy decides retries, waits for a busy lock and
 * adaptive skipping (docs/elision.md).  Otherwise, or when the policy
 * gives up, the locks are taken in address order with duplicates removed,
 * so no two locksets (and no lockset and plain locking in address order)
 * deadlock.
 *
 * Rules: unlock with the same set (any order of its elements) on the
 * thread that locked it, innermost lockset first; no system calls inside
 * (they abort a hardware transaction: the set is then taken for real on
 * the next attempt).  A lock taken plainly inside a lockset section is
 * fine; taking one of the set's own locks again is a self-deadlock, as
 * with the locks themselves.
 *
 * The pthread form takes pthread_mutex_t pointers.  Under the interposer
 * (libhpsync-preload) the mutexes are hpsync locks and get the same
 * hardware path (normal and adaptive mutexes; others are taken in order).
 * Without it they are glibc's, taken in address order with
 * pthread_mutex_lock (no hardware path: glibc's lock word is its own).
 *
 * Cost without hardware transactions: sorting the set (insertion sort of
 * n pointers) and n lock calls; with them, one transaction begin and n
 * loads.  Figures in docs/tm.md.
 */
#ifndef HPSYNC_LOCKSET_H
#define HPSYNC_LOCKSET_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "hpsync/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most locks in one set, and locksets one thread may hold at once. */
#define HPS_LOCKSET_MAX   64
#define HPS_LOCKSET_DEPTH 16

/* 0; EINVAL (n == 0 or > HPS_LOCKSET_MAX, a NULL pointer), EAGAIN (this
 * thread already holds HPS_LOCKSET_DEPTH locksets). */
int hps_lockset_lock(hps_lock_t *const *locks, size_t n);
/* As lock, or EBUSY when a lock of the set is held: nothing is then held. */
int hps_lockset_trylock(hps_lock_t *const *locks, size_t n);
/* 0; EINVAL (bad arguments), EPERM (not the set of this thread's innermost
 * lockset: nothing is released). */
int hps_lockset_unlock(hps_lock_t *const *locks, size_t n);

int hps_lockset_mutex_lock(pthread_mutex_t *const *m, size_t n);
int hps_lockset_mutex_trylock(pthread_mutex_t *const *m, size_t n);
int hps_lockset_mutex_unlock(pthread_mutex_t *const *m, size_t n);

/* This thread's counts: sets run as one transaction, sets taken lock by
 * lock (after the policy gave up, skipped, or with no hardware path), and
 * transaction aborts (busy locks included). */
typedef struct hps_lockset_stats {
    uint64_t elided, locked, aborts;
} hps_lockset_stats_t;
void hps_lockset_stats_get(hps_lockset_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* HPSYNC_LOCKSET_H */
