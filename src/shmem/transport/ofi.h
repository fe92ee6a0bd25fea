/* SPDX-License-Identifier: MIT */
/*
 * ofi.h - the off-node transport: OpenSHMEM operations on libfabric, as a
 * module the core loads at run time.
 *
 * Promise: after init, every PE can reach every other PE's symmetric
 * regions (region 0: the symmetric heap, region 1: the data segment)
 * through reliable-datagram endpoints (FI_EP_RDM with FI_RMA | FI_ATOMIC):
 * small puts by fi_inject_write, completion counted by counters (fi_cntr),
 * not queues; virtual or offset addressing and provider-chosen keys as the
 * provider requires (FI_MR_VIRT_ADDR, FI_MR_PROV_KEY...), exchanged through
 * the runtime.  Works unchanged on the shm, tcp;ofi_rxm and sockets
 * providers; HPSYNC_SHMEM_PROVIDER names one.  Waiting follows the
 * library's one policy (../wait.h), and a PE that sits in computation while
 * others target it still progresses (a progress thread that naps between
 * polls).  Thread-safe: a context several threads may use at once takes a
 * lock (ofi_internal.h).
 *
 * Why a module: loading libfabric costs every process ~0.2 s before main
 * (libfabric 1.17 as Debian builds it pulls in libpsm_infinipath, whose
 * libinfinipath constructor calibrates its clock by sleeping 100 ms, twice
 * here), so only libhpsync-shmem-ofi.so links it, and the core dlopens that
 * when some peer needs libfabric (ofi_load.c).  An on-node job never maps
 * libfabric.  The interface is one ops table with a size and a version
 * first, as libfabric's own fi_ops are; the core copies it into its own
 * memory, so a call is one indirect call through a rip-relative slot.
 *
 * Operations name their target by the peer's addressing row for the region
 * (hps_ofi_target_t, ofi_inline.h: the core keeps it, tagged, in its peer
 * table) and an offset in that region, and run on a context
 * (hps_ofi_ctx_t): the default one, or one made by ctx_create with its own
 * endpoint and counters.  All return 0, or -1 after one line on stderr
 * naming the call and libfabric's error text.
 */
#ifndef HPS_SHMEM_OFI_H
#define HPS_SHMEM_OFI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../wait.h"

#define HPS_OFI_REGIONS 2

typedef struct hps_ofi_region {
    void *base;        /* this PE's region */
    size_t size;
} hps_ofi_region_t;

typedef struct hps_ofi_ctx hps_ofi_ctx_t;          /* ofi_inline.h */
typedef struct hps_ofi_target hps_ofi_target_t;    /* ofi_inline.h */

/* Atomics on 4- and 8-byte integers.  Ops: */
enum hps_ofi_aop {
    HPS_AOP_SET,       /* *target = operand                      (atomic write) */
    HPS_AOP_FETCH,     /* result = *target                       (atomic read) */
    HPS_AOP_SWAP,      /* result = *target, *target = operand */
    HPS_AOP_CSWAP,     /* result = *target, if == *compare: *target = operand */
    HPS_AOP_ADD, HPS_AOP_AND, HPS_AOP_OR, HPS_AOP_XOR
};

/* What init needs and gives back.  Collective. */
typedef struct hps_ofi_setup {
    hps_ofi_region_t region[HPS_OFI_REGIONS];
    hps_ofi_ctx_t *dflt;           /* the default context's state: the caller's memory */
    int thread_multiple;           /* threads may share the default context at once */
    /* Out: every PE's row per region, [region][pe]. */
    const hps_ofi_target_t *row[HPS_OFI_REGIONS];
} hps_ofi_setup_t;

/* Context options (from SHMEM_CTX_*): one thread at a time uses it. */
#define HPS_OFI_CTX_SINGLE 1

/*
 * The operations: X(return type, name, parameters, arguments).
 *   init / finalize   open the fabric, register the regions, exchange
 *                     addresses and keys through the runtime, insert every
 *                     PE into the address vector; quiet, barrier, close.
 *   provider          the provider in use, e.g. "tcp;ofi_rxm".
 *   put               src may be reused on return (local completion);
 *                     remote completion at quiet.  put_nbi: src is in use
 *                     until quiet.
 *   get               dst is filled on return; get_nbi: at quiet;
 *                     get_wait: every get issued so far has arrived (a
 *                     batch of get_nbi made blocking, without quiet's
 *                     flush of written peers).
 *   atomic            result NULL: no fetch (not for FETCH/SWAP/CSWAP).
 *                     Returns when result is valid (fetching) or operand
 *                     may be reused; atomic_nbi fetches into result by
 *                     quiet.  size 4 or 8.
 *   fence             puts/atomics to each PE arrive in order across it.
 *   quiet             every operation issued on the context completes
 *                     remotely (the slow path of hps_ofi_quiet_fast).
 *   progress / poll   make progress for operations that target this PE
 *                     (call while waiting); poll also returns a number that
 *                     changes whenever operations of this PE complete or,
 *                     where the provider counts them (FI_RMA_EVENT: shm,
 *                     sockets), operations into this PE arrive.
 *   ctx_create        a context with its own endpoint and counters
 *                     (options: HPS_OFI_CTX_SINGLE or 0); ctx_destroy
 *                     quiets and closes it.
 */
