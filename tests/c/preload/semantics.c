// SPDX-License-Identifier: MIT
/*
 * semantics: pthread mutex call sequences, one line per call (see
 * semantics.h).  Every mutex type is covered twice: initialised with
 * pthread_mutex_init and with its static initializer, since the interposer
 * must accept both without having seen an init call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include "semantics.h"

void sem_report(const char *prefix, const char *what, int rc)
{
    printf("%s.%s: %s\n", prefix, what, hps_errno_name(rc));
    fflush(stdout);
}

struct other_call { int (*fn)(void *); void *arg; int rc; };

static void *other_main(void *p)
{
    struct other_call *c = p;
    c->rc = c->fn(c->arg);
    return NULL;
}

int sem_other(int (*fn)(void *), void *arg)
{
    struct other_call c = { fn, arg, -1 };
    pthread_t t;
    if (pthread_create(&t, NULL, other_main, &c) != 0)
        hps_test_fail("pthread_create failed");
    pthread_join(t, NULL);
    return c.rc;
}

struct timespec sem_past(void) { return (struct timespec){ 1, 0 }; }
struct timespec sem_near(clockid_t clock) { return hps_test_deadline(clock, 20000000); }
struct timespec sem_badnsec(void)
{
    /* In the future, so only the nanoseconds make it malformed. */
    struct timespec t = hps_test_deadline(CLOCK_REALTIME, 1000000000LL);
    t.tv_nsec = 1000000000L;
    return t;
}

/* ---- operations run by a second thread on a mutex ------------------------ */

int sem_op_trylock(void *m)
{
    int rc = pthread_mutex_trylock(m);
    if (rc == 0)
        pthread_mutex_unlock(m);     /* leave it as we found it */
    return rc;
}
static int o_timed_past(void *m) { struct timespec t = sem_past(); return pthread_mutex_timedlock(m, &t); }
int sem_op_timed_near(void *m) { struct timespec t = sem_near(CLOCK_REALTIME); return pthread_mutex_timedlock(m, &t); }
static int o_timed_badnsec(void *m) { struct timespec t = sem_badnsec(); return pthread_mutex_timedlock(m, &t); }
static int o_clock_mono_near(void *m)
{
    struct timespec t = sem_near(CLOCK_MONOTONIC);
    return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &t);
}
static int o_clock_bad(void *m)
{
    struct timespec t = sem_near(CLOCK_MONOTONIC);
    return pthread_mutex_clocklock(m, CLOCK_PROCESS_CPUTIME_ID, &t);
}
static int o_unlock(void *m) { return pthread_mutex_unlock(m); }
static int o_lock(void *m) { return pthread_mutex_lock(m); }      /* and never unlock */

enum mtype { T_NORMAL, T_DEFAULT, T_RECURSIVE, T_ERRORCHECK, T_ADAPTIVE };

/* The sequences every type shares: contention seen from another thread. */
static void contended(const char *p, pthread_mutex_t *m, enum mtype t)
{
    SEM(p, "lock", pthread_mutex_lock(m));
    SEM(p, "other_trylock", sem_other(sem_op_trylock, m));
    SEM(p, "other_timedlock_past", sem_other(o_timed_past, m));
    SEM(p, "other_timedlock_near", sem_other(sem_op_timed_near, m));
    SEM(p, "other_timedlock_badnsec", sem_other(o_timed_badnsec, m));
    SEM(p, "other_clocklock_monotonic_near", sem_other(o_clock_mono_near, m));
    SEM(p, "other_clocklock_badclock", sem_other(o_clock_bad, m));
    if (t == T_RECURSIVE || t == T_ERRORCHECK)
        SEM(p, "other_unlock", sem_other(o_unlock, m));
    SEM(p, "destroy_locked", pthread_mutex_destroy(m));
    SEM(p, "unlock", pthread_mutex_unlock(m));
    SEM(p, "other_trylock_after_unlock", sem_other(sem_op_trylock, m));
}

