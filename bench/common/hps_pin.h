/* SPDX-License-Identifier: MIT */
/*
 * hps_pin.h - where the characterization puts its threads.
 *
 * Three mappings, as in the T3-4 study:
 *   compact  - fill one core's hardware threads, then the next core, then
 *              the next package (hwloc's logical PU order);
 *   scatter  - one thread per package, then per core, then per SMT slot:
 *              spread as far apart as the topology allows;
 *   os       - no pinning: the scheduler decides.
 * Threads beyond the number of PUs wrap around.
 */
#ifndef HPS_PIN_H
#define HPS_PIN_H

typedef enum hps_map { HPS_MAP_COMPACT, HPS_MAP_SCATTER, HPS_MAP_OS } hps_map_t;

/* "compact", "scatter", "os" -> 0 and *m; else -1. */
int hps_map_parse(const char *name, hps_map_t *m);
const char *hps_map_name(hps_map_t m);

/* Fill cpus[0..n) with the OS CPU number for thread i (-1 under "os").
 * Returns 0, or -1 when the topology could not be read. */
int hps_map_cpus(hps_map_t m, int n, int *cpus);

/* Pin the calling thread to one CPU; cpu < 0 does nothing.  0 or errno. */
int hps_pin_self(int cpu);

#endif
