/* SPDX-License-Identifier: MIT */
/*
 * ofi.h - the off-node transport: OpenSHMEM operations on libfabric.
 *
 * Promise: after hps_ofi_init(), every PE can reach every other PE's
 * symmetric regions (region 0: the symmetric heap, region 1: the data
 * segment) through one reliable-datagram endpoint (FI_EP_RDM with FI_RMA |
 * FI_ATOMIC): small puts by fi_inject_write, completion counted by
 * counters (fi_cntr), not queues; virtual or offset addressing and
 * provider-chosen keys as the provider requires (FI_MR_VIRT_ADDR,
 * FI_MR_PROV_KEY...), exchanged through the runtime (runtime.h).  Works
 * unchanged on the shm, tcp;ofi_rxm and sockets providers;
 * HPSYNC_SHMEM_PROVIDER names one (default: the first that offers RMA and
 * atomics).  Waiting never spins a CPU another PE needs: progress and
 * completion waits yield the CPU (blocking waits or sched_yield) after a
 * short spin, and a PE that sits in computation while others target it
 * still progresses (the provider's auto progress, or a progress thread
 * that blocks between polls).
 *
 * Addresses are (region, offset) pairs: the caller translates its own
 * symmetric address to an offset; the transport adds the peer's base or key.
 * All functions return 0, or -1 after one line on stderr naming the call and
 * libfabric's error text.
 */
#ifndef HPS_SHMEM_OFI_H
#define HPS_SHMEM_OFI_H

#include <stddef.h>
#include <stdint.h>

#define HPS_OFI_REGIONS 2

typedef struct hps_ofi_region {
    void *base;        /* this PE's region */
    size_t size;
} hps_ofi_region_t;

/* Open the fabric, register the regions, publish and exchange addresses
 * and keys (hps_rt_put/hps_rt_exchange/hps_rt_get), insert every PE into the
 * address vector.  Collective. */
int hps_ofi_init(const hps_ofi_region_t regions[HPS_OFI_REGIONS]);
/* The provider in use, e.g. "tcp;ofi_rxm" (valid after init). */
const char *hps_ofi_provider(void);
void hps_ofi_finalize(void);       /* collective: quiet, barrier, close */

/* RMA.  put: src may be reused on return (local completion); remote
 * completion by hps_ofi_quiet().  get: dst is filled on return.  The _nbi
 * forms return at once: src/dst are in use until hps_ofi_quiet(). */
int hps_ofi_put(int region, size_t off, const void *src, size_t len, int pe);
int hps_ofi_put_nbi(int region, size_t off, const void *src, size_t len, int pe);
int hps_ofi_get(void *dst, int region, size_t off, size_t len, int pe);
int hps_ofi_get_nbi(void *dst, int region, size_t off, size_t len, int pe);
/* Wait for every get issued so far: a batch of _nbi gets made blocking,
 * without quiet's flush of the peers written to. */
int hps_ofi_get_wait(void);

/* Atomics on 4- and 8-byte integers (size 4 or 8; is_signed for min/max).
 * Ops: */
enum hps_ofi_aop {
    HPS_AOP_SET,       /* *target = operand                      (atomic write) */
    HPS_AOP_FETCH,     /* result = *target                       (atomic read) */
    HPS_AOP_SWAP,      /* result = *target, *target = operand */
    HPS_AOP_CSWAP,     /* result = *target, if == *compare: *target = operand */
    HPS_AOP_ADD, HPS_AOP_AND, HPS_AOP_OR, HPS_AOP_XOR
};
/* result NULL: no fetch (not allowed for FETCH/SWAP/CSWAP).  Returns when
 * result is valid (fetching) or operand may be reused (non-fetching). */
int hps_ofi_atomic(enum hps_ofi_aop op, int region, size_t off, const void *operand,
                   const void *compare, void *result, size_t size, int pe);
/* The same, fetching into result later: complete at hps_ofi_quiet(). */
int hps_ofi_atomic_nbi(enum hps_ofi_aop op, int region, size_t off, const void *operand,
                       const void *compare, void *result, size_t size, int pe);

/* Ordering and completion of everything this PE issued. */
int hps_ofi_fence(void);           /* puts/atomics to each PE arrive in order across it */
int hps_ofi_quiet(void);           /* all issued operations complete remotely */

/* Make progress for operations that target this PE (call while waiting). */
void hps_ofi_progress(void);
/* Drive progress like hps_ofi_progress() and return a number that changes
 * whenever operations of this PE complete or, where the provider counts
 * them (FI_RMA_EVENT: shm, sockets), operations into this PE arrive. */
uint64_t hps_ofi_poll(void);

#endif
