// SPDX-License-Identifier: MIT
/*
 * Barriers, one case per run:
 *   barrier_test rounds [threads|Nx] [rounds]   nobody passes before all
 *            arrived, exactly one PTHREAD_BARRIER_SERIAL_THREAD per round
 *   barrier_test extra    twice `count` threads arrive at once: they form
 *            two rounds
 *   barrier_test pshared  three processes on a barrier in shared memory
 *   barrier_test destroy  the serial thread destroys and unmaps the barrier
 *            while the others are still leaving it
 *   barrier_test signal   signals to a blocked thread do not release it
 * Run bare for glibc, under LD_PRELOAD for the interposer.  A lost wake-up
 * is a hang, which the watchdog turns into a FAIL line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(t, NULL, fn, arg);
    if (rc)
        hps_test_fail("pthread_create: %s", strerror(rc));
}

/* One barrier wait; returns 1 for the serial thread, fails on anything but
 * 0 or PTHREAD_BARRIER_SERIAL_THREAD. */
static int pass(pthread_barrier_t *b)
{
    int rc = pthread_barrier_wait(b);
    if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
        hps_test_fail("pthread_barrier_wait returned %s", hps_errno_name(rc));
    return rc == PTHREAD_BARRIER_SERIAL_THREAD;
}

/*
 * The check every round makes: each member writes its slot, passes the
 * barrier, and reads all slots; any member that passed early sees an old
 * value.  A second barrier keeps the next round's writes out of this
 * round's reads.  serial[r] counts serial returns of round r's first wait.
 */
struct rounds {
    pthread_barrier_t *b;
    unsigned n, rounds;
    unsigned *slot;                     /* plain: the barrier orders them */
    _Atomic unsigned *serial;
};

static void member(struct rounds *R, unsigned id)
{
    for (unsigned r = 1; r <= R->rounds; r++) {
        R->slot[id] = r;
        if (pass(R->b))
            atomic_fetch_add(&R->serial[r - 1], 1);
        for (unsigned k = 0; k < R->n; k++)
            if (R->slot[k] != r)
                hps_test_fail("round %u: member %u passed while member %u was at round %u", r, id, k,
                              R->slot[k]);
        if (pass(R->b)) {
            /* Everyone has counted its first wait by now. */
            unsigned s = atomic_load(&R->serial[r - 1]);
            if (s != 1)
                hps_test_fail("round %u: %u serial threads", r, s);
        }
    }
}

struct member_arg { struct rounds *R; unsigned id; };
static void *member_main(void *arg)
{
    struct member_arg *a = arg;
    member(a->R, a->id);
    return NULL;
}

static void case_rounds(unsigned n, unsigned rounds)
{
    pthread_barrier_t b;
    HPS_CHECK_RC("pthread_barrier_init", pthread_barrier_init(&b, NULL, n), 0);
    struct rounds R = { &b, n, rounds, calloc(n, sizeof(unsigned)), calloc(rounds, sizeof(_Atomic unsigned)) };
    pthread_t *t = calloc(n, sizeof *t);
    struct member_arg *args = calloc(n, sizeof *args);
    HPS_CHECK(R.slot && R.serial && t && args, "out of memory");
    for (unsigned i = 0; i < n; i++) {
        args[i] = (struct member_arg){ &R, i };
        start(&t[i], member_main, &args[i]);
    }
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    HPS_CHECK_RC("pthread_barrier_destroy", pthread_barrier_destroy(&b), 0);
    printf("%s: ok: %u threads x %u rounds (two waits each)\n", hps_test_name(), n, rounds);
    free(R.slot);
    free((void *)R.serial);
    free(t);
    free(args);
}

/* ---- extra: more threads than count --------------------------------------- */

/*
 * 2 x count threads arrive once each at a barrier of `count`: two rounds
 * form from whoever comes, so exactly two serial returns.  A barrier of all
 * of them then keeps the threads in step (free-running, the last threads
 * left could be fewer than `count` and wait for ever: a program bug).
 */
#define EX_COUNT 3
#define EX_THREADS (2 * EX_COUNT)
#define EX_ITERS 5000

static pthread_barrier_t ex_b, ex_all;
static _Atomic unsigned ex_serial[EX_ITERS];

static void *ex_thread(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < EX_ITERS; i++) {
        if (pass(&ex_b))
            atomic_fetch_add(&ex_serial[i], 1);
        if (pass(&ex_all)) {
            unsigned s = atomic_load(&ex_serial[i]);
            if (s != 2)
                hps_test_fail("iteration %u: %u serial returns from two rounds", i, s);
        }
    }
    return NULL;
}

static void case_extra(void)
{
    HPS_CHECK_RC("pthread_barrier_init", pthread_barrier_init(&ex_b, NULL, EX_COUNT), 0);
    HPS_CHECK_RC("pthread_barrier_init", pthread_barrier_init(&ex_all, NULL, EX_THREADS), 0);
    pthread_t t[EX_THREADS];
    for (unsigned i = 0; i < EX_THREADS; i++)
        start(&t[i], ex_thread, NULL);
    for (unsigned i = 0; i < EX_THREADS; i++)
        pthread_join(t[i], NULL);
    HPS_CHECK_RC("pthread_barrier_destroy", pthread_barrier_destroy(&ex_b), 0);
    HPS_CHECK_RC("pthread_barrier_destroy", pthread_barrier_destroy(&ex_all), 0);
    printf("%s: ok: %d threads on a barrier of %d, %d times\n", hps_test_name(), EX_THREADS, EX_COUNT, EX_ITERS);
}

