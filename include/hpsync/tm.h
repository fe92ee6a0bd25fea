/* SPDX-License-Identifier: MIT */
/*
 * hpsync/tm.h - transactional sections (reference: docs/api/tm.md).
 *
 *   HPS_TM_BEGIN();
 *   uint64_t a = HPS_TM_READ(&acct[i]);
 *   HPS_TM_WRITE(&acct[i], a - 1);
 *   HPS_TM_END();
 *
 * BEGIN and END pair like `{` and `}` in one function.  An abort returns to
 * the checkpoint BEGIN took (a setjmp) and runs the section again;
 * locals written inside the section have no defined value after an abort
 * (software attempts keep them, real hardware ones roll them back).
 * Nesting is flat.
 * The backend (sgl, norec, stm, htm, hybrid) is
 * chosen once by HPSYNC_TM; see docs/tm.md.
 *
 * Fast paths.  Each access loads one initial-exec TLS pointer: NULL means
 * "access memory directly" (outside a section, inside an irrevocable one,
 * and reads under sgl).  Otherwise the common cases run inline, chosen by
 * the section's mode (HPS_TM_MODE_*, set at begin): a norec or stm read
 * of a word the section may not have written (load, clock check, read-log
 * append; no append in a read-only section's first attempt; after the
 * first write, a test of the redo log's 512-bit filter first), an sgl
 * whole-word write (undo-log append, plain store), and a norec or stm
 * (commit-time locking) whole-word write, after the section's first, of a
 * word the filter proves new (redo-log append).  Everything else (a read
 * or write of a word the filter says may be written, a section's first
 * write, sub-word writes, a full log, a clock that moved) is one indirect
 * call into the backend through the thread's descriptor.  Sub-word and
 * floating-point accesses become the aligned 64-bit word that holds them
 * plus a byte mask, so backends only see words.
 *
 * Budgets: instructions per access inside a section, measured with
 * callgrind on x86-64 (gcc 12 -O2) by tests/c/tm/tm_cost.c: one section of
 * N = 4000 accesses to distinct words, (3 sections - 2 sections) / N, so
 * a write's share of commit (locking, write-back, release) is included.
 * The totals contain the measuring loop: about 10 instructions in the
 * read-write loop and 6 in the read-only one, taking sgl's read (TLS load,
 * test, plain load: 5) as the reference (HPSYNC_TM_BIAS=0, so that the
 * backend, not the bias, serves the one thread; the 2-vCPU EPYC guest of
 * 2026-11-28; "read, W" is a read in a section that has written a word
 * the read does not touch):
 *              read   read (RO)   read, W   write     access alone: read, RO read
 *   sgl          15          12        15      28                    5, 5
 *   norec        38          25        48     128                   28, 19
 *   stm (CTL)    41          29        56     168                   31, 23
 *   stm (ETL)     -           -        41     192
 *   htm, hybrid  15           -        15      75     as sgl, in a hardware section
 *                                        (measured emulated, HPSYNC_ELIDE_BACKEND=
 *                                        inject:commit: the access code of RTM)
 * (With __builtin_setjmp as the checkpoint the loop kept its counter in
 * memory and cost 3 to 5 more: read 18 / 41 / 45, write 32 / 131 / 213.)
 * (Before the inline paths: read 16 / 56 / 70, write 70 / 121 / 203.)
 * (stm with an orec per word, before 32-byte stripes: CTL 40 / 28 / 52 /
 * 222, ETL 52 / 218; a stripe costs a read a shift and saves a write of
 * 4000 distinct words three orec locks in four; 2026-11-29.)
 * (Before the write set's filter, read, W was a call that probed the
 * hashed write set: 81 / 97; a write cost 9 fewer at N = 4000, where the
 * filter is full, and 13-14 more at N = 16, where it is not.)
 * (Before the inline append, the lazy index, one orec lock per stripe at
 * commit and the 512-bit filter, 2026-11-29: read, W 46 / 54, write 140 /
 * 204, ETL 54 / 198; at N = 16 a write cost norec 141, stm 210, now 73
 * and 102.  The filter's 8 words cost a read after a write 2 more; what
 * they buy shows in sections that write a few hundred words and read
 * others, which no longer call the backend for every access: physics
 * with 16 pairs a section, 1.47x fewer instructions.)
 * A read of a word whose filter bit is set is a call that probes the
 * hashed write set.  Outside a section a read or write costs the TLS load,
 * a test and the plain access.
 */
