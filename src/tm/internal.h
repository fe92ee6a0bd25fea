/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the TM core and its backends share.
 *
 * One descriptor per thread (hps_tm_desc_t), reached through initial-exec
 * TLS, registered lazily in a global table that is only ever appended to;
 * an exited thread's descriptor is recycled by the next new thread, so the
 * table is as long as the most threads that ever lived at once.  Other
 * threads read three words of a descriptor: `in_sec` (the epoch the running
 * section began in, 0 outside), `rv_pub` (stm: the snapshot + 1 of the
 * running section) and `owner`.
 *
 * A backend fills an ops table; the core owns checkpoints, nesting, the
 * retry policy, irrevocability, allocation and statistics, and calls the
 * backend only for the word-level work.  Promise to backends: begin runs
 * with in_sec published and no irrevocable section running; commit either
 * returns HPS_TM_COMMITTED (the section is done and
 * visible) or a cause, after which the
 * core calls rollback.
 */
#ifndef HPS_TM_INTERNAL_H
#define HPS_TM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include "hpsync/tm.h"
#include "hpsync/lock.h"

#define HPS_TM_MAX_THREADS 4096
/* What a backend's commit returns on success: every cause, conflict (0)
 * included, is a valid enum value. */
#define HPS_TM_COMMITTED (-1)

/* The logs (hps_tm_log_t, hps_tm_wset_t) are declared in hpsync/tm.h, where
 * the inline fast paths use them. */

/* A growable array of pointers (allocations and frees of the section). */
typedef struct hps_tm_pvec {
    void **p;
    uint32_t n, cap;
} hps_tm_pvec_t;

