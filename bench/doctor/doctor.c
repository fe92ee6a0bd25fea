// SPDX-License-Identifier: MIT
/*
 * hps-doctor: what this machine offers hpsync, as one JSON document.
 *
 * CPU features are read with CPUID only; no feature is ever exercised (in
 * particular XBEGIN is never executed, so a CPU with RTM_ALWAYS_ABORT or a
 * hypervisor that hides TSX cannot fault us).  The TSC is characterised
 * against CLOCK_MONOTONIC because under a hypervisor the nominal frequency
 * in the brand string need not be the rate the guest's TSC runs at.
 *
 *   hps-doctor           the whole document
 *   hps-doctor --locks   only "program", "locks" (the lock algorithms of
 *                        include/hpsync/lock/algorithms.def) and "tm_backends"
 *                        (what HPSYNC_TM takes), without measuring anything:
 *                        what the Python CLI reads those names from.
 */
#define _GNU_SOURCE
#include <gnu/libc-version.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include "hps_bench.h"
#include "env.h"
#include "envparse.h"
#include "prim/cpuid.h"
#include "hpsync/tm.h"

typedef struct cpu_info {
    char vendor[13];
    char brand[49];
    unsigned family, model, stepping;
    int hypervisor;
    char hv_vendor[13];
    int rtm, hle, rtm_always_abort, invariant_tsc;
} cpu_info_t;

static void read_cpuid(cpu_info_t *c)
{
    unsigned r[4];
    memset(c, 0, sizeof *c);
    if (!hps_cpuid(0, 0, r))
        return;
    memcpy(c->vendor + 0, &r[1], 4);
    memcpy(c->vendor + 4, &r[3], 4);
    memcpy(c->vendor + 8, &r[2], 4);
    if (hps_cpuid(1, 0, r)) {
        unsigned a = r[0], base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
        /* The extended fields only count for families 6 and 15 (SDM/APM rule). */
        c->family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
        c->model = (base_family == 0x6 || base_family == 0xf)
                       ? base_model | (((a >> 16) & 0xf) << 4) : base_model;
        c->stepping = a & 0xf;
        c->hypervisor = (r[2] >> 31) & 1;
    }
    if (hps_cpuid(7, 0, r)) {
        c->hle = (r[1] >> 4) & 1;
        c->rtm = (r[1] >> 11) & 1;
        c->rtm_always_abort = (r[3] >> 11) & 1;
    }
    /* Leaf 0x40000000 exists only under a hypervisor; ask only then. */
    if (c->hypervisor && hps_cpuid(0x40000000, 0, r)) {
        memcpy(c->hv_vendor + 0, &r[1], 4);
        memcpy(c->hv_vendor + 4, &r[2], 4);
        memcpy(c->hv_vendor + 8, &r[3], 4);
        for (int i = 0; i < 12; i++)   /* some hypervisors pad with NULs */
            if ((unsigned char)c->hv_vendor[i] < 0x20 && c->hv_vendor[i])
                c->hv_vendor[i] = '?';
    }
    unsigned *w = (unsigned *)(void *)c->brand;
    for (unsigned l = 0; l < 3 && hps_cpuid(0x80000002 + l, 0, w + 4 * l); l++)
        ;
    c->brand[48] = 0;
    if (hps_cpuid(0x80000007, 0, r))
        c->invariant_tsc = hps_bench_tsc_invariant() == 1;
}

/* Brand strings are often padded with leading spaces. */
static const char *trim(const char *s)
{
    while (*s == ' ')
        s++;
    return s;
}

typedef struct tsc_info {
    double ghz;                /* ticks per nanosecond */
    uint64_t step_ticks;       /* most frequent nonzero back-to-back difference */
    uint64_t min_ticks;        /* smallest recurring nonzero difference */
} tsc_info_t;

static void measure_tsc(tsc_info_t *t)
{
    memset(t, 0, sizeof *t);
    if (!HPS_BENCH_HAVE_TSC)
        return;
    /* Three 20 ms windows, median rate: one preempted window cannot skew it. */
    double rate[3];
    for (int i = 0; i < 3; i++)
        rate[i] = hps_bench_tsc_window(20);
    t->ghz = hps_bench_median(rate, 3);
    enum { N = 200000 };
    static uint64_t diffs[N];
    uint64_t prev = hps_bench_rdtsc();
    for (int i = 0; i < N; i++) {
        uint64_t c = hps_bench_rdtsc();
        diffs[i] = c - prev;
        prev = c;
    }
    /*
     * Under KVM the guest TSC is scaled: it advances in quanta (26 ticks,
     * 10 ns, on the machine this was written on) with an occasional one-tick
     * wobble, so the smallest difference (1) says nothing about resolution.
     * The step is therefore the most frequent nonzero difference; the
     * smallest recurring one is reported beside it.
     */
    t->min_ticks = hps_bench_step(diffs, N);
    t->step_ticks = hps_bench_mode(diffs, N);
}

/* The allocator's and the OpenSHMEM library's tables, after libhpsync's. */
static void library_rows(FILE *out, int *first)
{
#define X(field, env, kind, def, lo, hi, doc) hps_env_json_row(out, first, #env, #kind, def, doc);
#include "../../src/malloc/settings.def"
#include "../../src/shmem/settings.def"
#undef X
}

