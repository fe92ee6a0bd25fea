/* SPDX-License-Identifier: MIT */
/*
 * hps_rand.h - xorshift64 (Marsaglia): a few instructions per number, and a
 * fixed seed replays the same sequence, which benchmarks (the same requests
 * for every allocator) and tests (reproducible failures) both want.  Not for
 * anything that needs statistical quality.  The state must start nonzero.
 */
#ifndef HPS_RAND_H
#define HPS_RAND_H

#include <stdint.h>

static inline uint64_t hps_xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

#endif
