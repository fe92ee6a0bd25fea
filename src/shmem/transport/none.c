// SPDX-License-Identifier: MIT
/*
 * The libfabric transport's stand-in for builds without it (ofi.cmake
 * lists no sources): every PE must then be on one node, reached through
 * shared memory, and asking for libfabric fails with one line.
 */
#include "runtime/errline.h"
#include "transport/ofi.h"

static int unavailable(void)
{
    hps_shmem_errline("libfabric transport", "not built into this library (needed for "
                      "HPSYNC_SHMEM_TRANSPORT=ofi and for PEs on other nodes)");
    return -1;
}

int hps_ofi_init(const hps_ofi_region_t regions[HPS_OFI_REGIONS])
{
    (void)regions;
    return unavailable();
}

const char *hps_ofi_provider(void) { return "none"; }
void hps_ofi_finalize(void) {}
void hps_ofi_progress(void) {}
uint64_t hps_ofi_poll(void) { return 0; }
int hps_ofi_fence(void) { return unavailable(); }
int hps_ofi_quiet(void) { return unavailable(); }

int hps_ofi_put(int region, size_t off, const void *src, size_t len, int pe)
{
    (void)region, (void)off, (void)src, (void)len, (void)pe;
    return unavailable();
}

int hps_ofi_put_nbi(int region, size_t off, const void *src, size_t len, int pe)
{
    return hps_ofi_put(region, off, src, len, pe);
}

int hps_ofi_get(void *dst, int region, size_t off, size_t len, int pe)
{
    return hps_ofi_put(region, off, dst, len, pe);
}

int hps_ofi_get_nbi(void *dst, int region, size_t off, size_t len, int pe)
{
    return hps_ofi_put(region, off, dst, len, pe);
}

int hps_ofi_atomic(enum hps_ofi_aop op, int region, size_t off, const void *operand,
                   const void *compare, void *result, size_t size, int pe)
{
    (void)op, (void)operand, (void)compare, (void)result;
    return hps_ofi_put(region, off, NULL, size, pe);
}

int hps_ofi_atomic_nbi(enum hps_ofi_aop op, int region, size_t off, const void *operand,
                       const void *compare, void *result, size_t size, int pe)
{
    return hps_ofi_atomic(op, region, off, operand, compare, result, size, pe);
}
