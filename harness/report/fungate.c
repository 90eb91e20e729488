/*
 * fungate — the functional gates against sampling noise; see fungate.h.
 */
#include "fungate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "base/mem.h"
#include "base/stats.h"
#include "keys.h"
#include "run/record.h"

double fungate_case_p(long ka, long kb, long n, double a, double b)
{
	return stats_betabinom_cdf(kb, n, a + (double)ka, b + (double)(n - ka));
}

long fungate_case_repeats(long ka, long kb, long n, double a, double b, size_t family)
{
	long m, sa, sb;

	if (n <= 0 || kb >= ka)
		return 0;
	for (m = n + 1; m <= FUNGATE_REPEATS_MAX; m++) {
		sa = lround((double)ka * (double)m / (double)n);
		sb = lround((double)kb * (double)m / (double)n);
		if (fungate_case_p(sa, sb, m, a, b) * (double)family < FUNGATE_CASE_ALPHA)
			return m;
	}
	return 0;
}

/* Appends printf text to out[cap] (cut silently when full). */
__attribute__((format(printf, 3, 4)))
static void say(char *out, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(out);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	if (vsnprintf(out + n, cap - n, fmt, ap) < 0)
		out[n] = '\0';
	va_end(ap);
}

/* The sampled cases of a comparison and their judgement. */
struct sampled {
	size_t n;          /* cases with samples */
	size_t *at;        /* owned: res->cases index of each */
	long *ka, *kb, *tot;
	double *p, *adj;
	double a, b;       /* the prior */
	long KA, KB, N;    /* pooled */
	double pooled;
};

static void sampled_free(struct sampled *s)
{
	mem_free(s->at);
	mem_free(s->ka);
	mem_free(s->kb);
	mem_free(s->tot);
	mem_free(s->p);
	mem_free(s->adj);
}

/* The sampled cases of res, with their p-values. ERR_NOMEM. */
static enum err sampled_of(const struct diff_result *res, struct sampled *s)
{
	size_t i, c = res->ncases ? res->ncases : 1;

	memset(s, 0, sizeof(*s));
	s->pooled = 1;
	if (!(s->at = mem_alloc(c * sizeof(*s->at))) || !(s->ka = mem_alloc(c * sizeof(long))) ||
	    !(s->kb = mem_alloc(c * sizeof(long))) || !(s->tot = mem_alloc(c * sizeof(long))) ||
	    !(s->p = mem_alloc(c * sizeof(double))) || !(s->adj = mem_alloc(c * sizeof(double))))
		return ERR_NOMEM;
	for (i = 0; i < res->ncases; i++) {
		const struct diff_case *dc = &res->cases[i];
		if (!dc->s_total)
			continue;
		s->at[s->n] = i;
		s->ka[s->n] = (long)dc->s_a_pass;
		s->kb[s->n] = (long)dc->s_b_pass;
		s->tot[s->n] = (long)dc->s_total;
		s->KA += s->ka[s->n];
		s->KB += s->kb[s->n];
		s->N += s->tot[s->n];
		s->n++;
	}
	if (!s->n)
		return ERR_OK;
	stats_beta_fit(s->ka, s->tot, s->n, FUNGATE_PRIOR_FLOOR, &s->a, &s->b);
	for (i = 0; i < s->n; i++)
		s->p[i] = fungate_case_p(s->ka[i], s->kb[i], s->tot[i], s->a, s->b);
	s->pooled = stats_fisher_midp_less(s->KB, s->N, s->KA, s->N);
	return stats_holm(s->p, s->n, s->adj);
}

static enum gate_verdict case_verdict(const struct sampled *s, size_t i)
{
	return s->adj[i] < FUNGATE_CASE_ALPHA ? GATE_FAIL
	       : s->p[i] < FUNGATE_SUSPECT ? GATE_UNDERPOWERED : GATE_PASS;
}

#define LISTED 8 /* cases named in the detail; all are in "cases" */

