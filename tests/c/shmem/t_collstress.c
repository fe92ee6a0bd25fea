// SPDX-License-Identifier: MIT
/*
 * Collectives under stress, where flag and buffer reuse bugs hide:
 *  - back to back, no barrier between calls, every call reusing the same
 *    source and dest buffers (filled and checked locally right before and
 *    after each call, which the library allows: a dest is written only by
 *    its owner during its own call);
 *  - a random mix (kinds, roots, sizes on both sides of the on-node ring's
 *    248 bytes, collect counts that differ per member, in place or not)
 *    with random per-PE delays, so members arrive in every order and
 *    waiters park and are woken;
 *  - a broadcast root running 40 calls ahead of members that sleep first
 *    (the flow control of the ring and of each pair's queue);
 *  - 1.3 active sets of different shapes interleaved on the same PEs, each
 *    shape reusing its pSync at once, which must come back to
 *    SHMEM_SYNC_VALUE;
 *  - 20 teams alive at once, more than there are on-node channels (16
 *    team slots have one), so the last run the point-to-point algorithms
 *    on-node, interleaved with one that has a channel;
 *  - a barrier that waits 200 ms for a sleeping PE: on-node, the waiters
 *    park instead of using the CPU.
 * The same checks run over libfabric (the point-to-point algorithms).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "hps_rand.h"
#include "shtest.h"

#define MAXE 4096                   /* longs in a member's block: 32 KiB */

/* Element i of what team member j contributes in round r. */
static long val(long r, long j, long i)
{
    return r * 1000003L + j * 7919L + i;
}

/* Sizes in elements: 8 B, around the ring's 248 bytes, and large. */
static const size_t sizes[] = { 1, 3, 30, 31, 32, 33, 200, 1500, MAXE };
#define NSIZES (sizeof sizes / sizeof sizes[0])

typedef struct buf {
    long *src, *dst;
} buf_t;

/* Member j's collect count in round r (differs per member: some fit the
 * ring, some do not, in the same call). */
static size_t count(long r, int j)
{
    static const size_t c[] = { 0, 1, 29, 30, 31, 64, 700 };
    return c[(size_t)(r * 5 + j * 3) % (sizeof c / sizeof c[0])];
}

/* One collective of kind k on team t, round r, nel elements, root. */
static void one(shmem_team_t t, const buf_t *b, int k, long r, size_t nel, int root)
{
    int tn = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    long *s = b->src, *d = b->dst;
    switch (k) {
    case 0: /* broadcast */
        for (size_t i = 0; i < nel; i++)
            s[i] = val(r, me, i), d[i] = -1;
        shmem_long_broadcast(t, d, s, nel, root);
        for (size_t i = 0; i < nel; i++)
            T_CHECK(d[i] == val(r, root, i), "broadcast round %ld (%zu, root %d) [%zu] = %ld", r,
                    nel, root, i, d[i]);
        break;
    case 1: /* fcollect */
        for (size_t i = 0; i < nel; i++)
            s[i] = val(r, me, i);
        shmem_long_fcollect(t, d, s, nel);
        for (int j = 0; j < tn; j++)
            for (size_t i = 0; i < nel; i++)
                T_CHECK(d[(size_t)j * nel + i] == val(r, j, i), "fcollect round %ld (%zu) from %d",
                        r, nel, j);
        break;
    case 2: { /* collect */
        size_t c = count(r, me), at = 0;
        for (size_t i = 0; i < c; i++)
            s[i] = val(r, me, i);
        shmem_long_collect(t, d, s, c);
        for (int j = 0; j < tn; j++)
            for (size_t i = 0, cj = count(r, j); i < cj; i++, at++)
                T_CHECK(d[at] == val(r, j, i), "collect round %ld from %d [%zu]", r, j, i);
        break;
    }
    case 3: /* alltoall */
        for (int j = 0; j < tn; j++)
            for (size_t i = 0; i < nel; i++)
                s[(size_t)j * nel + i] = val(r, (long)me * tn + j, i);
        shmem_long_alltoall(t, d, s, nel);
        for (int j = 0; j < tn; j++)
            for (size_t i = 0; i < nel; i++)
                T_CHECK(d[(size_t)j * nel + i] == val(r, (long)j * tn + me, i),
                        "alltoall round %ld (%zu) from %d", r, nel, j);
        break;
    case 4: { /* reduce, in place every other round */
        long *dd = r % 2 ? s : d;
        for (size_t i = 0; i < nel; i++)
            s[i] = val(r, me, i);
        shmem_long_sum_reduce(t, dd, s, nel);
        for (size_t i = 0; i < nel; i++) {
            long want = 0;
            for (int j = 0; j < tn; j++)
                want += val(r, j, i);
            T_CHECK(dd[i] == want, "sum_reduce round %ld (%zu, in place %ld) [%zu]", r, nel, r % 2,
                    i);
        }
        break;
    }
    case 5: { /* alltoalls: dest stride 2, source stride 1 */
        size_t m = nel > 100 ? 100 : nel;
        for (int j = 0; j < tn; j++)
            for (size_t i = 0; i < m; i++)
                s[(size_t)j * m + i] = val(r, (long)me * tn + j, i);
        for (size_t i = 0; i < 2 * m * (size_t)tn; i++)
            d[i] = -1;
        shmem_long_alltoalls(t, d, s, 2, 1, m);
        for (int j = 0; j < tn; j++)
            for (size_t i = 0; i < m; i++)
                T_CHECK(d[2 * ((size_t)j * m + i)] == val(r, (long)j * tn + me, i) &&
                        d[2 * ((size_t)j * m + i) + 1] == -1, "alltoalls round %ld (%zu) from %d",
                        r, m, j);
        break;
    }
    }
}

