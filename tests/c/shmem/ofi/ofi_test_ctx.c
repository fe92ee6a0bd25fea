/* SPDX-License-Identifier: MIT */
/*
 * ofi_test_ctx.c - contexts of their own (hps_ofi_ctx_create).
 *
 * private: every kind of operation on a context one thread uses
 *   (HPS_OFI_CTX_SINGLE: OpenSHMEM's SHMEM_CTX_PRIVATE) leaves every line
 *   the default context and the transport share exactly as it was: the
 *   default context's issuing line and dirty flags, its transport part
 *   (counter error totals, operand slots in use) and the count of
 *   progress calls.  Its own counts move, and the target has the data.
 * independent: one thread keeps issuing puts on one context while another
 *   puts 64 KiB blocks on a second and quiets it, 20 times: each quiet
 *   returns (it waits for its own context's operations only), with its
 *   block in the target's memory.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi_test.h"

enum { BIG = 65536, MID = 3000 };

static int right(void) { return (ot.me + 1) % ot.n; }
static int left(void) { return (ot.me + ot.n - 1) % ot.n; }

/* Everything shared that a context's operations could write. */
typedef struct shared_view {
    hps_ofi_ctx_t dflt;
    uint64_t progress_calls, put_err, get_err;
    int amo_used;
    hps_ofi_dirty_t dirty[FAKE_RT_MAX_PES];
} shared_view_t;

static void view(shared_view_t *v)
{
    memset(v, 0, sizeof *v);
    memcpy(&v->dflt, ot.c, sizeof v->dflt);
    v->progress_calls = hps_load_relaxed(&hps_ofi.progress_calls);
    v->put_err = hps_load_relaxed(&hps_ofi.dflt.put_err);
    v->get_err = hps_load_relaxed(&hps_ofi.dflt.get_err);
    v->amo_used = hps_ofi.dflt.amo_used;
    memcpy(v->dirty, ot.c->dirty, sizeof(hps_ofi_dirty_t) * (size_t)ot.n);
}

void ot_case_ctx_private(void)
{
    hps_ofi_ctx_t *c;
    OT_OK(hps_ofi_ctx_create(HPS_OFI_CTX_SINGLE, &c));
    if (c == ot.c)
        OT_FAIL("PE %d: the context shares the default one (no endpoint of its own)", ot.me);
    char *src = malloc(BIG), *dst = malloc(BIG);
    if (!src || !dst)
        OT_FAIL("PE %d: out of memory", ot.me);
    ot_fill(src, BIG, 300 + (uint64_t)ot.me);
    size_t base = OT_HEAP_RMA(ot.me);
    uint64_t one = 1, old = 0, fetched = 0;
    const hps_ofi_target_t *t = OT_T(0, right()), *word = OT_T(0, 0);
    if (ot.me == 0)
        memset(ot_misc(OT_AMO), 0, 16);
    OT_OK(ot_quiet());
    ot_barrier();

    shared_view_t before, after;
    view(&before);
    for (int rep = 0; rep < 3; rep++) {
        OT_OK(hps_ofi_put_fast(c, t, base, src, 8));                 /* inline inject */
        OT_OK(hps_ofi_put(c, t, base + 8, src + 8, MID - 8));        /* write or inject */
        OT_OK(hps_ofi_put_nbi(c, t, base + MID, src + MID, BIG - MID));
        OT_OK(hps_ofi_atomic(c, HPS_AOP_ADD, word, ot.misc + OT_AMO, &one, NULL, NULL, 8));
        OT_OK(hps_ofi_atomic(c, HPS_AOP_ADD, word, ot.misc + OT_AMO + 8, &one, NULL, &old, 8));
        OT_OK(hps_ofi_atomic_nbi(c, HPS_AOP_FETCH, word, ot.misc + OT_AMO + 8, NULL, NULL,
                                 &fetched, 8));
        OT_OK(hps_ofi_fence(c));
        OT_OK(hps_ofi_quiet(c));
        OT_OK(hps_ofi_get(c, dst, t, base, 64));
        OT_OK(hps_ofi_get_nbi(c, dst + 64, t, base + 64, BIG - 64));
        OT_OK(hps_ofi_get_wait(c));
        OT_OK(hps_ofi_quiet_fast(c));
    }
    view(&after);
    if (memcmp(&before.dflt, &after.dflt, sizeof before.dflt))
        OT_FAIL("PE %d: a private context's operations wrote the default context's line "
                "(puts %llu -> %llu, gets %llu -> %llu, done %llu -> %llu)", ot.me,
                (unsigned long long)before.dflt.put_issued, (unsigned long long)after.dflt.put_issued,
                (unsigned long long)before.dflt.get_issued, (unsigned long long)after.dflt.get_issued,
                (unsigned long long)before.dflt.done, (unsigned long long)after.dflt.done);
    if (before.progress_calls != after.progress_calls)
        OT_FAIL("PE %d: a private context's waits counted %llu shared progress calls", ot.me,
                (unsigned long long)(after.progress_calls - before.progress_calls));
    if (memcmp(&before, &after, sizeof before))
        OT_FAIL("PE %d: a private context's operations wrote the default context's dirty "
                "flags, error totals or operand slots", ot.me);
    if (hps_load_relaxed(&c->put_issued) < 3 * 4 || hps_load_relaxed(&c->get_issued) < 3 * 3)
        OT_FAIL("PE %d: the context counted %llu puts and %llu gets", ot.me,
                (unsigned long long)hps_load_relaxed(&c->put_issued),
                (unsigned long long)hps_load_relaxed(&c->get_issued));
    ot_expect(dst, BIG, 300 + (uint64_t)ot.me, "a private context's gets of its puts");
    ot_barrier();
    ot_expect(ot.heap + OT_HEAP_RMA(left()), BIG, 300 + (uint64_t)left(),
              "a private context's puts from the left");
    if (ot.me == 0) {
        uint64_t *w = ot_misc(OT_AMO);
        if (w[0] != 3u * (uint64_t)ot.n || w[1] != 3u * (uint64_t)ot.n)
            OT_FAIL("PE 0: a private context's adds: %llu and %llu, expected %d each",
                    (unsigned long long)w[0], (unsigned long long)w[1], 3 * ot.n);
    }
    OT_OK(hps_ofi_ctx_destroy(c));
    ot_barrier();
    free(src);
    free(dst);
}

