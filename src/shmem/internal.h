/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the inline layer between the OpenSHMEM API and the two
 * transports.
 *
 * Promise: every remote operation is "translate, then move": hps_target()
 * turns (symmetric address, PE) into either a pointer into that PE's memory
 * as mapped here (on-node: the operation is a load/store/atomic through
 * transport/shm.h) or NULL plus (region, offset) for libfabric
 * (transport/ofi.h).  All the checks the API owes its users (called before
 * init, PE out of range, address outside symmetric memory) ride on the
 * translation's own compares: a bad call falls off an unlikely branch into
 * hps_shmem_bad_target(), which prints one line naming the call and ends the job;
 * a good one pays nothing for them.
 *
 * Instruction budget (x86-64, gcc 12 -O2, counted with callgrind, see
 * docs/shmem.md, Fast paths): shmem_int_p on-node is 14 instructions from
 * entry to return to a heap object and 18 to a global (whose region is
 * checked second), an idle shmem_quiet 5; keep the first cache line of
 * hps_shmem_sh for what they read.
 */
#ifndef HPS_SHMEM_INTERNAL_H
#define HPS_SHMEM_INTERNAL_H

#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hpsync/pr.h"
#include "transport/ofi.h"
#include "transport/shm.h"
#include "node.h"
#include "wait.h"

/* The libfabric transport's inline fast paths (an inject put, an idle
 * quiet). */
#include "transport/ofi_inline.h"

/* An OpenSHMEM routine's definition.  Exported; no_reorder keeps GCC from
 * emitting it after the file's top-level asm, the profiling aliases of
 * pshmem_alias.h, which must see it (that header says why).  It changes
 * where the code lies, not one instruction of it.  A file that defines
 * routines includes "pshmem_alias.h" as its last line, and calls none of
 * them itself: what the library does for itself goes through hidden
 * functions, so a tool that replaces a routine sees only the program's
 * calls (a test checks that no object refers to an API name). */
#define HPS_API HPS_EXPORT __attribute__((no_reorder))

enum { HPS_REG_HEAP = 0, HPS_REG_DATA = 1, HPS_NREG = 2 };

/* Library life cycle, for the "called before shmem_init" messages. */
enum { HPS_ST_NEVER = 0, HPS_ST_RUNNING = 1, HPS_ST_FINALIZED = 2 };

/*
 * The state the fast paths read.  npes stays 0 until shmem_init has wired
 * everything up (and again after finalize), so the PE range check is also
 * the "is the library running" check.  peer[region][pe] is pe's region as
 * mapped in this process; for this PE it is its own base, unless every
 * operation must go through libfabric.  A PE reached through libfabric has
 * its transport row there instead (hps_ofi_target_t), tagged with bit 0
 * (HPS_PEER_OFI), so one load tells a store from an inject and feeds both.
 * Only an empty data segment's entries stay NULL, and the size check turns
 * away every address there first.  Read it through hps_peer_map() unless
 * you handle the tag.
 */
typedef struct hps_shmem_state {
    uint32_t npes;
    uint8_t ofi;                /* some peer is reached through libfabric */
    uintptr_t base[HPS_NREG];   /* this PE's regions */
    size_t size[HPS_NREG];
    char **peer[HPS_NREG];
    /* ---- not on the fast path ---- */
    int me;
    int state;
    int thread_level;
    int rt_up;                  /* joined the job: errors end it through the runtime */
    int transport_ofi;          /* HPSYNC_SHMEM_TRANSPORT=ofi */
} __attribute__((aligned(HPS_CACHELINE))) hps_shmem_state_t;

extern hps_shmem_state_t hps_shmem_sh;

#define HPS_PEER_OFI ((uintptr_t)1)
HPS_INLINE int hps_peer_is_ofi(const char *b)
{
    return ((uintptr_t)b & HPS_PEER_OFI) != 0;
}
/* The transport's row behind a tagged peer entry. */
HPS_INLINE const hps_ofi_target_t *hps_peer_row(const char *b)
{
    return (const hps_ofi_target_t *)(b - HPS_PEER_OFI);
}
/* pe's region r as mapped here, or NULL (reached through libfabric). */
HPS_INLINE char *hps_peer_map(int r, int pe)
{
    char *b = hps_shmem_sh.peer[r][pe];
    return hps_peer_is_ofi(b) ? NULL : b;
}

