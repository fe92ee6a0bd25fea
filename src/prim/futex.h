/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the Linux futex calls hpsync needs, nothing more.
 *
 * Promise: hps_futex_wait() returns 0 when woken (or spuriously), EAGAIN when
 * *addr != val at call time, ETIMEDOUT when the absolute deadline passed and
 * EINTR on a signal; callers always re-check their condition in a loop.
 * Deadlines are absolute on CLOCK_REALTIME or CLOCK_MONOTONIC, which is what
 * FUTEX_WAIT_BITSET takes directly.
 */
#ifndef HPS_PRIM_FUTEX_H
#define HPS_PRIM_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline int hps_futex_wait(void *addr, uint32_t val, clockid_t clock,
                                 const struct timespec *abstime, int shared)
{
    int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);
    if (abstime && clock == CLOCK_REALTIME)
        op |= FUTEX_CLOCK_REALTIME;
    long r = syscall(SYS_futex, addr, op, val, abstime, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

/* Returns how many threads were woken (0 on error). */
static inline int hps_futex_wake(void *addr, int n, int shared)
{
    long r = syscall(SYS_futex, addr, FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG), n, NULL, NULL, 0);
    return r > 0 ? (int)r : 0;
}

#endif
