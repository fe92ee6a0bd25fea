// SPDX-License-Identifier: MIT
/* The characterization probes' shared frame (see hps_probe.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hps_probe.h"

/* ---- command line ------------------------------------------------------- */

/* "1,2,4": whole numbers in 1..HPS_BENCH_MAX_THREADS, in order. */
static void parse_threads(const char *opt, const char *s, hps_probe_list_t *l)
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
            l->n >= HPS_PROBE_MAX_POINTS) {
            hps_bench_log("%s needs up to %d thread counts in 1..%d separated by commas, got '%s'",
                          opt, HPS_PROBE_MAX_POINTS, HPS_BENCH_MAX_THREADS, s);
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
static void parse_mappings(const char *opt, const char *s, hps_probe_maps_t *m)
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

static const hps_probe_opt_t *find_opt(const hps_probe_opt_t *o, const char *name)
{
    for (; o && o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

/* Every option not given gets its profile's default (see hps_probe_opt_t). */
static void set_defaults(const hps_probe_opt_t *o, const unsigned char *given, int quick)
{
    for (int i = 0; o && o[i].name && i < HPS_PROBE_MAX_OPTS; i++)
        if (!given[i] && (o[i].quick || o[i].full))
            *o[i].val = quick ? o[i].quick : o[i].full;
}

int hps_probe_parse(const hps_probe_cli_t *c, int argc, char **argv)
{
    int quick = 0;
    unsigned char given[HPS_PROBE_MAX_OPTS] = { 0 };
    if (c->maps) {
        c->maps->n = 3;
        c->maps->v[0] = HPS_MAP_COMPACT;
        c->maps->v[1] = HPS_MAP_SCATTER;
        c->maps->v[2] = HPS_MAP_OS;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const hps_probe_opt_t *o;
        if (!strcmp(a, "--quick")) {
            quick = 1;
            continue;
        }
        if (c->help && !strcmp(a, "--help")) {
            fprintf(stderr, "usage: %s\n", c->usage);
            exit(0);
        }
        if (c->threads && !strcmp(a, "--threads")) {
            parse_threads(a, v, c->threads);
        } else if (c->maps && !strcmp(a, "--mappings")) {
            parse_mappings(a, v, c->maps);
        } else if ((o = find_opt(c->opts, a)) != NULL) {
            *o->val = hps_bench_parse_num(a, v, o->lo, o->hi);
            if (o - c->opts < HPS_PROBE_MAX_OPTS)
                given[o - c->opts] = 1;
        } else {
            if (c->help)
                hps_bench_log("unknown or incomplete argument '%s' (try --help)", a);
            else
                hps_bench_log("unknown or incomplete argument '%s' (usage: %s)", a, c->usage);
            exit(2);
        }
        i++;
    }
    set_defaults(c->opts, given, quick);
    return quick;
}

void hps_probe_default_threads(int pus, hps_probe_list_t *l)
{
    int max = 2 * (pus > 0 ? pus : 1);
    l->n = 0;
    l->v[l->n++] = 1;
    for (int p = 2; p <= max && l->n < HPS_PROBE_MAX_POINTS - 1; p *= 2) {
        l->v[l->n++] = p;
        if (p + p / 2 <= max)
            l->v[l->n++] = p + p / 2;
    }
}

void hps_probe_topo_threads(hps_topo_t *topo, hps_probe_list_t *threads)
{
    if (hps_bench_topo(topo) != 0)
        hps_bench_log("hwloc could not load the topology; assuming 1 PU");
    if (threads->n == 0)
        hps_probe_default_threads(topo->pus, threads);
}

/* ---- the stamp clock and the steal-time window --------------------------- */

int hps_probe_use_tsc;
double hps_probe_ns_per_tick = 1.0;
static int g_clock_used;
static uint64_t g_t0_ticks, g_t0_ns;
static double g_steal0 = -1, g_steal1 = -1;

void hps_probe_steal_start(void) { g_steal0 = hps_steal_ms(); }
void hps_probe_steal_stop(void) { g_steal1 = hps_steal_ms(); }

void hps_probe_clock_start(void)
{
    g_clock_used = 1;
    hps_probe_use_tsc = HPS_BENCH_HAVE_TSC && !strcmp(hps_bench_clocksource(), "tsc");
    g_t0_ns = hps_bench_now_ns();
    g_t0_ticks = hps_probe_now();
    hps_probe_steal_start();
}

void hps_probe_clock_finish(void)
{
    hps_probe_steal_stop();
    if (!hps_probe_use_tsc)
        return;
    uint64_t ns, ticks;
    do {
        ns = hps_bench_now_ns();
        ticks = hps_probe_now();
    } while (ns - g_t0_ns < 20000000ull);
    hps_probe_ns_per_tick = (double)(ns - g_t0_ns) / (double)(ticks - g_t0_ticks);
}

/* ---- the document ------------------------------------------------------- */

void hps_probe_doc_begin(const char *probe)
{
    hps_json_begin_object(NULL);
    hps_json_str("probe", probe);
    hps_bench_context();                 /* "schema_version" and "context" */
    hps_json_begin_object("params");
    if (g_clock_used) {
        hps_json_str("timer", hps_probe_use_tsc ? "rdtsc" : "CLOCK_MONOTONIC");
        hps_json_num("timer_ns_per_tick", hps_probe_ns_per_tick);
    }
}

void hps_probe_params_lists(const hps_probe_list_t *threads, const hps_probe_maps_t *maps)
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

void hps_probe_doc_results(void)
{
    hps_json_end_object();
    hps_json_num("steal_ms", g_steal0 >= 0 && g_steal1 >= 0 ? g_steal1 - g_steal0 : -1.0);
    hps_json_begin_array("results");
}

int hps_probe_doc_end(void)
{
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish() ? 1 : 0;
}

/* ---- rows ----------------------------------------------------------------- */

void hps_probe_row_begin(const char *kind, const char *metric, const char *variant)
{
    hps_json_begin_object(NULL);
    hps_json_str("kind", kind);
    hps_json_str("metric", metric);
    if (variant)
        hps_json_str("variant", variant);
}

void hps_probe_row_end(void) { hps_json_end_object(); }

void hps_probe_row_curve(const char *metric, hps_map_t m, int threads, const double *reps, int n,
                         const char *unit)
{
    double tmp[HPS_PROBE_MAX_REPS];
    memcpy(tmp, reps, (size_t)n * sizeof *tmp);
    hps_probe_row_begin("curve", metric, NULL);
    hps_json_str("mapping", hps_map_name(m));
    hps_json_int("threads", threads);
    hps_json_num("value", hps_bench_median(tmp, (size_t)n));
    hps_json_str("unit", unit);
    hps_json_num_array("reps", reps, n);
}

void hps_probe_row_scalar(const char *metric, double value, const char *unit)
{
    hps_probe_row_begin("scalar", metric, NULL);
    hps_json_num("value", value);
    hps_json_str("unit", unit);
    hps_probe_row_end();
}

void hps_probe_row_latency(const char *metric, const char *variant, const double *v, size_t n)
{
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        hps_bench_log("out of memory");
        exit(1);
    }
    memcpy(c, v, n * sizeof *c);
    hps_probe_row_begin("latency", metric, variant);
    hps_dist_json("dist", c, n, "ns", HPS_PROBE_KEEP_RAW);
    hps_probe_row_end();
    free(c);
}

void hps_probe_row_pairs(const char *metric, const char *variant, const char *x, const char *y,
                         const double *a, const double *b, size_t n)
{
    hps_probe_row_begin("pairs", metric, variant);
    hps_json_str("x", x);
    hps_json_str("y", y);
    hps_dist_pairs_json("pairs", a, b, n, HPS_PROBE_KEEP_PAIRS);
    hps_probe_row_end();
}

double *hps_probe_alloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) {
        hps_bench_log("out of memory for %zu samples", n);
        exit(1);
    }
    return p;
}

