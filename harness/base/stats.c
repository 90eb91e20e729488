/*
 * stats — see stats.h.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

enum err stats_vec_push(struct stats_vec *a, double x)
{
	if (a->n == a->cap) {
		double *nv = mem_grow(a->v, &a->cap, sizeof(*nv), 64);
		if (!nv)
			return ERR_NOMEM;
		a->v = nv;
	}
	a->v[a->n++] = x;
	return ERR_OK;
}

void stats_vec_release(struct stats_vec *a)
{
	mem_free(a->v);
	memset(a, 0, sizeof(*a));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define RUN 16 /* values put in order by insertion before the merges */

/* Sorts v[0..n), n <= RUN, by insertion; stable. */
static void insertion(double *v, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		double x = v[i];

		for (j = i; j > 0 && x < v[j - 1]; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Merges the ordered runs v[0..m) and v[m..n) (0 < m < n) through tmp[0..m);
 * ties taken from the first run (stable); nothing to do when they are
 * already in order. */
static void merge(double *v, size_t m, size_t n, double *tmp)
{
	size_t i = 0, j = m, k = 0;

	if (!(v[m] < v[m - 1]))
		return;
	memcpy(tmp, v, m * sizeof(*v));
	while (i < m && j < n)
		v[k++] = v[j] < tmp[i] ? v[j++] : tmp[i++];
	while (i < m)
		v[k++] = tmp[i++];
}

/* A stable merge sort with the compares inline: the order qsort's merge
 * sort gives (equal values, 0 and -0, keep their order), at a third of its
 * cost (a summary sorts every latency it read); qsort when the buffer
 * cannot be had. */
void stats_sort(double *v, size_t n)
{
	double *tmp;
	size_t w, lo;

	if (n <= RUN) {
		insertion(v, n);
		return;
	}
	if (!(tmp = mem_alloc(n * sizeof(*tmp)))) {
		qsort(v, n, sizeof(*v), cmp_double);
		return;
	}
	for (lo = 0; lo < n; lo += RUN)
		insertion(v + lo, n - lo < RUN ? n - lo : RUN);
	for (w = RUN; w < n; w *= 2)
		for (lo = 0; lo + w < n; lo += 2 * w)
			merge(v + lo, w, n - lo < 2 * w ? n - lo : 2 * w, tmp);
	mem_free(tmp);
}

double stats_nearest_rank(const double *v, size_t n, double p)
{
	double r = ceil(p / 100.0 * (double)n - 1e-9);
	size_t k = r < 1 ? 1 : (size_t)r;

	if (!n)
		return 0;

	return v[(k > n ? n : k) - 1];
}

double stats_linear(const double *v, size_t n, double p)
{
	double h, f;
	size_t k;

	if (!n)
		return 0;
	h = p / 100.0 * (double)(n - 1);
	k = (size_t)floor(h);
	if (k + 1 >= n)
		return v[n - 1];
	f = h - (double)k;
	return v[k] + f * (v[k + 1] - v[k]);
}

void stats_moments(const double *v, size_t n, double *mean, double *sd)
{
	double sum = 0, sq = 0;
	size_t i;

	*mean = *sd = 0;
	if (!n)
		return;
	for (i = 0; i < n; i++)
		sum += v[i];
	*mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - *mean) * (v[i] - *mean);
	*sd = sqrt(sq / (double)n);
}

void stats_percentiles(double *v, size_t n, struct stats_pct *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	stats_sort(v, n);
	out->p50 = stats_nearest_rank(v, n, 50);
	out->p90 = stats_nearest_rank(v, n, 90);
	out->p99 = stats_nearest_rank(v, n, 99);
}

void stats_wilson(size_t pass, size_t n, double *lo, double *hi)
{
	const double z = 1.96;
	double p, den, mid, half;

	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)pass / (double)n;
	den = 1 + z * z / (double)n;
	mid = (p + z * z / (2.0 * (double)n)) / den;
	half = z * sqrt(p * (1 - p) / (double)n + z * z / (4.0 * (double)n * (double)n)) / den;
	*lo = mid - half < 0 ? 0 : mid - half;
	*hi = mid + half > 1 ? 1 : mid + half;
}

int stats_rate(double pass, double total, double *rate)
{
	if (!(total > 0))
		return 0;
	*rate = pass / total;
	return 1;
}

int stats_ratio(double b, double a, double *ratio)
{
	if (!(a > 0))
		return 0;
	*ratio = b / a;
	return 1;
}

/* ---- tests on pass counts ---- */

static double lchoose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

static double lbeta(double a, double b)
{
	return lgamma(a) + lgamma(b) - lgamma(a + b);
}

double stats_betabinom_cdf(long k, long n, double a, double b)
{
	double s = 0, base = lbeta(a, b);
	long j;

	if (k < 0)
		return 0;
	if (k >= n)
		return 1;
	for (j = 0; j <= k; j++)
		s += exp(lchoose((double)n, (double)j) + lbeta(j + a, n - j + b) - base);
	return s < 1 ? s : 1;
}

double stats_fisher_midp_less(long kb, long nb, long ka, long na)
{
	long K = ka + kb, N = na + nb, x, lo = K - na > 0 ? K - na : 0;
	double s = 0, all = lchoose((double)N, (double)nb), px;

	if (nb <= 0 || na <= 0)
		return 1;
	for (x = lo; x <= kb; x++) {
		px = exp(lchoose((double)K, (double)x) + lchoose((double)(N - K), (double)(nb - x)) - all);
		s += x < kb ? px : px / 2;
	}
	return s < 1 ? s : 1;
}

double stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

struct ranked {
	double p;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p ? 1 : (x->i > y->i) - (x->i < y->i);
}

enum err stats_holm(const double *p, size_t n, double *adj)
{
	struct ranked *r;
	double run = 0, v;
	size_t i;

	if (!n)
		return ERR_OK;
	if (!(r = mem_alloc(n * sizeof(*r))))
		return ERR_NOMEM;
	for (i = 0; i < n; i++)
		r[i] = (struct ranked){p[i], i};
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (i = 0; i < n; i++) {
		v = (double)(n - i) * r[i].p;
		run = v > run ? v : run;
		adj[r[i].i] = run < 1 ? run : 1;
	}
	mem_free(r);
	return ERR_OK;
}

void stats_beta_fit(const long *k, const long *n, size_t c, double floor, double *a, double *b)
{
	double K = 0, N = 0, m, var = 0, between, hi, conc;
	size_t i;

	for (i = 0; i < c; i++)
		K += (double)k[i], N += (double)n[i];
	m = (K + 0.5) / (N + 1);
	hi = N > floor ? N : floor;
	conc = hi;
	if (c >= 2) {
		for (i = 0; i < c; i++)
			var += ((double)k[i] / (double)n[i] - m) * ((double)k[i] / (double)n[i] - m);
		between = var / (double)(c - 1) - m * (1 - m) / (N / (double)c);
		if (between > 0) {
			conc = m * (1 - m) / between - 1;
			conc = conc < floor ? floor : conc > hi ? hi : conc;
		}
	}
	*a = m * conc;
	*b = (1 - m) * conc;
}
