/* SPDX-License-Identifier: MIT */
/*
 * ofi_test.h - what the libfabric transport tests share: the PE's view of
 * its two symmetric regions, the heap layout, and small helpers.
 *
 * Every check that fails prints one line "shmem_ofi.<case>: FAIL PE <n>:
 * ..." and exits the PE non-zero; fake_rt_run then ends the job.
 */
#ifndef HPS_TEST_OFI_TEST_H
#define HPS_TEST_OFI_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "../../../../src/shmem/transport/ofi_internal.h"
#include "fake_rt.h"

#define OT_MAX_MSG (1u << 20)            /* largest put/get tested */
#define OT_HEAP_RMA(src) ((size_t)(src) * OT_MAX_MSG)
#define OT_DATA_SIZE (64 * 1024)

/* Fixed places after the RMA area (ot.misc is its offset). */
enum {
    OT_AMO = 0,                  /* 64 words of atomics */
    OT_LOCK = 64 * 8,            /* the cswap lock word and the counter it guards */
    OT_FENCE_FLAG = 66 * 8,
    OT_FENCE_ACK = 67 * 8,
    OT_SWAP_COUNTS = 68 * 8,     /* per-PE tallies, used through fake_rt_shared */
    OT_FENCE_DATA = 4096,        /* up to 64 KiB */
    OT_MISC_SIZE = 4096 + 65536,
};

typedef struct ot_ctx {
    hps_ofi_ctx_t *c;            /* the default context (its issuing half is ours) */
    int me, n;
    char *heap;                  /* region 0 */
    size_t heap_size, misc;
    char *data;                  /* region 1: a static array of the program */
    int quick;                   /* fewer iterations (slow providers) */
} ot_ctx_t;

extern ot_ctx_t ot;

#define OT_FAIL(...) hps_test_fail(__VA_ARGS__)
/* A transport call that must succeed. */
#define OT_OK(call) do { if ((call) != 0) OT_FAIL("PE %d: %s failed (%s:%d)", ot.me, #call, __FILE__, __LINE__); } while (0)

/* The byte at index i of the pattern named by seed. */
static inline unsigned char ot_pattern(uint64_t seed, size_t i)
{
    return (unsigned char)(i * 131u + seed * 7u + (i >> 8) + 13u);
}
void ot_fill(void *buf, size_t len, uint64_t seed);
/* Fail naming what unless buf holds the pattern. */
void ot_expect(const void *buf, size_t len, uint64_t seed, const char *what);

/* Wait until the 8-byte word at p (this PE's memory, written remotely)
 * equals want, making progress meanwhile; fails after 10 s. */
void ot_wait_word(const volatile uint64_t *p, uint64_t want, const char *what);
void ot_barrier(void);
/* Pointer into this PE's heap at a misc offset. */
static inline void *ot_misc(size_t off) { return ot.heap + ot.misc + off; }

/* The transport's calls on the default context, a target named by its
 * region and PE. */
#define OT_T(r, pe) hps_ofi_row((r), (pe))
static inline int ot_put(int r, size_t off, const void *src, size_t len, int pe)
{
    return hps_ofi_put(ot.c, OT_T(r, pe), off, src, len);
}
static inline int ot_put_fast(int r, size_t off, const void *src, size_t len, int pe)
{
    return hps_ofi_put_fast(ot.c, OT_T(r, pe), off, src, len);
}
static inline int ot_put_nbi(int r, size_t off, const void *src, size_t len, int pe)
{
    return hps_ofi_put_nbi(ot.c, OT_T(r, pe), off, src, len);
}
static inline int ot_get(void *dst, int r, size_t off, size_t len, int pe)
{
    return hps_ofi_get(ot.c, dst, OT_T(r, pe), off, len);
}
static inline int ot_get_nbi(void *dst, int r, size_t off, size_t len, int pe)
{
    return hps_ofi_get_nbi(ot.c, dst, OT_T(r, pe), off, len);
}
static inline int ot_atomic(enum hps_ofi_aop op, int r, size_t off, const void *operand,
                            const void *compare, void *result, size_t size, int pe)
{
    return hps_ofi_atomic(ot.c, op, OT_T(r, pe), off, operand, compare, result, size);
}
static inline int ot_atomic_nbi(enum hps_ofi_aop op, int r, size_t off, const void *operand,
                                const void *compare, void *result, size_t size, int pe)
{
    return hps_ofi_atomic_nbi(ot.c, op, OT_T(r, pe), off, operand, compare, result, size);
}
static inline int ot_quiet(void) { return hps_ofi_quiet(ot.c); }
static inline int ot_quiet_fast(void) { return hps_ofi_quiet_fast(ot.c); }
static inline int ot_fence(void) { return hps_ofi_fence(ot.c); }

/* The cases (ofi_test_rma.c, ofi_test_amo.c, ofi_test_ctx.c). */
void ot_case_rma(void);
void ot_case_nbi(void);
void ot_case_data(void);
void ot_case_fence(void);
void ot_case_compute(void);
void ot_case_atomics(void);
void ot_case_lock(void);
void ot_case_window(void);
void ot_case_blind(void);
void ot_case_ctx_private(void);
void ot_case_ctx_independent(void);
void ot_case_latency(void);
void ot_case_icount(void);

#endif