static void back_to_back(shmem_team_t t, const buf_t *b)
{
    int tn = shmem_team_n_pes(t);
    for (long r = 0; r < 6 * (long)NSIZES * 2; r++)
        one(t, b, (int)(r % 6), r, sizes[(size_t)(r / 6) % NSIZES], (int)(r % tn));
}

/* Every PE draws the same kinds, sizes and roots from one seed; the delays
 * come from a seed of its own. */
static void random_mix(shmem_team_t t, const buf_t *b, long rounds)
{
    int tn = shmem_team_n_pes(t);
    uint64_t shared = 0x9e3779b97f4a7c15ull, own = 0x2545f4914f6cdd1dull + (uint64_t)T_ME * 77;
    for (long r = 0; r < rounds; r++) {
        uint64_t x = hps_xorshift64(&shared);
        if (hps_xorshift64(&own) % 4 == 0)
            usleep((useconds_t)(hps_xorshift64(&own) % 300));
        one(t, b, (int)(x % 6), 1000 + r, sizes[(x >> 8) % NSIZES], (int)((x >> 16) % (uint64_t)tn));
    }
}

/* The root posts 40 broadcasts while the others sleep: it must stop and
 * wait for them when its queues are full, and every call still delivers. */
static void runahead(shmem_team_t t, const buf_t *b)
{
    int me = shmem_team_my_pe(t);
    if (me != 0)
        usleep(20000);
    for (long r = 0; r < 40; r++)
        one(t, b, 0, 5000 + r, (size_t)(r % 2 ? 1 : 31), 0);
}

/* 1.3 active sets: the world, the evens, the odds and the first two,
 * interleaved in one global order, a pSync per shape (two sets sharing a
 * PE may not use one pSync at the same time). */
static long pSync[4][SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 64];
static long asrc[64], adst[256];