/* ---- errors (error.c) ------------------------------------------------------ */

/* "hpsync-shmem: <fn>: <message>" on stderr, then the job ends (status 1). */
void hps_shmem_fatal(const char *fn, const char *fmt, ...)
    __attribute__((noreturn, cold, format(printf, 2, 3)));
/* The checks' slow path: says which of (state, pe, address) was wrong. */
void hps_shmem_bad_target(const char *fn, const void *addr, size_t len, int pe)
    __attribute__((noreturn, cold));
/* A libfabric call failed (it printed its line): end the job. */
void hps_shmem_transport_failed(const char *fn) __attribute__((noreturn, cold));
/* For routines without a target (collectives, heap): fail unless running. */
HPS_INLINE void hps_check_running(const char *fn)
{
    if (hps_unlikely(hps_shmem_sh.npes == 0))
        hps_shmem_bad_target(fn, NULL, 0, 0);
}

#define HPS_OFI(fn, call) do { \
        if (hps_unlikely((call) != 0)) \
            hps_shmem_transport_failed(fn); \
    } while (0)

/* ---- translation ------------------------------------------------------------ */

/* The region holding addr (and *off in it), or -1: for queries and error
 * messages, where a bad address is an answer rather than an error. */
HPS_INLINE int hps_region_of(const void *addr, size_t *off)
{
    for (int r = 0; r < HPS_NREG; r++) {
        *off = (uintptr_t)addr - hps_shmem_sh.base[r];
        if (*off < hps_shmem_sh.size[r])
            return r;
    }
    return -1;
}

/* shmem_ptr's answer for a running library (world numbering), for
 * shmem_ptr and shmem_team_ptr (init.c). */
void *hps_shmem_local_ptr(const void *dest, int pe);

/*
 * Where pe's copy of [addr, addr + len) is: returns peer[region][pe] as
 * stored (a mapping, or a tagged libfabric row) with *reg and *off set.  A
 * len known at compile time to be at most 16 (one element) needs no end
 * check: regions are 64-byte multiples and elements naturally aligned, so a
 * start inside means an end inside.
 */
HPS_INLINE char *hps_target_raw(const char *fn, const void *addr, size_t len, int pe,
                                int *reg, size_t *off)
{
    uintptr_t a = (uintptr_t)addr;
    size_t o = a - hps_shmem_sh.base[HPS_REG_HEAP];
    char *b;
    if (hps_unlikely((unsigned)pe >= hps_shmem_sh.npes))
        hps_shmem_bad_target(fn, addr, len, pe);
    /* Each region has its own path, so the heap's is straight-line. */
    if (hps_likely(o < hps_shmem_sh.size[HPS_REG_HEAP])) {
        *reg = HPS_REG_HEAP;
        b = hps_shmem_sh.peer[HPS_REG_HEAP][pe];
    } else {
        o = a - hps_shmem_sh.base[HPS_REG_DATA];
        if (hps_unlikely(o >= hps_shmem_sh.size[HPS_REG_DATA]))
            hps_shmem_bad_target(fn, addr, len, pe);
        *reg = HPS_REG_DATA;
        b = hps_shmem_sh.peer[HPS_REG_DATA][pe];
    }
    if (!(__builtin_constant_p(len) && len <= 16) && hps_unlikely(len > hps_shmem_sh.size[*reg] - o))
        hps_shmem_bad_target(fn, addr, len, pe);
    *off = o;
    return b;
}

/* pe's copy of [addr, addr + len): a pointer (direct access) or NULL with
 * (*reg, *off) set (libfabric). */
HPS_INLINE char *hps_target(const char *fn, const void *addr, size_t len, int pe,
                            int *reg, size_t *off)
{
    char *b = hps_target_raw(fn, addr, len, pe, reg, off);
    return hps_likely(!hps_peer_is_ofi(b)) ? b + *off : NULL;
}

