// SPDX-License-Identifier: MIT
/*
 * itm_test - unmodified GCC TM programs (gcc -fgnu-tm): the same binary
 * runs on libitm and, preloaded, on libhpsync-itm with every backend
 * (itm_same.sh compares the result lines).
 *
 *   itm_test CASE
 *
 * bank       transfers and read-only audits (8 threads): the total never
 *            changes, no audit sees a partial transfer;
 * types      every type the ABI has barriers for, aligned, packed and
 *            sub-word: 1, 2, 4, 8 bytes, float, double, long double,
 *            complex, __int128, 16-byte vectors, a bit-field (8 threads);
 * nest       nested transactions, __transaction_cancel of the inner one
 *            (only its writes and locals roll back), of the outer one, and
 *            [[outer]] from inside (single thread, then 8 threads);
 * relaxed    __transaction_relaxed calling code built without -fgnu-tm,
 *            always and on some paths only: it runs irrevocable, and only
 *            that section (8 threads);
 * upgrade    an unannotated call after instrumented writes sees them, and
 *            (on hpsync, under sgl, norec, stm and auto) the section turns
 *            irrevocable in place: its body runs once (1 thread);
 * fnptr      transaction_safe functions through pointers (their clones),
 *            an unsafe one in a relaxed section;
 * alloc      a sorted list with malloc/free in sections, struct copies
 *            (memcpy barriers) and memset (8 threads);
 * actions    user commit and undo actions, with cancels;
 * stress     all of it at once, 8 threads;
 * plainro    read-only transactions (a 64-word sum, a 32-node chain) beside
 *            transfers, 2 threads for 400 ms: on norec with threads that
 *            fit the CPUs hpsync runs some on their plain code (the trial's
 *            open epoch, src/tm/norec.c): every snapshot must be whole; a
 *            read-only one with a nested cancellable transaction restarts
 *            read-write (itm_plain.sh checks the plain count);
 * counts     300 transactions that write and 200 the compiler marks
 *            read-only, 1 thread: itm_counts.sh checks that hpsync's
 *            statistics say so, whichever code (plain or instrumented) ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "itm_test.h"

#define ITERS 3000

/* ---- bank -------------------------------------------------------------- */

#define ACCOUNTS 64
#define INITIAL 1000
static long g_acct[ACCOUNTS];
static long g_bad_audits;

__attribute__((transaction_safe)) static long audit(void)
{
    long s = 0;
    for (int i = 0; i < ACCOUNTS; i++)
        s += g_acct[i];
    return s;
}

static void *bank_thread(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 7919 + 1;
    for (int i = 0; i < ITERS; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int a = (int)(rng >> 33) % ACCOUNTS, b = (int)(rng >> 45) % ACCOUNTS;
        long amount = (long)(rng >> 58);
        if (i % 8 == 0) {
            long s;
            __transaction_atomic { s = audit(); }
            if (s != (long)ACCOUNTS * INITIAL)
                __transaction_atomic { g_bad_audits++; }
        } else {
            __transaction_atomic {
                g_acct[a] -= amount;
                g_acct[b] += amount;
            }
        }
    }
    return NULL;
}

static void case_bank(void)
{
    for (int i = 0; i < ACCOUNTS; i++)
        g_acct[i] = INITIAL;
    itm_run_threads(ITM_THREADS, bank_thread);
    long s = audit();
    HPS_CHECK(s == (long)ACCOUNTS * INITIAL, "total %ld, expected %ld", s, (long)ACCOUNTS * INITIAL);
    HPS_CHECK(g_bad_audits == 0, "%ld audits saw a partial transfer", g_bad_audits);
    printf("bank: total %ld, bad audits %ld\n", s, g_bad_audits);
}

/* ---- types ------------------------------------------------------------- */

typedef float v4f __attribute__((vector_size(16)));

static struct {
    char c;
    short s;
    int i;
    long l;
    float f;
    double d;
    long double e;
    __int128 q;
    _Complex double cd;
    _Complex float cf;
    v4f v;
} g_t;

/* Words that straddle 8-byte boundaries. */
static struct __attribute__((packed)) {
    char pad;
    int i;
    long l;
    short s;
} g_p[4];