#define HPS_OFI_OPS(X) \
    X(int, init, (hps_ofi_setup_t *s), (s)) \
    X(int, finalize, (void), ()) \
    X(const char *, provider, (void), ()) \
    X(int, put, (hps_ofi_ctx_t *c, const hps_ofi_target_t *t, size_t off, const void *src, \
                 size_t len), (c, t, off, src, len)) \
    X(int, put_nbi, (hps_ofi_ctx_t *c, const hps_ofi_target_t *t, size_t off, const void *src, \
                     size_t len), (c, t, off, src, len)) \
    X(int, get, (hps_ofi_ctx_t *c, void *dst, const hps_ofi_target_t *t, size_t off, size_t len), \
      (c, dst, t, off, len)) \
    X(int, get_nbi, (hps_ofi_ctx_t *c, void *dst, const hps_ofi_target_t *t, size_t off, \
                     size_t len), (c, dst, t, off, len)) \
    X(int, get_wait, (hps_ofi_ctx_t *c), (c)) \
    X(int, atomic, (hps_ofi_ctx_t *c, enum hps_ofi_aop op, const hps_ofi_target_t *t, size_t off, \
                    const void *operand, const void *compare, void *result, size_t size), \
      (c, op, t, off, operand, compare, result, size)) \
    X(int, atomic_nbi, (hps_ofi_ctx_t *c, enum hps_ofi_aop op, const hps_ofi_target_t *t, \
                        size_t off, const void *operand, const void *compare, void *result, \
                        size_t size), (c, op, t, off, operand, compare, result, size)) \
    X(int, fence, (hps_ofi_ctx_t *c), (c)) \
    X(int, quiet, (hps_ofi_ctx_t *c), (c)) \
    X(int, progress, (void), ()) \
    X(uint64_t, poll, (void), ()) \
    X(int, ctx_create, (int options, hps_ofi_ctx_t **out), (options, out)) \
    X(int, ctx_destroy, (hps_ofi_ctx_t *c), (c))

/* The table the module hands over.  size and version first: a module from
 * another build is refused with one line, never called. */
#define HPS_OFI_OPS_VERSION 1
typedef struct hps_ofi_ops {
    size_t size;
    uint32_t version;
#define HPS_OFI_OP_FIELD(R, NAME, PARAMS, ARGS) R (*NAME) PARAMS;
    HPS_OFI_OPS(HPS_OFI_OP_FIELD)
#undef HPS_OFI_OP_FIELD
} hps_ofi_ops_t;

/* What the core lends the module: the runtime's start-up calls
 * (runtime.h), its error line (errline.h) and its waiting policy
 * (wait.h).  The module calls nothing of the core's by symbol, so the core
 * exports only the OpenSHMEM API, and a static build works as well. */
typedef struct hps_ofi_core {
    size_t size;
    uint32_t version;
    int (*rt_rank)(void);
    int (*rt_size)(void);
    int (*rt_node_of)(int pe);
    int (*rt_put)(const char *key, const void *val, size_t len);
    int (*rt_exchange)(void);
    int (*rt_get)(int pe, const char *key, void *val, size_t len);
    int (*rt_barrier)(void);
    void (*verrline)(const char *fn, const char *fmt, va_list ap);
    int (*waiter_step)(hps_shmem_waiter_t *w, int ofi, uint64_t traffic);
    size_t ctx_size, target_size;  /* sizeof the shared structures (ofi_inline.h) */
} hps_ofi_core_t;

/* The module's one exported symbol: its ops table, or NULL after one line
 * when core is not what it was built for. */
#define HPS_OFI_MODULE_ENTRY "hps_shmem_ofi_module"
typedef const hps_ofi_ops_t *(*hps_ofi_module_fn)(const hps_ofi_core_t *core);

#ifdef HPS_OFI_TRANSPORT
/* The transport's own files (the module, and the tests that link them):
 * the functions themselves. */
#define HPS_OFI_DECL(R, NAME, PARAMS, ARGS) R hps_ofi_##NAME PARAMS;
HPS_OFI_OPS(HPS_OFI_DECL)
#undef HPS_OFI_DECL
#else
/* The core: each call goes through the table ofi_load.c copied from the
 * module. */
extern hps_ofi_ops_t hps_ofi_ops __attribute__((visibility("hidden")));
#define HPS_OFI_WRAP(R, NAME, PARAMS, ARGS) \
    static inline R hps_ofi_##NAME PARAMS { return hps_ofi_ops.NAME ARGS; }
HPS_OFI_OPS(HPS_OFI_WRAP)
#undef HPS_OFI_WRAP
/* Find and open the module (once); 0, or -1 after one line naming what
 * was tried and why it failed.  why says who asked for libfabric. */
int hps_ofi_load(const char *fn, const char *why);
#endif

#endif
