// SPDX-License-Identifier: MIT
/*
 * Point-to-point synchronisation over the sync type table: wait_until and
 * test with every comparison, the _all/_any/_some forms and their _vector
 * twins with a status array excluding entries, the deprecated wait, and
 * signal_wait_until.  The left neighbour delivers the values the waits
 * are for, after a random-ish delay, so the waits really wait.  Then the
 * fairness of the _any forms: entries that stay satisfied are all returned,
 * in turn, to a caller that serves what it gets and asks again.
 */
#include <stdint.h>
#include <unistd.h>
#include "shtest.h"

#define NV 4

#define TEST_SYNC(T, N, A) { \
        T *v = shmem_calloc(NV, sizeof(T)); \
        T ones[NV] = { 1, 1, 1, 1 }, cmpv[NV] = { 1, 2, 1, 2 }; \
        int st[NV] = { 0, 1, 0, 0 }; \
        size_t idx[NV]; \
        /* single ivar: every comparison */ \
        T_CHECK(shmem_##N##_test(&v[0], SHMEM_CMP_EQ, 0) && !shmem_##N##_test(&v[0], SHMEM_CMP_NE, 0) \
                && shmem_##N##_test(&v[0], SHMEM_CMP_LT, 1) && shmem_##N##_test(&v[0], SHMEM_CMP_LE, 0) \
                && !shmem_##N##_test(&v[0], SHMEM_CMP_GT, 0) && shmem_##N##_test(&v[0], SHMEM_CMP_GE, 0), \
                "%s test comparisons", #T); \
        shmem_barrier_all(); \
        usleep((useconds_t)(me * 300)); \
        shmem_##N##_p(&v[0], (T)5, right); \
        shmem_##N##_wait_until(&v[0], SHMEM_CMP_GT, (T)4); \
        shmem_##N##_wait(&v[0], (T)0); \
        T_CHECK(v[0] == 5, "%s wait_until", #T); \
        /* all: the three non-excluded entries reach 1 */ \
        T_CHECK(!shmem_##N##_test_all(v + 1, NV - 1, NULL, SHMEM_CMP_EQ, 1), "%s test_all", #T); \
        T_CHECK(shmem_##N##_test_any(v, NV, st, SHMEM_CMP_EQ, 1) == SIZE_MAX, "%s test_any", #T); \
        T_CHECK(shmem_##N##_test_some(v, NV, idx, st, SHMEM_CMP_EQ, 1) == 0, "%s test_some", #T); \
        shmem_barrier_all(); \
        shmem_##N##_put(v, ones, NV, right); \
        shmem_##N##_wait_until_all(v, NV, st, SHMEM_CMP_EQ, 1); \
        T_CHECK(shmem_##N##_test_all(v, NV, NULL, SHMEM_CMP_EQ, 1), "%s wait_until_all", #T); \
        T_CHECK(shmem_##N##_test_all_vector(v, NV, st, SHMEM_CMP_LE, cmpv), "%s all_vector", #T); \
        size_t i = shmem_##N##_wait_until_any(v, NV, st, SHMEM_CMP_EQ, 1); \
        T_CHECK(i < NV && i != 1, "%s wait_until_any %zu", #T, i); \
        T_CHECK(shmem_##N##_wait_until_some(v, NV, idx, st, SHMEM_CMP_EQ, 1) == 3 && idx[0] == 0 && \
                idx[1] == 2 && idx[2] == 3, "%s wait_until_some", #T); \
        /* vector: entries 1 and 3 compare against 2 */ \
        i = shmem_##N##_test_any_vector(v, NV, NULL, SHMEM_CMP_EQ, cmpv); \
        T_CHECK(i == 0 || i == 2, "%s any_vector %zu", #T, i); \
        T_CHECK(shmem_##N##_test_some_vector(v, NV, idx, NULL, SHMEM_CMP_EQ, cmpv) == 2, \
                "%s some_vector", #T); \
        T_CHECK(shmem_##N##_wait_until_any_vector(v, NV, st, SHMEM_CMP_NE, cmpv) == 3, \
                "%s wait_until_any_vector", #T); \
        T_CHECK(shmem_##N##_wait_until_some_vector(v, NV, idx, NULL, SHMEM_CMP_LT, cmpv) == 2, \
                "%s wait_until_some_vector", #T); \
        shmem_##N##_wait_until_all_vector(v, NV, NULL, SHMEM_CMP_LE, cmpv); \
        T_CHECK(shmem_##N##_test_all_vector(v, NV, NULL, SHMEM_CMP_GE, ones), "%s all_vector", #T); \
        /* all excluded */ \
        int none[NV] = { 1, 1, 1, 1 }; \
        T_CHECK(shmem_##N##_wait_until_any(v, NV, none, SHMEM_CMP_EQ, 7) == SIZE_MAX && \
                shmem_##N##_wait_until_some(v, NV, idx, none, SHMEM_CMP_EQ, 7) == 0 && \
                shmem_##N##_test_all(v, NV, none, SHMEM_CMP_EQ, 7), "%s all excluded", #T); \
        shmem_barrier_all(); \
        shmem_free(v); \
    }

/* One of the four _any forms on long ivars, all compared EQ to 1. */
enum { T_ANY, W_ANY, T_ANY_V, W_ANY_V };
static size_t any_form(int form, long *v, size_t nv, const int *st)
{
    long ones[16];
    for (size_t i = 0; i < nv; i++)
        ones[i] = 1;
    switch (form) {
    case T_ANY: return shmem_long_test_any(v, nv, st, SHMEM_CMP_EQ, 1);
    case W_ANY: return shmem_long_wait_until_any(v, nv, st, SHMEM_CMP_EQ, 1);
    case T_ANY_V: return shmem_long_test_any_vector(v, nv, st, SHMEM_CMP_EQ, ones);
    default: return shmem_long_wait_until_any_vector(v, nv, st, SHMEM_CMP_EQ, ones);
    }
}

/*
 * A server that handles the index it gets and asks again.  flags[j] is set
 * by PE j (every PE's copy) and stays set: PE j always has work.  Each
 * round of nv calls must return every entry of the test set exactly once
 * (a scan from index 0 returns 0 every time and fails at the second call);
 * an excluded entry is never returned.  Two arrays polled in turn must both
 * be served in full too (a single rotating start would skip every other
 * index of each); there the bound is loose, since the two may share the
 * library's memory of where to start and then start at random.
 */
static void any_fairness(void)
{
    enum { NF = 8, ROUNDS = 3 };
    int me = T_ME, n = T_N;
    long *flags = shmem_calloc(NF, sizeof(long)), *other = shmem_calloc(NF, sizeof(long));
    shmem_barrier_all();
    /* Entries >= n are this PE's own, so every PE count has NF requests. */
    for (int pe = 0; pe < n; pe++)
        shmem_long_atomic_set(&flags[me], 1, pe);
    for (int j = n; j < NF; j++)
        flags[j] = 1;
    for (int j = 0; j < NF; j++)
        other[j] = 1;
    shmem_barrier_all();
    int excl[NF] = { 0 };
    excl[1] = excl[NF - 2] = 1;
    for (int form = T_ANY; form <= W_ANY_V; form++) {
        for (int masked = 0; masked < 2; masked++) {
            const int *st = masked ? excl : NULL;
            size_t live = masked ? NF - 2 : NF;
            for (int r = 0; r < ROUNDS; r++) {
                int seen[NF] = { 0 };
                for (size_t c = 0; c < live; c++) {
                    size_t i = any_form(form, flags, NF, st);
                    T_CHECK(i < NF && !(st && st[i]), "_any form %d returned %zu", form, i);
                    T_CHECK(!seen[i], "_any form %d (mask %d): index %zu again before every "
                            "satisfied entry was served (call %zu of round %d)", form, masked, i,
                            c + 1, r);
                    seen[i] = 1;
                }
            }
        }
        /* Two arrays in turn: every index of each within 40 rounds. */
        int seen[2][NF] = { { 0 } }, left = 2 * NF;
        for (int c = 0; c < 40 * NF && left; c++) {
            size_t i = any_form(form, flags, NF, NULL), j = any_form(form, other, NF, NULL);
            T_CHECK(i < NF && j < NF, "_any form %d on two arrays", form);
            left -= !seen[0][i] + !seen[1][j];
            seen[0][i] = seen[1][j] = 1;
        }
        T_CHECK(left == 0, "_any form %d: %d entries of two arrays polled in turn never served",
                form, left);
    }
    shmem_barrier_all();
    shmem_free(other);
    shmem_free(flags);
}

void t_sync(void)
{
    int me = T_ME, right = T_RIGHT;
    HPS_SHMEM_SYNC_TYPES(TEST_SYNC, _)
    /* signal_wait_until returns the value that satisfied it. */
    uint64_t *sig = shmem_calloc(1, sizeof *sig);
    static long data;
    long one = me + 100;
    shmem_barrier_all();
    shmem_long_put_signal(&data, &one, 1, sig, 3, SHMEM_SIGNAL_SET, right);
    T_CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_GE, 2) == 3, "signal_wait_until");
    T_CHECK(data == T_LEFT + 100 && shmem_signal_fetch(sig) == 3, "signal data");
    shmem_barrier_all();
    shmem_free(sig);
    any_fairness();
}
