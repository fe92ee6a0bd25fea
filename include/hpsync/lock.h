/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock.h - one API over every hpsync lock algorithm.
 *
 *   hps_lock_t l;
 *   hps_lock_init(&l, HPS_LOCK_MCS);     // or HPS_LOCK_DEFAULT
 *   hps_lock_lock(&l); ... hps_lock_unlock(&l);
 *
 * Each call is an inline switch on the algorithm followed by that algorithm's
 * inline fast path (a handful of instructions, see its header); contended
 * paths live out of line in libhpsync.  Code that knows its algorithm at
 * compile time can use hpsync/lock/<algo>.h directly and skip the switch.
 *
 * Return values follow pthreads: trylock gives 0 or EBUSY, timedlock gives
 * 0, ETIMEDOUT, or EINVAL for a malformed deadline (checked only when the
 * call would have to wait, as glibc does).
 */
#ifndef HPSYNC_LOCK_H
#define HPSYNC_LOCK_H

#include <errno.h>
#include <stdbool.h>
#include <time.h>
#include "hpsync/pr.h"
#include "hpsync/lock/wait.h"
#include "hpsync/lock/ttas.h"
#include "hpsync/lock/ticket.h"
#include "hpsync/lock/mcs.h"
#include "hpsync/lock/hemlock.h"
#include "hpsync/lock/adaptive.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hps_lock_algo {
    HPS_LOCK_TTAS = 1,
    HPS_LOCK_TICKET,
    HPS_LOCK_MCS,
    HPS_LOCK_HEMLOCK,
    HPS_LOCK_ADAPTIVE,
    HPS_LOCK_ALGO_MAX = HPS_LOCK_ADAPTIVE,
    HPS_LOCK_DEFAULT = HPS_LOCK_ADAPTIVE,
} hps_lock_algo_t;

typedef union hps_lock_state {
#ifdef __cplusplus
    /* C++ only, and no part of the layout (the static_assert below): with
     * std::atomic members (non-trivial default constructors in C++20) a
     * union needs a constructor of its own.  This one zeroes the state, and
     * is constexpr, so a static lock is unlocked before any code runs, as
     * in C. */
    uint64_t cxx_zero_[2];
    constexpr hps_lock_state() noexcept : cxx_zero_{} {}
#endif
    hps_ttas_t ttas;
    hps_ticket_t ticket;
    hps_mcs_t mcs;
    hps_hemlock_t hemlock;
    hps_adaptive_t adaptive;
} hps_lock_state_t;

typedef struct hps_lock {
    hps_lock_state_t u;
    uint32_t algo;
} hps_lock_t;
#ifdef __cplusplus
static_assert(sizeof(hps_lock_state_t) == 16, "a lock state grew: cxx_zero_ must cover it");
#else
_Static_assert(sizeof(hps_lock_state_t) == 16, "hps_lock_state_t is 16 bytes (docs/api/lock.md)");
#endif

/* Name <-> algorithm ("ttas", "ticket", "mcs", "hemlock", "adaptive"). */
const char *hps_lock_algo_name(hps_lock_algo_t algo);
/* Returns 0 and sets *algo, or EINVAL for an unknown name. */
int hps_lock_algo_parse(const char *name, hps_lock_algo_t *algo);
/* A comma-separated list of all names, for messages. */
const char *hps_lock_algo_names(void);

/* Generic entry points on a bare state union (used by the interposer). */
HPS_INLINE void hps_lockstate_init(hps_lock_state_t *s, hps_lock_algo_t a)
{
    switch (a) {
    case HPS_LOCK_TTAS:     hps_ttas_init(&s->ttas); break;
    case HPS_LOCK_TICKET:   hps_ticket_init(&s->ticket); break;
    case HPS_LOCK_MCS:      hps_mcs_init(&s->mcs); break;
    case HPS_LOCK_HEMLOCK:  hps_hemlock_init(&s->hemlock); break;
    default:                hps_adaptive_init(&s->adaptive); break;
    }
}

HPS_INLINE void hps_lockstate_lock(hps_lock_state_t *s, hps_lock_algo_t a)
{
    if (hps_likely(a == HPS_LOCK_ADAPTIVE)) {   /* the default: straight-line code */
        hps_adaptive_lock(&s->adaptive);
        return;
    }
    switch (a) {
    case HPS_LOCK_TTAS:     hps_ttas_lock(&s->ttas); break;
    case HPS_LOCK_TICKET:   hps_ticket_lock(&s->ticket); break;
    case HPS_LOCK_MCS:      hps_mcs_lock(&s->mcs); break;
    case HPS_LOCK_HEMLOCK:  hps_hemlock_lock(&s->hemlock); break;
    default:                hps_adaptive_lock(&s->adaptive); break;
    }
}

