/* SPDX-License-Identifier: MIT */
/*
 * coarsen.h - the granularity controller of hps_tm_for_dynamic, as a pure
 * state machine: it is fed one sample per measurement epoch and answers
 * which level (k = 2^level) to run next.  No clock and no TM state inside,
 * so tests drive it with synthetic samples whose best level is known
 * (tests/c/tm/tm_coarsen.c), and coarsen.c only measures and obeys.
 *
 * The search (why each step is there is in coarsen_ctl.c and coarsen_ctl_turn.c):
 *   A   the current level's cost per iteration: median of 3 epochs;
 *   B   a neighbour's (one level up or down): median of 3 epochs;
 *   A2  the current level again: 3 epochs;
 *   move to the neighbour only if B beats the mean of A and A2 by 3 % and
 *   the lower of them at all, then keep
 *   going that way (B at the next level, A2); if B came out the same as A
 *   (within 3 %), probe two levels that way (a plateau; once per side and
 *   level); else, or if that
 *   fails too, try the other side;
 *   with neither side better, settle.  Settled, hold the level for a stay
 *   (8 epochs, doubling each time a probe confirms it, up to 256), then
 *   probe again; a cost or abort ratio off its settled baseline for 3
 *   epochs in a row ends the stay at once.  While the threads outnumber
 *   the CPUs (sample.crowded), a move to a larger k also needs each
 *   level's long-run cost (all its epochs, stalls included) to agree.
 *   Deterministic signals act
 *   without timing: a capacity abort caps the level below the one that
 *   overflowed; every chunk aborting twice or more steps down at once.
 *   Two arms: chunks run concurrently (the levels above) or serialized
 *   (each chunk alone behind the gate, as solo, k = 2^lmax).  The scan
 *   measures the serial arm before its levels; a round that found neither
 *   side better probes the serial arm (B with dir 0) before it settles, and
 *   a settled serial arm scans again at the end of each stay.  An arm
 *   probe whose first epoch costs over 1.5x the current one ends there
 *   (a scan's level: after one epoch), and the next 1 or 3 rounds skip it;
 *   one that lost by 1.25x in full backs off further on concurrent chunks
 *   (up to 15 rounds), until the level's cost comes within 0.9x of the
 *   arm's last one.  A gap between calls restarts a comparison (once a
 *   round), and coarsen.c does not feed the epochs begun within two
 *   serialized chunks' time after serialized chunks (they waited for the
 *   others' last serialized chunk).
 *   A change of the input (the settled drift test, a round whose A2 is
 *   1.5x off its A and the baseline, or an A 1.5x off the scan figure it
 *   confirms) starts the search again; where the search after the last
 *   change of that kind (the cost rose or fell, on which arm) settled on
 *   the other arm, that arm is probed first, and taken without A2 if it
 *   beats the changed cost by 1.5x.  A serial arm taken after the
 *   concurrent cost rose from below its own (a spell of the second vCPU)
 *   rescans at every stay, undoubled, for 4 stays.
 */
#ifndef HPS_TM_COARSEN_INTERNAL_H
#define HPS_TM_COARSEN_INTERNAL_H

#include <stdint.h>

#define HPS_TM_CTL_LMAX 16           /* k up to 65536 */
#define HPS_TM_CTL_EPOCHS 3          /* epochs per measurement (median) */
#define HPS_TM_CTL_STAY_MIN 8
#define HPS_TM_CTL_STAY_MAX 256
/* Stays count epochs of at least HPS_TM_CTL_STAY_CHUNKS chunks; a shorter
 * epoch (long chunks end theirs after 2: coarsen.c's EP_LONG) counts its
 * share, in steps of 1/HPS_TM_CTL_STAY_UNIT epoch, so a settled level's
 * probes come as often in time whatever its epochs' length. */
#define HPS_TM_CTL_STAY_CHUNKS 8
#define HPS_TM_CTL_STAY_UNIT 4

/* One epoch's figures, all at the level hps_tm_ctl_level() gave. */
typedef struct hps_tm_ctl_sample {
    uint64_t iters;                  /* iterations committed */
    uint64_t ns;                     /* time inside the loop */
    uint64_t chunks;                 /* sections committed */
    uint64_t aborts;                 /* all aborts */
    uint64_t cap_aborts;             /* of which capacity (software or hardware) */
    uint32_t crowded;                /* threads outnumber CPUs: moves up need the long run */
} hps_tm_ctl_sample_t;

