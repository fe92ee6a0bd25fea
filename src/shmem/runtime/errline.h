/* SPDX-License-Identifier: MIT */
/*
 * errline.h - the one error line of libhpsync-shmem, shared by every layer
 * (the API's checks, the runtime, both transports).
 *
 * Promise: "hpsync-shmem: <fn>: <message>\n" on fd 2 with exactly one
 * write(2), so the lines of several PEs sharing stderr do not interleave.
 * Formatted on the stack (no allocation, no stdio): usable when malloc or
 * stdio cannot be trusted.  A message longer than the line's 512 bytes is
 * cut short; the line still ends in a newline.
 */
#ifndef HPS_SHMEM_ERRLINE_H
#define HPS_SHMEM_ERRLINE_H

#include <stdarg.h>

void hps_shmem_errline(const char *fn, const char *fmt, ...)
    __attribute__((cold, format(printf, 2, 3)));
void hps_shmem_verrline(const char *fn, const char *fmt, va_list ap)
    __attribute__((cold, format(printf, 2, 0)));

#endif
