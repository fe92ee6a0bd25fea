// SPDX-License-Identifier: MIT
/*
 * Condition variables, one case per run:
 *   cond_test pc | pc_c11 | bcast | timedwait | clockwait | monotonic | destroy
 * Plain pthreads (and C11 <threads.h> for pc_c11): run bare for glibc, under
 * LD_PRELOAD=libhpsync-preload.so with HPSYNC_LOCK=<algo> for the interposer.
 * A lost wake-up shows as a hang, which the watchdog turns into a FAIL line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <threads.h>
#include <unistd.h>
#include "harness.h"

/* ---- a mutex + condvar pair behind an ops table (pthread or C11) --------- */

struct sync_ops {
    void (*lock)(void *m);
    void (*unlock)(void *m);
    void (*wait)(void *c, void *m);
    void (*signal)(void *c);
    void (*broadcast)(void *c);
};

static void p_lock(void *m) { HPS_CHECK_RC("pthread_mutex_lock", pthread_mutex_lock(m), 0); }
static void p_unlock(void *m) { HPS_CHECK_RC("pthread_mutex_unlock", pthread_mutex_unlock(m), 0); }
static void p_wait(void *c, void *m) { HPS_CHECK_RC("pthread_cond_wait", pthread_cond_wait(c, m), 0); }
static void p_signal(void *c) { HPS_CHECK_RC("pthread_cond_signal", pthread_cond_signal(c), 0); }
static void p_bcast(void *c) { HPS_CHECK_RC("pthread_cond_broadcast", pthread_cond_broadcast(c), 0); }
static const struct sync_ops pthread_ops = { p_lock, p_unlock, p_wait, p_signal, p_bcast };

static void c_lock(void *m) { HPS_CHECK(mtx_lock(m) == thrd_success, "mtx_lock failed"); }
static void c_unlock(void *m) { HPS_CHECK(mtx_unlock(m) == thrd_success, "mtx_unlock failed"); }
static void c_wait(void *c, void *m) { HPS_CHECK(cnd_wait(c, m) == thrd_success, "cnd_wait failed"); }
static void c_signal(void *c) { HPS_CHECK(cnd_signal(c) == thrd_success, "cnd_signal failed"); }
static void c_bcast(void *c) { HPS_CHECK(cnd_broadcast(c) == thrd_success, "cnd_broadcast failed"); }
static const struct sync_ops c11_ops = { c_lock, c_unlock, c_wait, c_signal, c_bcast };

/* Storage big enough for either flavour. */
union any_mutex { pthread_mutex_t p; mtx_t c; };
union any_cond { pthread_cond_t p; cnd_t c; };

static void start_threads(pthread_t *t, unsigned n, void *(*fn)(void *), void *arg, size_t stride)
{
    for (unsigned i = 0; i < n; i++) {
        int rc = pthread_create(&t[i], NULL, fn, (char *)arg + i * stride);
        if (rc)
            hps_test_fail("pthread_create: %s", strerror(rc));
    }
}

