// SPDX-License-Identifier: MIT
/*
 * Reader-writer locks, one case per run:
 *   rwlock_test handoff   who gets the lock when a writer unlocks while
 *            readers and a writer are queued: glibc's rule, every time
 *   rwlock_test stress <kind> [threads|Nx] [iterations]   readers and
 *            writers mixing every acquire call; writers see nobody else
 *            inside, readers see no writer and a consistent pair
 * Run bare for glibc, under LD_PRELOAD for the interposer.
 *
 * glibc's rule at a write unlock (nptl/pthread_rwlock_common.c): with the
 * default kind (and PTHREAD_RWLOCK_PREFER_READER_NP) the readers that
 * queued during the write phase all get the lock and the writer waits for
 * them; with PTHREAD_RWLOCK_PREFER_WRITER_NP and
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP a queued writer gets it
 * first.  The case queues them in both orders, waiting each time until the
 * thread sleeps in the kernel, so the outcome cannot depend on timing: the
 * lock is held for 20 ms by whoever gets it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "../../../src/common/hps_rand.h"

static const struct { const char *name; int kind; int writer_first; } kinds[] = {
    { "default", -1, 0 },
    { "prefer_reader_np", PTHREAD_RWLOCK_PREFER_READER_NP, 0 },
    { "prefer_writer_np", PTHREAD_RWLOCK_PREFER_WRITER_NP, 1 },
    { "prefer_writer_nonrecursive_np", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, 1 },
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static void init_kind(pthread_rwlock_t *l, int k)
{
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    if (kinds[k].kind >= 0)
        HPS_CHECK_RC("setkind_np", pthread_rwlockattr_setkind_np(&a, kinds[k].kind), 0);
    HPS_CHECK_RC("pthread_rwlock_init", pthread_rwlock_init(l, kinds[k].kind >= 0 ? &a : NULL), 0);
    pthread_rwlockattr_destroy(&a);
}

/* ---- handoff ------------------------------------------------------------- */

#define HO_READERS 3
#define HO_REPEATS 5

struct ho_thread {
    pthread_rwlock_t *l;
    int writer;
    _Atomic int tid;
    _Atomic unsigned *next;             /* order of acquisition */
    unsigned order;
};

static void *ho_main(void *arg)
{
    struct ho_thread *t = arg;
    atomic_store(&t->tid, hps_test_gettid());
    int rc = t->writer ? pthread_rwlock_wrlock(t->l) : pthread_rwlock_rdlock(t->l);
    if (rc)
        hps_test_fail("%s returned %s", t->writer ? "wrlock" : "rdlock", hps_errno_name(rc));
    t->order = atomic_fetch_add(t->next, 1);
    struct timespec hold = { 0, 20000000 };
    nanosleep(&hold, NULL);
    HPS_CHECK_RC("unlock", pthread_rwlock_unlock(t->l), 0);
    return NULL;
}

static void handoff_once(int k, int writer_queued_first)
{
    pthread_rwlock_t l;
    init_kind(&l, k);
    _Atomic unsigned next = 0;
    struct ho_thread th[HO_READERS + 1];
    pthread_t pt[HO_READERS + 1];
    HPS_CHECK_RC("wrlock", pthread_rwlock_wrlock(&l), 0);
    for (int i = 0; i <= HO_READERS; i++) {
        /* The writer is thread 0 or the last one started. */
        int writer = writer_queued_first ? i == 0 : i == HO_READERS;
        th[i] = (struct ho_thread){ .l = &l, .writer = writer, .next = &next };
        if (pthread_create(&pt[i], NULL, ho_main, &th[i]) != 0)
            hps_test_fail("pthread_create failed");
        while (atomic_load(&th[i].tid) == 0)
            sched_yield();
        hps_test_wait_asleep(atomic_load(&th[i].tid));
    }
    HPS_CHECK_RC("unlock (write)", pthread_rwlock_unlock(&l), 0);
    unsigned writer_order = 0;
    for (int i = 0; i <= HO_READERS; i++) {
        pthread_join(pt[i], NULL);
        if (th[i].writer)
            writer_order = th[i].order;
    }
    unsigned want = kinds[k].writer_first ? 0 : HO_READERS;
    if (writer_order != want)
        hps_test_fail("%s, %s queued first: the writer got the lock %s (place %u of %d); glibc gives it %s",
                      kinds[k].name, writer_queued_first ? "writer" : "readers",
                      writer_order == 0 ? "first" : "after readers", writer_order, HO_READERS + 1,
                      kinds[k].writer_first ? "to the writer" : "to the readers");
    HPS_CHECK_RC("pthread_rwlock_destroy", pthread_rwlock_destroy(&l), 0);
}

static void case_handoff(void)
{
    for (size_t k = 0; k < NKINDS; k++) {
        for (int r = 0; r < HO_REPEATS; r++) {
            handoff_once((int)k, 0);
            handoff_once((int)k, 1);
        }
        printf("%s: ok: %s hands a write-unlocked lock to %s (%d times each queue order)\n",
               hps_test_name(), kinds[k].name, kinds[k].writer_first ? "the writer" : "the readers",
               HO_REPEATS);
    }
}

/* ---- stress -------------------------------------------------------------- */

static struct {
    pthread_rwlock_t l;
    unsigned long iters;
    /* Plain fields: the lock guards them.  a == b outside writers. */
    unsigned long a, b;
    _Atomic int readers, writers;
    _Atomic unsigned long reads, writes;
} st;

