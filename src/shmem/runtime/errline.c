/* SPDX-License-Identifier: MIT */
/*
 * errline.c - see errline.h.  Its own file, with the runtime's sources
 * (runtime.cmake), so that everything linking any part of the library has
 * it: libhpsync-shmem, the runtime's static library and the libfabric
 * transport's test, which links the transport without the runtime.
 */
#include "errline.h"

#include <stdio.h>
#include <unistd.h>

#define HPS_ERRLINE_MAX 512

void hps_shmem_verrline(const char *fn, const char *fmt, va_list ap)
{
    char buf[HPS_ERRLINE_MAX];
    /* The last byte is kept for the newline: both formats get room - len,
     * so each writes at most room - len - 1 characters and its NUL. */
    const size_t room = sizeof buf - 1;
    int n = snprintf(buf, room, "hpsync-shmem: %s: ", fn);
    size_t len = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
    int m = vsnprintf(buf + len, room - len, fmt, ap);
    if (m > 0)
        len += (size_t)m < room - len ? (size_t)m : room - len - 1;
    buf[len++] = '\n';
    /* One write(2): PEs share stderr, and whole lines keep it readable. */
    (void)!write(2, buf, len);
}

void hps_shmem_errline(const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hps_shmem_verrline(fn, fmt, ap);
    va_end(ap);
}
