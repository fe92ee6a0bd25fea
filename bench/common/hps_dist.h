/* SPDX-License-Identifier: MIT */
/*
 * hps_dist.h - latency distributions as the characterization reports them.
 *
 * Every latency probe keeps its samples and emits them through
 * hps_dist_json(): count, min, p1, median, p90, p99, p99.9, max, mean, a
 * log-spaced histogram, a decimated copy of the raw samples (for CDF plots),
 * and a "bimodal" flag.  Runs that fall into two levels are flagged, never
 * silently averaged.  Steal time (a hypervisor running someone else on our
 * CPU) is read around each measurement so runs that saw it are flagged too.
 */
#ifndef HPS_DIST_H
#define HPS_DIST_H

#include <stddef.h>
#include <stdint.h>

/* Value at quantile q (0..1) of sorted v[0..n), linear interpolation between
 * distinct samples; within a run of equal (clock-quantized) samples, spread
 * over one clock step around them (grouped-data interpolation). */
double hps_dist_quantile(const double *sorted, size_t n, double q);

/*
 * Two levels?  Splits the log-values with a 2-means clustering; bimodal when
 * both clusters hold at least 5% of the samples and their centres are at
 * least a factor 2 apart with a gap between them.  Input must be sorted.
 */
int hps_dist_bimodal(const double *sorted, size_t n);

/*
 * Emit {"unit", "n", "min", "p1", "median", "p90", "p99", "p999", "max",
 * "mean", "bimodal", "hist": {"edges": [...], "counts": [...]},
 * "samples": [...]} under key.  Sorts v in place; keeps at most keep_raw
 * samples (evenly spaced in the sorted order) in "samples".
 */
void hps_dist_json(const char *key, double *v, size_t n, const char *unit, size_t keep_raw);

/*
 * Emit [[a0, b0], [a1, b1], ...] under key for a two-interval measurement
 * (e.g. create-return vs thread-start), at most keep pairs, evenly spaced
 * in time order so the scatter shows drift.
 */
void hps_dist_pairs_json(const char *key, const double *a, const double *b, size_t n, size_t keep);

/* Steal time of the whole machine so far, in ms (/proc/stat), or -1. */
double hps_steal_ms(void);

#endif
