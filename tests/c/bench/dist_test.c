// SPDX-License-Identifier: MIT
/*
 * dist_test: the probes' distribution statistics (bench/common/dist.c) on
 * known samples: quantiles between distinct values, inside runs of
 * clock-quantized ties, and the two-level (bimodal) detector.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"
#include "hps_dist.h"

static void near(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        hps_test_fail("%s: got %.6f, want %.6f (+-%g)", what, got, want, tol);
}

/* n40 samples of 40 then n50 of 50 (a 10 ns clock step). */
static double tied_median(int n40, int n50)
{
    static double s[2000];
    int n = 0;
    for (int i = 0; i < n40; i++)
        s[n++] = 40;
    for (int i = 0; i < n50; i++)
        s[n++] = 50;
    return hps_dist_quantile(s, (size_t)n, 0.5);
}

int main(void)
{
    hps_test_set_name("dist");

    double lin[] = {1, 2, 3, 4, 5};
    near("median of 1..5", hps_dist_quantile(lin, 5, 0.5), 3, 1e-12);
    near("q=0.25 of 1..5", hps_dist_quantile(lin, 5, 0.25), 2, 1e-12);
    near("q=0.1 of 1..5 interpolates", hps_dist_quantile(lin, 5, 0.1), 1.4, 1e-12);
    near("q=1 is the max", hps_dist_quantile(lin, 5, 1.0), 5, 1e-12);
    if (!isnan(hps_dist_quantile(lin, 0, 0.5)))
        hps_test_fail("quantile of no samples is not NaN");

    double same[] = {7, 7, 7, 7};
    near("all equal", hps_dist_quantile(same, 4, 0.5), 7, 0);

    /* Ties: the median moves with the share of each tick instead of jumping
     * from 40 to 50 when the majority changes sides. */
    double m45 = tied_median(450, 550), m52 = tied_median(520, 480);
    near("45% at 40 ns", m45, 45 + 10 * (500.0 - 450) / 550, 0.05);
    near("52% at 40 ns", m52, 35 + 10 * 500.0 / 520, 0.05);
    if (!(m52 < m45 && m45 - m52 < 2.0))
        hps_test_fail("tied medians %.2f / %.2f do not move smoothly", m45, m52);
    double m_all40 = tied_median(999, 1);
    if (!(m_all40 >= 40 && m_all40 <= 45))
        hps_test_fail("mostly-40 median %.2f outside the 40 ns cell", m_all40);

    /* Two levels of 1000 samples each, log-normal-ish spread. */
    static double two[2000];
    for (int i = 0; i < 2000; i++)
        two[i] = (i < 1000 ? 100.0 : 1000.0) * (1.0 + 0.05 * (double)(i % 1000) / 1000);
    if (!hps_dist_bimodal(two, 2000))
        hps_test_fail("two levels 10x apart not flagged bimodal");
    static double one[2000];
    for (int i = 0; i < 2000; i++)
        one[i] = 100.0 * (1.0 + 0.2 * (double)i / 2000);
    if (hps_dist_bimodal(one, 2000))
        hps_test_fail("one 20%%-wide level flagged bimodal");

    printf("dist: ok (tied medians %.2f, %.2f)\n", m45, m52);
    return 0;
}
