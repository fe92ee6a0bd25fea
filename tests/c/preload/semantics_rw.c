// SPDX-License-Identifier: MIT
/*
 * semantics: rwlock sequences, the mutex kinds the interposer hands to glibc
 * (robust, process-shared, priority-inheritance), C11 <threads.h> and a few
 * condvar answers.  One line per call, see semantics.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include "semantics.h"

/* ---- rwlock -------------------------------------------------------------- */

static int r_tryrd(void *l) { int rc = pthread_rwlock_tryrdlock(l); if (!rc) pthread_rwlock_unlock(l); return rc; }
static int r_trywr(void *l) { int rc = pthread_rwlock_trywrlock(l); if (!rc) pthread_rwlock_unlock(l); return rc; }
static int r_timedrd_near(void *l)
{
    struct timespec t = sem_near(CLOCK_REALTIME);
    int rc = pthread_rwlock_timedrdlock(l, &t);
    if (!rc) pthread_rwlock_unlock(l);
    return rc;
}
static int r_timedwr_near(void *l)
{
    struct timespec t = sem_near(CLOCK_REALTIME);
    int rc = pthread_rwlock_timedwrlock(l, &t);
    if (!rc) pthread_rwlock_unlock(l);
    return rc;
}
static int r_timedrd_bad(void *l) { struct timespec t = sem_badnsec(); return pthread_rwlock_timedrdlock(l, &t); }
static int r_timedwr_bad(void *l) { struct timespec t = sem_badnsec(); return pthread_rwlock_timedwrlock(l, &t); }
static int r_clockrd_mono(void *l)
{
    struct timespec t = sem_near(CLOCK_MONOTONIC);
    int rc = pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &t);
    if (!rc) pthread_rwlock_unlock(l);
    return rc;
}
static int r_clockwr_mono(void *l)
{
    struct timespec t = sem_near(CLOCK_MONOTONIC);
    int rc = pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &t);
    if (!rc) pthread_rwlock_unlock(l);
    return rc;
}

/* Two readers inside at once: each holds its read lock across a barrier. */
struct two_readers { pthread_rwlock_t *l; pthread_barrier_t b; };
static int reader_at_barrier(void *p)
{
    struct two_readers *r = p;
    /* Timed, so a lock that does not share fails here instead of hanging. */
    struct timespec t = hps_test_deadline(CLOCK_REALTIME, 5000000000LL);
    int rc = pthread_rwlock_timedrdlock(r->l, &t);
    if (rc)
        return rc;
    pthread_barrier_wait(&r->b);
    return pthread_rwlock_unlock(r->l);
}
static void *reader_thread(void *p) { return (void *)(intptr_t)reader_at_barrier(p); }

