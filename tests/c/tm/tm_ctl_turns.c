// SPDX-License-Identifier: MIT
/*
 * tm_ctl_turns.c - tm_ctl's cases where the input changes between or during
 * calls: threads that join a lone start, gaps between calls, an input that
 * changes across a gap, phases that recur.  The model: tm_ctl_model.c.
 */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "tm_ctl.h"

/* The leader ran alone at first (on the bias: a fraction of a shared
 * epoch's cost), then others joined: the scan starts again, or the lone
 * k = 4 epochs would beat every shared point and the climb start there.
 * Then the curve whose best is k = 1024, within the scan case's window. */
void case_joined(void)
{
    static const double rising[] = { 600, 320, 180, 110, 70, 50, 40, 34, 31, 29.5, 29 };
    static const model_t mr = { 0.0, 99, 0.15, 10, rising, 0, 0 };
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    HPS_CHECK(!hps_tm_ctl_joined(&c, 1), "a scan that measured nothing restarted");
    c.shared = 0;                    /* that epoch was the site's first: as if it had run alone */
    for (int e = 0; e < 4; e++)
        feed_cost(&c, 8);            /* the serial point, then k = 4 */
    HPS_CHECK(hps_tm_ctl_level(&c) == 6 && !hps_tm_ctl_serial(&c), "two epochs at k = 4 left k %u, want 64",
              1u << hps_tm_ctl_level(&c));
    HPS_CHECK(hps_tm_ctl_joined(&c, 1), "others joined mid-scan: no restart");
    HPS_CHECK(c.phase == HPS_TM_CTL_SCAN && hps_tm_ctl_serial(&c) && c.lr_n[2] == 0,
              "restart: phase %u, k %u, %u lone epochs kept", c.phase, 1u << hps_tm_ctl_level(&c),
              c.lr_n[2]);
    HPS_CHECK(hps_tm_ctl_valid(&c, 10), "the restarted scan is not a valid state");
    converge("others joined after two lone epochs", &c, &mr, 200, 150);
    HPS_CHECK(!hps_tm_ctl_joined(&c, 1), "joined after the scan restarted it");
    /* A settled serial arm's rescan is not restarted by a new leader's
     * first sight of the others: the site has seen them. */
    c.serial = 1;
    hps_tm_ctl_scan(&c);
    feed_cost(&c, 8);
    HPS_CHECK(!hps_tm_ctl_joined(&c, 1) && c.phase == HPS_TM_CTL_SCAN && c.nep == 1,
              "a serial arm's rescan restarted on joined");

    /* A lone start long enough to finish the scan and settle: the lone
     * epochs made concurrent k = 1024 as cheap as the serial arm (the
     * others' arrival made it 6x dearer).  Joined forgets all of it but the
     * capacity cap, and scans again; without a scan (a site with k0), it
     * measures the current level afresh. */
    static const double lone[] = { 600, 320, 180, 110, 70, 50, 40, 34, 31, 29.5, 29 };
    static const model_t ml = { 0.0, 99, 0.15, 10, lone, 0, 29 };
    static const double crowd[] = { 900, 600, 400, 250, 160, 110, 90, 80, 75, 78, 85 };
    static const model_t mc = { 0.0, 99, 0.15, 10, crowd, 0, 30 };
    for (int scan = 1; scan >= 0; scan--) {
        hps_tm_ctl_init(&c, 8, 10);
        hps_tm_ctl_scan(&c);
        for (int e = 0; e < 200; e++)
            feed(&c, &ml);
        c.cap = c.level;             /* as if the level above had overflowed */
        unsigned cap = c.cap;
        HPS_CHECK(hps_tm_ctl_joined(&c, scan), "others joined after a settled lone start: no restart");
        HPS_CHECK(c.shared && c.cap == cap && c.lr_n[hps_tm_ctl_level(&c)] == 0 && !c.serial &&
                  c.phase == (scan ? HPS_TM_CTL_SCAN : HPS_TM_CTL_A) && c.epochs > 0,
                  "restart (scan %d): shared %u, cap %u, phase %u, serial %u", scan, c.shared, c.cap,
                  c.phase, c.serial);
        HPS_CHECK(hps_tm_ctl_valid(&c, 10), "the restarted controller is not a valid state");
        HPS_CHECK(!hps_tm_ctl_joined(&c, scan), "joined twice restarted twice");
        if (!scan)
            continue;
        /* Then the shared curve: concurrent chunks 2.5x the serial arm at
         * best.  Serialized from the restarted scan on, but for the
         * rescans (3 epochs each, after stays of 8, 16, 32, ... epochs). */
        unsigned ser = 0;
        for (int e = 0; e < 200; e++) {
            ser += e >= 10 && hps_tm_ctl_serial(&c);
            feed(&c, &mc);
        }
        HPS_CHECK(ser >= 160, "others joined after a lone start: %u of 190 epochs serialized, want 160+",
                  ser);
    }
}

