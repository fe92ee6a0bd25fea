// SPDX-License-Identifier: MIT
/*
 * Point-to-point synchronisation over the sync type table: wait_until and
 * test with every comparison, the _all/_any/_some forms and their _vector
 * twins with a status array excluding entries, the deprecated wait, and
 * signal_wait_until.  The left neighbour delivers the values the waits
 * are for, after a random-ish delay, so the waits really wait.
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
        T_CHECK(shmem_##N##_test_any_vector(v, NV, NULL, SHMEM_CMP_EQ, cmpv) == 0, "%s any_vector", #T); \
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
}
