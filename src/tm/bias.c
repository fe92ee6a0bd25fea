// SPDX-License-Identifier: MIT
/*
 * The bias: one thread runs its sections on the solo path while it is the
 * only thread running sections.
 *
 * Why: a section's fixed cost is dominated by serializing instructions,
 * the exchange that publishes in_sec (the irrevocability gate and epoch
 * reclamation read it) and the backend's own (norec's sequence CAS, sgl's
 * lock), about 7 ns each here, against 2-15 ns for the operations of a
 * typical small section.  A thread that runs sections alone needs neither:
 * like biased locking, the owner of the bias publishes in_sec with a plain
 * store and runs the section as solo does (plain reads, in-place writes with
 * an undo log for restarts), and the rare other party pays instead.
 *
 * The protocol is Dekker's with an asymmetric fence.  The owner stores
 * in_sec, then (compiler barrier only) loads hps_tm_g_.irrev, then hps_tm_g_.bias.
 * Everyone who must see the owner outside a section (the gate: a revoker,
 * an irrevocable section, a backend switch, fork; the reclaimer) first
 * raises hps_tm_g_.irrev, then runs membarrier(PRIVATE_EXPEDITED), which executes a
 * full barrier on every CPU running one of our threads, then reads in_sec.
 * Either the owner's load saw hps_tm_g_.irrev raised, or the drain sees its in_sec.
 *
 * Another thread that reaches a section finds the bias held, steps out,
 * and revokes it through the gate (membarrier, then waiting for the owner's
 * section to end).  The bias is taken back at a thread's tick (every 64
 * sections) once no other thread ticked for `bias_wait` of its ticks.  A revocation costs the revoker a membarrier and a wait, some
 * microseconds; a biased section saves the owner two atomic operations,
 * about 15 ns.  So a bias that ran fewer than BIAS_PAYS sections before it
 * was revoked (on norec and stm: and its ticks' worth of work, bias_paid)
 * did not pay: the wait doubles (up to 2^12 ticks), and two
 * threads that take turns settle on the normal path; one that paid resets
 * the wait.  Two more guards keep a preempted owner from stalling everyone:
 * a revoker waits for the owner's section, and an owner descheduled inside
 * one (threads outnumbering CPUs, or other processes on them) makes that a
 * time slice, milliseconds, during which every other thread's sections
 * wait (tree-1k at 8 threads on 2 CPUs ran at half speed).  So while
 * more threads use TM than the process has CPUs the bias is taken only if
 * a trial on the running program says it pays (bias_trial.c), and never on
 * sgl; and a revocation that waited over 100 us closes the bias for 10 ms,
 * doubling with each such stall in a row (up to 1.3 s).
 *
 * Off with HPSYNC_TM_BIAS=0, where membarrier is missing, and for the
 * hardware backends (their sections are already cheap where RTM exists,
 * and the tests inject their aborts).
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"
#include "bias_trial.h"
#include "../common/env.h"
#include "../common/envparse.h"
#include "../prim/clock.h"

/* The bias: hps_tm_g_.bias (core.c defines the line), an hps_tm_desc_t *. */

/* The thread whose tick came last.  Ticks (every 64 sections), not every
 * section, write it: two threads taking turns would otherwise bounce its
 * line at each section.  A hint for the policy only. */
static struct {
    hps_au32 last_tid;
} __attribute__((aligned(HPS_LINEPAIR))) g_seen;

static int g_on;
static hps_au64 g_taken, g_revoked;
/* Threads that revoked the bias and have not yet entered their section.
 * Nobody takes the bias while one waits: a revoker preempted between the
 * gate's opening and its section (likely on a loaded machine) would
 * otherwise find it taken again, revoke again, and so on (a 46 s stall of
 * tm.bias.stm under AddressSanitizer at a load average of 30). */
static hps_au32 g_pending;
static uint32_t g_cpus;                     /* the process's CPUs, at setup */
static hps_au64 g_quiet_until;              /* CLOCK_MONOTONIC ns: no bias before */
static hps_au32 g_stalls;                   /* revocations in a row that waited long */

/* With more threads using TM than CPUs, the trial (bias_trial.c) says
 * whether the bias may be taken.  `busy` lets one thread at a time step
 * it, at its tick; `open` is its verdict for everyone's ticks; `on`: a
 * trial is running (cleared when the threads fit the CPUs again or the
 * backend changes, hps_tm_bias_trial_reset, so that a new one starts). */