/* A comparison the loop left for a while (hps_tm_ctl_gap: the program
 * did other work between calls) starts again from A, once per round of
 * probes, and only a comparison: an A in a climb, a settled level and a
 * scan carry on (the A a scan left: case_gap_after_scan). */
void case_gap(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 6, 10);
    c.no_serial = 1;
    HPS_CHECK(!hps_tm_ctl_gap(&c), "a gap in phase A restarted it");
    for (int e = 0; e < HPS_TM_CTL_EPOCHS; e++)
        feed_cost(&c, 40);
    HPS_CHECK(c.phase == HPS_TM_CTL_B && c.dir == 1, "after A: phase %u dir %d, want B up",
              c.phase, c.dir);
    feed_cost(&c, 41);
    HPS_CHECK(hps_tm_ctl_gap(&c), "a gap in B did not restart the comparison");
    HPS_CHECK(c.phase == HPS_TM_CTL_A && hps_tm_ctl_level(&c) == 6 && c.nep == 0 &&
              hps_tm_ctl_valid(&c, 10), "after a gap in B: phase %u at k %u, %u epochs",
              c.phase, 1u << hps_tm_ctl_level(&c), c.nep);
    for (int e = 0; e < HPS_TM_CTL_EPOCHS; e++)
        feed_cost(&c, 40);
    HPS_CHECK(c.phase == HPS_TM_CTL_B && c.dir == 1, "A again: phase %u dir %d, want the same "
              "probe", c.phase, c.dir);
    for (int e = 0; e < HPS_TM_CTL_EPOCHS; e++)
        feed_cost(&c, 41);
    HPS_CHECK(c.phase == HPS_TM_CTL_A2 && !hps_tm_ctl_gap(&c) && c.phase == HPS_TM_CTL_A2,
              "a second gap in one round restarted it (phase %u)", c.phase);
    /* The round ends (neither side cheaper: settled); the next round's
     * comparisons may be restarted again. */
    for (int e = 0; e < 40 && c.phase != HPS_TM_CTL_SETTLED; e++)
        feed_cost(&c, hps_tm_ctl_level(&c) == 6 ? 40 : 41);
    HPS_CHECK(c.phase == HPS_TM_CTL_SETTLED && c.level == 6, "not settled at k = 64: phase %u, "
              "k %u", c.phase, 1u << c.level);
    for (int e = 0; e < 300 && c.phase == HPS_TM_CTL_SETTLED; e++)
        feed_cost(&c, 40);
    HPS_CHECK(c.phase == HPS_TM_CTL_B, "no probe after the stay: phase %u", c.phase);
    HPS_CHECK(hps_tm_ctl_gap(&c) && c.phase == HPS_TM_CTL_A, "a gap in the next round's B did "
              "not restart it");
    /* Calls that are all short and far apart: every comparison is cut,
     * and the search still ends, settled at the cheapest level. */
    static const double valley[] = { 90, 80, 70, 60, 50, 40, 30, 25, 30, 40, 50 };
    hps_tm_ctl_init(&c, 3, 10);
    c.no_serial = 1;
    for (int e = 0; e < 400; e++) {
        hps_tm_ctl_gap(&c);
        feed_cost(&c, valley[hps_tm_ctl_level(&c)]);
        HPS_CHECK(hps_tm_ctl_valid(&c, 10), "gaps: epoch %d, not a valid state", e);
    }
    HPS_CHECK(c.level == 7, "a gap before every epoch: ended at k %u, the best is 128",
              1u << c.level);
}

/* A scan on one input (histogram's 16 bins: serialized chunks 6 ns a key,
 * concurrent ones 28) chose the serial arm; its confirming A then ran
 * after a gap, on another input (1 Mi bins: serial 80, concurrent 40).
 * The gap restarts A with no side tried, so the round compares the arms
 * again at once rather than settling on A's figure and holding the
 * dearer arm for a stay. */
