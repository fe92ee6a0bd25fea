/* SPDX-License-Identifier: MIT */
/*
 * semantics.h - the pieces shared by the files of the `semantics` program.
 *
 * The program runs a fixed list of call sequences and prints one line per
 * call, "<case>: <result>", where the result is an errno name (or a C11
 * thrd_* name).  Run bare it records glibc's answers; run under the
 * interposer its output must be identical (semantics_compare.sh diffs them).
 * Only sequences that POSIX or glibc define are included: nothing that is
 * undefined behaviour (such as unlocking an unlocked normal mutex).
 */
#ifndef HPS_TEST_SEMANTICS_H
#define HPS_TEST_SEMANTICS_H

#include <pthread.h>
#include <stdio.h>
#include "harness.h"

/* Print "<prefix>.<what>: <errno name>". */
void sem_report(const char *prefix, const char *what, int rc);
#define SEM(prefix, what, expr) sem_report((prefix), (what), (expr))

/* Run fn(arg) on a fresh thread and return its result. */
int sem_other(int (*fn)(void *), void *arg);

/* Mutex operations for sem_other(): trylock (unlocking again on success)
 * and a timed lock with a near deadline. */
int sem_op_trylock(void *m);
int sem_op_timed_near(void *m);

/* Deadlines: already past, near future (20 ms), malformed (tv_nsec = 1e9). */
struct timespec sem_past(void);
struct timespec sem_near(clockid_t clock);
struct timespec sem_badnsec(void);

/* The sections; each prints its own lines. */
void sem_mutex_all(void);
void sem_rwlock_all(void);
void sem_glibc_kinds_all(void);     /* robust, pshared, PI */
void sem_c11_and_cond(void);
void sem_semaphores_barriers_all(void);

#endif
