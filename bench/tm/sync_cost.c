// SPDX-License-Identifier: MIT
/*
 * hps-bench-tm-sync - what lockset elision and tx-aware condition
 * variables cost against the plain idioms they replace.
 *
 *   hps-bench-tm-sync [--reps R] [--ops N]
 *
 * Rows (ns per operation, one entry per repetition, all rows interleaved
 * round by round so that the machine's noise hits them alike):
 *   two_locks       lock two hps_lock_t in address order, unlock (1 thread)
 *   lockset2        hps_lockset_lock/unlock of the same two (1 thread)
 *   mutex_cond      a hand-off between 2 threads: pthread mutex + condvar
 *   tx_cond         the same with sections and hps_tm_cond_wait/signal
 *   tx_abort        the same with sections that hps_tm_restart() until the slot changes
 * A hand-off is one value moved producer -> consumer through a one-slot
 * buffer; the figure is wall time / hand-offs.  HPSYNC_TM picks the TM
 * backend, HPSYNC_TM_COND=spin makes tx_cond the busy-wait variant,
 * HPSYNC_ELIDE_BACKEND the lockset's hardware path.  One JSON document on
 * stdout (context, parameters, rows).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "hpsync/elide.h"
#include "hpsync/lockset.h"
#include "hpsync/tm_cond.h"

enum { R_TWO, R_SET, R_MCOND, R_TXCOND, R_TXABORT, ROWS };
static const char *const row_name[ROWS] = { "two_locks", "lockset2", "mutex_cond", "tx_cond", "tx_abort" };

static unsigned long g_ops = 200000;

/* ---- locks ------------------------------------------------------------------ */

static hps_lock_t g_l[2];

static double run_locks(int set)
{
    hps_lock_t *pair[2] = { &g_l[1], &g_l[0] };
    hps_lock_t *lo = &g_l[0] < &g_l[1] ? &g_l[0] : &g_l[1], *hi = lo == &g_l[0] ? &g_l[1] : &g_l[0];
    uint64_t t0 = hps_bench_now_ns();
    for (unsigned long i = 0; i < g_ops; i++) {
        if (set) {
            hps_lockset_lock(pair, 2);
            hps_lockset_unlock(pair, 2);
        } else {
            hps_lock_lock(lo);
            hps_lock_lock(hi);
            hps_lock_unlock(hi);
            hps_lock_unlock(lo);
        }
    }
    return (double)(hps_bench_now_ns() - t0) / (double)g_ops;
}

/* ---- hand-offs ---------------------------------------------------------------- */

static unsigned long g_handoffs;
static uint64_t g_slot;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_full = PTHREAD_COND_INITIALIZER, g_empty = PTHREAD_COND_INITIALIZER;
static hps_tm_cond_t g_tfull = HPS_TM_COND_INITIALIZER, g_tempty = HPS_TM_COND_INITIALIZER;

static void mc_put(uint64_t v)
{
    pthread_mutex_lock(&g_mu);
    while (g_slot != 0)
        pthread_cond_wait(&g_empty, &g_mu);
    g_slot = v;
    pthread_cond_signal(&g_full);
    pthread_mutex_unlock(&g_mu);
}

static uint64_t mc_take(void)
{
    pthread_mutex_lock(&g_mu);
    while (g_slot == 0)
        pthread_cond_wait(&g_full, &g_mu);
    uint64_t v = g_slot;
    g_slot = 0;
    pthread_cond_signal(&g_empty);
    pthread_mutex_unlock(&g_mu);
    return v;
}

static void tc_put(uint64_t v)
{
    HPS_TM_BEGIN();
    while (HPS_TM_READ(&g_slot) != 0)
        hps_tm_cond_wait(&g_tempty);
    HPS_TM_WRITE(&g_slot, v);
    hps_tm_cond_signal(&g_tfull);
    HPS_TM_END();
}

