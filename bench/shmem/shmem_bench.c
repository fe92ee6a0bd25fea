/* SPDX-License-Identifier: MIT */
/*
 * shmem_bench.c - hps-bench-shmem: OpenSHMEM latencies, rates and
 * back-to-back collectives.
 *
 * Standard OpenSHMEM 1.4 calls only (the 1.5 team collectives with --api
 * team, where the header has them), so the same source builds against
 * hpsync's shmem.h (CMake target hps-bench-shmem) and against any other
 * implementation's (`hpsync bench shmem` compiles it with Open MPI's oshcc,
 * whose OSHMEM 4.1 has no teams).  PE 0 writes JSON Lines to the file --out
 * names (stdout without it): a header object, one object per result and an
 * end object, each on its own line and flushed, so a run cut short still
 * leaves every finished row readable and a launcher's own messages on
 * stdout never mix with them.  Built in hpsync's tree (HPS_BENCH_CONTEXT),
 * it also writes the context block of bench/common/context.c as a second
 * line; the oshcc build has no hpsync bench library and writes none.
 *
 * One-sided tests need exactly 2 PEs: PE 0 times, PE 1 is the target and
 * waits in shmem_barrier_all (inside the library, so a library that needs
 * the target to progress gets it).  Collectives run at any number of PEs,
 * every PE in the loop, back to back (no barrier between two calls; the
 * 1.4 forms alternate two pSync arrays, as a 1.4 program must), PE 0
 * timing.  Each figure is `reps` batches of `iters` operations timed with
 * CLOCK_MONOTONIC; iters is calibrated so one batch takes about
 * --time-ms / reps.  Reported: ns per operation, the best and the median
 * batch, and every batch's figure.
 *
 *   put_quiet  SIZE  shmem_putmem(SIZE) + shmem_quiet to a buffer PE 1 does
 *                    not read: the cost of issuing and completing a put
 *   get        SIZE  shmem_getmem(SIZE) from PE 1
 *   put_bw     SIZE  bursts of `window` shmem_putmem_nbi(SIZE) then one
 *                    shmem_quiet: ns per message (message rate, bandwidth)
 *   pingpong   8     round trip / 2: PE 0 shmem_long_p(flag on PE 1, i),
 *                    PE 1 waits for it (wait_until) and answers the same
 *                    way; both PEs run the loop
 *   put_rate   8     a burst of `burst` shmem_long_p (consecutive longs)
 *                    then one shmem_quiet: ns per put (rate = 1e9 / ns)
 *   add_rate   8     the same with shmem_long_atomic_add (non-fetching) to
 *                    one word: ns per atomic
 *   fetch_add  8     shmem_long_atomic_fetch_add to PE 1
 *   cswap      8     shmem_long_atomic_compare_swap to PE 1
 *   barrier    0     shmem_barrier_all, every PE
 *   broadcast  SIZE  root 0 to all (1.4: shmem_broadcast64)
 *   collect    SIZE  SIZE from each PE (shmem_collect64)
 *   fcollect   SIZE  SIZE from each PE (shmem_fcollect64)
 *   reduce     SIZE  sum of SIZE / 8 longs (shmem_long_sum_to_all)
 *   alltoall   SIZE  SIZE from each PE to each PE (shmem_alltoall64)
 *
 *   hps-bench-shmem [--out PATH] [--time-ms T] [--reps R] [--max-size BYTES]
 *                   [--burst N] [--window N] [--tests NAME[:SIZE],...]
 *                   [--limit-s S] [--api std|team] [--init-only]
 * The lines: {"type": "header", "program", "library", "spec_version", "npes",
 * ["transport", "provider",] "params"}, [{"type": "context", "schema_version",
 * "context"},] {"type": "result", "test", "size", "npes", "iters", "reps",
 * "ns": [every batch, in order], "ns_min", "ns_median", "ns_max"} per
 * figure, {"type": "end"}.
 * --tests runs only those (in that order; NAME alone: its default sizes);
 * --limit-s ends the job when one test runs longer than S seconds, after
 * PE 0 wrote a result {"test": ..., "dnf": true} for it, so a hanging
 * library costs one row instead of the whole benchmark.  --init-only:
 * shmem_init, shmem_finalize and nothing else (the launch figure: what a
 * trivial OpenSHMEM program costs to start and end).
 * (Open MPI's OSHMEM crashes in shmem_finalize after the results are out;
 * `hpsync bench shmem` keeps the complete results and notes the exit status.)
 */