/* ---- the team ------------------------------------------------------------- */

static void *member_main(void *arg)
{
    hps_probe_member_t *m = arg;
    hps_probe_team_t *t = m->team;
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

void *hps_probe_team_states(int n, size_t size, void ***ptrs)
{
    size_t sz = hps_bench_lines(size);
    char *st = hps_bench_lines_alloc(sz * (size_t)n);
    void **p = malloc(sizeof *p * (size_t)n);
    if (!st || !p) {
        hps_bench_log("out of memory");
        exit(1);
    }
    for (int i = 0; i < n; i++)
        p[i] = st + sz * (size_t)i;
    *ptrs = p;
    return st;
}

int hps_probe_team_run(hps_probe_team_t *t, hps_map_t map, double *secs, void **states)
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
    int fail = 0;
    for (int i = 0; i < t->n; i++) {
        hps_probe_member_t *m = &t->members[i];
        m->index = i;
        m->cpu = cpus[i];
        m->team = t;
        m->state = states ? states[i] : NULL;
    }
    for (int created = 0; created < t->n; created++) {
        int rc = pthread_create(&t->members[created].tid, NULL, member_main,
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

void hps_probe_team_free(hps_probe_team_t *t)
{
    free(t->members);
    t->members = NULL;
}

const char *hps_probe_thp_mode(void)
{
    static char buf[128];
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    snprintf(buf, sizeof buf, "unknown");
    if (f) {
        char line[128];
        if (fgets(line, sizeof line, f)) {
            char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
            if (a && b) {
                *b = 0;
                snprintf(buf, sizeof buf, "%s", a + 1);
            }
        }
        fclose(f);
    }
    return buf;
}
