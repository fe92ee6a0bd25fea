// SPDX-License-Identifier: MIT
/*
 * tm_ctl - the coarsening controller (src/tm/coarsen_ctl*.c) on synthetic
 * loops whose best k is known, with seeded noise as bad as this shared
 * machine's.
 *
 *   tm_ctl CASE
 *
 *   TM_CTL_SEED=N tm_ctl CASE      (another noise sequence)
 *
 * The model and its noise: tm_ctl_model.c; the cases where the input
 * changes between or during calls: tm_ctl_turns.c.
 * Each case checks the true (noise-free) cost of the levels the controller
 * ran, averaged over a window: within 10 % of the best level's (or the
 * serial arm's, if cheaper), and never above k = 1's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "hps_rand.h"
#include "tm_ctl.h"


static void case_free(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 0, 10);
    converge("no conflicts", &c, &k_free, 600, 300);
    HPS_CHECK(hps_tm_ctl_level(&c) >= 8, "no conflicts: k %u, expected it to grow to 256+",
              1u << hps_tm_ctl_level(&c));
}

static void case_low(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 4, 10);
    converge("low conflict", &c, &k_low, 800, 400);
}

static void case_high(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 10, 10);     /* from the worst end: k = 1024 aborts nearly always */
    converge("high conflict", &c, &k_high, 800, 400);
    HPS_CHECK(hps_tm_ctl_level(&c) <= 5, "high conflict: k %u, expected it to shrink to 32 or less",
              1u << hps_tm_ctl_level(&c));
}

/* The conflict rate changes mid-run, both ways: the controller follows. */
static void case_shift(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 4, 10);
    converge("shift: low", &c, &k_low, 800, 300);
    converge("shift: low -> high", &c, &k_high, 800, 300);
    converge("shift: high -> free", &c, &k_free, 800, 300);
    converge("shift: free -> high", &c, &k_high, 800, 300);
}

/* Capacity: nothing above 2^5 fits; the level stays at or below it except
 * for single probes, and costs stay near the best that fits. */
static void case_capacity(void)
{
    static const model_t m = { 0.0, 5, 0.15, 10, NULL, 0, 0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 10, 10);
    converge("capacity", &c, &m, 800, 400);
    unsigned above = 0;
    for (unsigned e = 0; e < 400; e++) {
        feed(&c, &m);
        above += hps_tm_ctl_level(&c) > 5;
    }
    HPS_CHECK(above <= 20, "capacity: %u of 400 epochs above the capacity limit", above);
}

/* Noise alone, no difference between levels beyond it: the controller may
 * wander (a move costs nothing here), but it must not thrash: stays grow
 * while probes find nothing, so moves stay under one per 50 epochs. */
static void case_flat(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 4, 10);
    hps_tm_ctl_sample_t s = { .iters = 1600, .chunks = 100 };
    for (unsigned e = 0; e < 2000; e++) {
        double noisy = 20.0 * (1.0 + 0.15 * (2.0 * uniform() - 1.0));
        if (hps_xorshift64(&g_rng) % 100 < 10)
            noisy *= 3.0 + 7.0 * uniform();
        s.ns = (uint64_t)(noisy * (double)s.iters);
        hps_tm_ctl_epoch(&c, &s);
    }
    printf("flat: %llu moves, %llu probes in 2000 epochs\n", (unsigned long long)c.moves,
           (unsigned long long)c.probes);
    HPS_CHECK(c.moves <= 40, "flat: %llu moves in 2000 epochs of pure noise", (unsigned long long)c.moves);
}

/* A plateau: k = 128-512 cost the same, k = 32 and 64 a quarter less (a
 * shape first suspected on scatter large-low under stm at 1 thread, where
 * it turned out to be mostly the bias's wait).
 * Started on the plateau, the controller must find the lower level two
 * steps away.  Low noise (2 %, an outlier in 50 epochs), as that loop has
 * alone: with this machine's usual noise the controller wandered off the
 * plateau by chance, and a quiet loop stayed on it. */