#ifndef HPSYNC_TM_H
#define HPSYNC_TM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hpsync/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hpsync/tm.h: the word/mask split assumes a little-endian machine"
#endif

/* ---- statistics (the functions are below) -------------------------------- */

enum hps_tm_cause {
    HPS_TM_CAUSE_CONFLICT,           /* a location was locked by a committing writer */
    HPS_TM_CAUSE_VALIDATION,         /* a value or version read changed */
    HPS_TM_CAUSE_CAPACITY,           /* hardware only: the section did not fit */
    HPS_TM_CAUSE_EXPLICIT,           /* hps_tm_restart() */
    HPS_TM_CAUSE_RO_WRITE,           /* a write in a BEGIN_RO section */
    HPS_TM_CAUSE_IRREVOCABLE,        /* restarted to become irrevocable */
    HPS_TM_CAUSE_HTM_CONFLICT,       /* hardware aborts (htm, hybrid); the lock found held counts here */
    HPS_TM_CAUSE_HTM_CAPACITY,
    HPS_TM_CAUSE_HTM_OTHER,
    HPS_TM_CAUSE_CANCEL,             /* cancelled, not run again (GCC's __transaction_cancel) */
    HPS_TM_CAUSES
};

typedef struct hps_tm_stats {
    uint64_t commits, commits_ro, aborts, retries, irrevocable;
    uint64_t aborts_by_cause[HPS_TM_CAUSES];
    uint64_t reads, writes;          /* words in read and write sets, summed over commits */
    uint64_t max_read_set, max_write_set;
    /* Sections that ran alone on the bias (HPSYNC_TM_BIAS): as solo, plain
     * reads and no atomic operation, whatever the backend; among commits. */
    uint64_t solo;
    /* Sections that ran serialized: alone behind the gate, as solo (so they
     * can still restart), after HPSYNC_TM_RETRIES conflicts in a row or as
     * a coarsened loop's serial chunk (hpsync/tm_coarsen.h); attempts,
     * committed or not. */
    uint64_t serial;
} hps_tm_stats_t;

/* ---- internals the inline fast paths use (not API) ------------------------ */

/* A growable array of word pairs: read logs, undo logs, locked orecs. */
typedef struct hps_tm_pair {
    uintptr_t a;
    uint64_t v;
} hps_tm_pair_t;

typedef struct hps_tm_log {
    hps_tm_pair_t *e;
    uint32_t n, cap;
} hps_tm_log_t;

/* The redo log: entries in program order; beyond 8 entries also an
 * open-addressing index (slot = generation << 32 | entry), so that
 * read-after-write is O(1) and clearing is one increment of the generation
 * (up to 8 entries a scan is cheaper than the index).  The index is built
 * lazily: entries [0, nidx) are in it, and a search first indexes the rest,
 * so a write that cannot already be in the log (its filter bit clear) is
 * one append, inline (hps_tm_write_in_).  `filt` has bit (address / 8) mod
 * 512 set for every word written: a read whose bit is clear cannot be a read
 * after a write, and stays on the inline path.  512 bits, not 64: a section
 * that writes a few hundred words (coarsened loops: 16 pairs of physics
 * bodies, 16 scatter zones) filled 64 bits, and then every read and write
 * of it called the backend and probed the index. */
typedef struct hps_tm_went {
    uint64_t *addr;
    uint64_t val, mask;
} hps_tm_went_t;

typedef struct hps_tm_wset {
    hps_tm_went_t *e;
    uint32_t n, cap;
    uint64_t *slot;
    uint32_t bits, gen;
    uint32_t nidx;                   /* entries in the index */
    uint64_t filt[8];
} hps_tm_wset_t;

/* Word p's filter word and bit; may the redo log hold p?  (0: certainly
 * not); and mark p as written. */
#define HPS_TM_WSET_W_(ws, p) ((ws)->filt[((uintptr_t)(p) >> 9) & 7])
#define HPS_TM_WSET_BIT_(p) ((uint64_t)1 << (((uintptr_t)(p) >> 3) & 63))
#define HPS_TM_WSET_MAY_HOLD_(ws, p) ((HPS_TM_WSET_W_(ws, p) & HPS_TM_WSET_BIT_(p)) != 0)
#define HPS_TM_WSET_MARK_(ws, p) (HPS_TM_WSET_W_(ws, p) |= HPS_TM_WSET_BIT_(p))

