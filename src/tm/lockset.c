// SPDX-License-Identifier: MIT
/*
 * Lockset elision (hpsync/lockset.h): n locks taken as one.
 *
 * A set is first sorted by address with duplicates removed; both paths
 * work on that order.
 *
 * Hardware path (the elision layer's backend: RTM, or inject in tests).
 * The transaction begins subscribed to the set's first lock (the backend's
 * begin reads its word) and then reads every other lock word, aborting
 * with the busy code if one is held.  So a thread that really takes any of
 * them (plain locking, or a lockset that fell back) aborts it, exactly as
 * elision of one lock.  The policy is elision's, not a copy: the abort
 * status goes to hps_elide_next() for each lock of the set in turn (a busy
 * set is waited for lock by lock, outside the transaction, before the
 * retry), and a per-set failure history (hashed by the first lock's
 * address) drives adaptive skipping.  An emulated ("started" by
 * injection) section cannot speculate, so it holds every lock for real:
 * the first through the backend's begin, the others by trylock (a held
 * one makes it a busy abort); atomicity never depends on the injected
 * outcomes.
 *
 * Fallback: the locks in address order.  Any two sets, and a set and code
 * that takes locks in address order, then acquire in one global order and
 * cannot deadlock.
 *
 * A thread's locksets nest; a small stack in TLS remembers how each ran,
 * so that unlock knows whether to end a transaction or release locks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include "hpsync/lockset.h"
#include "../elide/backend.h"
#include "../preload/preload.h"
#include "../common/env.h"

/* One lock of a set: the object (sort key; what the fallback locks), and
 * the lock word the hardware path reads (NULL: no hardware path). */
typedef struct ls_ent {
    void *obj;
    hps_lock_state_t *s;
    hps_lock_algo_t a;
} ls_ent_t;

/* The two kinds of set. */
typedef struct ls_kind {
    void (*lock)(void *obj);
    int (*trylock)(void *obj);       /* 0 or EBUSY */
    void (*unlock)(void *obj);
    /* Fill e from the caller's pointer; 0 if it is NULL. */
    int (*entry)(void *p, ls_ent_t *e);
} ls_kind_t;

enum { LS_LOCKED, LS_SPEC, LS_EMU };

typedef struct ls_held {
    void *first;                     /* the sorted set's first object */
    uint32_t n;                      /* distinct locks */
    uint32_t mode;                   /* LS_* */
} ls_held_t;

static __thread ls_held_t t_held[HPS_LOCKSET_DEPTH] __attribute__((tls_model("initial-exec")));
static __thread uint32_t t_depth __attribute__((tls_model("initial-exec")));
static __thread hps_lockset_stats_t t_st __attribute__((tls_model("initial-exec")));

/* Failure histories (elision's per-lock skip state), by first lock. */
#define LS_SKIP_BITS 6
static hps_elide_state_t g_skip[1u << LS_SKIP_BITS];

static hps_elide_state_t *skip_of(const void *first)
{
    uintptr_t h = (uintptr_t)first >> 4;
    h ^= h >> LS_SKIP_BITS;
    return &g_skip[h & ((1u << LS_SKIP_BITS) - 1)];
}

/* ---- building a set ---------------------------------------------------- */

/* The calls below are inlined into each exported function, so that the
 * kind's functions are direct calls (and the lock fast paths inline). */
#define LS_INLINE static inline __attribute__((always_inline))

/* The set sorted by address, duplicates removed, into out: the number of
 * distinct locks, or 0 for a bad argument. */
LS_INLINE size_t sort_set(void *const *in, size_t n, void **out)
{
    if (!in || n == 0 || n > HPS_LOCKSET_MAX)
        return 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        void *x = in[i];
        if (!x)
            return 0;
        /* Insertion sort: sets are small (2 or 3 in the workloads). */
        size_t j = m;
        while (j > 0 && (uintptr_t)out[j - 1] > (uintptr_t)x)
            j--;
        if (j > 0 && out[j - 1] == x)
            continue;
        for (size_t t = m; t > j; t--)
            out[t] = out[t - 1];
        out[j] = x;
        m++;
    }
    return m;
}

/* The lock words of a sorted set, for the hardware path; 0 if one has none. */
LS_INLINE int entries(const ls_kind_t *k, void *const *o, size_t m, ls_ent_t *e)
{
    for (size_t i = 0; i < m; i++)
        if (!k->entry(o[i], &e[i]) || !e[i].s)
            return 0;
    return 1;
}

/* 1 when the elision layer has a backend that runs transactions.  Set up
 * at load (src/elide/backend.c); the flag spares a pthread_once per set. */
static hps_au32 g_hw_checked;
static int hw_available(void)
{
    if (hps_unlikely(!hps_load_acquire(&g_hw_checked))) {
        hps_elide_setup();
        /* Release: whoever sees the flag sees the backend chosen. */
        hps_store_release(&g_hw_checked, 1);
    }
    return hps_elide_ops != &hps_elide_ops_off;
}

