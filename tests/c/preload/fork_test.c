// SPDX-License-Identifier: MIT
/*
 * fork() and the interposer.
 *   fork_test basic    parent threads are busy on their own mutexes; the
 *                      forking thread holds one normal mutex at fork.  The
 *                      child unlocks that one, then uses normal, recursive
 *                      and errorcheck mutexes and a condvar timed wait.
 *   fork_test waiters  the forking thread holds a normal mutex while another
 *                      parent thread is blocked on it; in the child (where
 *                      that waiter does not exist) unlock and relock must
 *                      still work, as they do with glibc.
 * Each child reports through its exit status; a hung child is killed by its
 * own watchdog.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"

#define FORKS 10

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;      /* held at fork */
static pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static atomic_int stop;

/* Parent background load: threads hammering mutexes the child never uses. */
static void *busy(void *arg)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    unsigned long *n = arg;
    while (!atomic_load(&stop)) {
        pthread_mutex_lock(&m);
        ++*n;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void child_checks(int held_at_fork)
{
    hps_test_set_name("fork_test[child]");
    hps_test_watchdog(20);
    if (held_at_fork) {
        /* The child's only thread is the copy of the one that locked it. */
        HPS_CHECK_RC("child: unlock of the mutex held at fork", pthread_mutex_unlock(&held), 0);
        HPS_CHECK_RC("child: relock it", pthread_mutex_lock(&held), 0);
        HPS_CHECK_RC("child: trylock while held", pthread_mutex_trylock(&held), EBUSY);
        HPS_CHECK_RC("child: unlock again", pthread_mutex_unlock(&held), 0);
    }
    HPS_CHECK_RC("child: normal lock", pthread_mutex_lock(&normal), 0);
    HPS_CHECK_RC("child: normal unlock", pthread_mutex_unlock(&normal), 0);

    HPS_CHECK_RC("child: recursive lock", pthread_mutex_lock(&recursive), 0);
    HPS_CHECK_RC("child: recursive relock", pthread_mutex_lock(&recursive), 0);
    HPS_CHECK_RC("child: recursive trylock", pthread_mutex_trylock(&recursive), 0);
    for (int i = 0; i < 3; i++)
        HPS_CHECK_RC("child: recursive unlock", pthread_mutex_unlock(&recursive), 0);
    HPS_CHECK_RC("child: recursive unlock when free", pthread_mutex_unlock(&recursive), EPERM);

    HPS_CHECK_RC("child: errorcheck lock", pthread_mutex_lock(&errorcheck), 0);
    HPS_CHECK_RC("child: errorcheck relock", pthread_mutex_lock(&errorcheck), EDEADLK);
    HPS_CHECK_RC("child: errorcheck unlock", pthread_mutex_unlock(&errorcheck), 0);
    HPS_CHECK_RC("child: errorcheck unlock when free", pthread_mutex_unlock(&errorcheck), EPERM);

    HPS_CHECK_RC("child: lock for the timed wait", pthread_mutex_lock(&normal), 0);
    struct timespec dl = hps_test_deadline(CLOCK_REALTIME, 20000000);
    int rc;
    while ((rc = pthread_cond_timedwait(&cond, &normal, &dl)) == 0)
        ;
    HPS_CHECK_RC("child: cond timedwait", rc, ETIMEDOUT);
    HPS_CHECK_RC("child: unlock after the wait", pthread_mutex_unlock(&normal), 0);

    /* And threads created in the child still exclude each other. */
    static pthread_mutex_t m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    hps_stress_ops_t ops;
    hps_stress_pthread_ops(&ops, "fork_test[child stress]", PTHREAD_MUTEX_RECURSIVE);
    hps_stress_cfg_t cfg = { .ops = &ops, .lock = &m, .threads = 3, .iters = 5000 };
    hps_stress_run(&cfg);
    _exit(0);
}

static void wait_child(pid_t pid, const char *what)
{
    int st;
    if (waitpid(pid, &st, 0) != pid)
        hps_test_fail("waitpid failed");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        hps_test_fail("%s: child %s %d (see its FAIL line above)", what,
                      WIFEXITED(st) ? "exited with" : "killed by signal",
                      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static void run_basic(void)
{
    pthread_t t[3];
    unsigned long n[3] = { 0 };
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, busy, &n[i]);
    for (int f = 0; f < FORKS; f++) {
        int hold = f & 1;
        if (hold)
            HPS_CHECK_RC("lock before fork", pthread_mutex_lock(&held), 0);
        pid_t pid = fork();
        if (pid == 0)
            child_checks(hold);
        if (hold)
            HPS_CHECK_RC("parent unlock after fork", pthread_mutex_unlock(&held), 0);
        wait_child(pid, "basic");
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("%s: ok: %d forks\n", hps_test_name(), FORKS);
}

/* A thread that queues up on `held` and counts its successes. */
static atomic_int waiter_in;
static void *blocked_waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiter_in, 1);
    pthread_mutex_lock(&held);
    pthread_mutex_unlock(&held);
    return NULL;
}

static void run_waiters(void)
{
    for (int f = 0; f < FORKS; f++) {
        pthread_t w;
        HPS_CHECK_RC("lock before fork", pthread_mutex_lock(&held), 0);
        atomic_store(&waiter_in, 0);
        pthread_create(&w, NULL, blocked_waiter, NULL);
        while (!atomic_load(&waiter_in))
            sched_yield();
        /* Give it time to get past the fast path and queue/park. */
        struct timespec nap = { 0, 20000000 };
        nanosleep(&nap, NULL);
        pid_t pid = fork();
        if (pid == 0)
            child_checks(1);
        HPS_CHECK_RC("parent unlock after fork", pthread_mutex_unlock(&held), 0);
        pthread_join(w, NULL);
        wait_child(pid, "waiters");
    }
    printf("%s: ok: %d forks with a waiter queued on the held mutex\n", hps_test_name(), FORKS);
}

static const hps_test_case_t cases[] = {
    { "basic", .run = run_basic },
    { "waiters", .run = run_waiters },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("fork_test", cases, 60, 0);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