/* Which inline fast path serves the running section (hps_tm_fast_t.mode).
 * norec's and stm's first write in a section moves it to the _W mode,
 * whose inline reads leave for the backend when the redo log may hold the
 * word (HPS_TM_WSET_MAY_HOLD_): a read after a write of the same word
 * always searches the log, other reads never do, and a section that has
 * written nothing pays nothing for the test. */
enum {
    HPS_TM_MODE_CALL,                /* every access calls the backend */
    HPS_TM_MODE_SGL,                 /* writes: undo-log entry and plain store */
    HPS_TM_MODE_NOREC,               /* reads: load, clock check, log (addr, value) */
    HPS_TM_MODE_NOREC_RO,            /* the same with no read log */
    HPS_TM_MODE_STM,                 /* reads: orec, load, clock check, log (orec, version) */
    HPS_TM_MODE_STM_RO,              /* the same with no read log */
    HPS_TM_MODE_HW,                  /* writes: a plain store and a count (a real
                                      * hardware transaction undoes them itself) */
    HPS_TM_MODE_NOREC_W,             /* NOREC after a write: reads test the filter,
                                      * writes of words outside it append inline */
    HPS_TM_MODE_STM_W                /* the same for STM (commit-time locking) */
};

/* The part of a thread's descriptor that the inline fast paths touch; the
 * library's descriptor begins with exactly these fields. */
#define HPS_TM_FAST_FIELDS_                                                        \
    uint64_t (*read)(struct hps_tm_fast *f, const uint64_t *w);                    \
    /* Store the bytes of v selected by mask into word w. */                       \
    void (*write)(struct hps_tm_fast *f, uint64_t *w, uint64_t v, uint64_t mask);  \
    uint32_t depth;                  /* nesting depth; 0 outside a section */      \
    uint32_t mode;                   /* HPS_TM_MODE_* */                            \
    void *jb[8];                     /* the checkpoint (HPS_TM_CKPT_) */            \
    uint64_t snap;                   /* norec: sequence at begin; stm: clock */     \
    hps_au64 *clock;                 /* norec's sequence or stm's clock */          \
    uint32_t ro;                     /* BEGIN_RO (and not failed into read-write) */\
    uint32_t nolog;                  /* a read-only section that logs no reads */  \
    hps_tm_log_t rlog;               /* norec (addr, value); stm (orec, version) */ \
    hps_tm_log_t ulog;               /* sgl undo log; stm locked orecs (orec, old) */ \
    hps_tm_wset_t ws;                /* the redo log (norec, stm) */                \
    /* The epoch the running section began in, 0 outside one (other threads  \
     * read it: the gate's drain, memory reclamation). */                      \
    hps_au64 in_sec;                                                            \
    uint32_t tick;                   /* sections until the thread's tick */     \
    uint32_t fastgo;                 /* the next section may begin inline, on the bias */ \
    uint32_t slowc;                  /* the running section commits through the library */ \
    uint32_t hw_w;                   /* words a real hardware section wrote */  \
    hps_tm_stats_t st;               /* this thread's statistics */

typedef struct hps_tm_fast {
    HPS_TM_FAST_FIELDS_
} hps_tm_fast_t;

/* The calling thread's descriptor (NULL until its first section), and the
 * descriptor that reads and writes go through (NULL: direct access). */
extern __thread hps_tm_fast_t *hps_tm_self_ __attribute__((tls_model("initial-exec")));
extern __thread hps_tm_fast_t *hps_tm_rd_ __attribute__((tls_model("initial-exec")));
extern __thread hps_tm_fast_t *hps_tm_wr_ __attribute__((tls_model("initial-exec")));

/* stm's ownership records: 2^20 of them, one per 32-byte stripe of the
 * address space (4 words), the stripe's address modulo 32 MiB.  A stripe,
 * not a word: the orecs a section touches then take a quarter of its
 * data's pages and cache lines, not as many (src/tm/stm.c has the figures).
 * The inline read below computes it too, so a program built against a
 * header with another stripe must be rebuilt: the table's name carries the
 * stripe, and such a program fails to start ("undefined symbol") instead
 * of locking the wrong orecs. */