static void case_plateau(void)
{
    static const double curve[] = { 60, 40, 32, 28, 26, 25, 25.5, 33, 33, 33, 45 };
    static const model_t m = { 0.0, 99, 0.02, 2, curve, 0, 0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    converge("plateau", &c, &m, 800, 400);
}

/* A fresh site scans k = 4, 64 and 1024 before it climbs (coarsen.c).
 * Two shapes of 2026-11-29's curves, as cost per iteration, 15 % noise and
 * an outlier in ten epochs: scatter's large zones at 2 threads with cheap
 * writes, best at k = 1-2 with a plateau from k = 32 up (started at k = 256
 * without the scan, the climb stays on the plateau), and
 * histogram's 16 bins, best at k = 1024.  The window is short (the first
 * 150 epochs after 50): the scan must bring the climb near its answer
 * within a run's first milliseconds. */
static void case_scan(void)
{
    static const double valley[] = { 76, 70, 90, 112, 127, 130, 128, 125, 127, 125, 123 };
    static const double rising[] = { 600, 320, 180, 110, 70, 50, 40, 34, 31, 29.5, 29 };
    static const model_t mv = { 0.0, 99, 0.15, 10, valley, 0, 0 };
    static const model_t mr = { 0.0, 99, 0.15, 10, rising, 0, 0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    converge("scan, valley at k = 2", &c, &mv, 200, 150);
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    converge("scan, best at k = 1024", &c, &mr, 200, 150);
    /* The scan's states are valid ones. */
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    for (int e = 0; e < HPS_TM_CTL_SCAN_N * HPS_TM_CTL_SCAN_EP_MAX + 1; e++) {
        HPS_CHECK(hps_tm_ctl_valid(&c, 10), "scan epoch %d: not a valid state", e);
        feed(&c, &mv);
    }
}


/* A scan point that comes out dearer than the one below gets a third
 * epoch before the scan stops on it: two stalled epochs at k = 64 (the
 * other thread holding sgl's lock through both) must not hide k = 1024. */
static void case_scan_third(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    /* The first two: the serial arm's point (at k = kmax), dearer here,
     * but not so dear that the levels get one epoch each. */
    static const double costs[] = { 200, 210, 50, 50, 300, 280, 25, 20, 21 };
    static const unsigned levels[] = { 10, 10, 2, 2, 6, 6, 6, 10, 10 };
    for (unsigned e = 0; e < sizeof costs / sizeof costs[0]; e++) {
        HPS_CHECK(hps_tm_ctl_level(&c) == levels[e] && hps_tm_ctl_serial(&c) == (e < 2),
                  "scan epoch %u at k %u%s, want k %u%s", e, 1u << hps_tm_ctl_level(&c),
                  hps_tm_ctl_serial(&c) ? " serial" : "", 1u << levels[e], e < 2 ? " serial" : "");
        HPS_CHECK(hps_tm_ctl_valid(&c, 10), "scan epoch %u: not a valid state", e);
        feed_cost(&c, costs[e]);
    }
    HPS_CHECK(c.phase != HPS_TM_CTL_SCAN && c.level == 10 && !c.serial,
              "after the scan: phase %u, k %u, serial %u; want the climb from k = 1024", c.phase,
              1u << c.level, c.serial);
    /* A dearer point whose third epoch is dearer still ends the scan; a
     * serial arm cheaper by more than the hysteresis wins it. */
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    static const double valley[] = { 45, 46, 50, 50, 90, 80, 70 };
    for (unsigned e = 0; e < sizeof valley / sizeof valley[0]; e++)
        feed_cost(&c, valley[e]);
    HPS_CHECK(c.phase != HPS_TM_CTL_SCAN && c.level == 2 && c.serial,
              "valley: phase %u, k %u, serial %u; want serial, k = 4 the concurrent level", c.phase,
              1u << c.level, c.serial);
    /* Levels far dearer than the serial point get one epoch each, and the
     * scan stops at the second unless it halved the first's cost and came
     * within 4x the serial point's (70 here; 100 stops it). */
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    static const double flat[] = { 20, 22, 240, 230 };
    for (unsigned e = 0; e < sizeof flat / sizeof flat[0]; e++)
        feed_cost(&c, flat[e]);
    HPS_CHECK(c.phase != HPS_TM_CTL_SCAN && c.serial && c.level == 6,
              "far, flat: phase %u, k %u, serial %u; want serial after 4 epochs", c.phase,
              1u << c.level, c.serial);
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    static const double falling[] = { 20, 22, 240, 70, 30, 31 };
    static const unsigned flevels[] = { 10, 10, 2, 6, 10, 10 };
    for (unsigned e = 0; e < sizeof falling / sizeof falling[0]; e++) {
        HPS_CHECK(hps_tm_ctl_level(&c) == flevels[e], "far, falling: epoch %u at k %u, want k %u", e,
                  1u << hps_tm_ctl_level(&c), 1u << flevels[e]);
        feed_cost(&c, falling[e]);
    }
    HPS_CHECK(c.phase != HPS_TM_CTL_SCAN && c.serial && c.level == 10,
              "far, falling: phase %u, k %u, serial %u; want serial, k = 1024 the concurrent level",
              c.phase, 1u << c.level, c.serial);
}

/* The serial arm cheapest (high conflict, where one thread at a time beats
 * aborting sections): the controller runs it, from a scan or from a level;
 * and when the conflicts go and concurrent chunks become cheaper again
 * (the serial arm's cost does not move: the probes of the concurrent level
 * at the end of each stay find it), it goes back, and back again. */
static void case_serial(void)
{
    static const model_t hi_ser = { 5e-2, 99, 0.15, 10, NULL, 0, 30.0 };
    static const model_t free_ser = { 0.0, 99, 0.15, 10, NULL, 0, 30.0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    converge("serial: from a scan", &c, &hi_ser, 200, 150);
    HPS_CHECK(hps_tm_ctl_serial(&c), "serial: the scan did not end serialized");
    hps_tm_ctl_init(&c, 4, 10);
    converge("serial: from k = 16", &c, &hi_ser, 800, 300);
    converge("serial: high -> free", &c, &free_ser, 1200, 300);
    HPS_CHECK(!hps_tm_ctl_serial(&c), "serial: no conflicts, still serialized");
    converge("serial: free -> high", &c, &hi_ser, 800, 300);
    HPS_CHECK(hps_tm_ctl_valid(&c, 10), "serial: not a valid state");
    /* Off (HPSYNC_TM_COARSEN_SERIAL=0): never a serialized epoch, and the
     * best concurrent level all the same. */
    static const model_t hi_k = { 5e-2, 99, 0.15, 10, NULL, 0, 1e9 };
    hps_tm_ctl_init(&c, 8, 10);
    c.no_serial = 1;
    hps_tm_ctl_scan(&c);
    unsigned ser = 0;
    for (int e = 0; e < 800; e++) {
        ser += (unsigned)hps_tm_ctl_serial(&c);
        feed(&c, &hi_ser);
        HPS_CHECK(hps_tm_ctl_valid(&c, 10), "serial off: epoch %d, not a valid state", e);
    }
    HPS_CHECK(ser == 0, "serial off: %u serialized epochs", ser);
    converge("serial off: high", &c, &hi_k, 400, 300);
}


/* A backend that runs one section at a time pinned the loop at kmax: the
 * search goes on from there, afresh, when the backend changes; a fresh
 * site's scan is still to be made. */
static void case_pinned(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    HPS_CHECK(!hps_tm_ctl_pinned(&c) && c.phase == HPS_TM_CTL_SCAN, "pinned before the scan: phase %u",
              c.phase);
    converge("before the pin", &c, &k_high, 400, 200);   /* settles low, or serialized */
    c.cap = 9;
    HPS_CHECK(hps_tm_ctl_pinned(&c), "pinned: no change");
    HPS_CHECK(c.level == 9 && !hps_tm_ctl_serial(&c) && c.phase == HPS_TM_CTL_A && c.nep == 0 &&
              hps_tm_ctl_valid(&c, 10), "pinned: k %u, serial %d, phase %u", 1u << c.level,
              hps_tm_ctl_serial(&c), c.phase);
    HPS_CHECK(!hps_tm_ctl_pinned(&c), "pinned twice: changed again");
    converge("after the pin, high conflict", &c, &k_high, 800, 400);
}

/* Threads outnumbering CPUs: a thread preempted inside a section stalls
 * the others, more often the longer the sections (an epoch's chance 2 % at
 * k = 16, doubling with k; a stall makes the epoch 4x).  Without stalls
 * bigger is better; with them k = 64 is best, and medians, which drop the
 * stalled epochs, favour 256 and beyond (the controller before the
 * long-run rule ran at 1.78x the best level's cost).  The samples say
 * crowded. */
static void case_crowded(void)
{
    static const model_t m = { 0.0, 99, 0.05, 0, NULL, 0.02, 0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    converge("crowded", &c, &m, 1600, 800);
    /* Crowded but without stalls (bigger is better): the climb, which then
     * waits for the long run's word at each step up, still gets there. */
    static const model_t up = { 0.0, 99, 0.05, 0, NULL, 1e-9, 0 };
    hps_tm_ctl_init(&c, 4, 10);
    converge("crowded, no stalls", &c, &up, 1600, 800);
}

/* While crowded, aborts weigh more (coarsen_ctl.c): an epoch with as many
 * aborts as chunks steps down at once (elsewhere it takes twice as many),
 * and a level aborting 20 % of its attempts or more probes down first. */
static void case_crowded_aborts(void)
{
    for (int crowded = 0; crowded <= 1; crowded++) {
        hps_tm_ctl_t c;
        hps_tm_ctl_init(&c, 8, 10);
        hps_tm_ctl_sample_t s = { .iters = 4096, .ns = 409600, .chunks = 16, .aborts = 16,
                                  .crowded = (uint32_t)crowded };
        hps_tm_ctl_epoch(&c, &s);
        unsigned want = crowded ? 7 : 8;
        HPS_CHECK(hps_tm_ctl_level(&c) == want,
                  "%s: one epoch of 16 chunks with 16 aborts at k = 256 left k %u, want %u",
                  crowded ? "crowded" : "not crowded", 1u << hps_tm_ctl_level(&c), 1u << want);
    }
    for (int crowded = 0; crowded <= 1; crowded++) {
        hps_tm_ctl_t c;
        hps_tm_ctl_init(&c, 8, 10);
        /* 5 aborts to 16 commits: an abort ratio of 0.24. */
        hps_tm_ctl_sample_t s = { .iters = 4096, .ns = 409600, .chunks = 16, .aborts = 5,
                                  .crowded = (uint32_t)crowded };
        for (int i = 0; i < HPS_TM_CTL_EPOCHS; i++)
            hps_tm_ctl_epoch(&c, &s);
        unsigned want = crowded ? 7 : 9;
        HPS_CHECK(hps_tm_ctl_level(&c) == want,
                  "%s, abort ratio 0.24: the first probe from k = 256 went to k %u, want %u",
                  crowded ? "crowded" : "not crowded", 1u << hps_tm_ctl_level(&c), 1u << want);
    }
}



/* Serialized chunks at 1.4x the level's cost: a clear loss, rarely a far
 * answer at its first epoch.  The serial arm's cost does not depend on the
 * level, so its probes back off (up to 15 rounds) instead of coming at the
 * end of every round; and when conflicts make the levels dearer than it,
 * the backoff ends at once. */
static void case_arm_backoff(void)
{
    static const double flat[] = { 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40 };
    static const double dear[] = { 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90 };
    static const model_t m = { 0.0, 99, 0.15, 0, flat, 0, 56.0 };
    static const model_t md = { 0.0, 99, 0.15, 0, dear, 0, 56.0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 6, 10);
    unsigned ser = 0, n = 3000;
    for (unsigned e = 0; e < n; e++) {
        ser += (unsigned)hps_tm_ctl_serial(&c);
        feed(&c, &m);
    }
    printf("arm backoff: %u of %u epochs on serialized chunks at 1.4x\n", ser, n);
    HPS_CHECK(!c.serial && ser * 100 < 2 * n, "serialized chunks at 1.4x the level's cost: %u of "
              "%u epochs (want under 2 %%), arm %u", ser, n, c.serial);
    unsigned e = 0;
    while (e < 400 && !c.serial) {
        feed(&c, &md);
        e++;
    }
    HPS_CHECK(c.serial, "the levels at 90, serialized chunks at 56: still on the levels after "
              "%u epochs", e);
    printf("arm backoff: on the serial arm %u epochs after the levels' cost rose\n", e);
}


/* A controller read back from a site is checked (coarsen.c): every state
 * the machine reaches is valid, and corrupt ones are not. */
static void case_valid(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    HPS_CHECK(hps_tm_ctl_valid(&c, 10), "a new controller is not valid");
    HPS_CHECK(!hps_tm_ctl_valid(&c, 12), "valid for another kmax");
    static const model_t m = { 5e-2, 99, 0.15, 10, NULL, 0, 0 };
    for (int e = 0; e < 3000; e++) {
        feed(&c, &m);
        HPS_CHECK(hps_tm_ctl_valid(&c, 10), "epoch %d: the machine's own state is not valid", e);
    }
    hps_tm_ctl_t bad = c;
    bad.level = 11;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a level past kmax is valid");
    bad = c;
    bad.phase = 7;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "phase 7 is valid");
    bad = c;
    bad.phase = HPS_TM_CTL_B;
    bad.level = 10;
    bad.cap = 10;
    bad.dir = 1;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a probe past kmax is valid");
    bad.level = 4;
    bad.serial = 1;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a serial arm probing a level is valid");
    bad.serial = 2;
    bad.dir = 0;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "arm 2 is valid");
    bad = c;
    bad.jump[1] = HPS_TM_CTL_JUMP_VALID | 11;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a learned jump past kmax is valid");
    bad.jump[1] = 3;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a jump not marked learned but not empty is valid");
    bad = c;
    bad.pending = 5;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "pending change kind 5 is valid");
    bad = c;
    bad.phase = HPS_TM_CTL_SETTLED;
    bad.stay = 1;
    bad.scanned = 1;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a settled controller confirming a scan is valid");
    bad = c;
    bad.phase = HPS_TM_CTL_SETTLED;
    bad.stay = 1;
    bad.serial = 1;
    bad.no_serial = 0;
    bad.scanned = 0;
    bad.arm_skip = 0;
    bad.spell = 4;
    HPS_CHECK(hps_tm_ctl_valid(&bad, 10), "a serial arm with a spell's 4 stays left is not valid");
    bad.spell = 5;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "5 spell stays are valid");
    bad.spell = 1;
    bad.serial = 0;
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "a spell's stays on concurrent chunks are valid");
    bad = c;
    memset(&bad, 0xA5, sizeof bad);
    HPS_CHECK(!hps_tm_ctl_valid(&bad, 10), "0xA5 bytes make a valid controller");
}