typedef struct noise_arg {
    hps_ofi_ctx_t *c;
    volatile int stop;
    long puts;
} noise_arg_t;

static void *noise(void *p)
{
    noise_arg_t *a = p;
    uint64_t v = 0;
    const hps_ofi_target_t *t = OT_T(0, right());
    while (!a->stop) {
        OT_OK(hps_ofi_put_fast(a->c, t, ot.misc + OT_FENCE_DATA + 8 * (size_t)(v % 64), &v, 8));
        if (++v % 256 == 0)
            OT_OK(hps_ofi_quiet(a->c));       /* keep the queue from filling up */
        a->puts++;
    }
    OT_OK(hps_ofi_quiet(a->c));
    return NULL;
}

void ot_case_ctx_independent(void)
{
    noise_arg_t a = { 0 };
    hps_ofi_ctx_t *mine;
    OT_OK(hps_ofi_ctx_create(HPS_OFI_CTX_SINGLE, &a.c));
    OT_OK(hps_ofi_ctx_create(HPS_OFI_CTX_SINGLE, &mine));
    char *src = malloc(BIG);
    if (!src)
        OT_FAIL("PE %d: out of memory", ot.me);
    pthread_t th;
    if (pthread_create(&th, NULL, noise, &a))
        OT_FAIL("PE %d: pthread_create failed", ot.me);
    const hps_ofi_target_t *t = OT_T(0, right());
    uint64_t worst = 0;
    for (int round = 0; round < 20; round++) {
        ot_fill(src, BIG, 700 + (uint64_t)round * 16 + (uint64_t)ot.me);
        uint64_t t0 = hps_test_now_ns();
        OT_OK(hps_ofi_put_nbi(mine, t, OT_HEAP_RMA(ot.me), src, BIG));
        OT_OK(hps_ofi_quiet(mine));
        uint64_t dt = hps_test_now_ns() - t0;
        worst = dt > worst ? dt : worst;
        ot_barrier();
        char what[64];
        snprintf(what, sizeof what, "round %d: the block before its context's quiet", round);
        ot_expect(ot.heap + OT_HEAP_RMA(left()), BIG, 700 + (uint64_t)round * 16 + (uint64_t)left(),
                  what);
        ot_barrier();
    }
    a.stop = 1;
    pthread_join(th, NULL);
    if (ot.me == 0)
        fprintf(stderr, "shmem_ofi: 20 quiets of a 64 KiB put while another context issued "
                "%ld puts: worst %.2f ms\n", a.puts, worst / 1e6);
    OT_OK(hps_ofi_ctx_destroy(mine));
    OT_OK(hps_ofi_ctx_destroy(a.c));
    free(src);
}
