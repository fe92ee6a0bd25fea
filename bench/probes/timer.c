// SPDX-License-Identifier: MIT
/*
 * hps-probe-timer: the timers every other figure is measured with.
 *
 *   hps-probe-timer [--quick] [--samples N]
 *
 * Scalars:
 *   tsc_invariant          CPUID 0x80000007 EDX bit 8 (1/0); -1 when the CPU
 *                          has no such leaf or no TSC
 *   tsc_hz                 TSC ticks per second of CLOCK_MONOTONIC: median
 *                          over several windows (a hypervisor may scale the
 *                          guest TSC, so the brand string's GHz is not it)
 *   tsc_hz_spread_ppm      (max - min) / median of those windows
 *   tsc_step_ticks/_ns     the most frequent nonzero back-to-back difference
 *                          (under KVM the TSC moves in quanta with a one-tick
 *                          wobble, so the smallest difference says nothing);
 *   tsc_min_step_ticks     the smallest recurring one, beside it
 *   tsc_read_ticks/_ns     mean cost of one rdtsc, best of a few batches
 *   clock_monotonic_*      cost_ns and step_ns from hps_bench_clock_cost()
 *                          (the figures the context block also carries),
 *                          mode_ns the most frequent back-to-back difference
 *   clock_realtime_*       the same method applied to CLOCK_REALTIME
 * Latency rows (metric "back_to_back_ns", variants rdtsc, clock_monotonic,
 * clock_realtime): the distribution of N differences between consecutive
 * readings, in ns, so a report can show the steps and the rare long gaps
 * (interrupts, preemption, steal) instead of one average.
 *
 * The thread is pinned to one CPU so the TSC figures are one CPU's counter
 * and a migration cannot show up as a step.
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>
#include "hps_probe.h"

#define USAGE "hps-probe-timer [--quick] [--samples N]"

/* Mean cost of one rdtsc in ticks: best of batches. */
static double tsc_read_ticks(void)
{
    enum { BATCH = 20000, BATCHES = 5 };
    double best = 1e30;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = hps_bench_rdtsc(), t = t0;
        for (int i = 0; i < BATCH; i++)
            t = hps_bench_rdtsc();
        double per = (double)(t - t0) / BATCH;
        best = per < best ? per : best;
    }
    return best;
}

/* n back-to-back differences of the TSC (use_tsc) or clock id, in raw units. */
static void back_to_back(int use_tsc, clockid_t id, uint64_t *d, size_t n)
{
    uint64_t prev = use_tsc ? hps_bench_rdtsc() : hps_bench_clock_ns(id);
    for (size_t i = 0; i < n; i++) {
        uint64_t t = use_tsc ? hps_bench_rdtsc() : hps_bench_clock_ns(id);
        d[i] = t - prev;
        prev = t;
    }
}

struct timer_result {
    int invariant, pinned_cpu;
    double hz, spread_ppm, read_ticks;
    uint64_t step_ticks, min_step_ticks;
    double mono_cost, real_cost;
    uint64_t mono_step, real_step, mono_mode, real_mode;
    double *dist[3];                  /* rdtsc, monotonic, realtime, in ns */
};

static const char *const VARIANTS[3] = { "rdtsc", "clock_monotonic", "clock_realtime" };

