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

/*
 * Each extension comes with a feature macro, HAVE_SHMEMX_<NAME> for
 * shmemx_<name>, so a program can test for it with #ifdef and build with
 * other OpenSHMEM libraries too.
 */

/* How this PE reaches pe: "shm" (its memory is mapped here: loads, stores
 * and atomic instructions) or "ofi" (libfabric); NULL for an invalid pe. */
#define HAVE_SHMEMX_TRANSPORT 1
const char *shmemx_transport(int pe);
/* The libfabric provider in use ("tcp;ofi_rxm" ...), or NULL when no peer
 * needs libfabric. */
#define HAVE_SHMEMX_PROVIDER 1
const char *shmemx_provider(void);
/* Seconds on a monotonic clock, for timing. */
#define HAVE_SHMEMX_WTIME 1
double shmemx_wtime(void);
/* The symmetric heap: its size per PE, and the bytes still free. */
#define HAVE_SHMEMX_HEAP_SIZE 1
size_t shmemx_heap_size(void);
#define HAVE_SHMEMX_HEAP_FREE 1
size_t shmemx_heap_free(void);

#ifdef __cplusplus
}
#endif
#endif
