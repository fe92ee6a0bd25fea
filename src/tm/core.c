// SPDX-License-Identifier: MIT
/*
 * The TM core: settings and the backend choice, the irrevocability gate,
 * the thread table, fork, statistics (a section's begin, commit and abort
 * are section.c's).
 *
 * Irrevocability is a gate every backend shares: an irrevocable section
 * takes `g_gate` (one at a time), raises the gate word (hps_tm_g_.irrev),
 * and waits until no other thread is inside a section (in_sec == 0).  A
 * section's begin publishes in_sec and then reads the gate word (both
 * sequentially consistent:
 * the store-load pair of Dekker's protocol), and steps back out if it is
 * raised.  So the irrevocable section runs alone and accesses memory
 * directly; it cannot abort.  The same drain makes fork() see memory
 * between sections, and lets `auto` switch backends at a quiescent point.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hw.h"
#include "hpsync/lock/adaptive.h"
#include "../common/env.h"
#include "../common/envparse.h"
#include "../prim/clock.h"
#include "../prim/cpuid.h"
#include "../prim/yield.h"

HPS_EXPORT __thread hps_tm_fast_t *hps_tm_self_ __attribute__((tls_model("initial-exec")));
HPS_EXPORT __thread hps_tm_fast_t *hps_tm_rd_ __attribute__((tls_model("initial-exec")));
HPS_EXPORT __thread hps_tm_fast_t *hps_tm_wr_ __attribute__((tls_model("initial-exec")));

uint32_t hps_tm_etl, hps_tm_privatize;
/* The epoch (memory reclamation) starts at 1 so that 0 can mean "not in a
 * section"; the bias is bias.c's; the gate word is raised by gate_close.
 * The type is a line of its own: every begin reads it. */
HPS_EXPORT struct hps_tm_glob hps_tm_g_ = { .epoch = 1 };

uint32_t hps_tm_retries_;                      /* HPSYNC_TM_RETRIES */
static uint32_t g_stats, g_auto;
static const char *g_why = "HPSYNC_TM";       /* how the backend was chosen (not auto) */
static hps_au32 g_init;                       /* 0, 2 ready */
static pthread_key_t g_key;

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static hps_tm_desc_t *g_desc[HPS_TM_MAX_THREADS];
static hps_au32 g_ndesc;
static uint32_t g_nlive;                      /* under g_reg_mu */
static hps_au32 g_nactive;                    /* threads that ran a section; written under g_reg_mu */
static hps_tm_stats_t g_exited;               /* under g_reg_mu */

static hps_adaptive_t g_gate = HPS_ADAPTIVE_INITIALIZER;
static int g_fork_drained;

void hps_tm_fatal(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
    abort();
}

hps_tm_desc_t *hps_tm_desc_at(uint32_t i) { return i < HPS_TM_MAX_THREADS ? g_desc[i] : NULL; }
uint32_t hps_tm_desc_count(void) { return hps_load_acquire(&g_ndesc); }

uint64_t hps_tm_desc_sum(size_t off)
{
    uint64_t sum = 0;
    uint32_t n = hps_tm_desc_count();
    for (uint32_t i = 0; i < n; i++)
        if (g_desc[i])
            sum += hps_load_relaxed((hps_au64 *)((char *)g_desc[i] + off));
    return sum;
}

void hps_tm_op_none(hps_tm_desc_t *d)
{
}

/* A long wait for another thread: PAUSE bursts (about 24 us), then
 * yields.  (The gate's drain and norec's sequence wait: napping there
 * instead, as hps_tm_wait_long does, cost bank 11-19 % at 8 threads on 2
 * CPUs, quiet; a yield there lets the preempted thread run.) */
void hps_tm_wait(uint32_t *n)
{
    if (*n < 64) {
        for (uint32_t i = 0; i < (1u << (*n < 4 ? *n : 4)); i++)
            hps_cpu_relax();
    } else {
        sched_yield();
    }
    (*n)++;
}

