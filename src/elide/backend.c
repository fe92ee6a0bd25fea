// SPDX-License-Identifier: MIT
/* Backend selection, and the "off" backend (see backend.h). */
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

/* Off: nothing speculates.  The layer is not entered while elision is
 * off (hps_elide_active is 0); called directly, every begin answers "abort,
 * status 0", which the policy answers by taking the lock. */
static unsigned off_begin(hps_lock_state_t *s, hps_lock_algo_t a)
{
    (void)s; (void)a;
    return 0;
}
static unsigned off_end(hps_lock_state_t *s, hps_lock_algo_t a)
{
    (void)s; (void)a;
    return HPS_ELIDE_END_RELEASE;
}
static void off_abort(unsigned code) { (void)code; }
static int off_test(void) { return 0; }

const hps_elide_ops_t hps_elide_ops_off = {
    .name = "off", .speculative = 0,
    .begin = off_begin, .end = off_end, .abort = off_abort, .test = off_test,
};

const hps_elide_ops_t *hps_elide_ops = &hps_elide_ops_off;
hps_elide_cfg_t hps_elide_cfg = { 3, 3, 16, 4096 };
HPS_EXPORT int hps_elide_active;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void say(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
}

static void setup(void)
{
    const hps_settings_t *s = hps_settings();
    hps_elide_cfg.retries = s->elide_retries;
    hps_elide_cfg.fails = s->elide_fails;
    hps_elide_cfg.skip = s->elide_skip;
    hps_elide_cfg.skip_max = s->elide_skip_max < s->elide_skip ? s->elide_skip : s->elide_skip_max;
    const char *b = s->elide_backend;
    int rtm = hps_cpu_rtm_usable();
    /* RTM only when CPUID says it is usable: the one gate for XBEGIN. */
    const hps_elide_ops_t *auto_ops = rtm ? &hps_elide_ops_rtm : &hps_elide_ops_off;
    char msg[400], why[200];
    if (!b || !*b || !strcmp(b, "auto")) {
        hps_elide_ops = auto_ops;
    } else if (!strcmp(b, "off")) {
        hps_elide_ops = &hps_elide_ops_off;
    } else if (!strcmp(b, "rtm")) {
        hps_elide_ops = auto_ops;
        if (!rtm)
            say("hpsync: HPSYNC_ELIDE_BACKEND=rtm but this CPU has no usable RTM; elision off\n");
    } else if (!strncmp(b, "inject:", 7)) {
        if (hps_elide_inject_parse(b + 7, why, sizeof why) == 0) {
            hps_elide_ops = &hps_elide_ops_inject;
        } else {
            snprintf(msg, sizeof msg, "hpsync: HPSYNC_ELIDE_BACKEND='%s' %s; using auto\n", b, why);
            say(msg);
            hps_elide_ops = auto_ops;
        }
    } else {
        snprintf(msg, sizeof msg, "hpsync: HPSYNC_ELIDE_BACKEND='%.100s' is not auto, rtm, off or "
                 "inject:SEQ; using auto\n", b);
        say(msg);
        hps_elide_ops = auto_ops;
    }
    hps_elide_active = hps_elide_ops != &hps_elide_ops_off;
}

void hps_elide_setup(void) { pthread_once(&g_once, setup); }

/* The library's own users get elision set up at load.  The interposer
 * (which defines hps_preload_is_preload) sets it up only when HPSYNC_ELIDE=1, so
 * a stray HPSYNC_ELIDE_BACKEND does not speak up in programs not eliding. */
extern int hps_preload_is_preload __attribute__((weak));
__attribute__((constructor)) static void elide_ctor(void)
{
    if (&hps_preload_is_preload && hps_preload_is_preload)
        return;
    hps_elide_setup();
}

/* After setup, so HPSYNC_ELIDE_RETRIES does not overwrite it later; the
 * policy reads the count on every abort, so the next one obeys it. */
HPS_EXPORT void hps_elide_set_retries(unsigned n)
{
    hps_elide_setup();
    hps_elide_cfg.retries = n > 100 ? 100 : n;
}

HPS_EXPORT unsigned hps_elide_retries(void)
{
    hps_elide_setup();
    return hps_elide_cfg.retries;
}

HPS_EXPORT const char *hps_elide_backend_name(void)
{
    hps_elide_setup();
    return hps_elide_ops->name;
}
