// SPDX-License-Identifier: MIT
/*
 * The TM core: settings and the backend choice, the thread table, section
 * begin/commit/abort, the retry policy, irrevocability, fork.
 *
 * Irrevocability is a gate every backend shares: an irrevocable section
 * takes `g_gate` (one at a time), raises `g_irrev`, and waits until no
 * other thread is inside a section (in_sec == 0).  A section's begin
 * publishes in_sec and then reads g_irrev (both sequentially consistent:
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
#include "internal.h"
#include "hpsync/lock/adaptive.h"
#include "../common/env.h"
#include "../common/envparse.h"
#include "../prim/cpuid.h"

HPS_EXPORT __thread hps_tm_fast_t *hps_tm_self_ __attribute__((tls_model("initial-exec")));
HPS_EXPORT __thread hps_tm_fast_t *hps_tm_rd_ __attribute__((tls_model("initial-exec")));
HPS_EXPORT __thread hps_tm_fast_t *hps_tm_wr_ __attribute__((tls_model("initial-exec")));

uint32_t hps_tm_etl, hps_tm_privatize;
/* The epoch sections begin in (memory reclamation); starts at 1 so that 0
 * can mean "not in a section". */
hps_au64 hps_tm_epoch = 1;

/* auto: norec while at most this many threads use TM, stm beyond. */
#define HPS_TM_AUTO_NOREC_MAX 4

static hps_aptr g_ops;                        /* const hps_tm_ops_t * */
static uint32_t g_retries, g_stats, g_auto;
static const char *g_why = "";                /* how the backend was chosen */
static hps_au32 g_init;                       /* 0, 1 initializing, 2 ready */
static pthread_key_t g_key;

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static hps_tm_desc_t *g_desc[HPS_TM_MAX_THREADS];
static hps_au32 g_ndesc;
static uint32_t g_nlive;                      /* under g_reg_mu */
static hps_tm_stats_t g_exited;               /* under g_reg_mu */

static hps_adaptive_t g_gate = HPS_ADAPTIVE_INITIALIZER;
static hps_au32 g_irrev;
static int g_fork_drained;

static void fatal(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
    abort();
}

hps_tm_desc_t *hps_tm_desc_at(uint32_t i) { return i < HPS_TM_MAX_THREADS ? g_desc[i] : NULL; }
uint32_t hps_tm_desc_count(void) { return hps_load_acquire(&g_ndesc); }

static const hps_tm_ops_t *ops_now(void)
{
    /* Acquire: the table a switch published is fully visible. */
    return (const hps_tm_ops_t *)hps_load_acquire(&g_ops);
}

void hps_tm_op_none(hps_tm_desc_t *d)
{
}

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

/* ---- settings and the backend choice ------------------------------------- */

static void stats_at_exit(void);
static void thread_exit(void *p);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

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
    if (*v && strcmp(v, "auto") != 0)
        hps_env_bad_value("HPSYNC_TM", v, "is not a TM backend (sgl, htm, stm, norec, hybrid, auto)",
                          "auto");
    g_auto = 1;
    if (hps_tm_hw_speculates()) { g_why = "auto: hybrid when RTM is usable"; return &hps_tm_hybrid_ops; }
    g_why = "auto: at most 4 threads";
    return &hps_tm_norec_ops;
}