/* A retry's wait until another thread changes something (backoff after
 * aborts in a row, an explicit restart, the busy-waiting condition
 * variable): yield, or nap while yields come back late.  On this kernel
 * (6.18, EEVDF) a yield hands the CPU to whatever else is runnable and
 * pushes the yielder's deadline back.  Among our own threads that is what
 * the wait wants (the tx.abort pipeline at 8 threads on 2 CPUs made 14x
 * the items a second yielding than napping), but beside busy processes
 * each yield costs one of their time slices and yielders starve: 4 pairs
 * of threads handing a flag back and forth on 2 CPUs beside two `yes`
 * made 3 000-8 M hand-offs a second yielding, the slowest thread 400-700,
 * against 2.8-9.6 M and 64 000-1.5 M napping, and tm.cond_stress and
 * tm.cond_handoff_spin ran out of time (over 90 s; 1-2 s quiet).  So, as
 * libhpsync-shmem's waits do (src/prim/yield.h): after two yields in a
 * row that took over 1 ms the thread naps (20 us) instead for 20 ms.
 * (250 us, shmem's threshold, misread our own threads' slices at 8 threads
 * on 2 CPUs as another program's: the pipeline's tx.abort lost 45 %.) */
static __thread hps_yield_guard_t t_yield;

#define WAIT_LATE_NS 1000000ull
#define WAIT_HOLDOFF_NS 20000000ull
#define WAIT_NAP_NS 20000ull

void hps_tm_wait_long(void)
{
    uint64_t t0 = hps_mono_ns();
    if (!hps_yield_allowed(&t_yield, t0)) {
        hps_sleep_ns(WAIT_NAP_NS);
        return;
    }
    sched_yield();
    uint64_t t1 = hps_mono_ns();
    hps_yield_took(&t_yield, t1 - t0, t1, WAIT_LATE_NS, WAIT_HOLDOFF_NS);
}

/* ---- settings and the backend choice ------------------------------------- */