#define _GNU_SOURCE
#include <shmem.h>
#ifdef HPSYNC_SHMEM_H
#include <shmemx.h>
#endif
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#ifdef HPS_BENCH_CONTEXT
#include "hps_bench.h"
#endif

#if defined(SHMEM_MAJOR_VERSION) && defined(SHMEM_MINOR_VERSION) && \
    SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105
#define HAVE_TEAMS 1
#endif

#define MAX_REPS 64
#define MAX_BURST 65536
#define MAX_TESTS 64
#define COLL_MAX_SIZE 65536       /* per PE, for the collectives */

static long pp_flag;              /* ping-pong flag, data segment */
static long agreed;               /* iteration count PE 0 hands to PE 1 */
static long pad_[16];             /* keep pp_flag and agreed off the atomics' line */
static long amo_word;             /* atomics target */

/* Two pSync arrays, alternated, each large enough for every 1.4 collective
 * (the sum of the sizes is more than the largest, and a constant). */
#define PSYNC_LEN (SHMEM_BCAST_SYNC_SIZE + SHMEM_COLLECT_SYNC_SIZE + SHMEM_REDUCE_SYNC_SIZE + \
                   SHMEM_ALLTOALL_SYNC_SIZE)
static long psync[2][PSYNC_LEN];

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

enum { T_PUT, T_GET, T_BW, T_PINGPONG, T_RATE, T_ADD, T_FADD, T_CSWAP, T_BARRIER,
       T_BCAST, T_COLLECT, T_FCOLLECT, T_REDUCE, T_ALLTOALL, T_COUNT };

/* Name, whether it is one-sided at 2 PEs (else every PE runs it), its
 * default sizes (-1: powers of 4 from 1 B to max-size, plus 8 B). */
static const struct {
    const char *name;
    int one_sided;
    long sizes[3];
} tests[T_COUNT] = {
    [T_PUT] = { "put_quiet", 1, { -1 } },
    [T_GET] = { "get", 1, { -1 } },
    [T_BW] = { "put_bw", 1, { -1 } },
    [T_PINGPONG] = { "pingpong", 1, { 8 } },
    [T_RATE] = { "put_rate", 1, { 8 } },
    [T_ADD] = { "add_rate", 1, { 8 } },
    [T_FADD] = { "fetch_add", 1, { 8 } },
    [T_CSWAP] = { "cswap", 1, { 8 } },
    [T_BARRIER] = { "barrier", 0, { 0 } },
    [T_BCAST] = { "broadcast", 0, { 8 } },
    [T_COLLECT] = { "collect", 0, { 8 } },
    [T_FCOLLECT] = { "fcollect", 0, { 8 } },
    [T_REDUCE] = { "reduce", 0, { 8, 65536 } },
    [T_ALLTOALL] = { "alltoall", 0, { 8 } },
};

typedef struct opts {
    const char *out;              /* --out: the JSON Lines file (NULL: stdout) */
    double time_ms;
    int reps;
    size_t max_size;
    int burst, window;
    double limit_s;
    int team;                     /* --api team */
    int init_only;                /* --init-only */
    int ntests;
    int test[MAX_TESTS];
    long size[MAX_TESTS];         /* -1: the test's default sizes */
} opts_t;

