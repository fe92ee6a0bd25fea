/* SPDX-License-Identifier: MIT */
/*
 * shm.h - the on-node transport: a peer's symmetric memory is mapped into
 * this process (transport/shm.c), so an operation on it is a memcpy, a load,
 * a store or an atomic instruction on that mapping.
 *
 * Promise: every function here is a handful of instructions with no call
 * (memcpy of a constant size folds into one move).  Nothing is ever left
 * pending: shm operations are complete when they return, which is why
 * quiet is only a fence on this transport.
 *
 * Orderings.  OpenSHMEM orders operations only at fence/quiet (and a put's
 * signal after its data), so data moves are plain and the fences do the
 * work.  The atomics are still a little stronger than relaxed, because it is
 * free where this runs (x86: every RMW is a full barrier, loads and stores
 * are ordered) and makes the common hand-off patterns safe on weaker CPUs:
 * SET is a release store and FETCH an acquire load, so "put data;
 * atomic_set(flag)" / "wait for flag; read data" works without a fence; the
 * read-modify-writes are acq_rel for the same reason (locks built on
 * compare_swap).  These are atomics on plain user objects (OpenSHMEM's
 * targets are not _Atomic), hence pr.h's hps_plain_* forms.
 */
#ifndef HPS_SHMEM_SHM_H
#define HPS_SHMEM_SHM_H

#include <stdint.h>
#include <string.h>
#include "hpsync/pr.h"
#include "transport/ofi.h"      /* enum hps_ofi_aop: one operation code for both */

HPS_INLINE void hps_shmem_shm_put(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

HPS_INLINE void hps_shmem_shm_get(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

/* One atomic on a U-sized word at t; operand/compare/result as in ofi.h. */
#define HPS_SHM_AMO(U, op, t, operand, compare, result) do { \
        U *p_ = (U *)(t), v_ = 0, c_ = 0, old_ = 0; \
        if (operand) \
            memcpy(&v_, (operand), sizeof v_); \
        switch (op) { \
        case HPS_AOP_SET: \
            hps_plain_store_release(p_, v_); \
            return; \
        case HPS_AOP_FETCH: \
            old_ = hps_plain_load_acquire(p_); \
            break; \
        case HPS_AOP_SWAP: \
            old_ = hps_plain_xchg_acq_rel(p_, v_); \
            break; \
        case HPS_AOP_CSWAP: \
            memcpy(&c_, (compare), sizeof c_); \
            old_ = c_; \
            hps_plain_cas_acq_rel(p_, &old_, v_); \
            break; \
        case HPS_AOP_ADD: \
            old_ = (result) ? hps_plain_faa_acq_rel(p_, v_) \
                            : (hps_plain_add_acq_rel_void(p_, v_), 0); \
            break; \
        case HPS_AOP_AND: \
            old_ = (result) ? hps_plain_fetch_and_acq_rel(p_, v_) \
                            : (hps_plain_and_acq_rel_void(p_, v_), 0); \
            break; \
        case HPS_AOP_OR: \
            old_ = (result) ? hps_plain_fetch_or_acq_rel(p_, v_) \
                            : (hps_plain_or_acq_rel_void(p_, v_), 0); \
            break; \
        case HPS_AOP_XOR: \
            old_ = (result) ? hps_plain_fetch_xor_acq_rel(p_, v_) \
                            : (hps_plain_xor_acq_rel_void(p_, v_), 0); \
            break; \
        } \
        if (result) \
            memcpy((result), &old_, sizeof old_); \
    } while (0)

/* size is 4 or 8 (the AMO types); op and size are constants at every call
 * site, so this folds to the one instruction. */
HPS_INLINE void hps_shmem_shm_amo(enum hps_ofi_aop op, void *t, const void *operand,
                            const void *compare, void *result, size_t size)
{
    if (size == 4)
        HPS_SHM_AMO(uint32_t, op, t, operand, compare, result);
    else
        HPS_SHM_AMO(uint64_t, op, t, operand, compare, result);
}

/* ---- set-up (transport/shm.c) -------------------------------------------- */

/* A shared-memory segment of this PE that on-node peers map by name. */
typedef struct hps_shmem_shm_seg {
    char name[96];          /* "/dev/shm/hpsync-shmem-<job>-<what>-<pe>" or "" */
} hps_shmem_shm_seg_t;

/* Create this PE's heap (size bytes, in a named segment when shared, else
 * anonymous); returns its base or NULL after one line. */
void *hps_shmem_shm_heap_create(size_t size, int shared, hps_shmem_shm_seg_t *seg);
/* Find the executable's writable data; with shared, move it onto a named
 * segment at the same address (contents kept).  0 or -1 after one line. */
int hps_shmem_shm_data_setup(int shared, uintptr_t *base, size_t *size, hps_shmem_shm_seg_t *seg);
/* Map peer pe's segment `what` ("heap" or "data") of size bytes. */
void *hps_shmem_shm_map_peer(const char *what, int pe, size_t size);
/* Remove a segment's name (peers keep their mappings). */
void hps_shmem_shm_unlink(hps_shmem_shm_seg_t *seg);
void hps_shmem_shm_unmap(void *base, size_t size);

#endif