/* The crowded epoch's length rule (hps_tm_ctl_near): near means under 3x
 * the cheapest cost the controller holds; with nothing held, nothing is. */
/* Stays count an epoch of fewer than 8 chunks by its share (long chunks
 * end an epoch after 2): a settled level is probed as often in time, so
 * about 4x as many epochs apart, whether its epochs hold 16 chunks or 2.
 * Without the share, a serial arm settled on scatter's large zones
 * rescanned 4x as often and lost 3-6 %. */
static void case_stay_share(void)
{
    static const uint64_t chunks[2] = { 16, 2 };
    uint64_t probes[2];
    for (int v = 0; v < 2; v++) {
        hps_tm_ctl_t c;
        hps_tm_ctl_init(&c, 6, 10);
        c.no_serial = 1;
        uint64_t p0 = 0;
        for (int e = 0; e < 20000; e++) {
            if (e == 10000)
                p0 = c.probes;       /* the stays have reached their longest */
            unsigned l = hps_tm_ctl_level(&c);
            uint64_t k = 1ull << l, n = chunks[v];
            double cost = 10.0 + 3.0 * (l > 6 ? l - 6 : 6 - l);   /* best: k = 64 */
            hps_tm_ctl_sample_t s = { .iters = n * k, .chunks = n, .ns = (uint64_t)(cost * (double)(n * k)) };
            hps_tm_ctl_epoch(&c, &s);
            HPS_CHECK(hps_tm_ctl_valid(&c, 10), "%llu-chunk epochs, epoch %d: not a valid state",
                      (unsigned long long)n, e);
        }
        HPS_CHECK(c.level == 6, "%llu-chunk epochs: settled at k %u, want 64",
                  (unsigned long long)chunks[v], 1u << c.level);
        probes[v] = c.probes - p0;
    }
    HPS_CHECK(probes[1] > 0 && probes[0] >= 3 * probes[1] && probes[0] <= 5 * probes[1],
              "probes in 10000 settled epochs: %llu with 16 chunks, %llu with 2; want about 4x",
              (unsigned long long)probes[0], (unsigned long long)probes[1]);
}

