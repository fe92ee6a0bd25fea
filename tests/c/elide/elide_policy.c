// SPDX-License-Identifier: MIT
/*
 * Unit tests of the pure elision policy (src/elide/policy.h), one group per
 * run so that a failing rule names itself in the CTest name:
 *   elide_policy decide | cause | state | probe
 * Every group is a table: one row per abort status and attempt boundary,
 * or per state-word transition.  All mismatching rows are printed on
 * stdout, then one FAIL line names how many and the first.
 */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "hpsync/elide.h"
#include "elide/policy.h"

/* Statuses as the hardware (or the injected backend) reports them. */
#define CODE(c)  ((unsigned)(c) << 24)
#define BUSY     (HPS_TX_EXPLICIT | CODE(HPS_ABORT_BUSY))
#define XCODE(c) (HPS_TX_EXPLICIT | CODE(c))
#define RETRY    (HPS_TX_CONFLICT | HPS_TX_RETRY)

/* State word from its fields (layout documented in policy.h). */
#define SW(skip, fails, backoff) (((uint32_t)(backoff) << 24) | ((uint32_t)(fails) << 16) | (uint32_t)(skip))

static const hps_elide_cfg_t DEF = { .retries = 3, .fails = 3, .skip = 16, .skip_max = 4096 };

static unsigned g_bad;
static char g_first[200];

static void mismatch(const char *fmt, const char *row, const char *got, const char *want)
{
    char line[200];
    snprintf(line, sizeof line, fmt, row, got, want);
    printf("  mismatch: %s\n", line);
    if (g_bad++ == 0)
        snprintf(g_first, sizeof g_first, "%s", line);
}

static void finish(const char *group, unsigned rows)
{
    if (g_bad)
        hps_test_fail("%u of %u %s rows wrong; first: %s", g_bad, rows, group, g_first);
    printf("elide_policy %s: %u rows ok\n", group, rows);
}

/* ---- decide: status x attempt -> action ----------------------------------- */

static const char *action_name(hps_elide_action_t a)
{
    return a == HPS_ELIDE_RETRY ? "RETRY" : a == HPS_ELIDE_WAIT_RETRY ? "WAIT_RETRY"
         : a == HPS_ELIDE_LOCK ? "LOCK" : "?";
}

static void group_decide(void)
{
    static const hps_elide_cfg_t R0 = { 0, 3, 16, 4096 }, R1 = { 1, 3, 16, 4096 };
    static const struct {
        const char *name;
        const hps_elide_cfg_t *cfg;
        unsigned status, attempt;
        hps_elide_action_t want;
    } rows[] = {
        /* RETRY bit: retried while attempt < retries, then the lock. */
        { "retry a0", &DEF, RETRY, 0, HPS_ELIDE_RETRY },
        { "retry a2 (last retry)", &DEF, RETRY, 2, HPS_ELIDE_RETRY },
        { "retry a3 (= retries)", &DEF, RETRY, 3, HPS_ELIDE_LOCK },
        { "retry a100", &DEF, RETRY, 100, HPS_ELIDE_LOCK },
        { "retry bit without conflict", &DEF, HPS_TX_RETRY, 0, HPS_ELIDE_RETRY },
        { "retry, retries=0", &R0, RETRY, 0, HPS_ELIDE_LOCK },
        { "retry a0, retries=1", &R1, RETRY, 0, HPS_ELIDE_RETRY },
        { "retry a1, retries=1", &R1, RETRY, 1, HPS_ELIDE_LOCK },
        /* Conflict without RETRY: the hardware says a retry will not help. */
        { "conflict a0", &DEF, HPS_TX_CONFLICT, 0, HPS_ELIDE_LOCK },
        /* Capacity: never fits, even if RETRY is set too. */
        { "capacity a0", &DEF, HPS_TX_CAPACITY, 0, HPS_ELIDE_LOCK },
        { "capacity+retry a0", &DEF, HPS_TX_CAPACITY | RETRY, 0, HPS_ELIDE_LOCK },
        /* Busy: wait outside, then retry, up to retries. */
        { "busy a0", &DEF, BUSY, 0, HPS_ELIDE_WAIT_RETRY },
        { "busy a2", &DEF, BUSY, 2, HPS_ELIDE_WAIT_RETRY },
        { "busy a3 (= retries)", &DEF, BUSY, 3, HPS_ELIDE_LOCK },
        { "busy+retry a0", &DEF, BUSY | HPS_TX_RETRY, 0, HPS_ELIDE_WAIT_RETRY },
        { "busy, retries=0", &R0, BUSY, 0, HPS_ELIDE_LOCK },
        /* Other explicit codes: our own "cannot be transactional" aborts. */
        { "explicit 7", &DEF, XCODE(7), 0, HPS_ELIDE_LOCK },
        { "explicit 0", &DEF, XCODE(0), 0, HPS_ELIDE_LOCK },
        { "explicit COND", &DEF, XCODE(HPS_ABORT_COND), 0, HPS_ELIDE_LOCK },
        { "explicit TRYLOCK", &DEF, XCODE(HPS_ABORT_TRYLOCK), 0, HPS_ELIDE_LOCK },
        { "explicit 7 + retry bit", &DEF, XCODE(7) | HPS_TX_RETRY, 0, HPS_ELIDE_LOCK },
        /* Everything else gives up at once. */
        { "debug", &DEF, HPS_TX_DEBUG, 0, HPS_ELIDE_LOCK },
        { "nested", &DEF, HPS_TX_NESTED, 0, HPS_ELIDE_LOCK },
        { "zero (interrupt)", &DEF, 0, 0, HPS_ELIDE_LOCK },
        { "busy code without EXPLICIT bit", &DEF, CODE(HPS_ABORT_BUSY), 0, HPS_ELIDE_LOCK },
    };
    unsigned n = sizeof rows / sizeof rows[0];
    for (unsigned i = 0; i < n; i++) {
        hps_elide_action_t got = hps_elide_decide(rows[i].cfg, rows[i].status, rows[i].attempt);
        if (got != rows[i].want)
            mismatch("decide(%s) = %s, want %s", rows[i].name, action_name(got), action_name(rows[i].want));
    }
    finish("decide", n);
}