/* Sequences by the owner, which differ per type. */
static void owner(const char *p, pthread_mutex_t *m, enum mtype t)
{
    struct timespec past = sem_past(), bad = sem_badnsec(), near = sem_near(CLOCK_MONOTONIC);
    SEM(p, "trylock_free", pthread_mutex_trylock(m));
    switch (t) {
    case T_RECURSIVE:
        SEM(p, "relock", pthread_mutex_lock(m));
        SEM(p, "trylock_owner", pthread_mutex_trylock(m));
        SEM(p, "timedlock_owner_badnsec", pthread_mutex_timedlock(m, &bad));
        SEM(p, "clocklock_owner", pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &near));
        /* Depth is 5 now: four unlocks leave it held, the fifth frees it. */
        for (int i = 1; i <= 4; i++) {
            SEM(p, "unlock_nested", pthread_mutex_unlock(m));
            SEM(p, "other_trylock_nested", sem_other(sem_op_trylock, m));
        }
        SEM(p, "unlock_last", pthread_mutex_unlock(m));
        SEM(p, "other_trylock_free", sem_other(sem_op_trylock, m));
        SEM(p, "unlock_unlocked", pthread_mutex_unlock(m));
        break;
    case T_ERRORCHECK:
        SEM(p, "relock", pthread_mutex_lock(m));
        SEM(p, "trylock_owner", pthread_mutex_trylock(m));
        SEM(p, "timedlock_owner", pthread_mutex_timedlock(m, &past));
        SEM(p, "timedlock_owner_badnsec", pthread_mutex_timedlock(m, &bad));
        SEM(p, "clocklock_owner", pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &near));
        SEM(p, "unlock", pthread_mutex_unlock(m));
        SEM(p, "unlock_unlocked", pthread_mutex_unlock(m));
        break;
    case T_NORMAL:
        /* A normal mutex deadlocks on relock; a timed relock ends in ETIMEDOUT. */
        SEM(p, "trylock_owner", pthread_mutex_trylock(m));
        SEM(p, "timedlock_owner_past", pthread_mutex_timedlock(m, &past));
        SEM(p, "unlock", pthread_mutex_unlock(m));
        break;
    default:
        SEM(p, "trylock_owner", pthread_mutex_trylock(m));
        SEM(p, "unlock", pthread_mutex_unlock(m));
        break;
    }
    /* Free mutex: a malformed deadline is not looked at when nothing blocks,
     * but a bad clock id always is. */
    SEM(p, "timedlock_free_badnsec", pthread_mutex_timedlock(m, &bad));
    SEM(p, "unlock_after_timedlock", pthread_mutex_unlock(m));
    SEM(p, "clocklock_free_badclock", pthread_mutex_clocklock(m, CLOCK_PROCESS_CPUTIME_ID, &near));
    SEM(p, "clocklock_free_realtime", pthread_mutex_clocklock(m, CLOCK_REALTIME, &past));
    SEM(p, "unlock_after_clocklock", pthread_mutex_unlock(m));
}

static void one_type(const char *name, pthread_mutex_t *m, enum mtype t, int via_init)
{
    char p[64];
    snprintf(p, sizeof p, "mutex.%s.%s", name, via_init ? "init" : "static");
    if (via_init) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_DEFAULT,
                                     PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
                                     PTHREAD_MUTEX_ADAPTIVE_NP };
        SEM(p, "attr_settype", pthread_mutexattr_settype(&a, types[t]));
        SEM(p, "init", pthread_mutex_init(m, t == T_DEFAULT ? NULL : &a));
        pthread_mutexattr_destroy(&a);
    }
    contended(p, m, t);
    owner(p, m, t);
    SEM(p, "consistent_not_robust", pthread_mutex_consistent(m));
    if (t == T_RECURSIVE || t == T_ERRORCHECK) {
        /* The owner thread exits holding it: still locked, still not ours. */
        pthread_mutex_t dead;
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_settype(&a, t == T_RECURSIVE ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_ERRORCHECK);
        pthread_mutex_init(&dead, &a);
        pthread_mutexattr_destroy(&a);
        SEM(p, "other_lock_then_exit", sem_other(o_lock, &dead));
        SEM(p, "unlock_owner_exited", pthread_mutex_unlock(&dead));
        SEM(p, "trylock_owner_exited", pthread_mutex_trylock(&dead));
    }
    SEM(p, "destroy", pthread_mutex_destroy(m));
    /* A destroyed mutex may be initialised again and used. */
    SEM(p, "reinit", pthread_mutex_init(m, NULL));
    SEM(p, "reinit_lock", pthread_mutex_lock(m));
    SEM(p, "reinit_unlock", pthread_mutex_unlock(m));
    SEM(p, "reinit_destroy", pthread_mutex_destroy(m));
}

void sem_mutex_all(void)
{
    static pthread_mutex_t s_normal = PTHREAD_MUTEX_INITIALIZER;
    static pthread_mutex_t s_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    static pthread_mutex_t s_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
    static pthread_mutex_t s_adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
    pthread_mutex_t m;

    memset(&m, 0xa5, sizeof m);              /* init must not rely on zeroed memory */
    one_type("normal", &m, T_NORMAL, 1);
    memset(&m, 0xa5, sizeof m);
    one_type("default", &m, T_DEFAULT, 1);
    memset(&m, 0xa5, sizeof m);
    one_type("recursive", &m, T_RECURSIVE, 1);
    memset(&m, 0xa5, sizeof m);
    one_type("errorcheck", &m, T_ERRORCHECK, 1);
    memset(&m, 0xa5, sizeof m);
    one_type("adaptive_np", &m, T_ADAPTIVE, 1);
    /* PTHREAD_MUTEX_INITIALIZER is the DEFAULT type, not NORMAL. */
    one_type("default", &s_normal, T_DEFAULT, 0);
    one_type("recursive", &s_recursive, T_RECURSIVE, 0);
    one_type("errorcheck", &s_errorcheck, T_ERRORCHECK, 0);
    one_type("adaptive_np", &s_adaptive, T_ADAPTIVE, 0);
}

int main(void)
{
    hps_test_set_name("semantics");
    hps_test_watchdog(100);
    sem_mutex_all();
    sem_rwlock_all();
    sem_glibc_kinds_all();
    sem_c11_and_cond();
    sem_semaphores_barriers_all();
    return 0;
}