static void tm_init(void)
{
    if (hps_likely(hps_load_acquire(&g_init) == 2))
        return;
    uint32_t e = 0;
    if (!hps_cas_acq_rel(&g_init, &e, 1)) {
        while (hps_load_acquire(&g_init) != 2)
            sched_yield();
        return;
    }
    const hps_settings_t *s = hps_settings();
    g_retries = s->tm_retries;
    g_stats = s->tm_stats;
    hps_tm_etl = s->tm_etl;
    hps_tm_privatize = s->tm_privatize;
    hps_store_relaxed(&g_ops, (void *)choose_backend());
    pthread_key_create(&g_key, thread_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    if (g_stats)
        atexit(stats_at_exit);
    /* Release: a thread that sees 2 sees every setting above. */
    hps_store_release(&g_init, 2);
}

HPS_EXPORT const char *hps_tm_backend_name(void)
{
    tm_init();
    return ops_now()->name;
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
     * drain(), against begin's store of in_sec and read of g_irrev. */
    (void)hps_xchg_seq_cst(&g_irrev, 1);
    drain(self);
}

static void gate_open(void)
{
    /* Release: whatever ran alone is visible to the sections that follow. */
    hps_store_release(&g_irrev, 0);
    hps_adaptive_unlock(&g_gate);
}

/* ---- the thread table ----------------------------------------------------- */

static void clear_logs(hps_tm_desc_t *d)
{
    d->rlog.n = 0;
    d->ulog.n = 0;
    hps_tm_wset_clear(&d->ws);
}

static void maybe_switch(void)
{
    /* auto moves to stm once more threads use TM than norec's one commit
     * lock serves well; it switches with every section drained. */
    if (!g_auto || ops_now() != &hps_tm_norec_ops)
        return;
    pthread_mutex_lock(&g_reg_mu);
    uint32_t live = g_nlive;
    pthread_mutex_unlock(&g_reg_mu);
    if (live <= HPS_TM_AUTO_NOREC_MAX)
        return;
    gate_close(NULL);
    g_why = "auto: more than 4 threads";
    hps_store_release(&g_ops, (void *)&hps_tm_stm_ops);
    gate_open();
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
            fatal("hpsync: more than 4096 threads use TM at once\n");
        d = aligned_alloc(HPS_CACHELINE, (sizeof *d + HPS_CACHELINE - 1) & ~(size_t)(HPS_CACHELINE - 1));
        if (!d)
            fatal("hpsync: TM descriptor allocation failed\n");
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
    pthread_setspecific(g_key, d);
    hps_tm_self_ = &d->fast;
    maybe_switch();
    return &d->fast;
}

static void stats_add(hps_tm_stats_t *to, const hps_tm_stats_t *s)
{
    to->commits += s->commits;
    to->commits_ro += s->commits_ro;
    to->aborts += s->aborts;
    to->retries += s->retries;
    to->irrevocable += s->irrevocable;
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        to->aborts_by_cause[c] += s->aborts_by_cause[c];
    to->reads += s->reads;
    to->writes += s->writes;
    if (s->max_read_set > to->max_read_set)
        to->max_read_set = s->max_read_set;
    if (s->max_write_set > to->max_write_set)
        to->max_write_set = s->max_write_set;
}

/* Fold a descriptor's statistics into the exited total and free it for the
 * next thread (its retired blocks stay with it).  Under g_reg_mu. */
static void retire(hps_tm_desc_t *d)
{
    stats_add(&g_exited, &d->st);
    memset(&d->st, 0, sizeof d->st);
    /* A thread copied into a fork()ed child mid-cleanup leaves its state. */
    clear_logs(d);
    d->ro = d->ro_failed = d->irrev = d->want_irrev = d->aborted = d->aborts_in_row = 0;
    d->wv = 0;
    hps_store_relaxed(&d->in_sec, 0);
    hps_store_relaxed(&d->rv_pub, 0);
    d->fast.depth = 0;
    g_nlive--;
    /* Release: the next owner sees the state above. */
    hps_store_release(&d->owner, 0);
}

static void thread_exit(void *p)
{
    hps_tm_desc_t *d = p;
    if (d->fast.depth)
        fatal("hpsync: a thread exited inside a TM section\n");
    hps_tm_mem_reclaim(d);
    hps_tm_self_ = NULL;
    pthread_mutex_lock(&g_reg_mu);
    retire(d);
    pthread_mutex_unlock(&g_reg_mu);
}

/* fork(): the child must not wait for threads it does not have.  The parent
 * drains every section first (unless the forking thread is itself inside
 * one: then only an irrevocable section makes the child's memory whole). */
static void fork_prepare(void)
{
    hps_tm_desc_t *self = (hps_tm_desc_t *)hps_tm_self_;
    g_fork_drained = !(self && self->fast.depth);
    if (g_fork_drained)
        gate_close(self);
    pthread_mutex_lock(&g_reg_mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g_reg_mu);
    if (g_fork_drained)
        gate_open();
}

static void fork_child(void)
{
    hps_tm_desc_t *self = (hps_tm_desc_t *)hps_tm_self_;
    uint32_t n = hps_load_relaxed(&g_ndesc);
    for (uint32_t i = 0; i < n; i++)
        if (g_desc[i] != self && hps_load_relaxed(&g_desc[i]->owner))
            retire(g_desc[i]);
    pthread_mutex_unlock(&g_reg_mu);
    if (g_fork_drained) {
        gate_open();
        hps_adaptive_init(&g_gate);   /* no parked waiter survived the fork */
    }
}

/* ---- sections ------------------------------------------------------------- */

static void begin_irrevocable(hps_tm_desc_t *d)
{
    d->want_irrev = 0;
    gate_close(d);
    (void)hps_xchg_seq_cst(&d->in_sec, hps_load_relaxed(&hps_tm_epoch));
    d->ops = ops_now();
    d->irrev = 1;
    d->st.irrevocable++;
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
}

HPS_EXPORT void hps_tm_begin_(hps_tm_fast_t *f, int ro)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    f->depth = 1;
    d->ro = ro && !d->ro_failed;
    if (hps_unlikely(d->want_irrev || d->aborts_in_row >= g_retries)) {
        begin_irrevocable(d);
        return;
    }
    for (;;) {
        /* Sequentially consistent (xchg): the store of in_sec must be
         * ordered before the read of g_irrev (see gate_close), and before
         * this section's reads (epoch-based reclamation). */
        (void)hps_xchg_seq_cst(&d->in_sec, hps_load_relaxed(&hps_tm_epoch));
        if (hps_likely(hps_load_acquire(&g_irrev) == 0))
            break;
        hps_store_release(&d->in_sec, 0);
        uint32_t w = 0;
        while (hps_load_acquire(&g_irrev) != 0)
            hps_tm_wait(&w);
    }
    /* Read after passing the gate: a switch happens only with it closed. */
    const hps_tm_ops_t *ops = ops_now();
    d->ops = ops;
    f->read = ops->read;
    f->write = ops->write;
    ops->begin(d);
    hps_tm_rd_ = d->ops->instrument_reads ? f : NULL;   /* hw backends pick per section */
    hps_tm_wr_ = f;
}

