/* SPDX-License-Identifier: MIT */
/*
 * ofi_test_amo.c - every atomic at 4 and 8 bytes, all PEs at once on the
 * same words, with exact final values; and a compare-and-swap lock
 * guarding a non-atomic read-modify-write over the fabric.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ofi_test.h"

/* Word w of the atomics area (8 bytes apart, used at size bytes). */
enum { W_ADD, W_FADD, W_AND, W_OR, W_XOR, W_SWAP, W_CSWAP, W_SET0 };
#define WORD(w) (ot.misc + OT_AMO + (size_t)(w) * 8)

static uint64_t mask(size_t size) { return size == 8 ? ~0ull : 0xffffffffull; }

static uint64_t local_word(int w, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, ot.heap + WORD(w), size);
    return v;
}

static void set_local_word(int w, size_t size, uint64_t v)
{
    memcpy(ot.heap + WORD(w), &v, size);
}

/* One blocking atomic; returns the fetched value (0 when not fetching).
 * Values travel in the low size bytes of a uint64_t (little-endian). */
static uint64_t amo(enum hps_ofi_aop op, int w, uint64_t operand, uint64_t compare, int fetch,
                    size_t size, int pe)
{
    uint64_t result = 0;
    int rc;
    /* Non-fetching ones the way the core issues them: injected inline
     * where the provider can. */
    if (!fetch && op != HPS_AOP_FETCH && op != HPS_AOP_SWAP && op != HPS_AOP_CSWAP)
        rc = hps_ofi_amo_fast(ot.c, op, OT_T(0, pe), WORD(w), &operand, size);
    else
        rc = ot_atomic(op, 0, WORD(w), &operand, &compare, fetch ? &result : NULL, size, pe);
    if (rc)
        OT_FAIL("PE %d: atomic %d on %zu bytes to PE %d failed", ot.me, (int)op, size, pe);
    return result;
}

static void expect_word(int w, size_t size, uint64_t want, const char *what)
{
    uint64_t got = local_word(w, size);
    if (got != (want & mask(size)))
        OT_FAIL("PE %d: %zu-byte %s: final value 0x%llx, expected 0x%llx", ot.me, size, what,
                (unsigned long long)got, (unsigned long long)(want & mask(size)));
}