static void *types_thread(void *arg)
{
    const v4f one = { 1, 2, 3, 4 };
    for (int k = 0; k < ITERS; k++) {
        __transaction_atomic {
            g_t.c++;
            g_t.s++;
            g_t.i++;
            g_t.l++;
            g_t.f += 1;
            g_t.d += 0.5;
            g_t.e += 0.25L;
            g_t.q += ((__int128)1 << 70) + 1;
            g_t.cd += 1 + 2 * __builtin_complex(0.0, 1.0);
            g_t.cf += 1;
            g_t.v += one;
            int j = k & 3;
            g_p[j].i++;
            g_p[j].l += 2;
            g_p[j].s--;
        }
    }
    return NULL;
}

static void case_types(void)
{
    itm_run_threads(ITM_THREADS, types_thread);
    const long n = (long)ITM_THREADS * ITERS;
    HPS_CHECK(g_t.l == n && g_t.i == n && g_t.s == (short)n && g_t.c == (char)n,
              "integers %ld %d %d %d, expected %ld", g_t.l, g_t.i, g_t.s, g_t.c, n);
    HPS_CHECK(g_t.f == (float)n && g_t.d == n * 0.5 && g_t.e == n * 0.25L, "floating point %g %g %Lg",
              (double)g_t.f, g_t.d, g_t.e);
    HPS_CHECK(g_t.q == (__int128)n * (((__int128)1 << 70) + 1), "__int128");
    HPS_CHECK(__real__ g_t.cd == n && __imag__ g_t.cd == 2.0 * n && __real__ g_t.cf == (float)n, "complex");
    HPS_CHECK(g_t.v[0] == n && g_t.v[3] == 4.0f * n, "vector %g %g", (double)g_t.v[0], (double)g_t.v[3]);
    long pi = 0, pl = 0, ps = 0;
    for (int j = 0; j < 4; j++) {
        HPS_CHECK(g_p[j].pad == 0, "packed padding written");
        pi += g_p[j].i;
        pl += g_p[j].l;
        ps += g_p[j].s;
    }
    HPS_CHECK(pi == n && pl == 2 * n && ps == -n, "packed %ld %ld %ld", pi, pl, ps);
    printf("types: %ld %d %d %d %g %g %Lg %g%+gi %g [%g %g] packed %ld %ld %ld\n", g_t.l, g_t.i,
           g_t.s, g_t.c, (double)g_t.f, g_t.d, g_t.e, __real__ g_t.cd, __imag__ g_t.cd, (double)__real__ g_t.cf,
           (double)g_t.v[0], (double)g_t.v[3], pi, pl, ps);
}

/* ---- nest -------------------------------------------------------------- */

static long g_n[4];

/* Single thread: exact outcomes. */
static void nest_exact(void)
{
    long local = 1;
    __transaction_atomic {
        g_n[0] = 10;
        __transaction_atomic {
            g_n[1] = 20;
            local = 2;
            if (g_n[0] == 10)
                __transaction_cancel;          /* the inner one only */
        }
        g_n[2] = 30;
    }
    HPS_CHECK(g_n[0] == 10 && g_n[1] == 0 && g_n[2] == 30 && local == 1,
              "inner cancel: %ld %ld %ld local %ld, expected 10 0 30 1", g_n[0], g_n[1], g_n[2], local);
    __transaction_atomic {
        g_n[0] = 11;
        local = 3;
        if (g_n[2] == 30)
            __transaction_cancel;
    }
    HPS_CHECK(g_n[0] == 10 && local == 1, "outer cancel: %ld local %ld, expected 10 1", g_n[0], local);
    __transaction_atomic [[outer]] {
        g_n[0] = 12;
        __transaction_atomic {
            g_n[1] = 21;
            if (g_n[0] == 12)
                __transaction_cancel [[outer]];
        }
        g_n[2] = 31;
    }
    HPS_CHECK(g_n[0] == 10 && g_n[1] == 0 && g_n[2] == 30, "[[outer]] cancel: %ld %ld %ld", g_n[0], g_n[1],
              g_n[2]);
    /* Two levels of cancelling frames: the inner cancel keeps the middle's
     * writes.  (The inner one writes other words than the middle one:
     * libitm's write-through methods do not log a "write after write"
     * again, so there a cancel of the inner one keeps its value of a word
     * the middle one wrote first; hpsync restores it.) */
    __transaction_atomic {
        g_n[0] = 13;
        __transaction_atomic {
            g_n[1] = 22;
            __transaction_atomic {
                g_n[2] = 32;
                g_n[3] = 40;
                if (g_n[2] == 32)
                    __transaction_cancel;
            }
            if (g_n[0] == 0)
                __transaction_cancel;
        }
    }
    HPS_CHECK(g_n[0] == 13 && g_n[1] == 22 && g_n[2] == 30 && g_n[3] == 0, "two frames: %ld %ld %ld %ld",
              g_n[0], g_n[1], g_n[2], g_n[3]);
}

