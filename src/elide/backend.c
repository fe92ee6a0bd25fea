// SPDX-License-Identifier: MIT
/* Backend selection and the injected test backend (see backend.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend.h"
#include "hpsync/elide.h"
#include "../common/env.h"

int hps_elide_backend = HPS_BACKEND_OFF;
hps_elide_cfg_t hps_elide_cfg = { 3, 3, 16, 4096 };
HPS_EXPORT int hps_elide_active;

#define MAX_SEQ 256
static unsigned g_seq[MAX_SEQ];
static unsigned g_seq_len;
static __thread uint32_t t_cursor __attribute__((tls_model("initial-exec")));

static void say(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
}

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

int hps_inject_parse(const char *seq, char *why, unsigned whylen)
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

unsigned hps_inject_begin(void)
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

void hps_inject_push(hps_lock_state_t *s)
{
    /* Deeper than the stack: the hold stays ordinary (still correct). */
    if (t_nholds < MAX_HOLDS)
        t_holds[t_nholds++] = s;
}

int hps_inject_pop(hps_lock_state_t *s)
{
    for (int i = t_nholds - 1; i >= 0; i--) {
        if (t_holds[i] == s) {
            t_holds[i] = t_holds[--t_nholds];
            return 1;
        }
    }
    return 0;
}

int hps_inject_depth(void) { return t_nholds; }
void hps_inject_demote_all(void) { t_nholds = 0; }

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void setup(void)
{
    const hps_settings_t *s = hps_settings();
    hps_elide_cfg.retries = s->elide_retries;
    hps_elide_cfg.fails = s->elide_fails;
    hps_elide_cfg.skip = s->elide_skip;
    hps_elide_cfg.skip_max = s->elide_skip_max < s->elide_skip ? s->elide_skip : s->elide_skip_max;
    const char *b = s->elide_backend;
    int rtm = hps_cpu_rtm_usable();
    char msg[400], why[200];
    if (!b || !*b || !strcmp(b, "auto")) {
        hps_elide_backend = rtm ? HPS_BACKEND_RTM : HPS_BACKEND_OFF;
    } else if (!strcmp(b, "off")) {
        hps_elide_backend = HPS_BACKEND_OFF;
    } else if (!strcmp(b, "rtm")) {
        hps_elide_backend = rtm ? HPS_BACKEND_RTM : HPS_BACKEND_OFF;
        if (!rtm)
            say("hpsync: HPSYNC_ELIDE_BACKEND=rtm but this CPU has no usable RTM; elision off\n");
    } else if (!strncmp(b, "inject:", 7)) {
        if (hps_inject_parse(b + 7, why, sizeof why) == 0) {
            hps_elide_backend = HPS_BACKEND_INJECT;
        } else {
            snprintf(msg, sizeof msg, "hpsync: HPSYNC_ELIDE_BACKEND='%s' %s; using auto\n", b, why);
            say(msg);
            hps_elide_backend = rtm ? HPS_BACKEND_RTM : HPS_BACKEND_OFF;
        }
    } else {
        snprintf(msg, sizeof msg, "hpsync: HPSYNC_ELIDE_BACKEND='%.100s' is not auto, rtm, off or "
                 "inject:SEQ; using auto\n", b);
        say(msg);
        hps_elide_backend = rtm ? HPS_BACKEND_RTM : HPS_BACKEND_OFF;
    }
    hps_elide_active = hps_elide_backend != HPS_BACKEND_OFF;
}

void hps_elide_setup(void) { pthread_once(&g_once, setup); }

/* The library's own users get elision set up at load.  The interposer
 * (which defines hps_pl_is_preload) sets it up only when HPSYNC_ELIDE=1, so
 * a stray HPSYNC_ELIDE_BACKEND does not speak up in programs not eliding. */
extern int hps_pl_is_preload __attribute__((weak));
__attribute__((constructor)) static void elide_ctor(void)
{
    if (&hps_pl_is_preload && hps_pl_is_preload)
        return;
    hps_elide_setup();
}

HPS_EXPORT const char *hps_elide_backend_name(void)
{
    hps_elide_setup();
    return hps_elide_backend == HPS_BACKEND_RTM ? "rtm"
         : hps_elide_backend == HPS_BACKEND_INJECT ? "inject" : "off";
}