/* The kinds of change of the input the controller learns from (jump[]):
 * HPS_TM_CTL_CHANGE_ROSE if the cost rose (else it fell), plus 1 if on the
 * serial arm. */
#define HPS_TM_CTL_CHANGE_ROSE 2u
#define HPS_TM_CTL_CHANGES 4

typedef struct hps_tm_ctl {
    uint8_t level, cap, lmax, phase;
    int8_t dir;                      /* the side being probed: +1 or -1 */
    uint8_t tried;                   /* sides tried this round: 1 up, 2 down */
    uint8_t nep;                     /* epochs in the current measurement */
    uint8_t drift;                   /* settled: epochs in a row off the baseline */
    uint8_t moved;                   /* the level changed since the last settle */
    uint8_t far_tried;               /* far probes made from this level: 1 up, 2 down */
    uint8_t scan_i;                  /* scanning: the point being measured */
    uint8_t serial;                  /* the arm: 0 concurrent chunks, 1 serialized */
    float ep[HPS_TM_CTL_EPOCHS];     /* costs of the measurement's epochs */
    float ar_sum;                    /* their abort ratios, summed */
    float a, b;                      /* medians: current level, neighbour */
    float bn;                        /* a far probe's: the near neighbour's median; an arm
                                      * probe's: the current arm's abort ratio */
    float base, base_ar;             /* settled: cost and abort ratio */
    /* Per level, every epoch run at it (halved past LR_MAX epochs, cleared
     * when the input changes): the long-run cost, stalls included. */
    float lr_ns[HPS_TM_CTL_LMAX + 1], lr_it[HPS_TM_CTL_LMAX + 1];
    uint16_t lr_n[HPS_TM_CTL_LMAX + 1];
    uint8_t crowded;                 /* the last sample's */
    /* The other arm's probes back off while it measures far dearer: the
     * rounds still to skip (high nibble) and the backoff's exponent. */
    uint8_t arm_skip;
    uint16_t stay, stay_len;         /* in 1/HPS_TM_CTL_STAY_UNIT epochs (at most
                                      * HPS_TM_CTL_STAY_MAX epochs) */
    uint8_t no_serial;               /* the serial arm is off (HPSYNC_TM_COARSEN_SERIAL=0) */
    uint8_t shared;                  /* an epoch with other threads at the site was seen */
    uint8_t gapped;                  /* this round's comparison was restarted after a gap */
    uint8_t backed;                  /* this arm probe follows a scan that found it cheaper (1)
                                      * or a change of the input of a known kind (2) */
    float arm_cost;                  /* the other arm's cost when last measured (0: not since
                                      * this arm was taken) */
    /* Where the search after a change of the input settled, learned per
     * kind of change (index: the cost rose? 2 : 0, plus the arm it left),
     * for the next change of that kind: HPS_TM_CTL_JUMP_VALID | serial arm
     * ? HPS_TM_CTL_JUMP_SERIAL : 0 | level.  `pending` is the index + 1 of
     * the change whose search is under way (0: none). */
    uint8_t jump[HPS_TM_CTL_CHANGES], pending;
    uint8_t scanned;                 /* this A confirms a scan's choice; a: the scan's figure */
    uint8_t spell;                   /* serial arm taken in a spell: stays left undoubled */
    uint64_t epochs;
    uint32_t moves, probes;
} hps_tm_ctl_t;

#define HPS_TM_CTL_JUMP_VALID 0x80u
#define HPS_TM_CTL_JUMP_SERIAL 0x40u
#define HPS_TM_CTL_JUMP_SURE 0x20u   /* two searches in a row chose this arm */
#define HPS_TM_CTL_JUMP_LEVEL 0x1fu

enum { HPS_TM_CTL_A, HPS_TM_CTL_B, HPS_TM_CTL_A2, HPS_TM_CTL_SETTLED, HPS_TM_CTL_SCAN };