static long g_nc[2], g_nw[ITM_THREADS], g_nw_bad;

static void *nest_thread(void *arg)
{
    long id = (long)(uintptr_t)arg;
    int strict = itm_on_hpsync();
    for (int k = 0; k < ITERS; k++) {
        long w;
        __transaction_atomic {
            g_nc[0]++;
            __transaction_atomic {
                g_nw[id] = k;                    /* a plain write: cancelled when k is odd */
                if (strict)
                    g_nc[1]++;                   /* read-modify-write: see case_nest */
                if (k & 1)
                    __transaction_cancel;
            }
            w = g_nw[id];
        }
        if (w != (k & ~1))
            __transaction_atomic { g_nw_bad++; }
    }
    return NULL;
}

/* A cancelled inner transaction's read-modify-write of a word (g_nc[1]++)
 * is checked on hpsync only: libitm (gcc 12) keeps it, because the
 * compiler marks the store "write after write" (after the read for write)
 * and libitm then logs no old value for the inner transaction's rollback. */
static void case_nest(void)
{
    nest_exact();
    itm_run_threads(ITM_THREADS, nest_thread);
    long n = (long)ITM_THREADS * ITERS;
    HPS_CHECK(g_nc[0] == n && g_nw_bad == 0, "nested: outer count %ld, %ld inner writes kept after cancel",
              g_nc[0], g_nw_bad);
    HPS_CHECK(!itm_on_hpsync() || g_nc[1] == n / 2, "nested read-modify-write %ld, expected %ld", g_nc[1], n / 2);
    printf("nest: %ld %ld %ld %ld, counter %ld\n", g_n[0], g_n[1], g_n[2], g_n[3], g_nc[0]);
}

/* ---- relaxed ----------------------------------------------------------- */

static long g_r[3], g_side, g_modes_bad;

static void *relaxed_thread(void *arg)
{
    for (int k = 0; k < ITERS; k++) {
        int mode = 2;
        __transaction_relaxed {
            g_r[0]++;
            if (k % 4 == 0) {
                itm_ext_bump(&g_side);
                mode = itm_ext_mode();
            }
            g_r[1]++;
        }
        if (mode != 2)
            __transaction_atomic { g_modes_bad++; }
        /* The next section is an ordinary one again. */
        __transaction_atomic { g_r[2] += 2; }
    }
    return NULL;
}

static void case_relaxed(void)
{
    itm_run_threads(ITM_THREADS, relaxed_thread);
    long n = (long)ITM_THREADS * ITERS;
    HPS_CHECK(g_r[0] == n && g_r[1] == n && g_r[2] == 2 * n && g_side == n / 4,
              "relaxed %ld %ld %ld side %ld", g_r[0], g_r[1], g_r[2], g_side);
    HPS_CHECK(g_modes_bad == 0, "%ld unsafe calls ran outside an irrevocable section", g_modes_bad);
    HPS_CHECK(_ITM_inTransaction() == 0, "outside a section, _ITM_inTransaction says %d", _ITM_inTransaction());
    printf("relaxed: %ld %ld %ld side %ld\n", g_r[0], g_r[1], g_r[2], g_side);
}

/* ---- upgrade ------------------------------------------------------------ */

static long g_up[2], g_up_runs, g_up_bad;
long itm_up_call = 1;                    /* external: not folded */

/* Pure: not instrumented, not undone, so it counts attempts of the body. */
__attribute__((transaction_pure)) static void up_ran(void)
{
    g_up_runs++;
}

