/*
 * loadci — non-inferiority verdicts on load figures; see loadci.h.
 */
#include "loadci.h"

#include <math.h>
#include <string.h>

#include "base/mem.h"
#include "base/stats.h"

#define POWER_Z 2.3263478740408408 /* the standard normal's LOADCI_POWER point */
#define ALPHA_Z 1.6448536269514722 /* its 0.95 point: each bound one-sided 95% */
#define SD_BOUND_Z 0.8416212335729143 /* its LOADCI_SD_BOUND point */
#define MODE_STEP 3.0              /* percentile points below P that a slow mode
				      would have to clear */
#define MODE_JUMP 1.5              /* P over P - MODE_STEP beyond which P sits on
				      a slow mode */

void loadci_set_reset(struct loadci_set *s)
{
	s->n = s->rounds = 0;
	if (s->start)
		s->start[0] = 0;
}

void loadci_set_release(struct loadci_set *s)
{
	mem_free(s->v);
	mem_free(s->start);
	mem_free(s->pool);
	memset(s, 0, sizeof(*s));
}

int loadci_set_add(struct loadci_set *s, double v)
{
	if (!s->start) {
		if (!(s->start = mem_alloc(8 * sizeof(*s->start))))
			return 0;
		s->capr = 8;
		s->start[0] = 0;
	}
	if (s->n == s->cap) {
		double *nv = mem_grow(s->v, &s->cap, sizeof(*nv), 64);
		if (!nv)
			return 0;
		s->v = nv;
	}
	s->v[s->n++] = v;
	return 1;
}

int loadci_set_end_round(struct loadci_set *s)
{
	size_t from;

	if (!s->start || s->n == s->start[s->rounds])
		return 1;
	if (s->rounds + 2 > s->capr) {
		size_t *ns = mem_grow(s->start, &s->capr, sizeof(*ns), 8);
		if (!ns)
			return 0;
		s->start = ns;
	}
	from = s->start[s->rounds];
	stats_sort(s->v + from, s->n - from);
	s->start[++s->rounds] = s->n;
	return 1;
}

void loadci_set_drop_round(struct loadci_set *s)
{
	if (s->start)
		s->n = s->start[s->rounds];
}

/* Every round's samples pooled and sorted into s->pool. 0 when out of
 * memory. */
static int pool(struct loadci_set *s)
{
	if (s->n > s->cappool) {
		mem_free(s->pool);
		s->cappool = (s->pool = mem_alloc(s->n * sizeof(*s->pool))) ? s->n : 0;
		if (!s->pool)
			return 0;
	}
	memcpy(s->pool, s->v, s->n * sizeof(*s->pool));
	stats_sort(s->pool, s->n);
	return 1;
}

/* The linear percentiles of round r's two halves, its even-placed and its
 * odd-placed samples (each sorted, as the round is), into *o and *e; the
 * halves are laid out in `scratch` (room for the round). */
static void halves_pct(const struct loadci_set *s, size_t r, double pct, double *scratch, double *o,
		       double *e)
{
	const double *v = s->v + s->start[r];
	size_t n = s->start[r + 1] - s->start[r], i, m = (n + 1) / 2;

	for (i = 0; i < n; i++)
		scratch[i % 2 ? m + i / 2 : i / 2] = v[i];
	*o = stats_linear(scratch, m, pct);
	*e = stats_linear(scratch + m, n - m, pct);
}

/* What dominates a per-request figure's noise (s->pool filled, then used as
 * scratch): a slow mode under P, the rounds' disagreement against what their
 * halves say of their own sampling, or that sampling. */
static enum loadci_noise noise_of(struct loadci_set *s, double pct)
{
	double below = stats_linear(s->pool, s->n, pct - MODE_STEP), at = stats_linear(s->pool, s->n, pct);
	double sum = 0, ss = 0, within = 0, x, o, e;
	size_t i, halves = 0;

	if (pct > MODE_STEP && below > 0 && at / below > MODE_JUMP)
		return LOADCI_NOISE_MODE;
	if (s->rounds < 2)
		return LOADCI_NOISE_ROUNDS;
	for (i = 0; i < s->rounds; i++) {
		x = log(stats_linear(s->v + s->start[i], s->start[i + 1] - s->start[i], pct));
		sum += x;
		ss += x * x;
		halves_pct(s, i, pct, s->pool, &o, &e);
		if (o > 0 && e > 0 && s->start[i + 1] - s->start[i] >= 4) {
			within += (log(o) - log(e)) * (log(o) - log(e)) / 4;
			halves++;
		}
	}
	x = (ss - sum * sum / (double)s->rounds) / (double)(s->rounds - 1);
	if (!halves || !isfinite(x))
		return LOADCI_NOISE_ROUNDS;
	return x > 2 * within / (double)halves ? LOADCI_NOISE_ROUNDS : LOADCI_NOISE_REQUESTS;
}

/* The per-round figures of `s` as logarithms into y[0..rounds): a round's
 * percentile `pct` of its requests (numpy's "linear"), or its one value;
 * *zero when one is 0 or less (its log is left at -INFINITY). */
