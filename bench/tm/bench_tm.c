// SPDX-License-Identifier: MIT
/*
 * hps-bench-tm-<variant>: transactional data structures under one variant
 * of synchronization (tx.h): seq, mutex, itm (GCC TM, libitm) or hpsync.
 * Every variant's binary is this file and the rows' files, compiled with
 * that variant's mapping.
 *
 *   hps-bench-tm-<variant> [--rows LIST] [--threads T] [--duration-ms D]
 *                          [--selftest-corrupt]
 *
 * For each row (default every one, in the table's order): build the
 * structure, run T threads doing the row's operations for D ms (the clock
 * starts once every thread exists and stops when the last has left its
 * loop), then validate the result against what the threads did.  A wrong
 * result is one line on stderr, "<row>: wrong result: <why>", and exit
 * status 1; a right one is a row of the JSON document: ops/s, per-thread
 * extremes, what was checked, and the section statistics where the variant
 * keeps them (hpsync: commits, aborts by cause, ...; others: null).
 *
 * --selftest-corrupt is for the tests only: it damages each result after
 * the run and before validation (an account gains a unit, a key appears
 * that no operation inserted, the counter loses an increment), so a test
 * can see that validation catches a wrong result.
 *
 * A watchdog ends a run that takes far longer than its rows should (a
 * livelocked variant) with one line and exit status 3.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tm_bench.h"

#define TMB_SEED 0x2545F4914F6CDD1Dull

/* The rows, in the order they run and are reported. */
static const tmb_row_t k_rows[] = {
    { "bank", &tmb_bank, NULL, 1024, 0, 0 },
    { "hashset-90", &tmb_set, &tmb_hashset_ops, 1024, 2048, 10 },
    { "hashset-50", &tmb_set, &tmb_hashset_ops, 1024, 2048, 50 },
    { "list", &tmb_set, &tmb_list_ops, 256, 512, 20 },
    { "tree-1k", &tmb_set, &tmb_tree_ops, 1024, 2048, 20 },
    { "tree-64k", &tmb_set, &tmb_tree_ops, 65536, 131072, 20 },
    { "counter", &tmb_counter, NULL, 1, 0, 0 },
};
#define NROWS ((int)(sizeof k_rows / sizeof k_rows[0]))

/* What the workers of the row being run share. */
static hps_bench_gate_t g_gate;
static const tmb_row_t *g_row;
static void *g_ds;

static void usage(void)
{
    fprintf(stderr, "usage: hps-bench-tm-%s [--rows LIST] [--threads T] [--duration-ms D] "
            "[--selftest-corrupt]\n", tmb_variant());
}

static const char *row_names(void)
{
    static char buf[256];
    size_t at = 0;
    for (int i = 0; i < NROWS; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "", k_rows[i].name);
    return buf;
}

/* Mark the rows a comma-separated list names; exit 2 on an unknown one. */
static void parse_rows(const char *list, int *selected)
{
    char *copy = strdup(list ? list : ""), *save = NULL;
    int any = 0;
    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < NROWS && strcmp(k_rows[i].name, name) != 0)
            i++;
        if (i == NROWS) {
            hps_bench_log("unknown row '%s' (choose from %s)", name, row_names());
            exit(2);
        }
        selected[i] = any = 1;
    }
    free(copy);
    if (!any) {
        hps_bench_log("--rows needs at least one row (choose from %s)", row_names());
        exit(2);
    }
}

