/* SPDX-License-Identifier: MIT */
/*
 * singleton.c - the runtime back-end for a program started without any
 * launcher: PE 0 of 1.  Exchanges and barriers have nobody to wait for;
 * a PE reads its own puts back from the staged table.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "backend.h"

static int singleton_nothing(void) { return 0; }

static int singleton_get(int pe, const char *key, void *val, size_t len)
{
    return hps_rt_kv_get(hps_rt_staged(), pe, key, val, len);
}

static int singleton_node_of(int pe) { return 0; }
static void singleton_abort(int status) {}
static void singleton_finalize(void) {}

static const hps_rt_backend_t singleton_backend = {
    .name = "singleton",
    .put = hps_rt_stage_put,
    .exchange = singleton_nothing,
    .get = singleton_get,
    .barrier = singleton_nothing,
    .node_of = singleton_node_of,
    .abort = singleton_abort,
    .finalize = singleton_finalize,
};

int hps_rt_singleton_init(hps_rt_job_t *job, const hps_rt_backend_t **be)
{
    job->rank = 0;
    job->size = 1;
    /* Unique among live processes; "s" keeps it apart from oshrun's ids. */
    snprintf(job->job_id, sizeof job->job_id, "s%ld", (long)getpid());
    *be = &singleton_backend;
    return 0;
}