typedef struct state {
    opts_t o;
    int me, npes;
    char *sbuf;                   /* symmetric, max_size */
    char *lbuf;                   /* local, max_size */
    long *rate_buf;               /* symmetric, burst longs */
    long *csrc, *cdst, *cwrk;     /* symmetric, collectives */
    long flip;                    /* which pSync the next 1.4 collective uses */
    FILE *out;                    /* PE 0: where the JSON Lines go */
} state_t;

static long pp_round;             /* ping-pong sequence number, same on both PEs */

static void collective(state_t *s, int t, size_t size)
{
    size_t n = size / 8;          /* in longs */
    long *ps = psync[s->flip++ & 1];
#ifdef HAVE_TEAMS
    if (s->o.team) {
        switch (t) {
        case T_BCAST: shmem_long_broadcast(SHMEM_TEAM_WORLD, s->cdst, s->csrc, n, 0); break;
        case T_COLLECT: shmem_long_collect(SHMEM_TEAM_WORLD, s->cdst, s->csrc, n); break;
        case T_FCOLLECT: shmem_long_fcollect(SHMEM_TEAM_WORLD, s->cdst, s->csrc, n); break;
        case T_REDUCE: shmem_long_sum_reduce(SHMEM_TEAM_WORLD, s->cdst, s->csrc, n); break;
        case T_ALLTOALL: shmem_long_alltoall(SHMEM_TEAM_WORLD, s->cdst, s->csrc, n); break;
        }
        return;
    }
#endif
    switch (t) {
    case T_BCAST: shmem_broadcast64(s->cdst, s->csrc, n, 0, 0, 0, s->npes, ps); break;
    case T_COLLECT: shmem_collect64(s->cdst, s->csrc, n, 0, 0, s->npes, ps); break;
    case T_FCOLLECT: shmem_fcollect64(s->cdst, s->csrc, n, 0, 0, s->npes, ps); break;
    case T_REDUCE:
        shmem_long_sum_to_all(s->cdst, s->csrc, (int)n, 0, 0, s->npes, s->cwrk, ps);
        break;
    case T_ALLTOALL: shmem_alltoall64(s->cdst, s->csrc, n, 0, 0, s->npes, ps); break;
    }
}

/* Run `n` operations of test t (on this PE). */
static void run_ops(state_t *s, int t, size_t size, long n)
{
    int peer = 1 - s->me;
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
    case T_BW:
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < s->o.window; k++)
                shmem_putmem_nbi(s->sbuf, s->lbuf, size, peer);
            shmem_quiet();
        }
        break;
    case T_RATE:
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < s->o.burst; k++)
                shmem_long_p(&s->rate_buf[k], (long)k, peer);
            shmem_quiet();
        }
        break;
    case T_ADD:
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < s->o.burst; k++)
                shmem_long_atomic_add(&amo_word, 1, peer);
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
            if (s->me == 0) {
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
    default:
        /* The closing barrier makes the batch end when every PE is done
         * (a root that only pushes would otherwise time itself alone). */
        for (long i = 0; i < n; i++)
            collective(s, t, size);
        shmem_barrier_all();
        break;
    }
}

