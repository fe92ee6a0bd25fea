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
/* Every algorithm's header: the list includes each beside its row. */
#define X(name, NAME, alias, doc)
#include "hpsync/lock/algorithms.def"
#undef X

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The algorithms, generated from hpsync/lock/algorithms.def (which also
 * includes each one's header): HPS_LOCK_TTAS = 1, ... in the list's order.
 * 0 is no algorithm: a zeroed hps_lock_t runs the default.
 */
typedef enum hps_lock_algo {
#define X(name, NAME, alias, doc) HPS_LOCK_##NAME,
    HPS_LOCK_ALGO_NONE = 0,
#include "hpsync/lock/algorithms.def"
#undef X
    HPS_LOCK_ALGO_END,
    HPS_LOCK_ALGO_MIN = 1,
    HPS_LOCK_ALGO_MAX = HPS_LOCK_ALGO_END - 1,
    HPS_LOCK_ALGO_COUNT = HPS_LOCK_ALGO_MAX,
    /* What HPSYNC_LOCK selects when unset (src/common/settings.def says
     * the same name; a test checks they agree). */
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
#define X(name, NAME, alias, doc) hps_##name##_t name;
#include "hpsync/lock/algorithms.def"
#undef X
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

/* Name <-> algorithm (the names and aliases of hpsync/lock/algorithms.def). */
const char *hps_lock_algo_name(hps_lock_algo_t algo);
/* Returns 0 and sets *algo, or EINVAL for an unknown name. */
int hps_lock_algo_parse(const char *name, hps_lock_algo_t *algo);
/* A comma-separated list of all names, for messages. */
const char *hps_lock_algo_names(void);
/* The alias of an algorithm ("" for none) and its one-line description. */
const char *hps_lock_algo_alias(hps_lock_algo_t algo);
const char *hps_lock_algo_doc(hps_lock_algo_t algo);

/* The algorithm a state runs: an out-of-range value (0 in a zeroed
 * hps_lock_t) means the default, so every switch below has all its cases. */
HPS_INLINE hps_lock_algo_t hps_lock_algo_or_default(hps_lock_algo_t a)
{
    return (unsigned)a - 1u < (unsigned)HPS_LOCK_ALGO_COUNT ? a : HPS_LOCK_DEFAULT;
}

/*
 * Generic entry points on a bare state union (used by the interposer).  One
 * switch over the list, a case per algorithm calling its own inline function
 * `verb` on its member of the union.  Every caller passes a constant verb, so
 * the inner switch folds away and each entry point costs one switch on the
 * algorithm, and none for the default: it is tested first, and with a
 * constant algorithm the outer switch folds too, leaving its inline fast path
 * as straight-line code.
 */
enum hps_lock_verb_ {
    HPS_LOCK_DO_INIT_, HPS_LOCK_DO_LOCK_, HPS_LOCK_DO_TRYLOCK_, HPS_LOCK_DO_TIMEDLOCK_,
    HPS_LOCK_DO_UNLOCK_, HPS_LOCK_DO_IS_LOCKED_,
};

HPS_INLINE int hps_lockstate_switch_(hps_lock_state_t *s, hps_lock_algo_t a, enum hps_lock_verb_ v,
                                     clockid_t clock, const struct timespec *abstime)
{
    switch (hps_lock_algo_or_default(a)) {
#define X(name, NAME, alias, doc)                                                            \
    case HPS_LOCK_##NAME:                                                                    \
        switch (v) {                                                                         \
        case HPS_LOCK_DO_INIT_: hps_##name##_init(&s->name); return 0;                       \
        case HPS_LOCK_DO_LOCK_: hps_##name##_lock(&s->name); return 0;                       \
        case HPS_LOCK_DO_TRYLOCK_: return hps_##name##_trylock(&s->name);                    \
        case HPS_LOCK_DO_TIMEDLOCK_: return hps_##name##_timedlock(&s->name, clock, abstime); \
        case HPS_LOCK_DO_UNLOCK_: hps_##name##_unlock(&s->name); return 0;                   \
        case HPS_LOCK_DO_IS_LOCKED_: return hps_##name##_is_locked(&s->name);                \
        }                                                                                    \
        break;
#include "hpsync/lock/algorithms.def"
#undef X
    default:        /* not reached: hps_lock_algo_or_default() gave a listed one */
        break;
    }
    __builtin_unreachable();
}

HPS_INLINE int hps_lockstate_do_(hps_lock_state_t *s, hps_lock_algo_t a, enum hps_lock_verb_ v,
                                 clockid_t clock, const struct timespec *abstime)
{
    if (hps_likely(a == HPS_LOCK_DEFAULT))
        return hps_lockstate_switch_(s, HPS_LOCK_DEFAULT, v, clock, abstime);
    return hps_lockstate_switch_(s, a, v, clock, abstime);
}

HPS_INLINE void hps_lockstate_init(hps_lock_state_t *s, hps_lock_algo_t a)
{
    hps_lockstate_do_(s, a, HPS_LOCK_DO_INIT_, 0, NULL);
}
HPS_INLINE void hps_lockstate_lock(hps_lock_state_t *s, hps_lock_algo_t a)
{
    hps_lockstate_do_(s, a, HPS_LOCK_DO_LOCK_, 0, NULL);
}
HPS_INLINE bool hps_lockstate_trylock(hps_lock_state_t *s, hps_lock_algo_t a)
{
    return hps_lockstate_do_(s, a, HPS_LOCK_DO_TRYLOCK_, 0, NULL) != 0;
}
HPS_INLINE int hps_lockstate_timedlock(hps_lock_state_t *s, hps_lock_algo_t a,
                                       clockid_t clock, const struct timespec *abstime)
{
    return hps_lockstate_do_(s, a, HPS_LOCK_DO_TIMEDLOCK_, clock, abstime);
}
HPS_INLINE void hps_lockstate_unlock(hps_lock_state_t *s, hps_lock_algo_t a)
{
    hps_lockstate_do_(s, a, HPS_LOCK_DO_UNLOCK_, 0, NULL);
}
HPS_INLINE bool hps_lockstate_is_locked(hps_lock_state_t *s, hps_lock_algo_t a)
{
    return hps_lockstate_do_(s, a, HPS_LOCK_DO_IS_LOCKED_, 0, NULL) != 0;
}

/* The public API on hps_lock_t. */
HPS_INLINE int hps_lock_init(hps_lock_t *l, hps_lock_algo_t algo)
{
    if (algo < HPS_LOCK_ALGO_MIN || algo > HPS_LOCK_ALGO_MAX)
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
