/*
 * loadci — noise-aware verdicts on load figures; see loadci.h.
 */
#include "loadci.h"

#include <math.h>
#include <string.h>

#include "base/mem.h"
#include "base/stats.h"
#include "generators/prng.h"

#define ROUNDS_MAX 1024 /* rounds of one run a verdict takes (loadspec: 1000) */

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

uint64_t loadci_seed(const char *text)
{
	uint64_t h = 14695981039346656037u;

	for (; *text; text++)
		h = (h ^ (unsigned char)*text) * 1099511628211u;
	return h;
}

/* Round i's figure: its percentile, or its one value. */
static double round_fig(const struct loadci_set *s, size_t i, double pct)
{
	const double *v = s->v + s->start[i];
	size_t n = s->start[i + 1] - s->start[i];

	return pct > 0 ? stats_nearest_rank(v, n, pct) : v[0];
}

/* The median over rounds of the round figures (the cell's figure). */
static double point(const struct loadci_set *s, double pct, double *scratch)
{
	size_t i;

	for (i = 0; i < s->rounds; i++)
		scratch[i] = round_fig(s, i, pct);
	stats_sort(scratch, s->rounds);
	return stats_nearest_rank(scratch, s->rounds, 50);
}

/* A uniform double in (0, 1). */
static double uniform(struct prng *p)
{
	return ((double)(prng_next(p) >> 11) + 0.5) / 9007199254740992.0;
}

/* Gamma(alpha, 1) for alpha >= 1 (Marsaglia and Tsang, "A simple method for
 * generating gamma variables", 2000), its normals by Box-Muller. */
static double gamma_draw(struct prng *p, double alpha)
{
	double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d), x, v, u;

	for (;;) {
		x = sqrt(-2.0 * log(uniform(p))) * cos(6.283185307179586 * uniform(p));
		v = 1.0 + c * x;
		if (v <= 0)
			continue;
		v = v * v * v;
		u = uniform(p);
		if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
			return d * v;
	}
}

/* The nearest-rank percentile of a resample (with replacement) of sorted
 * v[0..n): its rank-k order statistic, x[floor(n * Beta(k, n + 1 - k))]. */
static double resampled_pct(struct prng *p, const double *v, size_t n, double pct)
{
	double k = ceil(pct / 100.0 * (double)n), x, y;
	size_t i;

	if (k < 1)
		k = 1;
	x = gamma_draw(p, k);
	y = gamma_draw(p, (double)n + 1.0 - k);
	i = (size_t)((double)n * (x / (x + y)));
	return v[i < n ? i : n - 1];
}

/* One bootstrap draw of a run's figure: rounds, then requests. */
static double resampled(struct prng *p, const struct loadci_set *s, double pct, double *scratch)
{
	size_t i, r;

	for (i = 0; i < s->rounds; i++) {
		r = (size_t)prng_below(p, s->rounds);
		scratch[i] = resampled_pct(p, s->v + s->start[r], s->start[r + 1] - s->start[r], pct);
	}
	stats_sort(scratch, s->rounds);
	return stats_nearest_rank(scratch, s->rounds, 50);
}

/* The bootstrap interval of log(B/A) into lo, hi. */
static void bootstrap(const struct loadci_set *a, const struct loadci_set *b,
		      const struct loadci_rule *rule, double *lo, double *hi)
{
	double lr[LOADCI_RESAMPLES], scratch[ROUNDS_MAX], fa, fb;
	struct prng p;
	size_t i, m = 0;

	prng_init(&p, rule->seed, 0);
	for (i = 0; i < LOADCI_RESAMPLES; i++) {
		fa = resampled(&p, a, rule->pct, scratch);
		fb = resampled(&p, b, rule->pct, scratch);
		if (fa > 0 && fb > 0)
			lr[m++] = log(fb / fa);
	}
	stats_sort(lr, m);
	*lo = m ? stats_nearest_rank(lr, m, 2.5) : -INFINITY;
	*hi = m ? stats_nearest_rank(lr, m, 97.5) : INFINITY;
}

/* The 97.5% point of Student's t with `df` degrees of freedom (rounded down:
 * the wider interval). */