static void round_logs(const struct loadci_set *s, double pct, double *y, int *zero)
{
	size_t i, n;
	double x;

	*zero = 0;
	for (i = 0; i < s->rounds; i++) {
		n = s->start[i + 1] - s->start[i];
		x = pct > 0 ? stats_linear(s->v + s->start[i], n, pct) : s->v[s->start[i]];
		*zero |= !(x > 0);
		y[i] = x > 0 ? log(x) : -INFINITY;
	}
}

size_t loadci_mw_rank(size_t m, size_t n, double alpha)
{
	double *c, total = 0, cum = 0, mean, sd;
	size_t i, u, deg = 0, k = 0, top = m * n;

	if (!m || !n)
		return 0;
	if (top > LOADCI_MW_EXACT) {
		/* the normal approximation with a continuity correction */
		mean = (double)top / 2;
		sd = sqrt((double)top * (double)(m + n + 1) / 12);
		u = (size_t)fmax(0, floor(mean - ALPHA_Z * sd - 0.5));
		return u + 1 > top ? top : u + 1;
	}
	if (!(c = mem_calloc(top + 1, sizeof(*c))))
		return 0;
	/* the counts of U: the coefficients of the Gaussian binomial [m + n, m]
	 * in q, built as the product over i of (1 - q^(n + i)) / (1 - q^i) */
	c[0] = 1;
	for (i = 1; i <= m; i++) {
		deg += n;
		for (u = deg; u >= n + i && u <= deg; u--)
			c[u] -= c[u - n - i];
		for (u = i; u <= deg; u++)
			c[u] += c[u - i];
	}
	for (u = 0; u <= top; u++)
		total += c[u];
	for (u = 0; u <= top; u++) {
		cum += c[u];
		if (cum / total > alpha * (1 + 1e-12))
			break;
		k = u + 1;
	}
	mem_free(c);
	return k;
}

/* How many independent rounds the n rounds y[0..n) (logs, in the order they
 * ran) count as: n (1 - r) / (1 + r), r their lag-1 autocorrelation less
 * ALPHA_Z / sqrt n (what chance gives independent rounds at the one-sided
 * 95% point), rounded, at least 3 (whose interval is bounded); n when r
 * is not above 0 (loadci.h). */
static size_t worth(const double *y, size_t n)
{
	double mean = 0, v = 0, c = 0, r, e;
	size_t i;

	if (n < 3)
		return n;
	for (i = 0; i < n; i++)
		mean += y[i];
	mean /= (double)n;
	for (i = 0; i < n; i++) {
		v += (y[i] - mean) * (y[i] - mean);
		if (i + 1 < n)
			c += (y[i] - mean) * (y[i + 1] - mean);
	}
	r = v > 0 && isfinite(v) ? c / v - ALPHA_Z / sqrt((double)n) : 0;
	if (!(r > 0))
		return n;
	e = floor((double)n * (1 - r) / (1 + r) + 0.5);
	return e < 3 ? 3 : (size_t)e;
}

/* The 90% interval of the shift between sorted differences D[0..mn) of m
 * and n values worth me and ne independent ones: [D(k), D(mn + 1 - k)], k
 * the rank for me and ne moved to the same quantile of the mn differences
 * (itself when they are m and n); infinite when they are too few. */
static void mw_interval(const double *D, size_t m, size_t n, size_t me, size_t ne, double *lo,
			double *hi)
{
	size_t k = loadci_mw_rank(me, ne, 0.05);

	if (k && (me < m || ne < n))
		k = (size_t)fmax(1, floor((double)k * (double)(m * n) / (double)(me * ne)));
	*lo = k ? D[k - 1] : -INFINITY;
	*hi = k ? D[m * n - k] : INFINITY;
}

/* The median of sorted x[0..n). */
static double median(const double *x, size_t n)
{
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* The pairwise differences y_b[j] - y_a[i], sorted, into a new array. */
static double *differences(const double *ya, size_t m, const double *yb, size_t n)
{
	double *D = mem_alloc(m * n * sizeof(*D));
	size_t i, j;

	if (!D)
		return NULL;
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++)
			D[i * n + j] = yb[j] - ya[i];
	stats_sort(D, m * n);
	return D;
}

int loadci_estimate(struct loadci_set *s, double pct, struct loadci_est *out)
{
	size_t r = s->rounds;
	double *y, *D = NULL, lo, hi, mean;
	int ok;

	memset(out, 0, sizeof(*out));
	if (!r || !(y = mem_alloc(r * sizeof(*y))))
		return 0;
	out->rounds = r;
	round_logs(s, pct, y, &out->zero);
	out->worth = out->zero ? r : worth(y, r);
	stats_sort(y, r);
	out->log = median(y, r);
	out->noise = LOADCI_NOISE_ROUNDS;
	out->half = out->sd = INFINITY;
	if (r >= 2 && !out->zero) {
		stats_moments(y, r, &mean, &out->sd);
		out->sd *= sqrt((double)r / (double)(r - 1)); /* the sample's */
	}
	ok = pct <= 0 || pool(s);
	if (ok && pct > 0)
		out->noise = noise_of(s, pct);
	if (ok && r >= 2 && !out->zero) {
		/* the run against itself: the interval a like run would give */
		ok = (D = differences(y, r, y, r)) != NULL;
		if (ok) {
			mw_interval(D, r, r, out->worth, out->worth, &lo, &hi);
			out->half = (hi - lo) / 2;
		}
	}
	mem_free(D);
	mem_free(y);
	return ok;
}

