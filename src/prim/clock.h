/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the monotonic clock and short sleeps that waits (sync.c) and
 * the libfabric transport's backoff and progress thread share.
 */
#ifndef HPS_PRIM_CLOCK_H
#define HPS_PRIM_CLOCK_H

#include <stdint.h>
#include <time.h>

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
    nanosleep(&ts, NULL);
}

#endif