/* ---- the hardware path ------------------------------------------------- */

static void release_real(ls_ent_t *e, size_t from, size_t to)
{
    while (to-- > from)
        hps_lockstate_unlock(e[to].s, e[to].a);
}

/* One transaction over the set: HPS_TX_STARTED with *mode set, or the
 * abort status. */
static unsigned hw_attempt(ls_ent_t *e, size_t n, uint32_t *mode)
{
    const hps_elide_ops_t *eo = hps_elide_ops;
    unsigned st = eo->begin(e[0].s, e[0].a);
    if (st != HPS_TX_STARTED)
        return st;
    if (eo->speculative) {
        /* Inside the transaction: each load subscribes to a lock word. */
        for (size_t i = 1; i < n; i++)
            if (hps_lockstate_is_locked(e[i].s, e[i].a))
                eo->abort(HPS_ABORT_BUSY);       /* resumes in begin */
        *mode = LS_SPEC;
        return HPS_TX_STARTED;
    }
    /* Emulated: the first lock is really held; hold the others too. */
    for (size_t i = 1; i < n; i++) {
        if (!hps_lockstate_trylock(e[i].s, e[i].a)) {
            release_real(e, 1, i);
            if (eo->end(e[0].s, e[0].a) & HPS_ELIDE_END_RELEASE)
                hps_lockstate_unlock(e[0].s, e[0].a);
            return HPS_TX_EXPLICIT | (HPS_ABORT_BUSY << 24);
        }
    }
    *mode = LS_EMU;
    return HPS_TX_STARTED;
}

/* 1 when the set runs as one transaction (*mode set), 0 when the caller
 * takes it lock by lock.  A trylock makes one attempt and never waits. */
static int hw_enter(ls_ent_t *e, size_t n, int try, uint32_t *mode)
{
    hps_elide_state_t *sk = skip_of(e[0].obj);
    if (try) {
        /* As elision's trylock: inside a transaction a lock this very
         * transaction elides would look free; leave it first. */
        hps_elide_ops->abort(HPS_ABORT_TRYLOCK);
        unsigned st = hw_attempt(e, n, mode);
        if (st == HPS_TX_STARTED)
            return 1;
        t_st.aborts++;
        return 0;
    }
    /* Relaxed: the history is a hint, as in elision. */
    uint32_t v = hps_load_relaxed(&sk->v);
    if (hps_elide_take_skip(&v)) {
        hps_store_relaxed(&sk->v, v);
        return 0;
    }
    for (unsigned attempt = 0;; attempt++) {
        unsigned st = hw_attempt(e, n, mode);
        if (st == HPS_TX_STARTED)
            return 1;
        t_st.aborts++;
        /* The policy's answer; a busy set is waited for lock by lock. */
        hps_elide_action_t act = HPS_ELIDE_RETRY;
        for (size_t i = 0; i < n && act == HPS_ELIDE_RETRY; i++)
            act = hps_elide_next(e[i].s, e[i].a, st, attempt, NULL);
        if (act == HPS_ELIDE_RETRY)
            continue;
        hps_store_relaxed(&sk->v, hps_elide_after_fallback(&hps_elide_cfg, hps_load_relaxed(&sk->v)));
        return 0;
    }
}

static void hw_exit(ls_ent_t *e, size_t n, uint32_t mode)
{
    if (mode == LS_EMU)
        release_real(e, 1, n);
    unsigned r = hps_elide_ops->end(e[0].s, e[0].a);
    if (r & HPS_ELIDE_END_RELEASE)
        hps_lockstate_unlock(e[0].s, e[0].a);
    hps_elide_state_t *sk = skip_of(e[0].obj);
    uint32_t v = hps_load_relaxed(&sk->v);
    if (v)                           /* written only when there is a history */
        hps_store_relaxed(&sk->v, hps_elide_after_commit(v));
    t_st.elided++;
}

/* ---- the common calls ---------------------------------------------------- */

LS_INLINE int set_lock(const ls_kind_t *k, void *const *in, size_t n, int try)
{
    void *o[HPS_LOCKSET_MAX];
    size_t m = sort_set(in, n, o);
    if (m == 0)
        return EINVAL;
    if (t_depth == HPS_LOCKSET_DEPTH)
        return EAGAIN;
    uint32_t mode = LS_LOCKED;
    ls_ent_t e[HPS_LOCKSET_MAX];
    /* The library's own elision backend (the exported hps_elide_active may
     * be the interposer's, which follows HPSYNC_ELIDE instead). */
    if (!hw_available() || !entries(k, o, m, e) || !hw_enter(e, m, try, &mode)) {
        mode = LS_LOCKED;
        for (size_t i = 0; i < m; i++) {
            if (!try) {
                k->lock(o[i]);
            } else if (k->trylock(o[i]) != 0) {
                while (i-- > 0)
                    k->unlock(o[i]);
                return EBUSY;
            }
        }
        t_st.locked++;
    }
    /* Inside a speculative transaction the TLS writes are transactional
     * too: an abort undoes them with the rest. */
    t_held[t_depth++] = (ls_held_t){ o[0], (uint32_t)m, mode };
    return 0;
}