#define HPS_TM_ORECS_BITS_ 20
#define HPS_TM_OREC_SHIFT_ 5
extern hps_au64 hps_tm_stm_orecs32_[1u << HPS_TM_ORECS_BITS_];
HPS_INLINE hps_au64 *hps_tm_stm_orec_(const void *p)
{
    return &hps_tm_stm_orecs32_[((uintptr_t)p >> HPS_TM_OREC_SHIFT_) & ((1u << HPS_TM_ORECS_BITS_) - 1)];
}

/* What every section's begin reads, on one line: the epoch (memory
 * reclamation), the gate (raised while a section must run alone: an
 * irrevocable one, a backend switch, a revocation of the bias, fork), the
 * descriptor that holds the bias (NULL: none) and the backend's ops table
 * (a hardware section reads the line inside its transaction: any change
 * of it aborts the section). */
struct hps_tm_glob {
    hps_au64 epoch;
    hps_aptr bias;
    hps_aptr ops;
    hps_au32 irrev;
} __attribute__((aligned(HPS_CACHELINE)));
extern struct hps_tm_glob hps_tm_g_;

hps_tm_fast_t *hps_tm_register_(void);
void hps_tm_begin_(hps_tm_fast_t *f, int ro);

/* The checkpoint of an outermost section: 0, then 1 each time an abort
 * returns to it.  On x86-64 an out-of-line setjmp (src/tm/ckpt.S), not
 * __builtin_setjmp: GCC keeps only the locals live across a returns_twice
 * call in memory, but every local live across any call in a function with
 * __builtin_setjmp's non-local label, so a loop inside a section would load
 * and store its counters on every iteration. */
/* Under ThreadSanitizer the checkpoint is glibc's _setjmp into a buffer of
 * the descriptor's (hps_tm_tsan_jb_), and the jb's last word, which a real
 * checkpoint fills with a return address, is NULL: the library then leaves
 * through longjmp.  TSan keeps a shadow call stack that it unwinds only at
 * a longjmp it intercepts; every abort through the out-of-line jump left
 * the aborted frames on it, and a thread that aborted ~30 000 times (two
 * frames each) overflowed it: a SEGV in TSan's runtime (tm.abort_many). */
#if defined(__SANITIZE_THREAD__)
#define HPS_TM_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HPS_TM_TSAN_ 1
#endif
#endif
#define HPS_TM_JB_LAST_ 7            /* the word a real checkpoint never leaves NULL */
#if defined(HPS_TM_TSAN_)
#include <setjmp.h>
void *hps_tm_tsan_jb_(void);        /* the calling thread's jmp_buf */
#define HPS_TM_CKPT_(jb) ((jb)[HPS_TM_JB_LAST_] = (void *)0, _setjmp(*(jmp_buf *)hps_tm_tsan_jb_()))
#elif defined(__x86_64__)
int hps_tm_ckpt_(void **jb) __attribute__((returns_twice));
#define HPS_TM_CKPT_(jb) hps_tm_ckpt_(jb)
#else
/* __builtin_setjmp uses the first five words. */
#define HPS_TM_CKPT_(jb) ((jb)[HPS_TM_JB_LAST_] = (void *)(jb), __builtin_setjmp(jb))
#endif
void hps_tm_commit_(hps_tm_fast_t *f);

/* The bias's owner (docs/tm.md, src/tm/bias.c) begins and commits inline:
 * a thread running sections alone runs them as solo, with plain reads and
 * in-place writes under an undo log, and no atomic operation.  The library
 * sets fastgo while the thread holds the bias with nothing pending (no
 * abort, no request to become irrevocable) and its descriptor set up for
 * solo sections; tick 1 means the thread's tick is due (the library's).
 * The entry (hps_tm_bias_enter_, the library's own begin uses it too) is
 * the owner's half of the bias's asymmetric Dekker protocol: a plain store
 * of in_sec, then the gate and the bias are read; whoever raises the gate
 * runs membarrier() before it reads in_sec.  0: the library's begin runs
 * instead. */
HPS_INLINE int hps_tm_bias_enter_(hps_tm_fast_t *f)
{
    hps_store_relaxed(&f->in_sec, hps_load_relaxed(&hps_tm_g_.epoch));
    hps_compiler_fence();
    if (hps_unlikely(hps_load_acquire(&hps_tm_g_.irrev) != 0) ||
        hps_unlikely(hps_load_relaxed(&hps_tm_g_.bias) != (void *)f)) {
        hps_store_release(&f->in_sec, 0);
        return 0;
    }
    return 1;
}