static int measure(struct timer_result *r, size_t n, int windows, long window_ms)
{
    uint64_t *raw = malloc(n * sizeof *raw), *tmp = malloc(n * sizeof *tmp);
    for (int v = 0; v < 3; v++)
        r->dist[v] = malloc(n * sizeof(double));
    if (!raw || !tmp || !r->dist[0] || !r->dist[1] || !r->dist[2]) {
        hps_bench_log("out of memory");
        return 1;
    }
    r->invariant = HPS_BENCH_HAVE_TSC ? hps_bench_tsc_invariant() : -1;
    if (HPS_BENCH_HAVE_TSC) {
        double rate[64];
        for (int w = 0; w < windows; w++)
            rate[w] = hps_bench_tsc_window(window_ms);
        double lo = rate[0], hi = rate[0];
        for (int w = 1; w < windows; w++) {
            lo = rate[w] < lo ? rate[w] : lo;
            hi = rate[w] > hi ? rate[w] : hi;
        }
        double ghz = hps_bench_median(rate, (size_t)windows);
        r->hz = ghz * 1e9;
        r->spread_ppm = ghz > 0 ? (hi - lo) / ghz * 1e6 : 0.0;
        r->read_ticks = tsc_read_ticks();
        back_to_back(1, 0, raw, n);
        for (size_t i = 0; i < n; i++)
            r->dist[0][i] = ghz > 0 ? (double)raw[i] / ghz : 0.0;
        memcpy(tmp, raw, n * sizeof *tmp);
        r->step_ticks = hps_bench_mode(tmp, n);
        r->min_step_ticks = hps_bench_step(raw, n);
    }
    hps_clock_cost_t cc;
    hps_bench_clock_cost(&cc);
    r->mono_cost = cc.call_ns;
    r->mono_step = cc.step_ns;
    hps_clock_cost_t rc;
    hps_bench_clock_cost_of(CLOCK_REALTIME, &rc);
    r->real_cost = rc.call_ns;
    r->real_step = rc.step_ns;
    const clockid_t ids[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    for (int c = 0; c < 2; c++) {
        back_to_back(0, ids[c], raw, n);
        for (size_t i = 0; i < n; i++)
            r->dist[1 + c][i] = (double)raw[i];
        uint64_t mode = hps_bench_mode(raw, n);
        *(c ? &r->real_mode : &r->mono_mode) = mode;
    }
    free(raw);
    free(tmp);
    return 0;
}

int main(int argc, char **argv)
{
    long samples;
    const hps_probe_opt_t opts[] = { { "--samples", &samples, 100, 100000000L, 20000, 500000 },
                                     HPS_PROBE_OPT_END };
    const hps_probe_cli_t cli = { .usage = USAGE, .help = 1, .opts = opts };
    int quick = hps_probe_parse(&cli, argc, argv);
    int windows = quick ? 5 : 10;
    long window_ms = quick ? 20 : 100;

    /* One CPU: the first of the compact order. */
    struct timer_result r = { 0 };
    int cpu = -1;
    if (hps_map_cpus(HPS_MAP_COMPACT, 1, &cpu) != 0 || hps_pin_self(cpu) != 0) {
        hps_bench_log("could not pin to one CPU; TSC figures may mix CPUs");
        cpu = -1;
    }
    r.pinned_cpu = cpu;
    hps_probe_steal_start();
    if (measure(&r, (size_t)samples, windows, window_ms) != 0)
        return 1;
    hps_probe_steal_stop();
    if (!HPS_BENCH_HAVE_TSC)
        hps_bench_log("no time-stamp counter on this architecture; TSC rows omitted");

    hps_probe_doc_begin("timer");
    hps_json_bool("quick", quick);
    hps_json_int("samples", samples);
    hps_json_int("freq_windows", windows);
    hps_json_int("freq_window_ms", window_ms);
    hps_json_int("pinned_cpu", r.pinned_cpu);
    hps_json_str("clocksource", hps_bench_clocksource());
    hps_probe_doc_results();
    hps_probe_row_scalar("tsc_invariant", r.invariant, "bool");
    if (HPS_BENCH_HAVE_TSC) {
        double ghz = r.hz / 1e9;
        hps_probe_row_scalar("tsc_hz", r.hz, "Hz");
        hps_probe_row_scalar("tsc_hz_spread_ppm", r.spread_ppm, "ppm");
        hps_probe_row_scalar("tsc_step_ticks", (double)r.step_ticks, "ticks");
        hps_probe_row_scalar("tsc_step_ns", ghz > 0 ? (double)r.step_ticks / ghz : 0.0, "ns");
        hps_probe_row_scalar("tsc_min_step_ticks", (double)r.min_step_ticks, "ticks");
        hps_probe_row_scalar("tsc_read_ticks", r.read_ticks, "ticks");
        hps_probe_row_scalar("tsc_read_ns", ghz > 0 ? r.read_ticks / ghz : 0.0, "ns");
    }
    hps_probe_row_scalar("clock_monotonic_cost_ns", r.mono_cost, "ns");
    hps_probe_row_scalar("clock_monotonic_step_ns", (double)r.mono_step, "ns");
    hps_probe_row_scalar("clock_monotonic_mode_ns", (double)r.mono_mode, "ns");
    hps_probe_row_scalar("clock_realtime_cost_ns", r.real_cost, "ns");
    hps_probe_row_scalar("clock_realtime_step_ns", (double)r.real_step, "ns");
    hps_probe_row_scalar("clock_realtime_mode_ns", (double)r.real_mode, "ns");
    for (int v = HPS_BENCH_HAVE_TSC ? 0 : 1; v < 3; v++) {
        hps_probe_row_begin("latency", "back_to_back_ns", VARIANTS[v]);
        hps_dist_json("dist", r.dist[v], (size_t)samples, "ns", 200);
        hps_probe_row_end();
    }
    for (int v = 0; v < 3; v++)
        free(r.dist[v]);
    return hps_probe_doc_end();
}
