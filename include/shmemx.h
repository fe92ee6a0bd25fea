/* SPDX-License-Identifier: MIT */
/*
 * shmemx.h - hpsync-shmem's extensions to OpenSHMEM (not portable).
 */
#ifndef HPSYNC_SHMEMX_H
#define HPSYNC_SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How this PE reaches pe: "shm" (its memory is mapped here: loads, stores
 * and atomic instructions) or "ofi" (libfabric); NULL for an invalid pe. */
const char *shmemx_transport(int pe);
/* The libfabric provider in use ("tcp;ofi_rxm" ...), or NULL when no peer
 * needs libfabric. */
const char *shmemx_provider(void);
/* Seconds on a monotonic clock, for timing. */
double shmemx_wtime(void);
/* The symmetric heap: its size per PE, and the bytes still free. */
size_t shmemx_heap_size(void);
size_t shmemx_heap_free(void);

#ifdef __cplusplus
}
#endif
#endif
