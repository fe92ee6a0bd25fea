// SPDX-License-Identifier: MIT
/* Timer characterisation and small statistics shared by the benchmarks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hps_bench.h"
#include "prim/cpuid.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t hps_bench_step(uint64_t *diffs, size_t n)
{
    /*
     * A single odd difference (a vCPU migration between counters with
     * slightly different offsets, say) is not the timer's step, so a value
     * must recur in at least 0.1% of the samples to count.
     */
    qsort(diffs, n, sizeof *diffs, cmp_u64);
    size_t need = n / 1000 > 0 ? n / 1000 : 1;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && diffs[j] == diffs[i])
            j++;
        if (diffs[i] != 0 && j - i >= need)
            return diffs[i];
        i = j;
    }
    return 0;
}

uint64_t hps_bench_mode(uint64_t *diffs, size_t n)
{
    qsort(diffs, n, sizeof *diffs, cmp_u64);
    uint64_t best = 0;
    size_t best_n = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && diffs[j] == diffs[i])
            j++;
        if (diffs[i] != 0 && j - i > best_n) {
            best = diffs[i];
            best_n = j - i;
        }
        i = j;
    }
    return best;
}

void hps_bench_clock_cost_of(clockid_t id, hps_clock_cost_t *out)
{
    /*
     * Cost: many back-to-back calls, total time / calls, best of a few
     * batches so a preemption in one batch does not inflate the figure.
     * Step: the smallest recurring nonzero difference between consecutive
     * readings, the timer's resolution as a program can observe it.
     */
    enum { BATCH = 20000, BATCHES = 5 };
    static uint64_t diffs[BATCH];
    double best = 1e30;
    uint64_t step = UINT64_MAX;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = hps_bench_clock_ns(id), prev = t0;
        for (int i = 0; i < BATCH; i++) {
            uint64_t t = hps_bench_clock_ns(id);
            diffs[i] = t - prev;
            prev = t;
        }
        double per = (double)(prev - t0) / BATCH;
        if (per < best)
            best = per;
        uint64_t s = hps_bench_step(diffs, BATCH);
        if (s && s < step)
            step = s;
    }
    out->call_ns = best;
    out->step_ns = step == UINT64_MAX ? 0 : step;
}

void hps_bench_clock_cost(hps_clock_cost_t *out)
{
    hps_bench_clock_cost_of(CLOCK_MONOTONIC, out);
}

int hps_bench_tsc_invariant(void)
{
    unsigned r[4];
    if (!hps_cpuid(0x80000007, 0, r))
        return -1;
    return (int)((r[3] >> 8) & 1);
}

double hps_bench_tsc_window(long ms)
{
    /* Each end brackets the clock read between two TSC reads and uses their
     * midpoint, so the clock call's own cost does not bias the rate. */
    uint64_t a0 = hps_bench_rdtsc(), n0 = hps_bench_now_ns(), b0 = hps_bench_rdtsc();
    struct timespec nap = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&nap, NULL);
    uint64_t a1 = hps_bench_rdtsc(), n1 = hps_bench_now_ns(), b1 = hps_bench_rdtsc();
    double c0 = ((double)a0 + (double)b0) / 2, c1 = ((double)a1 + (double)b1) / 2;
    return n1 > n0 ? (c1 - c0) / (double)(n1 - n0) : 0.0;
}

const char *hps_bench_clocksource(void)
{
    static char buf[64];
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return "unknown";
    if (!fgets(buf, sizeof buf, f))
        snprintf(buf, sizeof buf, "unknown");
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void hps_bench_sort(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double hps_bench_median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    hps_bench_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void hps_bench_log(const char *fmt, ...)
{
    extern const char *program_invocation_short_name;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program_invocation_short_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