static int every_pe(int t)
{
    return t == T_PINGPONG || !tests[t].one_sided;
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

/* The watchdog: PE 0 says which test did not finish, then every PE leaves
 * (a PE exiting non-zero ends the job under oshrun and mpirun alike).  The
 * line is formatted before the test starts, so the handler only write()s. */
static char dnf_row[256];
static size_t dnf_len;
static int dnf_fd = -1;

static void on_alarm(int sig)
{
    (void)sig;
    if (dnf_len && dnf_fd >= 0)
        (void)!write(dnf_fd, dnf_row, dnf_len);
    _exit(3);
}

static void arm(const state_t *s, int t, size_t size)
{
    if (s->o.limit_s <= 0)
        return;
    dnf_len = 0;
    if (s->me == 0) {
        int n = snprintf(dnf_row, sizeof dnf_row,
                         "{\"type\": \"result\", \"test\": \"%s\", \"size\": %zu, "
                         "\"npes\": %d, \"dnf\": true, \"limit_s\": %.1f}\n",
                         tests[t].name, size, s->npes, s->o.limit_s);
        dnf_len = n > 0 && (size_t)n < sizeof dnf_row ? (size_t)n : 0;
        dnf_fd = fileno(s->out);
        fflush(s->out);               /* every finished line before the watchdog's */
    }
    struct itimerval it = { { 0, 0 }, { (time_t)s->o.limit_s,
                                        (long)((s->o.limit_s - (time_t)s->o.limit_s) * 1e6) } };
    setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm(const state_t *s)
{
    struct itimerval it = { { 0, 0 }, { 0, 0 } };
    if (s->o.limit_s > 0)
        setitimer(ITIMER_REAL, &it, NULL);
}

static void measure(state_t *s, int t, size_t size)
{
    int me = s->me;
    long iters = 0;
    double ns[MAX_REPS];

    shmem_barrier_all();
    arm(s, t, size);
    if (every_pe(t)) {
        /* Warm up together, PE 0 times it, then tells the others the
         * count: the cheapest of three rounds of 32, so neither the first
         * touch nor a PE preempted for a time slice in one round makes the
         * batches short (one such round made a barrier's batches so short
         * that a test the watchdog was to end finished: test_bench_shmem's
         * did-not-finish case, once in a fresh clone's run). */
        double per = 0;
        for (int round = 0; round < 3; round++) {
            double t0 = now_ns();
            run_ops(s, t, size, 32);
            double r = (now_ns() - t0) / 32;
            if (round == 0 || r < per)
                per = r;
        }
        if (me == 0) {
            iters = calibrate(s, per);
            for (int pe = 1; pe < s->npes; pe++)
                shmem_long_p(&agreed, iters, pe);
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
        if (every_pe(t) || me == 0) {
            double t0 = now_ns();
            run_ops(s, t, size, iters);
            ns[r] = (now_ns() - t0) / (double)iters;
        }
        if (every_pe(t))
            shmem_barrier_all();
    }
    shmem_barrier_all();
    disarm(s);
    if (me != 0)
        return;
    double per_unit = 1.0;
    if (t == T_RATE || t == T_ADD)
        per_unit = s->o.burst;            /* ns per put or atomic */
    else if (t == T_BW)
        per_unit = s->o.window;           /* ns per message */
    else if (t == T_PINGPONG)
        per_unit = 2.0;                   /* one way: round trip / 2 */
    FILE *f = s->out;
    fprintf(f, "{\"type\": \"result\", \"test\": \"%s\", \"size\": %zu, \"npes\": %d, "
               "\"iters\": %ld, \"reps\": %d, \"ns\": [", tests[t].name, size, s->npes, iters,
            s->o.reps);
    for (int r = 0; r < s->o.reps; r++) {
        ns[r] /= per_unit;
        fprintf(f, "%s%.4f", r ? ", " : "", ns[r]);
    }
    qsort(ns, (size_t)s->o.reps, sizeof ns[0], cmp_double);
    double med = s->o.reps % 2 ? ns[s->o.reps / 2]
                               : (ns[s->o.reps / 2 - 1] + ns[s->o.reps / 2]) / 2;
    fprintf(f, "], \"ns_min\": %.4f, \"ns_median\": %.4f, \"ns_max\": %.4f}\n", ns[0], med,
            ns[s->o.reps - 1]);
    fflush(f);
}

static int find_test(const char *name, size_t len)
{
    for (int t = 0; t < T_COUNT; t++)
        if (strlen(tests[t].name) == len && !strncmp(tests[t].name, name, len))
            return t;
    return -1;
}

/* "name[:size],..." */
static int parse_tests(opts_t *o, const char *v)
{
    o->ntests = 0;
    while (*v) {
        size_t len = strcspn(v, ":,");
        int t = find_test(v, len);
        if (t < 0 || o->ntests == MAX_TESTS)
            return -1;
        long size = -1;
        v += len;
        if (*v == ':') {
            char *end;
            size = strtol(v + 1, &end, 10);
            if (end == v + 1 || size < 0)
                return -1;
            v = end;
        }
        o->test[o->ntests] = t;
        o->size[o->ntests++] = size;
        if (*v == ',')
            v++;
        else if (*v)
            return -1;
    }
    return o->ntests ? 0 : -1;
}

static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--init-only")) {
            o->init_only = 1;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--out"))
            o->out = v;
        else if (!strcmp(a, "--time-ms"))
            o->time_ms = atof(v);
        else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else if (!strcmp(a, "--max-size"))
            o->max_size = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "--burst"))
            o->burst = atoi(v);
        else if (!strcmp(a, "--window"))
            o->window = atoi(v);
        else if (!strcmp(a, "--limit-s"))
            o->limit_s = atof(v);
        else if (!strcmp(a, "--tests")) {
            if (parse_tests(o, v))
                return -1;
        } else if (!strcmp(a, "--api")) {
            if (strcmp(v, "std") && strcmp(v, "team"))
                return -1;
            o->team = !strcmp(v, "team");
        } else
            return -1;
        i++;
    }
    if (o->time_ms <= 0 || o->reps < 1 || o->reps > MAX_REPS || o->max_size < 8 ||
        o->burst < 1 || o->burst > MAX_BURST || o->window < 1 || o->window > MAX_BURST ||
        o->limit_s < 0)
        return -1;
    return 0;
}

