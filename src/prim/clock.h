/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the monotonic clock and short sleeps that the lock waits
 * (src/lock/wait.c), the OpenSHMEM waits (src/shmem/wait.c) and the
 * libfabric transport's backoff and progress thread share.
 *
 * Promise: hps_sleep_ns() is NOT a cancellation point.  Lock waits nap in
 * it, and a lock must not be one (pthread_mutex_lock is not): glibc's
 * nanosleep and clock_nanosleep are cancellation points, so a pending
 * deferred cancellation would strike a thread in the middle of a lock
 * call and, for a queue lock, leave its node in the queue.  The raw
 * system call through syscall() is not one (glibc's syscall() never acts
 * on cancellation).  A signal ends the nap early; callers re-check their
 * condition in a loop anyway.
 */
#ifndef HPS_PRIM_CLOCK_H
#define HPS_PRIM_CLOCK_H

#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t hps_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void hps_sleep_ns(uint64_t ns)
{
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
                           .tv_nsec = (long)(ns % 1000000000ull) };
    (void)syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
}

#endif
