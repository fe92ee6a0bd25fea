/* SPDX-License-Identifier: MIT */
/*
 * ofi_progress.c - waiting, completion and progress for the libfabric
 * transport.
 *
 * Waiting follows the library's one policy (../wait.h): it never holds a
 * CPU another PE needs (4 PEs on 2 cores is a normal test), and traffic
 * on this endpoint restarts its clock.
 *
 * Data progress is manual on every provider (ofi_setup.c asks for it):
 * data moves only when someone calls in, so a PE that sits in computation
 * would stall every peer that targets it.  A progress thread calls in for
 * it, polling with a backoff that restarts whenever it sees work, and
 * keeping away while the application thread calls in itself.  A full
 * transmit queue drains the context before the retry (flow control), and
 * where incoming operations cannot be counted the poll stamp assumes some
 * now and then (hps_ofi_poll).
 *
 * Nothing here blocks inside the provider.  Blocking needs wait objects,
 * and on tcp;ofi_rxm their mere existence makes every completion signal a
 * file descriptor: measured, an 8-byte get went from 14 to 23 us and a
 * put + quiet from 24 to 36 us, to let the progress thread sleep until
 * traffic instead of polling every millisecond.  shm's counter wait spins
 * and ignores its timeout; sockets' returns at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rdma/fi_errno.h>

#include "ofi_internal.h"
#include "../../prim/clock.h"
#include "../wait.h"

/* The progress thread's polling interval: short while there is traffic,
 * doubling to the longest while there is none. */
#define HPS_OFI_THREAD_POLL_MIN_NS 20000
#define HPS_OFI_THREAD_POLL_MAX_NS 1000000
/* How long the thread stays away once it saw the application call in. */
#define HPS_OFI_THREAD_NAP_NS      1000000

static uint64_t traffic(void);

/* What moves on s's endpoint (reading its counters also drives its
 * progress); for the default context also what arrives. */
static uint64_t ctx_traffic(hps_ofi_cstate_t *s)
{
    if (s == &hps_ofi.dflt)
        return traffic();
    return fi_cntr_read(s->put_cntr) + fi_cntr_read(s->get_cntr);
}

/* Called after each unsuccessful poll on s, with what the poll saw of
 * traffic (a stamp that only grows).  It also serves the operations into
 * this PE: a peer may wait for one before it answers ours.  The shared
 * count of the
 * application's calls tells the progress thread to keep away; a context
 * one thread uses writes only its own lines.  A wait on a context of its
 * own also drives the endpoint every peer targets: the operation waited
 * for may be one into this very PE, or a peer may be waiting in turn for
 * one of its operations into this PE (two PEs each in a context's quiet,
 * each waiting for the other's main endpoint, would otherwise wait for
 * their progress threads, which keep away while the application calls
 * in). */
static void pause_once(hps_ofi_cstate_t *s, hps_shmem_waiter_t *w, uint64_t seen)
{
    if (!s->single)
        hps_faa_relaxed(&hps_ofi.progress_calls, 1);
    if (s != &hps_ofi.dflt)
        traffic();
    else if (hps_ofi.progress_rx)
        fi_cntr_read(hps_ofi.remote_cntr);
    /* Never told to park: the transport's waiters have no doorbell (only
     * the fabric can end them, and it rings none). */
    (void)hps_shmem_waiter_step(w, 1, seen);
}

int hps_ofi_progress(void)
{
    hps_faa_relaxed(&hps_ofi.progress_calls, 1);
    /* Reading a counter is how manual-progress providers are driven. */
    fi_cntr_read(hps_ofi.dflt.put_cntr);
    if (hps_ofi.progress_rx)
        fi_cntr_read(hps_ofi.remote_cntr);
    return 0;
}

