// SPDX-License-Identifier: MIT
/*
 * RMA: put, get, p, g, iput, iget, their nbi forms and put-with-signal, for
 * every row of the RMA type table, the sized forms and the mem forms, each
 * with its context twin.  Every routine is one call of the inline layer
 * (internal.h), on the default context or the twin's.
 */
#define _GNU_SOURCE
#include "internal.h"


/* The value goes in as its own unsigned type, stored as it came (the
 * inject reads only its size).  What is needed after the call lives in
 * `a`, whose address the provider receives as the inject's buffer, and
 * goes to the fallback by value: the compiler keeps nothing in
 * callee-saved registers that it would first have to push.  One function
 * per size, so the size is an immediate. */
struct p_args {
    uint64_t bits;
    size_t off;
    const char *row;            /* still tagged: untagging waits for after the call */
    const char *fn;
};

/* A full queue: the general put progresses and retries. */
static HPS_NOINLINE void p_retry(struct p_args a, size_t size)
{
    HPS_OFI(a.fn, hps_ofi_put(&hps_ofi_dflt, hps_peer_row(a.row), a.off, &a.bits, size));
}

#define P_OFI(N, UT) \
    static void p_ofi##N(size_t off, UT bits, const char *row, const char *fn) \
    { \
        struct p_args a; \
        memcpy(&a.bits, &bits, N); \
        a.off = off; \
        a.row = row; \
        a.fn = fn; \
        if (hps_likely(hps_ofi_inject_target(&hps_ofi_dflt, &a.bits, N, hps_peer_row(row), off) == 0)) \
            hps_ofi_injected(&hps_ofi_dflt, hps_peer_row(a.row)->pe); \
        else \
            p_retry(a, N); \
    } \
    static void p_ofi##N##_locked(size_t off, UT bits, const char *row, const char *fn) \
    { \
        HPS_OFI(fn, hps_ofi_put(&hps_ofi_dflt, hps_peer_row(row), off, &bits, N)); \
    } \
    void (*hps_shmem_p_ofi##N)(size_t, UT, const char *, const char *) = p_ofi##N;
P_OFI(1, uint8_t)
P_OFI(2, uint16_t)
P_OFI(4, uint32_t)
P_OFI(8, uint64_t)

void hps_shmem_p_ofi_ctx(const char *fn, shmem_ctx_t ctx, size_t off, const void *v, size_t size,
                   const char *tagged_row)
{
    HPS_OFI(fn, hps_ofi_put_fast(hps_shmem_ctx_ofi(fn, ctx), hps_peer_row(tagged_row), off, v, size));
}

void hps_shmem_p_ofi_select(int thread_multiple)
{
    hps_shmem_p_ofi1 = thread_multiple ? p_ofi1_locked : p_ofi1;
    hps_shmem_p_ofi2 = thread_multiple ? p_ofi2_locked : p_ofi2;
    hps_shmem_p_ofi4 = thread_multiple ? p_ofi4_locked : p_ofi4;
    hps_shmem_p_ofi8 = thread_multiple ? p_ofi8_locked : p_ofi8;
}

/* ---- strided ---------------------------------------------------------------- */

/* The extent of a strided object, for one bounds check of the whole. */
static void strided_span(const char *fn, const char *base, ptrdiff_t stride, size_t n, size_t es,
                         const char **lo, size_t *len)
{
    if (stride < 1)
        hps_shmem_fatal(fn, "stride %td is not positive", stride);
    *lo = base;
    *len = ((n - 1) * (size_t)stride + 1) * es;
}

void hps_shmem_ctx_iput(shmem_ctx_t ctx, const char *fn, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t es, int pe)
{
    if (!nelems)
        return;
    const char *lo, *s = src;
    size_t len, o;
    int r;
    strided_span(fn, dest, dst, nelems, es, &lo, &len);
    char *p = hps_target_raw(fn, lo, len, pe, &r, &o);
    for (size_t i = 0; i < nelems; i++) {
        size_t d = i * (size_t)dst * es;
        if (!hps_peer_is_ofi(p))
            hps_shmem_shm_put(p + o + d, s + i * (size_t)sst * es, es);
        else
            HPS_OFI(fn, hps_ofi_put(hps_shmem_ctx_ofi(fn, ctx), hps_peer_row(p), o + d,
                                    s + i * (size_t)sst * es, es));
    }
}

void hps_shmem_ctx_iget(shmem_ctx_t ctx, const char *fn, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t es, int pe)
{
    if (!nelems)
        return;
    const char *lo;
    char *d = dest;
    size_t len, o;
    int r;
    strided_span(fn, src, sst, nelems, es, &lo, &len);
    const char *p = hps_target_raw(fn, lo, len, pe, &r, &o);
    for (size_t i = 0; i < nelems; i++) {
        size_t s = i * (size_t)sst * es;
        if (!hps_peer_is_ofi(p))
            hps_shmem_shm_get(d + i * (size_t)dst * es, p + o + s, es);
        else
            HPS_OFI(fn, hps_ofi_get_nbi(hps_shmem_ctx_ofi(fn, ctx), d + i * (size_t)dst * es,
                                        hps_peer_row(p), o + s, es));
    }
    /* The gets above were issued non-blocking: iget returns with data. */
    if (hps_peer_is_ofi(p))
        HPS_OFI(fn, hps_ofi_get_wait(hps_shmem_ctx_ofi(fn, ctx)));
}

/* ---- put with signal ----------------------------------------------------------- */

static void put_signal(shmem_ctx_t ctx, const char *fn, void *dest, const void *src, size_t len,
                       uint64_t *sig, uint64_t signal, int op, int pe, int nbi)
{
    if (hps_unlikely(op != SHMEM_SIGNAL_SET && op != SHMEM_SIGNAL_ADD))
        hps_shmem_fatal(fn, "sig_op %d is not SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD", op);
    int r;
    size_t o;
    char *p = hps_target_raw(fn, dest, len, pe, &r, &o);
    if (!hps_peer_is_ofi(p)) {
        /* The signal's release (SET) or acq_rel (ADD) orders it after the data. */
        hps_shmem_shm_put(p + o, src, len);
    } else {
        hps_ofi_ctx_t *c = hps_shmem_ctx_ofi(fn, ctx);
        const hps_ofi_target_t *t = hps_peer_row(p);
        HPS_OFI(fn, nbi ? hps_ofi_put_nbi(c, t, o, src, len) : hps_ofi_put(c, t, o, src, len));
        HPS_OFI(fn, hps_ofi_fence(c));
    }
    hps_shmem_ctx_amo64(ctx, fn, op == SHMEM_SIGNAL_SET ? HPS_AOP_SET : HPS_AOP_ADD, sig, signal, pe);
}

#define SIGNAL_PARAMS uint64_t *sig_addr, uint64_t signal, int sig_op, int pe
#define SIGNAL_ARGS sig_addr, signal, sig_op, pe

/* ---- the families, per type ------------------------------------------------------ */

#define DEF_RMA(T, N, A) \
    BOTH(N##_put, (T *dest, const T *source, size_t nelems, int pe), \
         hps_shmem_ctx_put(ctx_, __func__, dest, source, nelems * sizeof(T), pe)) \
    BOTH(N##_get, (T *dest, const T *source, size_t nelems, int pe), \
         hps_shmem_ctx_get(ctx_, __func__, dest, source, nelems * sizeof(T), pe)) \
    BOTH(N##_put_nbi, (T *dest, const T *source, size_t nelems, int pe), \
         hps_shmem_ctx_put_nbi(ctx_, __func__, dest, source, nelems * sizeof(T), pe)) \
    BOTH(N##_get_nbi, (T *dest, const T *source, size_t nelems, int pe), \
         hps_shmem_ctx_get_nbi(ctx_, __func__, dest, source, nelems * sizeof(T), pe)) \
    BOTH(N##_p, (T *dest, T value, int pe), HPS_P(ctx_, __func__, T, dest, value, pe)) \
    BOTH_R(T, N##_g, (const T *source, int pe), \
           ({ T v_; hps_shmem_ctx_get(ctx_, __func__, &v_, source, sizeof(T), pe); v_; })) \
    BOTH(N##_iput, (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                    int pe), hps_shmem_ctx_iput(ctx_, __func__, dest, source, dst, sst, nelems, sizeof(T), pe)) \
    BOTH(N##_iget, (T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                    int pe), hps_shmem_ctx_iget(ctx_, __func__, dest, source, dst, sst, nelems, sizeof(T), pe)) \
    BOTH(N##_put_signal, (T *dest, const T *source, size_t nelems, SIGNAL_PARAMS), \
         put_signal(ctx_, __func__, dest, source, nelems * sizeof(T), SIGNAL_ARGS, 0)) \
    BOTH(N##_put_signal_nbi, (T *dest, const T *source, size_t nelems, SIGNAL_PARAMS), \
         put_signal(ctx_, __func__, dest, source, nelems * sizeof(T), SIGNAL_ARGS, 1))
HPS_SHMEM_RMA_TYPES(DEF_RMA, _)

/* Sized (put8 ... put128) and mem forms: untyped, ES bytes per element. */
#define DEF_UNTYPED(SUF, ES) \
    BOTH(put##SUF, (void *dest, const void *source, size_t nelems, int pe), \
         hps_shmem_ctx_put(ctx_, __func__, dest, source, nelems * (ES), pe)) \
    BOTH(get##SUF, (void *dest, const void *source, size_t nelems, int pe), \
         hps_shmem_ctx_get(ctx_, __func__, dest, source, nelems * (ES), pe)) \
    BOTH(put##SUF##_nbi, (void *dest, const void *source, size_t nelems, int pe), \
         hps_shmem_ctx_put_nbi(ctx_, __func__, dest, source, nelems * (ES), pe)) \
    BOTH(get##SUF##_nbi, (void *dest, const void *source, size_t nelems, int pe), \
         hps_shmem_ctx_get_nbi(ctx_, __func__, dest, source, nelems * (ES), pe)) \
    BOTH(put##SUF##_signal, (void *dest, const void *source, size_t nelems, SIGNAL_PARAMS), \
         put_signal(ctx_, __func__, dest, source, nelems * (ES), SIGNAL_ARGS, 0)) \
    BOTH(put##SUF##_signal_nbi, (void *dest, const void *source, size_t nelems, SIGNAL_PARAMS), \
         put_signal(ctx_, __func__, dest, source, nelems * (ES), SIGNAL_ARGS, 1))
#define DEF_SIZED(BITS, T, A) \
    DEF_UNTYPED(BITS, sizeof(T)) \
    BOTH(iput##BITS, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                      size_t nelems, int pe), \
         hps_shmem_ctx_iput(ctx_, __func__, dest, source, dst, sst, nelems, sizeof(T), pe)) \
    BOTH(iget##BITS, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                      size_t nelems, int pe), \
         hps_shmem_ctx_iget(ctx_, __func__, dest, source, dst, sst, nelems, sizeof(T), pe))
HPS_SHMEM_SIZES(DEF_SIZED, _)
DEF_UNTYPED(mem, 1)

/* Last: the profiling names (pshmem_X) of the routines defined above. */
#include "pshmem_alias.h"
