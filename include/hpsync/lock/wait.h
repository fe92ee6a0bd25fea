/* SPDX-License-Identifier: MIT */
/*
 * hpsync/lock/wait.h - how every spinning lock waits.
 *
 * Promise: a waiter never burns a core for ever. It spins (PAUSE bursts that
 * grow exponentially) for a short while, then calls sched_yield() so that a
 * preempted lock holder or queue successor can run when threads outnumber
 * cores, and only after a long wait (a lock held for milliseconds) does it
 * sleep in growing naps capped at 1 ms.  Queue locks are FIFO among running
 * threads only: while the head of a queue yields or naps, a newcomer may take
 * the free lock (hpsync/lock/queued.h says why), so the naps bound how late a
 * long-waiting thread sees its turn, not the order of turns.
 * No step is a cancellation point (a lock must not be one): the naps are
 * raw system calls, not nanosleep.
 */
#ifndef HPSYNC_LOCK_WAIT_H
#define HPSYNC_LOCK_WAIT_H

#include <stdint.h>
#include <time.h>
#include "hpsync/pr.h"

HPS_EXTERN_C_BEGIN

typedef struct hps_wait { uint32_t n; } hps_wait_t;
#define HPS_WAIT_INIT { 0 }

/* Tunables (process-wide, read once from HPSYNC_SPIN / HPSYNC_YIELDS). */
extern uint32_t hps_wait_spin_limit;   /* spin rounds before yielding */
extern uint32_t hps_wait_yield_limit;  /* yields before napping */

/*
 * A process's fork generation, never 0: it changes in a fork()ed child.
 * Lock fields that name "some thread is doing X right now" store it instead
 * of a plain 1, so the child does not wait for threads that did not survive
 * the fork (they were copied mid-wait into its memory, but not its threads).
 */
extern uint32_t hps_fork_tag;

/* One step of waiting; call it in the loop that re-checks the condition. */
void hps_wait_step(hps_wait_t *w);

/*
 * Deadline helpers shared by the timed locks.  A deadline is an absolute time
 * on `clock` as in pthread_mutex_clocklock.
 *  - hps_deadline_valid(): non-zero when abstime is non-NULL and follows the
 *    POSIX rule (0 <= tv_nsec < 1e9).
 *  - hps_deadline_check(): 0, or EINVAL when abstime is not valid or `clock`
 *    is neither CLOCK_REALTIME nor CLOCK_MONOTONIC (what every timed lock
 *    accepts).
 *  - hps_deadline_passed(): reads `clock`; 0 while the deadline is ahead,
 *    ETIMEDOUT once it is reached, EINVAL when the clock cannot be read.
 */
int hps_deadline_valid(const struct timespec *abstime);
int hps_deadline_check(clockid_t clock, const struct timespec *abstime);
int hps_deadline_passed(clockid_t clock, const struct timespec *abstime);

HPS_EXTERN_C_END

#endif