void case_gap_after_scan(void)
{
    hps_tm_ctl_t c;
    hps_tm_ctl_init(&c, 8, 10);
    hps_tm_ctl_scan(&c);
    for (int e = 0; e < 40 && c.phase == HPS_TM_CTL_SCAN; e++)
        feed_cost(&c, hps_tm_ctl_serial(&c) ? 6 : 28);
    HPS_CHECK(c.serial && c.phase == HPS_TM_CTL_A, "the scan did not choose the serial arm: "
              "serial %u, phase %u", c.serial, c.phase);
    HPS_CHECK(hps_tm_ctl_gap(&c) && c.phase == HPS_TM_CTL_A && c.tried == 0 && c.nep == 0,
              "a gap in the A after a scan did not restart it (phase %u, tried %u)", c.phase,
              c.tried);
    HPS_CHECK(!hps_tm_ctl_gap(&c), "a second gap in the round restarted it again");
    int on_serial = 0, e = 0;
    for (; e < 200 && c.serial; e++) {
        on_serial += hps_tm_ctl_serial(&c);
        feed_cost(&c, hps_tm_ctl_serial(&c) ? 80 : 40);
    }
    /* On the serial arm: A (3 epochs), the rescan's serial point (2; the
     * levels were far dearer in the scan, so the arm's probes were backing
     * off) and A2 after the levels' B (3): 8.  Settling on A's figure held
     * it 8 more, a stay (and longer ones, as stays double). */
    HPS_CHECK(!c.serial && on_serial <= 3 * HPS_TM_CTL_EPOCHS, "the serial arm held %d epochs "
              "(%d in all) after the input changed across a gap", on_serial, e);
    HPS_CHECK(hps_tm_ctl_valid(&c, 10), "not a valid state");
}

/* A stretch of `iters` iterations of model m, epochs as coarsen.c ends
 * them (2 long chunks, k >= 256 or serialized, else 8): the time it took
 * (true cost x iterations), its iterations and epochs, and the first epoch
 * at which the controller ran the arm wanted (concurrent: k = 32 or more;
 * `at` = `epochs` if never). */
typedef struct stretch {
    double time;
    uint64_t iters;
    unsigned epochs, at;
    int got;
} stretch_t;

static stretch_t run_stretch(hps_tm_ctl_t *c, const model_t *m, uint64_t iters, int want_serial)
{
    stretch_t r = { 0 };
    for (; r.iters < iters; r.epochs++) {
        int ser = hps_tm_ctl_serial(c);
        unsigned l = ser ? c->lmax : hps_tm_ctl_level(c);
        if (!r.got && ser == want_serial && (ser || l >= 5)) {
            r.at = r.epochs;
            r.got = 1;
        }
        uint64_t chunks = l >= 8 ? 2 : 8, n = chunks << l;
        r.time += feed_n(c, m, chunks) * (double)n;
        r.iters += n;
    }
    if (!r.got)
        r.at = r.epochs;
    return r;
}

/* A fresh site's controller (it scans first) under the run's noise moved
 * to another sequence: one seed's figure moves by 0.1 with any change to
 * the controller, so a case averages several. */
static void fresh(hps_tm_ctl_t *c, unsigned level0, uint64_t rng0, unsigned seed)
{
    g_rng = rng0 + 0x9E3779B97F4A7C15ull * seed;
    hps_tm_ctl_init(c, level0, 10);
    hps_tm_ctl_scan(c);
}

/* Phases that recur (histogram's b1m-b16 cut into slices): spread keys,
 * where concurrent k = 64 is best and serialized chunks cost 1.75x it,
 * then hot keys, where the serial arm is best and the best level costs 2x
 * it, back and forth, 64 Ki iterations each.  The first turns are
 * searched; after them the controller should take the other arm within a
 * few epochs of each turn (jump_learned), also when the turn comes in the
 * middle of a round of probes, rather than climb or rescan to it.
 * Checked over the later cycles: the time the work took against each
 * phase's best, and the epochs from a turn to the right arm. */
