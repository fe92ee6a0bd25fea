// SPDX-License-Identifier: MIT
/* Latency distributions (see hps_dist.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hps_bench.h"
#include "hps_dist.h"

/* Smallest gap between distinct neighbours of sorted s: the quantum when the
 * samples come from a stepping clock (the TSC here moves in ~10 ns steps). */
static double quantum(const double *s, size_t n)
{
    double q = INFINITY;
    for (size_t i = 1; i < n; i++)
        if (s[i] > s[i - 1] && s[i] - s[i - 1] < q)
            q = s[i] - s[i - 1];
    return q;
}

double hps_dist_quantile(const double *s, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return s[n - 1];
    double f = pos - (double)i;
    if (s[i] != s[i + 1])
        return s[i] * (1.0 - f) + s[i + 1] * f;
    /* Inside a run of equal samples the true values are spread over the
     * clock step around the shown one; interpolate across that cell (the
     * grouped-data median) so a median of 40 and 50 ns ticks moves smoothly
     * with the share of each instead of jumping a whole step between runs. */
    size_t a = i, b = i + 1;
    while (a > 0 && s[a - 1] == s[i])
        a--;
    while (b < n && s[b] == s[i])
        b++;
    double step = quantum(s, n);
    if (!isfinite(step))
        return s[i];                       /* every sample equal */
    double t = (pos + 0.5 - (double)a) / (double)(b - a);
    double v = s[i] - step / 2 + t * step;
    /* Never leave the samples' own range. */
    return v < s[0] ? s[0] : v > s[n - 1] ? s[n - 1] : v;
}

int hps_dist_bimodal(const double *s, size_t n)
{
    if (n < 40 || s[0] <= 0)
        return 0;
    /* 1-D 2-means on log values: for sorted data the best split is a cut
     * point; scan cuts (coarsely for large n) and keep the one with the
     * smallest within-cluster variance. */
    double *lg = malloc(n * sizeof *lg);
    if (!lg)
        return 0;
    double tot = 0, tot2 = 0;
    for (size_t i = 0; i < n; i++) {
        lg[i] = log(s[i] > 0 ? s[i] : 1e-9);
        tot += lg[i];
        tot2 += lg[i] * lg[i];
    }
    size_t step = n / 512 + 1, best = 0;
    double best_cost = INFINITY, sum = 0, sum2 = 0;
    size_t k = 0;
    for (size_t cut = step; cut < n; cut += step) {
        for (; k < cut; k++) {
            sum += lg[k];
            sum2 += lg[k] * lg[k];
        }
        double nl = (double)cut, nr = (double)(n - cut);
        double cost = (sum2 - sum * sum / nl) + ((tot2 - sum2) - (tot - sum) * (tot - sum) / nr);
        if (cost < best_cost) {
            best_cost = cost;
            best = cut;
        }
    }
    int bi = 0;
    if (best >= n / 20 && n - best >= n / 20) {
        double ml = 0, mr = 0;
        for (size_t i = 0; i < best; i++)
            ml += lg[i];
        for (size_t i = best; i < n; i++)
            mr += lg[i];
        ml /= (double)best;
        mr /= (double)(n - best);
        /* Centres a factor 2 apart, and an empty band between the clusters
         * (the gap at the cut is wider than the clusters' typical spread). */
        double gap = lg[best] - lg[best - 1];
        double spread = (lg[n - 1] - lg[0]) / (double)n * 20.0;
        bi = (mr - ml) >= log(2.0) && gap > spread * 0.05;
    }
    free(lg);
    return bi;
}

void hps_dist_json(const char *key, double *v, size_t n, const char *unit, size_t keep_raw)
{
    hps_bench_sort(v, n);
    hps_json_begin_object(key);
    hps_json_str("unit", unit);
    hps_json_uint("n", n);
    if (n == 0) {
        hps_json_end_object();
        return;
    }
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += v[i];
    mean /= (double)n;
    hps_json_num("min", v[0]);
    hps_json_num("p1", hps_dist_quantile(v, n, 0.01));
    hps_json_num("median", hps_dist_quantile(v, n, 0.5));
    hps_json_num("p90", hps_dist_quantile(v, n, 0.90));
    hps_json_num("p99", hps_dist_quantile(v, n, 0.99));
    hps_json_num("p999", hps_dist_quantile(v, n, 0.999));
    hps_json_num("max", v[n - 1]);
    hps_json_num("mean", mean);
    hps_json_bool("bimodal", hps_dist_bimodal(v, n));
    /* 40 log-spaced bins from min to max: latencies span decades. */
    enum { BINS = 40 };
    double lo = v[0] > 0 ? v[0] : 1e-3, hi = v[n - 1] > lo ? v[n - 1] : lo * 1.0001;
    double edges[BINS + 1], counts[BINS] = { 0 };
    for (int i = 0; i <= BINS; i++)
        edges[i] = lo * pow(hi / lo, (double)i / BINS);
    for (size_t i = 0; i < n; i++) {
        int b = v[i] <= lo ? 0 : (int)(log(v[i] / lo) / log(hi / lo) * BINS);
        counts[b < 0 ? 0 : b >= BINS ? BINS - 1 : b] += 1;
    }
    hps_json_begin_object("hist");
    hps_json_num_array("edges", edges, BINS + 1);
    hps_json_num_array("counts", counts, BINS);
    hps_json_end_object();
    hps_json_begin_array("samples");
    size_t keep = keep_raw < n ? keep_raw : n;
    for (size_t i = 0; i < keep; i++)
        hps_json_num(NULL, v[keep == n ? i : i * (n - 1) / (keep > 1 ? keep - 1 : 1)]);
    hps_json_end_array();
    hps_json_end_object();
}

void hps_dist_pairs_json(const char *key, const double *a, const double *b, size_t n, size_t keep)
{
    hps_json_begin_array(key);
    size_t k = keep < n ? keep : n;
    for (size_t i = 0; i < k; i++) {
        size_t j = k == n ? i : i * (n - 1) / (k > 1 ? k - 1 : 1);
        hps_json_begin_array(NULL);
        hps_json_num(NULL, a[j]);
        hps_json_num(NULL, b[j]);
        hps_json_end_array();
    }
    hps_json_end_array();
}

double hps_steal_ms(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long u, ni, sy, id, io, irq, sirq, steal = 0;
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &u, &ni, &sy, &id, &io,
                     &irq, &sirq, &steal);
    fclose(f);
    if (got < 8)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return (double)steal * 1000.0 / (double)(hz > 0 ? hz : 100);
}