/*
 * Where the provider cannot count the operations that target this PE
 * (tcp;ofi_rxm has no FI_RMA_EVENT), a waiting PE sees no traffic while
 * peers write to it as fast as it serves them, and the waiting policy
 * (../wait.h) would have it nap between polls once HPSYNC_SHMEM_POLL_MS
 * passed: from then on every operation into it waited for its next poll.
 * Measured, a loop of 96 000 blocking 1 KiB puts into a PE waiting in a
 * barrier: 16 000 puts/s with the naps, 60 000 without.  Not knowing, the
 * stamp assumes traffic every 100 ms: such a waiter keeps polling and
 * yielding its CPU (to any other runnable thread), and never naps.
 */
#define HPS_OFI_BLIND_TRAFFIC_NS 100000000ull

uint64_t hps_ofi_poll(void)
{
    hps_faa_relaxed(&hps_ofi.progress_calls, 1);
    uint64_t t = traffic();
    if (!hps_ofi.remote_cntr)
        t += hps_mono_ns() / HPS_OFI_BLIND_TRAFFIC_NS;
    return t;
}

#define HPS_OFI_DRAIN 32
static void drain(hps_ofi_cstate_t *s, hps_shmem_waiter_t *b)
{
    uint64_t issued = hps_load_relaxed(&s->c->put_issued) + hps_load_relaxed(&s->c->get_issued);
    for (;;) {
        uint64_t done = fi_cntr_read(s->put_cntr) + fi_cntr_readerr(s->put_cntr) +
                        fi_cntr_read(s->get_cntr) + fi_cntr_readerr(s->get_cntr);
        if (done + HPS_OFI_DRAIN >= issued)
            return;
        pause_once(s, b, done);
    }
}

int hps_ofi_issue(const char *call, const char *what, hps_ofi_cstate_t *s, hps_ofi_issue_fn op,
                  void *arg)
{
    hps_shmem_waiter_t b = { 0 };
    for (;;) {
        ssize_t rc = op(s, arg);
        if (hps_likely(rc == 0))
            return 0;
        if (rc != -FI_EAGAIN)
            return hps_ofi_fail_rc(call, what, rc);
        /* The transmit queue is full, or the provider is still connecting:
         * both clear with progress, which the counter reads drive. */
        drain(s, &b);
        pause_once(s, &b, ctx_traffic(s));
    }
}

/* An operation completed in error: say which and why, from the error
 * entry the provider queued. */
static int report_error(const char *call, hps_ofi_cstate_t *s)
{
    struct fi_cq_err_entry e = { 0 };
    if (fi_cq_readerr(s->cq, &e, 0) == 1) {
        const char *why = fi_cq_strerror(s->cq, e.prov_errno, e.err_data, NULL, 0);
        return hps_ofi_fail(call, "a remote operation failed: %s (%s)", fi_strerror(e.err),
                            why ? why : "no detail");
    }
    return hps_ofi_fail(call, "a remote operation failed (no error entry from the provider)");
}

static int wait_cntr(const char *call, hps_ofi_cstate_t *s, struct fid_cntr *c, hps_au64 *err_seen,
                     hps_au64 *issued)
{
    uint64_t target = hps_load_relaxed(issued);
    hps_shmem_waiter_t b = { 0 };
    int failed = 0;
    for (;;) {
        uint64_t ok = fi_cntr_read(c), err = fi_cntr_readerr(c);
        /* The exchange makes one waiting thread, not each, report a new
         * error (its ordering is not needed, only its atomicity). */
        if (hps_unlikely(err != hps_load_relaxed(err_seen)) && hps_xchg_acq_rel(err_seen, err) != err)
            failed = report_error(call, s);
        /* Failed operations count as finished too, so no wait hangs on
         * them; the caller hears of them once. */
        if (ok + err >= target)
            return failed;
        /* The counter just read is the traffic that matters here: no
         * further reads (each one a progress call on tcp;ofi_rxm). */
        pause_once(s, &b, ok + err);
    }
}

int hps_ofi_wait_puts(const char *call, hps_ofi_cstate_t *s)
{
    return wait_cntr(call, s, s->put_cntr, &s->put_err, &s->c->put_issued);
}