static void stats_at_exit(void);
static void thread_exit(void *p);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* What HPSYNC_TM takes: the one list (the bad-value line, hps-doctor and
 * through it the CLI's `run --tm` read it). */
static const char *const g_choices[] = { "auto", "sgl", "norec", "stm", "htm", "hybrid", NULL };

HPS_EXPORT const char *const *hps_tm_backend_choices(void)
{
    return g_choices;
}

static const hps_tm_ops_t *choose_backend(void)
{
    const char *v = hps_settings()->tm;
    if (!strcmp(v, "sgl"))
        return &hps_tm_sgl_ops;
    if (!strcmp(v, "norec"))
        return &hps_tm_norec_ops;
    if (!strcmp(v, "stm"))
        return &hps_tm_stm_ops;
    if (!strcmp(v, "htm") || !strcmp(v, "hybrid")) {
        /* Hardware sections run through the elision layer: on RTM, or on its
         * injected backend in tests; otherwise their software side runs. */
        int htm = !strcmp(v, "htm");
        if (hps_tm_hw_usable()) {
            g_why = hps_tm_hw_speculates() ? "RTM" : "injected aborts (HPSYNC_ELIDE_BACKEND)";
            return htm ? &hps_tm_htm_ops : &hps_tm_hybrid_ops;
        }
        char line[200];
        snprintf(line, sizeof line, "hpsync: HPSYNC_TM=%s: %s; running %s (software) instead\n", v,
                 hps_cpu_rtm_usable() ? "HPSYNC_ELIDE_BACKEND turns hardware transactions off"
                                      : "this CPU has no usable RTM",
                 htm ? "sgl" : "norec");
        (void)!write(2, line, strlen(line));
        g_why = htm ? "htm requested, software fallback" : "hybrid requested, software fallback";
        return htm ? &hps_tm_sgl_ops : &hps_tm_norec_ops;
    }
    if (*v && strcmp(v, "auto") != 0) {
        char why[128] = "is not a TM backend (";
        for (int i = 0; g_choices[i]; i++)
            snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s", i ? ", " : "", g_choices[i]);
        snprintf(why + strlen(why), sizeof why - strlen(why), ")");
        hps_env_bad_value("HPSYNC_TM", v, why, "auto");
    }
    g_auto = 1;
    const hps_settings_t *s = hps_settings();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return hps_tm_auto_init(s->tm_auto_cpus ? s->tm_auto_cpus : (cpus > 0 ? (uint32_t)cpus : 1),
                            s->tm_auto_trial, hps_tm_hw_speculates());
}

static void tm_init_once(void)
{
    const hps_settings_t *s = hps_settings();
    hps_tm_retries_ = s->tm_retries;
    g_stats = s->tm_stats;
    hps_tm_etl = s->tm_etl;
    hps_tm_privatize = s->tm_privatize;
    hps_store_relaxed(&hps_tm_g_.ops, (void *)choose_backend());
    hps_tm_bias_setup(s->tm_bias);
    pthread_key_create(&g_key, thread_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    if (g_stats)
        atexit(stats_at_exit);
    /* Release: a thread that sees 2 sees every setting above. */
    hps_store_release(&g_init, 2);
}

/* pthread_once rather than a flag of our own: a fork() while another
 * thread initializes left the child waiting forever for an initializer it
 * does not have (tm.fork caught it, about 1 run in 20 under load); glibc
 * lets the child run an interrupted once routine again.  The fork handlers
 * and the exit summary tolerate being registered twice that way. */
static void tm_init(void)
{
    if (hps_likely(hps_load_acquire(&g_init) == 2))
        return;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, tm_init_once);
}

HPS_EXPORT const char *hps_tm_backend_name(void)
{
    tm_init();
    return hps_tm_ops_now()->name;
}

HPS_EXPORT size_t hps_tm_backend_reason(char *buf, size_t n)
{
    tm_init();
    if (g_auto)
        return hps_tm_auto_reason(buf, n);
    return (size_t)snprintf(buf, n, "%s", g_why);
}

/* ---- the gate: sections that run alone ------------------------------------ */

/* Wait until no thread but `self` is inside a section. */
static void drain(const hps_tm_desc_t *self)
{
    uint32_t n = hps_tm_desc_count();
    for (uint32_t i = 0; i < n; i++) {
        hps_tm_desc_t *d = g_desc[i];
        uint32_t w = 0;
        if (d == self)
            continue;
        while (hps_load_acquire(&d->in_sec) != 0)
            hps_tm_wait(&w);
    }
}

static void gate_close(const hps_tm_desc_t *self)
{
    hps_adaptive_lock(&g_gate);
    /* Sequentially consistent (xchg): ordered before the reads of in_sec in
     * drain(), against begin's store of in_sec and read of hps_tm_g_.irrev.  The
     * bias's owner stores in_sec plainly: its half of the fence is the
     * membarrier in hps_tm_bias_fence (bias.c). */
    (void)hps_xchg_seq_cst(&hps_tm_g_.irrev, 1);
    hps_tm_bias_fence(self);
    drain(self);
}

static void gate_open(void)
{
    /* Release: whatever ran alone is visible to the sections that follow. */
    hps_store_release(&hps_tm_g_.irrev, 0);
    hps_adaptive_unlock(&g_gate);
}

void hps_tm_gate_close(const hps_tm_desc_t *self) { gate_close(self); }
void hps_tm_gate_open(void) { gate_open(); }

/* ---- the thread table ----------------------------------------------------- */

void hps_tm_clear_logs(hps_tm_desc_t *d)
{
    d->rlog.n = 0;
    d->ulog.n = 0;
    d->ulog_masks = 0;
    hps_tm_wset_clear(&d->ws);
}

uint32_t hps_tm_active_threads(void)
{
    pthread_mutex_lock(&g_reg_mu);
    uint32_t n = hps_load_relaxed(&g_nactive);
    /* A thread the sweep took out is idle, not gone: it may begin a section
     * at any moment, up to 63 of them before its tick counts it in again.
     * So the count never says "one" while another thread lives: solo (sgl
     * without the lock) is safe only for a thread that is really alone.
     * (Without this, auto ran solo beside a thread that had waited 40 ms
     * for the irrevocability gate under load, and tm.irrevocable.auto saw
     * an account change inside an irrevocable section, 4 runs in 150.) */
    if (n < 2 && g_nlive > 1)
        n = 2;
    pthread_mutex_unlock(&g_reg_mu);
    return n;
}

/* The same without the lock, for a thread's tick: a hint that may be a
 * registration behind. */
uint32_t hps_tm_active_hint(void)
{
    return hps_load_relaxed(&g_nactive);
}

void hps_tm_switch(const hps_tm_desc_t *self, const hps_tm_ops_t *ops)
{
    gate_close(self);
    /* Release: begin reads the table after passing the gate (acquire). */
    hps_store_release(&hps_tm_g_.ops, (void *)ops);
    hps_tm_bias_trial_reset();
    hps_tm_norec_plain_reset();
    gate_open();
}

/* A thread counts as using TM from its first section (its first tick)
 * until it exits or a sweep finds it idle, and again from its next tick.
 * Idle threads used to count until they exited: a program's main thread
 * that filled a structure in sections and then waited for its workers
 * made 2 workers on 2 CPUs "3 threads", more than CPUs, so the bias went
 * on trial and auto scouted it and stretched its windows for no thread
 * that ran. */
static HPS_NOINLINE void count_in(hps_tm_desc_t *d)
{
    pthread_mutex_lock(&g_reg_mu);
    int in = hps_load_relaxed(&d->counted) != 1;
    if (in) {
        hps_store_relaxed(&d->counted, 1);
        d->sweep_idle = 0;
        hps_store_relaxed(&g_nactive, hps_load_relaxed(&g_nactive) + 1);
    }
    pthread_mutex_unlock(&g_reg_mu);
    if (in && g_auto)
        hps_tm_auto_threads(d);
}

/* Every SWEEP_NS, at some thread's tick: a counted thread that committed
 * and aborted nothing over SWEEP_IDLE sweeps in a row (and is not inside a
 * section) is taken out of the count. */
#define SWEEP_NS 20000000ull
#define SWEEP_IDLE 2
static hps_au64 g_sweep_next;

static HPS_NOINLINE void sweep(hps_tm_desc_t *self, uint64_t now)
{
    if (pthread_mutex_trylock(&g_reg_mu) != 0)
        return;
    int changed = 0;
    if (now >= hps_load_relaxed(&g_sweep_next)) {
        hps_store_relaxed(&g_sweep_next, now + SWEEP_NS);
        uint32_t n = hps_load_relaxed(&g_ndesc);
        for (uint32_t i = 0; i < n; i++) {
            hps_tm_desc_t *o = g_desc[i];
            if (o == self || !hps_load_relaxed(&o->owner) || hps_load_relaxed(&o->counted) != 1)
                continue;
            /* Its own counters, read while it may run (auto's counts() does
             * the same): a torn or stale value only delays the verdict. */
            uint64_t seen = hps_plain_load_relaxed(&o->st.commits) + hps_plain_load_relaxed(&o->st.aborts);
            if (seen != o->sweep_seen || hps_load_relaxed(&o->in_sec)) {
                o->sweep_seen = seen;
                o->sweep_idle = 0;
            } else if (++o->sweep_idle >= SWEEP_IDLE) {
                hps_store_relaxed(&o->counted, 2);
                hps_store_relaxed(&g_nactive, hps_load_relaxed(&g_nactive) - 1);
                changed = 1;
            }
        }
    }
    pthread_mutex_unlock(&g_reg_mu);
    if (changed && g_auto)
        hps_tm_auto_threads(self);
}

/* Every HPS_TM_TICK sections a thread lets auto's controller look at the
 * clock (auto.c): one decrement per section otherwise. */
HPS_NOINLINE void hps_tm_tick(hps_tm_desc_t *d)
{
    if (hps_unlikely(hps_load_relaxed(&d->counted) != 1))
        count_in(d);
    d->tick = HPS_TM_TICK;
    d->ticks++;
    /* Every 16th tick (1024 sections) a clock read for the sweep. */
    if (hps_unlikely((d->ticks & 15) == 0)) {
        uint64_t now = hps_mono_ns();
        if (now >= hps_load_relaxed(&g_sweep_next))
            sweep(d, now);
    }
    if (g_auto)
        hps_tm_auto_tick(d);
    hps_tm_bias_tick(d);
    hps_tm_norec_plain_tick(d);
}

HPS_EXPORT hps_tm_fast_t *hps_tm_register_(void)
{
    tm_init();
    hps_tm_desc_t *d = NULL;
    pthread_mutex_lock(&g_reg_mu);
    uint32_t n = hps_load_relaxed(&g_ndesc);
    for (uint32_t i = 0; i < n && !d; i++)
        if (hps_load_relaxed(&g_desc[i]->owner) == 0)
            d = g_desc[i];
    if (!d) {
        if (n == HPS_TM_MAX_THREADS)
            hps_tm_fatal("hpsync: more than 4096 threads use TM at once\n");
        d = aligned_alloc(HPS_CACHELINE, (sizeof *d + HPS_CACHELINE - 1) & ~(size_t)(HPS_CACHELINE - 1));
        if (!d)
            hps_tm_fatal("hpsync: TM descriptor allocation failed\n");
        memset(d, 0, sizeof *d);
        d->tid = n;
        g_desc[n] = d;
        /* Release: scanners that see the new count see the descriptor. */
        hps_store_release(&g_ndesc, n + 1);
    }
    hps_store_relaxed(&d->owner, 1);
    g_nlive++;
    pthread_mutex_unlock(&g_reg_mu);
    d->rng = ((uint64_t)d->tid + 1) * 0x9E3779B97F4A7C15ull | 1;
    d->tick = 1;                      /* the first section counts the thread in */
    pthread_setspecific(g_key, d);
    hps_tm_self_ = &d->fast;
    return &d->fast;
}

/* Fold a descriptor's statistics into the exited total and free it for the
 * next thread (its retired blocks stay with it).  Under g_reg_mu. */
static void retire(hps_tm_desc_t *d)
{
    hps_tm_stats_add(&g_exited, &d->st);
    memset(&d->st, 0, sizeof d->st);
    hps_tm_bias_drop(d);
    hps_tm_co_retire(d);
    /* A thread copied into a fork()ed child mid-cleanup leaves its state. */
    hps_tm_clear_logs(d);
    d->on_commit.n = d->on_abort.n = 0;
    d->ro = d->ro_failed = d->irrev = d->want_irrev = d->serial = d->want_serial = d->aborted = d->aborts_in_row = d->hw_restarts = 0;
    d->fastgo = 0;
    d->wv = 0;
    hps_store_relaxed(&d->in_sec, 0);
    hps_store_relaxed(&d->plain_ro.v, 0);
    hps_store_relaxed(&d->rv_pub, 0);
    d->fast.depth = 0;
    g_nlive--;
    if (hps_load_relaxed(&d->counted) == 1)
        hps_store_relaxed(&g_nactive, hps_load_relaxed(&g_nactive) - 1);
    hps_store_relaxed(&d->counted, 0);
    d->sweep_idle = 0;
    d->nolog = d->nolog_skip = d->nolog_wait = 0;
    d->mode = HPS_TM_MODE_CALL;
    hps_store_relaxed(&d->wb, 0);
    /* Release: the next owner sees the state above. */
    hps_store_release(&d->owner, 0);
}

static void thread_exit(void *p)
{
    hps_tm_desc_t *d = p;
    if (d->fast.depth)
        hps_tm_fatal("hpsync: a thread exited inside a TM section\n");
    hps_tm_mem_reclaim(d);
    hps_tm_self_ = NULL;
    pthread_mutex_lock(&g_reg_mu);
    retire(d);
    pthread_mutex_unlock(&g_reg_mu);
    if (g_auto)
        hps_tm_auto_threads(NULL);
}

/* fork(): the child must not wait for threads it does not have.  The parent
 * drains every section first (unless the forking thread is itself inside
 * one: then only an irrevocable section makes the child's memory whole). */
/* Fork handlers registered twice (see tm_init) act once per fork: the
 * depth counts in the forking thread, whose TLS the child inherits. */
static __thread uint32_t t_fork_depth;

static void fork_prepare(void)
{
    if (t_fork_depth++ != 0)
        return;
    hps_tm_desc_t *self = (hps_tm_desc_t *)hps_tm_self_;
    g_fork_drained = !(self && self->fast.depth);
    if (g_fork_drained)
        gate_close(self);
    pthread_mutex_lock(&g_reg_mu);
}

static void fork_parent(void)
{
    if (--t_fork_depth != 0)
        return;
    pthread_mutex_unlock(&g_reg_mu);
    if (g_fork_drained)
        gate_open();
}

static void fork_child(void)
{
    if (--t_fork_depth != 0)
        return;
    hps_tm_desc_t *self = (hps_tm_desc_t *)hps_tm_self_;
    uint32_t n = hps_load_relaxed(&g_ndesc);
    for (uint32_t i = 0; i < n; i++)
        if (g_desc[i] != self && hps_load_relaxed(&g_desc[i]->owner))
            retire(g_desc[i]);
    pthread_mutex_unlock(&g_reg_mu);
    /* The child's one thread: no bias to honour, membarrier registered anew. */
    hps_tm_bias_setup(hps_settings()->tm_bias);
    hps_tm_norec_plain_fork_child();
    if (g_auto)
        hps_tm_auto_fork_child();
    if (g_fork_drained) {
        gate_open();
        hps_adaptive_init(&g_gate);   /* no parked waiter survived the fork */
        if (g_auto)
            hps_tm_auto_threads(self);    /* the child's one thread: solo */
    } else if (self->irrev != 1 && !self->serial) {
        /* Forked inside a section that does not hold the gate (sgl's or the
         * bias's irrevocable mode, or a plain one): another thread may have
         * held it, draining, waiting for this one.  That thread is gone;
         * the gate would stay closed in the child for ever. */
        hps_store_relaxed(&hps_tm_g_.irrev, 0);
        hps_adaptive_init(&g_gate);
    }
}

/* ---- statistics ------------------------------------------------------------ */

/* Live threads' counters are read while they run: the total is a snapshot
 * that is exact once those threads are quiet. */
HPS_EXPORT void hps_tm_stats_total(hps_tm_stats_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g_reg_mu);
    hps_tm_stats_add(out, &g_exited);
    uint32_t n = hps_load_relaxed(&g_ndesc);
    for (uint32_t i = 0; i < n; i++)
        if (hps_load_relaxed(&g_desc[i]->owner))
            hps_tm_stats_add(out, &g_desc[i]->st);
    pthread_mutex_unlock(&g_reg_mu);
}