/* The upper LOADCI_SD_BOUND confidence bound of a standard deviation `sd`
 * estimated from `worth` independent rounds: sd sqrt(df / q), q the
 * chi-square quantile 1 - LOADCI_SD_BOUND with df = worth - 1 degrees of
 * freedom (Wilson and Hilferty's cube-root approximation: within 1% of
 * the exact quantile from 2 degrees of freedom on; a level that may stop
 * counts at least 3 independent rounds). */
static double sd_bound(double sd, size_t worth)
{
	double df = worth > 2 ? (double)(worth - 1) : 1, c = 2 / (9 * df);
	double q = df * pow(1 - c - SD_BOUND_Z * sqrt(c), 3);

	return q > 0 ? sd * sqrt(df / q) : INFINITY;
}

int loadci_settled(const struct loadci_est *e, double threshold)
{
	double k = (ALPHA_Z + POWER_Z) * sd_bound(e->sd, e->worth) / log(threshold);

	return e->rounds >= LOADCI_SETTLE_MIN && isfinite(e->sd) && isfinite(k) &&
	       (double)e->worth >= 2 * k * k;
}

/* The verdict from the shift d, its interval [lo, hi] (log units) and the
 * rule. */
static void decide(const struct loadci_rule *rule, double d, double lo, double hi, struct loadci_result *out)
{
	double lt = log(rule->threshold), hw = (hi - lo) / 2, room, arm;
	int beyond, within, small = out->a * fabs(rule->threshold - 1) <= rule->floor;

	out->lo = exp(lo);
	out->hi = exp(hi);
	out->mde = isfinite(hw) ? exp(hw) - 1 : INFINITY;
	beyond = rule->up_is_bad ? lo > lt : hi < lt;
	within = rule->up_is_bad ? hi < lt : lo > lt;
	/* the interval's arm from d towards T (the interval need not be
	 * symmetric about d) must shrink to the distance from d to T */
	room = fabs(lt - d);
	arm = lt > d ? hi - d : d - lo;
	out->more = isfinite(arm) && arm > 0 && room > 0 ? (arm / room) * (arm / room) : INFINITY;
	if (beyond && !out->one_round) {
		out->floored = fabs(out->b - out->a) <= rule->floor;
		out->verdict = out->floored ? LOADCI_PASS : LOADCI_FAIL;
	} else if (within && !out->one_round) {
		out->verdict = LOADCI_PASS;
	} else {
		/* a change of the threshold's size would be within the floor */
		out->floored = small;
		out->verdict = small ? LOADCI_PASS : LOADCI_UNDERPOWERED;
	}
}

int loadci_judge(struct loadci_set *a, struct loadci_set *b,
		 const struct loadci_rule *rule, struct loadci_result *out)
{
	struct loadci_est ea, eb;
	double *ya = NULL, *yb = NULL, *D = NULL, d, lo, hi;
	size_t m = a->rounds, n = b->rounds;
	int za, zb, ok = 0;

	memset(out, 0, sizeof(*out));
	if (!m || !n || !loadci_estimate(a, rule->pct, &ea) || !loadci_estimate(b, rule->pct, &eb) ||
	    !isfinite(ea.log) || ea.zero)
		return 0;
	out->a = exp(ea.log);
	out->b = exp(eb.log);
	out->noise = ea.half > eb.half ? ea.noise : eb.noise;
	out->one_round = m < 2 || n < 2;
	out->rounds_a = m, out->rounds_b = n;
	out->worth_a = ea.worth, out->worth_b = eb.worth;
	if (3 * ea.worth <= 2 * m || 3 * eb.worth <= 2 * n)
		out->noise = LOADCI_NOISE_PHASES;
	if (!(ya = mem_alloc(m * sizeof(*ya))) || !(yb = mem_alloc(n * sizeof(*yb))))
		goto out;
	round_logs(a, rule->pct, ya, &za);
	round_logs(b, rule->pct, yb, &zb);
	if (zb) {
		/* B collapsed to 0 in some round: judged as a point */
		out->ratio = out->b / out->a;
		d = lo = hi = log(out->ratio > 0 ? out->ratio : 1e-300);
		out->one_round = 0;
	} else {
		if (!(D = differences(ya, m, yb, n)))
			goto out;
		d = median(D, m * n);
		mw_interval(D, m, n, ea.worth, eb.worth, &lo, &hi);
		out->ratio = exp(d);
	}
	decide(rule, d, lo, hi, out);
	ok = 1;
out:
	mem_free(D);
	mem_free(ya);
	mem_free(yb);
	return ok;
}