/* The scan (hps_tm_ctl_scan): HPS_TM_CTL_SCAN_EP serialized epochs first
 * (scan_i == HPS_TM_CTL_SCAN_N), then as many at each of three levels
 * spread over the range, k = 4, 64 and 1024 (below the cap), and a third
 * at a point that came out dearer than the one below (the scan stops
 * there); one at a level far dearer than the serial point. */
#define HPS_TM_CTL_SCAN_N 3
#define HPS_TM_CTL_SCAN_EP 2
#define HPS_TM_CTL_SCAN_EP_MAX 3
static inline unsigned hps_tm_ctl_scan_level(const hps_tm_ctl_t *c, unsigned i)
{
    unsigned l = 2 + 4 * i;
    return l < c->cap ? l : c->cap;
}

/* Start at level0 (clamped to lmax), never above lmax. */
void hps_tm_ctl_init(hps_tm_ctl_t *c, unsigned level0, unsigned lmax);
/* Begin (right after init) with a scan: the climb then starts from the
 * scanned level that cost least, not from level0. */
void hps_tm_ctl_scan(hps_tm_ctl_t *c);
/* The level to run now (the neighbour while it is being measured, the
 * scan's point while scanning). */
static inline unsigned hps_tm_ctl_level(const hps_tm_ctl_t *c)
{
    if (c->phase == HPS_TM_CTL_SCAN)
        return c->scan_i < HPS_TM_CTL_SCAN_N ? hps_tm_ctl_scan_level(c, c->scan_i) : c->lmax;
    return c->phase == HPS_TM_CTL_B ? (unsigned)(c->level + c->dir) : c->level;
}
/* 1: run the chunks serialized now (at k = 2^lmax, whatever the level). */
static inline int hps_tm_ctl_serial(const hps_tm_ctl_t *c)
{
    if (c->phase == HPS_TM_CTL_SCAN)
        return c->scan_i == HPS_TM_CTL_SCAN_N;
    return c->phase == HPS_TM_CTL_B && c->dir == 0 ? !c->serial : c->serial;
}
void hps_tm_ctl_epoch(hps_tm_ctl_t *c, const hps_tm_ctl_sample_t *s);
/* An epoch in which other threads worked at the site too.  The first such
 * epoch ends the site's lone start: everything the controller measured
 * before it ran alone (on the bias, as a rule) at a fraction of a shared
 * epoch's cost, so the search starts again (with a scan if `scan`, else
 * at the current level), and 1 says so (the epoch that saw them, partly
 * alone, is not fed either).  0 when there was nothing to forget, and for
 * every later epoch: the answer is the site's, kept in the controller, not
 * one leader's (at 8 threads on 2 CPUs the lead changes hands every few
 * ms, and each new leader's first sight of the others is no news). */
int hps_tm_ctl_joined(hps_tm_ctl_t *c, int scan);
/* The loop was away (the program did other work between calls) for long
 * enough that what it measured before no longer pairs with what comes
 * after: a comparison under way (B, A2) starts again from A, and the A a
 * scan left (the other arm counted as tried) starts again with no side
 * tried, once per round of probes (calls that are all short and far apart
 * still finish their rounds).  1 if it restarted. */
int hps_tm_ctl_gap(hps_tm_ctl_t *c);
/* The loop ran at kmax, one section at a time (a backend such as sgl: see
 * coarsen.c), feeding nothing.  When the backend changes, the search goes
 * on from the k that ran (the cap's), afresh; a scan not yet made stays
 * to be made.  1 if the state changed. */
int hps_tm_ctl_pinned(hps_tm_ctl_t *c);
/* While threads outnumber the CPUs, a leader's epoch that costs near what
 * the controller already holds runs longer (coarsen.c): 1 if ns over iters
 * is under HPS_TM_CTL_NEAR times the cheapest cost it holds now (the
 * current level's, the serial arm's in a scan, the settled baseline); 0
 * when it holds none, or for no iterations. */
#define HPS_TM_CTL_NEAR 3.0f
int hps_tm_ctl_near(const hps_tm_ctl_t *c, uint64_t ns, uint64_t iters);
/* 1 if c is a state this machine can be in with levels up to lmax (a copy
 * read back from a site, coarsen.c, is checked before it is used). */
int hps_tm_ctl_valid(const hps_tm_ctl_t *c, unsigned lmax);

#endif
