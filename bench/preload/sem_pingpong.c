// SPDX-License-Identifier: MIT
/*
 * sem_pingpong: what a semaphore hand-off costs, glibc's sem_* against the
 * interposer's, measured in one process so that both see the same machine
 * (a benchmark, not a test: bench/preload/sem_ratio.sh runs it, also beside
 * a busy process).
 *
 *   sem_pingpong PRELOAD_SO [repetitions] [pair_iterations] [round_trips]
 *
 * Run it WITHOUT LD_PRELOAD: its own calls then reach glibc, and the
 * interposer's functions are taken from PRELOAD_SO opened with RTLD_LOCAL
 * (so it interposes nothing).  Each repetition measures both
 * implementations, in alternating order: an uncontended sem_post + sem_wait
 * pair on one semaphore, and two threads bouncing a token over two
 * semaphores (per round trip).  Prints the medians over the repetitions and
 * the median of the per-repetition ratios hpsync/glibc (below 1: the
 * interposer is faster).  SEM_PINGPONG_VERBOSE=1 also prints every
 * repetition on stderr.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hps_bench.h"

/* One line on stderr and exit 1: a measurement that went wrong. */
#define DIE(...) do { hps_bench_log(__VA_ARGS__); exit(1); } while (0)

struct impl {
    const char *name;
    int (*init)(sem_t *, int, unsigned);
    int (*wait)(sem_t *);
    int (*post)(sem_t *);
    int (*getvalue)(sem_t *, int *);
    int (*destroy)(sem_t *);
};

static void *need(void *handle, const char *name)
{
    void *f = dlsym(handle, name);
    if (!f)
        DIE("%s not found: %s", name, dlerror());
    return f;
}

static void load(struct impl *im, const char *name, void *handle)
{
    im->name = name;
    *(void **)&im->init = need(handle, "sem_init");
    *(void **)&im->wait = need(handle, "sem_wait");
    *(void **)&im->post = need(handle, "sem_post");
    *(void **)&im->getvalue = need(handle, "sem_getvalue");
    *(void **)&im->destroy = need(handle, "sem_destroy");
}

static const struct impl *cur;
static sem_t ping, pong;
static unsigned long trips;

static void *partner(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < trips; i++) {
        if (cur->wait(&ping) != 0)
            DIE("sem_wait(ping) failed");
        cur->post(&pong);
    }
    return NULL;
}

static double pair_ns(const struct impl *im, unsigned long pairs)
{
    sem_t s;
    im->init(&s, 0, 0);
    uint64_t t0 = hps_bench_now_ns();
    for (unsigned long i = 0; i < pairs; i++) {
        im->post(&s);
        if (im->wait(&s) != 0)
            DIE("sem_wait failed");
    }
    double ns = (double)(hps_bench_now_ns() - t0) / (double)pairs;
    im->destroy(&s);
    return ns;
}

static double pingpong_ns(const struct impl *im)
{
    cur = im;
    im->init(&ping, 0, 0);
    im->init(&pong, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, partner, NULL);
    uint64_t t0 = hps_bench_now_ns();
    for (unsigned long i = 0; i < trips; i++) {
        im->post(&ping);
        if (im->wait(&pong) != 0)
            DIE("sem_wait(pong) failed");
    }
    double ns = (double)(hps_bench_now_ns() - t0) / (double)trips;
    pthread_join(t, NULL);
    int v1, v2;
    im->getvalue(&ping, &v1);
    im->getvalue(&pong, &v2);
    if (v1 != 0 || v2 != 0)
        DIE("tokens left over: ping %d, pong %d", v1, v2);
    return ns;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PRELOAD_SO [repetitions] [pair_iterations] [round_trips]\n", argv[0]);
        return 2;
    }
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "hpsync-preload"))
        DIE("run me without LD_PRELOAD: I load both implementations myself");
    unsigned reps = argc > 2 ? (unsigned)hps_bench_parse_num("repetitions", argv[2], 1, HPS_BENCH_MAX_REPS)
                             : 11;
    unsigned long pairs = argc > 3 ? (unsigned long)hps_bench_parse_num("pair_iterations", argv[3], 1, 1L << 40)
                                   : 2000000;
    trips = argc > 4 ? (unsigned long)hps_bench_parse_num("round_trips", argv[4], 1, 1L << 40) : 20000;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        DIE("cannot open %s: %s", argv[1], dlerror());
    struct impl im[2];
    load(&im[0], "glibc", RTLD_DEFAULT);
    load(&im[1], "hpsync", h);
    if (im[0].wait == im[1].wait)
        DIE("both implementations resolve to the same sem_wait");
    alarm(600);                 /* a lost wake-up ends the run, not the shell */

    double *v = calloc(6 * (size_t)reps, sizeof *v);
    double *pair[2] = { v, v + reps }, *pp[2] = { v + 2 * reps, v + 3 * reps };
    double *pair_ratio = v + 4 * reps, *pp_ratio = v + 5 * reps;
    for (unsigned r = 0; r < reps; r++) {
        for (unsigned k = 0; k < 2; k++) {
            unsigned i = (r + k) % 2;   /* alternate which goes first */
            pair[i][r] = pair_ns(&im[i], pairs);
            pp[i][r] = pingpong_ns(&im[i]);
        }
        pair_ratio[r] = pair[1][r] / pair[0][r];
        pp_ratio[r] = pp[1][r] / pp[0][r];
        if (getenv("SEM_PINGPONG_VERBOSE"))
            fprintf(stderr, "rep %u: pair %.1f %.1f pingpong %.0f %.0f\n", r, pair[0][r], pair[1][r], pp[0][r], pp[1][r]);
    }
    printf("%-9s %9s %9s %7s\n", "ns", "glibc", "hpsync", "ratio");
    printf("%-9s %9.1f %9.1f %7.3f\n", "pair", hps_bench_median(pair[0], reps), hps_bench_median(pair[1], reps),
           hps_bench_median(pair_ratio, reps));
    printf("%-9s %9.0f %9.0f %7.3f\n", "pingpong", hps_bench_median(pp[0], reps), hps_bench_median(pp[1], reps),
           hps_bench_median(pp_ratio, reps));
    free(v);
    return 0;
}