static void case_near(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    HPS_CHECK(!hps_tm_ctl_near(&c, 100, 100), "a fresh controller holds a cost");
    hps_tm_ctl_scan(&c);
    HPS_CHECK(!hps_tm_ctl_near(&c, 100, 100), "a scan's start holds a cost");
    /* The scan's serial point: two epochs, the cheaper 50 ns an iteration. */
    feed_cost(&c, 60);
    feed_cost(&c, 50);
    HPS_CHECK(c.scan_i == 0, "the scan did not move on to the levels: point %u", c.scan_i);
    HPS_CHECK(hps_tm_ctl_near(&c, 140 * 1000, 1000), "140 ns is not near 50");
    HPS_CHECK(!hps_tm_ctl_near(&c, 160 * 1000, 1000), "160 ns is near 50");
    HPS_CHECK(!hps_tm_ctl_near(&c, 1, 0), "no iterations are near");
    /* Settled at a level: its baseline is the reference (here the cheapest). */
    static const double flat[] = { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 };
    static const model_t m = { 0.0, 99, 0.0, 10, flat, 0, 0 };
    hps_tm_ctl_init(&c, 4, 10);
    for (int e = 0; e < 60 && c.phase != HPS_TM_CTL_SETTLED; e++)
        feed(&c, &m);
    HPS_CHECK(c.phase == HPS_TM_CTL_SETTLED, "not settled on a flat curve: phase %u", c.phase);
    HPS_CHECK(hps_tm_ctl_near(&c, 85 * 100, 100) && !hps_tm_ctl_near(&c, 95 * 100, 100),
              "near a baseline of %.1f: 85 %d, 95 %d", (double)c.base, hps_tm_ctl_near(&c, 8500, 100),
              hps_tm_ctl_near(&c, 9500, 100));
}

