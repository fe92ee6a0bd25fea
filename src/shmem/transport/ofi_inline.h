/* SPDX-License-Identifier: MIT */
/*
 * ofi_inline.h - the libfabric transport's fast paths, for the core to inline.
 *
 * Promise: hps_ofi_put_fast() and hps_ofi_quiet_fast() behave exactly like
 * hps_ofi_put() and hps_ofi_quiet() (ofi.h), but the common case costs a
 * handful of instructions in the caller:
 *   put of len <= inject size: peer entry, remote address, fi_inject_write
 *     (itself an inline call through the endpoint's ops table), mark the
 *     peer for quiet's flush, count;
 *   quiet with nothing outstanding: one compare of two sums.
 * Anything else (a full transmit queue, a larger put, outstanding work)
 * goes to the out-of-line functions in ofi_*.c.  Valid after hps_ofi_init().
 */
#ifndef HPS_SHMEM_OFI_INLINE_H
#define HPS_SHMEM_OFI_INLINE_H

#include <rdma/fabric.h>
#include <rdma/fi_rma.h>

#include "hpsync/pr.h"
#include "ofi.h"

/* What quiet needs to know about one peer, one cache line each: written
 * since the last quiet by an operation whose counter may only mean "sent",
 * so quiet flushes this peer (see hps_ofi_quiet).  One byte per kind, so
 * marking is a single store. */
typedef struct hps_ofi_peer {
    _Atomic uint8_t dirty_rma;     /* fi_inject_write */
    _Atomic uint8_t dirty_amo;     /* non-fetching atomics */
} __attribute__((aligned(HPS_CACHELINE))) hps_ofi_peer_t;

/* How to reach one peer's region: everything an operation's addressing
 * needs in one row.  base is added to the offset: the peer's region
 * address where the provider addresses memory by virtual address
 * (FI_MR_VIRT_ADDR), else 0.  The core's per-region peer table keeps each
 * row's address, tagged, where an on-node peer has its mapping
 * (internal.h), so shmem_TYPENAME_p's path to the fabric call looks up no
 * region or PE index. */
typedef struct hps_ofi_target {
    uint64_t base, key;
    fi_addr_t addr;
    int region, pe;
} hps_ofi_target_t;

typedef struct hps_ofi_fast {
    struct fid_ep *ep;
    hps_ofi_peer_t *peer;          /* indexed by PE */
    hps_ofi_target_t *target[HPS_OFI_REGIONS];   /* [region][PE] */
    size_t inject_max;             /* largest put sent by fi_inject_write */
    /* Operations issued, per completion counter (writes and non-fetching
     * atomics / reads and fetching atomics), and the sum of both that the
     * last quiet saw complete: both only grow, so the sums are equal only
     * if nothing was issued since (one compare for an idle quiet).
     * Relaxed: each is only compared with the others by the thread that
     * calls quiet, and the provider's counter read orders the data. */
    hps_au64 put_issued, get_issued;
    hps_au64 done;
} hps_ofi_fast_t;

extern hps_ofi_fast_t hps_ofi_fast __attribute__((visibility("hidden")));

/* pe's row for region. */
HPS_INLINE const hps_ofi_target_t *hps_ofi_tgt(int region, int pe)
{
    return &hps_ofi_fast.target[region][pe];
}

/* Inject len <= inject_max bytes (at least 8: hps_ofi_init checks, so
 * shmem_TYPENAME_p need not compare) at off in t's region; 0 if sent, and
 * the caller then calls hps_ofi_injected(pe).  Non-zero (a full queue):
 * nothing was sent, use hps_ofi_put(). */
HPS_INLINE int hps_ofi_inject_target(const void *buf, size_t len, const hps_ofi_target_t *t,
                                     size_t off)
{
    return fi_inject_write(hps_ofi_fast.ep, buf, len, t->addr, t->base + off, t->key) != 0;
}

/* Book an inject to pe: quiet flushes the peer and waits for the count. */
HPS_INLINE void hps_ofi_injected(int pe)
{
    hps_store_relaxed(&hps_ofi_fast.peer[pe].dirty_rma, 1);
    hps_faa_relaxed(&hps_ofi_fast.put_issued, 1);
}

/* hps_ofi_put() with the inject case inline.  Budget: about 14 instructions
 * of its own from entry to the provider's inject call, plus whatever
 * registers the caller saves so the fallback can reissue after the call
 * (24 in all in a noinline wrapper, callgrind, see docs/shmem.md). */
HPS_INLINE int hps_ofi_put_fast(int region, size_t off, const void *src, size_t len, int pe)
{
    if (hps_likely(len <= hps_ofi_fast.inject_max) &&
        hps_likely(hps_ofi_inject_target(src, len, hps_ofi_tgt(region, pe), off) == 0)) {
        hps_ofi_injected(pe);
        return 0;
    }
    return hps_ofi_put(region, off, src, len, pe);
}

/* hps_ofi_quiet() with the idle case inline: nothing issued since the last
 * quiet finished means nothing to wait for. */
HPS_INLINE int hps_ofi_quiet_fast(void)
{
    if (hps_likely(hps_load_relaxed(&hps_ofi_fast.put_issued) +
                   hps_load_relaxed(&hps_ofi_fast.get_issued) ==
                   hps_load_relaxed(&hps_ofi_fast.done)))
        return 0;
    return hps_ofi_quiet();
}

#endif