static uint64_t tc_take(void)
{
    uint64_t v;
    HPS_TM_BEGIN();
    while ((v = HPS_TM_READ(&g_slot)) == 0)
        hps_tm_cond_wait(&g_tfull);
    HPS_TM_WRITE(&g_slot, 0);
    hps_tm_cond_signal(&g_tempty);
    HPS_TM_END();
    return v;
}

static void ta_put(uint64_t v)
{
    HPS_TM_BEGIN();
    if (HPS_TM_READ(&g_slot) != 0)
        hps_tm_restart();
    HPS_TM_WRITE(&g_slot, v);
    HPS_TM_END();
}

static uint64_t ta_take(void)
{
    uint64_t v;
    HPS_TM_BEGIN();
    if ((v = HPS_TM_READ(&g_slot)) == 0)
        hps_tm_restart();
    HPS_TM_WRITE(&g_slot, 0);
    HPS_TM_END();
    return v;
}

static int g_kind;

static void *producer(void *arg)
{
    (void)arg;
    for (uint64_t v = 1; v <= g_handoffs; v++) {
        if (g_kind == R_MCOND)
            mc_put(v);
        else if (g_kind == R_TXCOND)
            tc_put(v);
        else
            ta_put(v);
    }
    return NULL;
}

static double run_handoff(int kind)
{
    g_kind = kind;
    g_slot = 0;
    g_handoffs = g_ops / 10;
    pthread_t t;
    uint64_t t0 = hps_bench_now_ns();
    pthread_create(&t, NULL, producer, NULL);
    for (uint64_t want = 1; want <= g_handoffs; want++) {
        uint64_t v = kind == R_MCOND ? mc_take() : kind == R_TXCOND ? tc_take() : ta_take();
        if (v != want) {
            fprintf(stderr, "hps-bench-tm-sync: %s: took %llu, expected %llu\n", row_name[kind],
                    (unsigned long long)v, (unsigned long long)want);
            exit(1);
        }
    }
    pthread_join(t, NULL);
    return (double)(hps_bench_now_ns() - t0) / (double)g_handoffs;
}

int main(int argc, char **argv)
{
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
            g_ops = strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: hps-bench-tm-sync [--reps R] [--ops N]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || g_ops < 10) {
        fprintf(stderr, "hps-bench-tm-sync: --reps 1..1000, --ops >= 10\n");
        return 2;
    }
    hps_lock_init(&g_l[0], HPS_LOCK_DEFAULT);
    hps_lock_init(&g_l[1], HPS_LOCK_DEFAULT);
    double *v = calloc((size_t)reps * ROWS, sizeof *v);
    for (int r = 0; r < reps; r++) {
        v[R_TWO * reps + r] = run_locks(0);
        v[R_SET * reps + r] = run_locks(1);
        for (int k = R_MCOND; k < ROWS; k++)
            v[k * reps + r] = run_handoff(k);
    }
    hps_json_begin_object(NULL);
    hps_bench_context();
    hps_json_begin_object("parameters");
    hps_json_int("reps", reps);
    hps_json_uint("ops", g_ops);
    hps_json_uint("handoffs", g_ops / 10);
    hps_json_str("tm_backend", hps_tm_backend_name());
    hps_json_str("tm_cond", hps_tm_cond_mode());
    hps_json_str("elide_backend", hps_elide_backend_name());
    hps_json_end_object();
    hps_json_begin_array("rows");
    for (int k = 0; k < ROWS; k++) {
        hps_json_begin_object(NULL);
        hps_json_str("name", row_name[k]);
        hps_json_num_array("ns_per_op", &v[k * reps], reps);
        double s[1000];
        memcpy(s, &v[k * reps], sizeof(double) * (size_t)reps);
        hps_bench_sort(s, (size_t)reps);
        hps_json_num("median_ns", s[reps / 2]);
        hps_json_end_object();
        fprintf(stderr, "%-11s median %9.1f ns\n", row_name[k], s[reps / 2]);
    }
    hps_json_end_array();
    hps_json_end_object();
    free(v);
    return hps_json_finish() ? 1 : 0;
}
