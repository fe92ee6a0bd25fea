// SPDX-License-Identifier: MIT
/*
 * hps-probe-cas: compare-and-swap on one shared word as threads are added.
 *
 * Each thread increments a shared 64-bit word with CAS for --duration-ms:
 * it guesses the next value from its own last success and lets a failed CAS
 * hand it the current one (the loop every lock-free counter or stack push
 * runs).  Reported per thread count 1..2 x PUs and per mapping (compact,
 * scatter): successful CAS per second and failed CAS per success, as curves
 * whose value is the median of --samples repetitions (all repetitions are
 * kept).  Repetitions of every configuration are interleaved, so drift on a
 * shared machine spreads over all points instead of bending the curve.  The
 * word must end equal to the successes counted, or the program fails.
 *
 *   hps-probe-cas [--quick] [--samples REPS] [--duration-ms MS] [--max-threads T]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "hps_probe.h"

#define USAGE "hps-probe-cas [--quick] [--samples REPS] [--duration-ms MS] [--max-threads T]"
#define MAX_T 1024

static struct {
    _Atomic uint64_t word;
} __attribute__((aligned(64))) g_word;

static hps_bench_gate_t g_gate;
static int g_cpus[MAX_T];

struct worker {
    hps_bench_worker_t head;
    uint64_t fails;
} __attribute__((aligned(64)));

static void *hammer(void *arg)
{
    struct worker *w = arg;
    hps_pin_self(g_cpus[w->head.index]);
    hps_bench_gate_enter(&g_gate);
    uint64_t ok = 0, fail = 0;
    uint64_t v = atomic_load_explicit(&g_word.word, memory_order_relaxed);
    while (!hps_bench_gate_stopped(&g_gate)) {
        /* Relaxed: only the word itself is at stake, nothing is published. */
        if (atomic_compare_exchange_strong_explicit(&g_word.word, &v, v + 1,
                                                    memory_order_relaxed, memory_order_relaxed)) {
            ok++;
            v++;
        } else {
            fail++;
        }
    }
    w->fails = fail;
    hps_bench_worker_done(&w->head, ok);
    return NULL;
}

struct point {
    double succ[HPS_PROBE_MAX_REPS], fps[HPS_PROBE_MAX_REPS];
};

int main(int argc, char **argv)
{
    long samples, dur, maxt = -1;
    const hps_probe_opt_t opts[] = { { "--samples", &samples, 1, HPS_PROBE_MAX_REPS, 3, 5 },
                                     { "--duration-ms", &dur, 1, 600000L, 40, 200 },
                                     { "--max-threads", &maxt, 1, MAX_T, 0, 0 },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .opts = opts };
    hps_probe_parse(&cli, argc, argv);
    int reps = (int)samples;
    hps_topo_t topo;
    int pus = hps_bench_topo(&topo) == 0 && topo.pus > 0 ? topo.pus : 1;
    if (maxt < 0)
        maxt = 2L * pus < MAX_T ? 2L * pus : MAX_T;
    const hps_map_t maps[2] = { HPS_MAP_COMPACT, HPS_MAP_SCATTER };
    int nt = (int)maxt;
    struct point *pt = calloc((size_t)(2 * nt), sizeof *pt);
    int cpus[2][MAX_T];
    if (!pt) {
        hps_bench_log("out of memory");
        return 1;
    }
    for (int m = 0; m < 2; m++)
        if (hps_map_cpus(maps[m], nt, cpus[m]) != 0) {
            hps_bench_log("cannot read the topology for the %s mapping", hps_map_name(maps[m]));
            return 1;
        }

    hps_probe_clock_start();
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < 2; m++)
            for (int t = 1; t <= nt; t++) {
                memcpy(g_cpus, cpus[m], sizeof(int) * (size_t)t);
                uint64_t before = atomic_load(&g_word.word);
                hps_bench_totals_t tot;
                struct worker *w = hps_bench_run_workers(&g_gate, t, sizeof *w, hammer, dur, &tot);
                if (!w)
                    return 1;
                uint64_t fails = 0;
                for (int k = 0; k < t; k++)
                    fails += w[k].fails;
                free(w);
                if (atomic_load(&g_word.word) - before != tot.total) {
                    hps_bench_log("the word moved by %llu, but %llu CAS succeeded",
                                  (unsigned long long)(atomic_load(&g_word.word) - before),
                                  (unsigned long long)tot.total);
                    return 1;
                }
                struct point *p = &pt[m * nt + t - 1];
                p->succ[r] = tot.secs > 0 ? (double)tot.total / tot.secs : 0.0;
                p->fps[r] = tot.total ? (double)fails / (double)tot.total : 0.0;
            }
    hps_probe_clock_finish();

    hps_probe_doc_begin("cas");
    hps_json_int("reps", reps);
    hps_json_int("duration_ms", dur);
    hps_json_int("max_threads", nt);
    hps_json_int("pus", pus);
    hps_json_str("operation", "atomic_compare_exchange_strong, 64-bit, relaxed");
    hps_probe_doc_results();
    static const char *metrics[2] = { "cas_success_per_sec", "cas_fail_per_success" };
    static const char *units[2] = { "ops/s", "fails/success" };
    for (int m = 0; m < 2; m++)
        for (int t = 1; t <= nt; t++)
            for (int k = 0; k < 2; k++) {
                struct point *p = &pt[m * nt + t - 1];
                hps_probe_row_curve(metrics[k], maps[m], t, k == 0 ? p->succ : p->fps, reps,
                                    units[k]);
                hps_probe_row_end();
            }
    return hps_probe_doc_end();
}