/* The trials' measure (bias.c, norec.c): every thread's commits, exited
 * ones included.  Only commits, and loaded relaxed: their owners count them
 * with relaxed stores, so the trials that read them while they run race
 * with nothing (summing the whole record, as hps_tm_stats_total does for
 * the API, read the plain-counted fields too: TSan's reports in every
 * trial). */
uint64_t hps_tm_commits_total(void)
{
    /* Under the lock, so that a thread retiring now is counted once (retire
     * moves its count into g_exited and zeroes it; unowned descriptors hold
     * zeros). */
    pthread_mutex_lock(&g_reg_mu);
    uint64_t sum = g_exited.commits + hps_tm_desc_sum(offsetof(hps_tm_desc_t, st.commits));
    pthread_mutex_unlock(&g_reg_mu);
    return sum;
}

/* Work done in sections, for the bias's trial, which compares its epochs'
 * rates: commits, plus every iteration of the dynamic coarsened loops
 * (co_done, never reset).  A dynamic loop changes k between the trial's
 * 10 ms epochs, and its commits per second then move with k, not with the
 * bias (8 threads on 2 CPUs, the dynamic granularity: histogram 16 bins
 * under stm 1.23x the best static k counting iterations, 0.96x counting
 * commits; scatter large-low under stm 0.87x and 0.78x; 10 processes
 * each). */