/* The cases that did not pass, into out->cases and the detail. */
static void list_cases(const struct diff_result *res, const struct sampled *s,
		       struct json_build *jb, struct fungate_out *out, size_t *nfail, size_t *nweak)
{
	size_t i, listed = 0;
	enum gate_verdict cv;
	long m;
	cJSON *o;

	for (i = 0; i < s->n; i++) {
		if ((cv = case_verdict(s, i)) == GATE_PASS)
			continue;
		*(cv == GATE_FAIL ? nfail : nweak) += 1;
		m = cv == GATE_UNDERPOWERED
			? fungate_case_repeats(s->ka[i], s->kb[i], s->tot[i], s->a, s->b, s->n) : 0;
		if (!out->cases)
			out->cases = json_new_arr(jb);
		o = json_add_obj(jb, out->cases, NULL);
		json_add_str(jb, o, RK_CASE, res->b.cases.c[res->cases[s->at[i]].b_case].id);
		json_add_str(jb, o, DK_VERDICT, gate_verdict_name(cv));
		json_add_num(jb, o, SK_N, (double)s->tot[i]);
		json_add_num(jb, o, DK_A_PASS, (double)s->ka[i]);
		json_add_num(jb, o, DK_B_PASS, (double)s->kb[i]);
		json_add_num(jb, o, DK_P, s->p[i]);
		json_add_num(jb, o, DK_P_HOLM, s->adj[i]);
		json_add_item(jb, o, DK_REPEATS, cv != GATE_UNDERPOWERED ? cJSON_CreateNull()
					       : m ? cJSON_CreateNumber((double)m) : cJSON_CreateNull());
		if (listed++ >= LISTED)
			continue;
		say(out->why, sizeof(out->why), "; %s %s: A %ld/%ld, B %ld/%ld, p %.2g (Holm %.2g)",
		    cv == GATE_FAIL ? "FAIL" : "underpowered",
		    res->b.cases.c[res->cases[s->at[i]].b_case].id, s->ka[i], s->tot[i], s->kb[i],
		    s->tot[i], s->p[i], s->adj[i]);
		if (cv == GATE_UNDERPOWERED && m)
			say(out->why, sizeof(out->why), ", about %ld repeats of it in each run would settle it (now %ld)",
			    m, s->tot[i]);
		else if (cv == GATE_UNDERPOWERED)
			say(out->why, sizeof(out->why), ", %d repeats would not settle it: a difference this "
			    "small is within sampling", FUNGATE_REPEATS_MAX);
	}
	if (listed > LISTED)
		say(out->why, sizeof(out->why), "; %zu more in \"cases\"", listed - LISTED);
}

/* The repeats a case at which the pooled counts, in the same proportions,
 * would fail the pooled test; 0 when none up to FUNGATE_REPEATS_MAX. */
static long pooled_repeats(const struct sampled *s)
{
	double per = (double)s->N / (double)s->n, f;
	long r;

	for (r = (long)ceil(per) + 1; r <= FUNGATE_REPEATS_MAX; r++) {
		f = (double)r / per;
		if (stats_fisher_midp_less(lround(s->KB * f), lround(s->N * f), lround(s->KA * f),
					   lround(s->N * f)) < FUNGATE_POOL_ALPHA)
			return r;
	}
	return 0;
}

static enum err no_new_failures(const struct diff_result *res, struct fungate_out *out,
				struct diag *d)
{
	const cJSON *diff = res->diff, *f;
	double onlyb = jget_num(jget(diff, DK_OVERALL), DK_ONLY_B_FAILED);
	size_t hard = 0, soft = 0, nfail = 0, nweak = 0;
	struct json_build jb;
	struct sampled s;
	enum err e;