static void on_watchdog(int sig)
{
    static const char msg[] = "hps-bench-tm: watchdog: the run took far longer than its rows "
                              "should; a variant livelocked or hung\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

static void *worker(void *arg)
{
    tmb_thread_t *t = arg;
    t->rng = (TMB_SEED ^ (0x9E3779B97F4A7C15ull * (uint64_t)(t->w.index + 1))) | 1;
    if (g_row->range && !(t->net = calloc(g_row->range + 1, 1))) {
        hps_bench_log("%s: out of memory", g_row->name);
        exit(1);
    }
    hps_bench_gate_enter(&g_gate);
    uint64_t ops = 0;
    while (!hps_bench_gate_stopped(&g_gate)) {
        g_row->kind->op(g_ds, g_row, t);
        ops++;
    }
    if (t->w.index == 0)
        tmb_stats_note();
    hps_bench_worker_done(&t->w, ops);
    return NULL;
}

/* Build, run, validate and report one row; exits on a wrong result. */
static void run_row(const tmb_row_t *row, int threads, long duration_ms, int corrupt)
{
    uint64_t rng = TMB_SEED;
    hps_bench_totals_t tot;
    g_row = row;
    g_ds = row->kind->create(row, &rng);
    tmb_stats_begin();
    char *mem = hps_bench_run_workers(&g_gate, threads, sizeof(tmb_thread_t), worker, duration_ms,
                                      &tot);
    if (!mem)
        exit(1);
    tmb_thread_t *ts[HPS_BENCH_MAX_THREADS];
    for (int i = 0; i < threads; i++)
        ts[i] = (tmb_thread_t *)(mem + sizeof(tmb_thread_t) * (size_t)i);
    if (corrupt)
        row->kind->corrupt(g_ds, row);
    char why[256];
    if (row->kind->validate(g_ds, row, ts, threads, tot.total, why, sizeof why) != 0) {
        hps_bench_log("%s: wrong result: %s", row->name, why);
        exit(1);
    }
    hps_json_begin_object(NULL);
    hps_json_str("row", row->name);
    hps_json_int("size", row->size);
    hps_json_uint("range", row->range);
    hps_json_int("update_pct", row->update_pct);
    hps_json_int("threads", threads);
    hps_bench_totals_json(&tot);
    hps_json_str("check", why);
    tmb_stats_json();
    hps_json_end_object();
    for (int i = 0; i < threads; i++)
        free(ts[i]->net);
    free(mem);
    row->kind->destroy(g_ds);
}

int main(int argc, char **argv)
{
    long threads = 1, duration_ms = 200;
    int selected[NROWS] = { 0 }, corrupt = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--rows"))
            parse_rows(v, selected), i++;
        else if (!strcmp(argv[i], "--threads"))
            threads = hps_bench_parse_num("--threads", v, 1, HPS_BENCH_MAX_THREADS), i++;
        else if (!strcmp(argv[i], "--duration-ms"))
            duration_ms = hps_bench_parse_num("--duration-ms", v, 1, 600000), i++;
        else if (!strcmp(argv[i], "--selftest-corrupt"))
            corrupt = 1;
        else {
            hps_bench_log("unknown option '%s'", argv[i]);
            usage();
            return 2;
        }
    }
    if (threads != 1 && !strcmp(tmb_variant(), "seq")) {
        hps_bench_log("seq is the single-threaded baseline: --threads must be 1, not %ld", threads);
        return 2;
    }
    int nsel = 0;
    for (int i = 0; i < NROWS; i++)
        nsel += selected[i];
    if (nsel == 0)
        for (int i = 0; i < NROWS; i++)
            selected[i] = 1, nsel++;
    /* Generous: each row's duration 20 times over (oversubscribed threads
     * wait for time slices) plus its setup and validation. */
    signal(SIGALRM, on_watchdog);
    alarm((unsigned)(60 + nsel * (duration_ms * 20 / 1000 + 10)));

    hps_json_open(NULL, 0);
    hps_json_begin_object(NULL);
    hps_bench_context();
    tmb_variant_json();
    hps_json_int("threads", threads);
    hps_json_int("duration_ms", duration_ms);
    hps_json_begin_array("rows");
    for (int i = 0; i < NROWS; i++)
        if (selected[i])
            run_row(&k_rows[i], (int)threads, duration_ms, corrupt);
    hps_json_end_array();
    hps_json_end_object();
    return hps_json_finish() ? 1 : 0;
}