int hps_ofi_wait_gets(const char *call, hps_ofi_cstate_t *s)
{
    return wait_cntr(call, s, s->get_cntr, &s->get_err, &s->c->get_issued);
}

/* ---- quiet and fence ------------------------------------------------------- */

typedef struct flush_arg {
    int pe, atomic;
} flush_arg_t;

static ssize_t flush_op(hps_ofi_cstate_t *s, void *p)
{
    const flush_arg_t *a = p;
    const hps_ofi_target_t *t = &hps_ofi.row[hps_ofi.flush_region][a->pe];
    uint64_t *land = &s->scratch->flush[a->atomic];
    uint64_t raddr = t->base + hps_ofi.flush_off;
    if (a->atomic)
        return fi_fetch_atomic(s->ep, land, 1, s->scratch_desc, land, s->scratch_desc, t->addr,
                               raddr, t->key, FI_UINT64, FI_ATOMIC_READ, NULL);
    return fi_read(s->ep, land, sizeof *land, s->scratch_desc, t->addr, raddr, t->key, NULL);
}

/*
 * Injected writes and non-fetching atomics may be counted when sent, not
 * when processed, whatever FI_DELIVERY_COMPLETE says: shm counts an inject
 * once it sits in the target's command queue, tcp;ofi_rxm once it is on
 * the socket (hps-bench-ofi-raw: inject + counter 0.35 us on shm, a read
 * round trip 0.7 us).  Without more, the target may not have the data when
 * quiet returns: the rma case of tests/c/shmem/ofi, which looks at the
 * target's memory after an out-of-band barrier, then fails on both.  A
 * read from the same peer issued after them on the same endpoint is
 * processed after them (FI_ORDER_RMA_RAW / FI_ORDER_ATOMIC_RAW, asked for
 * at init) and completes only with its data back, so one small read per
 * written peer turns "sent" into "processed".
 */
static int flush(const char *call, hps_ofi_cstate_t *s)
{
    if (hps_ofi.flush_region < 0)
        return 0;
    hps_ofi_ctx_t *c = s->c;
    for (int pe = 0; pe < hps_ofi.npes; pe++) {
        hps_ofi_dirty_t d = c->dirty[pe];
        if (!(d.rma | d.amo))
            continue;
        c->dirty[pe] = (hps_ofi_dirty_t){ 0, 0 };
        for (int k = 0; k < 2; k++) {
            if (!(k ? d.amo : d.rma))
                continue;
            flush_arg_t a = { pe, k && hps_ofi.flush_atomic };
            if (hps_ofi_issue(call, "flush read", s, flush_op, &a))
                return -1;
            hps_add_owned(&c->get_issued, 1);
        }
    }
    return 0;
}

int hps_ofi_quiet_locked(const char *call, hps_ofi_cstate_t *s)
{
    hps_ofi_ctx_t *c = s->c;
    /* The flush reads go out at once, behind the writes, rather than after
     * their counter: one round trip, not two. */
    uint64_t puts = hps_load_relaxed(&c->put_issued);
    if (flush(call, s))
        return -1;
    uint64_t gets = hps_load_relaxed(&c->get_issued);
    if (hps_ofi_wait_puts(call, s) || hps_ofi_wait_gets(call, s))
        return -1;
    hps_store_relaxed(&c->done, puts + gets);
    hps_ofi_amo_release(s, gets);
    return 0;
}

int hps_ofi_quiet(hps_ofi_ctx_t *c)
{
    return HPS_OFI_LOCKED(c, hps_ofi_quiet_locked("hps_ofi_quiet", s_));
}

/*
 * Fence: where the provider places writes to a target in the order they
 * were issued for any size (FI_ORDER_WAW with max_order_waw_size covering
 * max_msg_size: sockets, shm), ordering is already there.  Elsewhere
 * (tcp;ofi_rxm reports max_order_waw_size 0) a fence is a quiet.  The
 * FI_FENCE flag on the next operation was the other choice; of the three
 * providers only sockets offers it, and sockets needs no fence at all.
 */
