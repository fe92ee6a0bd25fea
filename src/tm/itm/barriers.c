// SPDX-License-Identifier: MIT
/*
 * The barriers GCC emits for the accesses of instrumented code: typed reads
 * (R, RaR, RaW, RfW) and writes (W, WaR, WaW) for every type of the ABI,
 * the memcpy/memmove/memset family for every mode of source and
 * destination, and the log functions (_ITM_L*) for data the section writes
 * directly but must get back on abort.
 *
 * Every access becomes hpsync's word accessors (hpsync/tm.h): an aligned
 * word of 1 to 8 bytes is one read or write of the aligned 64-bit word
 * around it (a mask selects its bytes); anything larger, unaligned across
 * a word boundary, or of a block operation goes word by word with masks
 * at its ends.  The "after read", "after write" and "for write" variants
 * are hints that hpsync's backends have no use for: they are the plain
 * read or write.  Outside a section, and in an irrevocable one, the
 * accessors are plain loads and stores.
 *
 * Budget: an aligned U8 read or write is the call from the program plus
 * hpsync/tm.h's inline path (a write also tests whether a nested frame
 * needs the old value: one TLS load).
 */
#include <string.h>
#include "itm.h"

/* ---- bytes through the section ------------------------------------------ */

/* The bytes [off, off + k) of a word as a mask (k >= 1, off + k <= 8). */
HPS_INLINE uint64_t byte_mask(unsigned off, size_t k)
{
    return (k == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (k * 8)) - 1)) << (off * 8);
}

/* n bytes at p, as the section sees them, into out. */
static void tx_load(void *out, const void *p, size_t n)
{
    hps_tm_fast_t *f = hps_tm_rd_;
    if (!f) {
        memcpy(out, p, n);
        return;
    }
    uintptr_t a = (uintptr_t)p;
    uint8_t *o = out;
    while (n) {
        unsigned off = (unsigned)(a & 7);
        size_t k = 8 - off < n ? 8 - off : n;
        uint64_t v = hps_tm_read_in_(f, (const uint64_t *)(a - off)) >> (off * 8);
        memcpy(o, &v, k);
        a += k;
        o += k;
        n -= k;
    }
}

/* n bytes from in stored at p by the section (no nested undo entry). */
static void tx_store_raw(void *p, const void *in, size_t n)
{
    hps_tm_fast_t *f = hps_tm_wr_;
    if (!f) {
        memcpy(p, in, n);
        return;
    }
    uintptr_t a = (uintptr_t)p;
    const uint8_t *i = in;
    while (n) {
        unsigned off = (unsigned)(a & 7);
        size_t k = 8 - off < n ? 8 - off : n;
        uint64_t v = 0;
        memcpy(&v, i, k);
        hps_tm_write_in_(f, (uint64_t *)(a - off), v << (off * 8), byte_mask(off, k));
        a += k;
        i += k;
        n -= k;
    }
}

static void tx_store(void *p, const void *in, size_t n)
{
    if (hps_unlikely(hps_itm_t.nframes))
        hps_itm_undo_note(p, n);
    tx_store_raw(p, in, n);
}

/* ---- nested frames: old values for a cancel ------------------------------ */

void hps_itm_undo_note(const void *p, size_t n)
{
    hps_itm_thread_t *t = &hps_itm_t;
    uintptr_t a = (uintptr_t)p;
    while (n) {
        unsigned off = (unsigned)(a & 7);
        size_t k = 8 - off < n ? 8 - off : n;
        if (t->undo_n == t->undo_cap) {
            uint32_t cap = t->undo_cap ? 2 * t->undo_cap : 64;
            hps_tm_went_t *e = realloc(t->undo, cap * sizeof *e);
            if (!e)
                hps_itm_fatal("hpsync: out of memory for a nested transaction's undo log\n");
            t->undo = e;
            t->undo_cap = cap;
        }
        uint64_t *w = (uint64_t *)(a - off);
        uint64_t old;
        tx_load(&old, w, 8);
        t->undo[t->undo_n++] = (hps_tm_went_t){ w, old, byte_mask(off, k) };
        a += k;
        n -= k;
    }
}

void hps_itm_undo_to(uint32_t mark)
{
    hps_itm_thread_t *t = &hps_itm_t;
    while (t->undo_n > mark) {
        const hps_tm_went_t *e = &t->undo[--t->undo_n];
        hps_tm_fast_t *f = hps_tm_wr_;
        if (f)
            hps_tm_write_in_(f, e->addr, e->val, e->mask);
        else
            hps_tm_wset_store(e);
    }
}

