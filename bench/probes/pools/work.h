/* SPDX-License-Identifier: MIT */
/*
 * work.h - the two workloads of the pools probe, each checking its result.
 *
 *   fft     - radix-2 decimation-in-time FFT of n complex points; every split
 *             above the cutoff spawns the even half as a task, computes the
 *             odd half itself, waits, then combines (a fine-grained binary
 *             task tree: about 2n/cutoff tasks).
 *   matmul  - C += A*B on n x n doubles by recursive 2x2 blocking, levels
 *             deep; each level runs two phases of four block products (three
 *             spawned, one inline), so 6 * (8^levels - 1) / 7 tasks.
 *
 * A workload owns its root task; hps_pool_run() it, then check it.
 */
#ifndef HPS_PROBE_WORK_H
#define HPS_PROBE_WORK_H

#include <stddef.h>
#include "pool.h"

/*
 * One zeroed allocation holding a workload's head (head bytes) followed by k
 * buffers of bytes[i] each, 64-byte aligned; bufs[i] points at buffer i.
 * Released with free() on the head.  NULL after logging "out of memory for
 * <what>".
 */
void *work_alloc(size_t head, int k, const size_t bytes[], void *bufs[], const char *what);

struct fft_work;
/* n and cutoff powers of two, 1 <= cutoff <= n; NULL after logging. */
struct fft_work *fft_new(size_t n, size_t cutoff);
hps_task_t *fft_root(struct fft_work *f);
/* 1 when the last run's output is the DFT of the input: every bin against a
 * direct DFT when n <= 1024, else 32 bins spread over the spectrum plus
 * Parseval's identity over all of them. */
int fft_check(const struct fft_work *f);
void fft_free(struct fft_work *f);

struct mm_work;
/* n divisible by 2^max_levels; NULL after logging. */
struct mm_work *mm_new(int n, int max_levels);
/* Clear C and return a root that recurses levels deep. */
hps_task_t *mm_root(struct mm_work *m, int levels);
/* 1 when C equals the naive product exactly (entries are small integers,
 * so every sum is exact in double whatever the order). */
int mm_check(const struct mm_work *m);
void mm_free(struct mm_work *m);

#endif