static void join_threads(pthread_t *t, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* ---- pc: bounded buffer, several producers and consumers, signal only ---- */

#define PC_CAP 4
#define PC_PRODUCERS 3
#define PC_CONSUMERS 3
#define PC_ITEMS 10000u                    /* per producer */
#define PC_POISON 0xffffffffu

static struct {
    const struct sync_ops *ops;
    union any_mutex m;
    union any_cond not_full, not_empty;
    uint32_t buf[PC_CAP];
    unsigned head, count;                   /* all plain: the mutex guards them */
    unsigned char seen[PC_PRODUCERS * PC_ITEMS];
} pc;

static void pc_put(uint32_t v)
{
    pc.ops->lock(&pc.m);
    while (pc.count == PC_CAP)
        pc.ops->wait(&pc.not_full, &pc.m);
    pc.buf[(pc.head + pc.count++) % PC_CAP] = v;
    /* signal, not broadcast: one lost wake-up is enough to hang the test. */
    pc.ops->signal(&pc.not_empty);
    pc.ops->unlock(&pc.m);
}

static uint32_t pc_get(void)
{
    pc.ops->lock(&pc.m);
    while (pc.count == 0)
        pc.ops->wait(&pc.not_empty, &pc.m);
    uint32_t v = pc.buf[pc.head];
    pc.head = (pc.head + 1) % PC_CAP;
    pc.count--;
    pc.ops->signal(&pc.not_full);
    if (v != PC_POISON) {
        if (pc.seen[v]++)
            hps_test_fail("item %u consumed twice", v);
    }
    pc.ops->unlock(&pc.m);
    return v;
}

static void *pc_producer(void *arg)
{
    uint32_t base = (uint32_t)(uintptr_t)arg * PC_ITEMS;
    for (uint32_t i = 0; i < PC_ITEMS; i++)
        pc_put(base + i);
    return NULL;
}

static void *pc_consumer(void *arg)
{
    unsigned long *got = arg;
    while (pc_get() != PC_POISON)
        ++*got;
    return NULL;
}

static void case_pc(const struct sync_ops *ops)
{
    pthread_t p[PC_PRODUCERS], c[PC_CONSUMERS];
    unsigned long got[PC_CONSUMERS] = { 0 };
    pc.ops = ops;
    if (ops == &c11_ops) {
        HPS_CHECK(mtx_init(&pc.m.c, mtx_plain) == thrd_success, "mtx_init failed");
        HPS_CHECK(cnd_init(&pc.not_full.c) == thrd_success && cnd_init(&pc.not_empty.c) == thrd_success,
                  "cnd_init failed");
    } else {
        HPS_CHECK_RC("pthread_mutex_init", pthread_mutex_init(&pc.m.p, NULL), 0);
        HPS_CHECK_RC("pthread_cond_init", pthread_cond_init(&pc.not_full.p, NULL), 0);
        HPS_CHECK_RC("pthread_cond_init", pthread_cond_init(&pc.not_empty.p, NULL), 0);
    }
    for (unsigned i = 0; i < PC_PRODUCERS; i++)
        if (pthread_create(&p[i], NULL, pc_producer, (void *)(uintptr_t)i))
            hps_test_fail("pthread_create failed");
    start_threads(c, PC_CONSUMERS, pc_consumer, got, sizeof got[0]);
    join_threads(p, PC_PRODUCERS);
    for (unsigned i = 0; i < PC_CONSUMERS; i++)
        pc_put(PC_POISON);
    join_threads(c, PC_CONSUMERS);

    unsigned long total = 0;
    for (unsigned i = 0; i < PC_CONSUMERS; i++)
        total += got[i];
    for (uint32_t v = 0; v < PC_PRODUCERS * PC_ITEMS; v++)
        if (pc.seen[v] != 1)
            hps_test_fail("item %u consumed %u times (lost item)", v, pc.seen[v]);
    HPS_CHECK(total == PC_PRODUCERS * PC_ITEMS, "consumed %lu items, produced %u", total,
              PC_PRODUCERS * PC_ITEMS);
    if (ops == &c11_ops) {
        cnd_destroy(&pc.not_full.c);
        cnd_destroy(&pc.not_empty.c);
        mtx_destroy(&pc.m.c);
    } else {
        HPS_CHECK_RC("pthread_cond_destroy", pthread_cond_destroy(&pc.not_full.p), 0);
        HPS_CHECK_RC("pthread_cond_destroy", pthread_cond_destroy(&pc.not_empty.p), 0);
        HPS_CHECK_RC("pthread_mutex_destroy", pthread_mutex_destroy(&pc.m.p), 0);
    }
    printf("%s: ok: %u items through a %u-slot buffer (%u producers, %u consumers)\n",
           hps_test_name(), PC_PRODUCERS * PC_ITEMS, PC_CAP, PC_PRODUCERS, PC_CONSUMERS);
}

/* ---- bcast: a generation barrier built on broadcast ---------------------- */

#define BC_THREADS 4
#define BC_ROUNDS 3000

static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    unsigned arrived, gen;
    unsigned long work;                      /* plain, guarded by m */
} bc = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

static void *bc_thread(void *arg)
{
    (void)arg;
    for (unsigned r = 0; r < BC_ROUNDS; r++) {
        p_lock(&bc.m);
        bc.work++;
        unsigned my = bc.gen;
        if (++bc.arrived == BC_THREADS) {
            if (bc.work != (unsigned long)(r + 1) * BC_THREADS)
                hps_test_fail("round %u: work %lu, expected %lu", r, bc.work,
                              (unsigned long)(r + 1) * BC_THREADS);
            bc.arrived = 0;
            bc.gen++;
            p_bcast(&bc.c);
        } else {
            while (bc.gen == my)
                p_wait(&bc.c, &bc.m);
            if (bc.gen != my + 1)
                hps_test_fail("round %u: generation jumped from %u to %u", r, my, bc.gen);
        }
        p_unlock(&bc.m);
    }
    return NULL;
}

static void case_bcast(void)
{
    pthread_t t[BC_THREADS];
    start_threads(t, BC_THREADS, bc_thread, NULL, 0);
    join_threads(t, BC_THREADS);
    HPS_CHECK(bc.gen == BC_ROUNDS, "%u generations, expected %u", bc.gen, BC_ROUNDS);
    printf("%s: ok: %u threads x %u broadcast rounds\n", hps_test_name(), BC_THREADS, BC_ROUNDS);
}

/* ---- timed waits ---------------------------------------------------------- */

