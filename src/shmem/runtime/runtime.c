/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - picks the back-end (see runtime.h), checks every argument once
 * so the back-ends need not, and keeps this process's staged key-value table
 * (shared by the local and singleton back-ends).
 *
 * Before hps_rt_init() succeeds (and after hps_rt_finalize()) rank and size
 * are 0, the name is "none", and every call that needs the job prints its
 * one line and returns -1.
 */
#define _GNU_SOURCE
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

static const hps_rt_backend_t *g_be;
static hps_rt_job_t g_job;
static hps_rdv_kv_t g_staged;

int hps_rt_init(void)
{
    if (g_be)
        return 0;
    const char *job = secure_getenv(HPS_RDV_ENV_JOB);
    const char *pmix = secure_getenv("PMIX_RANK");
    int rc;
    /* oshrun's variables win: they are set for this very process, while
     * PMIX_RANK may be inherited from a launcher further up (oshrun run
     * inside an allocation). */
    if (job && *job)
        rc = hps_rt_local_init(&g_job, &g_be);
    else if (pmix && *pmix)
        rc = hps_rt_pmix_init(&g_job, &g_be);
    else
        rc = hps_rt_singleton_init(&g_job, &g_be);
    if (rc != 0) {
        g_be = NULL;
        memset(&g_job, 0, sizeof g_job);
    }
    return rc;
}

const char *hps_rt_name(void) { return g_be ? g_be->name : "none"; }
int hps_rt_rank(void) { return g_job.rank; }
int hps_rt_size(void) { return g_job.size; }
const char *hps_rt_job_id(void) { return g_job.job_id; }

static int joined(const char *call)
{
    if (g_be)
        return 1;
    hps_shmem_errline(call, "called before hps_rt_init");
    return 0;
}

static int valid_pe(const char *call, int pe)
{
    if (pe >= 0 && pe < g_job.size)
        return 1;
    hps_shmem_errline(call, "PE %d is not in the job (0..%d)", pe, g_job.size - 1);
    return 0;
}

static int valid_key(const char *call, const char *key, const void *val, size_t len)
{
    if (!key || !key[0] || strnlen(key, HPS_RDV_KEYLEN) >= HPS_RDV_KEYLEN) {
        hps_shmem_errline(call, "key '%.40s' is empty or longer than %d characters",
                          key ? key : "(null)", HPS_RDV_KEYLEN - 1);
        return 0;
    }
    if (len > HPS_RT_MAX_VALUE || (len && !val)) {
        hps_shmem_errline(call, "value for '%s' has %zu bytes (at most %d, non-NULL)",
                          key, len, HPS_RT_MAX_VALUE);
        return 0;
    }
    return 1;
}

int hps_rt_node_of(int pe)
{
    if (!joined("hps_rt_node_of") || !valid_pe("hps_rt_node_of", pe))
        return -1;
    return g_be->node_of(pe);
}

int hps_rt_put(const char *key, const void *val, size_t len)
{
    if (!joined("hps_rt_put") || !valid_key("hps_rt_put", key, val, len))
        return -1;
    return g_be->put(key, val, len);
}

int hps_rt_exchange(void)
{
    return joined("hps_rt_exchange") ? g_be->exchange() : -1;
}

int hps_rt_get(int pe, const char *key, void *val, size_t len)
{
    if (!joined("hps_rt_get") || !valid_pe("hps_rt_get", pe) ||
        !valid_key("hps_rt_get", key, val, len))
        return -1;
    return g_be->get(pe, key, val, len);
}

int hps_rt_barrier(void)
{
    return joined("hps_rt_barrier") ? g_be->barrier() : -1;
}

void hps_rt_abort(int status)
{
    /* Output the PE printed before ending the job should reach the user, as
     * with exit(); _exit below skips stdio and atexit handlers, which could
     * block on collectives with PEs that are about to be killed. */
    fflush(NULL);
    if (g_be)
        g_be->abort(status);
    _exit(status);
}

void hps_rt_finalize(void)
{
    if (!g_be)
        return;
    g_be->finalize();
    g_be = NULL;
    memset(&g_job, 0, sizeof g_job);
    memset(&g_staged, 0, sizeof g_staged);
}

/* ---- the staged key-value table ------------------------------------------ */

static const hps_rdv_slot_t *kv_find(const hps_rdv_kv_t *kv, const char *key)
{
    uint32_t n = kv->nslots < HPS_RDV_SLOTS ? kv->nslots : HPS_RDV_SLOTS;
    for (uint32_t i = 0; i < n; i++)
        if (strncmp(kv->slot[i].key, key, HPS_RDV_KEYLEN) == 0)
            return &kv->slot[i];
    return NULL;
}

int hps_rt_stage_put(const char *key, const void *val, size_t len)
{
    /* A key put again replaces its value, as PMIx_Put does. */
    hps_rdv_slot_t *s = (hps_rdv_slot_t *)kv_find(&g_staged, key);
    if (!s) {
        if (g_staged.nslots == HPS_RDV_SLOTS) {
            hps_shmem_errline("hps_rt_put", "no room for key '%s': each PE may publish %d keys",
                              key, HPS_RDV_SLOTS);
            return -1;
        }
        s = &g_staged.slot[g_staged.nslots++];
        strcpy(s->key, key);            /* length checked by valid_key */
    }
    s->len = (uint32_t)len;
    if (len)
        memcpy(s->val, val, len);
    return 0;
}

int hps_rt_kv_get(const hps_rdv_kv_t *kv, int pe, const char *key, void *val, size_t len)
{
    const hps_rdv_slot_t *s = kv_find(kv, key);
    if (!s) {
        hps_shmem_errline("hps_rt_get", "PE %d published no key '%s' (before the last exchange)",
                          pe, key);
        return -1;
    }
    if (s->len != len) {
        hps_shmem_errline("hps_rt_get", "PE %d's value for '%s' has %u bytes, not %zu",
                          pe, key, s->len, len);
        return -1;
    }
    if (len)
        memcpy(val, s->val, len);
    return 0;
}

const hps_rdv_kv_t *hps_rt_staged(void) { return &g_staged; }