int hps_ofi_fence(hps_ofi_ctx_t *c)
{
    if (hps_ofi.fence_is_free)
        return 0;
    return hps_ofi_quiet_fast(c);
}

/* ---- the progress thread ------------------------------------------------- */

/* Calls the application thread made into the transport: while these
 * move, it drives progress itself and the thread keeps out of its way.
 * Two threads progressing one endpoint mostly contend for its lock:
 * measured, an 8-byte put + quiet takes 43 us on tcp;ofi_rxm and 5 us on
 * shm when the thread keeps polling, 24 us and 1 us when it naps. */
static uint64_t app_activity(void)
{
    const hps_ofi_ctx_t *c = hps_ofi.dflt.c;
    return hps_load_relaxed(&c->put_issued) + hps_load_relaxed(&c->get_issued) +
           hps_load_relaxed(&hps_ofi.progress_calls);
}

/* Work arriving or completing: local completions and, where the provider
 * counts them, operations that target this PE. */
static uint64_t traffic(void)
{
    uint64_t t = fi_cntr_read(hps_ofi.dflt.put_cntr) + fi_cntr_read(hps_ofi.dflt.get_cntr);
    if (hps_ofi.remote_cntr)
        t += fi_cntr_read(hps_ofi.remote_cntr);
    return t;
}

/* The contexts' own endpoints, at most once a millisecond: a put_nbi on
 * one whose thread then waits elsewhere (for the signal of a
 * put_signal_nbi, say) must still go out, and a provider with manual
 * progress sends a large one only when its endpoint is driven.  Reading
 * their counters touches the provider's state, none of the contexts'
 * lines. */
static void progress_contexts(void)
{
    pthread_mutex_lock(&hps_ofi.ctx_lock);
    for (hps_ofi_cstate_t *s = hps_ofi.dflt.next; s; s = s->next) {
        fi_cntr_read(s->put_cntr);
        fi_cntr_read(s->get_cntr);
    }
    pthread_mutex_unlock(&hps_ofi.ctx_lock);
}

static void *progress_main(void *unused)
{
    /* Short naps should be short: the default 50 us of timer slack would
     * double the polling interval (this thread only). */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    uint64_t interval = HPS_OFI_THREAD_POLL_MIN_NS, app = app_activity(), seen = 0, ctx_at = 0;
    while (!hps_load_relaxed(&hps_ofi.progress_stop)) {
        uint64_t clock = hps_mono_ns();
        if (clock - ctx_at >= HPS_OFI_THREAD_NAP_NS) {
            progress_contexts();
            ctx_at = clock;
        }
        uint64_t now = app_activity();
        if (now != app) {
            app = now;
            hps_sleep_ns(HPS_OFI_THREAD_NAP_NS);
            continue;
        }
        uint64_t t = traffic();            /* reading a counter is the poll */
        if (t != seen) {
            seen = t;
            interval = HPS_OFI_THREAD_POLL_MIN_NS;
        } else if ((interval *= 2) > HPS_OFI_THREAD_POLL_MAX_NS) {
            interval = HPS_OFI_THREAD_POLL_MAX_NS;
        }
        hps_sleep_ns(interval);
    }
    return NULL;
}

int hps_ofi_progress_start(void)
{
    if (hps_ofi.info->domain_attr->data_progress != FI_PROGRESS_MANUAL)
        return 0;
    hps_store_relaxed(&hps_ofi.progress_stop, 0);
    int rc = pthread_create(&hps_ofi.progress_thread, NULL, progress_main, NULL);
    if (rc)
        return hps_ofi_fail("hps_ofi_init", "cannot start the progress thread: %s", strerror(rc));
    hps_ofi.progress_running = 1;
    return 0;
}

void hps_ofi_progress_stop(void)
{
    if (!hps_ofi.progress_running)
        return;
    hps_store_relaxed(&hps_ofi.progress_stop, 1);
    pthread_join(hps_ofi.progress_thread, NULL);
    hps_ofi.progress_running = 0;
}