HPS_EXPORT void hps_tm_commit_(hps_tm_fast_t *f)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)f;
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
    if (d->irrev == 1) {
        hps_tm_mem_commit(d);
        hps_store_release(&d->in_sec, 0);
        d->irrev = 0;
        d->st.commits++;
        gate_open();
    } else {
        int c = d->ops->commit(d);
        if (c != HPS_TM_COMMITTED)
            hps_tm_abort(d, c);
        /* sgl and hardware sections (plain reads) log two undo entries per
         * write and no reads; the others count their redo log (stm's ulog
         * holds locked orecs). */
        uint32_t reads = d->rlog.n;
        uint32_t writes = d->ops->read == NULL ? d->ulog.n / 2 : d->ws.n;
        d->st.commits++;
        d->st.commits_ro += writes == 0;
        d->st.reads += reads;
        d->st.writes += writes;
        if (reads > d->st.max_read_set)
            d->st.max_read_set = reads;
        if (writes > d->st.max_write_set)
            d->st.max_write_set = writes;
        hps_tm_mem_commit(d);
        /* Release: the section is over; drains and reclaimers may go on. */
        hps_store_release(&d->in_sec, 0);
        d->ops->end(d);
        clear_logs(d);
        d->irrev = 0;
    }
    d->st.retries += d->aborted;
    d->aborted = 0;
    d->aborts_in_row = 0;
    d->ro_failed = 0;
}

/* Randomized exponential backoff: up to 2^k x 16 pauses after the k-th
 * abort in a row, and a yield once aborts repeat, so that a preempted
 * conflicting thread can finish when threads outnumber cores. */
static void backoff(hps_tm_desc_t *d)
{
    uint32_t k = d->aborts_in_row < 10 ? d->aborts_in_row : 10;
    uint64_t x = d->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    d->rng = x;
    for (uint64_t i = x % (16ull << k); i > 0; i--)
        hps_cpu_relax();
    if (d->aborts_in_row >= 3)
        sched_yield();
}