/* shmem_TYPENAME_p: the value goes from its register to the target.  The
 * libfabric branch (which needs the value in memory, so a stack frame) is a
 * tail call out of line, so the on-node path has no frame at all; it gets
 * the tagged transport row, so it looks up nothing else before the fabric
 * call.  The call goes through a pointer per size (an indirect jump costs
 * the instructions of a direct one), set once at init (rma.c): the
 * unlocked inject, or, when threads may share the default context
 * (SHMEM_THREAD_MULTIPLE), the transport's put, which takes its lock. */
#define HPS_P_OFI_DECL(N, UT) \
    extern void (*hps_shmem_p_ofi##N)(size_t off, UT bits, const char *tagged_row, const char *fn) \
        __attribute__((visibility("hidden")));
HPS_P_OFI_DECL(1, uint8_t)
HPS_P_OFI_DECL(2, uint16_t)
HPS_P_OFI_DECL(4, uint32_t)
HPS_P_OFI_DECL(8, uint64_t)
#undef HPS_P_OFI_DECL
/* Choose those (after the transport is up). */
void hps_shmem_p_ofi_select(int thread_multiple);
/* The one for sizeof(T), which is a constant: the branches fold away. */
#define HPS_P_OFI(T, off, v, row, fn) do { \
        if (sizeof(T) == 1) { uint8_t w_; memcpy(&w_, &(v), 1); hps_shmem_p_ofi1(off, w_, row, fn); } \
        else if (sizeof(T) == 2) { uint16_t w_; memcpy(&w_, &(v), 2); hps_shmem_p_ofi2(off, w_, row, fn); } \
        else if (sizeof(T) == 4) { uint32_t w_; memcpy(&w_, &(v), 4); hps_shmem_p_ofi4(off, w_, row, fn); } \
        else { uint64_t w_; memcpy(&w_, &(v), 8); hps_shmem_p_ofi8(off, w_, row, fn); } \
    } while (0)
/* ---- contexts ----------------------------------------------------------------- */

/* A communication context: its team, and over libfabric its transport
 * state (an endpoint and counters of its own, ctx.c); the default
 * context's is the core's hps_ofi_dflt.  On-node, operations have nothing
 * to complete, so contexts differ only over libfabric. */
struct hps_shmem_ctx {
    shmem_team_t team;
    int world;                  /* team is SHMEM_TEAM_WORLD: PE numbers are world ones */
    long options;
    hps_ofi_ctx_t *ofi;         /* NULL without libfabric */
};

/* OpenSHMEM numbers the PEs of a context's operations in the context's
 * team.  Out of line for a team other than the world (ctx.c): the team's
 * member pe in world numbering, or one error line naming fn. */
int hps_shmem_ctx_team_pe(const char *fn, shmem_ctx_t ctx, int pe);
/* pe of ctx's team as a world PE: for the default context and any other
 * world context nothing but a load and a branch. */
HPS_INLINE int hps_shmem_ctx_pe(const char *fn, shmem_ctx_t ctx, int pe)
{
    if (__builtin_constant_p(ctx == SHMEM_CTX_DEFAULT) && ctx == SHMEM_CTX_DEFAULT)
        return pe;
    if (hps_likely(ctx != SHMEM_CTX_INVALID && ctx->world))
        return pe;
    return hps_shmem_ctx_team_pe(fn, ctx, pe);
}

/* ctx's libfabric state, for an operation that goes over libfabric.  The
 * default context's is a constant, so the routines without a context
 * compile as if there were none. */
HPS_INLINE hps_ofi_ctx_t *hps_shmem_ctx_ofi(const char *fn, shmem_ctx_t ctx)
{
    if (__builtin_constant_p(ctx == SHMEM_CTX_DEFAULT) && ctx == SHMEM_CTX_DEFAULT)
        return &hps_ofi_dflt;
    if (hps_unlikely(ctx == SHMEM_CTX_INVALID))
        hps_shmem_fatal(fn, "invalid context (SHMEM_CTX_INVALID)");
    return ctx->ofi;
}
#define HPS_CTX_IS_DEFAULT(ctx) \
    (__builtin_constant_p((ctx) == SHMEM_CTX_DEFAULT) && (ctx) == SHMEM_CTX_DEFAULT)

