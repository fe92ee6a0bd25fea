/* SPDX-License-Identifier: MIT */
/*
 * backend.h - what runtime.c needs from each runtime back-end (local.c,
 * pmix.c, singleton.c), and the helpers they share.
 *
 * Promise: runtime.c validates arguments (initialised, key length, value
 * size, PE range) before calling a back-end, so back-ends only do their
 * job.  A back-end's init fills the job description and returns 0, or
 * prints one line (hps_shmem_errline) and returns -1.
 */
#ifndef HPS_SHMEM_RT_BACKEND_H
#define HPS_SHMEM_RT_BACKEND_H

#include <stddef.h>

#include "errline.h"
#include "rendezvous.h"

/* Enough for "o<pid>x<8 hex>" and for a namespace-derived id (see pmix.c). */
#define HPS_RT_JOB_ID_MAX 48

typedef struct hps_rt_job {
    int rank, size;
    char job_id[HPS_RT_JOB_ID_MAX];
} hps_rt_job_t;

typedef struct hps_rt_backend {
    const char *name;
    int (*put)(const char *key, const void *val, size_t len);
    int (*exchange)(void);
    int (*get)(int pe, const char *key, void *val, size_t len);
    int (*barrier)(void);
    int (*node_of)(int pe);
    /* Tell the rest of the job it is ending with status; the caller then
     * _exits.  May not return when the launcher kills the caller first. */
    void (*abort)(int status);
    void (*finalize)(void);
} hps_rt_backend_t;

int hps_rt_local_init(hps_rt_job_t *job, const hps_rt_backend_t **be);
int hps_rt_pmix_init(hps_rt_job_t *job, const hps_rt_backend_t **be);
int hps_rt_singleton_init(hps_rt_job_t *job, const hps_rt_backend_t **be);

/* This process's private key-value table: puts land here first (the local
 * back-end publishes it at the next exchange; a singleton reads it back). */
int hps_rt_stage_put(const char *key, const void *val, size_t len);
/* Copy key's value from kv (pe's table) into val; len must match. */
int hps_rt_kv_get(const hps_rdv_kv_t *kv, int pe, const char *key, void *val, size_t len);
const hps_rdv_kv_t *hps_rt_staged(void);

#endif
