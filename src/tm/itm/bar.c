// SPDX-License-Identifier: MIT
/*
 * The typed barriers by state: a table per state of the running section,
 * chosen when the state changes, so that an access does not work out at
 * every call what hpsync/tm.h's inline path works out from the TLS
 * pointers and the section's mode (a NULL test and a chain of mode
 * compares: 10 of the 33 instructions of a norec read in a list walk).
 *
 *   plain    outside a section, and irrevocable (no nested frame): loads
 *            and stores;
 *   sgl      sgl and solo, instrumented: plain reads, a whole-word write is
 *            an undo entry and a store (tm.h's inline write);
 *   norec, norec_ro, stm, stm_ro: tm.h's inline read for that mode (the
 *            read-only tables are the first attempt of a read-only
 *            section, which keeps no read log); a write goes to the
 *            backend, which leaves the inline path for the rest of the
 *            section, and so does the table (generic);
 *   generic  everything else (a section that has written under norec or
 *            stm, a nested frame that keeps old values, the hardware
 *            backends, a read-only section under sgl): barriers.c's, which
 *            test the state at every access.
 *
 * Whatever the table, a read in it checks the one fact it relies on that a
 * backend may change behind its back (the section's mode: a norec or stm
 * write, a restart), and goes generic if it changed; the TLS pointers
 * change only where hps_itm_bar_sync() runs next (begin, commit, the resume
 * after an abort, the switch to irrevocable, a nested frame).
 *
 * Budget (a norec read of an aligned word, the list's case): the call from
 * the program and its PLT jump, 3 instructions to jump through the table,
 * the alignment test, the TLS load of the descriptor, the mode compare,
 * then tm.h's norec path (load, clock compare, read-log append).
 */
#include <string.h>
#include "itm.h"

/* ---- plain ------------------------------------------------------------------ */

/* memcpy: the program may hand over packed (unaligned) data. */
#define HPS_ITM_PLAIN_(n, T)                                                        \
    static T plain_r##n(const T *p)                                                \
    {                                                                              \
        T v;                                                                       \
        memcpy(&v, p, sizeof v);                                                   \
        return v;                                                                  \
    }                                                                              \
    static void plain_w##n(T *p, T v) { memcpy(p, &v, sizeof v); }
HPS_ITM_PLAIN_(8, uint64_t)
HPS_ITM_PLAIN_(4, uint32_t)
HPS_ITM_PLAIN_(2, uint16_t)
HPS_ITM_PLAIN_(1, uint8_t)
#undef HPS_ITM_PLAIN_

const hps_itm_bar_t hps_itm_bar_plain = {
    plain_r8, plain_r4, plain_r2, plain_r1, plain_w8, plain_w4, plain_w2, plain_w1,
};

const hps_itm_bar_t hps_itm_bar_generic = {
    hps_itm_ld8, hps_itm_ld4, hps_itm_ld2, hps_itm_ld1,
    hps_itm_st8, hps_itm_st4, hps_itm_st2, hps_itm_st1,
};

/* ---- sgl: plain reads, inline whole-word writes ------------------------------- */

/* n bytes at p lie within one aligned word. */
#define HPS_ITM_IN_WORD_(p, n) (((uintptr_t)(p) & 7) <= 8 - (n))

/* tm.h's writes (which test the TLS pointer: no nested frame is open, so
 * they are the generic write without its frame test). */
static void sgl_w8(uint64_t *p, uint64_t v)
{
    if (hps_likely(((uintptr_t)p & 7) == 0))
        hps_tm_write_u64(p, v);
    else
        hps_itm_st8(p, v);
}

#define HPS_ITM_SGL_W_(n, bits, T)                                                  \
    static void sgl_w##n(T *p, T v)                                                \
    {                                                                              \
        if (hps_likely(HPS_ITM_IN_WORD_(p, n)))                                    \
            hps_tm_write_u##bits(p, v);                                            \
        else                                                                       \
            hps_itm_st##n(p, v);                                                   \
    }
HPS_ITM_SGL_W_(4, 32, uint32_t)
HPS_ITM_SGL_W_(2, 16, uint16_t)
HPS_ITM_SGL_W_(1, 8, uint8_t)
#undef HPS_ITM_SGL_W_

static const hps_itm_bar_t bar_sgl = {
    plain_r8, plain_r4, plain_r2, plain_r1, sgl_w8, sgl_w4, sgl_w2, sgl_w1,
};

/* ---- norec and stm: tm.h's inline read for one mode ---------------------------- */