static void atomics_at(size_t size, int k)
{
    int n = ot.n, me = ot.me, last = n - 1;
    uint64_t *shared = fake_rt_shared();      /* [pe] sums, then [8 + pe*17 + v] tallies */
    memset(ot.heap + WORD(0), 0, 8 * 8 + 8 * (size_t)n);
    set_local_word(W_AND, size, ~0ull);
    set_local_word(W_SWAP, size, ~0ull);
    /* Wide operands: an 8-byte add must carry across 32 bits. */
    uint64_t add = size == 8 ? (1ull << 32) + (uint64_t)me + 1 : (uint64_t)me + 1;
    ot_barrier();

    uint64_t fsum = 0, prev = 0, nbi_res[64];
    for (int i = 0; i < k; i++) {
        if (i % 2)
            OT_OK(ot_atomic_nbi(HPS_AOP_ADD, 0, WORD(W_ADD), &add, NULL, NULL, size, 0));
        else
            amo(HPS_AOP_ADD, W_ADD, add, 0, i % 4 == 0, size, 0);
        uint64_t got = amo(HPS_AOP_ADD, W_FADD, 1, 0, 1, size, last);
        if (i && got <= prev)
            OT_FAIL("PE %d: fetch-add returned %llu after %llu", me, (unsigned long long)got,
                    (unsigned long long)prev);
        prev = got;
        fsum += got;
        /* The tally of swap results: value v+1 means PE v's, 0 the initial ~0. */
        uint64_t old = amo(HPS_AOP_SWAP, W_SWAP, (uint64_t)me + 1, 0, 1, size, last);
        shared[8 + me * 17 + (old == mask(size) ? 0 : (int)old)]++;
        /* Increment by compare-and-swap until it takes. */
        uint64_t seen = amo(HPS_AOP_FETCH, W_CSWAP, 0, 0, 1, size, 0), was;
        while ((was = amo(HPS_AOP_CSWAP, W_CSWAP, seen + 1, seen, 1, size, 0)) != seen)
            seen = was;
    }
    /* Fetching nbi: results land by the quiet. */
    int m = k < 64 ? k : 64;
    for (int i = 0; i < m; i++)
        OT_OK(ot_atomic_nbi(HPS_AOP_ADD, 0, WORD(W_FADD), &(uint64_t){ 1 }, NULL, &nbi_res[i],
                                 size, last));
    OT_OK(ot_quiet());
    /* Unordered among themselves (no fence), but all after the blocking
     * ones; the sum below catches duplicates and losses. */
    for (int i = 0; i < m; i++) {
        uint64_t v = nbi_res[i] & mask(size);
        if (v <= prev)
            OT_FAIL("PE %d: nbi fetch-add %d returned %llu, not above %llu", me, i,
                    (unsigned long long)v, (unsigned long long)prev);
        fsum += v;
    }
    /* Bitwise: and clears bit me, or sets bit me+8, xor flips bit me+16
     * three times; high bits for 8 bytes. */
    int hi = size == 8 ? 32 : 0;
    amo(HPS_AOP_AND, W_AND, ~(1ull << (me + hi)), 0, 1, size, 0);
    amo(HPS_AOP_OR, W_OR, 1ull << (me + 8 + hi), 0, 0, size, 1 % n);
    for (int i = 0; i < 3; i++)
        amo(HPS_AOP_XOR, W_XOR, 1ull << (me + 16 + hi), 0, i == 1, size, 0);
    /* Set, then everyone fetches everyone's. */
    amo(HPS_AOP_SET, W_SET0 + me, 0x0101010101010101ull * (uint64_t)(me + 1), 0, 0, size, 0);
    shared[me] = fsum;
    OT_OK(ot_quiet());
    ot_barrier();
    for (int pe = 0; pe < n; pe++) {
        uint64_t v = amo(HPS_AOP_FETCH, W_SET0 + pe, 0, 0, 1, size, 0);
        if (v != (0x0101010101010101ull * (uint64_t)(pe + 1) & mask(size)))
            OT_FAIL("PE %d: %zu-byte set by PE %d reads back 0x%llx", me, size, pe, (unsigned long long)v);
    }

    uint64_t total = (uint64_t)n * (uint64_t)(k + m), bits = 0, addsum = 0;
    for (int pe = 0; pe < n; pe++) {
        bits |= 1ull << (pe + hi);
        addsum += (size == 8 ? (1ull << 32) : 0) + (uint64_t)pe + 1;
    }
    if (me == 0) {
        expect_word(W_ADD, size, addsum * (uint64_t)k, "add");
        expect_word(W_AND, size, ~bits, "and");
        expect_word(W_XOR, size, bits << 16, "xor");
        expect_word(W_CSWAP, size, (uint64_t)n * (uint64_t)k, "compare-swap increment");
    }
    if (me == 1 % n)
        expect_word(W_OR, size, bits << 8, "or");
    if (me == last) {
        expect_word(W_FADD, size, total, "fetch-add");
        uint64_t sum = 0;
        for (int pe = 0; pe < n; pe++)
            sum += shared[pe];
        if (sum != total * (total - 1) / 2)
            OT_FAIL("PE %d: %zu-byte fetch-add results sum to %llu, expected %llu (lost or "
                    "duplicated)", me, size, (unsigned long long)sum,
                    (unsigned long long)(total * (total - 1) / 2));
        /* Each value swapped in is swapped out once, except the last one. */
        uint64_t final = local_word(W_SWAP, size);
        for (int v = 0; v <= n; v++) {
            uint64_t c = (final == (v ? (uint64_t)v : mask(size)));
            for (int pe = 0; pe < n; pe++)
                c += shared[8 + pe * 17 + v];
            if (c != (v ? (uint64_t)k : 1))
                OT_FAIL("PE %d: %zu-byte swap: value of %s seen %llu times, expected %d", me, size,
                        v ? "a PE" : "init", (unsigned long long)c, v ? k : 1);
        }
    }
    ot_barrier();
    memset(shared, 0, 8 * (8 + 17 * (size_t)n));
    ot_barrier();
}

void ot_case_atomics(void)
{
    int k = ot.quick ? 20 : 60;
    atomics_at(4, k);
    atomics_at(8, k);
}

/* A lock word on PE 0 taken with compare-and-swap and released with set;
 * under it, get + 1 + put + quiet on a counter at the last PE. */
void ot_case_lock(void)
{
    int k = ot.quick ? 10 : 30, last = ot.n - 1;
    size_t lock = ot.misc + OT_LOCK, counter = lock + 8;
    uint64_t zero = 0, mine = (uint64_t)ot.me + 1;
    for (int i = 0; i < k; i++) {
        for (unsigned spins = 0;; spins++) {
            uint64_t old = 1;
            OT_OK(ot_atomic(HPS_AOP_CSWAP, 0, lock, &mine, &zero, &old, 8, 0));
            if (old == 0)
                break;
            if (spins > 4)
                sched_yield();
        }
        uint64_t v = 0;
        OT_OK(ot_get(&v, 0, counter, 8, last));
        v++;
        OT_OK(ot_put_fast(0, counter, &v, 8, last));
        OT_OK(ot_quiet_fast());
        OT_OK(ot_atomic(HPS_AOP_SET, 0, lock, &zero, NULL, NULL, 8, 0));
    }
    OT_OK(ot_quiet());
    ot_barrier();
    if (ot.me == last && *(uint64_t *)(ot.heap + counter) != (uint64_t)(ot.n * k))
        OT_FAIL("PE %d: counter under the lock is %llu, expected %d", ot.me,
                (unsigned long long)*(uint64_t *)(ot.heap + counter), ot.n * k);
}
