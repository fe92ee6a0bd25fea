// SPDX-License-Identifier: MIT
/* Thread placement for the probes (see hps_pin.h), from hwloc's topology. */
#define _GNU_SOURCE
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "hps_pin.h"

int hps_map_parse(const char *name, hps_map_t *m)
{
    if (!strcmp(name, "compact")) *m = HPS_MAP_COMPACT;
    else if (!strcmp(name, "scatter")) *m = HPS_MAP_SCATTER;
    else if (!strcmp(name, "os")) *m = HPS_MAP_OS;
    else return -1;
    return 0;
}

const char *hps_map_name(hps_map_t m)
{
    return m == HPS_MAP_COMPACT ? "compact" : m == HPS_MAP_SCATTER ? "scatter" : "os";
}

/* Scatter order: visit the tree breadth-first by "slot": the k-th PU of the
 * k-th core of the k-th package ..., i.e. sort PUs by (SMT index, core index
 * within package, package index). */
struct slot { int smt, core, pkg, os; };

static int by_slot(const void *x, const void *y)
{
    const struct slot *a = x, *b = y;
    if (a->smt != b->smt) return a->smt - b->smt;
    if (a->core != b->core) return a->core - b->core;
    return a->pkg - b->pkg;
}

int hps_map_cpus(hps_map_t m, int n, int *cpus)
{
    if (m == HPS_MAP_OS) {
        for (int i = 0; i < n; i++)
            cpus[i] = -1;
        return 0;
    }
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return -1;
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return -1;
    }
    int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    struct slot *s = npu > 0 ? calloc((size_t)npu, sizeof *s) : NULL;
    if (!s) {
        hwloc_topology_destroy(t);
        return -1;
    }
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (unsigned)i);
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu);
        s[i].os = (int)pu->os_index;
        s[i].smt = core ? (int)pu->sibling_rank : 0;
        s[i].pkg = pkg ? (int)pkg->logical_index : 0;
        /* Core's index within its package. */
        s[i].core = core ? (int)(core->logical_index -
                                 (pkg ? hwloc_get_next_obj_inside_cpuset_by_type(t, pkg->cpuset, HWLOC_OBJ_CORE, NULL)->logical_index : 0))
                         : i;
    }
    if (m == HPS_MAP_SCATTER)
        qsort(s, (size_t)npu, sizeof *s, by_slot);
    for (int i = 0; i < n; i++)
        cpus[i] = s[i % npu].os;
    free(s);
    hwloc_topology_destroy(t);
    return 0;
}

int hps_pin_self(int cpu)
{
    if (cpu < 0)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