static void case_upgrade(void)
{
    const long rounds = 2000;
    for (long k = 0; k < rounds; k++) {
        __transaction_relaxed {
            up_ran();
            g_up[0] = k + 1;             /* instrumented: the redo log, under norec and stm */
            g_up[1] += 2;
            /* Uninstrumented: reads memory, where the writes above must be.
             * (On a path the compiler cannot tell is always taken: a
             * section that always goes irrevocable starts irrevocable.) */
            if (itm_up_call && (itm_ext_load(&g_up[0]) != k + 1 || itm_ext_load(&g_up[1]) != k + 2))
                g_up_bad++;
            g_up[1] -= 1;                /* after the switch: direct */
        }
    }
    HPS_CHECK(g_up_bad == 0, "%ld unannotated calls did not see the section's earlier writes", g_up_bad);
    HPS_CHECK(g_up[0] == rounds && g_up[1] == rounds, "upgrade %ld %ld, expected %ld", g_up[0], g_up[1], rounds);
    /* hpsync upgrades these backends in place (docs/tm.md); a restart would
     * run the body twice.  (htm and hybrid restart into the gate; libitm
     * does as its method allows.) */
    const char *b = getenv("HPSYNC_TM");
    int in_place = itm_on_hpsync() && b && (!strcmp(b, "sgl") || !strcmp(b, "norec") ||
                                             !strcmp(b, "stm") || !strcmp(b, "auto"));
    HPS_CHECK(!in_place || g_up_runs == rounds, "the body ran %ld times in %ld sections: a restart, "
              "not an upgrade in place", g_up_runs, rounds);
    printf("upgrade: %ld %ld\n", g_up[0], g_up[1]);
}

/* ---- fnptr ------------------------------------------------------------- */

static long g_f[3];

__attribute__((transaction_safe)) static void add1(long *p) { *p += 1; }
__attribute__((transaction_safe)) static void add10(long *p) { *p += 10; }
typedef void (*safe_fn_t)(long *) __attribute__((transaction_safe));
static safe_fn_t const g_safe[2] = { add1, add10 };
static void (*volatile g_unsafe)(long *) = itm_ext_bump;

static void *fnptr_thread(void *arg)
{
    for (int k = 0; k < ITERS; k++) {
        __transaction_atomic {
            g_safe[k & 1](&g_f[0]);
            g_safe[(k >> 1) & 1](&g_f[1]);
        }
        if (k % 16 == 0)
            __transaction_relaxed { g_unsafe(&g_f[2]); }
    }
    return NULL;
}

static void case_fnptr(void)
{
    itm_run_threads(ITM_THREADS, fnptr_thread);
    long n = (long)ITM_THREADS * ITERS;
    HPS_CHECK(g_f[0] == n / 2 * 11 && g_f[1] == n / 2 * 11 && g_f[2] == (long)ITM_THREADS * ((ITERS + 15) / 16), "fnptr %ld %ld %ld", g_f[0],
              g_f[1], g_f[2]);
    printf("fnptr: %ld %ld %ld\n", g_f[0], g_f[1], g_f[2]);
}

/* ---- alloc ------------------------------------------------------------- */

typedef struct payload {
    long key;
    double x[5];
    char tag[24];
} payload_t;

typedef struct node {
    payload_t p;
    struct node *next;
} node_t;

static node_t *g_head;

/* Each thread owns the keys = its index mod 8, so the final set does not
 * depend on the interleaving; the list is shared. */
static void *alloc_thread(void *arg)
{
    long id = (long)(uintptr_t)arg;
    for (int k = 0; k < ITERS / 2; k++) {
        long key = (long)((k * 37) % 200) * ITM_THREADS + id;
        payload_t p;
        memset(&p, 0, sizeof p);
        p.key = key;
        for (int j = 0; j < 5; j++)
            p.x[j] = key + j * 0.5;
        snprintf(p.tag, sizeof p.tag, "k%ld", key);
        __transaction_atomic {
            node_t **pp = &g_head;
            while (*pp && (*pp)->p.key < key)
                pp = &(*pp)->next;
            if (*pp && (*pp)->p.key == key) {
                node_t *dead = *pp;
                *pp = dead->next;
                free(dead);
            } else {
                node_t *n = malloc(sizeof *n);
                n->p = p;                        /* a struct copy: memcpy barrier */
                n->next = *pp;
                *pp = n;
            }
        }
    }
    return NULL;
}

