// SPDX-License-Identifier: MIT
/*
 * Ordering (fence, quiet) and point-to-point synchronisation (wait_until,
 * test and their _all/_any/_some/_vector forms, signal_wait_until).
 *
 * Waiting is where a PE can steal a core another PE needs (4 PEs on 2
 * cores).  A waiter polls HPSYNC_SHMEM_SPIN times (none when this node has
 * more PEs than CPUs), then polls with sched_yield between polls, which
 * hands the core to any runnable PE, until HPSYNC_SHMEM_POLL_MS (1 s) after
 * the wait began or it last saw traffic; only then does it nap between
 * polls.  Time, not a count of yields: a yield takes ~1 us alone and a
 * whole time slice when another PE runs.  Napping early made the tails:
 * 2 PEs on-node, barrier median 100 ns but p99 16 us and a mean of 5-8 us
 * with a nap after 100 yields.
 *
 * With libfabric in use every poll also drives its progress, and other
 * PEs' gets, fetching atomics and the reads behind their quiets are
 * answered only when this PE polls (a fetch-add into a PE napping 50 us
 * took 80 us on shm, 0.45 us into one polling).  Traffic (its counters; on
 * shm and sockets also the provider's count of operations into it)
 * restarts the clock, a waiter that saw some keeps polling without yielding
 * for 50 us more unless the node is crowded, and naps stay at 50 us.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include "clock.h"
#include "internal.h"
#include "settings.h"

/* After traffic, poll without yielding this long: a sched_yield per poll
 * adds its system call (~1 us here) to every answer a busy peer waits for.
 * Not when this node has more PEs than CPUs: there the spinning held the
 * core a peer needed (4 PEs on 2 CPUs, add + barrier: 156 us a round with
 * it, 110 without). */
#define HPS_OFI_SPIN_AFTER_NS 50000

void hps_shmem_wait_step(hps_waiter_t *w)
{
    uint32_t n = w->n++;
    uint64_t t = hps_sh.ofi ? hps_ofi_poll() : 0;
    if (n < hps_sh.spin) {
        hps_cpu_relax();
        return;
    }
    uint64_t now = hps_mono_ns();
    if (t != w->traffic || !w->since) {
        w->traffic = t;
        w->since = now;
        w->naps = 0;
    }
    uint64_t quiet_for = now - w->since;
    if (hps_sh.ofi && quiet_for < HPS_OFI_SPIN_AFTER_NS && !hps_sh.crowded) {
        hps_cpu_relax();              /* more is likely on its way */
        return;
    }
    if (quiet_for < (uint64_t)hps_shmem_set.poll_ms * 1000000ull) {
        sched_yield();
        return;
    }
    if (hps_sh.ofi) {
        static __thread int slack_set;
        if (!slack_set) {
            /* The default 50 us timer slack would double every nap. */
            prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
            slack_set = 1;
        }
        hps_sleep_ns(50000);
        return;
    }
    uint32_t k = w->naps++;
    hps_sleep_ns(50000ull << (k < 5 ? k : 5));   /* 50 us doubling to 1.6 ms */
}

void hps_wait_ge64(const uint64_t *v, uint64_t goal)
{
    hps_waiter_t w = { 0 };
    /* Acquire: what the signalling PE wrote before its signal is visible
     * once the signal is. */
    while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < goal)
        hps_shmem_wait_step(&w);
}

HPS_API void shmem_fence(void)
{
    hps_fence(__func__);
}

HPS_API void shmem_quiet(void)
{
    hps_quiet(__func__);
}

HPS_API void shmem_ctx_fence(shmem_ctx_t ctx)
{
    (void)ctx;
    hps_fence(__func__);
}

HPS_API void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    (void)ctx;
    hps_quiet(__func__);
}

/* ---- comparisons ---------------------------------------------------------------- */

static void bad_cmp(const char *fn, int cmp)
{
    hps_fatal(fn, "comparison %d is not one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE", cmp);
}

#define CMP_CASES(a, b) \
    case SHMEM_CMP_EQ: return (a) == (b); \
    case SHMEM_CMP_NE: return (a) != (b); \
    case SHMEM_CMP_GT: return (a) > (b); \
    case SHMEM_CMP_GE: return (a) >= (b); \
    case SHMEM_CMP_LT: return (a) < (b); \
    case SHMEM_CMP_LE: return (a) <= (b);

/* Acquire loads: data delivered before the value being waited for is
 * readable once the wait is over. */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/* Per type: one comparison of an ivar, then every routine as a loop over
 * it.  `vec` selects cmp_values[i] instead of the one cmp_value. */