static double t975(double df)
{
	static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				   2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
				   2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
				   2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
				   2.045, 2.042};
	size_t k = df < 1 ? 1 : (size_t)df;

	if (k <= sizeof(t) / sizeof(t[0]))
		return t[k - 1];
	return k <= 60 ? 2.000 : k <= 120 ? 1.980 : 1.960;
}

/* Mean and variance of the mean of a run's log round values. */
static void log_moments(const struct loadci_set *s, double *mean, double *var_mean)
{
	double sum = 0, ss = 0, x;
	size_t i;

	for (i = 0; i < s->rounds; i++)
		sum += log(s->v[s->start[i]]);
	*mean = sum / (double)s->rounds;
	for (i = 0; i < s->rounds; i++) {
		x = log(s->v[s->start[i]]) - *mean;
		ss += x * x;
	}
	*var_mean = ss / (double)(s->rounds - 1) / (double)s->rounds;
}

/* Welch's interval of log(B/A) over per-round values (all above 0). */
static void welch(const struct loadci_set *a, const struct loadci_set *b, double *lo, double *hi)
{
	double ma, va, mb, vb, se, df, na = (double)a->rounds, nb = (double)b->rounds;

	log_moments(a, &ma, &va);
	log_moments(b, &mb, &vb);
	se = sqrt(va + vb);
	df = se > 0 ? (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1)) : na + nb - 2;
	*lo = mb - ma - t975(df) * se;
	*hi = mb - ma + t975(df) * se;
}

/* Whether every per-round value of `s` is above 0 (logs are taken). */
static int all_positive(const struct loadci_set *s)
{
	size_t i;

	for (i = 0; i < s->rounds; i++)
		if (!(s->v[s->start[i]] > 0))
			return 0;
	return 1;
}

/* The verdict from the point, the interval (log units) and the rule. */
static void decide(const struct loadci_rule *rule, double llo, double lhi, struct loadci_result *out)
{
	double margin = fabs(log(rule->threshold)), hw = (lhi - llo) / 2;
	int crosses = rule->up_is_bad ? out->ratio > rule->threshold : out->ratio < rule->threshold;
	int excludes = rule->up_is_bad ? llo > 0 : lhi < 0;

	out->lo = exp(llo);
	out->hi = exp(lhi);
	out->mde = isfinite(hw) ? exp(hw) - 1 : INFINITY;
	out->more = margin > 0 && isfinite(hw) ? (hw / margin) * (hw / margin) : INFINITY;
	out->floored = crosses && fabs(out->b - out->a) <= rule->floor;
	if (crosses && excludes && !out->floored && !out->one_round)
		out->verdict = LOADCI_FAIL;
	else if (out->a * fabs(rule->threshold - 1) > rule->floor && (out->one_round || hw > margin))
		out->verdict = LOADCI_UNDERPOWERED;
	else
		out->verdict = LOADCI_PASS;
}

int loadci_judge(const struct loadci_set *a, const struct loadci_set *b,
		 const struct loadci_rule *rule, struct loadci_result *out)
{
	double scratch[ROUNDS_MAX], llo, lhi;

	memset(out, 0, sizeof(*out));
	if (!a->rounds || !b->rounds || a->rounds > ROUNDS_MAX || b->rounds > ROUNDS_MAX)
		return 0;
	out->a = point(a, rule->pct, scratch);
	out->b = point(b, rule->pct, scratch);
	if (!(out->a > 0))
		return 0;
	out->ratio = out->b / out->a;
	if (rule->pct > 0) {
		bootstrap(a, b, rule, &llo, &lhi);
	} else if (a->rounds < 2 || b->rounds < 2 || !all_positive(a) || !all_positive(b)) {
		out->one_round = a->rounds < 2 || b->rounds < 2;
		llo = out->ratio > 0 ? log(out->ratio) : -INFINITY;
		lhi = out->one_round ? INFINITY : llo;
		llo = out->one_round ? -INFINITY : llo;
	} else {
		welch(a, b, &llo, &lhi);
	}
	decide(rule, llo, lhi, out);
	return 1;
}
