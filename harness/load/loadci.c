/*
 * loadci — non-inferiority verdicts on load figures; see loadci.h.
 */
#include "loadci.h"

#include <math.h>
#include <string.h>

#include "base/mem.h"
#include "base/stats.h"

#define POWER_Z 1.2815515655446004 /* the standard normal's LOADCI_POWER point */
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
	mem_free(s->tag);
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

double loadci_t95(double df)
{
	static const double t[] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860,
				   1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
				   1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711,
				   1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
	size_t k = df < 1 ? 1 : (size_t)df;

	if (k <= sizeof(t) / sizeof(t[0]))
		return t[k - 1];
	return k < 40 ? 1.697 : k < 60 ? 1.684 : k < 120 ? 1.671 : 1.658;
}

/* The pooled samples of every round, sorted, with their rounds: s->pool and
 * s->tag. 0 when out of memory. */
static int pool(struct loadci_set *s)
{
	size_t i, j, k, *at;

	if (s->n > s->cappool) {
		mem_free(s->pool);
		mem_free(s->tag);
		s->pool = mem_alloc(s->n * sizeof(*s->pool));
		s->tag = mem_alloc(s->n * sizeof(*s->tag));
		s->cappool = s->pool && s->tag ? s->n : 0;
		if (!s->cappool)
			return 0;
	}
	if (!(at = mem_alloc(s->rounds * sizeof(*at))))
		return 0;
	for (i = 0; i < s->rounds; i++)
		at[i] = s->start[i];
	/* a merge of the sorted rounds: the smallest head each time */
	for (k = 0; k < s->n; k++) {
		j = s->rounds;
		for (i = 0; i < s->rounds; i++)
			if (at[i] < s->start[i + 1] && (j == s->rounds || s->v[at[i]] < s->v[at[j]]))
				j = i;
		s->pool[k] = s->v[at[j]];
		s->tag[k] = j;
		at[j]++;
	}
	mem_free(at);
	return 1;
}

/* The linear percentile `pct` of the pooled samples without round `skip`
 * (s->rounds: none). */
static double pooled_pct(const struct loadci_set *s, double pct, size_t skip)
{
	size_t n = s->n - (skip < s->rounds ? s->start[skip + 1] - s->start[skip] : 0);
	size_t i, k, seen = 0;
	double h, lo = 0;

	if (!n)
		return 0;
	h = pct / 100.0 * (double)(n - 1);
	k = (size_t)floor(h);
	for (i = 0; i < s->n; i++) {
		if (s->tag[i] == skip)
			continue;
		if (seen == k)
			lo = s->pool[i];
		if (seen == k + 1)
			return lo + (h - (double)k) * (s->pool[i] - lo);
		seen++;
	}
	return lo;
}

/* The linear percentile of every other sample of sorted round r, from
 * `first` (0 or 1). */
static double half_pct(const struct loadci_set *s, size_t r, size_t first, double pct)
{
	const double *v = s->v + s->start[r];
	size_t n = s->start[r + 1] - s->start[r], m = (n - first + 1) / 2, k;
	double h;

	if (!m)
		return 0;
	h = pct / 100.0 * (double)(m - 1);
	k = (size_t)floor(h);
	if (k + 1 >= m)
		return v[first + 2 * (m - 1)];
	return v[first + 2 * k] + (h - (double)k) * (v[first + 2 * (k + 1)] - v[first + 2 * k]);
}

/* What dominates a per-request figure's noise: a slow mode under P, the
 * rounds' disagreement against what their halves say of their own sampling,
 * or that sampling. */