/* A context's shmem_TYPENAME_p over libfabric: the value in memory. */
void hps_shmem_p_ofi_ctx(const char *fn, shmem_ctx_t ctx, size_t off, const void *v, size_t size,
                   const char *tagged_row);

#define HPS_P(ctx, fn, T, dest, value, pe) do { \
        int r_; \
        size_t o_; \
        T v_ = (value); \
        char *b_ = hps_target_raw((fn), (dest), sizeof(T), (pe), &r_, &o_); \
        if (hps_likely(!hps_peer_is_ofi(b_))) { \
            memcpy(b_ + o_, &v_, sizeof(T)); \
        } else if (HPS_CTX_IS_DEFAULT(ctx) && \
                   (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8)) { \
            HPS_P_OFI(T, o_, v_, b_, (fn)); \
        } else { \
            hps_shmem_p_ofi_ctx((fn), (ctx), o_, &v_, sizeof(T), b_); \
        } \
    } while (0)

/* Define shmem_NAME(PARAMS) and its context twin shmem_ctx_NAME(ctx, PARAMS)
 * running STMT (BOTH) or returning EXPR (BOTH_R), with the context as ctx_
 * (SHMEM_CTX_DEFAULT in the first).  PARAMS has a target PE named pe, which
 * the twin turns from its context's team's numbering into the world's. */
#define HPS_UNPAREN(...) __VA_ARGS__
#define BOTH(NAME, PARAMS, STMT) \
    HPS_API void shmem_##NAME PARAMS { const shmem_ctx_t ctx_ = SHMEM_CTX_DEFAULT; STMT; } \
    HPS_API void shmem_ctx_##NAME(shmem_ctx_t ctx_, HPS_UNPAREN PARAMS) \
    { pe = hps_shmem_ctx_pe(__func__, ctx_, pe); STMT; }
#define BOTH_R(R, NAME, PARAMS, EXPR) \
    HPS_API R shmem_##NAME PARAMS { const shmem_ctx_t ctx_ = SHMEM_CTX_DEFAULT; return EXPR; } \
    HPS_API R shmem_ctx_##NAME(shmem_ctx_t ctx_, HPS_UNPAREN PARAMS) \
    { pe = hps_shmem_ctx_pe(__func__, ctx_, pe); return EXPR; }

/* ---- RMA ------------------------------------------------------------------------ */

/* A bulk transfer of nothing is nothing (its pointers may be anything);
 * folds away for the single-element routines, whose length is constant. */
#define HPS_EMPTY(len) (!__builtin_constant_p(len) && (len) == 0)

/* One contiguous transfer: put or get, blocking or not.  kind is a
 * constant at every call, so each wrapper below compiles to its own
 * straight path. */
enum hps_rma_kind { HPS_PUT, HPS_PUT_NBI, HPS_GET, HPS_GET_NBI };

HPS_INLINE void hps_rma(enum hps_rma_kind kind, shmem_ctx_t ctx, const char *fn, void *dest,
                        const void *src, size_t len, int pe)
{
    if (HPS_EMPTY(len))
        return;
    int put = kind == HPS_PUT || kind == HPS_PUT_NBI;
    int r;
    size_t o;
    char *p = hps_target_raw(fn, put ? dest : src, len, pe, &r, &o);
    if (hps_likely(!hps_peer_is_ofi(p))) {
        if (put)
            hps_shmem_shm_put(p + o, src, len);
        else
            hps_shmem_shm_get(dest, p + o, len);
        return;
    }
    hps_ofi_ctx_t *c = hps_shmem_ctx_ofi(fn, ctx);
    const hps_ofi_target_t *t = hps_peer_row(p);
    switch (kind) {
    case HPS_PUT:     HPS_OFI(fn, hps_ofi_put_fast(c, t, o, src, len)); break;
    case HPS_PUT_NBI: HPS_OFI(fn, hps_ofi_put_nbi(c, t, o, src, len)); break;
    case HPS_GET:     HPS_OFI(fn, hps_ofi_get(c, dest, t, o, len)); break;
    case HPS_GET_NBI: HPS_OFI(fn, hps_ofi_get_nbi(c, dest, t, o, len)); break;
    }
}

