/* SPDX-License-Identifier: MIT */
/*
 * ofi_inline.h - what the core and the libfabric transport share in memory:
 * a peer's addressing row and a context's issuing state, and the fast paths
 * the core inlines on them.
 *
 * Promise: hps_ofi_put_fast() and hps_ofi_quiet_fast() behave exactly like
 * hps_ofi_put() and hps_ofi_quiet() (ofi.h), but the common case costs a
 * handful of instructions in the caller and no call into the transport
 * module:
 *   put of len <= the context's inject size: fi_inject_write (itself an
 *     inline call through the endpoint's ops table, so the core needs no
 *     libfabric symbol), mark the peer for quiet's flush, count;
 *   quiet with nothing outstanding: one compare of two sums.
 * Anything else (a full transmit queue, a larger put, outstanding work, a
 * context that takes a lock) goes to the transport.  Valid after init.
 */
#ifndef HPS_SHMEM_OFI_INLINE_H
#define HPS_SHMEM_OFI_INLINE_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "hpsync/pr.h"
#include "ofi.h"

/* How to reach one peer's region: everything an operation's addressing
 * needs in one row.  base is added to the offset: the peer's region
 * address where the provider addresses memory by virtual address
 * (FI_MR_VIRT_ADDR), else 0.  The core's per-region peer table keeps each
 * row's address, tagged, where an on-node peer has its mapping
 * (internal.h), so shmem_TYPENAME_p's path to the fabric call looks up no
 * region or PE index. */
struct hps_ofi_target {
    uint64_t base, key;
    fi_addr_t addr;
    int region, pe;
};

/* Written to a peer since the last quiet by an operation whose counter
 * may only mean "sent", so quiet flushes that peer (see hps_ofi_quiet).
 * One byte per kind, so marking is a single store. */
typedef struct hps_ofi_dirty {
    uint8_t rma;                   /* fi_inject_write */
    uint8_t amo;                   /* non-fetching atomics */
} hps_ofi_dirty_t;

struct hps_ofi_cstate;             /* the transport's part (ofi_internal.h) */

/*
 * One communication context's issuing state, one cache line: what a put
 * reads and writes, and what an idle quiet compares.  The default
 * context's lives in the core (its fast paths address it directly);
 * others are the transport's.  Only one thread issues on a context at a
 * time (a context several threads may use at once takes a lock, and has
 * inject_max 0 so that every put goes through the transport, which takes
 * it), so the counts are plain increments (hps_add_owned), never locked
 * read-modify-writes; other threads (the progress thread) only read them.
 */
struct hps_ofi_ctx {
    struct fid_ep *ep;
    hps_ofi_dirty_t *dirty;        /* [pe] */
    size_t inject_max;             /* largest put sent inline by fi_inject_write */
    /* Operations issued, per completion counter (writes and non-fetching
     * atomics / reads and fetching atomics), and the sum of both that the
     * last quiet saw complete: both only grow, so the sums are equal only
     * if nothing was issued since (one compare for an idle quiet). */
    hps_au64 put_issued, get_issued;
    hps_au64 done;
    struct hps_ofi_cstate *st;
    /* Non-fetching atomics the provider injects natively, bit
     * HPS_OFI_AMO_BIT(op, size); 0 for a context that takes a lock. */
    uint32_t amo_inject;
} __attribute__((aligned(HPS_CACHELINE)));
#define HPS_OFI_AMO_BIT(op, size) (1u << ((unsigned)(op) * 2 + ((size) == 8)))

/* libfabric's operation for an hps_ofi_aop, and its type: bit patterns
 * (unsigned) for the bitwise ones, numbers (signed) for the rest.  Both
 * fold to constants where op and size are. */
HPS_INLINE enum fi_op hps_ofi_fi_op(enum hps_ofi_aop op)
{
    switch (op) {
    case HPS_AOP_FETCH: return FI_ATOMIC_READ;
    case HPS_AOP_CSWAP: return FI_CSWAP;
    case HPS_AOP_ADD: return FI_SUM;
    case HPS_AOP_AND: return FI_BAND;
    case HPS_AOP_OR: return FI_BOR;
    case HPS_AOP_XOR: return FI_BXOR;
    default: return FI_ATOMIC_WRITE;            /* set, swap */
    }
}
HPS_INLINE enum fi_datatype hps_ofi_fi_type(enum hps_ofi_aop op, size_t size)
{
    int bits = op == HPS_AOP_AND || op == HPS_AOP_OR || op == HPS_AOP_XOR;
    if (bits)
        return size == 4 ? FI_UINT32 : FI_UINT64;
    return size == 4 ? FI_INT32 : FI_INT64;
}