static void case_alloc(void)
{
    itm_run_threads(ITM_THREADS, alloc_thread);
    long count = 0, sum = 0, prev = -1;
    for (node_t *n = g_head; n; n = n->next) {
        HPS_CHECK(n->p.key > prev, "list out of order at key %ld", n->p.key);
        char tag[24];
        snprintf(tag, sizeof tag, "k%ld", n->p.key);
        HPS_CHECK(!strcmp(tag, n->p.tag) && n->p.x[4] == n->p.key + 2.0, "payload of key %ld", n->p.key);
        prev = n->p.key;
        count++;
        sum += n->p.key;
    }
    /* memset through a section on a shared struct. */
    static payload_t shared = { .key = 5 };
    __transaction_atomic { memset(&shared, 0, sizeof shared); shared.key = count; }
    HPS_CHECK(shared.key == count && shared.x[2] == 0, "memset");
    printf("alloc: %ld nodes, key sum %ld\n", count, sum);
}

/* ---- actions ----------------------------------------------------------- */

static long g_commits, g_undos, g_acted;

static void on_commit(void *arg) { g_commits += (long)(uintptr_t)arg; }
static void on_undo(void *arg) { g_undos += (long)(uintptr_t)arg; }

static void case_actions(void)
{
    __transaction_atomic {
        g_acted = 1;
        _ITM_addUserCommitAction(on_commit, 1, (void *)1);
        _ITM_addUserUndoAction(on_undo, (void *)100);
    }
    HPS_CHECK(g_commits == 1 && g_undos == 0, "after commit: commits %ld undos %ld", g_commits, g_undos);
    __transaction_atomic {
        _ITM_addUserCommitAction(on_commit, 1, (void *)10);
        _ITM_addUserUndoAction(on_undo, (void *)1);
        if (g_acted)
            __transaction_cancel;
    }
    /* Undo actions run on a cancel too (a rollback); libitm does so with
     * ITM_DEFAULT_METHOD set (ml_wt, gl_wt, serialirr) but not with its
     * default, so the count is checked on hpsync only. */
    const long u = itm_on_hpsync();
    HPS_CHECK(g_commits == 1 && (!u || g_undos == 1), "after cancel: commits %ld undos %ld", g_commits, g_undos);
    __transaction_atomic {
        _ITM_addUserCommitAction(on_commit, 1, (void *)100);
        __transaction_atomic {
            _ITM_addUserCommitAction(on_commit, 1, (void *)1000);
            _ITM_addUserUndoAction(on_undo, (void *)10);
            if (g_acted)
                __transaction_cancel;
        }
    }
    /* libitm's default method also drops the outer transaction's commit
     * action here (commits stays 1); checked on hpsync only. */
    HPS_CHECK(!u || (g_commits == 101 && g_undos == 11), "inner cancel: commits %ld undos %ld", g_commits, g_undos);
    uint32_t a = 0, b = 0;
    __transaction_atomic { a = _ITM_getTransactionId(); b = _ITM_getTransactionId(); g_acted = 2; }
    HPS_CHECK(a == b && a > 1, "transaction ids %u %u", a, b);
    printf("actions: commit actions after commit, ids stable\n");
}

/* ---- stress ------------------------------------------------------------ */

static void *stress_thread(void *arg)
{
    bank_thread(arg);
    relaxed_thread(arg);
    nest_thread(arg);
    alloc_thread(arg);
    return NULL;
}

static void case_stress(void)
{
    for (int i = 0; i < ACCOUNTS; i++)
        g_acct[i] = INITIAL;
    itm_run_threads(ITM_THREADS, stress_thread);
    long n = (long)ITM_THREADS * ITERS;
    HPS_CHECK(audit() == (long)ACCOUNTS * INITIAL && g_bad_audits == 0, "bank under stress");
    HPS_CHECK(g_r[0] == n && g_r[2] == 2 * n && g_nc[0] == n && g_nw_bad == 0, "counters under stress");
    HPS_CHECK(!itm_on_hpsync() || g_nc[1] == n / 2, "nested read-modify-write under stress");
    long count = 0;
    for (node_t *p = g_head; p; p = p->next)
        count++;
    printf("stress: bank ok, counters %ld %ld, %ld nodes\n", g_r[0], g_nc[0], count);
}