	cJSON_ArrayForEach(f, jget2(diff, DK_FLIPS, DK_PASS_TO_FAIL)) {
		if (cJSON_IsTrue(jget(f, DK_SAMPLED)))
			soft++;
		else
			hard++;
	}
	snprintf(out->why, sizeof(out->why),
		 "%zu pass->fail flips not explained by sampling (transport, usage audit, temperature 0 "
		 "or unset), %.0f failed attempts only in B", hard, onlyb);
	out->v = hard || onlyb > 0 ? GATE_FAIL : GATE_PASS;
	out->value = (double)hard + onlyb;
	if ((e = sampled_of(res, &s))) {
		sampled_free(&s);
		return diag_fail(d, e, "out of memory judging the sampled cases");
	}
	if (!s.n) {
		sampled_free(&s);
		say(out->why, sizeof(out->why), "; no sampled attempt (temperature > 0)");
		return ERR_OK;
	}
	json_build_init(&jb);
	say(out->why, sizeof(out->why),
	    "; sampled (temperature > 0): %zu cases, %ld matched attempts, A %ld/%ld, B %ld/%ld, %zu "
	    "pass->fail; pooled one-sided mid-p %.2g (fails below %g)", s.n, s.N, s.KA, s.N, s.KB, s.N, soft,
	    s.pooled, FUNGATE_POOL_ALPHA);
	list_cases(res, &s, &jb, out, &nfail, &nweak);
	say(out->why, sizeof(out->why), "; per case (Holm over %zu, fails below %g; underpowered below "
	    "p %g): %zu within sampling, %zu underpowered, %zu failed", s.n, FUNGATE_CASE_ALPHA,
	    FUNGATE_SUSPECT, s.n - nfail - nweak, nweak, nfail);
	if (nfail || s.pooled < FUNGATE_POOL_ALPHA) {
		out->v = GATE_FAIL;
		out->value += (double)soft;
	} else if (out->v == GATE_PASS && (nweak || s.pooled < FUNGATE_SUSPECT)) {
		long r = s.pooled < FUNGATE_SUSPECT ? pooled_repeats(&s) : 0;
		out->v = GATE_UNDERPOWERED;
		if (r)
			say(out->why, sizeof(out->why), "; pooled: about %ld repeats a case would settle it", r);
	}
	sampled_free(&s);
	return json_build_end(&jb, out->cases ? &out->cases : NULL, "a gate's cases", d);
}

/* The delta gates: D against X with the sampled part's variance. */
struct delta {
	double D, sd;       /* the observed delta and its standard error */
	double per;         /* sampled attempts a case (repeats), or 0 */
};

/* Agresti-Caffo variance of kb/nb - ka/na. */
static double ac_var(double ka, double na, double kb, double nb)
{
	double pa = (ka + 1) / (na + 2), pb = (kb + 1) / (nb + 2);

	return pa * (1 - pa) / (na + 2) + pb * (1 - pb) / (nb + 2);
}

/* pass_rate_delta's D over the matched attempts; 0 without samples. */
static int pass_delta(const struct diff_result *res, struct delta *x)
{
	double n = 0, a = 0, b = 0, ns = 0, sa = 0, sb = 0, cases = 0;
	size_t i;

	for (i = 0; i < res->ncases; i++) {
		const struct diff_case *c = &res->cases[i];
		n += (double)c->total, a += (double)c->a_pass, b += (double)c->b_pass;
		ns += (double)c->s_total, sa += (double)c->s_a_pass, sb += (double)c->s_b_pass;
		cases += c->s_total > 0;
	}
	if (ns <= 0 || n <= 0)
		return 0;
	x->D = (b - a) / n;
	x->sd = ns / n * sqrt(ac_var(sa, ns, sb, ns));
	x->per = ns / cases;
	return 1;
}