#define DEF_SYNC(T, N, A) \
    static int cmp_##N(const char *fn, const T *ivar, int cmp, T v) \
    { \
        T x = LOAD(ivar); \
        switch (cmp) { CMP_CASES(x, v) } \
        bad_cmp(fn, cmp); \
        return 0; \
    } \
    /* Satisfied, not excluded, entries; SIZE_MAX when all are excluded. */ \
    static size_t scan_##N(const char *fn, T *ivars, size_t n, size_t *idx, const int *st, \
                           int cmp, const T *vals, T v, int want_all) \
    { \
        size_t hit = 0, live = 0; \
        for (size_t i = 0; i < n; i++) { \
            if (st && st[i]) \
                continue; \
            live++; \
            if (cmp_##N(fn, &ivars[i], cmp, vals ? vals[i] : v)) { \
                if (idx) \
                    idx[hit] = i; \
                hit++; \
                if (!want_all && !idx) \
                    return i; \
            } \
        } \
        if (!live) \
            return SIZE_MAX; \
        if (want_all) \
            return hit == live; \
        return idx ? hit : SIZE_MAX - 1; \
    } \
    HPS_API int shmem_##N##_test(T *ivar, int cmp, T v) \
    { \
        return cmp_##N(__func__, ivar, cmp, v); \
    } \
    static void wait_##N(const char *fn, T *ivar, int cmp, T v) \
    { \
        hps_waiter_t w = { 0 }; \
        while (!cmp_##N(fn, ivar, cmp, v)) \
            hps_shmem_wait_step(&w); \
    } \
    HPS_API void shmem_##N##_wait_until(T *ivar, int cmp, T v) \
    { \
        wait_##N(__func__, ivar, cmp, v); \
    } \
    HPS_API void shmem_##N##_wait(T *ivar, T v) \
    { \
        wait_##N(__func__, ivar, SHMEM_CMP_NE, v); \
    } \
    DEF_SYNC_FORMS(T, N, , T v, NULL, v) \
    DEF_SYNC_FORMS(T, N, _vector, T *vals, vals, 0)

/* all/any/some for one way of passing the comparison values. */
#define DEF_SYNC_FORMS(T, N, SUF, VPARAM, VALS, V) \
    HPS_API int shmem_##N##_test_all##SUF(T *ivars, size_t n, const int *st, int cmp, VPARAM) \
    { \
        size_t r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 1); \
        return r == SIZE_MAX || r == 1; \
    } \
    HPS_API size_t shmem_##N##_test_any##SUF(T *ivars, size_t n, const int *st, int cmp, \
                                            VPARAM) \
    { \
        size_t r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 0); \
        return r >= SIZE_MAX - 1 ? SIZE_MAX : r; \
    } \
    HPS_API size_t shmem_##N##_test_some##SUF(T *ivars, size_t n, size_t *idx, \
                                             const int *st, int cmp, VPARAM) \
    { \
        size_t r = scan_##N(__func__, ivars, n, idx, st, cmp, VALS, V, 0); \
        return r == SIZE_MAX ? 0 : r; \
    } \
    HPS_API void shmem_##N##_wait_until_all##SUF(T *ivars, size_t n, const int *st, int cmp, \
                                                 VPARAM) \
    { \
        hps_waiter_t w = { 0 }; \
        size_t r; \
        while ((r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 1)) == 0) \
            hps_shmem_wait_step(&w); \
    } \
    HPS_API size_t shmem_##N##_wait_until_any##SUF(T *ivars, size_t n, const int *st, \
                                                   int cmp, VPARAM) \
    { \
        hps_waiter_t w = { 0 }; \
        size_t r; \
        while ((r = scan_##N(__func__, ivars, n, NULL, st, cmp, VALS, V, 0)) == SIZE_MAX - 1) \
            hps_shmem_wait_step(&w); \
        return r; \
    } \
    HPS_API size_t shmem_##N##_wait_until_some##SUF(T *ivars, size_t n, size_t *idx, \
                                                    const int *st, int cmp, VPARAM) \
    { \
        hps_waiter_t w = { 0 }; \
        size_t r; \
        while ((r = scan_##N(__func__, ivars, n, idx, st, cmp, VALS, V, 0)) == 0) \
            hps_shmem_wait_step(&w); \
        return r == SIZE_MAX ? 0 : r; \
    }

HPS_SHMEM_SYNC_TYPES(DEF_SYNC, _)

/* ---- signals ------------------------------------------------------------------------ */

HPS_API uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    return LOAD(sig_addr);
}

HPS_API uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    shmem_uint64_wait_until(sig_addr, cmp, cmp_value);
    return LOAD(sig_addr);
}
