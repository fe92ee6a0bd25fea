// SPDX-License-Identifier: MIT
/*
 * threads: SHMEM_THREAD_MULTIPLE over both transports.  Several threads
 * of every PE at once put blocks larger than any inject size and small
 * elements, quiet, raise a flag, wait for their partner's flag and check
 * its data, do atomics and fetching atomics on PE 0: first all on the
 * default context, then each thread on a private context of its own,
 * then with a thread that keeps issuing on yet another context meanwhile
 * (each quiet must still return, with its own puts delivered).
 *
 * Thread t of PE p sends to thread t of PE p + 1 and receives from thread
 * t of PE p - 1 (itself with one PE).  What catches a quiet that returns
 * too early: the flag is set after the quiet, and the receiver checks all
 * of a 64 KiB block (written by fi_write over libfabric, whose completion
 * may come after that of another thread's later inject) once it sees it.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "shtest.h"

enum { T = 4, ROUNDS = 12, BLOCK = 65536, SMALL = 16 };

static unsigned char g_slot[T][BLOCK];     /* from the left, thread t's block */
static long g_small[T][SMALL];
static long g_flag[T], g_ack[T];           /* round received / round read by the right */
static long g_count, g_fetched, g_fetch_sum;   /* on PE 0 */
static long g_noise[64];

static unsigned char pattern(int pe, int t, long r, size_t i)
{
    return (unsigned char)(pe * 7 + t * 13 + r * 31 + (long)i + (long)(i >> 8));
}

typedef struct job {
    int t;
    long base;                  /* rounds done by earlier phases */
    int private_ctx;            /* each thread on a context of its own */
    long fetch_sum;
} job_t;

static void *worker(void *arg)
{
    job_t *j = arg;
    int t = j->t, me = T_ME, right = T_RIGHT, left = T_LEFT;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (j->private_ctx)
        T_CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "thread %d: ctx_create", t);
    static __thread unsigned char src[BLOCK];
    for (long r = j->base + 1; r <= j->base + ROUNDS; r++) {
        for (size_t i = 0; i < BLOCK; i++)
            src[i] = pattern(me, t, r, i);
        /* The right neighbour has read the previous round out of the slot. */
        shmem_long_wait_until(&g_ack[t], SHMEM_CMP_GE, r - 1);
        shmem_ctx_putmem(ctx, g_slot[t], src, BLOCK, right);
        for (int k = 0; k < SMALL; k++)
            shmem_ctx_long_p(ctx, &g_small[t][k], r * 100 + k, right);
        shmem_ctx_quiet(ctx);
        shmem_ctx_long_atomic_set(ctx, &g_flag[t], r, right);
        shmem_ctx_long_atomic_inc(ctx, &g_count, 0);
        j->fetch_sum += shmem_ctx_long_atomic_fetch_inc(ctx, &g_fetched, 0);

        shmem_long_wait_until(&g_flag[t], SHMEM_CMP_GE, r);
        for (size_t i = 0; i < BLOCK; i++)
            T_CHECK(g_slot[t][i] == pattern(left, t, r, i), "thread %d round %ld: byte %zu of "
                    "the block from PE %d is %u, expected %u (its flag came before its data)",
                    t, r, i, left, g_slot[t][i], pattern(left, t, r, i));
        for (int k = 0; k < SMALL; k++)
            T_CHECK(g_small[t][k] == r * 100 + k, "thread %d round %ld: element %d is %ld", t,
                    r, k, g_small[t][k]);
        shmem_ctx_long_atomic_set(ctx, &g_ack[t], r, left);
        shmem_ctx_quiet(ctx);
    }
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return NULL;
}

/* Issues small puts and adds on a context of its own until told to stop. */
static volatile int g_stop;
static long g_noise_adds;
static void *noise(void *arg)
{
    (void)arg;
    shmem_ctx_t ctx;
    T_CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "noise: ctx_create");
    long i = 0;
    while (!g_stop) {
        shmem_ctx_long_p(ctx, &g_noise[i % 64], i, T_RIGHT);
        if (i % 16 == 0) {
            shmem_ctx_long_atomic_add(ctx, &g_count, 1, 0);
            g_noise_adds++;
        }
        i++;
    }
    shmem_ctx_destroy(ctx);
    return NULL;
}

static long phase(long base, int private_ctx, int with_noise)
{
    pthread_t th[T], nt;
    job_t jobs[T];
    g_stop = 0;
    g_noise_adds = 0;
    if (with_noise)
        T_CHECK(pthread_create(&nt, NULL, noise, NULL) == 0, "pthread_create");
    for (int t = 0; t < T; t++) {
        jobs[t] = (job_t){ t, base, private_ctx, 0 };
        T_CHECK(pthread_create(&th[t], NULL, worker, &jobs[t]) == 0, "pthread_create");
    }
    long sum = 0;
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        sum += jobs[t].fetch_sum;
    }
    if (with_noise) {
        g_stop = 1;
        pthread_join(nt, NULL);
        shmem_long_atomic_add(&g_count, -g_noise_adds, 0);
    }
    shmem_long_atomic_add(&g_fetch_sum, sum, 0);
    shmem_barrier_all();
    return base + ROUNDS;
}

void t_threads(void)
{
    int provided = -1;
    T_CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "init_thread");
    T_CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d, not SHMEM_THREAD_MULTIPLE (transport "
            "to PE %d: %s)", provided, T_N - 1, shmemx_transport(T_N - 1));
    shmem_barrier_all();
    long rounds = phase(0, 0, 0);
    rounds = phase(rounds, 1, 0);
    rounds = phase(rounds, 1, 1);
    if (T_ME == 0) {
        long total = (long)T_N * T * rounds;
        T_CHECK(g_count == total, "threads' adds on PE 0: %ld, expected %ld", g_count, total);
        T_CHECK(g_fetched == total && g_fetch_sum == total * (total - 1) / 2,
                "fetch_inc handed out %ld values summing to %ld, expected 0..%ld", g_fetched,
                g_fetch_sum, total - 1);
    }
}
