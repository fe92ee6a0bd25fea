/* SPDX-License-Identifier: MIT */
/*
 * compute_common.h - what the compute, membw and timer probes share: the
 * probe command line (--quick, --threads LIST, --mappings LIST, --reps),
 * the document frame of the characterization schema, curve rows, and a
 * "team" of pinned threads that run timed repetitions in lock step.
 *
 * Header-only (static functions) so each probe stays one translation unit
 * and bench/common keeps its promise of being the only shared library.
 * Promise: every argument error is one line on stderr and exit 2.
 */
#ifndef HPS_COMPUTE_COMMON_H
#define HPS_COMPUTE_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "hps_dist.h"
#include "hps_pin.h"

#define PROBE_MAX_POINTS 64
#define PROBE_MAX_REPS 100

typedef struct probe_list {
    int n;
    int v[PROBE_MAX_POINTS];
} probe_list_t;

typedef struct probe_maps {
    int n;
    hps_map_t v[3];
} probe_maps_t;

/*
 * Default thread counts: 1, then powers of two and the 1.5x steps between
 * them (2, 3, 4, 6, 8, 12, ...) up to twice the PUs, so oversubscription is
 * always on the curve.  1,2,3,4 on 2 PUs.
 */
static inline void probe_default_threads(int pus, probe_list_t *l)
{
    int max = 2 * (pus > 0 ? pus : 1);
    l->n = 0;
    l->v[l->n++] = 1;
    for (int p = 2; p <= max && l->n < PROBE_MAX_POINTS - 1; p *= 2) {
        l->v[l->n++] = p;
        if (p + p / 2 <= max)
            l->v[l->n++] = p + p / 2;
    }
}

/* "1,2,4": distinct whole numbers in 1..HPS_BENCH_MAX_THREADS, in order. */
static inline void probe_parse_threads(const char *opt, const char *s, probe_list_t *l)
{
    l->n = 0;
    if (!s || !*s) {
        hps_bench_log("%s needs a comma-separated list of thread counts", opt);
        exit(2);
    }
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || (*end && *end != ',') || v < 1 || v > HPS_BENCH_MAX_THREADS ||
            l->n >= PROBE_MAX_POINTS) {
            hps_bench_log("%s needs up to %d thread counts in 1..%d separated by commas, got '%s'",
                          opt, PROBE_MAX_POINTS, HPS_BENCH_MAX_THREADS, s);
            exit(2);
        }
        l->v[l->n++] = (int)v;
        p = *end ? end + 1 : end;
        if (*end && !*p) {
            hps_bench_log("%s has a trailing comma: '%s'", opt, s);
            exit(2);
        }
    }
}

/* "compact,os": each of compact, scatter, os at most once. */
static inline void probe_parse_mappings(const char *opt, const char *s, probe_maps_t *m)
{
    m->n = 0;
    char buf[64];
    if (!s || !*s || strlen(s) >= sizeof buf) {
        hps_bench_log("%s needs a comma-separated list of compact, scatter, os", opt);
        exit(2);
    }
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    int seen = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        hps_map_t v;
        if (hps_map_parse(tok, &v) != 0 || (seen & (1 << v))) {
            hps_bench_log("%s: '%s' is not one of compact, scatter, os (each once)", opt, tok);
            exit(2);
        }
        seen |= 1 << v;
        m->v[m->n++] = v;
    }
    if (m->n == 0 || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")) {
        hps_bench_log("%s needs a comma-separated list of compact, scatter, os, got '%s'", opt, s);
        exit(2);
    }
}

static inline void probe_default_mappings(probe_maps_t *m)
{
    m->n = 3;
    m->v[0] = HPS_MAP_COMPACT;
    m->v[1] = HPS_MAP_SCATTER;
    m->v[2] = HPS_MAP_OS;
}

/* Open the document: the fields every probe writes before its params. */
static inline void probe_begin_document(const char *probe)
{
    hps_json_begin_object(NULL);
    hps_bench_context();                 /* "schema_version" and "context" */
    hps_json_str("probe", probe);
}

static inline void probe_params_lists(const probe_list_t *threads, const probe_maps_t *maps)
{
    hps_json_begin_array("threads");
    for (int i = 0; i < threads->n; i++)
        hps_json_int(NULL, threads->v[i]);
    hps_json_end_array();
    hps_json_begin_array("mappings");
    for (int i = 0; i < maps->n; i++)
        hps_json_str(NULL, hps_map_name(maps->v[i]));
    hps_json_end_array();
}

/*
 * One curve row; value is the median of the repetitions (so one preempted
 * repetition on a shared machine cannot move the curve).  Any extra keys
 * (a checksum, say) are written by the caller before probe_end_row().
 */
