// SPDX-License-Identifier: MIT
/*
 * hps-fabric-info: what libfabric offers on this machine, as one JSON
 * document, so `hpsync doctor` never reads fi_info's printed text.
 *
 * It asks fi_getinfo with no hints, which answers only with providers that
 * can open an endpoint here (fi_info -l also lists providers that are built
 * in but unusable, such as psm2 without its hardware), and reports one entry
 * per (provider, endpoint type, domain) with the attributes hpsync's
 * OpenSHMEM transport cares about: whether it offers reliable datagrams
 * with RMA and atomics when asked, its default capabilities, inject size,
 * message size, memory-registration mode and progress models.
 *
 * Exit status 0 with "available": false when libfabric finds no provider at
 * all; 1 only when the JSON cannot be written.
 */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <stdio.h>
#include <string.h>
#include "hps_bench.h"

static const char *ep_type_name(enum fi_ep_type t)
{
    switch (t) {
    case FI_EP_MSG:   return "msg";
    case FI_EP_DGRAM: return "dgram";
    case FI_EP_RDM:   return "rdm";
    default:          return "other";
    }
}

static const char *progress_name(enum fi_progress p)
{
    switch (p) {
    case FI_PROGRESS_AUTO:   return "auto";
    case FI_PROGRESS_MANUAL: return "manual";
    default:                 return "unspec";
    }
}

/* The memory-registration mode bits a user must know about, by name. */
static void mr_mode_json(int mode)
{
    static const struct { int bit; const char *name; } bits[] = {
        { FI_MR_LOCAL, "local" },         { FI_MR_RAW, "raw" },
        { FI_MR_VIRT_ADDR, "virt_addr" }, { FI_MR_ALLOCATED, "allocated" },
        { FI_MR_PROV_KEY, "prov_key" },   { FI_MR_MMU_NOTIFY, "mmu_notify" },
        { FI_MR_RMA_EVENT, "rma_event" }, { FI_MR_ENDPOINT, "endpoint" },
        { FI_MR_HMEM, "hmem" },
    };
    hps_json_begin_array("mr_mode");
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (mode & bits[i].bit)
            hps_json_str(NULL, bits[i].name);
    hps_json_end_array();
}

/* Whether some entry of list has fi's provider, domain and endpoint type. */
static int listed(const struct fi_info *list, const struct fi_info *fi)
{
    for (const struct fi_info *p = list; p; p = p->next)
        if (p->ep_attr->type == fi->ep_attr->type &&
            !strcmp(p->fabric_attr->prov_name, fi->fabric_attr->prov_name) &&
            !strcmp(p->domain_attr->name, fi->domain_attr->name))
            return 1;
    return 0;
}

/* fi_getinfo lists one entry per address format and capability set too;
 * the user wants each (provider, endpoint type, domain) once. */
static int seen_before(const struct fi_info *head, const struct fi_info *fi)
{
    for (const struct fi_info *p = head; p != fi; p = p->next)
        if (p->ep_attr->type == fi->ep_attr->type &&
            !strcmp(p->fabric_attr->prov_name, fi->fabric_attr->prov_name) &&
            !strcmp(p->domain_attr->name, fi->domain_attr->name))
            return 1;
    return 0;
}

int main(void)
{
    uint32_t v = fi_version();
    struct fi_info *info = NULL;
    int rc = fi_getinfo(v, NULL, NULL, 0, NULL, &info);
    /* Without hints a provider answers with its default capabilities
     * (tcp;ofi_rxm leaves atomics out); asked for what OpenSHMEM needs
     * (reliable datagrams with RMA and atomics), it says whether it can. */
    struct fi_info *hints = fi_allocinfo(), *shmem_ok = NULL;
    if (hints) {
        hints->caps = FI_RMA | FI_ATOMIC;
        hints->ep_attr->type = FI_EP_RDM;
        if (fi_getinfo(v, NULL, NULL, 0, hints, &shmem_ok) != 0)
            shmem_ok = NULL;
        fi_freeinfo(hints);
    }

    hps_json_begin_object(NULL);
    hps_json_str("program", "hps-fabric-info");
    hps_json_int("schema_version", HPS_BENCH_SCHEMA_VERSION);
    char ver[32];
    snprintf(ver, sizeof ver, "%u.%u", FI_MAJOR(v), FI_MINOR(v));
    hps_json_str("libfabric_api", ver);
    hps_json_bool("available", rc == 0 && info);
    if (rc != 0)
        hps_json_str("error", fi_strerror(-rc));
    hps_json_begin_array("providers");
    for (const struct fi_info *fi = rc == 0 ? info : NULL; fi; fi = fi->next) {
        if (seen_before(info, fi))
            continue;
        hps_json_begin_object(NULL);
        hps_json_str("name", fi->fabric_attr->prov_name);
        hps_json_str("fabric", fi->fabric_attr->name);
        hps_json_str("domain", fi->domain_attr->name);
        hps_json_str("ep_type", ep_type_name(fi->ep_attr->type));
        hps_json_bool("rdm_rma_atomic", listed(shmem_ok, fi));
        hps_json_begin_object("default_caps");
        hps_json_bool("rma", (fi->caps & FI_RMA) != 0);
        hps_json_bool("atomic", (fi->caps & FI_ATOMIC) != 0);
        hps_json_bool("rma_event", (fi->caps & FI_RMA_EVENT) != 0);
        hps_json_end_object();
        hps_json_uint("inject_size", fi->tx_attr ? fi->tx_attr->inject_size : 0);
        hps_json_uint("max_msg_size", fi->ep_attr->max_msg_size);
        mr_mode_json(fi->domain_attr->mr_mode);
        hps_json_str("control_progress", progress_name(fi->domain_attr->control_progress));
        hps_json_str("data_progress", progress_name(fi->domain_attr->data_progress));
        hps_json_end_object();
    }
    hps_json_end_array();
    hps_json_end_object();
    if (info)
        fi_freeinfo(info);
    if (shmem_ok)
        fi_freeinfo(shmem_ok);
    return hps_json_finish() ? 1 : 0;
}
