// SPDX-License-Identifier: MIT
/*
 * semantics: semaphores and barriers, one line per call (see semantics.h).
 * Besides the error codes this records what glibc does where POSIX leaves
 * room: which calls check the deadline when a token is there, which act on
 * a pending cancellation without blocking, and how a signal handler ends a
 * blocked wait with and without SA_RESTART (the kernel restarts an untimed
 * futex wait, not a timed one).  Also semaphores made by sem_open (glibc
 * builds those itself) and process-shared semaphores and barriers across
 * fork.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "semantics.h"

/* A sem_* result as an errno name: 0, or the errno of a -1. */
static int se(int rc) { return rc == 0 ? 0 : rc == -1 ? errno : rc; }
#define S(p, what, expr) SEM((p), (what), se(expr))

static void value(const char *p, const char *what, sem_t *s)
{
    int v = -1;
    int rc = sem_getvalue(s, &v);
    printf("%s.%s: rc %d value %d\n", p, what, rc, v);
    fflush(stdout);
}

/* ---- single-thread answers ---------------------------------------------- */

static void sem_errors(void)
{
    const char *p = "sem";
    sem_t s;
    struct timespec past = sem_past(), bad = sem_badnsec(), neg = { -1, 0 };
    struct timespec negns = { 1, -1 }, near = sem_near(CLOCK_MONOTONIC);
    memset(&s, 0xa5, sizeof s);
    S(p, "init_above_max", sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1));
    S(p, "init_pshared_2", sem_init(&s, 2, 0));
    S(p, "init_private", sem_init(&s, 0, 0));
    S(p, "trywait_empty", sem_trywait(&s));
    S(p, "timedwait_empty_past", sem_timedwait(&s, &past));
    S(p, "timedwait_empty_badnsec", sem_timedwait(&s, &bad));
    S(p, "timedwait_empty_negnsec", sem_timedwait(&s, &negns));
    S(p, "timedwait_empty_negsec", sem_timedwait(&s, &neg));
    S(p, "clockwait_empty_badclock", sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &past));
    S(p, "clockwait_empty_monotonic_near", sem_clockwait(&s, CLOCK_MONOTONIC, &near));
    S(p, "clockwait_empty_realtime_past", sem_clockwait(&s, CLOCK_REALTIME, &past));
    S(p, "clockwait_empty_negsec", sem_clockwait(&s, CLOCK_MONOTONIC, &neg));
    value(p, "getvalue_empty", &s);
    S(p, "post", sem_post(&s));
    /* A token is there: which checks still apply? */
    S(p, "timedwait_token_badnsec", sem_timedwait(&s, &bad));
    S(p, "clockwait_token_badclock", sem_clockwait(&s, CLOCK_THREAD_CPUTIME_ID, &near));
    S(p, "clockwait_token_badnsec", sem_clockwait(&s, CLOCK_MONOTONIC, &bad));
    value(p, "getvalue_token_kept", &s);
    S(p, "timedwait_token_past", sem_timedwait(&s, &past));
    S(p, "post", sem_post(&s));
    S(p, "clockwait_token_negsec", sem_clockwait(&s, CLOCK_MONOTONIC, &neg));
    S(p, "post", sem_post(&s));
    S(p, "post", sem_post(&s));
    value(p, "getvalue_two", &s);
    S(p, "wait", sem_wait(&s));
    S(p, "trywait", sem_trywait(&s));
    S(p, "trywait_empty_again", sem_trywait(&s));
    S(p, "destroy", sem_destroy(&s));
    S(p, "init_max", sem_init(&s, 0, SEM_VALUE_MAX));
    S(p, "post_at_max", sem_post(&s));
    value(p, "getvalue_max", &s);
    S(p, "trywait_at_max", sem_trywait(&s));
    S(p, "post_below_max", sem_post(&s));
    S(p, "destroy", sem_destroy(&s));
}

/* ---- a waiter in another thread ------------------------------------------ */

enum wkind { W_WAIT, W_TIMED, W_CLOCK };
static const char *const wnames[] = { "wait", "timedwait", "clockwait" };

