// SPDX-License-Identifier: MIT
/*
 * hps-workload-pipeline: a producer-consumer pipeline, after the TSX-for-HPC
 * study's user-level TCP/IP stack, whose threads hand packets to each other
 * through bounded queues and wait on condition variables when a queue is
 * full or empty.  Three stages (source, transform, sink) joined by two
 * bounded FIFO queues; every item gets a little work (a few dozen rounds of
 * an integer mix) in the transform stage, so the run is mostly hand-offs.
 *
 * Threads (--threads T) are dealt to the stages round-robin: thread t runs
 * stage t % S, S = 3 stages from 3 threads up (8 threads: 3 sources, 3
 * transforms, 2 sinks), S = 2 at 2 threads (a source, and a sink that also
 * transforms: one queue).  One thread runs the stages in turn, one item at
 * a time through both queues (which therefore never fill nor empty under
 * it: no wait, no deadlock), the sequential cost of the hand-offs.
 *
 * Variants (how a thread waits for "queue not full" / "not empty"):
 *   mutex     a mutex and two pthread condition variables per queue (the
 *             baseline);
 *   tx-cond   TM sections waiting on hpsync/tm_cond.h's transaction-aware
 *             condition variables (HPSYNC_TM_COND: futex, or spin);
 *   tx-abort  TM sections that restart (hps_tm_restart, which yields) until
 *             the condition holds;
 *   spin      TM sections that, when the condition fails, commit and poll the
 *             queue's index outside any section (pause; sched_yield every
 *             256 polls, as HPSYNC_TM_COND=spin does), then try again.
 * The three TM ones run on HPSYNC_TM's backend (the runner lists them per
 * backend, "norec:tx-cond").
 *
 * Validation after every run: each item (a global index 0..N-1, the source
 * thread's own range in increasing order) reaches a sink exactly once, the
 * sum of the sinks' values equals a sequential computation's, every queue is
 * empty and closed; and every queue delivered each pusher's items in the
 * order it pushed them (each item carries its last pusher and that pusher's
 * count; a popper sees a strictly increasing count per pusher).  From the
 * source queue that is the order per producer.  Options: harness.h.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "hpsync/tm_cond.h"

enum { V_MUTEX, V_TX_COND, V_TX_ABORT, V_SPIN };
static const char *const k_variants[] = { "mutex", "tx-cond", "tx-abort", "spin" };

/* a: queue capacity, b: rounds of work per item; n: items */
static const wl_row_t k_rows[] = {
    { "cap4", 4, 32, 100000, 1, NULL },
    { "cap256", 256, 32, 100000, 1, NULL },
};

#define MAX_STAGES 3
#define SPIN_YIELD 256               /* polls before a sched_yield (as tm_cond's spin mode) */

typedef struct item {
    uint64_t idx;                    /* global index: source k sends its range in order */
    uint64_t val;
    uint64_t hop;                    /* last pusher's thread << 40 | its count on this queue */
} item_t;

/* A bounded FIFO: head and tail count pops and pushes (slot = count % cap).
 * The TM variants read and write head, tail, closed and the slots through
 * the TM; the mutex variant under mu. */
typedef struct queue {
    uint64_t head __attribute__((aligned(64)));
    uint64_t tail __attribute__((aligned(64)));
    uint64_t closed;                 /* pushers that have finished */
    uint64_t pushers;
    long cap;
    item_t *slot;
    pthread_mutex_t mu;
    pthread_cond_t notfull, notempty;
    hps_tm_cond_t tnotfull, tnotempty;
} queue_t;

typedef struct pipe_ctx {
    long n, cap, work;
    int threads, stages, width[MAX_STAGES];
    queue_t q[MAX_STAGES - 1];
    uint8_t *seen;                   /* per item: times it reached a sink */
    uint64_t *sum;                   /* per thread: its sink's sum of values */
    uint64_t *pushed;                /* per thread: its pushes on its output queue */
    uint64_t *last;                  /* per thread x pusher: the last hop count seen */
    uint64_t ref;                    /* the sequential sum */
    int err;                         /* first wrong thing seen during a run */
    char why[160];
} pipe_ctx_t;

