// SPDX-License-Identifier: MIT
/*
 * Distributed locks guarding a non-atomic read-modify-write of a counter on
 * PE 0 (lost updates would show in the total), test_lock's answers, and
 * contexts: create with every option, operations through them, ctx quiet
 * and fence ordering a flag after data.
 */
#include <sched.h>
#include "shtest.h"

#define ITERS 300

static long g_lock;

void t_lock_ctx(void)
{
    int me = T_ME, n = T_N, right = T_RIGHT;
    /* Two locks (a global, a heap object), each guarding its own counter. */
    long *counter = shmem_calloc(2, sizeof *counter);
    long *lock2 = shmem_calloc(1, sizeof *lock2);
    for (int i = 0; i < ITERS; i++) {
        long *lk = i % 2 ? &g_lock : lock2, *c = &counter[i % 2];
        if (i % 3 == 0) {
            while (shmem_test_lock(lk))
                sched_yield();              /* the holder may need this CPU */
        } else {
            shmem_set_lock(lk);
        }
        long v = shmem_long_g(c, 0);
        shmem_long_p(c, v + 1, 0);
        shmem_clear_lock(lk);
    }
    shmem_barrier_all();
    long total = shmem_long_g(&counter[0], 0) + shmem_long_g(&counter[1], 0);
    T_CHECK(total == (long)ITERS * n, "lock: %ld increments, want %ld", total, (long)ITERS * n);
    if (me == 0) {
        shmem_set_lock(&g_lock);
        T_CHECK(shmem_test_lock(&g_lock) == 1, "test_lock on a held lock");
        shmem_clear_lock(&g_lock);
        T_CHECK(shmem_test_lock(&g_lock) == 0, "test_lock on a free lock");
        shmem_clear_lock(&g_lock);
    }
    shmem_barrier_all();

    /* Contexts: data then flag through the same context, ordered by
     * ctx_fence; the receiver waits for the flag and must see the data. */
    long opts[] = { 0, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE,
                    SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE };
    long *data = shmem_calloc(64, sizeof *data), *flag = shmem_calloc(1, sizeof *flag);
    for (unsigned k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        shmem_ctx_t ctx;
        T_CHECK(shmem_ctx_create(opts[k], &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
        long src[64];
        for (int i = 0; i < 64; i++)
            src[i] = (long)k * 1000 + me * 64 + i;
        shmem_ctx_long_put_nbi(ctx, data, src, 64, right);
        shmem_ctx_fence(ctx);
        shmem_ctx_long_atomic_set(ctx, flag, (long)k + 1, right);
        shmem_ctx_quiet(ctx);
        shmem_long_wait_until(flag, SHMEM_CMP_EQ, (long)k + 1);
        for (int i = 0; i < 64; i++)
            T_CHECK(data[i] == (long)k * 1000 + T_LEFT * 64 + i, "ctx %u data after flag", k);
        shmem_team_t team;
        T_CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "ctx team");
        shmem_ctx_destroy(ctx);
        shmem_barrier_all();
    }
    shmem_team_t team;
    T_CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD,
            "default ctx team");
    T_CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID,
            "invalid ctx team");
    shmem_free(flag);
    shmem_free(data);
    shmem_free(lock2);
    shmem_free(counter);
}