HPS_INLINE int hps_tm_begin_bias_(hps_tm_fast_t *f, int ro)
{
    if (!f->fastgo || f->tick <= 1 || !hps_tm_bias_enter_(f))
        return 0;
    f->tick--;
    f->depth = 1;
    f->ro = (uint32_t)ro;
    f->mode = ro ? HPS_TM_MODE_CALL : HPS_TM_MODE_SGL;
    f->slowc = 0;
    hps_tm_wr_ = f;
    return 1;
}

/* A thread's statistic grows: a relaxed store of the sum (the owner is
 * the only writer), because other threads read the counters while it
 * counts (hps_tm_stats_total, auto's rates, the idle sweep), which plain
 * stores would race in C's terms (ThreadSanitizer: tm.backend.auto_crowded). */
#define HPS_TM_COUNT_(x, n) hps_plain_store_relaxed(&(x), (x) + (n))
#define HPS_TM_MAX_(x, v)                                                          \
    do {                                                                           \
        if ((v) > (x))                                                             \
            hps_plain_store_relaxed(&(x), (v));                                    \
    } while (0)

/* A commit's statistics (one shape for the inline commit and the library's
 * solo one): `w` words written. */
HPS_INLINE void hps_tm_count_commit_(hps_tm_fast_t *f, uint32_t w)
{
    HPS_TM_COUNT_(f->st.commits, 1);
    HPS_TM_COUNT_(f->st.commits_ro, w == 0);
    HPS_TM_COUNT_(f->st.writes, w);
    HPS_TM_MAX_(f->st.max_write_set, w);
}

/* The commit of a section begun inline that did nothing the library must
 * finish (allocate, free, register an action, go irrevocable, write a
 * sub-word: each sets slowc): statistics, and in_sec back to 0. */
HPS_INLINE void hps_tm_end_(hps_tm_fast_t *f)
{
    if (hps_likely(f->slowc == 0)) {
        uint32_t w = f->ulog.n;
        hps_tm_wr_ = NULL;
        hps_tm_count_commit_(f, w);
        HPS_TM_COUNT_(f->st.solo, 1);
        /* Release: the section's stores before "outside a section". */
        hps_store_release(&f->in_sec, 0);
        f->ulog.n = 0;
        return;
    }
    hps_tm_commit_(f);
}

/* ---- sections ------------------------------------------------------------ */

#define HPS_TM_BEGIN()    HPS_TM_BEGIN_MODE_(0)
#define HPS_TM_BEGIN_RO() HPS_TM_BEGIN_MODE_(1)
/* Only the outermost BEGIN takes a checkpoint; an inner one counts depth. */
/* Nothing the macros declare lives across the checkpoint: after it the
 * descriptor is read again from TLS (as cheap as a reload from the stack),
 * so no local of theirs is "clobbered" by an abort's second return. */
#define HPS_TM_BEGIN_MODE_(ro) { \
    hps_tm_fast_t *const hps_tm_f0_ = hps_likely(hps_tm_self_ != NULL) ? hps_tm_self_ \
                                                                        : hps_tm_register_(); \
    if (hps_likely(hps_tm_f0_->depth == 0)) { \
        (void)HPS_TM_CKPT_(hps_tm_f0_->jb); \
        if (!hps_tm_begin_bias_(hps_tm_self_, (ro))) \
            hps_tm_begin_(hps_tm_self_, (ro)); \
    } else { \
        hps_tm_f0_->depth++; \
    }
#define HPS_TM_END() \
    if (--hps_tm_self_->depth == 0) \
        hps_tm_end_(hps_tm_self_); \
    }

/* Abort the section and run it again from its outermost BEGIN. */
void hps_tm_restart(void) __attribute__((noreturn));
/* Non-zero inside a section. */
int hps_tm_in_section(void);
/* The rest of the section runs alone and cannot abort (under norec and stm
 * the section first restarts to become irrevocable). */
void hps_tm_irrevocable(void);
/* The backend in use now ("sgl", "norec", "stm", "htm", "hybrid"). */
const char *hps_tm_backend_name(void);
/* Why that backend runs (auto: its rule, or what it measured), copied into
 * buf as snprintf would; returns the reason's length. */
size_t hps_tm_backend_reason(char *buf, size_t n);
/* What HPSYNC_TM takes, the default first ("auto"), NULL-terminated. */
const char *const *hps_tm_backend_choices(void);

