/* SPDX-License-Identifier: MIT */
/*
 * cpus.h - how many CPUs this process may run on: its affinity mask (what
 * taskset and cgroup cpusets leave it), else the online count.  Decides
 * whether a waiter may spin (no, when more threads or PEs than that wait).
 */
#ifndef HPS_PRIM_CPUS_H
#define HPS_PRIM_CPUS_H

#include <sched.h>
#include <unistd.h>

static inline int hps_cpus_usable(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

#endif
