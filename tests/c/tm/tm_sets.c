// SPDX-License-Identifier: MIT
/*
 * tm_sets - the TM benchmark's sets (bench/tm: hash set, sorted list, AVL
 * tree, written once against tx.h and compiled here with its hpsync
 * mapping) under random operations from 8 threads, checked against a
 * sequential model.
 *
 *   tm_sets hashset|list|tree [OPS]       (OPS per thread; HPSYNC_TM picks
 *                                          the backend)
 *
 * Each operation runs in a section of its own that wraps the structure's
 * section (flat nesting) and also reads the key's version word, and bumps
 * it when the operation changed the set.  Since the version moves in the
 * same atomic section as the set, the versions order every key's changes,
 * and each operation's result belongs to the state after the changes up to
 * the version it read.  Every thread logs (key, operation, result,
 * version).  Afterwards, per key: the changes carry versions 1..n exactly
 * once each; replayed in that order from the starting set, every insert
 * that succeeded found the key absent and every remove found it present;
 * every failed insert, failed remove and lookup agrees with the replayed
 * state at its version; the final state (the start plus the successful
 * inserts and removes: the net effect) is what the structure holds; and
 * the structure passes its own invariants (sorted chains, keys in their
 * bucket, AVL order, heights and balance).  Sets are linearizable per key
 * (Herlihy and Wing's locality), so this checks the whole history, not
 * just its end.  Inserts and removes allocate and free nodes inside
 * sections that abort: the ASan build (`make check-asan`) runs this too.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "hps_rand.h"
#include "tm_bench.h"
#include "tx.h"

#define THREADS 8

enum { OP_LOOKUP, OP_INSERT, OP_REMOVE };
static const char *const k_op_name[] = { "lookup", "insert", "remove" };

typedef struct entry {
    uint32_t key;
    uint8_t op, result;
    uint32_t version;
} entry_t;

typedef struct setcase {
    const char *name;
    const tmb_set_ops_t *ops;
    uint64_t range;              /* keys 1..range, half present at the start */
    unsigned long ops_per_thread;
} setcase_t;

static const setcase_t k_cases[] = {
    { "hashset", &tmb_hashset_ops, 1024, 20000 },
    { "list", &tmb_list_ops, 128, 5000 },
    { "tree", &tmb_tree_ops, 2048, 20000 },
};

static const setcase_t *g_case;
static void *g_set;
static uint64_t *g_version;      /* per key: changes committed so far */
static entry_t *g_log[THREADS];
static unsigned long g_ops;
static pthread_barrier_t g_gate;

/* tx.h's hook for a failed TX_MALLOC in a section. */
void tmb_out_of_memory(void)
{
    hps_test_fail("out of memory in a section");
}

/* One operation and its key's version, in one section. */
static entry_t run_op(int op, uint64_t key)
{
    int r;
    uint64_t v;
    if (op == OP_LOOKUP) {
        HPS_TM_BEGIN_RO();
        r = g_case->ops->contains(g_set, key);
        v = hps_tm_read_u64(&g_version[key]);
        HPS_TM_END();
    } else {
        HPS_TM_BEGIN();
        r = op == OP_INSERT ? g_case->ops->insert(g_set, key) : g_case->ops->remove(g_set, key);
        v = hps_tm_read_u64(&g_version[key]);
        if (r)
            hps_tm_write_u64(&g_version[key], ++v);
        HPS_TM_END();
    }
    return (entry_t){ (uint32_t)key, (uint8_t)op, (uint8_t)r, (uint32_t)v };
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t s = 0x9E3779B97F4A7C15ull * (id + 1) | 1;
    entry_t *log = g_log[id];
    pthread_barrier_wait(&g_gate);
    for (unsigned long i = 0; i < g_ops; i++) {
        uint64_t x = hps_xorshift64(&s);
        unsigned pick = (unsigned)(x % 10);   /* 40 % lookups, 30 % each update */
        int op = pick < 4 ? OP_LOOKUP : pick < 7 ? OP_INSERT : OP_REMOVE;
        log[i] = run_op(op, 1 + (x >> 8) % g_case->range);
    }
    return NULL;
}

static void fail_entry(int t, const entry_t *e, const char *why)
{
    hps_test_fail("%s: thread %d's %s of key %u (result %u, version %u): %s", g_case->name, t,
                  k_op_name[e->op], e->key, e->result, e->version, why);
}

/*
 * The sequential model.  changes[base[k] + v - 1] is the operation that
 * made key k's version v; state[base[k] + k + v] (one more slot per key) is
 * whether k is present after version v.
 */
