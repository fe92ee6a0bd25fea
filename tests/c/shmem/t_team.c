// SPDX-License-Identifier: MIT
/*
 * Teams: the predefined ones, split_strided and split_2d (numbering,
 * translate_pe, get_config), synchronisation inside a team that excludes
 * some PEs, destroy and re-split many times (slots are recycled),
 * contexts made from a team, and shmem_team_ptr.
 */
#include <string.h>
#include "shtest.h"

static void check_strided(shmem_team_t t, int start, int stride, int size)
{
    int me = T_ME;
    int member = me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
    if (!member) {
        T_CHECK(t == SHMEM_TEAM_INVALID, "non-member got a team");
        return;
    }
    T_CHECK(t != SHMEM_TEAM_INVALID, "member got no team");
    T_CHECK(shmem_team_n_pes(t) == size, "n_pes %d, want %d", shmem_team_n_pes(t), size);
    T_CHECK(shmem_team_my_pe(t) == (me - start) / stride, "my_pe");
    for (int i = 0; i < size; i++) {
        T_CHECK(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD) == start + i * stride,
                "translate %d to world", i);
        T_CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, start + i * stride, t) == i,
                "translate world to team");
    }
    T_CHECK(shmem_team_translate_pe(t, size, SHMEM_TEAM_WORLD) == -1, "translate out of range");
    /* team_ptr numbers PEs in the team: the same pointer shmem_ptr gives for
     * the world PE. */
    static long obj;
    for (int i = 0; i < size; i++)
        T_CHECK(shmem_team_ptr(t, &obj, i) == shmem_ptr(&obj, start + i * stride),
                "team_ptr(%d) of a strided team", i);
    T_CHECK(shmem_team_ptr(t, &obj, size) == NULL && shmem_team_ptr(t, &obj, -1) == NULL,
            "team_ptr out of the team");
}

/* shmem_team_ptr on the predefined teams: a pointer exactly for the PEs
 * whose memory is mapped here (all of SHMEM_TEAM_SHARED), through which a
 * store is seen by that PE; NULL for the invalid team and non-symmetric
 * addresses. */
static void team_ptr(void)
{
    int me = T_ME, n = T_N;
    int *x = shmem_calloc((size_t)n, sizeof *x);
    static int g;
    for (int pe = 0; pe < n; pe++) {
        int *p = shmem_team_ptr(SHMEM_TEAM_WORLD, &x[me], pe);
        T_CHECK(p == shmem_ptr(&x[me], pe), "team_ptr(WORLD, %d) is not shmem_ptr", pe);
        T_CHECK(pe != me || p == &x[me], "team_ptr to itself");
        T_CHECK((p != NULL) == !strcmp(shmemx_transport(pe), "shm") || pe == me,
                "team_ptr(WORLD, %d) and the transport disagree", pe);
        if (p)
            *p = me + 1;                        /* x[me] on PE pe */
        T_CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, &g, pe) == shmem_ptr(&g, pe), "team_ptr global");
    }
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    for (int i = 0; i < sn; i++)
        T_CHECK(shmem_team_ptr(SHMEM_TEAM_SHARED, &x[0], i) != NULL,
                "team_ptr(SHARED, %d) is NULL", i);
    T_CHECK(shmem_team_ptr(SHMEM_TEAM_SHARED, &x[0], sn) == NULL, "team_ptr past SHARED");
    T_CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, &x[0], 0) == NULL, "team_ptr(INVALID)");
    int local;
    T_CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, &local, me) == NULL, "team_ptr of a stack variable");
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++)
        T_CHECK(x[pe] == (shmem_ptr(&x[0], pe) ? pe + 1 : 0),
                "store through team_ptr from PE %d: %d", pe, x[pe]);
    shmem_barrier_all();
    shmem_free(x);
}