typedef struct hps_tm_desc {
    /* First: the public fast-path part, reachable both as d->fast and by
     * its fields' names (d->snap, d->rlog, ...). */
    union {
        hps_tm_fast_t fast;
        struct {
            HPS_TM_FAST_FIELDS_
        };
    };
    const struct hps_tm_ops *ops;    /* the backend this section runs on */
    hps_au64 rv_pub;                 /* stm: snapshot + 1 while in a section */
    hps_au32 owner;                  /* 1 while a thread owns the descriptor */
    /* norec: a read-only section running plain code (norec.c).  A line of
     * its own: writers load it at every commit once armed, and the owner
     * writes it only around such sections. */
    struct {
        hps_au32 v;
    } __attribute__((aligned(HPS_CACHELINE))) plain_ro;
    uint32_t tid;                    /* index in the table, for orec lock words */
    uint32_t ro_failed;              /* a write in BEGIN_RO made it read-write */
    uint32_t nolog_skip;             /* read-only sections to log before trying no log */
    uint32_t nolog_wait;             /* nolog_skip after the next failed logless attempt */
    /* Among the threads that use TM (auto's T, the bias's crowding): 0 not
     * yet, 1 counted, 2 found idle by a sweep and taken out until its next
     * tick (core.c).  Written under the registry's lock; the owner's tick
     * reads it without. */
    hps_au32 counted;
    uint64_t sweep_seen;             /* sweeps: commits + aborts at the last one */
    uint32_t sweep_idle;             /* sweeps in a row that saw none */
    uint32_t ticks;                  /* the owner's ticks: every Nth reads a clock (the sweep,
                                      * the bias's and plain read-only trials) */
    hps_au64 wb;                     /* stm: 0, 1 committing, wv + 1 writing back */
    uint32_t irrev, want_irrev;      /* 1 alone behind the gate, 2 sgl; restart into 1 */
    /* Serialized after HPSYNC_TM_RETRIES conflicts in a row, or on request
     * (want_serial: the next section's first attempt; a coarsened loop's
     * serial chunk, which also makes a tick due, so that begin takes its
     * slow path, where the request is read): alone behind the gate, but as
     * solo (undo log), so that it can still restart. */
    uint32_t serial, want_serial;
    uint32_t aborts_in_row;          /* conflicts: serialized fallback, backoff */
    uint32_t aborted;                /* this section aborted at least once */
    uint32_t hw_restarts;            /* explicit restarts of its hardware attempts (hw.h) */
    uint32_t abort_hw;               /* the last abort left a hardware attempt (all rolled back) */
    uint32_t hw_plain;               /* hybrid: a hardware section running plain code (hw.h) */
    uint64_t wv;                     /* stm: version of the commit just made, or 0 */
    uint64_t rng;                    /* backoff randomness */
    uint32_t ulog_masks;             /* sgl: mask entries in ulog (sub-word writes) */
    hps_tm_pvec_t allocs, frees;     /* this section's */
    hps_tm_log_t limbo;              /* (block, epoch it was retired in) */
    uint32_t limbo_next;             /* limbo size that triggers the next reclaim */
    hps_tm_log_t on_commit, on_abort;/* (fn, arg) actions (actions.c) */
    uint32_t cond_depth, cond_ro;    /* what a condvar wait resumes (cond.c) */
    /* The bias (bias.c): ticks alone so far,
     * the ticks to wait before taking it, whether this thread held it at
     * its last tick, whether it revoked one and has not yet begun its
     * section, and its solo count and ticks when it took it. */
    uint32_t alone_ticks, bias_wait, bias_held, bias_pending;
    uint32_t bias_gen;               /* the opening (g_over.gen) its wait was reset at */
    uint32_t bias_ticks0;
    uint64_t bias_solo0;
    /* Iterations this thread committed in hps_tm_for_dynamic, ever (never
     * reset, not even by retire): a site's leader sums every thread's to
     * measure throughput (coarsen.c).  Written by the owner only. */
    hps_au64 co_done;
    /* hps_tm_for_dynamic's view of the sites this thread uses (coarsen.c;
     * allocated at its first dynamic loop, cleared when the descriptor is
     * retired): in the descriptor, not in TLS, because a __thread array in
     * the shared library costs a __tls_get_addr call per access. */
    struct hps_tm_co_slots *co_slots;
    /* GCC TM read-only transactions it ran on plain code (norec.c), ever:
     * per thread, summed for the summary line, so that the readers share
     * no counter. */
    hps_au64 plain_ro_n;
    /* The checkpoint of a program built with ThreadSanitizer (hpsync/tm.h,
     * HPS_TM_CKPT_), in every build: such a program may run on a library
     * built without it. */
    jmp_buf tsan_jb;
} hps_tm_desc_t;

typedef struct hps_tm_ops {
    size_t size;                     /* sizeof(hps_tm_ops_t): ABI check */
    const char *name;
    int instrument_reads;            /* 0: reads are plain loads (sgl) */
    /* 1: the section runs alone: no other section runs beside its commit
     * or can hold a pointer it read (sgl, solo).  So its frees need no
     * epoch (mem.c), it becomes irrevocable in place (core.c), and GCC TM
     * runs its uninstrumented code (itm/begin.c). */
    int free_at_once;
    void (*begin)(hps_tm_desc_t *d);
    uint64_t (*read)(hps_tm_fast_t *f, const uint64_t *w);
    void (*write)(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask);
    int (*commit)(hps_tm_desc_t *d); /* HPS_TM_COMMITTED or an hps_tm_cause */
    void (*rollback)(hps_tm_desc_t *d);
    /* After commit or rollback, once the thread is marked outside any
     * section (stm: the privatization wait). */
    void (*end)(hps_tm_desc_t *d);
    /* The inline fast path (HPS_TM_MODE_*) of read-write sections, and of
     * read-only ones that keep no read log (CALL: none; such a backend
     * always logs).  A table that leaves them 0 is called for every access. */
    uint32_t mode, mode_ro;
    /* Hardware backends on RTM: try the section as a real transaction
     * before the thread publishes in_sec (the transaction subscribes to
     * the gate instead).  1 started, 0 tried and failed (begin's software
     * path follows, which then tries no hardware: hw.h), -1 not applicable.  NULL: none. */
    int (*try_hw)(struct hps_tm_desc *d);
} hps_tm_ops_t;