/* Every size test t runs at: the one asked for, or its defaults. */
static void run_test(state_t *s, int t, long size)
{
    if (tests[t].one_sided && s->npes != 2)
        return;                           /* one-sided tests: 2 PEs only */
    if (size >= 0) {
        /* Collectives have buffers of their own (COLL_MAX_SIZE a PE, in
         * longs); one-sided tests use the max_size ones. */
        if (tests[t].one_sided ? (size_t)size <= s->o.max_size
                               : size <= COLL_MAX_SIZE && size % 8 == 0)
            measure(s, t, (size_t)size);
        return;
    }
    if (tests[t].sizes[0] >= 0) {
        for (int k = 0; k < 3 && tests[t].sizes[k] > 0; k++)
            if (tests[t].one_sided || tests[t].sizes[k] <= COLL_MAX_SIZE)
                measure(s, t, (size_t)tests[t].sizes[k]);
        if (tests[t].sizes[0] == 0)
            measure(s, t, 0);
        return;
    }
    /* 1 B to max_size in powers of 4, plus 8 B (the targets' size). */
    for (size_t sz = 1; sz <= s->o.max_size; sz *= 4) {
        measure(s, t, sz);
        if (sz == 4)
            measure(s, t, 8);
    }
}

/* PE 0: open the output and write the header line (and, in hpsync's tree,
 * the context line).  The context block measures the timer and scans the
 * topology, so it is written before any test runs, never between two. */
static void write_header(state_t *s)
{
    s->out = stdout;
    if (s->o.out && !(s->out = fopen(s->o.out, "w"))) {
        fprintf(stderr, "hps-bench-shmem: cannot open %s for writing\n", s->o.out);
        shmem_global_exit(2);
    }
    char name[SHMEM_MAX_NAME_LEN + 1] = "";
    int major = 0, minor = 0;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    FILE *f = s->out;
    fprintf(f, "{\"type\": \"header\", \"program\": \"hps-bench-shmem\", \"library\": \"%s\", "
               "\"spec_version\": \"%d.%d\", \"npes\": %d, ", name, major, minor, s->npes);
#ifdef HPSYNC_SHMEM_H
    fprintf(f, "\"transport\": \"%s\", \"provider\": \"%s\", ", shmemx_transport(1),
            shmemx_provider() ? shmemx_provider() : "");
#endif
    fprintf(f, "\"params\": {\"time_ms\": %.1f, \"reps\": %d, \"max_size\": %zu, \"burst\": %d, "
               "\"window\": %d, \"api\": \"%s\"}}\n", s->o.time_ms, s->o.reps, s->o.max_size,
            s->o.burst, s->o.window, s->o.team ? "team" : "std");
#ifdef HPS_BENCH_CONTEXT
    hps_json_open(f, 1);
    hps_json_begin_object(NULL);
    hps_json_str("type", "context");
    hps_bench_context();
    hps_json_end_object();
    hps_json_finish();
#endif
    fflush(f);
}