static void active_sets(void)
{
    int n = T_N, me = T_ME;
    const int shape[4][3] = { { 0, 0, n }, { 0, 1, (n + 1) / 2 }, { 1, 1, n / 2 }, { 0, 0, 2 } };
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            pSync[k][i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (long r = 0; r < 60; r++) {
        const int *sh = shape[r % 4];
        long *ps = pSync[r % 4];
        int start = sh[0], stride = 1 << sh[1], size = sh[2], idx = (me - start) / stride;
        if (size < 1 || start + (size - 1) * stride >= n || me < start ||
            (me - start) % stride || idx >= size)
            continue;
        size_t nel = r % 3 ? 2 : 40;
        for (size_t i = 0; i < nel; i++)
            asrc[i] = val(r, idx, i);
        switch (r % 3) {
        case 0:
            shmem_long_sum_to_all(adst, asrc, (int)nel, start, sh[1], size, pWrk, ps);
            for (size_t i = 0; i < nel; i++) {
                long want = 0;
                for (int j = 0; j < size; j++)
                    want += val(r, j, i);
                T_CHECK(adst[i] == want, "active set %d: sum_to_all round %ld", (int)(r % 4), r);
            }
            break;
        case 1:
            shmem_fcollect64(adst, asrc, nel, start, sh[1], size, ps);
            for (int j = 0; j < size; j++)
                T_CHECK(adst[(size_t)j * nel + 1] == val(r, j, 1), "active set %d: fcollect64",
                        (int)(r % 4));
            break;
        case 2:
            adst[0] = -1;
            shmem_broadcast64(adst, asrc, nel, size - 1, start, sh[1], size, ps);
            T_CHECK(idx == size - 1 ? adst[0] == -1 : adst[1] == val(r, size - 1, 1),
                    "active set %d: broadcast64", (int)(r % 4));
            break;
        }
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            T_CHECK(ps[i] == SHMEM_SYNC_VALUE, "pSync[%d] not restored", i);
    }
}

/* The world's slot and the shared team's are taken: teams 0-13 get the
 * remaining channels, 14-19 none. */
#define NTEAMS 20
static void many_teams(const buf_t *b)
{
    shmem_team_t t[NTEAMS];
    for (int i = 0; i < NTEAMS; i++)
        T_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, T_N, NULL, 0, &t[i]) == 0 &&
                t[i] != SHMEM_TEAM_INVALID, "split %d", i);
    for (long r = 0; r < 60; r++)
        one(t[r % 2 ? NTEAMS - 1 : 3], b, (int)(r % 6), 7000 + r, sizes[(size_t)r % NSIZES],
            (int)(r % T_N));
    for (int i = NTEAMS - 1; i >= 0; i--)
        shmem_team_destroy(t[i]);
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* PE 0 sleeps 200 ms before the barrier; on-node the others park after
 * polling for HPSYNC_SHMEM_SPIN_US instead of spending the wait on the
 * CPU.  (Over libfabric nobody can ring a doorbell: those waits poll.) */
static void parked_wait(void)
{
    int on_node = 1;
    for (int pe = 0; pe < T_N; pe++)
        on_node &= !strcmp(shmemx_transport(pe), "shm");
    shmem_barrier_all();
    double c0 = cpu_s(), w0 = wall_s();
    if (T_ME == 0)
        usleep(200000);
    shmem_barrier_all();
    double cpu = cpu_s() - c0, wall = wall_s() - w0;
    if (T_ME != 0 && on_node)
        T_CHECK(cpu < 0.25 * wall, "a barrier waiter used %.0f ms of CPU in %.0f ms", cpu * 1e3,
                wall * 1e3);
}

void t_collstress(void)
{
    int n = T_N;
    buf_t b = { shmem_malloc((size_t)MAXE * (size_t)n * sizeof(long)),
                shmem_malloc(2 * (size_t)MAXE * (size_t)n * sizeof(long)) };
    T_CHECK(b.src && b.dst, "shmem_malloc");
    back_to_back(SHMEM_TEAM_WORLD, &b);
    random_mix(SHMEM_TEAM_WORLD, &b, 300);
    runahead(SHMEM_TEAM_WORLD, &b);
    /* A team of all but PE 0, so team ranks differ from world ranks. */
    shmem_team_t t;
    T_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n > 1, 1, n > 1 ? n - 1 : 1, NULL, 0, &t) ==
            0, "split");
    if (t != SHMEM_TEAM_INVALID) {
        back_to_back(t, &b);
        random_mix(t, &b, 150);
        shmem_team_destroy(t);
    }
    many_teams(&b);
    active_sets();
    parked_wait();
    shmem_free(b.dst);
    shmem_free(b.src);
}
