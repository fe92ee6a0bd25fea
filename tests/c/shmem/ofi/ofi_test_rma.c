/* SPDX-License-Identifier: MIT */
/*
 * ofi_test_rma.c - puts and gets of 1 B .. 1 MiB, non-blocking forms,
 * the data segment, fence ordering, and progress while a target computes.
 *
 * Visibility after quiet is checked the strict way: the receiver looks at
 * its own memory after an out-of-band barrier (fake_rt's futex), never
 * through the fabric, so "counted but not yet processed" would show.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ofi_test.h"

static int right(void) { return (ot.me + 1) % ot.n; }
static int left(void) { return (ot.me + ot.n - 1) % ot.n; }

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        OT_FAIL("PE %d: out of memory", ot.me);
    return p;
}

/* Every PE puts len bytes to its right neighbour (its own slot there),
 * then gets them back. */
void ot_case_rma(void)
{
    static const size_t sizes[] = { 1, 2, 3, 4, 7, 8, 9, 15, 16, 31, 63, 64, 65, 127, 255, 256,
                                    257, 1000, 4095, 4096, 4097, 65536, 262144, OT_MAX_MSG };
    char *src = xmalloc(OT_MAX_MSG), *dst = xmalloc(OT_MAX_MSG), what[64];
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = sizes[k];
        ot_fill(src, len, len * 64 + (size_t)ot.me);
        OT_OK(ot_put(0, OT_HEAP_RMA(ot.me), src, len, right()));
        /* A blocking put has let go of its source. */
        memset(src, 0xee, len);
        OT_OK(ot_quiet());
        ot_barrier();
        snprintf(what, sizeof what, "%zu-byte put from PE %d", len, left());
        ot_expect(ot.heap + OT_HEAP_RMA(left()), len, len * 64 + (size_t)left(), what);
        memset(dst, 0, len);
        OT_OK(ot_get(dst, 0, OT_HEAP_RMA(ot.me), len, right()));
        snprintf(what, sizeof what, "%zu-byte get from PE %d", len, right());
        ot_expect(dst, len, len * 64 + (size_t)ot.me, what);
        ot_barrier();
    }
    free(src);
    free(dst);
}

/* Many non-blocking puts (inject-sized and not) completed by one quiet,
 * then non-blocking gets completed by one quiet. */
void ot_case_nbi(void)
{
    enum { SMALL = 8, NSMALL = 512, BIG = 3000, NBIG = 64 };
    size_t end = SMALL * NSMALL + (size_t)BIG * NBIG;
    char *src = xmalloc(end), *dst = xmalloc(end);
    uint64_t seed = 999 + (uint64_t)ot.me;
    ot_fill(src, end, seed);
    size_t base = OT_HEAP_RMA(ot.me);
    for (size_t off = 0; off < SMALL * NSMALL; off += SMALL)
        OT_OK(ot_put_nbi(0, base + off, src + off, SMALL, right()));
    for (size_t off = SMALL * NSMALL; off < end; off += BIG)
        OT_OK(ot_put_nbi(0, base + off, src + off, BIG, right()));
    OT_OK(ot_quiet());
    ot_barrier();
    ot_expect(ot.heap + OT_HEAP_RMA(left()), end, 999 + (uint64_t)left(), "nbi puts from the left");
    memset(dst, 0, end);
    for (size_t off = 0; off < end; off += 1000) {
        size_t n = end - off < 1000 ? end - off : 1000;
        OT_OK(ot_get_nbi(dst + off, 0, base, 0, right()));         /* zero bytes: no-op */
        OT_OK(ot_get_nbi(dst + off, 0, base + off, n, right()));
    }
    OT_OK(ot_quiet());
    ot_expect(dst, end, seed, "nbi gets from the right");
    /* Nothing outstanding: the inline quiet returns without calling out. */
    if (hps_load_relaxed(&ot.c->put_issued) + hps_load_relaxed(&ot.c->get_issued) !=
        hps_load_relaxed(&ot.c->done))
        OT_FAIL("PE %d: quiet left done behind put_issued + get_issued", ot.me);
    OT_OK(ot_quiet_fast());
    free(src);
    free(dst);
}