void case_phases(void)
{
    static const double spread[] = { 400, 220, 130, 85, 60, 46, 40, 42, 46, 52, 60 };
    static const double hot[] = { 300, 160, 90, 55, 38, 28, 22, 18, 16, 15, 14 };
    static const model_t ms = { 0.0, 99, 0.15, 10, spread, 0, 70.0 };
    static const model_t mh = { 0.0, 99, 0.15, 10, hot, 0, 7.0 };
    static const double best[2] = { 40.0, 7.0 };
    enum { CYCLES = 24, LEARN = 4, PHASE = 1 << 16, SEEDS = 8 };
    double spent[2] = { 0, 0 }, ideal[2] = { 0, 0 };
    unsigned reach[2] = { 0, 0 }, turns = 0, missed = 0;
    const uint64_t rng0 = g_rng;
    for (unsigned seed = 0; seed < SEEDS; seed++) {
        hps_tm_ctl_t c;
        fresh(&c, 8, rng0, seed + 1000);
        for (unsigned cy = 0; cy < CYCLES; cy++) {
            for (int ph = 0; ph < 2; ph++) {
                stretch_t r = run_stretch(&c, ph ? &mh : &ms, PHASE, ph);
                if (cy >= LEARN) {
                    spent[ph] += r.time;
                    ideal[ph] += best[ph] * PHASE;
                    reach[ph] += r.at;
                    turns++;
                    missed += !r.got;
                }
                HPS_CHECK(hps_tm_ctl_valid(&c, 10), "phases: seed %u cycle %u, not a valid state",
                          seed, cy);
            }
        }
    }
    double both = (spent[0] + spent[1]) / (ideal[0] + ideal[1]);
    double to_ser = reach[1] / (double)(turns / 2), back = reach[0] / (double)(turns / 2);
    printf("phases, cycles %d-%d, %d seeds: time over each phase's best, spread keys %.3fx, hot "
           "keys %.3fx, both %.3fx; epochs from a turn to the right arm (means): %.1f to "
           "serialized chunks, %.1f back; %u of %u turns never\n", LEARN, CYCLES - 1, SEEDS,
           spent[0] / ideal[0], spent[1] / ideal[1], both, to_ser, back, missed, turns);
    /* Not 1.10: every turn costs the drift test's 3 epochs at the old
     * choice (about 7 % of each phase here) and an arm probe.  Before the
     * learned jumps and the turns seen mid-round: 1.38x, 30 epochs to the
     * serial arm, 21 % of turns never. */
    HPS_CHECK(both <= 1.30, "phases: time %.3fx the phases' best (want 1.30 at most)", both);
    HPS_CHECK(to_ser <= 24.0 && back <= 8.0, "phases: %.1f epochs from a turn to the serial arm, "
              "%.1f back (want 24 and 8 at most)", to_ser, back);
    HPS_CHECK(missed * 100 <= 12 * turns, "phases: %u of %u turns never reached the right arm",
              missed, turns);
}

/* A spell: the second vCPU stalls for a while and concurrent chunks cost
 * twice as much, serialized ones the same (histogram's 1 Mi bins under stm
 * at 2 threads: 128-164 ns a key at k = 64 for a repetition, 62-66 before
 * and after; serialized 66).  The serial arm is then the better choice, and
 * after the spell concurrent k = 64 again; the serial arm's own cost does
 * not change when the spell ends, so only its probes can tell.  Spells of
 * 40 Ki iterations between calm stretches of 200 Ki, 16 noise seeds.
 * Checked over the later cycles: the time against the best choice of each
 * stretch, and the epochs from a spell's end back to concurrent chunks. */
void case_spell(void)
{
    static const double calm_lv[] = { 400, 220, 130, 85, 60, 46, 40, 42, 46, 52, 60 };
    static double spell_lv[11];
    for (int i = 0; i < 11; i++)
        spell_lv[i] = 2.0 * calm_lv[i];
    static const model_t calm = { 0.0, 99, 0.15, 10, calm_lv, 0, 55.0 };
    static const model_t spell = { 0.0, 99, 0.15, 10, spell_lv, 0, 55.0 };
    enum { CYCLES = 6, LEARN = 1, CALM = 200000, SPELL = 40000, SEEDS = 16 };
    double spent = 0, ideal = 0, back = 0;
    unsigned n = 0, never = 0;
    const uint64_t rng0 = g_rng;
    for (unsigned seed = 0; seed < SEEDS; seed++) {
        hps_tm_ctl_t c;
        fresh(&c, 6, rng0, seed + 2000);
        for (unsigned cy = 0; cy < CYCLES; cy++) {
            stretch_t sp = run_stretch(&c, &spell, SPELL, 1);
            stretch_t ca = run_stretch(&c, &calm, CALM, 0);
            if (cy >= LEARN) {
                spent += sp.time + ca.time;
                ideal += 55.0 * (double)sp.iters + 40.0 * (double)ca.iters;
                n++;
                never += !ca.got;
                back += ca.at;
            }
            HPS_CHECK(hps_tm_ctl_valid(&c, 10), "spell: seed %u cycle %u, not a valid state",
                      seed, cy);
        }
    }
    printf("spell: time %.3fx the best choices'; back on concurrent chunks %.1f epochs after a "
           "spell (mean), %u of %u calm stretches never\n", spent / ideal, back / n, never, n);
    HPS_CHECK(spent <= 1.25 * ideal, "spell: time %.3fx the best choices' (want 1.25 at most)",
              spent / ideal);
    /* Over 30 seeds: 0-11 of 80 stretches never (before the spell rule,
     * with the turn tests: 5-17; before both: 6-13), 20-31 epochs back. */
    HPS_CHECK(back <= 40.0 * n && never * 100 <= 15 * n, "spell: %.1f epochs back to concurrent "
              "chunks after a spell, %u of %u stretches never (want 40 and 15 %% at most)",
              back / n, never, n);
}