static struct {
    hps_au32 open;
    hps_au32 say;                   /* auto's verdict in force (HPS_TM_BIAS_SAY_*): no trial then */
    /* Bumped whenever the bias opens while threads outnumber CPUs (the
     * trial's open epoch, auto's open verdict): each thread then starts its
     * wait afresh.  Its wait may have doubled up to 4096 ticks while the
     * threads fitted the CPUs or the bias was closed, and an open epoch or
     * a scout of a few ms would never see the bias taken. */
    hps_au32 gen;
    hps_tm_trial_run_t run;
} __attribute__((aligned(HPS_LINEPAIR))) g_over;

#define BIAS_STALL_NS 100000ull             /* a revocation that waited a slice */
#define BIAS_QUIET_NS 10000000ull           /* 10 ms, doubled per stall in a row */

#define BIAS_WAIT_MIN 2u                    /* ticks of 64 sections */
#define BIAS_WAIT_MAX 4096u
#define BIAS_PAYS 4096u                     /* sections a bias must run */

/* The ticks alone a thread waits before taking the bias (0 in a new
 * descriptor: the minimum). */
static uint32_t wait_of(const hps_tm_desc_t *d)
{
    return d->bias_wait ? d->bias_wait : BIAS_WAIT_MIN;
}

static long membarrier_cmd(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Registering for membarrier(PRIVATE_EXPEDITED) costs an RCU grace period
 * once the process has a second thread (10-14 ms on the development KVM
 * guest, and every other thread's first section waited for it in tm_init:
 * two threads' first iterations came 6-10 ms after their start, and one
 * thread then ran its whole share on the bias before the other began), but
 * about 3 us while it has one, which is nearly always the case when the
 * library is loaded.  So it registers then, and hps_tm_bias_setup's
 * registration finds it done (the kernel returns at once).  A library
 * dlopen()ed by a threaded program pays the grace period here instead.
 * HPSYNC_TM_BIAS off skips it (parsed quietly here: the settings module
 * reports a bad value at the first section, not at load). */
__attribute__((constructor)) static void membarrier_early(void)
{
    const char *v = secure_getenv("HPSYNC_TM_BIAS");
    uint32_t on = 1;
    if (v && hps_env_parse_bool(v, &on) == 0 && !on)
        return;
    (void)membarrier_cmd(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
}

void hps_tm_bias_setup(int on)
{
    /* Registration is per process (and again in a fork()ed child). */
    g_on = on && membarrier_cmd(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    hps_store_relaxed(&hps_tm_g_.bias, NULL);
    hps_store_relaxed(&g_pending, 0);
    hps_store_relaxed(&g_quiet_until, 0);
    hps_store_relaxed(&g_stalls, 0);
    hps_store_relaxed(&g_over.run.busy, 0);
    hps_store_relaxed(&g_over.open, 0);
    hps_store_relaxed(&g_over.run.on, 0);
    hps_store_relaxed(&g_over.say, HPS_TM_BIAS_SAY_NONE);
    cpu_set_t set;
    g_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? (uint32_t)CPU_COUNT(&set) : 1;
}

int hps_tm_crowded(void)
{
    return hps_tm_active_hint() > g_cpus;
}

int hps_tm_bias_enabled(void)
{
    return g_on;
}

void hps_tm_bias_fence(const hps_tm_desc_t *self)
{
    void *b = hps_load_relaxed(&hps_tm_g_.bias);
    if (b == NULL || b == self)
        return;
    if (membarrier_cmd(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        /* Registered at setup, so this cannot fail; if the kernel ever
         * refused, no fence would make the drain's reading right. */
        static const char msg[] = "hpsync: membarrier failed; TM bias cannot be revoked safely\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
}

/* The bias opens while threads outnumber CPUs: every thread's wait
 * starts afresh (g_over.gen). */
static void over_gen_bump(void)
{
    hps_store_relaxed(&g_over.gen, hps_load_relaxed(&g_over.gen) + 1);
}

static void over_publish(int open)
{
    if (open && !hps_load_relaxed(&g_over.open))
        over_gen_bump();
    hps_store_relaxed(&g_over.open, (uint32_t)open);
}

/* Under the gate (every owner outside its sections): take back a bias held
 * by a thread other than `keep`, counting the revocation; 1 if there was one. */
static int clear_bias(const hps_tm_desc_t *keep)
{
    hps_tm_desc_t *o = hps_load_relaxed(&hps_tm_g_.bias);
    if (o == NULL || o == keep)
        return 0;
    hps_store_relaxed(&hps_tm_g_.bias, NULL);
    hps_store_relaxed(&g_revoked, hps_load_relaxed(&g_revoked) + 1);
    return 1;
}

/* At every 8th tick of a thread (512 sections) while more threads use TM
 * than there are CPUs: a clock read, and once per epoch one thread adds up
 * the work (commits and dynamic loops' iterations, hps_tm_work_total). */
static void over_tick(void)
{
    hps_tm_trial_run_tick(&g_over.run, hps_mono_ns(), hps_tm_work_total, over_publish);
}

/* No trial in force: the threads fit the CPUs again, or the backend
 * changed (a trial's epochs must all run one backend; auto's switches
 * would otherwise pass for the bias's effect).  The next tick with more
 * threads than CPUs starts a new one.  Plain stores: a thread stepping the
 * trial at this moment may publish its verdict once more, for the one
 * tick until that restart. */
void hps_tm_bias_trial_reset(void)
{
    if (!hps_load_relaxed(&g_over.run.on) && !hps_load_relaxed(&g_over.open))
        return;
    hps_store_relaxed(&g_over.run.on, 0);
    hps_store_relaxed(&g_over.open, 0);
}

/* auto (auto.c) measures the bias itself while threads outnumber CPUs:
 * with the backend, as one more candidate of its trial, so that it never
 * compares sgl with a norec or stm whose bias trial had not yet ended (it
 * held sgl at 8 threads on bank, 0.93x norec with the bias kept open).
 * Its verdict replaces the trial's; a close takes back a bias held now. */
void hps_tm_bias_auto_say(const hps_tm_desc_t *self, uint32_t say)
{
    if (hps_load_relaxed(&g_over.say) == say)
        return;
    hps_store_relaxed(&g_over.say, say);
    if (say == HPS_TM_BIAS_SAY_OPEN)
        over_gen_bump();
    if (say != HPS_TM_BIAS_SAY_CLOSED || !g_on || hps_load_relaxed(&hps_tm_g_.bias) == NULL)
        return;
    /* Under the gate the owner is outside its sections (its fence and
     * drain), so dropping its bias is a revocation it notices at its tick. */
    hps_tm_gate_close(self);
    (void)clear_bias(NULL);
    hps_tm_gate_open();
}

/* Whether the bias this thread held until its revocation paid.  A solo
 * section saves sgl its lock's atomic and every backend the in_sec
 * exchange, about 15 ns, so BIAS_PAYS sections pay for a revocation.  On
 * norec and stm it also saves every access's instrumentation, so there
 * the work done counts, in ticks: every HPS_TM_TICK sections, and in a
 * coarsened loop every HPS_TM_TICK iterations (coarsen.c).  Counting
 * sections alone, a bias running sections of 1024 iterations had to last
 * 4 M iterations to pay: at 2 threads on histogram's 16 and 1 Ki bins
 * (8 M keys) it never did, the wait doubled at every revocation, and a
 * run's speed depended on whether the threads happened to take turns
 * before it grew (k = 1024 under norec, 16 bins: 1.20x the throughput
 * counting ticks; the dynamic granularity at 1 Ki bins 1.7x, 10
 * processes each). */
static int bias_paid(const hps_tm_desc_t *d, int sw)
{
    return d->st.solo - d->bias_solo0 >= BIAS_PAYS ||
           (sw && d->ticks - d->bias_ticks0 >= BIAS_PAYS / HPS_TM_TICK);
}

void hps_tm_bias_tick(hps_tm_desc_t *d)
{
    if (!g_on)
        return;
    const hps_tm_ops_t *ops = hps_tm_ops_now();
    int sw = ops == &hps_tm_norec_ops || ops == &hps_tm_stm_ops;
    int over = hps_tm_crowded();
    uint32_t say = hps_load_relaxed(&g_over.say);
    if (over && sw && say == HPS_TM_BIAS_SAY_NONE && (d->ticks & 7) == 0)
        over_tick();
    else if (!over)
        hps_tm_bias_trial_reset();
    uint32_t gen = hps_load_relaxed(&g_over.gen);
    if (hps_unlikely(d->bias_gen != gen)) {
        d->bias_gen = gen;
        d->bias_wait = 0;            /* the minimum (wait_of) */
        d->alone_ticks = 0;
    }
    void *now = hps_load_relaxed(&hps_tm_g_.bias);
    if (now == d)
        return;
    if (d->bias_held) {               /* revoked since the last tick */
        d->bias_held = 0;
        uint32_t w = wait_of(d);
        if (!bias_paid(d, sw))
            d->bias_wait = w * 2 < BIAS_WAIT_MAX ? w * 2 : BIAS_WAIT_MAX;
        else
            d->bias_wait = BIAS_WAIT_MIN;
    }
    if (hps_load_relaxed(&g_seen.last_tid) != d->tid) {
        /* Another thread ticked since this one's last tick: not alone. */
        hps_store_relaxed(&g_seen.last_tid, d->tid);
        d->alone_ticks = 0;
        return;
    }
    if (now != NULL || hps_load_relaxed(&g_pending) != 0)
        return;
    if (++d->alone_ticks < wait_of(d))
        return;
    d->alone_ticks = 0;
    if (ops == &hps_tm_htm_ops || ops == &hps_tm_hybrid_ops)
        return;
    /* More threads than CPUs: only on the trial's word, and never on sgl,
     * whose sections are a lock's already (the bias cost it 25-50 % at 8
     * threads on 2 CPUs). */
    if (over && (!sw || !(say != HPS_TM_BIAS_SAY_NONE ? say == HPS_TM_BIAS_SAY_OPEN
                                                        : hps_load_relaxed(&g_over.open))))
        return;
    if (hps_mono_ns() < hps_load_relaxed(&g_quiet_until))
        return;
    /* Under the gate: every other thread is outside a section, and any
     * that enters after the gate opens reads the bias (gate_open releases). */
    hps_tm_gate_close(d);
    if (hps_load_relaxed(&hps_tm_g_.bias) == NULL && hps_load_relaxed(&g_pending) == 0) {
        hps_store_relaxed(&hps_tm_g_.bias, (void *)d);
        hps_store_relaxed(&g_taken, hps_load_relaxed(&g_taken) + 1);
        d->bias_held = 1;
        d->bias_solo0 = d->st.solo;
        d->bias_ticks0 = d->ticks;
    }
    hps_tm_gate_open();
}

void hps_tm_bias_revoke(hps_tm_desc_t *self)
{
    if (!self->bias_pending) {
        self->bias_pending = 1;
        (void)hps_faa_seq_cst(&g_pending, 1);
    }
    /* The gate's fence and drain wait for the owner's section to end. */
    uint64_t t0 = hps_mono_ns();
    hps_tm_gate_close(self);
    if (clear_bias(self)) {
        uint64_t t1 = hps_mono_ns();
        if (t1 - t0 > BIAS_STALL_NS) {
            uint32_t k = hps_load_relaxed(&g_stalls);
            hps_store_relaxed(&g_quiet_until, t1 + (BIAS_QUIET_NS << (k < 7 ? k : 7)));
            hps_store_relaxed(&g_stalls, k + 1);
        } else {
            hps_store_relaxed(&g_stalls, 0);
        }
    }
    hps_tm_gate_open();
}

void hps_tm_bias_settled(hps_tm_desc_t *d)
{
    d->bias_pending = 0;
    (void)hps_fas_seq_cst(&g_pending, 1);
}

void hps_tm_bias_drop(hps_tm_desc_t *d)
{
    /* The thread is outside any section: nothing to wait for.  Release:
     * its last biased section's plain writes happen before the sections of
     * whoever then reads the bias free (section.c reads it with acquire);
     * this drop passes no gate, so nothing else orders them. */
    if (hps_load_relaxed(&hps_tm_g_.bias) == d)
        hps_store_release(&hps_tm_g_.bias, NULL);
    d->bias_wait = 0;
    d->bias_held = 0;
    d->alone_ticks = 0;
}

void hps_tm_bias_summary(FILE *f, uint64_t solo)
{
    if (!g_on)
        fprintf(f, "hpsync tm: bias off (%s)\n", hps_settings()->tm_bias ? "no membarrier" : "HPSYNC_TM_BIAS=0");
    else
        fprintf(f, "hpsync tm: sections run alone on the bias %llu; bias taken %llu, revoked %llu times\n",
                (unsigned long long)solo, (unsigned long long)hps_load_relaxed(&g_taken),
                (unsigned long long)hps_load_relaxed(&g_revoked));
    if (g_on && g_over.run.t.trials)
        fprintf(f, "hpsync tm: with more threads than CPUs the bias was tried %llu times, kept %llu\n",
                (unsigned long long)g_over.run.t.trials, (unsigned long long)g_over.run.t.kept);
}