/* ---- the items' values ------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

static uint64_t source_val(uint64_t idx)
{
    return mix(idx + 0x632BE59BD9B4E019ull);
}

/* The transform stage's work: dependent rounds, so it costs what it says. */
static uint64_t transform(uint64_t v, long rounds)
{
    for (long r = 0; r < rounds; r++)
        v = mix(v + (uint64_t)r);
    return v;
}

static void flag(pipe_ctx_t *c, const char *fmt, unsigned long long a, unsigned long long b)
{
    int zero = 0;
    if (hps_plain_cas_acq_rel(&c->err, &zero, 1))
        snprintf(c->why, sizeof c->why, fmt, a, b);
}

/* ---- the queue under a mutex and pthread condition variables ----------------- */

static void mutex_push(queue_t *q, const item_t *it)
{
    pthread_mutex_lock(&q->mu);
    while (q->tail - q->head >= (uint64_t)q->cap)
        pthread_cond_wait(&q->notfull, &q->mu);
    q->slot[q->tail % (uint64_t)q->cap] = *it;
    q->tail++;
    pthread_cond_signal(&q->notempty);
    pthread_mutex_unlock(&q->mu);
}

static int mutex_pop(queue_t *q, item_t *out)
{
    int got = 0;
    pthread_mutex_lock(&q->mu);
    while (q->tail == q->head && q->closed < q->pushers)
        pthread_cond_wait(&q->notempty, &q->mu);
    if (q->tail != q->head) {
        *out = q->slot[q->head % (uint64_t)q->cap];
        q->head++;
        got = 1;
        pthread_cond_signal(&q->notfull);
    }
    pthread_mutex_unlock(&q->mu);
    return got;
}

static void mutex_close(queue_t *q)
{
    pthread_mutex_lock(&q->mu);
    if (++q->closed == q->pushers)
        pthread_cond_broadcast(&q->notempty);
    pthread_mutex_unlock(&q->mu);
}

/* ---- the queue in TM sections -------------------------------------------------
 *
 * The section bodies (tm_try_*) are shared; the waits differ.  The wait
 * must be in the function holding the section's BEGIN/END (tm_cond.h's
 * rule), so the three waits are written out in tm_push and tm_pop. */

/* In a section: push and return 1, or 0 (full) with the head seen. */
static int tm_try_push(queue_t *q, const item_t *it, int signal, uint64_t *seen)
{
    uint64_t t = HPS_TM_READ(&q->tail), h = HPS_TM_READ(&q->head);
    if (t - h >= (uint64_t)q->cap) {
        *seen = h;
        return 0;
    }
    item_t *s = &q->slot[t % (uint64_t)q->cap];
    HPS_TM_WRITE(&s->idx, it->idx);
    HPS_TM_WRITE(&s->val, it->val);
    HPS_TM_WRITE(&s->hop, it->hop);
    HPS_TM_WRITE(&q->tail, t + 1);
    if (signal)
        hps_tm_cond_signal(&q->tnotempty);
    return 1;
}

/* In a section: 1 (popped), 0 (empty and closed: the end), -1 (empty) with
 * the tail and the closed count seen. */
static int tm_try_pop(queue_t *q, item_t *out, int signal, uint64_t seen[2])
{
    uint64_t h = HPS_TM_READ(&q->head), t = HPS_TM_READ(&q->tail);
    if (t == h) {
        seen[0] = t;
        seen[1] = HPS_TM_READ(&q->closed);
        return seen[1] == q->pushers ? 0 : -1;
    }
    const item_t *s = &q->slot[h % (uint64_t)q->cap];
    out->idx = HPS_TM_READ(&s->idx);
    out->val = HPS_TM_READ(&s->val);
    out->hop = HPS_TM_READ(&s->hop);
    HPS_TM_WRITE(&q->head, h + 1);
    if (signal)
        hps_tm_cond_signal(&q->tnotfull);
    return 1;
}