#define TIMEOUT_NS 60000000LL                /* 60 ms */

static void *try_from_other(void *m)
{
    return (void *)(intptr_t)pthread_mutex_trylock(m);
}

/* After a wait returned, the caller must hold m: another thread's trylock
 * fails, and (errorcheck) our own unlock succeeds. */
static void check_held(pthread_mutex_t *m, const char *what)
{
    pthread_t t;
    void *rc;
    pthread_create(&t, NULL, try_from_other, m);
    pthread_join(t, &rc);
    if ((intptr_t)rc != EBUSY)
        hps_test_fail("%s: mutex not held on return (other thread's trylock: %s)", what,
                      hps_errno_name((int)(intptr_t)rc));
}

/* Wait on c (with m of the given type) until `clock`-deadline; expect ETIMEDOUT. */
static void expect_timeout(pthread_cond_t *c, int type, clockid_t clock, int use_clockwait,
                           const char *what)
{
    pthread_mutex_t m;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    HPS_CHECK_RC("pthread_mutex_init", pthread_mutex_init(&m, &a), 0);
    pthread_mutexattr_destroy(&a);

    p_lock(&m);
    struct timespec t0, t1, dl = hps_test_deadline(clock, TIMEOUT_NS);
    clock_gettime(clock, &t0);
    int rc;
    /* Spurious wake-ups are allowed: keep waiting until the deadline. */
    do {
        rc = use_clockwait ? pthread_cond_clockwait(c, &m, clock, &dl) : pthread_cond_timedwait(c, &m, &dl);
    } while (rc == 0);
    clock_gettime(clock, &t1);
    if (rc != ETIMEDOUT)
        hps_test_fail("%s returned %s, expected ETIMEDOUT", what, hps_errno_name(rc));
    long long el = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    if (el < TIMEOUT_NS)
        hps_test_fail("%s returned after %.1f ms, before its %.1f ms timeout", what, el / 1e6,
                      TIMEOUT_NS / 1e6);
    if (el > 20 * TIMEOUT_NS)
        hps_test_fail("%s returned after %.1f ms, far past its %.1f ms timeout", what, el / 1e6,
                      TIMEOUT_NS / 1e6);
    check_held(&m, what);
    HPS_CHECK_RC("unlock after timed-out wait", pthread_mutex_unlock(&m), 0);
    HPS_CHECK_RC("pthread_mutex_destroy", pthread_mutex_destroy(&m), 0);
}

static void case_timedwait(void)
{
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    expect_timeout(&c, PTHREAD_MUTEX_NORMAL, CLOCK_REALTIME, 0, "timedwait (normal mutex)");
    expect_timeout(&c, PTHREAD_MUTEX_ERRORCHECK, CLOCK_REALTIME, 0, "timedwait (errorcheck mutex)");
    expect_timeout(&c, PTHREAD_MUTEX_RECURSIVE, CLOCK_REALTIME, 0, "timedwait (recursive mutex)");

    /* A deadline already past times out at once, mutex still held. */
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    struct timespec past = { 1, 0 };
    p_lock(&m);
    HPS_CHECK_RC("timedwait with a past deadline", pthread_cond_timedwait(&c, &m, &past), ETIMEDOUT);
    check_held(&m, "timedwait with a past deadline");
    /* A malformed deadline is EINVAL, mutex still held. */
    struct timespec bad = { 0, 1000000000L };
    struct timespec now = hps_test_deadline(CLOCK_REALTIME, 0);
    bad.tv_sec = now.tv_sec + 1;
    HPS_CHECK_RC("timedwait with tv_nsec = 1e9", pthread_cond_timedwait(&c, &m, &bad), EINVAL);
    check_held(&m, "timedwait with tv_nsec = 1e9");
    p_unlock(&m);
    HPS_CHECK_RC("pthread_cond_destroy", pthread_cond_destroy(&c), 0);
    printf("%s: ok\n", hps_test_name());
}

struct waker { pthread_mutex_t *m; pthread_cond_t *c; int *flag; };

static void *wake_soon(void *arg)
{
    struct waker *w = arg;
    struct timespec ts = { 0, 5000000 };
    nanosleep(&ts, NULL);
    p_lock(w->m);
    *w->flag = 1;
    p_signal(w->c);
    p_unlock(w->m);
    return NULL;
}