/* ---- the log functions ----------------------------------------------------- */

/* A record: the bytes (padded to 8), then (address, length). */
static void llog_push(const void *p, size_t n)
{
    hps_itm_thread_t *t = &hps_itm_t;
    hps_tm_desc_t *d = hps_itm_desc();
    if (!d || d->fast.depth == 0)
        return;
    size_t pad = (n + 7) & ~(size_t)7;
    size_t need = t->llog_n + pad + 16;
    if (need > t->llog_cap) {
        size_t cap = t->llog_cap ? t->llog_cap : 256;
        while (cap < need)
            cap *= 2;
        uint8_t *b = realloc(t->llog, cap);
        if (!b || cap > UINT32_MAX)
            hps_itm_fatal("hpsync: out of memory for _ITM_L* (logged locals)\n");
        t->llog = b;
        t->llog_cap = (uint32_t)cap;
    }
    memcpy(t->llog + t->llog_n, p, n);
    uint64_t hdr[2] = { (uint64_t)(uintptr_t)p, n };
    memcpy(t->llog + t->llog_n + pad, hdr, sizeof hdr);
    t->llog_n = (uint32_t)need;
    hps_itm_dirty(t);
}

void hps_itm_llog_restore(uint32_t mark)
{
    hps_itm_thread_t *t = &hps_itm_t;
    while (t->llog_n > mark) {
        uint64_t hdr[2];
        memcpy(hdr, t->llog + t->llog_n - 16, sizeof hdr);
        size_t pad = (hdr[1] + 7) & ~(uint64_t)7;
        t->llog_n -= (uint32_t)(pad + 16);
        memcpy((void *)(uintptr_t)hdr[0], t->llog + t->llog_n, hdr[1]);
    }
}

HPS_EXPORT void _ITM_LB(const void *p, size_t n)
{
    llog_push(p, n);
}

/* ---- typed barriers ------------------------------------------------------- */

/* Whole words and aligned sub-words take hpsync/tm.h's inline paths, in
 * the exported function itself: a table of barriers per state (tried: one
 * indirect jump instead of the NULL test and the mode compares) saved 8
 * instructions a read but cost time (bank 10 % slower on this machine:
 * the jump, and a second one into the backend after a write).  A whole
 * word is loaded first and the read-only modes tested first: most reads of
 * a long read-only section (the list row: about 200 a lookup) come through
 * here, and norec's logless read needs only the clock checked after the
 * load.  The general order (stm, norec, then after a write) cost each two
 * compares and a branch before the load: the list under GCC TM, 1 thread
 * without the bias, ran 1.30-1.34x faster with norec and 1.07-1.11x with
 * stm.  (stm's read loads its orec before the word: the early load is not
 * its value.) */
HPS_INLINE uint64_t ld_U8(const uint64_t *p)
{
    if (hps_likely(((uintptr_t)p & 7) == 0)) {
        hps_tm_fast_t *f = hps_tm_rd_;
        if (!f)
            return *p;
        uint64_t v = hps_plain_load_acquire(p);
        uint32_t m = f->mode;
        if (m == HPS_TM_MODE_NOREC_RO) {
            if (hps_likely(hps_load_relaxed(f->clock) == f->snap))
                return v;
        } else if (m == HPS_TM_MODE_STM_RO) {
            if (hps_likely(hps_tm_stm_read_fast_(f, p, 0, &v)))
                return v;
        }
        return hps_tm_read_in_(f, p);
    }
    uint64_t v;
    tx_load(&v, p, 8);
    return v;
}
HPS_INLINE void st_U8(uint64_t *p, uint64_t v)
{
    if (hps_unlikely(hps_itm_t.nframes))
        hps_itm_undo_note(p, 8);
    if (hps_likely(((uintptr_t)p & 7) == 0))
        hps_tm_write_u64(p, v);
    else
        tx_store_raw(p, &v, 8);
}

#define HPS_ITM_SUBWORD_(S, T, bits)                                              \
    HPS_INLINE T ld_##S(const T *p)                                               \
    {                                                                             \
        if (hps_likely(((uintptr_t)p & 7) <= 8 - sizeof(T)))                      \
            return hps_tm_read_u##bits(p);                                        \
        T v;                                                                      \
        tx_load(&v, p, sizeof v);                                                 \
        return v;                                                                 \
    }                                                                             \
    HPS_INLINE void st_##S(T *p, T v)                                             \
    {                                                                             \
        if (hps_unlikely(hps_itm_t.nframes))                                      \
            hps_itm_undo_note(p, sizeof v);                                       \
        if (hps_likely(((uintptr_t)p & 7) <= 8 - sizeof(T)))                      \
            hps_tm_write_u##bits(p, v);                                           \
        else                                                                      \
            tx_store_raw(p, &v, sizeof v);                                        \
    }