/*
 * Windows of 1 MiB non-blocking puts (8 MiB in flight), then one quiet:
 * the transmit queue fills, and the full-queue path (drain, retry) must
 * neither stall nor lose a put.  Every put of a round carries the same
 * bytes, so the target's slot holds them whatever order they land in.
 */
void ot_case_window(void)
{
    enum { WIN = 8 };
    int rounds = ot.quick ? 2 : 4;
    char *src[WIN];
    for (int i = 0; i < WIN; i++)
        src[i] = xmalloc(OT_MAX_MSG);
    char what[64];
    for (int r = 0; r < rounds; r++) {
        uint64_t seed = 4000 + (uint64_t)r * 16 + (uint64_t)ot.me;
        for (int i = 0; i < WIN; i++)
            ot_fill(src[i], OT_MAX_MSG, seed);
        for (int i = 0; i < WIN; i++)
            OT_OK(ot_put_nbi(0, OT_HEAP_RMA(ot.me), src[i], OT_MAX_MSG, right()));
        OT_OK(ot_quiet());
        ot_barrier();
        snprintf(what, sizeof what, "round %d of 1 MiB put windows from PE %d", r, left());
        ot_expect(ot.heap + OT_HEAP_RMA(left()), OT_MAX_MSG, 4000 + (uint64_t)r * 16 + (uint64_t)left(),
                  what);
        ot_barrier();
    }
    for (int i = 0; i < WIN; i++)
        free(src[i]);
}

/*
 * Where the provider cannot count operations into this PE (no remote
 * counter: tcp;ofi_rxm), the poll stamp must still move now and then, or
 * a waiting PE naps between polls and every operation into it waits for
 * its next poll (docs/shmem.md: 16 000 blocking puts/s instead of 60 000).
 */
void ot_case_blind(void)
{
    if (hps_ofi.remote_cntr || ot.me != 0)
        return;
    uint64_t s0 = hps_ofi_poll(), t0 = hps_test_now_ns();
    while (hps_ofi_poll() == s0)
        if (hps_test_now_ns() - t0 > 300000000ull)
            OT_FAIL("PE 0: without a remote counter the poll stamp stood still for 300 ms");
}

/* The second region (the program's static data), including to oneself. */
void ot_case_data(void)
{
    enum { LEN = 1000, COUNTER = OT_DATA_SIZE - 64 };
    char src[LEN];
    for (int target = 0; target < 2; target++) {
        int pe = target ? ot.me : right();
        uint64_t seed = 5000 + (uint64_t)ot.me * 2 + (uint64_t)target;
        ot_fill(src, LEN, seed);
        OT_OK(ot_put_fast(1, (size_t)ot.me * 2 * LEN + (size_t)target * LEN, src, LEN, pe));
        OT_OK(ot_put_fast(1, (size_t)ot.me * 2 * LEN + (size_t)target * LEN, src, 8, pe));
    }
    uint64_t one = 1;
    for (int i = 0; i < 10; i++)
        OT_OK(ot_atomic(HPS_AOP_ADD, 1, COUNTER, &one, NULL, NULL, 8, 0));
    OT_OK(ot_quiet_fast());
    ot_barrier();
    ot_expect(ot.data + (size_t)left() * 2 * LEN, LEN, 5000 + (uint64_t)left() * 2, "data segment put");
    ot_expect(ot.data + (size_t)ot.me * 2 * LEN + LEN, LEN, 5000 + (uint64_t)ot.me * 2 + 1,
              "data segment put to self");
    uint64_t got = 0;
    OT_OK(ot_get(&got, 1, COUNTER, 8, 0));
    if (got != 10u * (uint64_t)ot.n)
        OT_FAIL("PE %d: data segment counter is %llu, expected %d", ot.me, (unsigned long long)got,
                10 * ot.n);
    ot_barrier();
}

