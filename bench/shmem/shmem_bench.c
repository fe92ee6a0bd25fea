/* SPDX-License-Identifier: MIT */
/*
 * shmem_bench.c - hps-bench-shmem: OpenSHMEM latencies and rates at 2 PEs.
 *
 * Standard OpenSHMEM 1.4/1.5 calls only, so the same source builds against
 * hpsync's shmem.h (CMake target hps-bench-shmem) and against any other
 * implementation's (`hpsync bench shmem` compiles it with Open MPI's oshcc).
 * No hpsync bench library either: JSON is printed with printf by PE 0.
 *
 * PE 0 times, PE 1 is the target.  In the one-sided tests PE 1 waits in
 * shmem_barrier_all (inside the library, so a library that needs the target
 * to progress gets it).  Each figure is `reps` batches of `iters`
 * operations timed with CLOCK_MONOTONIC; iters is calibrated so one batch
 * takes about --time-ms / reps.  Reported: ns per operation, the best and
 * the median batch.
 *
 *   put_quiet  SIZE  shmem_putmem(SIZE) + shmem_quiet to a buffer PE 1 does
 *                    not read: the cost of issuing and completing a put
 *   get        SIZE  shmem_getmem(SIZE) from PE 1
 *   pingpong   8     round trip / 2: PE 0 shmem_long_p(flag on PE 1, i),
 *                    PE 1 waits for it (wait_until) and answers the same
 *                    way; both PEs run the loop
 *   put_rate   8     a burst of `burst` shmem_long_p (consecutive longs)
 *                    then one shmem_quiet: ns per put (rate = 1e9 / ns)
 *   fetch_add  8     shmem_long_atomic_fetch_add to PE 1
 *   cswap      8     shmem_long_atomic_compare_swap to PE 1
 *   barrier    0     shmem_barrier_all, both PEs
 *
 *   hps-bench-shmem [--time-ms T] [--reps R] [--max-size BYTES] [--burst N]
 * (Open MPI's OSHMEM crashes in shmem_finalize after the results are out;
 * bench_shmem.py keeps the complete document and notes the exit status.)
 */
#define _GNU_SOURCE
#include <shmem.h>
#ifdef HPSYNC_SHMEM_H
#include <shmemx.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 64
#define MAX_BURST 65536

static long pp_flag;              /* ping-pong flag, data segment */
static long agreed;               /* iteration count PE 0 hands to PE 1 */
static long pad_[16];             /* keep pp_flag and agreed off the atomics' line */
static long amo_word;             /* atomics target */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct opts {
    double time_ms;
    int reps;
    size_t max_size;
    int burst;
} opts_t;

typedef struct state {
    opts_t o;
    char *sbuf;                   /* symmetric, max_size */
    char *lbuf;                   /* local, max_size */
    long *rate_buf;               /* symmetric, burst longs */
    int first;                    /* first JSON result printed? */
} state_t;

enum { T_PUT, T_GET, T_RATE, T_FADD, T_CSWAP, T_PINGPONG, T_BARRIER };
static const char *const names[] = { "put_quiet", "get", "put_rate", "fetch_add", "cswap",
                                     "pingpong", "barrier" };

static long pp_round;             /* ping-pong sequence number, same on both PEs */

/* Run `n` operations of test t (on this PE); returns nothing useful. */
static void run_ops(state_t *s, int t, size_t size, long n)
{
    int peer = 1 - shmem_my_pe();
    switch (t) {
    case T_PUT:
        for (long i = 0; i < n; i++) {
            shmem_putmem(s->sbuf, s->lbuf, size, peer);
            shmem_quiet();
        }
        break;
    case T_GET:
        for (long i = 0; i < n; i++)
            shmem_getmem(s->lbuf, s->sbuf, size, peer);
        break;
    case T_RATE:
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < s->o.burst; k++)
                shmem_long_p(&s->rate_buf[k], (long)k, peer);
            shmem_quiet();
        }
        break;
    case T_FADD:
        for (long i = 0; i < n; i++)
            (void)shmem_long_atomic_fetch_add(&amo_word, 1, peer);
        break;
    case T_CSWAP:
        for (long i = 0; i < n; i++)
            (void)shmem_long_atomic_compare_swap(&amo_word, -1, -2, peer);
        break;
    case T_PINGPONG:
        for (long i = 0; i < n; i++) {
            long v = ++pp_round;
            if (shmem_my_pe() == 0) {
                shmem_long_p(&pp_flag, v, peer);
                shmem_long_wait_until(&pp_flag, SHMEM_CMP_EQ, v);
            } else {
                shmem_long_wait_until(&pp_flag, SHMEM_CMP_EQ, v);
                shmem_long_p(&pp_flag, v, peer);
            }
        }
        break;
    case T_BARRIER:
        for (long i = 0; i < n; i++)
            shmem_barrier_all();
        break;
    }
}

static int both_pes(int t)
{
    return t == T_PINGPONG || t == T_BARRIER;
}

/* Iterations per batch so one batch takes about time_ms / reps. */
static long calibrate(const state_t *s, double per_op_ns)
{
    double batch_ns = s->o.time_ms * 1e6 / s->o.reps;
    double n = per_op_ns > 0 ? batch_ns / per_op_ns : 1e6;
    if (n < 1)
        n = 1;
    if (n > 1e7)
        n = 1e7;
    return (long)n;
}