uint64_t hps_tm_work_total(void)
{
    return hps_tm_commits_total() + hps_tm_co_done_total();
}

/* Iterations every thread has committed in dynamic loops, ever: the owners
 * write their counters once per chunk; reading them costs one miss per
 * thread that ran since the last look. */
uint64_t hps_tm_co_done_total(void)
{
    return hps_tm_desc_sum(offsetof(hps_tm_desc_t, co_done));
}

static void stats_at_exit(void)
{
    static int printed;              /* registered twice after a fork during init */
    if (printed)
        return;
    printed = 1;
    hps_tm_stats_t s;
    hps_tm_stats_total(&s);
    hps_tm_stats_print(stderr, &s, hps_tm_ops_now()->name, g_auto ? hps_tm_auto_why() : g_why, hps_tm_desc_count());
    hps_tm_bias_summary(stderr, s.solo);
    hps_tm_norec_plain_summary(stderr);
    if (g_auto)
        hps_tm_auto_summary(stderr);
}

/* ---- in-place irrevocability (libhpsync-itm) -------------------------------- */

/* Make a running norec or stm section irrevocable without a restart, when
 * that is cheap: it closes the gate only if the gate is free (it never
 * waits for it: the holder may be draining this very section), waits until
 * every other section is over, and if nothing committed since its snapshot
 * (so every value it read still holds, and its commit cannot fail) commits
 * its work so far and runs on alone with direct accesses, the gate held
 * until its end as for any irrevocable section.  Its allocations, frees and
 * actions stay with it until that end.  Returns 0, having changed nothing,
 * where it cannot (another backend, the gate taken, a commit since the
 * snapshot): the caller then calls hps_tm_irrevocable(), which restarts. */
int hps_tm_irrevocable_in_place(hps_tm_desc_t *d)
{
    if (d->irrev)
        return 1;
    if (d->ops != &hps_tm_norec_ops && d->ops != &hps_tm_stm_ops)
        return 0;
    if (!hps_adaptive_trylock(&g_gate))
        return 0;
    /* Sequentially consistent: as in gate_close (and its bias fence). */
    (void)hps_xchg_seq_cst(&hps_tm_g_.irrev, 1);
    hps_tm_bias_fence(d);
    drain(d);
    /* Acquire: the commits the clock counts are visible. */
    if (hps_load_acquire(d->fast.clock) != d->fast.snap) {
        gate_open();
        return 0;
    }
    int c = d->ops->commit(d);
    if (c != HPS_TM_COMMITTED) {     /* not expected alone and unchanged */
        gate_open();
        hps_tm_abort(d, c);
    }
    d->ops->end(d);
    HPS_TM_COUNT_(d->st.reads, d->rlog.n);
    HPS_TM_COUNT_(d->st.writes, d->ws.n);
    hps_tm_clear_logs(d);
    d->irrev = 1;
    HPS_TM_COUNT_(d->st.irrevocable, 1);
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
    return 1;
}