/* "locks": the default and every algorithm of the list, in its order. */
static void locks_json(void)
{
    hps_json_begin_object("locks");
    hps_json_str("default", hps_lock_algo_name(HPS_LOCK_DEFAULT));
    hps_json_begin_array("algorithms");
    for (int a = HPS_LOCK_ALGO_MIN; a <= HPS_LOCK_ALGO_MAX; a++) {
        const char *alias = hps_lock_algo_alias((hps_lock_algo_t)a);
        hps_json_begin_object(NULL);
        hps_json_str("name", hps_lock_algo_name((hps_lock_algo_t)a));
        hps_json_begin_array("aliases");
        if (*alias)
            hps_json_str(NULL, alias);
        hps_json_end_array();
        hps_json_str("description", hps_lock_algo_doc((hps_lock_algo_t)a));
        hps_json_end_object();
    }
    hps_json_end_array();
    hps_json_end_object();
}

/* "tm_backends": what HPSYNC_TM takes, the default first. */
static void tm_json(void)
{
    hps_json_begin_array("tm_backends");
    for (const char *const *b = hps_tm_backend_choices(); *b; b++)
        hps_json_str(NULL, *b);
    hps_json_end_array();
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--locks") == 0) {
        hps_json_begin_object(NULL);
        hps_json_str("program", "hps-doctor");
        locks_json();
    tm_json();
        tm_json();
        hps_json_end_object();
        return hps_json_finish();
    }
    if (argc > 1) {
        fprintf(stderr, "usage: hps-doctor [--locks]\n");
        return 2;
    }
    cpu_info_t c;
    read_cpuid(&c);
    tsc_info_t tsc;
    measure_tsc(&tsc);
    hps_clock_cost_t cc;
    hps_bench_clock_cost(&cc);
    hps_topo_t topo;
    int topo_ok = hps_bench_topo(&topo) == 0;
    if (!topo_ok)
        hps_bench_log("hwloc could not load the topology");
    struct utsname u;
    int have_uname = uname(&u) == 0;

    hps_json_begin_object(NULL);
    hps_json_str("program", "hps-doctor");
    hps_bench_context();

    hps_json_begin_object("cpu");
    hps_json_bool("cpuid", HPS_HAVE_CPUID);
    hps_json_str("vendor", c.vendor);
    hps_json_str("model_name", c.brand[0] ? trim(c.brand) : topo.cpu_model);
    hps_json_uint("family", c.family);
    hps_json_uint("model", c.model);
    hps_json_uint("stepping", c.stepping);
    hps_json_end_object();

    hps_json_begin_object("hypervisor");
    hps_json_bool("present", c.hypervisor);
    hps_json_str("vendor", c.hypervisor ? c.hv_vendor : NULL);
    hps_json_end_object();

    hps_json_begin_object("tsx");
    hps_json_bool("rtm", c.rtm);
    hps_json_bool("hle", c.hle);
    hps_json_bool("rtm_always_abort", c.rtm_always_abort);
    /* The library's own decision, so doctor says exactly what elision will do. */
    hps_json_bool("rtm_usable", hps_cpu_rtm_usable());
    hps_json_end_object();

    hps_json_begin_object("tsc");
    hps_json_bool("present", HPS_BENCH_HAVE_TSC);
    hps_json_bool("invariant", c.invariant_tsc);
    hps_json_num("ghz", tsc.ghz);
    hps_json_uint("step_ticks", tsc.step_ticks);
    hps_json_num("step_ns", tsc.ghz > 0 ? (double)tsc.step_ticks / tsc.ghz : 0.0);
    hps_json_uint("min_step_ticks", tsc.min_ticks);
    hps_json_num("min_step_ns", tsc.ghz > 0 ? (double)tsc.min_ticks / tsc.ghz : 0.0);
    hps_json_end_object();

    hps_json_begin_object("clock");
    hps_json_str("clocksource", hps_bench_clocksource());
    hps_json_num("clock_gettime_ns", cc.call_ns);
    hps_json_uint("step_ns", cc.step_ns);
    hps_json_end_object();

    hps_json_begin_object("topology");
    hps_json_bool("ok", topo_ok);
    hps_json_int("packages", topo.packages);
    hps_json_int("cores", topo.cores);
    hps_json_int("pus", topo.pus);
    hps_json_int("numa_nodes", topo.numa_nodes);
    hps_bench_cache_json("l1d", &topo.l1d);
    hps_bench_cache_json("l2", &topo.l2);
    hps_bench_cache_json("l3", &topo.l3);
    hps_json_end_object();

    hps_json_begin_object("os");
    hps_json_str("kernel", have_uname ? u.release : "unknown");
    hps_json_str("machine", have_uname ? u.machine : "unknown");
    hps_json_str("glibc", gnu_get_libc_version());
    hps_json_end_object();

    locks_json();

    /* The settings tables, generated from src/common/settings.def,
     * src/malloc/settings.def and src/shmem/settings.def. */
    hps_settings_dump_json_ex(hps_json_raw("settings"), library_rows);
    hps_json_end_object();
    return hps_json_finish();
}