/* Data, fence, flag: whoever sees the flag sees the data.  Sizes cross
 * the inject limit so both kinds of put are ordered against each other. */
void ot_case_fence(void)
{
    static const size_t sizes[] = { 8, 200, 4096, 65536 };
    int rounds = ot.quick ? 12 : 40;
    char *src = xmalloc(65536), what[64];
    uint64_t *flag = ot_misc(OT_FENCE_FLAG), *ack = ot_misc(OT_FENCE_ACK);
    for (uint64_t it = 1; it <= (uint64_t)rounds; it++) {
        size_t len = sizes[it % 4];
        ot_fill(src, len, it * 16 + (uint64_t)ot.me);
        OT_OK(ot_put_nbi(0, ot.misc + OT_FENCE_DATA, src, len, right()));
        OT_OK(ot_fence());
        OT_OK(ot_put_fast(0, ot.misc + OT_FENCE_FLAG, &it, 8, right()));
        ot_wait_word(flag, it, "fence flag");
        snprintf(what, sizeof what, "round %llu: %zu bytes before the fence", (unsigned long long)it, len);
        ot_expect(ot_misc(OT_FENCE_DATA), len, it * 16 + (uint64_t)left(), what);
        OT_OK(ot_put_fast(0, ot.misc + OT_FENCE_ACK, &it, 8, left()));
        /* The source of put_nbi is ours again only after quiet. */
        OT_OK(ot_quiet());
        ot_wait_word(ack, it, "fence ack");
    }
    /* A small write, a fence, then a large one over it: the large one wins. */
    uint64_t small = 0x5a5a5a5a5a5a5a5aull;
    ot_fill(src, 65536, 77);
    OT_OK(ot_put_fast(0, ot.misc + OT_FENCE_DATA + 64, &small, 8, right()));
    OT_OK(ot_fence());
    OT_OK(ot_put_nbi(0, ot.misc + OT_FENCE_DATA, src, 65536, right()));
    OT_OK(ot_quiet());
    ot_barrier();
    ot_expect(ot_misc(OT_FENCE_DATA), 65536, 77, "large put after small put and fence");
    free(src);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * PE 1 computes for a while without calling the transport; PE 0's puts,
 * gets and atomics to it must still complete (the provider's own progress
 * or our progress thread).  Then every PE sleeps outside the library: the
 * progress thread must not eat the CPU meanwhile.
 */
void ot_case_compute(void)
{
    const uint64_t busy_ns = 300000000ull;
    if (ot.n >= 2 && ot.me == 1) {
        memset(ot.heap + OT_HEAP_RMA(0), 0, 16);
        ot_barrier();
        volatile double x = 1.0;
        uint64_t t0 = hps_test_now_ns();
        while (hps_test_now_ns() - t0 < busy_ns)
            for (int i = 0; i < 10000; i++)
                x = x * 1.0000001 + 1e-9;
        ot_barrier();
    } else if (ot.n >= 2 && ot.me == 0) {
        ot_barrier();
        usleep(10000);
        uint64_t worst = 0, v = 0, one = 1, old = 0, t1 = hps_test_now_ns();
        for (int i = 0; i < 10; i++) {
            uint64_t t = hps_test_now_ns();
            v = (uint64_t)i;
            OT_OK(ot_put(0, OT_HEAP_RMA(0), &v, 8, 1));
            OT_OK(ot_quiet());
            OT_OK(ot_get(&v, 0, OT_HEAP_RMA(0), 8, 1));
            OT_OK(ot_atomic(HPS_AOP_ADD, 0, OT_HEAP_RMA(0) + 8, &one, NULL, &old, 8, 1));
            if (v != (uint64_t)i || old != (uint64_t)i)
                OT_FAIL("PE 0: round %d against a computing PE read %llu / %llu", i,
                        (unsigned long long)v, (unsigned long long)old);
            if (hps_test_now_ns() - t > worst)
                worst = hps_test_now_ns() - t;
        }
        fprintf(stderr, "shmem_ofi: against a computing PE: 10 rounds of put+quiet, get, "
                "fetch-add in %.1f ms (worst %.2f ms)\n", (hps_test_now_ns() - t1) / 1e6, worst / 1e6);
        ot_barrier();
    } else if (ot.n >= 2) {
        ot_barrier();
        ot_barrier();
    }
    ot_barrier();
    double c0 = cpu_seconds();
    usleep(300000);
    double used = cpu_seconds() - c0;
    if (ot.me == 0)
        fprintf(stderr, "shmem_ofi: idle for 300 ms: %.2f ms of CPU (progress thread %s)\n",
                used * 1e3, hps_ofi.progress_running ? "running" : "not needed");
    if (used > 0.03)
        OT_FAIL("PE %d: %.1f ms of CPU while idle for 300 ms", ot.me, used * 1e3);
}

/*
 * Not a check, figures for the docs (--lat): PE 0's mean time for an
 * 8-byte put + quiet, an 8-byte get and a fetch-add to PE 1, first while
 * PE 1 polls inside the library (as a PE in a wait does), then while it
 * waits outside (progress by the provider or our thread).
 */
void ot_case_latency(void)
{
    int rounds = ot.quick ? 200 : 2000;
    uint64_t *done = ot_misc(OT_FENCE_FLAG);
    for (int phase = 0; phase < 2; phase++) {
        *done = 0;
        ot_barrier();
        /* Polling without yielding, as hps-bench-ofi-raw's target does. */
        while (ot.me == 1 && phase == 0 && *(volatile uint64_t *)done != 1)
            hps_ofi_progress();
        if (ot.me != 0 || ot.n < 2) {
            ot_barrier();
            continue;
        }
        uint64_t v = 1, one = 1, old;
        double t[3] = { 0 };
        for (int k = 0; k < 3; k++) {
            for (int i = -rounds / 10; i < rounds; i++) {
                uint64_t t0 = hps_test_now_ns();
                if (k == 0) {
                    OT_OK(ot_put_fast(0, OT_HEAP_RMA(0), &v, 8, 1));
                    OT_OK(ot_quiet_fast());
                } else if (k == 1) {
                    OT_OK(ot_get(&v, 0, OT_HEAP_RMA(0), 8, 1));
                } else {
                    OT_OK(ot_atomic(HPS_AOP_ADD, 0, OT_HEAP_RMA(0) + 8, &one, NULL, &old, 8, 1));
                }
                if (i >= 0)
                    t[k] += (double)(hps_test_now_ns() - t0);
            }
        }
        fprintf(stderr, "shmem_ofi: latency to a PE %s the library: put+quiet %.2f us, "
                "get %.2f us, fetch-add %.2f us\n", phase ? "outside" : "polling in",
                t[0] / rounds / 1e3, t[1] / rounds / 1e3, t[2] / rounds / 1e3);
        OT_OK(ot_put_fast(0, ot.misc + OT_FENCE_FLAG, &one, 8, 1));
        OT_OK(ot_quiet());
        ot_barrier();
    }
}

/*
 * For callgrind (--icount): the inline fast paths inside a function of
 * their own each, so their self cost per call is the instruction count
 * from entry to the provider's inject call (put) and of an idle quiet.
 *   valgrind --tool=callgrind --toggle-collect=ot_icount_* shmem_ofi_test shm 1 --icount
 */
__attribute__((noinline)) int ot_icount_put(const hps_ofi_target_t *t, size_t off, int value)
{
    return hps_ofi_put_fast(ot.c, t, off, &value, sizeof value);
}

__attribute__((noinline)) int ot_icount_quiet(void)
{
    return ot_quiet_fast();
}

void ot_case_icount(void)
{
    for (int i = 0; i < 1000; i++) {
        OT_OK(ot_icount_put(OT_T(0, ot.me), OT_HEAP_RMA(0), i));
        if (i % 64 == 63)
            OT_OK(ot_quiet());
    }
    OT_OK(ot_quiet());
    for (int i = 0; i < 1000; i++)
        OT_OK(ot_icount_quiet());
}