/* recall_delta@DEPTH's D; 0 unless every recall attempt is a sample. */
static int recall_delta(const struct diff_result *res, const char *arg, struct delta *x)
{
	const cJSON *it, *a, *b;
	double dep = strtod(arg, NULL);

	if (!cJSON_IsTrue(jget2(res->diff, DK_OVERALL, DK_RECALL_SAMPLED)))
		return 0;
	if (!*arg) { /* every needle */
		double ka = 0, na = 0, kb = 0, nb = 0;
		cJSON_ArrayForEach(it, jget(res->diff, DK_RECALL_BY_DEPTH)) {
			a = jget(it, DK_A), b = jget(it, DK_B);
			ka += jget_num(a, SK_PASS), na += jget_num(a, SK_TOTAL);
			kb += jget_num(b, SK_PASS), nb += jget_num(b, SK_TOTAL);
		}
		if (na <= 0 || nb <= 0)
			return 0;
		x->D = kb / nb - ka / na;
		x->sd = sqrt(ac_var(ka, na, kb, nb));
		x->per = 0;
		return 1;
	}
	cJSON_ArrayForEach(it, jget(res->diff, DK_RECALL_BY_DEPTH)) {
		if (jget_num(it, SK_DEPTH) != dep)
			continue;
		a = jget(it, DK_A), b = jget(it, DK_B);
		if (!cJSON_IsNumber(jget(a, SK_RATE)) || !cJSON_IsNumber(jget(b, SK_RATE)))
			return 0;
		x->D = jget_num(b, SK_RATE) - jget_num(a, SK_RATE);
		x->sd = sqrt(ac_var(jget_num(a, SK_PASS), jget_num(a, SK_TOTAL), jget_num(b, SK_PASS),
				    jget_num(b, SK_TOTAL)));
		x->per = 0;
		return 1;
	}
	return 0;
}

static int delta_of(const struct diff_result *res, const struct gate *g, struct delta *x)
{
	if (g->op == GATE_EQ)
		return 0;
	if (!strcmp(g->name, "pass_rate_delta"))
		return pass_delta(res, x);
	if (!strcmp(g->name, "recall_delta"))
		return recall_delta(res, g->arg, x);
	return 0;
}

int fungate_judges(const struct diff_result *res, const struct gate *g)
{
	struct delta x;

	return !strcmp(g->name, "no_new_failures") || delta_of(res, g, &x);
}

/* P(a delta this far on the wrong side | the true delta is the threshold)
 * at `scale` times the samples. */
static double delta_p(const struct delta *x, const struct gate *g, double scale)
{
	double z = (x->D - g->value) / (x->sd / sqrt(scale));

	return g->op == GATE_GE || g->op == GATE_GT ? stats_norm_cdf(z) : stats_norm_cdf(-z);
}

static void delta_gate(const struct gate *g, const struct delta *x, struct fungate_out *out)
{
	double p = delta_p(x, g, 1), f;

	out->value = x->D;
	out->v = p < FUNGATE_POOL_ALPHA ? GATE_FAIL : p < FUNGATE_SUSPECT ? GATE_UNDERPOWERED : GATE_PASS;
	snprintf(out->why, sizeof(out->why),
		 "value %.6g, sampled (temperature > 0): standard error %.3g, one-sided p %.2g that the "
		 "delta is %g or better (fails below %g, underpowered below %g)", x->D, x->sd, p, g->value,
		 FUNGATE_POOL_ALPHA, FUNGATE_SUSPECT);
	if (out->v != GATE_UNDERPOWERED)
		return;
	for (f = 2; f * (x->per > 0 ? x->per : 1) <= FUNGATE_REPEATS_MAX; f++)
		if (delta_p(x, g, f) < FUNGATE_POOL_ALPHA)
			break;
	if (f * (x->per > 0 ? x->per : 1) > FUNGATE_REPEATS_MAX)
		say(out->why, sizeof(out->why), "; sampling cannot settle it within %d repeats a case",
		    FUNGATE_REPEATS_MAX);
	else if (x->per > 0)
		say(out->why, sizeof(out->why), "; about %.0f repeats a case would settle it (now %.3g)",
		    ceil(f * x->per), x->per);
	else
		say(out->why, sizeof(out->why), "; about %.0f times the attempts would settle it", f);
}

enum err fungate_eval(const struct diff_result *res, const struct gate *g,
		      struct fungate_out *out, struct diag *d)
{
	struct delta x;

	memset(out, 0, sizeof(*out));
	if (!strcmp(g->name, "no_new_failures"))
		return no_new_failures(res, out, d);
	if (delta_of(res, g, &x))
		delta_gate(g, &x, out);
	return ERR_OK;
}