static inline void probe_curve_row(const char *metric, hps_map_t m, int threads, const double *reps,
                            int n, const char *unit)
{
    double tmp[PROBE_MAX_REPS];
    memcpy(tmp, reps, (size_t)n * sizeof *tmp);
    hps_json_begin_object(NULL);
    hps_json_str("kind", "curve");
    hps_json_str("metric", metric);
    hps_json_str("mapping", hps_map_name(m));
    hps_json_int("threads", threads);
    hps_json_num("value", hps_bench_median(tmp, (size_t)n));
    hps_json_str("unit", unit);
    hps_json_num_array("reps", reps, n);
}

static inline void probe_end_row(void) { hps_json_end_object(); }

static inline void probe_scalar_row(const char *metric, double value, const char *unit)
{
    hps_json_begin_object(NULL);
    hps_json_str("kind", "scalar");
    hps_json_str("metric", metric);
    hps_json_num("value", value);
    hps_json_str("unit", unit);
    hps_json_end_object();
}

/* ---- a team of pinned threads running repetitions in lock step ---------- */

struct probe_team;

typedef struct probe_member {
    pthread_t tid;
    int index, cpu;
    struct probe_team *team;
    uint64_t start_ns[PROBE_MAX_REPS], end_ns[PROBE_MAX_REPS];
    void *state;                  /* the probe's per-thread data */
    int failed;
} __attribute__((aligned(64))) probe_member_t;

typedef struct probe_team {
    int n, reps;
    pthread_barrier_t bar;
    /* Called once in the worker, after pinning (first touch goes here). */
    int (*setup)(probe_member_t *m);
    /* The timed work of one repetition. */
    void (*pass)(probe_member_t *m, int rep);
    /* Called once in the worker after the last repetition. */
    void (*teardown)(probe_member_t *m);
    probe_member_t *members;
} probe_team_t;

static inline void *probe_member_main(void *arg)
{
    probe_member_t *m = arg;
    probe_team_t *t = m->team;
    int rc = hps_pin_self(m->cpu);
    if (rc != 0) {
        hps_bench_log("cannot pin thread %d to CPU %d: %s", m->index, m->cpu, strerror(rc));
        m->failed = 1;
    }
    if (!m->failed && t->setup && t->setup(m) != 0)
        m->failed = 1;
    /* Everybody reaches every barrier, failed or not, so nobody hangs. */
    pthread_barrier_wait(&t->bar);
    for (int r = 0; r < t->reps; r++) {
        pthread_barrier_wait(&t->bar);
        m->start_ns[r] = hps_bench_now_ns();
        if (!m->failed)
            t->pass(m, r);
        m->end_ns[r] = hps_bench_now_ns();
    }
    if (t->teardown)
        t->teardown(m);
    return NULL;
}

/*
 * Run the team of n threads placed by mapping map; secs[r] is the wall time
 * of repetition r from the first thread's start to the last one's end (so
 * a preempted straggler is charged, as it would be in a parallel program).
 * Returns 0, or 1 after logging.  The caller sets n, reps and the callbacks
 * and may read members[i].state until it calls probe_team_free().
 */
static inline int probe_team_run(probe_team_t *t, hps_map_t map, double *secs, void **states)
{
    int cpus[HPS_BENCH_MAX_THREADS];
    if (hps_map_cpus(map, t->n, cpus) != 0) {
        hps_bench_log("cannot read the topology to place threads");
        return 1;
    }
    t->members = aligned_alloc(64, sizeof *t->members * (size_t)t->n);
    if (!t->members) {
        hps_bench_log("out of memory");
        return 1;
    }
    memset(t->members, 0, sizeof *t->members * (size_t)t->n);
    if (pthread_barrier_init(&t->bar, NULL, (unsigned)t->n) != 0) {
        hps_bench_log("cannot create a barrier");
        return 1;
    }
    int created = 0, fail = 0;
    for (int i = 0; i < t->n; i++) {
        probe_member_t *m = &t->members[i];
        m->index = i;
        m->cpu = cpus[i];
        m->team = t;
        m->state = states ? states[i] : NULL;
    }
    for (; created < t->n; created++) {
        int rc = pthread_create(&t->members[created].tid, NULL, probe_member_main,
                                &t->members[created]);
        if (rc != 0) {
            hps_bench_log("cannot create thread %d of %d: %s", created + 1, t->n, strerror(rc));
            /* The barrier counts n; without all of them nobody can finish. */
            exit(1);
        }
    }
    for (int i = 0; i < t->n; i++) {
        pthread_join(t->members[i].tid, NULL);
        fail |= t->members[i].failed;
    }
    pthread_barrier_destroy(&t->bar);
    for (int r = 0; r < t->reps; r++) {
        uint64_t s = UINT64_MAX, e = 0;
        for (int i = 0; i < t->n; i++) {
            s = t->members[i].start_ns[r] < s ? t->members[i].start_ns[r] : s;
            e = t->members[i].end_ns[r] > e ? t->members[i].end_ns[r] : e;
        }
        secs[r] = e > s ? (double)(e - s) / 1e9 : 1e-9;
    }
    return fail;
}

static inline void probe_team_free(probe_team_t *t)
{
    free(t->members);
    t->members = NULL;
}

#endif