/* spin: wait outside any section until *a moves from sa (or *b from sb: a
 * popper also waits for the queue's end).  A relaxed load is enough: it is
 * a hint, the section that follows reads the queue through the TM (whose
 * commits store whole words). */
static void spin_while(const uint64_t *a, uint64_t sa, const uint64_t *b, uint64_t sb)
{
    for (unsigned polls = 1; hps_plain_load_relaxed(a) == sa && hps_plain_load_relaxed(b) == sb;
         polls++) {
        hps_cpu_relax();
        if (polls % SPIN_YIELD == 0)
            sched_yield();
    }
}

static void tm_push(queue_t *q, const item_t *it, int v)
{
    for (;;) {
        int ok;
        uint64_t seen = 0;
        HPS_TM_BEGIN();
        while (!(ok = tm_try_push(q, it, v == V_TX_COND, &seen)) && v == V_TX_COND)
            hps_tm_cond_wait(&q->tnotfull);
        if (!ok && v == V_TX_ABORT)
            hps_tm_restart();
        HPS_TM_END();
        if (ok)
            return;
        spin_while(&q->head, seen, &q->head, seen);
    }
}

static int tm_pop(queue_t *q, item_t *out, int v)
{
    for (;;) {
        int got;
        uint64_t seen[2] = { 0, 0 };
        HPS_TM_BEGIN();
        while ((got = tm_try_pop(q, out, v == V_TX_COND, seen)) < 0 && v == V_TX_COND)
            hps_tm_cond_wait(&q->tnotempty);
        if (got < 0 && v == V_TX_ABORT)
            hps_tm_restart();
        HPS_TM_END();
        if (got >= 0)
            return got;
        spin_while(&q->tail, seen[0], &q->closed, seen[1]);
    }
}

static void tm_close(queue_t *q, int v)
{
    int last;
    HPS_TM_BEGIN();
    uint64_t c = HPS_TM_READ(&q->closed) + 1;
    HPS_TM_WRITE(&q->closed, c);
    last = c == q->pushers;
    /* Every sleeping popper must see the end (the others re-read). */
    if (last && v == V_TX_COND)
        hps_tm_cond_broadcast(&q->tnotempty);
    HPS_TM_END();
}

static void push(queue_t *q, const item_t *it, int v)
{
    if (v == V_MUTEX)
        mutex_push(q, it);
    else
        tm_push(q, it, v);
}

static int pop(queue_t *q, item_t *out, int v)
{
    return v == V_MUTEX ? mutex_pop(q, out) : tm_pop(q, out, v);
}

static void close_queue(queue_t *q, int v)
{
    if (v == V_MUTEX)
        mutex_close(q);
    else
        tm_close(q, v);
}

/* ---- the stages -------------------------------------------------------------- */

/* A popped item: check that its pusher's count went up since this thread
 * last saw that pusher (FIFO per pusher), then mark the hop as ours. */
static void check_hop(pipe_ctx_t *c, int tid, const item_t *it)
{
    uint64_t from = it->hop >> 40, cnt = it->hop & ((1ull << 40) - 1);
    if (from >= (uint64_t)c->threads) {
        flag(c, "item %llu carries pusher %llu, no such thread", it->idx, from);
        return;
    }
    uint64_t *last = &c->last[(size_t)tid * (size_t)c->threads + from];
    if (cnt <= *last)
        flag(c, "out of order: item %llu after an item its pusher sent later (count %llu)",
             it->idx, *last);
    *last = cnt;
}

static void send(pipe_ctx_t *c, queue_t *q, item_t *it, int tid, int v)
{
    it->hop = (uint64_t)tid << 40 | ++c->pushed[tid];
    push(q, it, v);
}

