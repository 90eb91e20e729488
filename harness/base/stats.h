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
 *    clamped to [0, 1];
 *  - the tests on pass counts (a pass rate's attempts as binomial samples)
 *    are one-sided, small p meaning "B's rate is below A's", and exact
 *    where the distribution is discrete (sums of probabilities, in logs:
 *    lgamma), so a count of thousands of attempts is as good as one of three.
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


/* Tests on pass counts. */

/* P(X <= k) for X beta-binomial(n, a, b): the passes of n attempts whose
 * pass rate is Beta(a, b) distributed (a, b > 0). 0 when k < 0, 1 when
 * k >= n. */
double stats_betabinom_cdf(long k, long n, double a, double b);
/* The one-sided mid-p of Fisher's exact test that B's pass rate is below
 * A's, kb passes of nb attempts against ka of na: with X the passes B would
 * have under the hypergeometric law of the margins, P(X < kb) + P(X = kb)/2.
 * 1 when nb or na is 0. The mid-p's size is close to its level where the
 * plain p of a discrete test sits far below it (Lancaster). */
double stats_fisher_midp_less(long kb, long nb, long ka, long na);
/* P(Z <= z) for a standard normal Z. */
double stats_norm_cdf(double z);
/* Holm's step-down adjustment of p[0..n) into adj[0..n) (the family-wise
 * error rate: adj[i] < alpha rejects case i at level alpha for the family).
 * ERR_NOMEM; adj may not alias p. */
enum err stats_holm(const double *p, size_t n, double *adj);
/* A beta prior Beta(*a, *b) for per-case pass rates k[i]/n[i] (c cases,
 * n[i] > 0), by moments: its mean is the pooled rate (sum k + 1/2) /
 * (sum n + 1), its between-case variance the rates' variance less what
 * binomial sampling at the mean size explains; the concentration a + b is
 * kept within [floor, max(floor, sum n)] (a prior worth no more attempts
 * than were made, nor fewer than `floor`, which a spread of a few cases
 * drawn by chance would otherwise give), and is the upper bound when the
 * rates spread no more than sampling explains or c < 2. */
void stats_beta_fit(const long *k, const long *n, size_t c, double floor, double *a, double *b);

#endif