/* ---- accesses ------------------------------------------------------------ */

/* A read inside a section.  The common cases run inline.  A norec or stm
 * section that has written nothing yet loads the word and checks that its
 * backend's clock (norec's sequence, stm's version clock) still equals its
 * snapshot.  Under norec that proves the value current (a writer's
 * sequence is odd while it stores).  Under stm every commit takes its
 * version from the clock before it stores anything, and holds the word's
 * orec until it has stored everything; so an orec seen unlocked before the
 * load, with the clock unchanged after it, proves the value current at the
 * snapshot, and (orec, version) goes into the read log for revalidation.
 * A read-only section that keeps no read log (*_RO) stops before the log.  Anything
 * else (a full log, a moved clock, a write set to search, another backend)
 * is one call into the backend. */
/* Append (a, v) to the read log; 0 when it is full (the backend grows it). */
HPS_INLINE int hps_tm_rlog_push_(hps_tm_fast_t *f, uintptr_t a, uint64_t v)
{
    if (hps_unlikely(f->rlog.n == f->rlog.cap))
        return 0;
    hps_tm_pair_t *e = &f->rlog.e[f->rlog.n++];
    e->a = a;
    e->v = v;
    return 1;
}

/* stm's and norec's inline reads: 1 with *out set, or 0 to call the backend. */
HPS_INLINE int hps_tm_stm_read_fast_(hps_tm_fast_t *f, const uint64_t *p, int logged, uint64_t *out)
{
    hps_au64 *orec = hps_tm_stm_orec_(p);
    /* Acquire, acquire: orec, then word, then clock, in order. */
    uint64_t o = hps_load_acquire(orec);
    *out = hps_plain_load_acquire(p);
    return hps_likely(!(o & 1) && hps_load_relaxed(f->clock) == f->snap) &&
           (!logged || hps_tm_rlog_push_(f, (uintptr_t)orec, o));
}

HPS_INLINE int hps_tm_norec_read_fast_(hps_tm_fast_t *f, const uint64_t *p, int logged, uint64_t *out)
{
    /* Acquire: the word is read before the sequence. */
    *out = hps_plain_load_acquire(p);
    return hps_likely(hps_load_relaxed(f->clock) == f->snap) &&
           (!logged || hps_tm_rlog_push_(f, (uintptr_t)p, *out));
}

HPS_INLINE uint64_t hps_tm_read_in_(hps_tm_fast_t *f, const uint64_t *p)
{
    uint32_t m = f->mode;
    uint64_t v;
    /* The modes of a section that has written nothing are tested first:
     * their reads pay nothing for the filter. */
    if (m == HPS_TM_MODE_STM || m == HPS_TM_MODE_STM_RO) {
        if (hps_tm_stm_read_fast_(f, p, m == HPS_TM_MODE_STM, &v))
            return v;
    } else if (m == HPS_TM_MODE_NOREC || m == HPS_TM_MODE_NOREC_RO) {
        if (hps_tm_norec_read_fast_(f, p, m == HPS_TM_MODE_NOREC, &v))
            return v;
    } else if ((m == HPS_TM_MODE_STM_W || m == HPS_TM_MODE_NOREC_W) && !HPS_TM_WSET_MAY_HOLD_(&f->ws, p)) {
        if (m == HPS_TM_MODE_STM_W ? hps_tm_stm_read_fast_(f, p, 1, &v) : hps_tm_norec_read_fast_(f, p, 1, &v))
            return v;
    }
    return f->read(f, p);
}

HPS_INLINE uint64_t hps_tm_read_u64(const uint64_t *p)
{
    hps_tm_fast_t *f = hps_tm_rd_;
    if (f)
        return hps_tm_read_in_(f, p);
    return *p;
}

/* A write inside a section: sgl holds the lock, so a whole-word write is
 * one undo-log entry (the address tagged with bit 0) and a plain store; in
 * a real hardware transaction it is a store and a count; under norec and
 * stm, after the section's first write, a whole word not yet written is one
 * redo-log entry; everything else calls the backend. */