static void rw_basic(const char *p, pthread_rwlock_t *l)
{
    struct timespec past = sem_past(), near = sem_near(CLOCK_MONOTONIC), bad = sem_badnsec();

    struct two_readers tr = { .l = l };
    pthread_barrier_init(&tr.b, NULL, 2);
    pthread_t t;
    void *trc;
    pthread_create(&t, NULL, reader_thread, &tr);
    SEM(p, "two_readers_at_barrier", reader_at_barrier(&tr));
    pthread_join(t, &trc);
    SEM(p, "two_readers_other", (int)(intptr_t)trc);
    pthread_barrier_destroy(&tr.b);

    SEM(p, "rdlock", pthread_rwlock_rdlock(l));
    SEM(p, "other_tryrdlock", sem_other(r_tryrd, l));
    SEM(p, "other_trywrlock", sem_other(r_trywr, l));
    SEM(p, "other_timedwrlock_near", sem_other(r_timedwr_near, l));
    SEM(p, "other_clockwrlock_monotonic_near", sem_other(r_clockwr_mono, l));
    SEM(p, "other_timedwrlock_badnsec", sem_other(r_timedwr_bad, l));
    SEM(p, "trywrlock_reader", pthread_rwlock_trywrlock(l));
    SEM(p, "rdlock_again", pthread_rwlock_rdlock(l));
    SEM(p, "unlock_read", pthread_rwlock_unlock(l));
    SEM(p, "unlock_read", pthread_rwlock_unlock(l));

    SEM(p, "wrlock", pthread_rwlock_wrlock(l));
    SEM(p, "other_tryrdlock", sem_other(r_tryrd, l));
    SEM(p, "other_trywrlock", sem_other(r_trywr, l));
    SEM(p, "other_timedrdlock_near", sem_other(r_timedrd_near, l));
    SEM(p, "other_clockrdlock_monotonic_near", sem_other(r_clockrd_mono, l));
    SEM(p, "other_timedrdlock_badnsec", sem_other(r_timedrd_bad, l));
    SEM(p, "rdlock_by_writer", pthread_rwlock_rdlock(l));
    SEM(p, "wrlock_by_writer", pthread_rwlock_wrlock(l));
    SEM(p, "timedrdlock_by_writer", pthread_rwlock_timedrdlock(l, &past));
    SEM(p, "timedwrlock_by_writer", pthread_rwlock_timedwrlock(l, &past));
    SEM(p, "tryrdlock_by_writer", pthread_rwlock_tryrdlock(l));
    SEM(p, "trywrlock_by_writer", pthread_rwlock_trywrlock(l));
    SEM(p, "unlock_write", pthread_rwlock_unlock(l));
    SEM(p, "other_trywrlock_after", sem_other(r_trywr, l));

    /* glibc checks the clock and the deadline even when it would not block. */
    SEM(p, "clockrdlock_badclock", pthread_rwlock_clockrdlock(l, CLOCK_PROCESS_CPUTIME_ID, &near));
    SEM(p, "clockwrlock_badclock", pthread_rwlock_clockwrlock(l, CLOCK_PROCESS_CPUTIME_ID, &near));
    SEM(p, "timedrdlock_free_badnsec", pthread_rwlock_timedrdlock(l, &bad));
    SEM(p, "timedwrlock_free_badnsec", pthread_rwlock_timedwrlock(l, &bad));
    SEM(p, "timedrdlock_free_past", pthread_rwlock_timedrdlock(l, &past));
    SEM(p, "unlock", pthread_rwlock_unlock(l));
    SEM(p, "timedwrlock_free_past", pthread_rwlock_timedwrlock(l, &past));
    SEM(p, "unlock", pthread_rwlock_unlock(l));
    SEM(p, "tryrdlock_free", pthread_rwlock_tryrdlock(l));
    SEM(p, "unlock", pthread_rwlock_unlock(l));
    SEM(p, "trywrlock_free", pthread_rwlock_trywrlock(l));
    SEM(p, "unlock", pthread_rwlock_unlock(l));
}

/*
 * Preference: a reader holds the lock, a writer queues behind it, then a
 * second reader asks.  Reader-preferring (the default) lets it in; the
 * writer-preferring non-recursive kind makes it wait for the writer.
 */
struct queued_writer { pthread_rwlock_t *l; _Atomic int tid; };
static void *writer_thread(void *arg)
{
    struct queued_writer *w = arg;
    struct timespec t = hps_test_deadline(CLOCK_REALTIME, 5000000000LL);
    atomic_store(&w->tid, hps_test_gettid());
    int rc = pthread_rwlock_timedwrlock(w->l, &t);
    if (!rc)
        rc = pthread_rwlock_unlock(w->l);
    return (void *)(intptr_t)rc;
}

