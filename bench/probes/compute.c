// SPDX-License-Identifier: MIT
/*
 * hps-probe-compute: integer and floating-point arithmetic throughput versus
 * thread count, under the compact, scatter and os thread placements (the
 * T3-4 study's "how much arithmetic does the chip do as threads are added").
 *
 *   hps-probe-compute [--quick] [--threads LIST] [--mappings LIST]
 *                     [--reps R] [--iters N] [--seed S]
 *
 * Every thread runs the same fixed amount of work per repetition: N loop
 * iterations over K independent dependency chains, each step one multiply
 * and one add (x = x * a + b).  int_ops_per_sec and fp_ops_per_sec count
 * those operations (2 per chain step, whatever instructions the compiler
 * chose - an FMA still counts 2) summed over all threads, divided by the
 * wall time from the first thread's start to the last one's end.  Without
 * --iters, N is calibrated on one thread so a repetition takes about
 * 10 ms (--quick) or 60 ms.
 *
 * Why the compiler cannot shrink the work, and how that is checked:
 *   - every chain starts from the --seed (a runtime value) and its
 *     multiplier and addend are derived from it, so nothing folds to a
 *     constant;
 *   - an empty asm statement takes every chain as a "+r"/"+x" operand each
 *     iteration: it emits no instruction, but the compiler must assume it
 *     changed the values, so it can neither compute the chains in closed
 *     form, nor merge iterations, nor vectorise the chains into one register;
 *   - all chains are folded into a checksum that is written into every row,
 *     so no chain is dead.  Every repetition must reproduce the checksum
 *     (the program fails otherwise), and it depends only on seed, iters and
 *     thread count, never on the mapping.
 * tests/python/test_probes_compute.py verifies this from the outside: the
 * checksum changes with the seed, elapsed time grows in proportion to
 * --iters, and objdump shows the multiply and add instructions of every
 * chain inside the kernels' loops.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <string.h>
#include "hps_probe.h"

enum { INT_CHAINS = 8, FP_CHAINS = 12, OPS_PER_STEP = 2 };

#define USAGE "hps-probe-compute [--quick] [--threads LIST] [--mappings LIST] " \
              "[--reps R] [--iters N] [--seed S]"

/* ---- the kernels ---------------------------------------------------------- */

/* One step of every chain, written out (no loop the compiler could fold):
 * both kernels step their chains x0, x1, ... with the same a and b. */
