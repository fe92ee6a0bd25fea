/* SPDX-License-Identifier: MIT */
/*
 * What harness.c and harness_describe.c share (not the workloads' API).
 */
#ifndef HPS_WORKLOAD_HARNESS_INT_H
#define HPS_WORKLOAD_HARNESS_INT_H

#include "harness.h"

/* Serialized chunks of the controller's largest k (its serial arm's). */
#define WL_SERIAL_K 1024

/* Whether a row is among a mode's default rows (--quick or not). */
static inline int in_mode(const wl_row_t *row, int quick)
{
    return !quick || row->quick;
}

/* --describe: the program's offer as JSON on stdout; the exit status. */
int wl_describe(const wl_workload_t *w);

#endif