/* ---- plainro ------------------------------------------------------------- */

#define PR_WORDS 64
#define PR_NODES 32
static long g_pr[PR_WORDS];
typedef struct pr_node {
    struct pr_node *next;
    long val;
} pr_node_t;
static pr_node_t g_prn[PR_NODES];
static pr_node_t *g_prhead;
static long g_pr_bad, g_pr_reads, g_pr_inner;

__attribute__((transaction_safe)) static long pr_sum(void)
{
    long s = 0;
    for (int i = 0; i < PR_WORDS; i++)
        s += g_pr[i];
    for (pr_node_t *p = g_prhead; p; p = p->next)
        s += p->val;
    return s;
}

static void *plainro_thread(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 104729 + 3;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long bad = 0, reads = 0, inner = 0;
    for (long i = 0;; i++) {
        if ((i & 255) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 400000000L)
                break;
        }
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int a = (int)(rng >> 33) % PR_WORDS, b = (int)(rng >> 45) % PR_NODES;
        if (i % 4 == 3) {
            __transaction_atomic {
                g_pr[a] -= 3;
                g_prn[b].val += 3;
            }
        } else if (i % 16 == 5) {
            /* Read-only, with a nested transaction that may cancel: not
             * plain code (it restarts read-write if it began so). */
            long s, v = 0;
            __transaction_atomic {
                s = pr_sum();
                __transaction_atomic {
                    v = g_pr[a];
                    if (v == -123456789)
                        __transaction_cancel;
                }
            }
            bad += s != 0;
            inner += v != -123456789;
        } else {
            long s;
            __transaction_atomic { s = pr_sum(); }
            bad += s != 0;
            reads++;
        }
    }
    __transaction_atomic {
        g_pr_bad += bad;
        g_pr_reads += reads;
        g_pr_inner += inner;
    }
    return NULL;
}

static void case_plainro(void)
{
    /* The words and the chain's values sum to 0; a transfer keeps it so. */
    for (int i = 0; i < PR_WORDS; i++)
        g_pr[i] = 1000;
    for (int i = 0; i < PR_NODES; i++) {
        g_prn[i].val = -2000;
        g_prn[i].next = i + 1 < PR_NODES ? &g_prn[i + 1] : NULL;
    }
    g_prhead = &g_prn[0];
    itm_run_threads(2, plainro_thread);
    HPS_CHECK(pr_sum() == 0, "plainro: total %ld after the run", pr_sum());
    HPS_CHECK(g_pr_bad == 0, "plainro: %ld of %ld read-only snapshots were not whole", g_pr_bad, g_pr_reads);
    HPS_CHECK(g_pr_reads > 0 && g_pr_inner > 0, "plainro: %ld reads, %ld nested", g_pr_reads, g_pr_inner);
    printf("plainro: every snapshot whole, total 0\n");
}

/* ---- counts -------------------------------------------------------------- */

static long g_count_word;

static __attribute__((noinline)) long count_read(void)
{
    long v;
    __transaction_atomic { v = g_count_word; }
    return v;
}

static void case_counts(void)
{
    long seen = 0;
    for (int i = 0; i < 300; i++)
        __transaction_atomic { g_count_word++; }
    for (int i = 0; i < 200; i++)
        seen += count_read();
    HPS_CHECK(g_count_word == 300 && seen == 200 * 300, "counts: word %ld, reads summed %ld", g_count_word, seen);
    printf("counts: 300 writing and 200 read-only transactions\n");
}

static const hps_test_case_t cases[] = {
    { "bank", .run = case_bank },
    { "types", .run = case_types },
    { "nest", .run = case_nest },
    { "relaxed", .run = case_relaxed },
    { "upgrade", .run = case_upgrade },
    { "fnptr", .run = case_fnptr },
    { "alloc", .run = case_alloc },
    { "actions", .run = case_actions },
    { "stress", .run = case_stress },
    { "counts", .run = case_counts },
    { "plainro", .run = case_plainro },
};
static const hps_test_suite_t suite = HPS_TEST_SUITE("itm_test", cases, 100, 0);

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    return hps_test_main(&suite, argc, argv);
}