extern const hps_tm_ops_t hps_tm_sgl_ops, hps_tm_norec_ops, hps_tm_stm_ops;
/* auto's backend for one thread: sgl's accesses, no lock (sgl.c). */
extern const hps_tm_ops_t hps_tm_solo_ops;
/* The hardware backends (htm.c, hybrid.c): sections in hardware
 * transactions through the elision layer, falling back to sgl or norec. */
extern const hps_tm_ops_t hps_tm_htm_ops, hps_tm_hybrid_ops;
/* What a hardware attempt that left by its own abort (a restart, a write
 * in a read-only section, irrevocability) runs its abort on: the hardware
 * rolled everything back already (htm.c). */
extern const hps_tm_ops_t hps_tm_hw_aborted_ops;
/* 1 when hardware sections can run: RTM, or the elision layer's injected
 * backend (HPSYNC_ELIDE_BACKEND=inject:SEQ); sets the elision layer up. */
int hps_tm_hw_usable(void);
/* 1 when they would really speculate (RTM): auto's choice of hybrid. */
int hps_tm_hw_speculates(void);

/* norec.c: read-only sections that run plain code (GCC TM's uninstrumented
 * path, itm/begin.c).  enter after the section's begin: 1 if it may (else
 * it runs instrumented); exit before its commit.  tick: a thread's tick
 * steps the trial that decides whether it pays; reset: the backend changed
 * or threads outnumber CPUs again; summary: the HPSYNC_TM_STATS line. */
/* Bits of hps_tm_norec_plain_st_ (0: no eligible reader seen yet). */
#define HPS_TM_PLAIN_ARMED 1u
#define HPS_TM_PLAIN_OPEN 2u
#define HPS_TM_PLAIN_OFF 4u
extern hps_au32 hps_tm_norec_plain_st_;
void hps_tm_norec_plain_arm(int on);
int hps_tm_norec_plain_enter(hps_tm_desc_t *d);
void hps_tm_norec_plain_exit(hps_tm_desc_t *d);
void hps_tm_norec_plain_tick(hps_tm_desc_t *d);
void hps_tm_norec_plain_reset(void);
void hps_tm_norec_plain_summary(FILE *f);
void hps_tm_norec_plain_fork_child(void);   /* a stepping thread may be gone */

/* sgl.c: the global lock (an hps_lock_state_t used as an adaptive lock),
 * and the replay of the undo log that sgl-style writes keep. */
typedef struct {
    union hps_lock_state l;
} __attribute__((aligned(HPS_LINEPAIR))) hps_tm_sgl_lock_t;
extern hps_tm_sgl_lock_t hps_tm_sgl;
void hps_tm_undo(hps_tm_desc_t *d);
/* sgl's write: store, with an undo entry (the hardware sections' write too;
 * the one for a whole word is also inline in tm.h, HPS_TM_MODE_SGL). */
void hps_tm_sgl_write(hps_tm_fast_t *f, uint64_t *w, uint64_t v, uint64_t mask);
/* norec.c: the sequence lock, which hybrid's hardware sections advance. */
extern hps_au64 *const hps_tm_norec_seq;

/* Settings the backends read (set once at init). */
extern uint32_t hps_tm_etl, hps_tm_privatize;
/* The epoch sections begin in is hps_tm_g_.epoch (tm.h; mem.c advances it). */

