// SPDX-License-Identifier: MIT
/*
 * The spin half of spin-then-futex, for the interposer's semaphores and
 * barriers (the mutexes get theirs from their lock algorithm).
 *
 * A waiter polls its word for a bounded number of rounds (one PAUSE each)
 * before it registers as a sleeper and calls futex_wait; a hand-over that
 * arrives while it polls costs neither side a system call.  Spinning up to
 * what sleeping costs and then sleeping is never worse than twice the best
 * choice made in hindsight, so the bound starts at that ceiling.  It is
 * learned per object only to stop wasting CPU where spinning does not pay:
 *  - a spin that ran out halves the bound, down to 8 rounds, where the
 *    object stops spinning (but for the probes below);
 *  - so does a spin during which the spinner lost its CPU (it took far
 *    longer than its rounds can take): the other side then was, or will
 *    be, queued behind someone else for a time slice, and a spinner that is
 *    preempted only gets its CPU back after one, while a sleeper that is
 *    woken is run at once;
 *  - a spin that succeeded at round i raises the bound to at least 2i + 8.
 *    Successes never lower it: a ping-pong whose hand-offs usually take 3
 *    rounds and sometimes 100 must keep covering the 100, or both sides end
 *    up falling asleep in turn.
 * So an object whose waits are long (the other side holds on for
 * milliseconds, or is not running because threads outnumber cores or
 * another process is busy on them) soon goes straight to sleep, as glibc
 * does, while a ping-pong between two running threads keeps spinning.
 *
 * An object at the floor now and then probes: it spins twice the
 * ceiling, and if the wait ends within it, the bound goes back up.  Without
 * probes a ping-pong that once fell asleep would stay asleep: each side
 * then waits for the other's wake-up, so every short spin fails.  A probe
 * must outlast one wake-up, which on an idle KVM guest (the vCPU halted)
 * takes about 15 us.  Probes back off like elision's skips: the first comes
 * after 16 waits, each failed one doubles the interval, up to 1024 waits,
 * and a successful one resets it.  A machine where spinning never pays thus
 * loses at most one probe per 1024 waits.
 *
 * Limits: the ceiling is 16 x HPSYNC_SPIN rounds (512, about 13 us at the
 * 26 ns a PAUSE takes on the Zen 5 this was tuned on, where a futex sleep
 * and wake-up cost 4 us on a busy guest and 15 us on an idle one).
 * HPSYNC_SPIN=0 turns spinning off, and so does a process allowed on one
 * CPU only: whoever would end the wait cannot run while we poll.
 */
#define _GNU_SOURCE
#include "preload.h"
#include "../prim/cpus.h"

static int g_ncpus;             /* 0 until first asked */
static uint32_t g_pause_ps;     /* one PAUSE, in picoseconds; 0 until measured */

int hps_preload_ncpus(void)
{
    /* Relaxed: racing first callers compute the same answer. */
    int n = hps_plain_load_relaxed(&g_ncpus);
    if (hps_unlikely(n == 0)) {
        n = hps_cpus_usable();
        hps_plain_store_relaxed(&g_ncpus, n);
    }
    return n;
}

/* What a PAUSE costs here, measured once (256 of them, a few microseconds;
 * the smallest of three tries, so an interruption does not count). */
static uint32_t pause_ps(void)
{
    uint32_t ps = hps_plain_load_relaxed(&g_pause_ps);
    if (hps_likely(ps != 0))
        return ps;
    uint64_t best = UINT64_MAX;
    for (int t = 0; t < 3; t++) {
        uint64_t t0 = hps_preload_now_ns();
        for (int i = 0; i < 256; i++)
            hps_cpu_relax();
        uint64_t d = hps_preload_now_ns() - t0;
        best = d < best ? d : best;
    }
    ps = (uint32_t)(best * 1000 / 256);
    ps = ps < 1000 ? 1000 : ps > 1000000 ? 1000000 : ps;   /* 1 ns .. 1 us */
    hps_plain_store_relaxed(&g_pause_ps, ps);
    return ps;
}

#define MIN_ROUNDS   8      /* the bound's floor: there the object only probes */
#define CHEAP_ROUNDS 8      /* spins this short are not timed */
#define PROBE_FIRST  16
#define PROBE_MAX    1024
/* A spin of i rounds that lasted more than 4 i PAUSEs plus this lost its
 * CPU (a time slice is milliseconds; interrupts and exits are less). */
#define PREEMPT_SLACK_NS 50000

static void back_off(hps_preload_spin_t *sp, uint32_t bound)
{
    hps_store_relaxed(&sp->bound, (uint16_t)(bound / 2 > MIN_ROUNDS ? bound / 2 : MIN_ROUNDS));
}

int hps_preload_spin(hps_au64 *word, uint64_t mask, uint64_t expect, hps_preload_spin_t *sp)
{
    uint32_t cap = 16 * hps_wait_spin_limit;
    if (cap == 0 || hps_preload_ncpus() < 2)
        return 0;
    cap = cap > UINT16_MAX / 2 ? UINT16_MAX / 2 : cap < MIN_ROUNDS ? MIN_ROUNDS : cap;
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
            /* Not a probe: spinning has not paid here lately, so do not
             * spin at all (a short spin would only add its length to
             * every wait; measured: 10% of a busy ping-pong). */
            hps_store_relaxed(&sp->left, (uint16_t)(left - 1));
            return 0;
        }
        max = 2 * cap;
    }
    uint64_t t0 = 0;
    for (uint32_t i = 0; i < max; i++) {
        /* Relaxed: the caller re-reads the word with the ordering it needs. */
        if ((hps_load_relaxed(word) & mask) != expect) {
            if (t0 && hps_preload_now_ns() - t0 > PREEMPT_SLACK_NS + (uint64_t)4 * i * pause_ps() / 1000) {
                back_off(sp, bound);    /* it worked, but only after we lost the CPU */
                return 1;
            }
            uint32_t want = 2 * i + MIN_ROUNDS < cap ? 2 * i + MIN_ROUNDS : cap;
            if (want > bound)
                hps_store_relaxed(&sp->bound, (uint16_t)want);
            if (period) {
                hps_store_relaxed(&sp->period, PROBE_FIRST);
                hps_store_relaxed(&sp->left, PROBE_FIRST);
            }
            return 1;
        }
        /* Hand-offs between running threads end within a few rounds: the
         * clock is read only by spins that get longer. */
        if (i == CHEAP_ROUNDS)
            t0 = hps_preload_now_ns();
        hps_cpu_relax();
    }
    back_off(sp, bound);
    if (period) {
        period = 2 * period < PROBE_MAX ? 2 * period : PROBE_MAX;
        hps_store_relaxed(&sp->period, (uint16_t)period);
        hps_store_relaxed(&sp->left, (uint16_t)period);
    }
    return 0;
}