HPS_INLINE void hps_tm_write_in_(hps_tm_fast_t *f, uint64_t *p, uint64_t v, uint64_t mask)
{
    if (f->mode == HPS_TM_MODE_SGL && mask == ~(uint64_t)0 && hps_likely(f->ulog.n != f->ulog.cap)) {
        hps_tm_pair_t *e = &f->ulog.e[f->ulog.n++];
        e->a = (uintptr_t)p | 1;
        e->v = *p;
        /* Atomic, as every backend's stores to shared words (one mov): a
         * thread may poll the word outside any section with an atomic
         * load (the pipeline's busy-wait), which a plain store races. */
        hps_plain_store_relaxed(p, v);
        return;
    }
    if (f->mode == HPS_TM_MODE_HW && mask == ~(uint64_t)0) {
        f->hw_w++;
        *p = v;
        return;
    }
    /* norec and stm (commit-time locking) after their first write: a word
     * the redo log cannot hold yet (filter bit clear) is one append; the
     * log's index takes it at the next search (src/tm/log.c). */
    if (!HPS_TM_WSET_MAY_HOLD_(&f->ws, p) && (f->mode == HPS_TM_MODE_STM_W || f->mode == HPS_TM_MODE_NOREC_W) &&
        mask == ~(uint64_t)0 && hps_likely(f->ws.n != f->ws.cap)) {
        hps_tm_went_t *e = &f->ws.e[f->ws.n++];
        e->addr = p;
        e->val = v;
        e->mask = mask;
        HPS_TM_WSET_MARK_(&f->ws, p);
        return;
    }
    f->write(f, p, v, mask);
}

HPS_INLINE void hps_tm_write_u64(uint64_t *p, uint64_t v)
{
    hps_tm_fast_t *f = hps_tm_wr_;
    if (f)
        hps_tm_write_in_(f, p, v, ~(uint64_t)0);
    else
        *p = v;
}

/* A sub-word access: the containing aligned word, shifted and masked. */
#define HPS_TM_SUBWORD_(bits, T)                                                       \
    HPS_INLINE T hps_tm_read_u##bits(const T *p)                                       \
    {                                                                                  \
        hps_tm_fast_t *f = hps_tm_rd_;                                                 \
        if (!f)                                                                        \
            return *p;                                                                 \
        uintptr_t a = (uintptr_t)p;                                                    \
        uint64_t w = hps_tm_read_in_(f, (const uint64_t *)(a & ~(uintptr_t)7));                \
        return (T)(w >> ((a & 7) * 8));                                                \
    }                                                                                  \
    HPS_INLINE void hps_tm_write_u##bits(T *p, T v)                                    \
    {                                                                                  \
        hps_tm_fast_t *f = hps_tm_wr_;                                                 \
        if (!f) {                                                                      \
            *p = v;                                                                    \
            return;                                                                    \
        }                                                                              \
        uintptr_t a = (uintptr_t)p;                                                    \
        unsigned sh = (unsigned)(a & 7) * 8;                                           \
        hps_tm_write_in_(f, (uint64_t *)(a & ~(uintptr_t)7), (uint64_t)v << sh,        \
                 (uint64_t)(T)~(T)0 << sh);                                            \
    }
HPS_TM_SUBWORD_(8, uint8_t)
HPS_TM_SUBWORD_(16, uint16_t)
HPS_TM_SUBWORD_(32, uint32_t)
#undef HPS_TM_SUBWORD_

HPS_INLINE void *hps_tm_read_ptr(void *const *p)
{
    return (void *)(uintptr_t)hps_tm_read_u64((const uint64_t *)(const void *)p);
}
HPS_INLINE void hps_tm_write_ptr(void **p, void *v)
{
    hps_tm_write_u64((uint64_t *)(void *)p, (uint64_t)(uintptr_t)v);
}
/* Floating point: the bits of the value through the integer accessor of
 * its width. */
#define HPS_TM_FLOAT_(T, bits)                                                         \
    HPS_INLINE T hps_tm_read_##T(const T *p)                                           \
    {                                                                                  \
        uint##bits##_t u = hps_tm_read_u##bits((const uint##bits##_t *)(const void *)p); \
        T x;                                                                           \
        memcpy(&x, &u, sizeof x);                                                      \
        return x;                                                                      \
    }                                                                                  \
    HPS_INLINE void hps_tm_write_##T(T *p, T v)                                        \
    {                                                                                  \
        uint##bits##_t u;                                                              \
        memcpy(&u, &v, sizeof u);                                                      \
        hps_tm_write_u##bits((uint##bits##_t *)(void *)p, u);                          \
    }
HPS_TM_FLOAT_(float, 32)
HPS_TM_FLOAT_(double, 64)
#undef HPS_TM_FLOAT_