static const hps_test_case_t cases[] = {
    { "free", .run = case_free },
    { "low", .run = case_low },
    { "high", .run = case_high },
    { "shift", .run = case_shift },
    { "capacity", .run = case_capacity },
    { "flat", .run = case_flat },
    { "plateau", .run = case_plateau },
    { "scan", .run = case_scan },
    { "scan_third", .run = case_scan_third },
    { "serial", .run = case_serial },
    { "joined", .run = case_joined },
    { "pinned", .run = case_pinned },
    { "crowded", .run = case_crowded },
    { "crowded_aborts", .run = case_crowded_aborts },
    { "gap", .run = case_gap },
    { "gap_after_scan", .run = case_gap_after_scan },
    { "arm_backoff", .run = case_arm_backoff },
    { "phases", .run = case_phases },
    { "spell", .run = case_spell },
    { "valid", .run = case_valid },
    { "near", .run = case_near },
    { "stay_share", .run = case_stay_share },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("tm_ctl", cases, 60, 0);

int main(int argc, char **argv)
{
    /* TM_CTL_SEED=N replays the cases under another noise sequence (the
     * bounds hold for most seeds, not all: see docs/tm-coarsen.md). */
    const char *seed = getenv("TM_CTL_SEED");
    if (seed && *seed)
        g_rng += 0x9E3779B97F4A7C15ull * strtoull(seed, NULL, 10);
    return hps_test_main(&suite, argc, argv);
}