struct waiter {
    sem_t *s;
    enum wkind kind;
    _Atomic int tid;
    int rc;
    _Atomic int done;           /* rc is set */
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    struct timespec rt = hps_test_deadline(CLOCK_REALTIME, 10000000000LL);
    struct timespec mono = hps_test_deadline(CLOCK_MONOTONIC, 10000000000LL);
    atomic_store(&w->tid, hps_test_gettid());
    switch (w->kind) {
    case W_WAIT:  w->rc = se(sem_wait(w->s)); break;
    case W_TIMED: w->rc = se(sem_timedwait(w->s, &rt)); break;
    case W_CLOCK: w->rc = se(sem_clockwait(w->s, CLOCK_MONOTONIC, &mono)); break;
    }
    atomic_store(&w->done, 1);
    return NULL;
}

static pthread_t start_waiter(struct waiter *w)
{
    pthread_t t;
    if (pthread_create(&t, NULL, waiter_main, w) != 0)
        hps_test_fail("pthread_create failed");
    while (atomic_load(&w->tid) == 0)
        sched_yield();
    hps_test_wait_asleep(atomic_load(&w->tid));
    return t;
}

static volatile sig_atomic_t g_usr1;
static void on_usr1(int sig) { (void)sig; g_usr1++; }

/* After the signal: wait until the waiter's handler ran and the call either
 * returned or went back to sleep, so that our post comes after the call
 * decided, however late the loaded machine runs the waiter (a fixed nap
 * once let the post win and the call return 0 instead of EINTR). */
static void wait_settled(struct waiter *w, int seen)
{
    int tid = atomic_load(&w->tid);
    for (int i = 0; i < 10000 && g_usr1 == seen; i++)
        usleep(1000);
    if (g_usr1 == seen)
        hps_test_fail("the waiter's SIGUSR1 handler never ran");
    for (int i = 0, asleep = 0; i < 10000 && !atomic_load(&w->done); i++) {
        /* Asleep twice 20 ms apart after its handler: waiting again. */
        asleep = hps_test_thread_state(tid) == 'S' ? asleep + 1 : 0;
        if (asleep == 2)
            return;
        usleep(asleep ? 20000 : 1000);
    }
}

/* A blocked waiter gets a signal: EINTR, or restarted (then our later post
 * wakes it).  The value afterwards tells which. */
static void sem_signals(void)
{
    for (int restart = 0; restart < 2; restart++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sa.sa_flags = restart ? SA_RESTART : 0;
        sigaction(SIGUSR1, &sa, NULL);
        for (int k = W_WAIT; k <= W_CLOCK; k++) {
            char p[64];
            snprintf(p, sizeof p, "sem.signal.%s.%s", restart ? "sa_restart" : "no_restart", wnames[k]);
            sem_t s;
            sem_init(&s, 0, 0);
            struct waiter w = { .s = &s, .kind = (enum wkind)k };
            pthread_t t = start_waiter(&w);
            int seen = g_usr1;
            pthread_kill(t, SIGUSR1);
            wait_settled(&w, seen);
            S(p, "post", sem_post(&s));
            pthread_join(t, NULL);
            SEM(p, "waiter", w.rc);
            value(p, "after", &s);
            sem_destroy(&s);
        }
    }
    signal(SIGUSR1, SIG_DFL);
}

/* ---- cancellation -------------------------------------------------------- */

enum cop { C_WAIT, C_TRY, C_TIMED, C_CLOCK, C_POST, C_GETVALUE };
static const char *const cnames[] = { "wait", "trywait", "timedwait", "clockwait", "post", "getvalue" };
struct cancel_arg { enum cop op; sem_t s; int rc; };

/* With a cancellation pending and a token there: does the call act on it? */
static void *pending_cancel(void *arg)
{
    struct cancel_arg *c = arg;
    struct timespec rt = hps_test_deadline(CLOCK_REALTIME, 1000000000LL);
    int v;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_cancel(pthread_self());
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    switch (c->op) {
    case C_WAIT:     c->rc = se(sem_wait(&c->s)); break;
    case C_TRY:      c->rc = se(sem_trywait(&c->s)); break;
    case C_TIMED:    c->rc = se(sem_timedwait(&c->s, &rt)); break;
    case C_CLOCK:    c->rc = se(sem_clockwait(&c->s, CLOCK_REALTIME, &rt)); break;
    case C_POST:     c->rc = se(sem_post(&c->s)); break;
    case C_GETVALUE: c->rc = se(sem_getvalue(&c->s, &v)); break;
    }
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    return NULL;
}