/* ---- cause: status -> stats slot ---------------------------------------- */

static const char *cause_name(int c)
{
    static const char *names[] = { "CONFLICT", "CAPACITY", "BUSY", "EXPLICIT", "OTHER" };
    return c >= 0 && c < HPS_ELIDE_NCAUSES ? names[c] : "out of range";
}

static void group_cause(void)
{
    static const struct { const char *name; unsigned status; int want; } rows[] = {
        { "conflict", HPS_TX_CONFLICT, HPS_ELIDE_ABORT_CONFLICT },
        { "conflict+retry", RETRY, HPS_ELIDE_ABORT_CONFLICT },
        { "retry alone", HPS_TX_RETRY, HPS_ELIDE_ABORT_CONFLICT },
        { "capacity", HPS_TX_CAPACITY, HPS_ELIDE_ABORT_CAPACITY },
        { "capacity+retry", HPS_TX_CAPACITY | RETRY, HPS_ELIDE_ABORT_CAPACITY },
        { "busy", BUSY, HPS_ELIDE_ABORT_BUSY },
        { "explicit 7", XCODE(7), HPS_ELIDE_ABORT_EXPLICIT },
        { "explicit 0", XCODE(0), HPS_ELIDE_ABORT_EXPLICIT },
        { "explicit COND", XCODE(HPS_ABORT_COND), HPS_ELIDE_ABORT_EXPLICIT },
        { "explicit TRYLOCK", XCODE(HPS_ABORT_TRYLOCK), HPS_ELIDE_ABORT_EXPLICIT },
        { "debug", HPS_TX_DEBUG, HPS_ELIDE_ABORT_OTHER },
        { "nested", HPS_TX_NESTED, HPS_ELIDE_ABORT_OTHER },
        { "zero", 0, HPS_ELIDE_ABORT_OTHER },
    };
    unsigned n = sizeof rows / sizeof rows[0];
    for (unsigned i = 0; i < n; i++) {
        int got = hps_elide_cause(rows[i].status);
        if (got != rows[i].want)
            mismatch("cause(%s) = %s, want %s", rows[i].name, cause_name(got), cause_name(rows[i].want));
    }
    finish("cause", n);
}

/* ---- state word transitions --------------------------------------------- */

enum op { FALLBACK, COMMIT, TAKE };

typedef struct state_row {
    const char *name;
    const hps_elide_cfg_t *cfg;
    enum op op;
    uint32_t in, want;
    int want_ret;               /* TAKE only: took a skip */
} state_row_t;

static void fmt_state(char *buf, size_t n, uint32_t v, int ret, enum op op)
{
    int k = snprintf(buf, n, "skip=%u fails=%u backoff=%u", HPS_ELIDE_SKIP(v), HPS_ELIDE_FAILS(v),
                     HPS_ELIDE_BACKOFF(v));
    if (op == TAKE && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " ret=%d", ret);
}

static unsigned run_state_rows(const state_row_t *rows, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const state_row_t *r = &rows[i];
        uint32_t v = r->in;
        int ret = 0;
        switch (r->op) {
        case FALLBACK: v = hps_elide_after_fallback(r->cfg, v); break;
        case COMMIT:   v = hps_elide_after_commit(v); break;
        case TAKE:     ret = hps_elide_take_skip(&v); break;
        }
        if (v != r->want || (r->op == TAKE && ret != r->want_ret)) {
            char got[80], want[80];
            fmt_state(got, sizeof got, v, ret, r->op);
            fmt_state(want, sizeof want, r->want, r->want_ret, r->op);
            mismatch("%s: %s, want %s", r->name, got, want);
        }
    }
    return n;
}

/*
 * Simulate acquisitions of one lock whose every elision fails, with the
 * state functions alone: 'A' = attempted (and fell back), 'S' = skipped.
 */
