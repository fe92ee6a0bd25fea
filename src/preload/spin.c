// SPDX-License-Identifier: MIT
/*
 * The spin half of spin-then-futex, for the interposer's semaphores and
 * barriers (the mutexes get theirs from their lock algorithm).
 *
 * A waiter polls its word for a bounded number of rounds (one PAUSE each)
 * before it registers as a sleeper and calls futex_wait; a hand-over that
 * arrives while it polls costs neither side a system call.  Spinning up to
 * what sleeping costs and then sleeping is never worse than twice the best
 * choice made in hindsight, so the bound starts at that ceiling; it is
 * learned per object only to stop wasting CPU where spins keep failing: a
 * spin that ran out halves the bound, down to 8 rounds, and a spin that
 * succeeded at round i raises it to at least 2i + 8 (successes never lower
 * it: a ping-pong whose hand-offs usually take 3 rounds and sometimes 100
 * must keep covering the 100, or both sides fall asleep in turn).  So an
 * object whose waits are long (the other side holds on for milliseconds, or
 * is not running because threads outnumber cores or another process is busy
 * on them) soon spins only the minimum, while a ping-pong between two
 * running threads keeps spinning.
 *
 * An object at the minimum now and then probes: it spins to the ceiling,
 * and if the wait ends within it, the bound goes back up.  Without probes a
 * ping-pong that once fell asleep would stay asleep: each side then waits
 * for the other's wake-up (microseconds), so every short spin fails.
 * Probes back off like elision's skips: the first comes after 16 waits, and
 * each failed one doubles the interval, up to 1024 waits; a successful one
 * resets it.  A machine where spinning never pays thus loses at most one
 * ceiling per 1024 waits.
 *
 * Limits: the ceiling is 8 x HPSYNC_SPIN rounds (256, about 7 us at the
 * 26 ns a PAUSE takes on the Zen 5 this was tuned on: roughly what a futex
 * sleep and wake-up cost there, 4-7 us per round trip of a two-thread
 * ping-pong on glibc's semaphores).  HPSYNC_SPIN=0 turns spinning off, and
 * so does a process allowed on one CPU only: whoever would end the wait
 * cannot run while we poll.
 */
#define _GNU_SOURCE
#include "preload.h"
#include "../common/cpus.h"

static int g_ncpus;     /* 0 until first asked */

int hps_pl_ncpus(void)
{
    /* Relaxed: racing first callers compute the same answer. */
    int n = __atomic_load_n(&g_ncpus, __ATOMIC_RELAXED);
    if (hps_unlikely(n == 0)) {
        n = hps_cpus_usable();
        __atomic_store_n(&g_ncpus, n, __ATOMIC_RELAXED);
    }
    return n;
}

#define MIN_ROUNDS   8      /* the bound's floor; at it, the object probes */
#define PROBE_FIRST  16
#define PROBE_MAX    1024

int hps_pl_spin(hps_au64 *word, uint64_t mask, uint64_t expect, hps_pl_spin_t *sp)
{
    uint32_t cap = 8 * hps_wait_spin_limit;
    if (cap == 0 || hps_pl_ncpus() < 2)
        return 0;
    if (cap > UINT16_MAX)
        cap = UINT16_MAX;
    if (cap < MIN_ROUNDS)
        cap = MIN_ROUNDS;
    /* Relaxed throughout for the learned state: it is a hint, and racing
     * updates only blur it.  Zero (a fresh object, also one glibc's
     * sem_open made) starts at the ceiling; other values are clamped. */
    uint32_t bound = hps_load_relaxed(&sp->bound);
    if (bound == 0 || bound > cap)
        bound = cap;
    if (bound < MIN_ROUNDS)
        bound = MIN_ROUNDS;
    uint32_t max = bound, period = 0;
    if (bound == MIN_ROUNDS) {
        uint16_t left = hps_load_relaxed(&sp->left);
        period = hps_load_relaxed(&sp->period);
        if (period < PROBE_FIRST || period > PROBE_MAX)
            period = PROBE_FIRST;
        if (left != 0 && left <= PROBE_MAX) {
            hps_store_relaxed(&sp->left, (uint16_t)(left - 1));
            period = 0;                 /* not a probe */
        } else {
            max = cap;
        }
    }
    for (uint32_t i = 0; i < max; i++) {
        /* Relaxed: the caller re-reads the word with the ordering it needs. */
        if ((hps_load_relaxed(word) & mask) != expect) {
            uint32_t want = 2 * i + MIN_ROUNDS < cap ? 2 * i + MIN_ROUNDS : cap;
            if (want > bound)
                hps_store_relaxed(&sp->bound, (uint16_t)want);
            if (period) {
                hps_store_relaxed(&sp->period, PROBE_FIRST);
                hps_store_relaxed(&sp->left, PROBE_FIRST);
            }
            return 1;
        }
        hps_cpu_relax();
    }
    hps_store_relaxed(&sp->bound, (uint16_t)(bound / 2 > MIN_ROUNDS ? bound / 2 : MIN_ROUNDS));
    if (period) {
        period = 2 * period < PROBE_MAX ? 2 * period : PROBE_MAX;
        hps_store_relaxed(&sp->period, (uint16_t)period);
        hps_store_relaxed(&sp->left, (uint16_t)period);
    }
    return 0;
}
