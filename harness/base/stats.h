/*
 * stats — the numbers report and diff compute, stated once: nearest-rank
 * percentiles, 95% Wilson score intervals, rates and ratios that are
 * undefined (not 0) without a denominator, and a growable list of samples.
 *
 * Conventions:
 *  - percentiles are nearest-rank: pP is the smallest sample with at least P%
 *    of the samples at or below it (the ceil(P/100 * n)-th smallest), so every
 *    reported value is a measured one;
 *  - pass-rate intervals are Wilson score intervals at 95% (z = 1.96),
 *    clamped to [0, 1].
 */
#ifndef NEEDLE_STATS_H
#define NEEDLE_STATS_H

#include <stddef.h>

#include "err.h"

/* A growable list of samples; zero-initialised is empty. */
struct stats_vec {
	double *v; /* owned */
	size_t n, cap;
};

/* Appends x. ERR_NOMEM leaves the list as it was. */
enum err stats_vec_push(struct stats_vec *a, double x);
/* Frees the samples and empties the list. */
void stats_vec_release(struct stats_vec *a);

/* Percentiles of one set of samples. */
struct stats_pct {
	size_t n;             /* samples */
	double p50, p90, p99; /* meaningful only when n > 0 */
};

/* Sorts v[0..n) ascending in place. */
void stats_sort(double *v, size_t n);
/* The nearest-rank P-th percentile (0 < p <= 100) of sorted v[0..n); 0 when
 * n = 0. */
double stats_nearest_rank(const double *v, size_t n, double p);
/* The P-th percentile (0 <= p <= 100) of sorted v[0..n) as numpy's default
 * (method "linear") computes it, for exports that promise numpy's numbers
 * (vllm bench serve's): the value at rank h = p/100 x (n - 1), interpolated
 * between the samples either side; 0 when n = 0. */
double stats_linear(const double *v, size_t n, double p);
/* The mean and the population standard deviation (numpy's np.std, ddof 0)
 * of v[0..n); both 0 when n = 0. */
void stats_moments(const double *v, size_t n, double *mean, double *sd);
/* Sorts v[0..n) in place and fills `out` with its nearest-rank p50/p90/p99. */
void stats_percentiles(double *v, size_t n, struct stats_pct *out);
/* The 95% Wilson score interval of pass/n; [0, 1] when n = 0. */
void stats_wilson(size_t pass, size_t n, double *lo, double *hi);
/* *rate = pass / total and 1 when total > 0; 0 (rate undefined) otherwise. */
int stats_rate(double pass, double total, double *rate);
/* *ratio = b / a and 1 when a > 0; 0 (ratio undefined) otherwise. */
int stats_ratio(double b, double a, double *ratio);

#endif