#define CHAIN_STEP(x) x = x * a + b
#define CHAIN_STEP8(x)                                                          \
    CHAIN_STEP(x##0); CHAIN_STEP(x##1); CHAIN_STEP(x##2); CHAIN_STEP(x##3);      \
    CHAIN_STEP(x##4); CHAIN_STEP(x##5); CHAIN_STEP(x##6); CHAIN_STEP(x##7)

/*
 * 8 integer chains: 8 imul + 8 add per iteration.  Eight chains cover the
 * multiplier's latency (3-4 cycles) times its throughput (1/cycle) on
 * current x86 and ARM cores, and leave registers for a, b and the counter.
 */
__attribute__((noinline, used)) static uint64_t hps_probe_int_kernel(uint64_t seed, long iters)
{
    const uint64_t a = (seed * 2 + 0x9E3779B97F4A7C15ull) | 1, b = seed ^ 0x5851F42D4C957F2Dull;
    uint64_t x0 = seed + 1, x1 = seed + 2, x2 = seed + 3, x3 = seed + 4;
    uint64_t x4 = seed + 5, x5 = seed + 6, x6 = seed + 7, x7 = seed + 8;
    for (long i = 0; i < iters; i++) {
        CHAIN_STEP8(x);
        /* No instruction; forbids closed forms, merging and vectorising. */
        __asm__("" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6),
                "+r"(x7));
    }
    uint64_t h = 0;
    uint64_t x[INT_CHAINS] = { x0, x1, x2, x3, x4, x5, x6, x7 };
    for (int k = 0; k < INT_CHAINS; k++)
        h = (h ^ x[k]) * 0x100000001B3ull;
    return h;
}

#if defined(__x86_64__) || defined(__i386__)
#define FP_REG "+x"
#elif defined(__aarch64__)
#define FP_REG "+w"
#else
#define FP_REG "+g"
#endif

/*
 * 12 double chains: 12 multiplies and 12 adds per iteration; a multiply
 * plus a dependent add is ~6-8 cycles of latency and cores issue two FP
 * operations per cycle, so 12 chains keep the pipes busy.  x = x * a + b
 * with 0 < a < 1 converges to b / (1 - a) (~1..1000), so values never
 * overflow or become denormal, which would measure microcode assists.
 */
__attribute__((noinline, used)) static uint64_t hps_probe_fp_kernel(uint64_t seed, long iters)
{
    const double a = 1.0 - (double)(1 + seed % 7) * 0x1p-20;
    const double b = (double)(1 + seed % 1000) * 1e-6;
    const double s = (double)(seed % 1024) / 1024.0;
    double x0 = s + 1.0, x1 = s + 1.5, x2 = s + 2.0, x3 = s + 2.5, x4 = s + 3.0, x5 = s + 3.5;
    double x6 = s + 4.0, x7 = s + 4.5, x8 = s + 5.0, x9 = s + 5.5, x10 = s + 6.0, x11 = s + 6.5;
    for (long i = 0; i < iters; i++) {
        CHAIN_STEP8(x);
        CHAIN_STEP(x8);
        CHAIN_STEP(x9);
        CHAIN_STEP(x10);
        CHAIN_STEP(x11);
        __asm__("" : FP_REG(x0), FP_REG(x1), FP_REG(x2), FP_REG(x3), FP_REG(x4), FP_REG(x5));
        __asm__("" : FP_REG(x6), FP_REG(x7), FP_REG(x8), FP_REG(x9), FP_REG(x10), FP_REG(x11));
    }
    double x[FP_CHAINS] = { x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11 };
    uint64_t h = 0;
    for (int k = 0; k < FP_CHAINS; k++) {
        uint64_t bits;
        memcpy(&bits, &x[k], sizeof bits);
        h = (h ^ bits) * 0x100000001B3ull;
    }
    return h;
}

/* ---- one curve point -------------------------------------------------------- */

struct compute_state {
    uint64_t seed;
    long iters;
    int fp;
    uint64_t sum[HPS_PROBE_MAX_REPS];
} __attribute__((aligned(64)));

static void compute_pass(hps_probe_member_t *m, int rep)
{
    struct compute_state *s = m->state;
    s->sum[rep] = s->fp ? hps_probe_fp_kernel(s->seed, s->iters)
                        : hps_probe_int_kernel(s->seed, s->iters);
}

/* Thread i's seed: distinct per thread, fixed by (seed, i) alone. */
static uint64_t thread_seed(uint64_t seed, int i)
{
    return seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
}

struct point {
    const char *metric;
    hps_map_t map;
    int threads, reps;
    double ops_per_sec[HPS_PROBE_MAX_REPS];
    uint64_t checksum;
};

static int measure_point(struct point *p, int fp, uint64_t seed, long iters)
{
    void **states;
    struct compute_state *st = hps_probe_team_states(p->threads, sizeof *st, &states);
    for (int i = 0; i < p->threads; i++) {
        st[i].seed = thread_seed(seed, i);
        st[i].iters = iters;
        st[i].fp = fp;
    }
    hps_probe_team_t team = { .n = p->threads, .reps = p->reps, .pass = compute_pass };
    double secs[HPS_PROBE_MAX_REPS];
    int rc = hps_probe_team_run(&team, p->map, secs, states);
    hps_probe_team_free(&team);
    double ops = (double)iters * (fp ? FP_CHAINS : INT_CHAINS) * OPS_PER_STEP * p->threads;
    for (int r = 0; r < p->reps && rc == 0; r++) {
        uint64_t sum = 0;
        for (int i = 0; i < p->threads; i++)
            sum += st[i].sum[r];
        if (r == 0)
            p->checksum = sum;
        else if (sum != p->checksum) {
            hps_bench_log("%s: repetition %d gave checksum %016" PRIx64 ", not %016" PRIx64
                          " - the arithmetic is not deterministic", p->metric, r, sum, p->checksum);
            rc = 1;
        }
        p->ops_per_sec[r] = ops / secs[r];
    }
    free(st);
    free(states);
    return rc;
}

/* Iterations for about target_ms of one thread's work on this machine. */
static long calibrate(int fp, uint64_t seed, double target_ms)
{
    volatile uint64_t sink;
    for (long n = 1 << 12;; n *= 2) {
        uint64_t t0 = hps_bench_now_ns();
        sink = fp ? hps_probe_fp_kernel(seed, n) : hps_probe_int_kernel(seed, n);
        double ms = (double)(hps_bench_now_ns() - t0) / 1e6;
        if (ms >= target_ms / 8 || n >= (1L << 40)) {
            double want = (double)n * target_ms / (ms > 0 ? ms : 1e-3);
            (void)sink;
            return want < 1 ? 1 : want > 1e12 ? (long)1e12 : (long)want;
        }
    }
}

int main(int argc, char **argv)
{
    long reps, iters = 0;
    long seed_arg = 20110926;   /* any runtime value; see the comment at the top */
    hps_probe_list_t threads = { 0 };
    hps_probe_maps_t maps;
    const hps_probe_opt_t opts[] = { { "--reps", &reps, 1, HPS_PROBE_MAX_REPS, 3, 5 },
                                     { "--iters", &iters, 1, 1000000000000L, 0, 0 },
                                     { "--seed", &seed_arg, 0, 0x7fffffffffffffffL, 0, 0 },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .help = 1, .threads = &threads,
                                  .maps = &maps, .opts = opts };
    int quick = hps_probe_parse(&cli, argc, argv);
    uint64_t seed = (uint64_t)seed_arg;
    hps_topo_t topo;
    hps_probe_topo_threads(&topo, &threads);
    double target_ms = quick ? 10.0 : 60.0;
    long iters_int = iters ? iters : calibrate(0, seed, target_ms);
    long iters_fp = iters ? iters : calibrate(1, seed, target_ms);

    /* Measure everything first; the context block's own probing comes after. */
    int npoints = 2 * maps.n * threads.n;
    struct point *pts = calloc((size_t)npoints, sizeof *pts);
    if (!pts) {
        hps_bench_log("out of memory");
        return 1;
    }
    hps_probe_steal_start();
    int k = 0;
    for (int fp = 0; fp < 2; fp++)
        for (int m = 0; m < maps.n; m++)
            for (int t = 0; t < threads.n; t++, k++) {
                struct point *p = &pts[k];
                p->metric = fp ? "fp_ops_per_sec" : "int_ops_per_sec";
                p->map = maps.v[m];
                p->threads = threads.v[t];
                p->reps = (int)reps;
                if (measure_point(p, fp, seed, fp ? iters_fp : iters_int) != 0)
                    return 1;
                hps_bench_log("%s %s T=%d: %.3g ops/s", p->metric, hps_map_name(p->map),
                              p->threads, p->ops_per_sec[0]);
            }
    hps_probe_steal_stop();

    hps_probe_doc_begin("compute");
    hps_json_bool("quick", quick);
    hps_probe_params_lists(&threads, &maps);
    hps_json_int("reps", reps);
    hps_json_uint("seed", seed);
    hps_json_int("iters_int", iters_int);
    hps_json_int("iters_fp", iters_fp);
    hps_json_bool("iters_calibrated", iters == 0);
    hps_json_num("target_ms", iters ? 0.0 : target_ms);
    hps_json_int("int_chains", INT_CHAINS);
    hps_json_int("fp_chains", FP_CHAINS);
    hps_json_int("ops_per_chain_step", OPS_PER_STEP);
    hps_json_str("value", "median of reps");
    hps_probe_doc_results();
    for (int i = 0; i < npoints; i++) {
        char sum[24];
        snprintf(sum, sizeof sum, "%016" PRIx64, pts[i].checksum);
        hps_probe_row_curve(pts[i].metric, pts[i].map, pts[i].threads, pts[i].ops_per_sec,
                        pts[i].reps, "ops/s");
        hps_json_str("checksum", sum);
        hps_probe_row_end();
    }
    free(pts);
    return hps_probe_doc_end();
}
