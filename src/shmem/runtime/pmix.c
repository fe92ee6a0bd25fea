/* SPDX-License-Identifier: MIT */
/*
 * pmix.c - the runtime back-end under a PMIx launcher (Open MPI's mpirun,
 * PRRTE's prterun, srun --mpi=pmix): rank and size from PMIx_Init and the
 * job size, the exchange as PMIx_Put + PMIx_Commit + PMIx_Fence collecting
 * data, the barrier as a plain fence, node numbers from each rank's
 * PMIX_NODEID (or, failing that, its PMIX_HOSTNAME).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "backend.h"

/* Our keys live apart from PMIx's reserved "pmix." names. */
#define KEY_PREFIX "hpsync."

static pmix_proc_t g_me;
static pmix_proc_t g_all;            /* every rank of our namespace */
static int *g_node;                  /* node number of each PE, 0..nodes-1 */

static int pmix_fail(const char *call, const char *what, pmix_status_t rc)
{
    hps_shmem_errline(call, "%s failed: %s", what, PMIx_Error_string(rc));
    return -1;
}

static void full_key(char *buf, size_t cap, const char *key)
{
    snprintf(buf, cap, KEY_PREFIX "%s", key);
}

static int pmix_put(const char *key, const void *val, size_t len)
{
    char k[PMIX_MAX_KEYLEN];
    full_key(k, sizeof k, key);
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)val;      /* PMIx_Put copies it */
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k, &v);
    return rc == PMIX_SUCCESS ? 0 : pmix_fail("hps_rt_put", "PMIx_Put", rc);
}

static int fence(const char *call, bool collect)
{
    pmix_info_t info;
    memset(&info, 0, sizeof info);
    if (collect)
        PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&g_all, 1, collect ? &info : NULL, collect ? 1 : 0);
    return rc == PMIX_SUCCESS ? 0 : pmix_fail(call, "PMIx_Fence", rc);
}

static int pmix_exchange(void)
{
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return pmix_fail("hps_rt_exchange", "PMIx_Commit", rc);
    return fence("hps_rt_exchange", true);
}

static int pmix_barrier(void) { return fence("hps_rt_barrier", false); }

static int pmix_get(int pe, const char *key, void *val, size_t len)
{
    char k[PMIX_MAX_KEYLEN];
    full_key(k, sizeof k, key);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, g_me.nspace, (pmix_rank_t)pe);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, k, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        hps_shmem_errline("hps_rt_get", "PE %d's key '%s': PMIx_Get failed: %s", pe, key,
                          PMIx_Error_string(rc));
        return -1;
    }
    int ret = -1;
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len)
        hps_shmem_errline("hps_rt_get", "PE %d's value for '%s' is not %zu bytes", pe, key, len);
    else {
        if (len)
            memcpy(val, v->data.bo.bytes, len);
        ret = 0;
    }
    PMIX_VALUE_RELEASE(v);
    return ret;
}

static int pmix_node_of(int pe) { return g_node[pe]; }

static void pmix_abort(int status)
{
    /* The launcher ends every rank (this one too, perhaps before this
     * returns) and reports status; the caller _exits if it does return. */
    PMIx_Abort(status, NULL, NULL, 0);
}

static void pmix_finalize(void)
{
    PMIx_Finalize(NULL, 0);
    free(g_node);
    g_node = NULL;
}

static const hps_rt_backend_t pmix_backend = {
    .name = "pmix",
    .put = pmix_put,
    .exchange = pmix_exchange,
    .get = pmix_get,
    .barrier = pmix_barrier,
    .node_of = pmix_node_of,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};

/* A printable name for the node PE pe runs on: its node id if the launcher
 * gives one, else its host name.  0, or -1 if neither is known. */
static int node_label(int pe, char *buf, size_t cap)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, g_me.nspace, (pmix_rank_t)pe);
    pmix_value_t *v = NULL;
    int ok = -1;
    if (PMIx_Get(&p, PMIX_NODEID, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_UINT32) {
        snprintf(buf, cap, "#%u", (unsigned)v->data.uint32);
        ok = 0;
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
    if (ok == 0)
        return 0;
    if (PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING) {
        snprintf(buf, cap, "%s", v->data.string);
        ok = 0;
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
    return ok;
}

/* Number nodes 0..nodes-1 in order of their first PE, whatever the
 * launcher's own ids are: the library sizes tables by node count. */
static int number_nodes(int size)
{
    enum { LABEL = 256 };
    g_node = malloc((size_t)size * sizeof *g_node);
    char (*label)[LABEL] = malloc((size_t)size * LABEL);     /* one per distinct node */
    int nodes = 0, rc = -1;
    if (!g_node || !label) {
        hps_shmem_errline("hps_rt_init", "out of memory for %d PEs' node numbers", size);
        goto out;
    }
    for (int pe = 0; pe < size; pe++) {
        char mine[LABEL];
        if (node_label(pe, mine, sizeof mine) != 0) {
            hps_shmem_errline("hps_rt_init", "PMIx gives neither %s nor %s for PE %d",
                              PMIX_NODEID, PMIX_HOSTNAME, pe);
            goto out;
        }
        int n = 0;
        while (n < nodes && strcmp(label[n], mine) != 0)
            n++;
        if (n == nodes)
            strcpy(label[nodes++], mine);
        g_node[pe] = n;
    }
    rc = 0;
out:
    free(label);
    return rc;
}

/* The namespace as a job id: letters and digits kept, anything else '-';
 * a long one keeps its head and gets a hash of the whole, so ids stay
 * short enough for shared-memory names and still differ between jobs. */
static void job_id_from(const char *ns, char *out, size_t cap)
{
    size_t n = strlen(ns);
    size_t keep = n < cap ? n : cap - 1 - 9;            /* room for "-%08x" */
    for (size_t i = 0; i < keep; i++) {
        char c = ns[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[i] = alnum ? c : '-';
    }
    out[keep] = '\0';
    if (n >= cap) {
        uint32_t h = 2166136261u;                       /* FNV-1a */
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)ns[i]) * 16777619u;
        snprintf(out + keep, cap - keep, "-%08x", h);
    }
    if (n == 0)
        snprintf(out, cap, "pmix");
}

int hps_rt_pmix_init(hps_rt_job_t *job, const hps_rt_backend_t **be)
{
    pmix_status_t rc = PMIx_Init(&g_me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        hps_shmem_errline("hps_rt_init", "PMIx_Init failed: %s (PMIX_RANK is set, but no PMIx "
                          "launcher answers)", PMIx_Error_string(rc));
        return -1;
    }
    PMIX_LOAD_PROCID(&g_all, g_me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&g_all, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v->type != PMIX_UINT32 || v->data.uint32 == 0 ||
        v->data.uint32 > INT32_MAX || g_me.rank >= v->data.uint32) {
        hps_shmem_errline("hps_rt_init", "PMIx gives no usable %s for namespace %s: %s",
                          PMIX_JOB_SIZE, g_me.nspace, PMIx_Error_string(rc));
        if (v)
            PMIX_VALUE_RELEASE(v);
        PMIx_Finalize(NULL, 0);
        return -1;
    }
    int size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if (number_nodes(size) != 0) {
        pmix_finalize();
        return -1;
    }
    job->rank = (int)g_me.rank;
    job->size = size;
    job_id_from(g_me.nspace, job->job_id, sizeof job->job_id);
    *be = &pmix_backend;
    return 0;
}
