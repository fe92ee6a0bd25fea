// SPDX-License-Identifier: MIT
/*
 * The workload harness's --describe document (harness.c runs the program;
 * this says what it offers).
 */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "harness_int.h"

/* ---- --describe: what the program offers, for `hpsync bench workloads` ------
 *
 * The runner (python/hpsync/bench/workloads/describe.py, docs/workloads.md)
 * learns the variants, figures and sizes from this, so a new workload on
 * the harness needs no change there.  The TM variants are listed once per
 * backend (HPSYNC_TM is per process): "<backend>:tm-k<K>" and
 * "<backend>:tm-dyn", which the program knows as tm-k<K> and tm-dyn.  The
 * default suite sweeps k by powers of 4 (or the workload's tm_k) on sgl,
 * norec and stm; --quick keeps every other k and the controller on norec
 * and stm; htm and hybrid need RTM. */
static const char *const k_desc_backends[] = { "sgl", "norec", "stm", "htm", "hybrid" };
static const long k_desc_k[] = { 1, 4, 16, 64, 256, 1024 };

/* k > 0: tm-k<K>; k == 0: the controller; k < 0: a workload's own TM
 * variant (tm_own). */
static void describe_tm(const char *backend, const char *arg, long k, int quick)
{
    char name[48];
    snprintf(name, sizeof name, "%s:%s", backend, arg);
    int rtm = !strcmp(backend, "htm") || !strcmp(backend, "hybrid");
    hps_json_begin_object(NULL);
    hps_json_str("name", name);
    hps_json_str("arg", arg);
    hps_json_str("kind", "tm");
    hps_json_str("group", backend);
    hps_json_begin_object("env");
    hps_json_str("HPSYNC_TM", backend);
    hps_json_end_object();
    if (rtm) {
        hps_json_begin_array("needs");
        hps_json_str(NULL, "rtm");
        hps_json_end_array();
    }
    if (!strcmp(arg, "tm-serial"))
        hps_json_bool("serial", 1);
    else if (k > 0)
        hps_json_int("granularity", k);
    else if (k == 0)
        hps_json_bool("controller", 1);
    hps_json_bool("quick", quick && strcmp(backend, "sgl") != 0);
    hps_json_end_object();
}

int wl_describe(const wl_workload_t *w)
{
    hps_json_open(NULL, 0);
    hps_json_begin_object(NULL);
    hps_json_str("workload", w->name);
    hps_json_str("title", w->title ? w->title : w->name);
    hps_json_begin_array("variants");
    for (int i = 0; i < w->nvariants; i++) {
        if (i < 32 && (w->tm_own >> i & 1u)) {
            for (size_t b = 0; b < sizeof k_desc_backends / sizeof *k_desc_backends; b++)
                describe_tm(k_desc_backends[b], w->variants[i], -1, 1);
            continue;
        }
        hps_json_begin_object(NULL);
        hps_json_str("name", w->variants[i]);
        hps_json_str("kind", w->kinds ? w->kinds[i] : i == w->mutex_variant ? "lock" : "other");
        hps_json_bool("baseline", i == w->mutex_variant);
        if (w->tm_backend && w->tm_backend[i]) {
            hps_json_begin_object("env");
            hps_json_str("HPSYNC_TM", w->tm_backend[i]);
            hps_json_end_object();
        }
        hps_json_end_object();
    }
    const long *ks = w->tm_k ? w->tm_k : k_desc_k;
    size_t nk = w->tm_k ? (size_t)w->ntm_k : sizeof k_desc_k / sizeof *k_desc_k;
    for (size_t b = 0; !w->no_tm && b < sizeof k_desc_backends / sizeof *k_desc_backends; b++) {
        char arg[32];
        for (size_t i = 0; i < nk; i++) {
            snprintf(arg, sizeof arg, "tm-k%ld", ks[i]);
            describe_tm(k_desc_backends[b], arg, ks[i], i % 2 == 0);
        }
        describe_tm(k_desc_backends[b], "tm-serial", WL_SERIAL_K, 1);
        describe_tm(k_desc_backends[b], "tm-dyn", 0, 1);
    }
    hps_json_end_array();
    const wl_metric_t *m = w->nmetrics ? w->metrics : NULL;
    const char *dim = w->dim ? w->dim : "row";
    hps_json_begin_array("metrics");
    for (int j = 0; j < (m ? w->nmetrics : 1); j++) {
        hps_json_begin_object(NULL);
        hps_json_str("name", m ? m[j].name : "ops_per_sec");
        hps_json_str("unit", m ? m[j].unit : "ops/s");
        hps_json_str("better", m ? m[j].better : "higher");
        hps_json_end_object();
    }
    hps_json_end_array();
    hps_json_begin_array("dims");
    if (*dim)
        hps_json_str(NULL, dim);
    hps_json_end_array();
    if (w->allocators)
        hps_json_bool("allocators", 1);
    hps_json_bool("scale", 1);       /* takes --scale (the runner's --scale) */
    /* A run of scale X equals S runs of scale X / S on the same input:
     * the runner may interleave its variants in S slices (measure.py). */
    hps_json_bool("slices", !w->whole_input);
    /* The rows of each mode, and those the runner must not slice. */
    hps_json_begin_object("rows");
    for (int quick = 0; quick < 2; quick++) {
        hps_json_begin_array(quick ? "quick" : "default");
        for (int i = 0; i < w->nrows; i++)
            if (in_mode(&w->rows[i], quick))
                hps_json_str(NULL, w->rows[i].name);
        hps_json_end_array();
    }
    hps_json_end_object();
    hps_json_begin_array("whole_rows");
    for (int i = 0; i < w->nrows; i++)
        if (w->whole_row && w->whole_row(&w->rows[i]))
            hps_json_str(NULL, w->rows[i].name);
    hps_json_end_array();
    hps_json_begin_object("conflict");
    for (int i = 0; i < w->nrows; i++)
        if (w->rows[i].conflict)
            hps_json_str(w->rows[i].name, w->rows[i].conflict);
    hps_json_end_object();
    hps_json_begin_object("args");
    hps_json_begin_array("default");
    hps_json_end_array();
    hps_json_begin_array("quick");
    hps_json_str(NULL, "--quick");
    hps_json_str(NULL, "--scale");
    hps_json_str(NULL, "0.25");
    hps_json_end_array();
    hps_json_end_object();
    hps_json_begin_object("threads");
    hps_json_begin_array("default");
    hps_json_int(NULL, 1);
    hps_json_int(NULL, 2);
    hps_json_int(NULL, 8);
    hps_json_end_array();
    hps_json_begin_array("quick");
    hps_json_int(NULL, 1);
    hps_json_int(NULL, 2);
    hps_json_end_array();
    hps_json_end_object();
    hps_json_begin_object("seconds");
    hps_json_num("default", w->seconds > 0 ? w->seconds : 0.5);
    hps_json_num("quick", w->seconds > 0 ? w->seconds / 20 : 0.05);
    hps_json_end_object();
    hps_json_begin_array("figures");
    if (w->curve) {
        hps_json_begin_object(NULL);
        hps_json_str("shape", "curve");
        hps_json_str("x", dim);
        hps_json_str("metric", m ? m->name : "ops_per_sec");
        hps_json_str("series", "allocator");
        hps_json_end_object();
    }
    if (!w->no_tm) {
        hps_json_begin_object(NULL);
        hps_json_str("shape", "granularity");
        hps_json_str("metric", "ops_per_sec");
        hps_json_end_object();
    }
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish() ? 1 : 0;
}
