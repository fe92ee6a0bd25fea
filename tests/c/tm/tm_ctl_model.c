// SPDX-License-Identifier: MIT
/*
 * tm_ctl_model.c - the synthetic loops of tm_ctl (the coarsening
 * controller, src/tm/coarsen_ctl*.c, on loops whose best k is known), with
 * noise that is seeded (so a failure replays; TM_CTL_SEED=N picks another)
 * and as bad as this shared machine's: +-15 % on every epoch, and one
 * epoch in ten hit by a "preemption" that makes it 3-10x slower.
 *
 * The model: a chunk of k iterations costs O + k w (begin/commit overhead
 * O, work w per iteration) and commits with probability (1 - p)^k (p: the
 * chance an iteration conflicts); a failed attempt costs the same again.
 * After 16 aborts in a row a section runs irrevocably (the core's
 * HPSYNC_TM_RETRIES), so with q = (1 - p)^k a chunk makes
 * E = (1 - (1-q)^16) / q attempts (E - 1 aborts, the last one alone) and
 * costs (O/k + w) E per iteration.  Capacity: chunks above a limit
 * always abort for capacity.
 * The serial arm (chunks of 2^lmax run alone) costs a fixed amount per
 * iteration, never aborts and never overflows: the model's `serial`, or
 * by default 4x the best level's (a machine where concurrency pays).
 * converge() checks the true (noise-free) cost of the levels the
 * controller ran, averaged over a window: within 10 % of the best level's
 * (or the serial arm's, if cheaper), and never above k = 1's.
 */
#include <math.h>
#include <stdio.h>
#include "harness.h"
#include "hps_rand.h"
#include "tm_ctl.h"

uint64_t g_rng = 0x243F6A8885A308D3ull;

double uniform(void)
{
    return (double)(hps_xorshift64(&g_rng) >> 11) / 9007199254740992.0;
}

static double attempts(const model_t *m, double k)
{
    double q = pow(1.0 - m->p, k);
    return q >= 1.0 ? 1.0 : -expm1(16.0 * log1p(-q)) / q;
}

static double stall_p(const model_t *m, unsigned level)
{
    double p = m->stall * ldexp(1.0, (int)level - 4);
    return p < 1.0 ? p : 1.0;
}

double true_cost(const model_t *m, unsigned level)
{
    if (m->curve)
        return m->curve[level];
    if (m->stall > 0)
        return (O / (double)(1u << level) + W) * (1.0 + 3.0 * stall_p(m, level));
    double k = (double)(1u << level);
    return (O / k + W) * attempts(m, k);
}

unsigned best_level(const model_t *m, unsigned lmax)
{
    unsigned b = 0;
    for (unsigned l = 1; l <= lmax && l <= m->cap_level; l++)
        if (true_cost(m, l) < true_cost(m, b))
            b = l;
    return b;
}

double serial_cost(const model_t *m, unsigned lmax)
{
    return m->serial > 0 ? m->serial : 4.0 * true_cost(m, best_level(m, lmax));
}

/* Noise as the machine's: +-noise, and an outlier now and then. */
static double noisy_of(const model_t *m, double cost)
{
    double noisy = cost * (1.0 + m->noise * (2.0 * uniform() - 1.0));
    if (hps_xorshift64(&g_rng) % 100 < m->outlier_pct)
        noisy *= 3.0 + 7.0 * uniform();
    return noisy;
}

/* One epoch of `chunks` chunks at the controller's level; returns its true cost. */
double feed_n(hps_tm_ctl_t *c, const model_t *m, uint64_t chunks)
{
    unsigned l = hps_tm_ctl_level(c);
    uint64_t k = 1ull << l;
    hps_tm_ctl_sample_t s = { .iters = k * chunks, .chunks = chunks, .crowded = m->stall > 0 };
    if (hps_tm_ctl_serial(c)) {
        double cost = serial_cost(m, c->lmax);
        s.iters = chunks << c->lmax;
        s.ns = (uint64_t)(noisy_of(m, cost) * (double)s.iters);
        hps_tm_ctl_epoch(c, &s);
        return cost;
    }
    if (l > m->cap_level) {
        /* Every chunk overflows once and is halved (as coarsen.c does). */
        s.cap_aborts = s.aborts = chunks;
        s.iters = k / 2 * chunks;
        s.ns = (uint64_t)(chunks * (O + (double)k * W) * 1.5);
        hps_tm_ctl_epoch(c, &s);
        return (double)s.ns / (double)s.iters;
    }
    double e = m->curve ? 1.0 : attempts(m, (double)k);
    double cost = m->curve ? m->curve[l] : (O / (double)k + W) * e;
    s.aborts = (uint64_t)((e - 1.0) * (double)chunks + uniform());
    double noisy = noisy_of(m, cost);
    if (m->stall > 0) {
        if (uniform() < stall_p(m, l))
            noisy *= 4.0;
        cost = true_cost(m, l);
    }
    s.ns = (uint64_t)(noisy * (double)s.iters);
    hps_tm_ctl_epoch(c, &s);
    return cost;
}

double feed(hps_tm_ctl_t *c, const model_t *m)
{
    return feed_n(c, m, 16);
}

/* Run epochs and check the mean true cost over the last `window` of them. */
void converge(const char *what, hps_tm_ctl_t *c, const model_t *m, unsigned epochs,
                     unsigned window)
{
    unsigned lmax = c->lmax, best = best_level(m, lmax);
    double sum = 0;
    for (unsigned e = 0; e < epochs; e++) {
        double cost = feed(c, m);
        if (e >= epochs - window)
            sum += cost;
    }
    double mean = sum / window, b = true_cost(m, best), k1 = true_cost(m, 0), ser = serial_cost(m, lmax);
    if (ser < b)
        b = ser;
    printf("%s: best k %u%s (cost %.1f), k=1 %.1f; ran at mean cost %.1f (%.3fx best), now k %u%s, "
           "%llu moves\n", what, ser <= b ? 1u << lmax : 1u << best, ser <= b ? " serial" : "", b,
           k1, mean, mean / b, 1u << hps_tm_ctl_level(c), hps_tm_ctl_serial(c) ? " serial" : "",
           (unsigned long long)c->moves);
    HPS_CHECK(mean <= 1.10 * b, "%s: mean cost %.1f is %.3fx the best k=%u's %.1f (target 1.10)", what,
              mean, mean / b, 1u << best, b);
    HPS_CHECK(mean <= k1, "%s: mean cost %.1f worse than k=1's %.1f", what, mean, k1);
}

/* Feed one epoch of 16 chunks at the controller's level costing `cost` an
 * iteration, no aborts. */
void feed_cost(hps_tm_ctl_t *c, double cost)
{
    uint64_t k = 1ull << hps_tm_ctl_level(c);
    hps_tm_ctl_sample_t s = { .iters = 16 * k, .chunks = 16, .ns = (uint64_t)(cost * 16.0 * (double)k) };
    hps_tm_ctl_epoch(c, &s);
}

const model_t k_free = { 0.0, 99, 0.15, 10, NULL, 0, 0 };
const model_t k_low = { 1e-3, 99, 0.15, 10, NULL, 0, 0 };
const model_t k_high = { 5e-2, 99, 0.15, 10, NULL, 0, 0 };