/* Type-generic forms.  READ dispatches on the pointee type: signed and
 * plain-char types share the unsigned accessor of their width, any other
 * object pointer goes through _ptr.  WRITE first converts v to the pointee
 * type (as an assignment would), then stores its bytes by width. */
#define HPS_TM_READ(p) _Generic(*(p),                                                      \
    float: hps_tm_read_float((const float *)(const void *)(p)),                           \
    double: hps_tm_read_double((const double *)(const void *)(p)),                        \
    char: (char)hps_tm_read_u8((const uint8_t *)(const void *)(p)),                       \
    signed char: (signed char)hps_tm_read_u8((const uint8_t *)(const void *)(p)),         \
    unsigned char: hps_tm_read_u8((const uint8_t *)(const void *)(p)),                    \
    short: (short)hps_tm_read_u16((const uint16_t *)(const void *)(p)),                   \
    unsigned short: hps_tm_read_u16((const uint16_t *)(const void *)(p)),                 \
    int: (int)hps_tm_read_u32((const uint32_t *)(const void *)(p)),                       \
    unsigned: hps_tm_read_u32((const uint32_t *)(const void *)(p)),                       \
    long: (long)hps_tm_read_u64((const uint64_t *)(const void *)(p)),                     \
    unsigned long: (unsigned long)hps_tm_read_u64((const uint64_t *)(const void *)(p)),   \
    long long: (long long)hps_tm_read_u64((const uint64_t *)(const void *)(p)),           \
    unsigned long long: (unsigned long long)hps_tm_read_u64((const uint64_t *)(const void *)(p)), \
    _Bool: (_Bool)hps_tm_read_u8((const uint8_t *)(const void *)(p)),                     \
    default: hps_tm_read_ptr((void *const *)(const void *)(p)))
#define HPS_TM_WRITE(p, v) ({                                                              \
    _Static_assert(sizeof(*(p)) == 1 || sizeof(*(p)) == 2 || sizeof(*(p)) == 4 ||          \
                   sizeof(*(p)) == 8, "HPS_TM_WRITE: a 1, 2, 4 or 8-byte object");        \
    __typeof__(*(p)) hps_tm_v_ = (v);                                                      \
    hps_tm_write_sized_((void *)(p), &hps_tm_v_, sizeof hps_tm_v_); })

HPS_INLINE void hps_tm_write_sized_(void *p, const void *v, size_t n)
{
    uint64_t x = 0;
    memcpy(&x, v, n);
    switch (n) {
    case 1: hps_tm_write_u8((uint8_t *)p, (uint8_t)x); break;
    case 2: hps_tm_write_u16((uint16_t *)p, (uint16_t)x); break;
    case 4: hps_tm_write_u32((uint32_t *)p, (uint32_t)x); break;
    default: hps_tm_write_u64((uint64_t *)p, x); break;
    }
}

/* ---- memory -------------------------------------------------------------- */

/* In a section: freed again if the section aborts. */
void *hps_tm_malloc(size_t n);
/* In a section: deferred to commit.  Always: the block is reused only when
 * no section that was running at the free can still read it (epochs). */
void hps_tm_free(void *p);

/* ---- section actions ------------------------------------------------------ */

/* Run fn(arg) once the section commits, after it is over (in order of the
 * calls; dropped if the section aborts).  Outside a section: at once. */
void hps_tm_on_commit(void (*fn)(void *), void *arg);
/* Run fn(arg) each time the section aborts, after its writes are undone and
 * before it runs again (newest first; dropped when it commits).  Outside a
 * section or in an irrevocable one (which cannot abort): nothing. */
void hps_tm_on_abort(void (*fn)(void *), void *arg);

/* ---- statistics ---------------------------------------------------------- */

/* hps_tm_stats_t and the causes are declared above, where the descriptor's
 * fast fields use them. */
void hps_tm_stats_get(hps_tm_stats_t *out);      /* this thread's */
void hps_tm_stats_total(hps_tm_stats_t *out);    /* all threads, exited ones included */
/* Add *from to *to (the maxima: the larger); from may be a running
 * thread's, read counter by counter. */
void hps_tm_stats_add(hps_tm_stats_t *to, const hps_tm_stats_t *from);
const char *hps_tm_cause_name(int cause);

#ifdef __cplusplus
}
#endif
#endif /* HPSYNC_TM_H */
