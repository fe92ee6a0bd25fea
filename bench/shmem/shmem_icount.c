/* SPDX-License-Identifier: MIT */
/*
 * shmem_icount.c - hps-shmem-icount: the calls whose instructions
 * `hpsync bench shmem` counts with callgrind.  PE 0 calls shmem_int_p to
 * PE 1 N times, completes them with one shmem_quiet, then calls shmem_quiet
 * N more times with nothing outstanding; PE 1 waits in a barrier.  Run
 * under `valgrind --tool=callgrind --toggle-collect=shmem_int_p` (or
 * =shmem_quiet) with N and 2N: the difference divided by N is the per-call
 * cost, free of one-time costs (first touch, connection set-up).
 *
 *   hps-shmem-icount N [quiet|heap]
 * With "quiet" PE 0 makes no puts at all, so every shmem_quiet it calls is
 * idle (the one completing the puts polls a variable number of times).
 * The target is a global (the data segment); with "heap" it is on the
 * symmetric heap, the region every lookup tries first.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int target;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: %s N\n", argv[0]);
        return 2;
    }
    shmem_init();
    if (shmem_n_pes() != 2) {
        fprintf(stderr, "%s: needs exactly 2 PEs\n", argv[0]);
        shmem_global_exit(2);
    }
    int only_quiet = argc > 2 && argv[2][0] == 'q';
    int *dest = argc > 2 && argv[2][0] == 'h' ? shmem_malloc(sizeof *dest) : &target;
    if (!dest) {
        fprintf(stderr, "%s: shmem_malloc failed\n", argv[0]);
        shmem_global_exit(2);
    }
    /* Complete what start-up left outstanding (the barrier's atomics over
     * libfabric) through the context twin, which callgrind does not
     * collect, so every counted shmem_quiet is idle. */
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    if (shmem_my_pe() == 0) {
        for (long i = 0; i < n && !only_quiet; i++) {
            shmem_int_p(dest, (int)i, 1);
            /* Keep the provider's queue from filling (uncounted: a full
             * queue's retries are not the critical path). */
            if (i % 64 == 63)
                shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
        }
        if (!only_quiet)
            shmem_quiet();
        for (long i = 0; i < n; i++)
            shmem_quiet();
        printf("{\"program\": \"hps-shmem-icount\", \"n\": %ld}\n", n);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
