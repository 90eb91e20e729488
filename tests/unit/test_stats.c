/*
 * Unit tests of stats: nearest-rank percentiles, Wilson intervals, undefined
 * rates and ratios, the growable sample list, and the tests on pass counts
 * (beta-binomial, Fisher's mid-p, Holm, the beta fit).
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

#define NEAR(x, want, tol) (fabs((x) - (want)) <= (tol))

/* The tests on pass counts against exact references: rationals worked out
 * with Python's fractions (integer Beta parameters make every term
 * rational; Fisher's terms are ratios of binomial coefficients), a Simpson
 * integral of the beta-binomial with fractional parameters, and Fisher's
 * tea-tasting table (3 of 4 against 1 of 4: plain one-sided p 17/70, mid-p
 * 9/70). */
static void test_count_tests(void)
{
	double p[4] = {0.01, 0.04, 0.03, 0.005}, adj[4], a, b;
	long k1[4] = {3, 3, 3, 3}, k2[4] = {0, 3, 0, 3}, n3[4] = {3, 3, 3, 3};
	long k3[6] = {12, 14, 16, 18, 13, 17}, n20[6] = {20, 20, 20, 20, 20, 20};

	CHECK(NEAR(stats_betabinom_cdf(1, 3, 2, 3), 22.0 / 35, 1e-12));
	CHECK(NEAR(stats_betabinom_cdf(0, 3, 9, 1), 1.0 / 220, 1e-14));
	CHECK(NEAR(stats_betabinom_cdf(4, 10, 3, 2), 40.0 / 143, 1e-12));
	CHECK(NEAR(stats_betabinom_cdf(2, 5, 2.5, 1.5), 0.3291015625, 1e-9));
	CHECK(stats_betabinom_cdf(-1, 3, 2, 3) == 0 && stats_betabinom_cdf(3, 3, 2, 3) == 1);
	CHECK(NEAR(stats_fisher_midp_less(1, 4, 3, 4), 9.0 / 70, 1e-12));
	CHECK(NEAR(stats_fisher_midp_less(0, 3, 3, 3), 1.0 / 40, 1e-12));
	CHECK(NEAR(stats_fisher_midp_less(18, 36, 32, 36), 0.00018617229360149996, 1e-15));
	CHECK(NEAR(stats_fisher_midp_less(30, 36, 30, 36), 0.5, 1e-12));
	CHECK(stats_fisher_midp_less(1, 0, 3, 4) == 1);
	CHECK(NEAR(stats_norm_cdf(-1.96), 0.024997895148220428, 1e-12));
	CHECK(NEAR(stats_norm_cdf(0), 0.5, 1e-15));
	/* Holm by hand: sorted 0.005 x4, 0.01 x3, 0.03 x2, 0.04 x1 (kept at
	 * the running maximum 0.06) */
	CHECK(stats_holm(p, 4, adj) == ERR_OK);
	CHECK(NEAR(adj[0], 0.03, 1e-15) && NEAR(adj[1], 0.06, 1e-15) && NEAR(adj[2], 0.06, 1e-15) &&
	      NEAR(adj[3], 0.02, 1e-15));
	CHECK(stats_holm(p, 0, adj) == ERR_OK);
	/* rates that spread no more than sampling: the upper bound, sum n */
	stats_beta_fit(k1, n3, 4, 8, &a, &b);
	CHECK(NEAR(a + b, 12, 1e-12) && NEAR(a, 12 * 12.5 / 13, 1e-12));
	/* a spread beyond it: the floor */
	stats_beta_fit(k2, n3, 4, 8, &a, &b);
	CHECK(NEAR(a, 4, 1e-12) && NEAR(b, 4, 1e-12));
	/* in between: the moments */
	stats_beta_fit(k3, n20, 6, 8, &a, &b);
	CHECK(NEAR(a, 30.048490513340056, 1e-9) && NEAR(b, 10.126839344274828, 1e-9));
	/* one case: the upper bound */
	stats_beta_fit(k1, n3, 1, 8, &a, &b);
	CHECK(NEAR(a + b, 8, 1e-12));
}

int main(void)
{
	T_RUN(test_percentiles);
	T_RUN(test_sort);
	T_RUN(test_linear);
	T_RUN(test_wilson);
	T_RUN(test_rate_ratio);
	T_RUN(test_vec);
	T_RUN(test_count_tests);
	return T_DONE();
}
