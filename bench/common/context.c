// SPDX-License-Identifier: MIT
/*
 * The context block: everything needed to tell whether two results are
 * comparable (same machine shape, timer, compiler, commit, kernel, libc).
 * Topology comes from hwloc so the same code reads containers, VMs and
 * bare metal alike.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <hwloc.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "hps_bench.h"

#ifndef HPS_COMPILE_FLAGS
#define HPS_COMPILE_FLAGS "unknown"
#endif
#ifdef HPS_GIT_HEADER
#include "hps_git.h"                 /* stamped at build time (cmake/git_stamp.cmake) */
#endif
#ifndef HPS_GIT_COMMIT
#define HPS_GIT_COMMIT "unknown"
#endif

static void cache_of(hwloc_topology_t topo, hwloc_obj_type_t type, hps_cache_info_t *c)
{
    memset(c, 0, sizeof *c);
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, 0);
    if (!o || !o->attr)
        return;
    c->size = o->attr->cache.size;
    c->ways = o->attr->cache.associativity;
    c->line = o->attr->cache.linesize;
}

int hps_bench_topo(hps_topo_t *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->cpu_model, sizeof t->cpu_model, "unknown");
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    t->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    t->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    t->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    cache_of(topo, HWLOC_OBJ_L1CACHE, &t->l1d);
    cache_of(topo, HWLOC_OBJ_L2CACHE, &t->l2);
    cache_of(topo, HWLOC_OBJ_L3CACHE, &t->l3);
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (model)
        snprintf(t->cpu_model, sizeof t->cpu_model, "%s", model);
    hwloc_topology_destroy(topo);
    return 0;
}

uint64_t hps_bench_cache_sets(const hps_cache_info_t *c)
{
    /* Sets only make sense for a set-associative cache with known shape. */
    return c->size && c->ways > 0 && c->line ? c->size / ((uint64_t)c->ways * c->line) : 0;
}

void hps_bench_cache_json(const char *key, const hps_cache_info_t *c)
{
    hps_json_begin_object(key);
    hps_json_uint("size", c->size);
    hps_json_int("ways", c->ways);
    hps_json_uint("line", c->line);
    uint64_t sets = hps_bench_cache_sets(c);
    if (sets)
        hps_json_uint("sets", sets);
    else
        hps_json_null("sets");
    hps_json_end_object();
}

void hps_bench_context(void)
{
    hps_topo_t t;
    if (hps_bench_topo(&t) != 0)
        hps_bench_log("hwloc could not load the topology; topology fields are 0");
    hps_clock_cost_t cc;
    hps_bench_clock_cost(&cc);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    struct utsname u;
    int have_uname = uname(&u) == 0;

    hps_json_int("schema_version", HPS_BENCH_SCHEMA_VERSION);
    hps_json_begin_object("context");
    hps_json_int("schema_version", HPS_BENCH_SCHEMA_VERSION);
    hps_json_str("host", host);
    hps_json_str("cpu_model", t.cpu_model);
    hps_json_int("packages", t.packages);
    hps_json_int("cores", t.cores);
    hps_json_int("pus", t.pus);
    hps_json_int("numa_nodes", t.numa_nodes);
    hps_bench_cache_json("l1d", &t.l1d);
    hps_json_begin_object("timer");
    hps_json_str("clock", "CLOCK_MONOTONIC");
    hps_json_str("clocksource", hps_bench_clocksource());
    hps_json_num("clock_gettime_ns", cc.call_ns);
    hps_json_uint("clock_step_ns", cc.step_ns);
    hps_json_bool("rdtsc", HPS_BENCH_HAVE_TSC);
    hps_json_end_object();
    hps_json_str("compiler", __VERSION__);
    hps_json_str("compile_flags", HPS_COMPILE_FLAGS);
    hps_json_str("git_commit", HPS_GIT_COMMIT);
    hps_json_str("kernel", have_uname ? u.release : "unknown");
    hps_json_str("arch", have_uname ? u.machine : "unknown");
    hps_json_str("glibc", gnu_get_libc_version());
    hps_json_end_object();
}

const char *hps_bench_provider(const char *symbol)
{
    Dl_info di;
    void *f = dlsym(RTLD_DEFAULT, symbol);
    if (f && dladdr(f, &di) && di.dli_fname)
        return di.dli_fname;
    return "unknown";
}