static void rw_preference(const char *p, pthread_rwlock_t *l)
{
    pthread_t w;
    void *wrc;
    struct queued_writer qw = { .l = l };
    SEM(p, "rdlock", pthread_rwlock_rdlock(l));
    pthread_create(&w, NULL, writer_thread, &qw);
    /* Let the writer queue up: asleep in the kernel, whatever the load. */
    while (atomic_load(&qw.tid) == 0)
        sched_yield();
    hps_test_wait_asleep(atomic_load(&qw.tid));
    SEM(p, "other_tryrdlock_writer_waiting", sem_other(r_tryrd, l));
    SEM(p, "other_timedrdlock_writer_waiting", sem_other(r_timedrd_near, l));
    SEM(p, "unlock_read", pthread_rwlock_unlock(l));
    pthread_join(w, &wrc);
    SEM(p, "writer_got_it", (int)(intptr_t)wrc);
}

void sem_rwlock_all(void)
{
    static pthread_rwlock_t s_default = PTHREAD_RWLOCK_INITIALIZER;
    static pthread_rwlock_t s_writer = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
    pthread_rwlock_t l;
    pthread_rwlockattr_t a;

    memset(&l, 0xa5, sizeof l);
    SEM("rw.default.init", "init", pthread_rwlock_init(&l, NULL));
    rw_basic("rw.default.init", &l);
    rw_preference("rw.default.init", &l);
    SEM("rw.default.init", "destroy", pthread_rwlock_destroy(&l));

    rw_basic("rw.default.static", &s_default);
    rw_preference("rw.default.static", &s_default);

    static const struct { const char *name; int kind; } kinds[] = {
        { "prefer_reader_np", PTHREAD_RWLOCK_PREFER_READER_NP },
        { "prefer_writer_np", PTHREAD_RWLOCK_PREFER_WRITER_NP },
        { "prefer_writer_nonrecursive_np", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char p[96];
        snprintf(p, sizeof p, "rw.%s.init", kinds[i].name);
        pthread_rwlockattr_init(&a);
        SEM(p, "attr_setkind", pthread_rwlockattr_setkind_np(&a, kinds[i].kind));
        memset(&l, 0xa5, sizeof l);
        SEM(p, "init", pthread_rwlock_init(&l, &a));
        pthread_rwlockattr_destroy(&a);
        rw_basic(p, &l);
        rw_preference(p, &l);
        SEM(p, "destroy", pthread_rwlock_destroy(&l));
    }
    rw_basic("rw.prefer_writer_nonrecursive_np.static", &s_writer);
    rw_preference("rw.prefer_writer_nonrecursive_np.static", &s_writer);
}

/* ---- kinds glibc keeps: robust, process-shared, priority inheritance ----- */

static int lock_and_exit(void *m) { return pthread_mutex_lock(m); }   /* never unlocks */

static void robust(const char *p, int type)
{
    pthread_mutex_t m;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    SEM(p, "attr_setrobust", pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
    SEM(p, "init", pthread_mutex_init(&m, &a));
    pthread_mutexattr_destroy(&a);
    SEM(p, "other_lock_then_exit", sem_other(lock_and_exit, &m));
    SEM(p, "lock_owner_died", pthread_mutex_lock(&m));
    SEM(p, "consistent", pthread_mutex_consistent(&m));
    SEM(p, "unlock", pthread_mutex_unlock(&m));
    SEM(p, "lock", pthread_mutex_lock(&m));
    SEM(p, "other_trylock", sem_other(sem_op_trylock, &m));
    SEM(p, "unlock", pthread_mutex_unlock(&m));
    /* Owner died again, and this time nobody makes it consistent. */
    SEM(p, "other_lock_then_exit", sem_other(lock_and_exit, &m));
    SEM(p, "trylock_owner_died", pthread_mutex_trylock(&m));
    SEM(p, "unlock_inconsistent", pthread_mutex_unlock(&m));
    SEM(p, "lock_not_recoverable", pthread_mutex_lock(&m));
    SEM(p, "destroy", pthread_mutex_destroy(&m));
}

static void pshared(const char *p)
{
    struct shm { pthread_mutex_t m; pthread_cond_t c; int flag; } *s;
    s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        hps_test_fail("mmap failed");
    pthread_mutexattr_t a;
    pthread_condattr_t ca;
    pthread_mutexattr_init(&a);
    SEM(p, "attr_setpshared", pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED));
    SEM(p, "init", pthread_mutex_init(&s->m, &a));
    pthread_mutexattr_destroy(&a);
    pthread_condattr_init(&ca);
    SEM(p, "condattr_setpshared", pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED));
    SEM(p, "cond_init", pthread_cond_init(&s->c, &ca));
    pthread_condattr_destroy(&ca);

    int fds[2];
    if (pipe(fds) != 0)
        hps_test_fail("pipe failed");
    SEM(p, "lock", pthread_mutex_lock(&s->m));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* Child: the parent holds the mutex until it has read our trylock
         * answer, so it must be EBUSY; then we meet through the condvar. */
        int rc = pthread_mutex_trylock(&s->m);
        if (write(fds[1], &rc, sizeof rc) != (ssize_t)sizeof rc)
            _exit(10);
        if (pthread_mutex_lock(&s->m) != 0)
            _exit(11);
        s->flag = 1;
        pthread_cond_signal(&s->c);
        while (s->flag != 2)
            if (pthread_cond_wait(&s->c, &s->m) != 0)
                _exit(12);
        pthread_mutex_unlock(&s->m);
        _exit(0);
    }
    int child_try = -1;
    if (read(fds[0], &child_try, sizeof child_try) != (ssize_t)sizeof child_try)
        child_try = -1;
    close(fds[0]);
    close(fds[1]);
    SEM(p, "child_trylock", child_try);
    struct timespec dl = hps_test_deadline(CLOCK_REALTIME, 10000000000LL);
    int rc = 0;
    while (s->flag != 1 && rc == 0)
        rc = pthread_cond_timedwait(&s->c, &s->m, &dl);   /* releases m for the child */
    SEM(p, "cond_wait_for_child", rc);
    s->flag = 2;
    SEM(p, "cond_signal_child", pthread_cond_signal(&s->c));
    SEM(p, "unlock", pthread_mutex_unlock(&s->m));
    int st;
    waitpid(pid, &st, 0);
    SEM(p, "child_exit_status", WIFEXITED(st) ? WEXITSTATUS(st) : 128);
    SEM(p, "cond_destroy", pthread_cond_destroy(&s->c));
    SEM(p, "destroy", pthread_mutex_destroy(&s->m));
    munmap(s, sizeof *s);
}