/* Core services for backends. */
void hps_tm_op_none(hps_tm_desc_t *d);   /* an ops entry with nothing to do */
/* What core.c shares with section.c. */
extern uint32_t hps_tm_retries_;         /* aborts in a row before a section runs alone */
void hps_tm_fatal(const char *msg) __attribute__((noreturn));   /* one line on stderr, abort() */
void hps_tm_clear_logs(hps_tm_desc_t *d);
#define HPS_TM_TICK 64
void hps_tm_tick(hps_tm_desc_t *d);      /* every HPS_TM_TICK sections: counting in, auto, bias */
/* Tick at the next section's begin (coarsened loops: coarsen.c). */
static inline void hps_tm_tick_soon(hps_tm_desc_t *d)
{
    if (d->tick > 1)
        d->tick = 1;
}
void hps_tm_abort(hps_tm_desc_t *d, int cause) __attribute__((noreturn));
#if defined(__x86_64__)
/* Back to the checkpoint in jb (HPS_TM_CKPT_, or libhpsync-itm's, which has
 * the same layout), which returns value (ckpt.S). */
void hps_tm_longjmp_(void *const *jb, int value) __attribute__((noreturn));
#endif
/* A read-only section without a read log found a commit since its snapshot:
 * restart it (no backoff), logging for the next few read-only sections. */
void hps_tm_nolog_abort(hps_tm_desc_t *d) __attribute__((noreturn));
/* A thread by index (NULL past the end), and how many indices exist. */
hps_tm_desc_t *hps_tm_desc_at(uint32_t i);
/* An owner-written hps_au64 counter of every descriptor (at byte offset
 * `off`), summed: exited threads' included, as descriptors are never freed. */
uint64_t hps_tm_desc_sum(size_t off);
uint32_t hps_tm_desc_count(void);

/* Logs (log.c). */
void hps_tm_log_grow(hps_tm_log_t *l);
HPS_INLINE void hps_tm_log_push(hps_tm_log_t *l, uintptr_t a, uint64_t v)
{
    if (hps_unlikely(l->n == l->cap))
        hps_tm_log_grow(l);
    l->e[l->n].a = a;
    l->e[l->n].v = v;
    l->n++;
}
void hps_tm_pvec_push(hps_tm_pvec_t *v, void *p);
/* The entry for word w, or NULL. */
hps_tm_went_t *hps_tm_wset_find(hps_tm_wset_t *ws, const uint64_t *w);
/* Merge (v, mask) into the entry for w, creating it; returns it. */
hps_tm_went_t *hps_tm_wset_put(hps_tm_wset_t *ws, uint64_t *w, uint64_t v, uint64_t mask);
void hps_tm_wset_clear(hps_tm_wset_t *ws);
/* Store the masked bytes of e into memory without touching the others. */
void hps_tm_wset_store(const hps_tm_went_t *e);
/* Store every entry of the redo log (commit's write-back), in order. */
void hps_tm_wset_write_back(const hps_tm_wset_t *ws);

/* Memory (mem.c). */
void hps_tm_mem_commit(hps_tm_desc_t *d);
void hps_tm_mem_abort(hps_tm_desc_t *d);
/* Free the retired blocks no running section can still read. */
void hps_tm_mem_reclaim(hps_tm_desc_t *d);

/* The backend switch (core.c): drain every section but self's (outside
 * one), publish ops, reopen.  And what auto reads. */
HPS_INLINE const hps_tm_ops_t *hps_tm_ops_now(void)
{
    /* Acquire: the table a switch published is fully visible. */
    return (const hps_tm_ops_t *)hps_load_acquire(&hps_tm_g_.ops);
}
void hps_tm_switch(const hps_tm_desc_t *self, const hps_tm_ops_t *ops);
uint32_t hps_tm_active_threads(void);
uint32_t hps_tm_active_hint(void);   /* the same without the lock: a hint */

/* auto (auto.c): the starting backend; the thread count changed (self is
 * outside any section; never called with the gate held); a thread's tick
 * at begin; the fork child's reset; how the present backend was chosen. */
