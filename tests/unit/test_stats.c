/*
 * Unit tests of stats: nearest-rank percentiles, Wilson intervals, undefined
 * rates and ratios, and the growable sample list.
 */
#include <math.h>
#include <stdlib.h>

#include "base/stats.h"
#include "t.h"

/* Nearest rank on 1..100 and on small n. */
static void test_percentiles(void)
{
	double v[100], one = 7, three[3] = {30, 10, 20};
	struct stats_pct p;
	int i;

	for (i = 0; i < 100; i++)
		v[i] = 100 - i; /* unsorted on purpose */
	stats_percentiles(v, 100, &p);
	CHECK_EQ_LONG(p.n, 100);
	CHECK(p.p50 == 50 && p.p90 == 90 && p.p99 == 99);
	stats_percentiles(&one, 1, &p);
	CHECK(p.n == 1 && p.p50 == 7 && p.p99 == 7);
	stats_percentiles(three, 3, &p); /* ranks ceil(1.5)=2, ceil(2.7)=3 */
	CHECK(p.p50 == 20 && p.p90 == 30 && p.p99 == 30);
	stats_percentiles(NULL, 0, &p);
	CHECK_EQ_LONG(p.n, 0);
}

/* stats_sort against a stable reference (insertion), bit for bit: sizes
 * around the merge widths, many ties, 0 and -0 (equal, their order kept). */
static void test_sort(void)
{
	static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 31, 33, 100, 257, 5000};
	static double v[5000], ref[5000];
	unsigned seed = 12345;
	size_t s, i, j, bad;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];

		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = (seed >> 16) % 7 == 0 ? ((seed >> 8) & 1 ? 0.0 : -0.0)
						     : (double)((seed >> 16) % 50) - 25;
			ref[i] = v[i];
		}
		for (i = 1; i < n; i++) {
			double x = ref[i];

			for (j = i; j > 0 && x < ref[j - 1]; j--)
				ref[j] = ref[j - 1];
			ref[j] = x;
		}
		stats_sort(v, n);
		for (bad = i = 0; i < n; i++)
			bad += v[i] != ref[i] || signbit(v[i]) != signbit(ref[i]);
		CHECK_EQ_LONG(bad, 0);
	}
}

/* Wilson 95%: 5/10 is 0.2366..0.7634; 0/0 says nothing. */
/* numpy's np.percentile (method "linear"), np.mean and np.std on known
 * samples: np.percentile([1, 2, 4, 10], 50) = 3.0, ..., 90 = 8.2, 99 = 9.82;
 * np.std = 3.491060010942235. */
static void test_linear(void)
{
	double v[] = {1, 2, 4, 10}, one = 7, mean, sd;

	CHECK(fabs(stats_linear(v, 4, 50) - 3.0) < 1e-12);
	CHECK(fabs(stats_linear(v, 4, 90) - 8.2) < 1e-12);
	CHECK(fabs(stats_linear(v, 4, 99) - 9.82) < 1e-12);
	CHECK(stats_linear(v, 4, 0) == 1 && stats_linear(v, 4, 100) == 10);
	CHECK(stats_linear(&one, 1, 95) == 7 && stats_linear(v, 0, 50) == 0);
	stats_moments(v, 4, &mean, &sd);
	CHECK(mean == 4.25 && fabs(sd - 3.491060010942235) < 1e-12);
	stats_moments(v, 0, &mean, &sd);
	CHECK(mean == 0 && sd == 0);
}

static void test_wilson(void)
{
	double lo, hi;

	stats_wilson(5, 10, &lo, &hi);
	CHECK(fabs(lo - 0.2366) < 1e-4 && fabs(hi - 0.7634) < 1e-4);
	stats_wilson(0, 0, &lo, &hi);
	CHECK(lo == 0 && hi == 1);
	stats_wilson(4, 4, &lo, &hi);
	CHECK(hi == 1 && fabs(lo - 0.5101) < 1e-4);
}

/* Without a denominator a rate or ratio is undefined, not 0. */
static void test_rate_ratio(void)
{
	double r = -1;

	CHECK(stats_rate(3, 4, &r) == 1 && r == 0.75);
	r = -1;
	CHECK(stats_rate(0, 0, &r) == 0 && r == -1);
	CHECK(stats_rate(1, -2, &r) == 0 && r == -1);
	CHECK(stats_ratio(30, 20, &r) == 1 && r == 1.5);
	r = -1;
	CHECK(stats_ratio(5, 0, &r) == 0 && r == -1);
	CHECK(stats_ratio(5, NAN, &r) == 0 && r == -1);
}

/* The list keeps every sample in order across growth; sort orders them. */
static void test_vec(void)
{
	struct stats_vec a = {0};
	size_t i;
	int ok = 1;

	for (i = 0; i < 1000; i++)
		CHECK(stats_vec_push(&a, (double)(i * 7919 % 1000)) == ERR_OK);
	CHECK_EQ_LONG(a.n, 1000);
	CHECK(a.v[0] == 0 && a.v[1] == 919 && a.v[999] == (double)(999 * 7919 % 1000));
	stats_sort(a.v, a.n);
	for (i = 0; i < a.n; i++)
		ok &= a.v[i] == (double)i;
	CHECK(ok);
	stats_sort(NULL, 0);
	stats_vec_release(&a);
	CHECK(a.v == NULL && a.n == 0 && a.cap == 0);
}

int main(void)
{
	T_RUN(test_percentiles);
	T_RUN(test_sort);
	T_RUN(test_linear);
	T_RUN(test_wilson);
	T_RUN(test_rate_ratio);
	T_RUN(test_vec);
	return T_DONE();
}