void hps_tm_abort(hps_tm_desc_t *d, int cause)
{
    if (d->irrev)
        fatal("hpsync: hps_tm_restart() in an irrevocable section (its effects cannot be undone)\n");
    hps_tm_rd_ = NULL;
    hps_tm_wr_ = NULL;
    d->ops->rollback(d);
    hps_tm_mem_abort(d);
    hps_store_release(&d->in_sec, 0);
    d->ops->end(d);
    clear_logs(d);
    d->st.aborts++;
    d->st.aborts_by_cause[cause]++;
    d->aborted = 1;
    if (cause == HPS_TM_CAUSE_RO_WRITE)
        d->ro_failed = 1;
    if (cause == HPS_TM_CAUSE_CONFLICT || cause == HPS_TM_CAUSE_VALIDATION) {
        d->aborts_in_row++;
        backoff(d);
    } else if (cause == HPS_TM_CAUSE_EXPLICIT) {
        sched_yield();               /* an explicit retry waits for a change */
    }
    d->fast.depth = 0;
    __builtin_longjmp(d->fast.jb, 1);
}

HPS_EXPORT void hps_tm_restart(void)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || d->fast.depth == 0)
        fatal("hpsync: hps_tm_restart() outside a TM section\n");
    hps_tm_abort(d, HPS_TM_CAUSE_EXPLICIT);
}

HPS_EXPORT int hps_tm_in_section(void)
{
    return hps_tm_self_ && hps_tm_self_->depth != 0;
}

HPS_EXPORT void hps_tm_irrevocable(void)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (!d || d->fast.depth == 0)
        fatal("hpsync: hps_tm_irrevocable() outside a TM section\n");
    if (d->irrev)
        return;
    if (d->ops == &hps_tm_sgl_ops) {
        /* sgl sections already run alone; stop undo logging (irrev 2:
         * irrevocable without the gate). */
        d->irrev = 2;
        d->st.irrevocable++;
        hps_tm_wr_ = NULL;
        return;
    }
    d->want_irrev = 1;
    hps_tm_abort(d, HPS_TM_CAUSE_IRREVOCABLE);
}

/* ---- statistics ------------------------------------------------------------ */

HPS_EXPORT void hps_tm_stats_get(hps_tm_stats_t *out)
{
    hps_tm_desc_t *d = (hps_tm_desc_t *)hps_tm_self_;
    if (d)
        *out = d->st;
    else
        memset(out, 0, sizeof *out);
}

/* Live threads' counters are read while they run: the total is a snapshot
 * that is exact once those threads are quiet. */
HPS_EXPORT void hps_tm_stats_total(hps_tm_stats_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g_reg_mu);
    stats_add(out, &g_exited);
    uint32_t n = hps_load_relaxed(&g_ndesc);
    for (uint32_t i = 0; i < n; i++)
        if (hps_load_relaxed(&g_desc[i]->owner))
            stats_add(out, &g_desc[i]->st);
    pthread_mutex_unlock(&g_reg_mu);
}

static const char *const cause_names[HPS_TM_CAUSES] = {
    "conflict", "validation", "capacity", "explicit", "ro_write", "irrevocable",
    "htm_conflict", "htm_capacity", "htm_other",
};

HPS_EXPORT const char *hps_tm_cause_name(int cause)
{
    return cause >= 0 && cause < HPS_TM_CAUSES ? cause_names[cause] : "unknown";
}

static void stats_at_exit(void)
{
    hps_tm_stats_t s;
    hps_tm_stats_total(&s);
    fprintf(stderr, "hpsync tm: backend %s (%s), threads %u\n", ops_now()->name, g_why,
            hps_tm_desc_count());
    fprintf(stderr, "hpsync tm: commits %llu (read-only %llu), aborts %llu, retried sections %llu, "
            "irrevocable %llu\n", (unsigned long long)s.commits, (unsigned long long)s.commits_ro,
            (unsigned long long)s.aborts, (unsigned long long)s.retries,
            (unsigned long long)s.irrevocable);
    fprintf(stderr, "hpsync tm: aborts by cause:");
    for (int c = 0; c < HPS_TM_CAUSES; c++)
        fprintf(stderr, " %s %llu", cause_names[c], (unsigned long long)s.aborts_by_cause[c]);
    fprintf(stderr, "\nhpsync tm: words read %llu, written %llu; largest read set %llu, write set %llu\n",
            (unsigned long long)s.reads, (unsigned long long)s.writes,
            (unsigned long long)s.max_read_set, (unsigned long long)s.max_write_set);
}