const hps_tm_ops_t *hps_tm_auto_init(uint32_t cpus, uint32_t trial_ms, int hybrid);
void hps_tm_auto_threads(const hps_tm_desc_t *self);
void hps_tm_auto_tick(hps_tm_desc_t *d);
void hps_tm_auto_fork_child(void);
const char *hps_tm_auto_why(void);
/* The summary's auto lines: time per backend, trials, the last trial. */
void hps_tm_auto_summary(FILE *f);
size_t hps_tm_auto_reason(char *buf, size_t n);   /* a copy, under the controller's lock */

/* Section actions (actions.c): run the commit list (after a commit, the
 * section over) or the abort list (after rollback, newest first), dropping
 * the other. */
void hps_tm_actions_commit(hps_tm_desc_t *d);
void hps_tm_actions_abort(hps_tm_desc_t *d);

/* The gate (core.c): close = one holder at a time, hps_tm_g_.irrev raised, every
 * other thread outside its section (after the bias fence); open = release. */
void hps_tm_gate_close(const hps_tm_desc_t *self);
void hps_tm_gate_open(void);

/* The bias (bias.c): the descriptor whose sections run alone on the solo
 * path with no atomic operation, or NULL.  setup at init (and in a fork
 * child); fence before reading other threads' in_sec; tick at a thread's
 * tick (it notes who ticked last, and may take the bias);
 * revoke when a thread finds another's bias; drop at thread exit. */
/* hps_tm_g_.bias (tm.h). */
void hps_tm_bias_setup(int on);
int hps_tm_bias_enabled(void);
void hps_tm_bias_fence(const hps_tm_desc_t *self);
void hps_tm_bias_tick(hps_tm_desc_t *d);
void hps_tm_bias_revoke(hps_tm_desc_t *self);
/* A revoker got into its section (or irrevocable): the bias may be taken again. */
void hps_tm_bias_settled(hps_tm_desc_t *d);
void hps_tm_bias_drop(hps_tm_desc_t *d);
/* The backend changed: the trial with more threads than CPUs starts again. */
void hps_tm_bias_trial_reset(void);
/* auto's verdict on the bias while threads outnumber CPUs (NONE: the
 * trial's); CLOSED also takes back a bias held now, under the gate. */
enum { HPS_TM_BIAS_SAY_NONE, HPS_TM_BIAS_SAY_CLOSED, HPS_TM_BIAS_SAY_OPEN };
void hps_tm_bias_auto_say(const hps_tm_desc_t *self, uint32_t say);
void hps_tm_bias_summary(FILE *f, uint64_t solo);
/* Coarsening (coarsen.c): forget the retired thread's sites. */
void hps_tm_co_retire(hps_tm_desc_t *d);

/* Statistics (stats.c; hps_tm_stats_add is public, hpsync/tm.h): the
 * summary's first lines. */
void hps_tm_stats_print(FILE *f, const hps_tm_stats_t *s, const char *backend, const char *why,
                        uint32_t threads);

/* A wait step that spins briefly, then yields (robust when oversubscribed). */
void hps_tm_wait(uint32_t *n);
void hps_tm_wait_long(void);        /* a retry's: yield, or nap while yields come back late (core.c) */
int hps_tm_crowded(void);            /* more threads use TM than the process has CPUs (bias.c) */
uint64_t hps_tm_commits_total(void); /* every thread's committed sections, exited ones included (core.c) */
uint64_t hps_tm_work_total(void);        /* commits + dynamic loops' iterations (the bias's trial) */
uint64_t hps_tm_co_done_total(void);     /* dynamic loops' iterations, every thread's (core.c) */


/* libhpsync-itm (core.c): make the running norec or stm section irrevocable
 * in place (its work so far committed, the rest run alone) when the gate
 * is free and nothing committed since its snapshot; 0 where it cannot (the
 * caller falls back to hps_tm_irrevocable()). */
int hps_tm_irrevocable_in_place(hps_tm_desc_t *d);

#endif