static void measure(state_t *s, int t, size_t size)
{
    int me = shmem_my_pe();
    long iters = 0;
    double ns[MAX_REPS];

    shmem_barrier_all();
    if (both_pes(t)) {
        /* Warm up together, PE 0 times it, then tells PE 1 the count. */
        double t0 = now_ns();
        run_ops(s, t, size, 32);
        double per = (now_ns() - t0) / 32;
        if (me == 0) {
            iters = calibrate(s, per);
            shmem_long_p(&agreed, iters, 1);
            shmem_quiet();
        }
        shmem_barrier_all();
        if (me != 0)
            iters = agreed;
    } else if (me == 0) {
        run_ops(s, t, size, 1);                  /* first touch, connections */
        long n = 1;
        double el = 0;
        while (n < 1000000) {
            double t0 = now_ns();
            run_ops(s, t, size, n);
            el = now_ns() - t0;
            if ((el > 2e6 && n >= 64) || el > 50e6)
                break;
            n *= 4;
        }
        iters = calibrate(s, el / n);
    }
    for (int r = 0; r < s->o.reps; r++) {
        if (both_pes(t) || me == 0) {
            double t0 = now_ns();
            run_ops(s, t, size, iters);
            ns[r] = (now_ns() - t0) / (double)iters;
        }
        if (both_pes(t))
            shmem_barrier_all();
    }
    shmem_barrier_all();
    if (me != 0)
        return;
    double per_unit = 1.0;
    if (t == T_RATE)
        per_unit = s->o.burst;            /* ns per put */
    else if (t == T_PINGPONG)
        per_unit = 2.0;                   /* one way: round trip / 2 */
    for (int r = 0; r < s->o.reps; r++)
        ns[r] /= per_unit;
    qsort(ns, (size_t)s->o.reps, sizeof ns[0], cmp_double);
    double med = s->o.reps % 2 ? ns[s->o.reps / 2]
                               : (ns[s->o.reps / 2 - 1] + ns[s->o.reps / 2]) / 2;
    printf("%s\n    {\"test\": \"%s\", \"size\": %zu, \"iters\": %ld, \"reps\": %d, "
           "\"ns_min\": %.4f, \"ns_median\": %.4f, \"ns_max\": %.4f}",
           s->first ? "" : ",", names[t], size, iters, s->o.reps, ns[0], med,
           ns[s->o.reps - 1]);
    s->first = 0;
    fflush(stdout);
}

static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(a, "--time-ms"))
            o->time_ms = atof(v);
        else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else if (!strcmp(a, "--max-size"))
            o->max_size = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "--burst"))
            o->burst = atoi(v);
        else
            return -1;
        i++;
    }
    if (o->time_ms <= 0 || o->reps < 1 || o->reps > MAX_REPS || o->max_size < 8 ||
        o->burst < 1 || o->burst > MAX_BURST)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    state_t s = { .o = { .time_ms = 200, .reps = 5, .max_size = 1 << 20, .burst = 1000 },
                  .first = 1 };
    if (parse(argc, argv, &s.o)) {
        fprintf(stderr, "usage: %s [--time-ms T] [--reps R (1..%d)] [--max-size BYTES] "
                        "[--burst N]\n", argv[0], MAX_REPS);
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes != 2) {
        if (me == 0)
            fprintf(stderr, "%s: needs exactly 2 PEs, got %d\n", argv[0], npes);
        shmem_global_exit(2);
    }
    (void)pad_;
    s.sbuf = shmem_malloc(s.o.max_size);
    s.rate_buf = shmem_malloc((size_t)s.o.burst * sizeof(long));
    s.lbuf = malloc(s.o.max_size);
    if (!s.sbuf || !s.rate_buf || !s.lbuf) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        shmem_global_exit(1);
    }
    memset(s.sbuf, 1, s.o.max_size);
    memset(s.lbuf, 2, s.o.max_size);

    if (me == 0) {
        char name[SHMEM_MAX_NAME_LEN + 1] = "";
        int major = 0, minor = 0;
        shmem_info_get_name(name);
        shmem_info_get_version(&major, &minor);
        printf("{\n  \"program\": \"hps-bench-shmem\",\n  \"library\": \"%s\",\n"
               "  \"spec_version\": \"%d.%d\",\n  \"npes\": %d,\n", name, major, minor, npes);
#ifdef HPSYNC_SHMEM_H
        printf("  \"transport\": \"%s\",\n  \"provider\": \"%s\",\n", shmemx_transport(1),
               shmemx_provider() ? shmemx_provider() : "");
#endif
        printf("  \"params\": {\"time_ms\": %.1f, \"reps\": %d, \"max_size\": %zu, "
               "\"burst\": %d},\n  \"results\": [", s.o.time_ms, s.o.reps, s.o.max_size,
               s.o.burst);
        fflush(stdout);
    }
    /* 1 B to max_size in powers of 4, plus 8 B (the targets' size). */
    for (int t = T_PUT; t <= T_GET; t++)
        for (size_t size = 1; size <= s.o.max_size; size *= 4) {
            measure(&s, t, size);
            if (size == 4)
                measure(&s, t, 8);
        }
    measure(&s, T_PINGPONG, 8);
    measure(&s, T_RATE, 8);
    measure(&s, T_FADD, 8);
    measure(&s, T_CSWAP, 8);
    measure(&s, T_BARRIER, 0);
    if (me == 0) {
        printf("\n  ]\n}\n");
        fflush(stdout);
    }
    shmem_barrier_all();
    shmem_free(s.rate_buf);
    shmem_free(s.sbuf);
    free(s.lbuf);
    shmem_finalize();
    return 0;
}