static void check_history(const uint8_t *start, const uint8_t *present, long count)
{
    uint64_t range = g_case->range;
    size_t *n = calloc(range + 2, sizeof *n), *base = calloc(range + 2, sizeof *base);
    HPS_CHECK(n && base, "out of memory");
    for (int t = 0; t < THREADS; t++)
        for (unsigned long i = 0; i < g_ops; i++)
            n[g_log[t][i].key] += g_log[t][i].result && g_log[t][i].op != OP_LOOKUP;
    for (uint64_t k = 1; k <= range; k++)
        base[k + 1] = base[k] + n[k];
    uint8_t *changes = calloc(base[range + 1] + 1, 1);
    uint8_t *state = calloc(base[range + 1] + range + 2, 1);
    HPS_CHECK(changes && state, "out of memory");
    /* Every change has its own version, 1..n[k]. */
    for (int t = 0; t < THREADS; t++)
        for (unsigned long i = 0; i < g_ops; i++) {
            const entry_t *e = &g_log[t][i];
            if (!e->result || e->op == OP_LOOKUP)
                continue;
            if (e->version < 1 || e->version > n[e->key])
                fail_entry(t, e, "a change whose version is out of 1..changes of its key");
            uint8_t *slot = &changes[base[e->key] + e->version - 1];
            if (*slot)
                fail_entry(t, e, "two changes of the key committed with the same version");
            *slot = e->op;
        }
    /* Replay each key's changes in version order. */
    long expected = 0;
    for (uint64_t k = 1; k <= range; k++) {
        uint8_t *st = &state[base[k] + k];
        st[0] = start[k];
        for (size_t v = 1; v <= n[k]; v++) {
            int op = changes[base[k] + v - 1];
            if ((op == OP_INSERT) == st[v - 1])
                hps_test_fail("%s: key %llu: the %s that made version %zu found the key %s",
                              g_case->name, (unsigned long long)k, k_op_name[op], v,
                              st[v - 1] ? "present" : "absent");
            st[v] = op == OP_INSERT;
        }
        if (present[k] != st[n[k]])
            hps_test_fail("%s: key %llu is %s at the end, but its %zu changes from the start "
                          "leave it %s", g_case->name, (unsigned long long)k,
                          present[k] ? "present" : "absent", n[k], st[n[k]] ? "present" : "absent");
        expected += st[n[k]];
    }
    HPS_CHECK(count == expected, "%s: %ld keys in the structure, %ld expected", g_case->name,
              count, expected);
    /* Every operation that changed nothing saw the state at its version. */
    for (int t = 0; t < THREADS; t++)
        for (unsigned long i = 0; i < g_ops; i++) {
            const entry_t *e = &g_log[t][i];
            if (e->result && e->op != OP_LOOKUP)
                continue;
            if (e->version > n[e->key])
                fail_entry(t, e, "read a version that no change of the key made");
            int here = state[base[e->key] + e->key + e->version];
            /* A lookup returns presence; a failed insert needs the key
             * present, a failed remove needs it absent. */
            int wrong = e->op == OP_LOOKUP ? e->result != here : (e->op == OP_INSERT) != here;
            if (wrong)
                fail_entry(t, e, here ? "the model has the key present at that version"
                                      : "the model has the key absent at that version");
        }
    free(n);
    free(base);
    free(changes);
    free(state);
}

int main(int argc, char **argv)
{
    hps_test_set_name("tm_sets");
    hps_test_watchdog(100);
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++)
        if (argc > 1 && !strcmp(argv[1], k_cases[i].name))
            g_case = &k_cases[i];
    if (!g_case) {
        fprintf(stderr, "usage: tm_sets hashset|list|tree [OPS]\n");
        return 2;
    }
    g_ops = argc > 2 ? hps_test_ulong(argv[2], "OPS") : g_case->ops_per_thread;
    uint64_t range = g_case->range;
    g_set = g_case->ops->create((long)range / 2);
    g_version = calloc(range + 1, sizeof *g_version);
    uint8_t *start = calloc(range + 1, 1), *present = calloc(range + 1, 1);
    HPS_CHECK(g_set && g_version && start && present, "out of memory");
    uint64_t s = 12345;
    for (uint64_t have = 0; have < range / 2;) {
        uint64_t k = 1 + hps_xorshift64(&s) % range;
        if (g_case->ops->insert(g_set, k))
            start[k] = 1, have++;
    }
    for (int t = 0; t < THREADS; t++)
        HPS_CHECK((g_log[t] = calloc(g_ops, sizeof(entry_t))) != NULL, "out of memory");

    pthread_barrier_init(&g_gate, NULL, THREADS);
    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        HPS_CHECK_RC("pthread_create", pthread_create(&th[t], NULL, worker, (void *)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);

    char why[256];
    long count = g_case->ops->walk(g_set, present, range, why, sizeof why);
    if (count < 0)
        hps_test_fail("%s: the structure's invariants fail: %s", g_case->name, why);
    check_history(start, present, count);

    hps_tm_stats_t st;
    hps_tm_stats_total(&st);
    printf("tm_sets %s: ok (backend %s, %d threads x %lu operations, %ld keys at the end, "
           "%llu aborts)\n", g_case->name, hps_tm_backend_name(), THREADS, g_ops, count,
           (unsigned long long)st.aborts);
    g_case->ops->destroy(g_set);
    for (int t = 0; t < THREADS; t++)
        free(g_log[t]);
    free(g_version);
    free(start);
    free(present);
    return 0;
}