#define hps_shmem_ctx_put(ctx, fn, dest, src, len, pe)     hps_rma(HPS_PUT, ctx, fn, dest, src, len, pe)
#define hps_shmem_ctx_put_nbi(ctx, fn, dest, src, len, pe) hps_rma(HPS_PUT_NBI, ctx, fn, dest, src, len, pe)
#define hps_shmem_ctx_get(ctx, fn, dest, src, len, pe)     hps_rma(HPS_GET, ctx, fn, dest, src, len, pe)
#define hps_shmem_ctx_get_nbi(ctx, fn, dest, src, len, pe) hps_rma(HPS_GET_NBI, ctx, fn, dest, src, len, pe)
/* The same on the default context (the collectives' and the library's own). */
#define hps_put(...)     hps_shmem_ctx_put(SHMEM_CTX_DEFAULT, __VA_ARGS__)
#define hps_put_nbi(...) hps_shmem_ctx_put_nbi(SHMEM_CTX_DEFAULT, __VA_ARGS__)
#define hps_get(...)     hps_shmem_ctx_get(SHMEM_CTX_DEFAULT, __VA_ARGS__)
#define hps_get_nbi(...) hps_shmem_ctx_get_nbi(SHMEM_CTX_DEFAULT, __VA_ARGS__)

/* Strided: element size es, strides in elements (OpenSHMEM's dst/sst). */
void hps_shmem_ctx_iput(shmem_ctx_t ctx, const char *fn, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t es, int pe);
void hps_shmem_ctx_iget(shmem_ctx_t ctx, const char *fn, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t es, int pe);
#define hps_iput(...) hps_shmem_ctx_iput(SHMEM_CTX_DEFAULT, __VA_ARGS__)
#define hps_iget(...) hps_shmem_ctx_iget(SHMEM_CTX_DEFAULT, __VA_ARGS__)

/* ---- atomics ---------------------------------------------------------------------- */

/* One AMO of size 4 or 8 (see ofi.h for the operands); nbi: a fetching
 * result may arrive as late as the next quiet. */
HPS_INLINE void hps_shmem_ctx_amo(shmem_ctx_t ctx, const char *fn, enum hps_ofi_aop op, void *dest,
                            const void *operand, const void *compare, void *result, size_t size,
                            int pe, int nbi)
{
    int r;
    size_t o;
    char *p = hps_target_raw(fn, dest, size, pe, &r, &o);
    if (hps_likely(!hps_peer_is_ofi(p)))
        hps_shmem_shm_amo(op, p + o, operand, compare, result, size);
    else if (__builtin_constant_p(result == NULL) && result == NULL)
        HPS_OFI(fn, hps_ofi_amo_fast(hps_shmem_ctx_ofi(fn, ctx), op, hps_peer_row(p), o, operand, size));
    else if (nbi)
        HPS_OFI(fn, hps_ofi_atomic_nbi(hps_shmem_ctx_ofi(fn, ctx), op, hps_peer_row(p), o, operand,
                                       compare, result, size));
    else
        HPS_OFI(fn, hps_ofi_atomic(hps_shmem_ctx_ofi(fn, ctx), op, hps_peer_row(p), o, operand, compare,
                                   result, size));
}
#define hps_amo(...) hps_shmem_ctx_amo(SHMEM_CTX_DEFAULT, __VA_ARGS__)

/* Internal 64-bit helpers (barriers, locks, signals). */
HPS_INLINE void hps_shmem_ctx_amo64(shmem_ctx_t ctx, const char *fn, enum hps_ofi_aop op,
                              uint64_t *dest, uint64_t v, int pe)
{
    hps_shmem_ctx_amo(ctx, fn, op, dest, &v, NULL, NULL, 8, pe, 0);
}
#define hps_amo64(...) hps_shmem_ctx_amo64(SHMEM_CTX_DEFAULT, __VA_ARGS__)

/* A barrier's signal (HPS_AOP_ADD or HPS_AOP_SET of v) on the default
 * context: a non-fetching atomic its target waits for, which the next
 * quiet need not make sure has been processed (hps_ofi_signal_fast).
 * Only for signals that follow the quiet completing what they announce. */