static enum loadci_noise noise_of(const struct loadci_set *s, double pct)
{
	double below = pooled_pct(s, pct - MODE_STEP, s->rounds), at = pooled_pct(s, pct, s->rounds);
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
		o = half_pct(s, i, 0, pct);
		e = half_pct(s, i, 1, pct);
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

int loadci_estimate(struct loadci_set *s, double pct, struct loadci_est *out)
{
	double sum = 0, ss = 0, x, *jk;
	size_t i, r = s->rounds;

	memset(out, 0, sizeof(*out));
	if (!r)
		return 0;
	out->rounds = r;
	out->df = (double)r - 1;
	out->noise = LOADCI_NOISE_ROUNDS;
	if (pct <= 0) {
		for (i = 0; i < r; i++) {
			x = s->v[s->start[i]];
			if (!(x > 0)) {
				out->zero = 1;
				x = 0;
			} else {
				x = log(x);
			}
			sum += x;
			ss += x * x;
		}
		out->log = out->zero ? -INFINITY : sum / (double)r;
		out->var = r < 2 ? INFINITY : fmax(0, ss - sum * sum / (double)r) / (double)(r - 1) / (double)r;
		return 1;
	}
	if (!pool(s))
		return 0;
	x = pooled_pct(s, pct, r);
	out->log = x > 0 ? log(x) : -INFINITY;
	out->noise = noise_of(s, pct);
	if (r < 2 || !(x > 0)) {
		out->var = INFINITY;
		return 1;
	}
	if (!(jk = mem_alloc(r * sizeof(*jk))))
		return 0;
	for (i = 0; i < r; i++) {
		x = pooled_pct(s, pct, i);
		jk[i] = x > 0 ? log(x) : out->log;
		sum += jk[i];
	}
	for (i = 0; i < r; i++)
		ss += (jk[i] - sum / (double)r) * (jk[i] - sum / (double)r);
	mem_free(jk);
	out->var = ss * (double)(r - 1) / (double)r;
	return 1;
}

int loadci_settled(const struct loadci_est *e, double threshold)
{
	return isfinite(e->var) &&
	       (loadci_t95(2 * e->df) + POWER_Z) * sqrt(2 * e->var) <= fabs(log(threshold));
}

/* The verdict from d and its half-width (log units) and the rule. */
static void decide(const struct loadci_rule *rule, double d, double hw, struct loadci_result *out)
{
	double lt = log(rule->threshold), room;
	int beyond, within, small = out->a * fabs(rule->threshold - 1) <= rule->floor;

	out->lo = exp(d - hw);
	out->hi = exp(d + hw);
	out->mde = isfinite(hw) ? exp(hw) - 1 : INFINITY;
	/* the side of T the interval is on */
	beyond = rule->up_is_bad ? d - hw > lt : d + hw < lt;
	within = rule->up_is_bad ? d + hw < lt : d - hw > lt;
	room = fabs(lt) - (rule->up_is_bad ? d : -d); /* from d to T, on the good side */
	out->more = isfinite(hw) && hw > 0 && room != 0 ? (hw / room) * (hw / room) : INFINITY;
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
	double se, df, hw, d;

	memset(out, 0, sizeof(*out));
	if (!loadci_estimate(a, rule->pct, &ea) || !loadci_estimate(b, rule->pct, &eb) ||
	    !isfinite(ea.log))
		return 0;
	out->a = exp(ea.log);
	out->b = exp(eb.log);
	out->ratio = out->b / out->a;
	out->noise = ea.var > eb.var ? ea.noise : eb.noise;
	out->one_round = ea.rounds < 2 || eb.rounds < 2;
	if (!isfinite(eb.log)) {
		/* B collapsed to 0 in some round: judged as a point */
		d = log(out->ratio > 0 ? out->ratio : 1e-300);
		hw = 0;
		out->one_round = 0;
	} else {
		d = eb.log - ea.log;
		se = sqrt(ea.var + eb.var);
		df = ea.var + eb.var > 0 && isfinite(se)
			     ? (ea.var + eb.var) * (ea.var + eb.var) /
				       (ea.var * ea.var / fmax(ea.df, 1) + eb.var * eb.var / fmax(eb.df, 1))
			     : ea.df + eb.df;
		hw = isfinite(se) ? loadci_t95(df) * se : INFINITY;
	}
	decide(rule, d, hw, out);
	return 1;
}