static void sem_cancel(void)
{
    for (int k = C_WAIT; k <= C_GETVALUE; k++) {
        char p[64];
        snprintf(p, sizeof p, "sem.cancel_pending.%s", cnames[k]);
        struct cancel_arg c = { .op = (enum cop)k, .rc = -1 };
        sem_init(&c.s, 0, 1);
        pthread_t t;
        void *ret;
        pthread_create(&t, NULL, pending_cancel, &c);
        pthread_join(t, &ret);
        printf("%s.thread: %s\n", p, ret == PTHREAD_CANCELED ? "cancelled" : "returned");
        if (ret != PTHREAD_CANCELED)
            SEM(p, "rc", c.rc);
        value(p, "after", &c.s);
        sem_destroy(&c.s);
    }
    /* Cancelled while blocked: it stops being a waiter, so a later post
     * stays a token (and a second blocked waiter still gets one). */
    for (int k = W_WAIT; k <= W_CLOCK; k++) {
        char p[64];
        snprintf(p, sizeof p, "sem.cancel_blocked.%s", wnames[k]);
        sem_t s;
        sem_init(&s, 0, 0);
        struct waiter w1 = { .s = &s, .kind = (enum wkind)k }, w2 = { .s = &s, .kind = W_WAIT };
        pthread_t t1 = start_waiter(&w1), t2 = start_waiter(&w2);
        void *ret;
        pthread_cancel(t1);
        pthread_join(t1, &ret);
        printf("%s.thread: %s\n", p, ret == PTHREAD_CANCELED ? "cancelled" : "returned");
        S(p, "post", sem_post(&s));
        pthread_join(t2, NULL);
        SEM(p, "other_waiter", w2.rc);
        S(p, "post", sem_post(&s));
        value(p, "after", &s);
        sem_destroy(&s);
    }
}

/* ---- semaphores made elsewhere: sem_open, and shared across fork ---------- */

/* The child `pid` waits on `s`: let it go to sleep, post, and report how
 * it ended. */
static void post_for_child(const char *p, sem_t *s, pid_t pid)
{
    struct timespec nap = { 0, 50000000 };
    nanosleep(&nap, NULL);
    S(p, "post_for_child", sem_post(s));
    int st;
    waitpid(pid, &st, 0);
    SEM(p, "child_exit_status", WIFEXITED(st) ? WEXITSTATUS(st) : 128);
}

static void sem_named(void)
{
    const char *p = "sem.named";
    char name[64];
    snprintf(name, sizeof name, "/hpsync-semantics-%d", (int)getpid());
    sem_unlink(name);
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 2);
    printf("%s.open: %s\n", p, s == SEM_FAILED ? hps_errno_name(errno) : "ok");
    if (s == SEM_FAILED)
        return;
    value(p, "initial", s);
    S(p, "wait", sem_wait(s));
    S(p, "trywait", sem_trywait(s));
    S(p, "trywait_empty", sem_trywait(s));
    struct timespec near = sem_near(CLOCK_REALTIME);
    S(p, "timedwait_empty_near", sem_timedwait(s, &near));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child opens it by name and waits; the parent posts. */
        sem_t *c = sem_open(name, 0);
        if (c == SEM_FAILED)
            _exit(10);
        struct timespec dl = hps_test_deadline(CLOCK_REALTIME, 10000000000LL);
        _exit(sem_timedwait(c, &dl) == 0 ? 0 : 11);
    }
    post_for_child(p, s, pid);
    value(p, "after_child", s);
    S(p, "close", sem_close(s));
    S(p, "unlink", sem_unlink(name));
}

static void sem_pshared(void)
{
    const char *p = "sem.pshared";
    sem_t *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        hps_test_fail("mmap failed");
    S(p, "init", sem_init(s, 1, 0));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct timespec dl = hps_test_deadline(CLOCK_REALTIME, 10000000000LL);
        if (sem_timedwait(s, &dl) != 0)
            _exit(11);
        _exit(sem_post(s) == 0 && sem_post(s) == 0 ? 0 : 12);
    }
    post_for_child(p, s, pid);
    value(p, "child_posted_two", s);
    S(p, "destroy", sem_destroy(s));
    munmap(s, sizeof *s);
}

/* ---- barriers ------------------------------------------------------------ */