/* ---- pshared: processes ---------------------------------------------------- */

#define PS_PROCS 3
#define PS_ROUNDS 3000

struct ps_shared {
    pthread_barrier_t b;
    unsigned slot[PS_PROCS];
    _Atomic unsigned serial[PS_ROUNDS];
};

static void case_pshared(void)
{
    struct ps_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    HPS_CHECK(sh != MAP_FAILED, "mmap failed");
    pthread_barrierattr_t a;
    pthread_barrierattr_init(&a);
    HPS_CHECK_RC("setpshared", pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    HPS_CHECK_RC("pthread_barrier_init", pthread_barrier_init(&sh->b, &a, PS_PROCS), 0);
    pthread_barrierattr_destroy(&a);
    struct rounds R = { &sh->b, PS_PROCS, PS_ROUNDS, sh->slot, sh->serial };
    pid_t kids[PS_PROCS - 1];
    for (unsigned c = 0; c < PS_PROCS - 1; c++) {
        kids[c] = fork();
        HPS_CHECK(kids[c] >= 0, "fork failed");
        if (kids[c] == 0) {
            hps_test_watchdog(60);
            member(&R, c + 1);
            _exit(0);
        }
    }
    member(&R, 0);
    for (unsigned c = 0; c < PS_PROCS - 1; c++) {
        int st;
        waitpid(kids[c], &st, 0);
        HPS_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %u failed (status 0x%x)", c, st);
    }
    HPS_CHECK_RC("pthread_barrier_destroy", pthread_barrier_destroy(&sh->b), 0);
    printf("%s: ok: %d processes x %d rounds\n", hps_test_name(), PS_PROCS, PS_ROUNDS);
    munmap(sh, sizeof *sh);
}

/* ---- destroy: right after the round, while others leave -------------------- */

#define DS_THREADS 4
#define DS_ROUNDS 400

static void *ds_thread(void *arg)
{
    pthread_barrier_t *b = arg;
    if (pass(b)) {
        /* Legal now: no thread is blocked any more, though some may still
         * be on their way out.  destroy must wait for them. */
        HPS_CHECK_RC("pthread_barrier_destroy", pthread_barrier_destroy(b), 0);
        hps_test_unmap_page(b);
    }
    return NULL;
}

static void case_destroy(void)
{
    for (unsigned r = 0; r < DS_ROUNDS; r++) {
        pthread_barrier_t *b = hps_test_page();
        HPS_CHECK_RC("pthread_barrier_init", pthread_barrier_init(b, NULL, DS_THREADS), 0);
        pthread_t t[DS_THREADS];
        for (unsigned i = 0; i < DS_THREADS; i++)
            start(&t[i], ds_thread, b);
        for (unsigned i = 0; i < DS_THREADS; i++)
            pthread_join(t[i], NULL);
    }
    printf("%s: ok: %d rounds of destroy and unmap by the serial thread\n", hps_test_name(), DS_ROUNDS);
}

/* ---- signal: a handler does not end the wait ------------------------------- */

static pthread_barrier_t sg_b;
static _Atomic int sg_released, sg_early;

static void on_usr1(int sig) { (void)sig; }

static void *sg_thread(void *arg)
{
    (void)arg;
    pass(&sg_b);
    if (!atomic_load(&sg_released))
        atomic_store(&sg_early, 1);
    return NULL;
}

static void case_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;            /* no SA_RESTART: the worst case */
    sigaction(SIGUSR1, &sa, NULL);
    pthread_barrier_init(&sg_b, NULL, 2);
    for (int r = 0; r < 20; r++) {
        atomic_store(&sg_released, 0);
        pthread_t t;
        start(&t, sg_thread, NULL);
        for (int i = 0; i < 20; i++) {
            pthread_kill(t, SIGUSR1);
            usleep(500);
        }
        atomic_store(&sg_released, 1);
        pass(&sg_b);
        pthread_join(t, NULL);
        HPS_CHECK(!atomic_load(&sg_early), "round %d: a signal released a thread from the barrier", r);
    }
    pthread_barrier_destroy(&sg_b);
    printf("%s: ok: 20 rounds of 20 signals to a blocked thread\n", hps_test_name());
}

static int case_rounds_args(const hps_test_case_t *c, int argc, char **argv)
{
    case_rounds(argc > 1 ? hps_test_threads(argv[1]) : 3,
                argc > 2 ? (unsigned)hps_test_ulong(argv[2], "rounds") : 20000);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "rounds", .run_args = case_rounds_args, .args = "[threads|Nx] [rounds]", .max_args = 2 },
    { "extra", .run = case_extra },
    { "pshared", .run = case_pshared },
    { "destroy", .run = case_destroy },
    { "signal", .run = case_signal },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("barrier_test", cases, 100, HPS_TEST_NAME_IMPL);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