static void run_pattern(const char *name, const hps_elide_cfg_t *cfg, const char *want)
{
    char got[128];
    uint32_t v = 0;
    size_t n = strlen(want);
    for (size_t i = 0; i < n && i < sizeof got - 1; i++) {
        if (hps_elide_take_skip(&v)) {
            got[i] = 'S';
        } else {
            got[i] = 'A';
            v = hps_elide_after_fallback(cfg, v);
        }
    }
    got[n < sizeof got ? n : sizeof got - 1] = 0;
    if (strcmp(got, want) != 0)
        mismatch("%s: %s, want %s", name, got, want);
}

static void group_state(void)
{
    static const hps_elide_cfg_t F1 = { 3, 1, 16, 4096 }, F255 = { 3, 255, 16, 4096 };
    static const hps_elide_cfg_t BIG = { 3, 3, 65535, 65535 };
    static const state_row_t rows[] = {
        /* Failures count up; the FAILS-th starts a skip period of SKIP. */
        { "fallback 1 of 3", &DEF, FALLBACK, SW(0, 0, 0), SW(0, 1, 0), 0 },
        { "fallback 2 of 3", &DEF, FALLBACK, SW(0, 1, 0), SW(0, 2, 0), 0 },
        { "fallback 3 of 3 starts skipping", &DEF, FALLBACK, SW(0, 2, 0), SW(16, 0, 1), 0 },
        { "fails=1 skips at once", &F1, FALLBACK, SW(0, 0, 0), SW(16, 0, 1), 0 },
        { "fails=255 at 254", &F255, FALLBACK, SW(0, 254, 0), SW(16, 0, 1), 0 },
        /* Each repeated period doubles, up to SKIP_MAX. */
        { "second period doubles", &DEF, FALLBACK, SW(0, 2, 1), SW(32, 0, 2), 0 },
        { "third period", &DEF, FALLBACK, SW(0, 2, 2), SW(64, 0, 3), 0 },
        { "reaches skip_max", &DEF, FALLBACK, SW(0, 2, 8), SW(4096, 0, 9), 0 },
        { "capped at skip_max", &DEF, FALLBACK, SW(0, 2, 9), SW(4096, 0, 10), 0 },
        { "backoff saturates, still capped", &DEF, FALLBACK, SW(0, 2, 16), SW(4096, 0, 16), 0 },
        { "16-bit skip field capped", &BIG, FALLBACK, SW(0, 2, 1), SW(65535, 0, 2), 0 },
        /* Skipping consumes one per acquisition, and only when skipping. */
        { "take first skip", &DEF, TAKE, SW(16, 0, 1), SW(15, 0, 1), 1 },
        { "take last skip", &DEF, TAKE, SW(1, 0, 1), SW(0, 0, 1), 1 },
        { "take with none left", &DEF, TAKE, SW(0, 2, 3), SW(0, 2, 3), 0 },
        { "take on a fresh lock", &DEF, TAKE, 0, 0, 0 },
        /* A commit forgets failures and backoff. */
        { "commit after failures", &DEF, COMMIT, SW(0, 2, 0), 0, 0 },
        { "commit resets backoff", &DEF, COMMIT, SW(0, 0, 5), 0, 0 },
        { "commit on a fresh lock", &DEF, COMMIT, 0, 0, 0 },
    };
    unsigned n = run_state_rows(rows, sizeof rows / sizeof rows[0]);
    /* The first period from a fresh lock: three attempts, SKIP skips, a probe. */
    run_pattern("first period, fails=3 skip=16", &DEF, "AAASSSSSSSSSSSSSSSSA");
    finish("state", n + 1);
}

/*
 * After a skip period the next acquisition is a probe; a failed probe
 * doubles the skip at once (capped at SKIP_MAX), without FAILS new
 * failures first.  Kept apart from "state" so that the rule names itself.
 */
static void group_probe(void)
{
    static const hps_elide_cfg_t SMALL = { 3, 3, 2, 8 };
    static const state_row_t rows[] = {
        { "failed probe after period 1 doubles", &DEF, FALLBACK, SW(0, 0, 1), SW(32, 0, 2), 0 },
        { "failed probe after period 2 doubles", &DEF, FALLBACK, SW(0, 0, 2), SW(64, 0, 3), 0 },
        { "failed probe at the cap stays capped", &DEF, FALLBACK, SW(0, 0, 9), SW(4096, 0, 10), 0 },
    };
    unsigned n = run_state_rows(rows, sizeof rows / sizeof rows[0]);
    /* fails=3 skip=2 max=8: AAA, 2 skips, probe, 4, probe, 8, probe, 8, probe. */
    run_pattern("periods 2,4,8,8 with probes", &SMALL, "AAASSASSSSASSSSSSSSASSSSSSSSA");
    finish("probe", n + 1);
}

static const hps_test_case_t groups[] = {
    { "decide", .run = group_decide },
    { "cause", .run = group_cause },
    { "state", .run = group_state },
    { "probe", .run = group_probe },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("elide_policy", groups, 20, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