HPS_INLINE void hps_signal64(const char *fn, enum hps_ofi_aop op, uint64_t *dest, uint64_t v,
                             int pe)
{
    int r;
    size_t o;
    char *p = hps_target_raw(fn, dest, sizeof v, pe, &r, &o);
    if (hps_likely(!hps_peer_is_ofi(p)))
        hps_shmem_shm_amo(op, p + o, &v, NULL, NULL, sizeof v);
    else
        HPS_OFI(fn, hps_ofi_signal_fast(&hps_ofi_dflt, op, hps_peer_row(p), o, &v));
}

/* ---- ordering ------------------------------------------------------------------------ */

HPS_INLINE void hps_shmem_ctx_fence(shmem_ctx_t ctx, const char *fn)
{
    if (hps_unlikely(hps_shmem_sh.ofi))
        HPS_OFI(fn, hps_ofi_fence(hps_shmem_ctx_ofi(fn, ctx)));
    /* On-node puts are plain stores: order them before later ones. */
    hps_fence_release();
}

HPS_INLINE void hps_shmem_ctx_quiet(shmem_ctx_t ctx, const char *fn)
{
    if (hps_unlikely(hps_shmem_sh.ofi))
        HPS_OFI(fn, hps_ofi_quiet_fast(hps_shmem_ctx_ofi(fn, ctx)));
    /* Full fence: a later load (say, of a flag the target answers in) must
     * not pass this PE's stores into the target (StoreLoad). */
    hps_fence_seq_cst();
}
#define hps_fence(fn) hps_shmem_ctx_fence(SHMEM_CTX_DEFAULT, fn)
#define hps_quiet(fn) hps_shmem_ctx_quiet(SHMEM_CTX_DEFAULT, fn)

/* ---- waiting (sync.c) --------------------------------------------------------------- */

/* One step of wait.h's policy, driving libfabric's progress when it is in
 * use.  (Named apart from libhpsync's hps_wait_step in src/lock/wait.c, so
 * both static libraries link into one program.) */
void hps_shmem_wait_step(hps_shmem_waiter_t *w);
/* Wait until *v (this PE's memory, written by others) >= goal. */
void hps_shmem_wait_ge64(const uint64_t *v, uint64_t goal);

/* ---- set-up pieces ---------------------------------------------------------------- */

/* heap.c: the symmetric allocator over [reserved, size) of the heap. */
void hps_shmem_heap_init(size_t heap_size, size_t reserved);
/* heap.c: how the heap must be mapped (transport/shm.c): base + *lead
 * aligned to the value returned, on every PE. */
size_t hps_shmem_heap_map_align(size_t heap_size, size_t page, size_t *lead);
size_t hps_shmem_heap_free_bytes(void);
/* team.c: world and shared teams, after the transports are up. */
void hps_shmem_teams_init(void);
void hps_shmem_teams_fini(void);
/* team.c: shmem_barrier_all for the library's own use (heap, finalize). */
void hps_shmem_barrier_all_internal(const char *fn);

/* The internal symmetric area at the heap's start: one block per team
 * slot for the point-to-point algorithms (barrier flags, collective
 * scratch), then the on-node collectives' area (node.h). */
#define HPS_TEAM_SLOTS 64
#define HPS_SYNC_ROUNDS 32
typedef struct hps_team_sync {
    uint64_t flag[HPS_SYNC_ROUNDS];   /* dissemination round k: signals received */
    uint64_t count;                   /* collect: this PE's element count */
    uint64_t pad[7];
} hps_team_sync_t;
#define HPS_HEAP_RESERVED (HPS_TEAM_SLOTS * sizeof(hps_team_sync_t) + sizeof(hps_shmem_node_area_t))

HPS_INLINE hps_team_sync_t *hps_slot_sync(int slot)
{
    return (hps_team_sync_t *)hps_shmem_sh.base[HPS_REG_HEAP] + slot;
}

/* The node area of a heap (this PE's, or a peer's as mapped here). */
HPS_INLINE hps_shmem_node_area_t *hps_shmem_node_area(char *heap)
{
    return (hps_shmem_node_area_t *)(heap + HPS_TEAM_SLOTS * sizeof(hps_team_sync_t));
}

#endif