HPS_INLINE bool hps_lockstate_trylock(hps_lock_state_t *s, hps_lock_algo_t a)
{
    switch (a) {
    case HPS_LOCK_TTAS:     return hps_ttas_trylock(&s->ttas);
    case HPS_LOCK_TICKET:   return hps_ticket_trylock(&s->ticket);
    case HPS_LOCK_MCS:      return hps_mcs_trylock(&s->mcs);
    case HPS_LOCK_HEMLOCK:  return hps_hemlock_trylock(&s->hemlock);
    default:                return hps_adaptive_trylock(&s->adaptive);
    }
}

HPS_INLINE int hps_lockstate_timedlock(hps_lock_state_t *s, hps_lock_algo_t a,
                                       clockid_t clock, const struct timespec *abstime)
{
    switch (a) {
    case HPS_LOCK_TTAS:     return hps_ttas_timedlock(&s->ttas, clock, abstime);
    case HPS_LOCK_TICKET:   return hps_ticket_timedlock(&s->ticket, clock, abstime);
    case HPS_LOCK_MCS:      return hps_mcs_timedlock(&s->mcs, clock, abstime);
    case HPS_LOCK_HEMLOCK:  return hps_hemlock_timedlock(&s->hemlock, clock, abstime);
    default:                return hps_adaptive_timedlock(&s->adaptive, clock, abstime);
    }
}

HPS_INLINE void hps_lockstate_unlock(hps_lock_state_t *s, hps_lock_algo_t a)
{
    if (hps_likely(a == HPS_LOCK_ADAPTIVE)) {   /* the default: straight-line code */
        hps_adaptive_unlock(&s->adaptive);
        return;
    }
    switch (a) {
    case HPS_LOCK_TTAS:     hps_ttas_unlock(&s->ttas); break;
    case HPS_LOCK_TICKET:   hps_ticket_unlock(&s->ticket); break;
    case HPS_LOCK_MCS:      hps_mcs_unlock(&s->mcs); break;
    case HPS_LOCK_HEMLOCK:  hps_hemlock_unlock(&s->hemlock); break;
    default:                hps_adaptive_unlock(&s->adaptive); break;
    }
}

HPS_INLINE bool hps_lockstate_is_locked(hps_lock_state_t *s, hps_lock_algo_t a)
{
    switch (a) {
    case HPS_LOCK_TTAS:     return hps_ttas_is_locked(&s->ttas);
    case HPS_LOCK_TICKET:   return hps_ticket_is_locked(&s->ticket);
    case HPS_LOCK_MCS:      return hps_mcs_is_locked(&s->mcs);
    case HPS_LOCK_HEMLOCK:  return hps_hemlock_is_locked(&s->hemlock);
    default:                return hps_adaptive_is_locked(&s->adaptive);
    }
}

/* The public API on hps_lock_t. */
HPS_INLINE int hps_lock_init(hps_lock_t *l, hps_lock_algo_t algo)
{
    if (algo < HPS_LOCK_TTAS || algo > HPS_LOCK_ALGO_MAX)
        return EINVAL;
    l->algo = (uint32_t)algo;
    hps_lockstate_init(&l->u, algo);
    return 0;
}
HPS_INLINE void hps_lock_lock(hps_lock_t *l) { hps_lockstate_lock(&l->u, (hps_lock_algo_t)l->algo); }
HPS_INLINE int hps_lock_trylock(hps_lock_t *l)
{
    return hps_lockstate_trylock(&l->u, (hps_lock_algo_t)l->algo) ? 0 : EBUSY;
}
/* abstime is absolute on `clock` (CLOCK_REALTIME or CLOCK_MONOTONIC). */
HPS_INLINE int hps_lock_timedlock(hps_lock_t *l, clockid_t clock, const struct timespec *abstime)
{
    return hps_lockstate_timedlock(&l->u, (hps_lock_algo_t)l->algo, clock, abstime);
}
HPS_INLINE void hps_lock_unlock(hps_lock_t *l) { hps_lockstate_unlock(&l->u, (hps_lock_algo_t)l->algo); }
HPS_INLINE bool hps_lock_is_locked(hps_lock_t *l) { return hps_lockstate_is_locked(&l->u, (hps_lock_algo_t)l->algo); }

#ifdef __cplusplus
}
#endif
#endif /* HPSYNC_LOCK_H */