void t_team(void)
{
    int me = T_ME, n = T_N;
    T_CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n,
            "world team");
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    T_CHECK(sn >= 1 && sn <= n && shmem_team_my_pe(SHMEM_TEAM_SHARED) >= 0, "shared team");
    for (int i = 0; i < sn; i++) {
        int w = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
        static int probe;
        T_CHECK(w >= 0 && shmem_ptr(&probe, w) != NULL, "shared team member %d not mapped", w);
    }

    enum { ROUNDS = 100 };
    long *count = shmem_calloc(ROUNDS, sizeof *count);
    long *hits = shmem_calloc(ROUNDS, sizeof *hits);
    /* Many splits and destroys: more than the slots there are, so slots
     * must be recycled. */
    for (int round = 0; round < ROUNDS; round++) {
        int start = round % n, stride = 1 + round % 2, size = (n - start + stride - 1) / stride;
        shmem_team_t t;
        shmem_team_config_t conf = { .num_contexts = round % 3 };
        T_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, &conf,
                                         SHMEM_TEAM_NUM_CONTEXTS, &t) == 0, "split %d", round);
        int member = me >= start && (me - start) % stride == 0;
        T_CHECK(member == (t != SHMEM_TEAM_INVALID), "membership round %d", round);
        if (t != SHMEM_TEAM_INVALID) {
            check_strided(t, start, stride, size);
            shmem_team_config_t got;
            T_CHECK(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
                    got.num_contexts == round % 3, "get_config");
            /* Team barrier: every member counts before any checks. */
            shmem_long_atomic_inc(&count[round], start);
            shmem_quiet();                  /* team_sync orders, it does not complete */
            shmem_team_sync(t);
            T_CHECK(shmem_long_atomic_fetch(&count[round], start) == size,
                    "team_sync passed early");
            shmem_ctx_t ctx;
            T_CHECK(shmem_team_create_ctx(t, 0, &ctx) == 0, "team_create_ctx");
            shmem_team_t back;
            T_CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == t, "ctx_get_team");
            /* A context's operations number PEs in its team: every member
             * adds its bit on the team's last member (world PE
             * start + (size - 1) * stride), and nothing lands elsewhere. */
            int tme = shmem_team_my_pe(t), last = size - 1;
            shmem_ctx_long_atomic_add(ctx, &hits[round], 1L << tme, last);
            shmem_ctx_long_p(ctx, &count[round], size, last);
            shmem_ctx_quiet(ctx);
            shmem_team_sync(t);
            if (tme == last)
                T_CHECK(hits[round] == (1L << size) - 1 && count[round] == size,
                        "round %d: team context adds %#lx, p %ld", round,
                        (unsigned long)hits[round], count[round]);
            else
                T_CHECK(hits[round] == 0, "round %d: team context add landed on team PE %d",
                        round, tme);
            shmem_ctx_destroy(ctx);
            shmem_team_destroy(t);
        }
        shmem_barrier_all();
    }
    shmem_free(hits);
    shmem_free(count);

    /* split_2d: rows of 2 */
    shmem_team_t x, y;
    T_CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &x, NULL, 0, &y) == 0, "split_2d");
    T_CHECK(x != SHMEM_TEAM_INVALID && y != SHMEM_TEAM_INVALID, "split_2d teams");
    T_CHECK(shmem_team_my_pe(x) == me % 2 && shmem_team_n_pes(x) == (me / 2 * 2 + 2 <= n ? 2 : 1),
            "x team");
    T_CHECK(shmem_team_my_pe(y) == me / 2 && shmem_team_n_pes(y) == (n - me % 2 + 1) / 2, "y team");
    T_CHECK(shmem_team_translate_pe(y, 0, SHMEM_TEAM_WORLD) == me % 2, "y team member 0");
    int *v = shmem_calloc(1, sizeof *v);
    int sum, one = 1;
    static int src;
    src = 1;
    (void)one;
    shmem_int_sum_reduce(y, &sum, &src, 1);
    T_CHECK(sum == shmem_team_n_pes(y), "sum over the y team");
    shmem_int_sum_reduce(x, &sum, &src, 1);
    T_CHECK(sum == shmem_team_n_pes(x), "sum over the x team");
    shmem_team_destroy(x);
    shmem_team_destroy(y);
    shmem_free(v);

    /* Bad arguments: an error code, not a team. */
    shmem_team_t bad;
    T_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n + 1, NULL, 0, &bad) != 0 &&
            bad == SHMEM_TEAM_INVALID, "oversized split");
    T_CHECK(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1 && shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1,
            "invalid team queries");
    team_ptr();
}