static void prio_inherit(const char *p, int type)
{
    pthread_mutex_t m;
    pthread_mutexattr_t a;
    struct timespec past = sem_past();
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    SEM(p, "attr_setprotocol", pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT));
    SEM(p, "init", pthread_mutex_init(&m, &a));
    pthread_mutexattr_destroy(&a);
    SEM(p, "lock", pthread_mutex_lock(&m));
    SEM(p, "other_trylock", sem_other(sem_op_trylock, &m));
    SEM(p, "other_timedlock_near", sem_other(sem_op_timed_near, &m));
    if (type == PTHREAD_MUTEX_ERRORCHECK) {
        SEM(p, "relock", pthread_mutex_lock(&m));
        SEM(p, "timedlock_owner", pthread_mutex_timedlock(&m, &past));
    }
    SEM(p, "unlock", pthread_mutex_unlock(&m));
    SEM(p, "other_trylock_after_unlock", sem_other(sem_op_trylock, &m));
    SEM(p, "destroy", pthread_mutex_destroy(&m));
}

void sem_glibc_kinds_all(void)
{
    robust("robust.normal", PTHREAD_MUTEX_NORMAL);
    robust("robust.errorcheck", PTHREAD_MUTEX_ERRORCHECK);
    robust("robust.recursive", PTHREAD_MUTEX_RECURSIVE);
    pshared("pshared");
    prio_inherit("pi.normal", PTHREAD_MUTEX_NORMAL);
    prio_inherit("pi.errorcheck", PTHREAD_MUTEX_ERRORCHECK);
}