/* A read in mode M: with the mode tested here, the compiler folds tm.h's
 * hps_tm_read_in_ (which loads it again) to M's path alone. */
#define HPS_ITM_MODE_R_(M, m)                                                       \
    static uint64_t m##_r8(const uint64_t *p)                                      \
    {                                                                              \
        hps_tm_fast_t *f = hps_tm_rd_;                                             \
        if (hps_likely(((uintptr_t)p & 7) == 0 && f->mode == (M)))                 \
            return hps_tm_read_in_(f, p);                                          \
        return hps_itm_ld8(p);                                                     \
    }                                                                              \
    HPS_ITM_MODE_SUB_(M, m, 4, 32, uint32_t)                                        \
    HPS_ITM_MODE_SUB_(M, m, 2, 16, uint16_t)                                        \
    HPS_ITM_MODE_SUB_(M, m, 1, 8, uint8_t)                                          \
    static const hps_itm_bar_t bar_##m = {                                         \
        m##_r8, m##_r4, m##_r2, m##_r1, logged_w8, logged_w4, logged_w2, logged_w1, \
    };
#define HPS_ITM_MODE_SUB_(M, m, n, bits, T)                                          \
    static T m##_r##n(const T *p)                                                  \
    {                                                                              \
        hps_tm_fast_t *f = hps_tm_rd_;                                             \
        uintptr_t a = (uintptr_t)p;                                                \
        if (hps_likely(HPS_ITM_IN_WORD_(p, n) && f->mode == (M)))                  \
            return (T)(hps_tm_read_in_(f, (const uint64_t *)(a & ~(uintptr_t)7)) >> ((a & 7) * 8)); \
        return hps_itm_ld##n(p);                                                   \
    }

/* A write in these modes calls the backend, which from then on serves the
 * section's reads itself (they must search its write set): the generic
 * table, for the rest of the section. */
#define HPS_ITM_LOGGED_W_(n, T)                                                     \
    static void logged_w##n(T *p, T v)                                             \
    {                                                                              \
        hps_itm_st##n(p, v);                                                       \
        hps_itm_t.bar = &hps_itm_bar_generic;                                      \
    }
HPS_ITM_LOGGED_W_(8, uint64_t)
HPS_ITM_LOGGED_W_(4, uint32_t)
HPS_ITM_LOGGED_W_(2, uint16_t)
HPS_ITM_LOGGED_W_(1, uint8_t)
#undef HPS_ITM_LOGGED_W_

HPS_ITM_MODE_R_(HPS_TM_MODE_NOREC, norec)
HPS_ITM_MODE_R_(HPS_TM_MODE_NOREC_RO, norec_ro)
HPS_ITM_MODE_R_(HPS_TM_MODE_STM, stm)
HPS_ITM_MODE_R_(HPS_TM_MODE_STM_RO, stm_ro)
#undef HPS_ITM_MODE_R_
#undef HPS_ITM_MODE_SUB_

/* ---- the choice ---------------------------------------------------------------- */

/* By the section's mode: its table, and whether that table's reads go
 * through the descriptor (1: hps_tm_rd_ must be the section's) or are
 * plain loads (0: hps_tm_rd_ must be NULL). */
static const struct {
    const hps_itm_bar_t *bar;
    uint32_t rd;
} k_by_mode[] = {
    [HPS_TM_MODE_CALL] = { &hps_itm_bar_generic, 1 },
    [HPS_TM_MODE_SGL] = { &bar_sgl, 0 },
    [HPS_TM_MODE_NOREC] = { &bar_norec, 1 },
    [HPS_TM_MODE_NOREC_RO] = { &bar_norec_ro, 1 },
    [HPS_TM_MODE_STM] = { &bar_stm, 1 },
    [HPS_TM_MODE_STM_RO] = { &bar_stm_ro, 1 },
};

void hps_itm_bar_sync(hps_itm_thread_t *t)
{
    hps_tm_fast_t *rd = hps_tm_rd_, *wr = hps_tm_wr_;
    const hps_itm_bar_t *b = &hps_itm_bar_generic;
    if (t->nframes) {
        /* Writes keep old values for a nested cancel: generic. */
    } else if (!wr) {
        b = rd ? b : &hps_itm_bar_plain;
    } else if (wr->mode < sizeof k_by_mode / sizeof k_by_mode[0]) {
        uint32_t m = wr->mode;
        if (k_by_mode[m].rd ? rd == wr : rd == NULL)
            b = k_by_mode[m].bar;
    }
    t->bar = b;
}