static const char *serial_name(int rc)
{
    return rc == PTHREAD_BARRIER_SERIAL_THREAD ? "SERIAL" : hps_errno_name(rc);
}
#define B(p, what, expr) do { printf("%s.%s: %s\n", (p), (what), serial_name(expr)); fflush(stdout); } while (0)

struct bar_arg { pthread_barrier_t *b; int rounds; int serial; int zero; };

static void *bar_thread(void *arg)
{
    struct bar_arg *a = arg;
    for (int r = 0; r < a->rounds; r++) {
        int rc = pthread_barrier_wait(a->b);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
            a->serial++;
        else if (rc == 0)
            a->zero++;
    }
    return NULL;
}

/* `n` threads wait `rounds` times each; prints the serial and 0 returns. */
static void bar_threads(const char *p, const char *what, pthread_barrier_t *b, int n, int rounds)
{
    struct bar_arg args[8];
    pthread_t t[8];
    for (int i = 0; i < n; i++) {
        args[i] = (struct bar_arg){ .b = b, .rounds = rounds };
        pthread_create(&t[i], NULL, bar_thread, &args[i]);
    }
    int serial = 0, zero = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        serial += args[i].serial;
        zero += args[i].zero;
    }
    printf("%s.%s: serial %d zero %d\n", p, what, serial, zero);
}

static void barriers(void)
{
    const char *p = "barrier";
    pthread_barrier_t b;
    pthread_barrierattr_t a;
    memset(&b, 0xa5, sizeof b);
    SEM(p, "init_count_0", pthread_barrier_init(&b, NULL, 0));
    SEM(p, "init_count_uint_max", pthread_barrier_init(&b, NULL, UINT_MAX));
    SEM(p, "init_count_half", pthread_barrier_init(&b, NULL, UINT_MAX / 2));
    SEM(p, "init_count_half_minus_1", pthread_barrier_init(&b, NULL, UINT_MAX / 2 - 1));
    SEM(p, "destroy_unused", pthread_barrier_destroy(&b));
    SEM(p, "attr_init", pthread_barrierattr_init(&a));
    SEM(p, "attr_setpshared_bad", pthread_barrierattr_setpshared(&a, 5));
    SEM(p, "init_count_1", pthread_barrier_init(&b, &a, 1));
    B(p, "wait_count_1", pthread_barrier_wait(&b));
    B(p, "wait_count_1_again", pthread_barrier_wait(&b));
    SEM(p, "destroy", pthread_barrier_destroy(&b));

    /* Three threads, four rounds: one SERIAL per round, and reuse. */
    SEM(p, "init_count_3", pthread_barrier_init(&b, NULL, 3));
    bar_threads(p, "three_threads_four_rounds", &b, 3, 4);
    SEM(p, "destroy", pthread_barrier_destroy(&b));
    /* Four threads arrive once each at a barrier of two: two rounds. */
    SEM(p, "reinit_count_2", pthread_barrier_init(&b, NULL, 2));
    bar_threads(p, "four_threads_count_2", &b, 4, 1);
    SEM(p, "destroy", pthread_barrier_destroy(&b));

    /* Process-shared, across fork. */
    pthread_barrier_t *sb = mmap(NULL, sizeof *sb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sb == MAP_FAILED)
        hps_test_fail("mmap failed");
    SEM(p, "attr_setpshared", pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED));
    SEM(p, "init_pshared_2", pthread_barrier_init(sb, &a, 2));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int s = 0;
        for (int r = 0; r < 5; r++)
            s += pthread_barrier_wait(sb) == PTHREAD_BARRIER_SERIAL_THREAD;
        _exit(s);
    }
    int mine = 0;
    for (int r = 0; r < 5; r++)
        mine += pthread_barrier_wait(sb) == PTHREAD_BARRIER_SERIAL_THREAD;
    int st;
    waitpid(pid, &st, 0);
    printf("%s.pshared_five_rounds: serial %d\n", p, mine + (WIFEXITED(st) ? WEXITSTATUS(st) : 100));
    SEM(p, "destroy_pshared", pthread_barrier_destroy(sb));
    munmap(sb, sizeof *sb);
    pthread_barrierattr_destroy(&a);
}

void sem_semaphores_barriers_all(void)
{
    sem_errors();
    sem_signals();
    sem_cancel();
    sem_named();
    sem_pshared();
    barriers();
}