static void sink(pipe_ctx_t *c, const item_t *it, int tid)
{
    if (it->idx >= (uint64_t)c->n) {
        flag(c, "item index %llu out of range (%llu items)", it->idx, (unsigned long long)c->n);
        return;
    }
    /* Sinks mark disjoint items when the queues are right; a duplicate
     * seen by two sinks at once still leaves a wrong count or sum. */
    c->seen[it->idx]++;
    c->sum[tid] += it->val;
}

/* One thread: each item through both queues before the next one. */
static void run_alone(pipe_ctx_t *c, int v)
{
    for (long i = 0; i < c->n; i++) {
        item_t it = { (uint64_t)i, source_val((uint64_t)i), 0 };
        send(c, &c->q[0], &it, 0, v);
        if (pop(&c->q[0], &it, v) != 1)
            flag(c, "the source queue lost item %llu of %llu", (unsigned long long)i, (unsigned long long)c->n);
        check_hop(c, 0, &it);
        it.val = transform(it.val, c->work);
        send(c, &c->q[1], &it, 0, v);
        if (pop(&c->q[1], &it, v) != 1)
            flag(c, "the sink queue lost item %llu of %llu", (unsigned long long)i, (unsigned long long)c->n);
        check_hop(c, 0, &it);
        sink(c, &it, 0);
    }
    close_queue(&c->q[0], v);
    close_queue(&c->q[1], v);
}

static void run(void *ctx, const wl_variant_t *var, int tid, int n)
{
    pipe_ctx_t *c = ctx;
    int v = var->id;
    if (n == 1) {
        run_alone(c, v);
        return;
    }
    int stage = tid % c->stages, k = tid / c->stages, last = c->stages - 1;
    item_t it;
    if (stage == 0) {
        long lo = c->n * k / c->width[0], hi = c->n * (k + 1) / c->width[0];
        for (long i = lo; i < hi; i++) {
            it = (item_t){ (uint64_t)i, source_val((uint64_t)i), 0 };
            send(c, &c->q[0], &it, tid, v);
        }
        close_queue(&c->q[0], v);
        return;
    }
    queue_t *in = &c->q[stage - 1];
    while (pop(in, &it, v) == 1) {
        check_hop(c, tid, &it);
        if (stage == 1)
            it.val = transform(it.val, c->work);
        if (stage == last)
            sink(c, &it, tid);
        else
            send(c, &c->q[stage], &it, tid, v);
    }
    if (stage != last)
        close_queue(&c->q[stage], v);
}

/* ---- the harness's hooks ----------------------------------------------------- */

static void *setup(const wl_row_t *row, int threads, long n)
{
    pipe_ctx_t *c = wl_alloc(sizeof *c);
    c->n = n;
    c->cap = row->a;
    c->work = row->b;
    c->threads = threads;
    c->stages = threads == 1 ? 3 : threads == 2 ? 2 : 3;
    for (int s = 0; s < c->stages; s++)
        c->width[s] = threads == 1 ? 1 : (threads - s + c->stages - 1) / c->stages;
    for (int s = 0; s < MAX_STAGES - 1; s++) {
        queue_t *q = &c->q[s];
        q->cap = c->cap;
        q->slot = wl_alloc(sizeof(item_t) * (size_t)c->cap);
        q->pushers = (uint64_t)c->width[s];
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->notfull, NULL);
        pthread_cond_init(&q->notempty, NULL);
    }
    c->seen = wl_alloc((size_t)n);
    c->sum = wl_alloc(sizeof(uint64_t) * (size_t)threads);
    c->pushed = wl_alloc(sizeof(uint64_t) * (size_t)threads);
    c->last = wl_alloc(sizeof(uint64_t) * (size_t)threads * (size_t)threads);
    for (long i = 0; i < n; i++)
        c->ref += transform(source_val((uint64_t)i), c->work);
    return c;
}

static uint64_t ops(void *ctx)
{
    return (uint64_t)((pipe_ctx_t *)ctx)->n;
}