/* ---- C11 and condvar answers --------------------------------------------- */

static const char *thrd_name(int rc)
{
    return rc == thrd_success ? "thrd_success" : rc == thrd_busy ? "thrd_busy"
         : rc == thrd_timedout ? "thrd_timedout" : rc == thrd_nomem ? "thrd_nomem" : "thrd_error";
}
#define C11(what, expr) do { printf("c11.%s: %s\n", (what), thrd_name(expr)); fflush(stdout); } while (0)

static int c_trylock(void *m) { int rc = mtx_trylock(m); if (rc == thrd_success) mtx_unlock(m); return rc; }
static int c_timed_near(void *m)
{
    struct timespec t = sem_near(CLOCK_REALTIME);
    int rc = mtx_timedlock(m, &t);
    if (rc == thrd_success) mtx_unlock(m);
    return rc;
}

void sem_c11_and_cond(void)
{
    mtx_t m;
    cnd_t c;
    C11("mtx_init_plain", mtx_init(&m, mtx_plain));
    C11("lock", mtx_lock(&m));
    C11("other_trylock", sem_other(c_trylock, &m));
    C11("other_timedlock_near", sem_other(c_timed_near, &m));
    C11("unlock", mtx_unlock(&m));
    C11("other_trylock_free", sem_other(c_trylock, &m));
    mtx_destroy(&m);
    C11("mtx_init_recursive", mtx_init(&m, mtx_timed | mtx_recursive));
    C11("lock", mtx_lock(&m));
    C11("relock", mtx_lock(&m));
    C11("trylock_owner", mtx_trylock(&m));
    C11("unlock", mtx_unlock(&m));
    C11("unlock", mtx_unlock(&m));
    C11("other_trylock_still_held", sem_other(c_trylock, &m));
    C11("unlock_last", mtx_unlock(&m));
    C11("other_trylock_free", sem_other(c_trylock, &m));
    C11("cnd_init", cnd_init(&c));
    C11("cnd_signal_nobody", cnd_signal(&c));
    C11("cnd_broadcast_nobody", cnd_broadcast(&c));
    C11("lock", mtx_lock(&m));
    struct timespec past = sem_past();
    C11("cnd_timedwait_past", cnd_timedwait(&c, &m, &past));
    C11("other_trylock_after_wait", sem_other(c_trylock, &m));
    C11("unlock", mtx_unlock(&m));
    cnd_destroy(&c);
    mtx_destroy(&m);

    pthread_cond_t pc = PTHREAD_COND_INITIALIZER;
    pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
    struct timespec bad = sem_badnsec();
    SEM("cond", "signal_nobody", pthread_cond_signal(&pc));
    SEM("cond", "broadcast_nobody", pthread_cond_broadcast(&pc));
    SEM("cond", "lock", pthread_mutex_lock(&pm));
    SEM("cond", "timedwait_past", pthread_cond_timedwait(&pc, &pm, &past));
    SEM("cond", "timedwait_badnsec", pthread_cond_timedwait(&pc, &pm, &bad));
    SEM("cond", "clockwait_badclock", pthread_cond_clockwait(&pc, &pm, CLOCK_PROCESS_CPUTIME_ID, &past));
    SEM("cond", "other_trylock_still_held", sem_other(sem_op_trylock, &pm));
    SEM("cond", "unlock", pthread_mutex_unlock(&pm));
    /* An errorcheck mutex the caller does not own: EPERM, no wait. */
    pthread_mutex_t em = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
    struct timespec near = sem_near(CLOCK_REALTIME);
    SEM("cond", "timedwait_errorcheck_unowned", pthread_cond_timedwait(&pc, &em, &near));
    SEM("cond", "errorcheck_trylock_after", pthread_mutex_trylock(&em));
    SEM("cond", "errorcheck_unlock", pthread_mutex_unlock(&em));
    SEM("cond", "destroy", pthread_cond_destroy(&pc));
}