int main(int argc, char **argv)
{
    state_t s = { .o = { .time_ms = 200, .reps = 5, .max_size = 1 << 20, .burst = 1000,
                         .window = 64 } };
    if (parse(argc, argv, &s.o)) {
        fprintf(stderr, "usage: %s [--out PATH] [--time-ms T] [--reps R (1..%d)] [--max-size BYTES] "
                        "[--burst N] [--window N] [--tests NAME[:SIZE],...] [--limit-s S] "
                        "[--api std|team] [--init-only]\n", argv[0], MAX_REPS);
        return 2;
    }
    if (!s.o.ntests)
        for (int t = 0; t < T_COUNT; t++) {
            s.o.test[s.o.ntests] = t;
            s.o.size[s.o.ntests++] = -1;
        }
#ifndef HAVE_TEAMS
    if (s.o.team) {
        fprintf(stderr, "%s: --api team needs OpenSHMEM 1.5 teams\n", argv[0]);
        return 2;
    }
#endif
    signal(SIGALRM, on_alarm);
    shmem_init();
    if (s.o.init_only) {
        shmem_finalize();
        return 0;
    }
    s.me = shmem_my_pe();
    s.npes = shmem_n_pes();
    if (s.npes < 2) {
        if (s.me == 0)
            fprintf(stderr, "%s: needs at least 2 PEs, got %d\n", argv[0], s.npes);
        shmem_global_exit(2);
    }
    (void)pad_;
    size_t cbytes = (size_t)COLL_MAX_SIZE * (size_t)s.npes;
    s.sbuf = shmem_malloc(s.o.max_size);
    s.rate_buf = shmem_malloc((size_t)s.o.burst * sizeof(long));
    s.csrc = shmem_malloc(cbytes);
    s.cdst = shmem_malloc(cbytes);
    s.cwrk = shmem_malloc(COLL_MAX_SIZE / 2 + SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(long));
    s.lbuf = malloc(s.o.max_size);
    if (!s.sbuf || !s.rate_buf || !s.lbuf || !s.csrc || !s.cdst || !s.cwrk) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        shmem_global_exit(1);
    }
    memset(s.sbuf, 1, s.o.max_size);
    memset(s.lbuf, 2, s.o.max_size);
    memset(s.csrc, 3, cbytes);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < PSYNC_LEN; i++)
            psync[k][i] = SHMEM_SYNC_VALUE;

    if (s.me == 0)
        write_header(&s);
    shmem_barrier_all();                  /* every pSync initialised everywhere */
    for (int i = 0; i < s.o.ntests; i++)
        run_test(&s, s.o.test[i], s.o.size[i]);
    if (s.me == 0) {
        fputs("{\"type\": \"end\"}\n", s.out);
        if (fflush(s.out) != 0 || (s.out != stdout && fclose(s.out) != 0)) {
            fprintf(stderr, "%s: cannot write %s\n", argv[0], s.o.out);
            shmem_global_exit(1);
        }
    }
    shmem_barrier_all();
    shmem_free(s.cwrk);
    shmem_free(s.cdst);
    shmem_free(s.csrc);
    shmem_free(s.rate_buf);
    shmem_free(s.sbuf);
    free(s.lbuf);
    shmem_finalize();
    return 0;
}