static void params_json(void *ctx)
{
    pipe_ctx_t *c = ctx;
    hps_json_int("items", c->n);
    hps_json_int("capacity", c->cap);
    hps_json_int("work_rounds", c->work);
    hps_json_int("stages", c->stages);
    hps_json_begin_array("stage_threads");
    for (int s = 0; s < c->stages; s++)
        hps_json_int(NULL, c->width[s]);
    hps_json_end_array();
    /* One thread: the same thread runs every stage, in turn. */
    hps_json_bool("stages_in_turn", c->threads == 1);
    hps_json_str("cond_mode", hps_tm_cond_mode());
}

static void reset(void *ctx)
{
    pipe_ctx_t *c = ctx;
    for (int s = 0; s < MAX_STAGES - 1; s++) {
        queue_t *q = &c->q[s];
        q->head = q->tail = q->closed = 0;
        hps_tm_cond_init(&q->tnotfull);
        hps_tm_cond_init(&q->tnotempty);
        memset(q->slot, 0, sizeof(item_t) * (size_t)c->cap);
    }
    memset(c->seen, 0, (size_t)c->n);
    memset(c->sum, 0, sizeof(uint64_t) * (size_t)c->threads);
    memset(c->pushed, 0, sizeof(uint64_t) * (size_t)c->threads);
    memset(c->last, 0, sizeof(uint64_t) * (size_t)c->threads * (size_t)c->threads);
    c->err = 0;
    c->why[0] = 0;
}

static int validate(void *ctx, char *why, size_t len)
{
    pipe_ctx_t *c = ctx;
    if (c->err) {
        snprintf(why, len, "%s", c->why);
        return -1;
    }
    for (long i = 0; i < c->n; i++)
        if (c->seen[i] != 1) {
            snprintf(why, len, "item %ld reached the sinks %d times", i, c->seen[i]);
            return -1;
        }
    uint64_t sum = 0;
    for (int t = 0; t < c->threads; t++)
        sum += c->sum[t];
    if (sum != c->ref) {
        snprintf(why, len, "the sinks' checksum is %016llx, the sequential one %016llx",
                 (unsigned long long)sum, (unsigned long long)c->ref);
        return -1;
    }
    for (int s = 0; s < c->stages - 1; s++) {
        const queue_t *q = &c->q[s];
        if (q->head != q->tail || q->tail != (uint64_t)c->n || q->closed != q->pushers) {
            snprintf(why, len, "queue %d ends with %llu pushes, %llu pops, %llu of %llu pushers closed",
                     s, (unsigned long long)q->tail, (unsigned long long)q->head,
                     (unsigned long long)q->closed, (unsigned long long)q->pushers);
            return -1;
        }
    }
    snprintf(why, len, "%ld items each once, in order per pusher, checksum %016llx", c->n,
             (unsigned long long)sum);
    return 0;
}

static void corrupt(void *ctx)
{
    pipe_ctx_t *c = ctx;
    c->sum[c->threads - 1] ^= 1;
}

static void teardown(void *ctx)
{
    pipe_ctx_t *c = ctx;
    for (int s = 0; s < MAX_STAGES - 1; s++) {
        queue_t *q = &c->q[s];
        free(q->slot);
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->notfull);
        pthread_cond_destroy(&q->notempty);
    }
    free(c->seen);
    free(c->sum);
    free(c->pushed);
    free(c->last);
    free(c);
}

static const wl_workload_t k_pipeline = {
    .name = "pipeline",
    .title = "pipeline: source, transform and sink threads hand items through bounded queues "
             "(a TCP/IP stack's hand-offs; a mutex and condvars, TM with tx-aware condvars, "
             "restarts, busy-waiting)",
    .seconds = 0.59,
    WL_TABLES(k_rows, k_variants),
    .mutex_variant = V_MUTEX,
    WL_HOOKS,
    .tm_own = 1u << V_TX_COND | 1u << V_TX_ABORT | 1u << V_SPIN,
    .no_tm = 1,
};

int main(int argc, char **argv)
{
    return wl_main(&k_pipeline, argc, argv);
}
