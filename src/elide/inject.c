// SPDX-License-Identifier: MIT
/*
 * The injected elision backend (see backend.h and docs/elision.md): replays
 * a sequence of begin outcomes so the policy can be tested end to end on
 * machines without RTM.  A "started" section holds its lock for real.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "hpsync/elide.h"

#define MAX_SEQ 256
static unsigned g_seq[MAX_SEQ];
static unsigned g_seq_len;
static __thread uint32_t t_cursor __attribute__((tls_model("initial-exec")));

/* One token: NAME or NAME*COUNT; NAME is commit, conflict, retry,
 * capacity, busy, explicit:N, debug, nested or zero. */
static int parse_token(const char *tok, size_t len, unsigned *out, unsigned *count)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, tok, len);
    buf[len] = 0;
    *count = 1;
    char *star = strchr(buf, '*');
    if (star) {
        char *end;
        unsigned long n = strtoul(star + 1, &end, 10);
        if (*end || n == 0 || n > MAX_SEQ)
            return -1;
        *count = (unsigned)n;
        *star = 0;
    }
    if (!strcmp(buf, "commit")) *out = HPS_TX_STARTED;
    else if (!strcmp(buf, "conflict")) *out = HPS_TX_CONFLICT;
    else if (!strcmp(buf, "retry")) *out = HPS_TX_CONFLICT | HPS_TX_RETRY;
    else if (!strcmp(buf, "capacity")) *out = HPS_TX_CAPACITY;
    else if (!strcmp(buf, "busy")) *out = HPS_TX_EXPLICIT | (HPS_ABORT_BUSY << 24);
    else if (!strcmp(buf, "debug")) *out = HPS_TX_DEBUG;
    else if (!strcmp(buf, "nested")) *out = HPS_TX_NESTED;
    else if (!strcmp(buf, "zero")) *out = 0;
    else if (!strncmp(buf, "explicit:", 9)) {
        char *end;
        unsigned long code = strtoul(buf + 9, &end, 0);
        if (!buf[9] || *end || code > 255)
            return -1;
        *out = HPS_TX_EXPLICIT | ((unsigned)code << 24);
    } else
        return -1;
    return 0;
}

int hps_elide_inject_parse(const char *seq, char *why, unsigned whylen)
{
    unsigned n = 0;
    const char *p = seq;
    if (!*p) {
        snprintf(why, whylen, "is an empty sequence");
        return -1;
    }
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        unsigned st, count;
        if (parse_token(p, len, &st, &count) != 0) {
            snprintf(why, whylen, "has a bad step '%.*s' (commit, conflict, retry, capacity, busy, "
                     "explicit:N, debug, nested, zero; optional *COUNT)", (int)(len < 40 ? len : 40), p);
            return -1;
        }
        for (unsigned i = 0; i < count; i++) {
            if (n == MAX_SEQ) {
                snprintf(why, whylen, "is longer than %d steps", MAX_SEQ);
                return -1;
            }
            g_seq[n++] = st;
        }
        p += len + (e != NULL);
    }
    g_seq_len = n;
    return 0;
}

static unsigned next_outcome(void)
{
    /* Each thread replays the sequence from its start, on its own cursor:
     * reproducible per thread, and no shared counter for threads to queue
     * on.  The sequence itself is read-only after setup. */
    if (hps_unlikely(g_seq_len == 0))
        return 0;
    return g_seq[t_cursor++ % g_seq_len];
}

/* Emulated elided holds of this thread: a small stack of lock states. */
#define MAX_HOLDS 32
static __thread hps_lock_state_t *t_holds[MAX_HOLDS] __attribute__((tls_model("initial-exec")));
static __thread int t_nholds __attribute__((tls_model("initial-exec")));

static void push(hps_lock_state_t *s)
{
    /* Deeper than the stack: the hold stays ordinary (still correct). */
    if (t_nholds < MAX_HOLDS)
        t_holds[t_nholds++] = s;
}

static int pop(hps_lock_state_t *s)
{
    for (int i = t_nholds - 1; i >= 0; i--) {
        if (t_holds[i] == s) {
            t_holds[i] = t_holds[--t_nholds];
            return 1;
        }
    }
    return 0;
}


static unsigned inject_begin(hps_lock_state_t *s, hps_lock_algo_t a)
{
    unsigned st = next_outcome();
    if (st == HPS_TX_STARTED) {
        /* Emulation: hold the lock for real, count the section as elided.
         * A held lock answers as RTM would (busy abort), never by blocking
         * here: the caller may be a timed lock with a deadline to keep. */
        if (!hps_lockstate_trylock(s, a))
            return HPS_TX_EXPLICIT | (HPS_ABORT_BUSY << 24);
        push(s);
    }
    return st;
}

static unsigned inject_end(hps_lock_state_t *s, hps_lock_algo_t a)
{
    (void)a;
    /* Emulated holds are real: always released, counted if still elided. */
    return pop(s) ? HPS_ELIDE_END_COMMIT | HPS_ELIDE_END_RELEASE : HPS_ELIDE_END_RELEASE;
}

static int inject_test(void) { return t_nholds > 0; }

static void inject_abort(unsigned code)
{
    /* Nothing to roll back: the holds are real.  Before a blocking call
     * they stop counting as elided (with RTM the section would re-run with
     * the lock held); a trylock inside asks the real lock, which answers
     * right, so the holds stay as they are. */
    if (code == HPS_ABORT_COND)
        t_nholds = 0;
}

const hps_elide_ops_t hps_elide_ops_inject = {
    .name = "inject", .speculative = 0,
    .begin = inject_begin, .end = inject_end, .abort = inject_abort, .test = inject_test,
};