#ifndef HPS_OFI_TRANSPORT
/* The default context's issuing state: the core's memory, so its fast
 * paths address it directly (ofi_load.c). */
extern hps_ofi_ctx_t hps_ofi_dflt __attribute__((visibility("hidden")));
#endif

/* Inject len <= c->inject_max bytes at off in t's region; 0 if sent (the
 * caller then calls hps_ofi_injected).  Non-zero (a full queue): nothing
 * was sent, use hps_ofi_put(). */
HPS_INLINE int hps_ofi_inject_target(hps_ofi_ctx_t *c, const void *buf, size_t len,
                                     const hps_ofi_target_t *t, size_t off)
{
    return fi_inject_write(c->ep, buf, len, t->addr, t->base + off, t->key) != 0;
}

/* Book an inject to pe: quiet flushes the peer and waits for the count. */
HPS_INLINE void hps_ofi_injected(hps_ofi_ctx_t *c, int pe)
{
    c->dirty[pe].rma = 1;
    hps_add_owned(&c->put_issued, 1);
}

/* A put to t's region with the inject case inline.  Budget: about 14
 * instructions of its own from entry to the provider's inject call, plus
 * whatever registers the caller saves so the fallback can reissue after
 * the call (callgrind, see docs/shmem.md). */
HPS_INLINE int hps_ofi_put_fast(hps_ofi_ctx_t *c, const hps_ofi_target_t *t, size_t off,
                                const void *src, size_t len)
{
    if (hps_likely(len <= c->inject_max) &&
        hps_likely(hps_ofi_inject_target(c, src, len, t, off) == 0)) {
        hps_ofi_injected(c, t->pe);
        return 0;
    }
    return hps_ofi_put(c, t, off, src, len);
}

/* A non-fetching atomic (set, add, and, or, xor) with the inject case
 * inline, injected and counted like a put: quiet flushes the peer with an
 * atomic read.  Anything else (a full queue, an op the provider does not
 * inject, a misaligned target, a locked context) goes to hps_ofi_atomic. */
HPS_INLINE int hps_ofi_amo_fast(hps_ofi_ctx_t *c, enum hps_ofi_aop op, const hps_ofi_target_t *t,
                                size_t off, const void *operand, size_t size)
{
    if (hps_likely(c->amo_inject & HPS_OFI_AMO_BIT(op, size)) && hps_likely(!(off & (size - 1))) &&
        hps_likely(fi_inject_atomic(c->ep, operand, 1, t->addr, t->base + off, t->key,
                                    hps_ofi_fi_type(op, size), hps_ofi_fi_op(op)) == 0)) {
        c->dirty[t->pe].amo = 1;
        hps_add_owned(&c->put_issued, 1);
        return 0;
    }
    return hps_ofi_atomic(c, op, t, off, operand, NULL, NULL, size);
}

/* A 64-bit set or add that its target waits for (a barrier's or a
 * lock's signal): injected and counted like hps_ofi_amo_fast, but its peer
 * is not marked for quiet's flush.  Nobody needs it processed by the next
 * quiet: the target sees it when it arrives, and operations before it
 * were completed by the quiet the caller made first.  Saves the next
 * quiet a round trip (a 2-PE shmem_barrier_all on shm: 1.2 -> 0.4 us). */
HPS_INLINE int hps_ofi_signal_fast(hps_ofi_ctx_t *c, enum hps_ofi_aop op,
                                   const hps_ofi_target_t *t, size_t off, const uint64_t *v)
{
    if (hps_likely(c->amo_inject & HPS_OFI_AMO_BIT(op, 8)) &&
        hps_likely(fi_inject_atomic(c->ep, v, 1, t->addr, t->base + off, t->key,
                                    hps_ofi_fi_type(op, 8), hps_ofi_fi_op(op)) == 0)) {
        hps_add_owned(&c->put_issued, 1);
        return 0;
    }
    return hps_ofi_atomic(c, op, t, off, v, NULL, NULL, 8);
}

/* hps_ofi_quiet() with the idle case inline: nothing issued since the last
 * quiet finished means nothing to wait for.  Read without the context's
 * lock: a thread's own operations are counted before it calls quiet, and
 * done only ever holds a sum whose operations all completed. */
HPS_INLINE int hps_ofi_quiet_fast(hps_ofi_ctx_t *c)
{
    if (hps_likely(hps_load_relaxed(&c->put_issued) + hps_load_relaxed(&c->get_issued) ==
                   hps_load_relaxed(&c->done)))
        return 0;
    return hps_ofi_quiet(c);
}

#endif
