// SPDX-License-Identifier: MIT
/*
 * Fatal errors: one line naming the call, then the whole job ends with a
 * non-zero status.  OpenSHMEM leaves these cases undefined; ending the job
 * with a clear line beats a wrong answer or a hang on the other PEs.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"
#include "runtime/errline.h"
#include "runtime/runtime.h"

#define HPS_FATAL_STATUS 1

static void __attribute__((noreturn)) die(void)
{
    /* What the program printed so far still reaches the user. */
    fflush(stdout);
    if (hps_shmem_sh.rt_up)
        hps_rt_abort(HPS_FATAL_STATUS);
    /* Before init (or after finalize) there is no job to take down: this
     * PE's non-zero exit is what the launcher acts on. */
    _exit(HPS_FATAL_STATUS);
}

void hps_shmem_fatal(const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hps_shmem_verrline(fn, fmt, ap);
    va_end(ap);
    die();
}

void hps_shmem_bad_target(const char *fn, const void *addr, size_t len, int pe)
{
    if (hps_shmem_sh.state == HPS_ST_NEVER)
        hps_shmem_errline(fn, "called before shmem_init");
    else if (hps_shmem_sh.state == HPS_ST_FINALIZED || hps_shmem_sh.npes == 0)
        hps_shmem_errline(fn, "called after shmem_finalize");
    else if ((unsigned)pe >= hps_shmem_sh.npes)
        hps_shmem_errline(fn, "PE %d out of range 0..%u", pe, hps_shmem_sh.npes - 1);
    else {
        size_t off;
        int r = hps_region_of(addr, &off);
        const char *what = r == HPS_REG_HEAP ? "symmetric heap" : "data segment";
        if (r >= 0)
            hps_shmem_errline(fn, "%zu bytes at %p run past the end of the %s", len, addr, what);
        else
            hps_shmem_errline(
                fn, "address %p is not symmetric (symmetric heap %p..%p, data segment %p..%p)",
                addr, (void *)hps_shmem_sh.base[HPS_REG_HEAP],
                (void *)(hps_shmem_sh.base[HPS_REG_HEAP] + hps_shmem_sh.size[HPS_REG_HEAP]),
                (void *)hps_shmem_sh.base[HPS_REG_DATA],
                (void *)(hps_shmem_sh.base[HPS_REG_DATA] + hps_shmem_sh.size[HPS_REG_DATA]));
    }
    die();
}

void hps_shmem_transport_failed(const char *fn)
{
    /* The transport printed the libfabric error already. */
    hps_shmem_errline(fn, "the libfabric transport failed");
    die();
}