static void case_clockwait(void)
{
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    expect_timeout(&c, PTHREAD_MUTEX_NORMAL, CLOCK_MONOTONIC, 1, "clockwait(MONOTONIC)");
    expect_timeout(&c, PTHREAD_MUTEX_NORMAL, CLOCK_REALTIME, 1, "clockwait(REALTIME)");

    /* Signalled well before the deadline: returns 0, not ETIMEDOUT. */
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    int flag = 0, rc = 0;
    struct waker w = { &m, &c, &flag };
    pthread_t t;
    p_lock(&m);
    pthread_create(&t, NULL, wake_soon, &w);
    struct timespec dl = hps_test_deadline(CLOCK_MONOTONIC, 10LL * 1000000000LL);
    while (!flag && rc == 0)
        rc = pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &dl);
    HPS_CHECK_RC("clockwait(MONOTONIC) signalled before the deadline", rc, 0);
    p_unlock(&m);
    pthread_join(t, NULL);

    /* A clock the call does not support: EINVAL, mutex still held. */
    p_lock(&m);
    HPS_CHECK_RC("clockwait(CLOCK_PROCESS_CPUTIME_ID)",
                 pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &dl), EINVAL);
    check_held(&m, "clockwait with a bad clock");
    p_unlock(&m);
    printf("%s: ok\n", hps_test_name());
}

static void case_monotonic(void)
{
    pthread_condattr_t a;
    pthread_cond_t c;
    clockid_t got = -1;
    HPS_CHECK_RC("pthread_condattr_init", pthread_condattr_init(&a), 0);
    HPS_CHECK_RC("pthread_condattr_setclock", pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    HPS_CHECK_RC("pthread_condattr_getclock", pthread_condattr_getclock(&a, &got), 0);
    HPS_CHECK(got == CLOCK_MONOTONIC, "condattr clock reads back as %d", (int)got);
    HPS_CHECK_RC("pthread_cond_init", pthread_cond_init(&c, &a), 0);
    pthread_condattr_destroy(&a);
    /*
     * A monotonic deadline read as a realtime one lies decades in the past,
     * so an implementation that ignores the attribute returns at once and
     * fails the elapsed-time check.
     */
    expect_timeout(&c, PTHREAD_MUTEX_NORMAL, CLOCK_MONOTONIC, 0, "timedwait on a MONOTONIC condvar");
    HPS_CHECK_RC("pthread_cond_destroy", pthread_cond_destroy(&c), 0);
    printf("%s: ok\n", hps_test_name());
}

/* ---- destroy right after broadcast ---------------------------------------- */

#define DS_WAITERS 4
#define DS_ROUNDS 300

struct ds {
    pthread_cond_t *c;                       /* on its own page, unmapped after destroy */
    pthread_mutex_t m;
    unsigned ready, go;
};

static void *ds_waiter(void *arg)
{
    struct ds *d = arg;
    p_lock(&d->m);
    d->ready++;
    pthread_cond_t *c = d->c;
    while (!d->go)
        p_wait(c, &d->m);
    p_unlock(&d->m);
    return NULL;
}

static void case_destroy(void)
{
    long page = sysconf(_SC_PAGESIZE);
    for (unsigned r = 0; r < DS_ROUNDS; r++) {
        struct ds d = { .m = PTHREAD_MUTEX_INITIALIZER };
        void *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        HPS_CHECK(mem != MAP_FAILED, "mmap failed");
        d.c = mem;
        HPS_CHECK_RC("pthread_cond_init", pthread_cond_init(d.c, NULL), 0);
        pthread_t t[DS_WAITERS];
        start_threads(t, DS_WAITERS, ds_waiter, &d, 0);
        /* Wait until all are inside pthread_cond_wait (they count in under m). */
        for (;;) {
            p_lock(&d.m);
            if (d.ready == DS_WAITERS)
                break;
            p_unlock(&d.m);
            sched_yield();
        }
        d.go = 1;
        p_bcast(d.c);
        p_unlock(&d.m);
        /* Legal as soon as no thread is blocked on it: right now. */
        HPS_CHECK_RC("pthread_cond_destroy after broadcast", pthread_cond_destroy(d.c), 0);
        /* Any later touch of the condvar by a waking waiter now faults. */
        munmap(mem, (size_t)page);
        join_threads(t, DS_WAITERS);
        HPS_CHECK_RC("pthread_mutex_destroy", pthread_mutex_destroy(&d.m), 0);
    }
    printf("%s: ok: %u rounds of destroy-after-broadcast with %u waiters\n", hps_test_name(),
           DS_ROUNDS, DS_WAITERS);
}

/* pc and pc_c11: one case over the sync_ops in the table. */
static int case_pc_args(const hps_test_case_t *c, int argc, char **argv)
{
    case_pc(c->data);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "pc", .run_args = case_pc_args, .data = &pthread_ops },
    { "pc_c11", .run_args = case_pc_args, .data = &c11_ops },
    { "bcast", .run = case_bcast },
    { "timedwait", .run = case_timedwait },
    { "clockwait", .run = case_clockwait },
    { "monotonic", .run = case_monotonic },
    { "destroy", .run = case_destroy },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("cond_test", cases, 100, HPS_TEST_NAME_IMPL);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
