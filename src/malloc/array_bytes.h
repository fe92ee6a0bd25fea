/* SPDX-License-Identifier: MIT */
/*
 * array_bytes.h - count * size for calloc and reallocarray, shared by the
 * CIA allocator (api.c) and RAND (rand.c).
 */
#ifndef HPS_MALLOC_ARRAY_BYTES_H
#define HPS_MALLOC_ARRAY_BYTES_H

#include <errno.h>
#include <stddef.h>

/* 0 and *n = count * size; or, when that overflows, -1 with errno ENOMEM
 * (glibc's answer: the caller returns NULL). */
static inline int hps_malloc_array_bytes(size_t count, size_t size, size_t *n)
{
    if (__builtin_mul_overflow(count, size, n)) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

#endif
