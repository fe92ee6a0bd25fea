// SPDX-License-Identifier: MIT
/* hpsync-shmem's extensions (include/shmemx.h), and shmem_pcontrol. */
#define _GNU_SOURCE
#include <shmemx.h>
#include <time.h>
#include "../prim/clock.h"
#include "internal.h"

HPS_API const char *shmemx_transport(int pe)
{
    hps_check_running(__func__);
    if ((unsigned)pe >= hps_shmem_sh.npes)
        return NULL;
    return hps_peer_map(HPS_REG_HEAP, pe) ? "shm" : "ofi";
}

HPS_API const char *shmemx_provider(void)
{
    hps_check_running(__func__);
    return hps_shmem_sh.ofi ? hps_ofi_provider() : NULL;
}

HPS_API double shmemx_wtime(void)
{
    return (double)hps_mono_ns() * 1e-9;
}

HPS_API size_t shmemx_heap_size(void)
{
    hps_check_running(__func__);
    return hps_shmem_sh.size[HPS_REG_HEAP] - HPS_HEAP_RESERVED;
}

HPS_API size_t shmemx_heap_free(void)
{
    hps_check_running(__func__);
    return hps_shmem_heap_free_bytes();
}

/* OpenSHMEM 1.5's profiling interface asks for this routine, a no-op in the
 * library: a profiling library that interposes it gives level a meaning.
 * Standard, not an extension; it lives here with the other routines that
 * have no state. */
HPS_API void shmem_pcontrol(const int level, ...)
{
    (void)level;
}

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