HPS_ITM_SUBWORD_(U1, uint8_t, 8)
HPS_ITM_SUBWORD_(U2, uint16_t, 16)
HPS_ITM_SUBWORD_(U4, uint32_t, 32)
#undef HPS_ITM_SUBWORD_

/* Everything else: its bytes (floating point through the integer path of
 * its width). */
#define HPS_ITM_BYTES_(S, T)                                                      \
    HPS_INLINE T ld_##S(const T *p)                                               \
    {                                                                             \
        T v;                                                                      \
        tx_load(&v, p, sizeof v);                                                 \
        return v;                                                                 \
    }                                                                             \
    HPS_INLINE void st_##S(T *p, T v)                                             \
    {                                                                             \
        tx_store(p, &v, sizeof v);                                                \
    }

#define HPS_ITM_BITS_(S, T, U, UT)                                                  \
    HPS_INLINE T ld_##S(const T *p)                                               \
    {                                                                             \
        UT u = ld_##U((const void *)p);                                           \
        T v;                                                                      \
        memcpy(&v, &u, sizeof v);                                                 \
        return v;                                                                 \
    }                                                                             \
    HPS_INLINE void st_##S(T *p, T v)                                             \
    {                                                                             \
        UT u;                                                                     \
        memcpy(&u, &v, sizeof u);                                                 \
        st_##U((void *)p, u);                                                     \
    }

/* The ABI's vector types, by size (classified as the compiler's __m64,
 * __m128 and __m256 are: passed in vector registers). */
typedef int hps_itm_m64 __attribute__((vector_size(8), may_alias));
typedef float hps_itm_m128 __attribute__((vector_size(16), may_alias));
typedef float hps_itm_m256 __attribute__((vector_size(32), may_alias));

HPS_ITM_BITS_(F, float, U4, uint32_t)
HPS_ITM_BITS_(D, double, U8, uint64_t)
HPS_ITM_BITS_(CF, float _Complex, U8, uint64_t)
HPS_ITM_BITS_(M64, hps_itm_m64, U8, uint64_t)
HPS_ITM_BYTES_(E, long double)
HPS_ITM_BYTES_(CD, double _Complex)
HPS_ITM_BYTES_(CE, long double _Complex)
HPS_ITM_BYTES_(M128, hps_itm_m128)

/* The seven barriers and the log function of one type. */
#define HPS_ITM_TYPE_(S, T, ATTR)                                                           \
    ATTR HPS_EXPORT T _ITM_R##S(const T *p) { return ld_##S(p); }                          \
    ATTR HPS_EXPORT T _ITM_RaR##S(const T *p) { return ld_##S(p); }                        \
    ATTR HPS_EXPORT T _ITM_RaW##S(const T *p) { return ld_##S(p); }                        \
    ATTR HPS_EXPORT T _ITM_RfW##S(const T *p) { return ld_##S(p); }                        \
    ATTR HPS_EXPORT void _ITM_W##S(T *p, T v) { st_##S(p, v); }                            \
    ATTR HPS_EXPORT void _ITM_WaR##S(T *p, T v) { st_##S(p, v); }                          \
    ATTR HPS_EXPORT void _ITM_WaW##S(T *p, T v) { st_##S(p, v); }                          \
    HPS_EXPORT void _ITM_L##S(const T *p) { llog_push(p, sizeof(T)); }

/* Each barrier of the common types starts a cache line: the list row at 2
 * threads (a call per read, ~96 a lookup) ran 5-6 % slower after unrelated
 * code elsewhere moved _ITM_RU8 from 16 to 32 bytes into its line (3.55-3.72
 * M lookups/s against 3.81-3.85 M, alternating; 3.98-4.06 M aligned). */
