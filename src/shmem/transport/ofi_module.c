/* SPDX-License-Identifier: MIT */
/*
 * ofi_module.c - libhpsync-shmem-ofi.so's entry point, and the core's
 * services the transport's files call by their usual names.
 *
 * The module exports one symbol, hps_shmem_ofi_module: given the core's
 * table of services it answers its own table of operations (ofi.h).  The
 * runtime, error-line and waiting functions the transport calls are
 * defined here as forwards into the core's table, so the same transport
 * sources also link into a test program with stand-ins for them
 * (tests/c/shmem/ofi).
 */
#include <stdarg.h>
#include <string.h>

#include "../runtime/errline.h"
#include "../runtime/runtime.h"
#include "ofi_internal.h"

static hps_ofi_core_t core;

int hps_rt_rank(void) { return core.rt_rank(); }
int hps_rt_size(void) { return core.rt_size(); }
int hps_rt_node_of(int pe) { return core.rt_node_of(pe); }
int hps_rt_put(const char *key, const void *val, size_t len) { return core.rt_put(key, val, len); }
int hps_rt_exchange(void) { return core.rt_exchange(); }
int hps_rt_get(int pe, const char *key, void *val, size_t len) { return core.rt_get(pe, key, val, len); }
int hps_rt_barrier(void) { return core.rt_barrier(); }

void hps_shmem_verrline(const char *fn, const char *fmt, va_list ap)
{
    core.verrline(fn, fmt, ap);
}

int hps_shmem_waiter_step(hps_shmem_waiter_t *w, int ofi, uint64_t traffic)
{
    return core.waiter_step(w, ofi, traffic);
}

static const hps_ofi_ops_t ops = {
    .size = sizeof(hps_ofi_ops_t),
    .version = HPS_OFI_OPS_VERSION,
#define HPS_OFI_OP_INIT(R, NAME, PARAMS, ARGS) .NAME = hps_ofi_##NAME,
    HPS_OFI_OPS(HPS_OFI_OP_INIT)
#undef HPS_OFI_OP_INIT
};

__attribute__((visibility("default"))) const hps_ofi_ops_t *hps_shmem_ofi_module(const hps_ofi_core_t *c)
{
    /* A core from another build: say so with what it has (its error line
     * may not be callable), and refuse. */
    if (!c || c->size != sizeof core || c->version != HPS_OFI_OPS_VERSION ||
        c->ctx_size != sizeof(hps_ofi_ctx_t) || c->target_size != sizeof(hps_ofi_target_t))
        return NULL;
    memcpy(&core, c, sizeof core);
    return &ops;
}