LS_INLINE int set_unlock(const ls_kind_t *k, void *const *in, size_t n)
{
    void *o[HPS_LOCKSET_MAX];
    size_t m = sort_set(in, n, o);
    if (m == 0)
        return EINVAL;
    if (t_depth == 0)
        return EPERM;
    ls_held_t h = t_held[t_depth - 1];
    if (h.first != o[0] || h.n != m)
        return EPERM;
    t_depth--;
    if (h.mode == LS_LOCKED) {
        for (size_t i = m; i-- > 0;)
            k->unlock(o[i]);
    } else {
        ls_ent_t e[HPS_LOCKSET_MAX];
        (void)entries(k, o, m, e);       /* as at lock time: all have words */
        hw_exit(e, m, h.mode);
    }
    return 0;
}

/* ---- hps_lock_t sets ------------------------------------------------------- */

static void hl_lock(void *o) { hps_lock_lock(o); }
static int hl_trylock(void *o) { return hps_lock_trylock(o); }
static void hl_unlock(void *o) { hps_lock_unlock(o); }
static int hl_entry(void *p, ls_ent_t *e)
{
    hps_lock_t *l = p;
    if (!l)
        return 0;
    *e = (ls_ent_t){ l, &l->u, hps_lock_algo_or_default((hps_lock_algo_t)l->algo) };
    return 1;
}
static const ls_kind_t hl_kind = { hl_lock, hl_trylock, hl_unlock, hl_entry };

HPS_EXPORT int hps_lockset_lock(hps_lock_t *const *locks, size_t n)
{
    return set_lock(&hl_kind, (void *const *)locks, n, 0);
}

HPS_EXPORT int hps_lockset_trylock(hps_lock_t *const *locks, size_t n)
{
    return set_lock(&hl_kind, (void *const *)locks, n, 1);
}

HPS_EXPORT int hps_lockset_unlock(hps_lock_t *const *locks, size_t n)
{
    return set_unlock(&hl_kind, (void *const *)locks, n);
}

/* ---- pthread_mutex_t sets -------------------------------------------------- */

/* The interposer's algorithm, through the one function it exports for
 * this (src/preload/mutex.c); NULL when it is not loaded. */
static int (*g_pl_algo)(void);
static pthread_once_t g_pl_once = PTHREAD_ONCE_INIT;

static void pl_find(void)
{
    g_pl_algo = (int (*)(void))dlsym(RTLD_DEFAULT, "hps_preload_mutex_algo");
}

static void pm_lock(void *o) { (void)pthread_mutex_lock(o); }
static int pm_trylock(void *o) { return pthread_mutex_trylock(o) == 0 ? 0 : EBUSY; }
static void pm_unlock(void *o) { (void)pthread_mutex_unlock(o); }
static int pm_entry(void *p, ls_ent_t *e)
{
    if (!p)
        return 0;
    *e = (ls_ent_t){ p, NULL, HPS_LOCK_DEFAULT };
    pthread_once(&g_pl_once, pl_find);
    if (g_pl_algo) {
        /* Under the interposer the mutex holds an hpsync lock; the hardware
         * path may read it for the kinds it elides itself (normal,
         * adaptive): the others keep owner bookkeeping a transaction would
         * skip, and glibc-owned kinds are not hpsync locks at all. */
        hps_pmutex_t *pm = HPS_PM(p);
        int kind = pm->kind, type = kind & HPS_KIND_TYPE_MASK;
        if (!(kind & HPS_KIND_GLIBC_ONLY) && (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)) {
            e->s = &pm->s;
            e->a = hps_lock_algo_or_default((hps_lock_algo_t)g_pl_algo());
        }
    }
    return 1;
}
static const ls_kind_t pm_kind = { pm_lock, pm_trylock, pm_unlock, pm_entry };

HPS_EXPORT int hps_lockset_mutex_lock(pthread_mutex_t *const *m, size_t n)
{
    return set_lock(&pm_kind, (void *const *)m, n, 0);
}

HPS_EXPORT int hps_lockset_mutex_trylock(pthread_mutex_t *const *m, size_t n)
{
    return set_lock(&pm_kind, (void *const *)m, n, 1);
}

HPS_EXPORT int hps_lockset_mutex_unlock(pthread_mutex_t *const *m, size_t n)
{
    return set_unlock(&pm_kind, (void *const *)m, n);
}

HPS_EXPORT void hps_lockset_stats_get(hps_lockset_stats_t *out)
{
    *out = t_st;
}