#define HPS_ITM_NOATTR_
#define HPS_ITM_HOT_ __attribute__((aligned(HPS_CACHELINE)))
HPS_ITM_TYPE_(U1, uint8_t, HPS_ITM_HOT_)
HPS_ITM_TYPE_(U2, uint16_t, HPS_ITM_HOT_)
HPS_ITM_TYPE_(U4, uint32_t, HPS_ITM_HOT_)
HPS_ITM_TYPE_(U8, uint64_t, HPS_ITM_HOT_)
HPS_ITM_TYPE_(F, float, HPS_ITM_HOT_)
HPS_ITM_TYPE_(D, double, HPS_ITM_HOT_)
HPS_ITM_TYPE_(E, long double, HPS_ITM_NOATTR_)
HPS_ITM_TYPE_(CF, float _Complex, HPS_ITM_NOATTR_)
HPS_ITM_TYPE_(CD, double _Complex, HPS_ITM_NOATTR_)
HPS_ITM_TYPE_(CE, long double _Complex, HPS_ITM_NOATTR_)
HPS_ITM_TYPE_(M64, hps_itm_m64, HPS_ITM_NOATTR_)
HPS_ITM_TYPE_(M128, hps_itm_m128, HPS_ITM_NOATTR_)

/* __m256 travels in a ymm register only with AVX: these are compiled for
 * it, and only code built with AVX (which has such values) calls them. */
__attribute__((target("avx"))) HPS_INLINE hps_itm_m256 ld_M256(const hps_itm_m256 *p)
{
    hps_itm_m256 v;
    tx_load(&v, p, sizeof v);
    return v;
}
__attribute__((target("avx"))) HPS_INLINE void st_M256(hps_itm_m256 *p, hps_itm_m256 v)
{
    tx_store(p, &v, sizeof v);
}
HPS_ITM_TYPE_(M256, hps_itm_m256, __attribute__((target("avx"))))

/* ---- memcpy, memmove, memset ------------------------------------------------ */

/* Copy through a small buffer: source read by the section (rt) or plainly,
 * destination written by the section (wt) or plainly.  memmove's
 * overlapping ranges copy from the end when the destination is above the
 * source; every read goes through the section, which sees its own writes. */
#define HPS_ITM_CHUNK 256

static void copy(void *dst, const void *src, size_t n, int rt, int wt, int move)
{
    uint8_t buf[HPS_ITM_CHUNK];
    uint8_t *d = dst;
    const uint8_t *s = src;
    int back = move && d > s && d < s + n;
    while (n) {
        size_t k = n < HPS_ITM_CHUNK ? n : HPS_ITM_CHUNK;
        size_t at = back ? n - k : 0;
        if (rt)
            tx_load(buf, s + at, k);
        else
            memcpy(buf, s + at, k);
        if (wt)
            tx_store(d + at, buf, k);
        else
            memcpy(d + at, buf, k);
        if (!back) {
            d += k;
            s += k;
        }
        n -= k;
    }
}

/* The ABI's names: R{n,t,taR,taW}W{n,t,taR,taW} but not RnWn ("n": not
 * transactional; "taR"/"taW": transactional, after a read/write). */
#define HPS_ITM_COPY_(RM, WM, rt, wt)                                                     \
    HPS_EXPORT void _ITM_memcpyR##RM##W##WM(void *d, const void *s, size_t n)            \
    {                                                                                     \
        copy(d, s, n, rt, wt, 0);                                                         \
    }                                                                                     \
    HPS_EXPORT void _ITM_memmoveR##RM##W##WM(void *d, const void *s, size_t n)           \
    {                                                                                     \
        copy(d, s, n, rt, wt, 1);                                                         \
    }
#define HPS_ITM_COPY_W_(RM, rt)                                                           \
    HPS_ITM_COPY_(RM, t, rt, 1)                                                           \
    HPS_ITM_COPY_(RM, taR, rt, 1)                                                         \
    HPS_ITM_COPY_(RM, taW, rt, 1)
HPS_ITM_COPY_W_(n, 0)
HPS_ITM_COPY_W_(t, 1)
HPS_ITM_COPY_W_(taR, 1)
HPS_ITM_COPY_W_(taW, 1)
HPS_ITM_COPY_(t, n, 1, 0)
HPS_ITM_COPY_(taR, n, 1, 0)
HPS_ITM_COPY_(taW, n, 1, 0)

static void set(void *dst, int c, size_t n)
{
    uint8_t buf[HPS_ITM_CHUNK];
    memset(buf, c, n < sizeof buf ? n : sizeof buf);
    uint8_t *d = dst;
    while (n) {
        size_t k = n < HPS_ITM_CHUNK ? n : HPS_ITM_CHUNK;
        tx_store(d, buf, k);
        d += k;
        n -= k;
    }
}

HPS_EXPORT void _ITM_memsetW(void *d, int c, size_t n) { set(d, c, n); }
HPS_EXPORT void _ITM_memsetWaR(void *d, int c, size_t n) { set(d, c, n); }
HPS_EXPORT void _ITM_memsetWaW(void *d, int c, size_t n) { set(d, c, n); }