static int acquire(int write, uint32_t r)
{
    switch (r % 4) {
    case 0:
        return write ? pthread_rwlock_wrlock(&st.l) : pthread_rwlock_rdlock(&st.l);
    case 1: {
        int rc;
        unsigned n = 0;
        while ((rc = write ? pthread_rwlock_trywrlock(&st.l) : pthread_rwlock_tryrdlock(&st.l)) == EBUSY)
            if (++n % 16 == 0)
                sched_yield();
        return rc;
    }
    case 2:
        for (;;) {
            struct timespec dl = hps_test_deadline(CLOCK_REALTIME, 20000);
            int rc = write ? pthread_rwlock_timedwrlock(&st.l, &dl) : pthread_rwlock_timedrdlock(&st.l, &dl);
            if (rc != ETIMEDOUT)
                return rc;
        }
    default:
        for (;;) {
            struct timespec dl = hps_test_deadline(CLOCK_MONOTONIC, 50000);
            int rc = write ? pthread_rwlock_clockwrlock(&st.l, CLOCK_MONOTONIC, &dl)
                           : pthread_rwlock_clockrdlock(&st.l, CLOCK_MONOTONIC, &dl);
            if (rc != ETIMEDOUT)
                return rc;
        }
    }
}

static void *st_thread(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (id + 1);
    for (unsigned long i = 0; i < st.iters; i++) {
        uint32_t r = (uint32_t)(hps_xorshift64(&rng) >> 32);
        /* Odd threads write half the time (writers queue behind writers,
         * hand-overs, timeouts among them), even ones one time in eight. */
        int write = (id & 1) ? r % 2 == 0 : r % 8 == 0;
        int rc = acquire(write, r >> 3);
        if (rc)
            hps_test_fail("%s acquire returned %s", write ? "write" : "read", hps_errno_name(rc));
        if (write) {
            if (atomic_fetch_add(&st.writers, 1) != 0 || atomic_load(&st.readers) != 0)
                hps_test_fail("a writer got in with %d writers and %d readers inside",
                              atomic_load(&st.writers) - 1, atomic_load(&st.readers));
            volatile unsigned long *pa = &st.a, *pb = &st.b;
            unsigned long v = *pa;
            *pa = v + 1;
            for (unsigned k = 0; k < (r & 31); k++)
                __asm__ __volatile__("" ::: "memory");
            *pb = v + 1;
            atomic_fetch_sub(&st.writers, 1);
            atomic_fetch_add(&st.writes, 1);
        } else {
            atomic_fetch_add(&st.readers, 1);
            if (atomic_load(&st.writers) != 0)
                hps_test_fail("a reader got in while a writer was inside");
            volatile unsigned long *pa = &st.a, *pb = &st.b;
            unsigned long a = *pa, b = *pb;
            if (a != b)
                hps_test_fail("a reader saw a torn pair (%lu, %lu)", a, b);
            atomic_fetch_sub(&st.readers, 1);
            atomic_fetch_add(&st.reads, 1);
        }
        HPS_CHECK_RC("pthread_rwlock_unlock", pthread_rwlock_unlock(&st.l), 0);
        if ((i & 255) == 255)
            sched_yield();
    }
    return NULL;
}

static int case_stress(const hps_test_case_t *c, int argc, char **argv)
{
    int k = -1;
    for (size_t i = 0; i < NKINDS; i++)
        if (!strcmp(argv[1], kinds[i].name))
            k = (int)i;
    if (k < 0) {
        fprintf(stderr, "rwlock_test: unknown kind '%s'; kinds:", argv[1]);
        for (size_t i = 0; i < NKINDS; i++)
            fprintf(stderr, " %s", kinds[i].name);
        fputc('\n', stderr);
        return 2;
    }
    unsigned n = argc > 2 ? hps_test_threads(argv[2]) : 4;
    st.iters = argc > 3 ? hps_test_ulong(argv[3], "iterations") : 50000;
    init_kind(&st.l, k);
    pthread_t *t = calloc(n, sizeof *t);
    HPS_CHECK(t, "out of memory");
    for (unsigned i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, st_thread, (void *)(uintptr_t)i) != 0)
            hps_test_fail("pthread_create failed");
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    unsigned long writes = atomic_load(&st.writes), reads = atomic_load(&st.reads);
    HPS_CHECK(st.a == writes && st.b == writes, "lost writes: a %lu, b %lu, writes %lu", st.a, st.b, writes);
    HPS_CHECK(reads + writes == n * st.iters, "%lu acquisitions of %lu", reads + writes, n * st.iters);
    HPS_CHECK_RC("trywrlock at the end", pthread_rwlock_trywrlock(&st.l), 0);
    HPS_CHECK_RC("unlock", pthread_rwlock_unlock(&st.l), 0);
    HPS_CHECK_RC("pthread_rwlock_destroy", pthread_rwlock_destroy(&st.l), 0);
    printf("%s: ok: %u threads, %lu reads, %lu writes\n", hps_test_name(), n, reads, writes);
    free(t);
    return 0;
}

static const hps_test_case_t cases[] = {
    { "handoff", .run = case_handoff },
    { "stress", .run_args = case_stress, .args = "<kind> [threads|Nx] [iterations]",
      .min_args = 1, .max_args = 3 },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("rwlock_test", cases, 100, HPS_TEST_NAME_IMPL);

int main(int argc, char **argv) { return hps_test_main(&suite, argc, argv); }
