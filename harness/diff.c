/*
 * diff — see diff.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "mem.h"
#include "record.h"
#include "results.h"

#define KEY_MAX 1024

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const cJSON *get2(const cJSON *o, const char *a, const char *b)
{
	return get(get(o, a), b);
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* ---- gates ---- */

static const char *const timings[] = {"first_byte", "ttft", "ttfc", "e2e", "tpot"};

/* Whether `name` is a timing gate "T_pP" or "T_pP_ratio". */
static int timing_gate(const char *name, char *timing, size_t cap, int *pct,
		       int *ratio)
{
	size_t i, n;

	for (i = 0; i < sizeof(timings) / sizeof(timings[0]); i++) {
		n = strlen(timings[i]);
		if (strncmp(name, timings[i], n) || strncmp(name + n, "_p", 2))
			continue;
		name += n + 2;
		if (!strncmp(name, "50", 2) || !strncmp(name, "90", 2) || !strncmp(name, "99", 2)) {
			*pct = (name[0] - '0') * 10 + (name[1] - '0');
			*ratio = !strcmp(name + 2, "_ratio");
			if (name[2] && !*ratio)
				return 0;
			snprintf(timing, cap, "%s_ms", timings[i]);
			return 1;
		}
		return 0;
	}
	return 0;
}

/* 0: no @ARG allowed; 1: required; 2: optional. -1: unknown metric. */
static int arg_rule(const char *name)
{
	static const char *const plain[] = {"pass_rate_delta", "flips", "max_abs_usage_delta"};
	char t[32];
	int p, r;
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(name, plain[i]))
			return 0;
	if (!strcmp(name, "pass_rate") || !strcmp(name, "recall"))
		return 2;
	if (!strcmp(name, "recall_delta"))
		return 1;
	return timing_gate(name, t, sizeof(t), &p, &r) ? 0 : -1;
}

static enum err parse_op(const char *s, enum diff_op *op, size_t *len)
{
	static const struct { const char *t; enum diff_op op; } ops[] = {
		{">=", DIFF_GE}, {"<=", DIFF_LE}, {"==", DIFF_EQ}, {">", DIFF_GT}, {"<", DIFF_LT}};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(s, ops[i].t, strlen(ops[i].t))) {
			*op = ops[i].op;
			*len = strlen(ops[i].t);
			return ERR_OK;
		}
	return ERR_USAGE;
}

enum err diff_gate_parse(const char *spec, struct diff_gate *g, struct diag *d)
{
	size_t mlen = strcspn(spec, "<>="), oplen = 0, nlen;
	const char *at, *numtxt;
	char *end;
	int rule;

	memset(g, 0, sizeof(*g));
	g->spec = spec;
	if (!strcmp(spec, "no_new_failures")) {
		snprintf(g->name, sizeof(g->name), "%s", spec);
		return ERR_OK;
	}
	if (!spec[mlen] || parse_op(spec + mlen, &g->op, &oplen))
		return diag_fail(d, ERR_USAGE,
				 "gate '%s' wants METRIC OP NUMBER with OP one of >= <= > < == (or 'no_new_failures')",
				 spec);
	at = memchr(spec, '@', mlen);
	nlen = at ? (size_t)(at - spec) : mlen;
	if (nlen == 0 || nlen >= sizeof(g->name))
		return diag_fail(d, ERR_USAGE, "gate '%s' has no metric name", spec);
	memcpy(g->name, spec, nlen);
	if (at) {
		size_t alen = mlen - nlen - 1;
		if (alen == 0 || alen >= sizeof(g->arg))
			return diag_fail(d, ERR_USAGE, "gate '%s': the text after '@' is empty or too long", spec);
		memcpy(g->arg, at + 1, alen);
	}
	rule = arg_rule(g->name);
	if (rule < 0)
		return diag_fail(d, ERR_USAGE,
				 "gate '%s': unknown metric '%s' (see 'needle diff --help')", spec, g->name);
	if (rule == 0 && at)
		return diag_fail(d, ERR_USAGE, "gate '%s': metric '%s' takes no '@'", spec, g->name);
	if (rule == 1 && !at)
		return diag_fail(d, ERR_USAGE, "gate '%s': metric '%s' wants '@DEPTH'", spec, g->name);
	if (at && strncmp(g->name, "pass_rate", 10)) {
		long v = strtol(g->arg, &end, 10);
		if (*end || v < 0 || v > 100)
			return diag_fail(d, ERR_USAGE, "gate '%s': depth '%s' is not a whole percent 0..100",
					 spec, g->arg);
	}
	numtxt = spec + mlen + oplen;
	g->value = strtod(numtxt, &end);
	if (!*numtxt || *end || !isfinite(g->value))
		return diag_fail(d, ERR_USAGE, "gate '%s': '%s' is not a number", spec, numtxt);
	return ERR_OK;
}

/* ---- matching ---- */

struct keyed {
	char *key;          /* owned */
	const cJSON *rec;
	size_t idx; /* position in the journal: equal keys keep file order */
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void key_of(const cJSON *rec, char *out, size_t cap)
{
	const cJSON *seed = get(rec, "seed");

	record_key(get(rec, "case")->valuestring, (long)num(rec, "repeat"),
		    cJSON_IsNumber(seed), cJSON_IsNumber(seed) ? (long)seed->valuedouble : 0,
		    out, cap);
}

static void index_free(struct keyed *k, size_t n)
{
	size_t i;

	for (i = 0; k && i < n; i++)
		mem_free(k[i].key);
	mem_free(k);
}

/* The records of `recs`, keyed and sorted (equal keys in file order); NULL
 * when out of memory. Free with index_free. */
static struct keyed *index_of(const cJSON *recs, size_t *n)
{
	size_t cap = (size_t)cJSON_GetArraySize(recs), i = 0;
	struct keyed *k = mem_calloc(cap ? cap : 1, sizeof(*k));
	char key[KEY_MAX];
	const cJSON *r;

	*n = 0;
	if (!k)
		return NULL;
	cJSON_ArrayForEach(r, recs) {
		key_of(r, key, sizeof(key));
		if (!(k[i].key = mem_strndup(key, strlen(key)))) {
			index_free(k, i);
			return NULL;
		}
		k[i].idx = i;
		k[i++].rec = r;
	}
	qsort(k, i, sizeof(*k), cmp_keyed);
	*n = i;
	return k;
}

static const cJSON *find(const struct keyed *k, size_t n, const char *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(k[mid].key, key);
		if (c == 0) {
			while (mid > 0 && !strcmp(k[mid - 1].key, key))
				mid--; /* the first recorded wins, as on --resume */
			return k[mid].rec;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int passed(const cJSON *rec)
{
	return !strcmp(get(rec, "verdict")->valuestring, "pass");
}

static cJSON *attempt_ref(const cJSON *rec, const cJSON *why_from)
{
	cJSON *o = cJSON_CreateObject();
	const cJSON *r;

	cJSON_AddStringToObject(o, "case", get(rec, "case")->valuestring);
	cJSON_AddNumberToObject(o, "repeat", num(rec, "repeat"));
	cJSON_AddItemToObject(o, "seed", cJSON_Duplicate(get(rec, "seed"), 0));
	if (why_from) {
		cJSON_AddItemToObject(o, "failures", cJSON_Duplicate(get2(why_from, "transport", "failures"), 1));
		r = cJSON_GetArrayItem(get2(why_from, "grade", "reasons"), 0);
		if (cJSON_IsString(r)) {
			cJSON_AddStringToObject(o, "reason", r->valuestring);
		} else if (cJSON_IsFalse(get2(why_from, "audit", "ok"))) {
			char msg[128];
			snprintf(msg, sizeof(msg), "usage audit: usage_delta %.0f, tolerance %.0f",
				 num(get(why_from, "audit"), "usage_delta"),
				 num(get(why_from, "audit"), "tolerance"));
			cJSON_AddStringToObject(o, "reason", msg);
		} else {
			cJSON_AddNullToObject(o, "reason");
		}
	}
	return o;
}

/* Per-case counts over matched attempts: cases[i] = {id, a_pass, b_pass, total}. */
static void case_tally(cJSON *cases, const char *id, int pa, int pb)
{
	cJSON *c;

	cJSON_ArrayForEach(c, cases)
		if (!strcmp(get(c, "id")->valuestring, id))
			break;
	if (!c) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "id", id);
		cJSON_AddNumberToObject(c, "total", 0);
		cJSON_AddNumberToObject(c, "a_pass", 0);
		cJSON_AddNumberToObject(c, "b_pass", 0);
		cJSON_AddItemToArray(cases, c);
	}
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "total"), num(c, "total") + 1);
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "a_pass"), num(c, "a_pass") + pa);
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "b_pass"), num(c, "b_pass") + pb);
}

static void usage_change(cJSON *arr, const cJSON *ra, const cJSON *rb)
{
	const cJSON *da = get2(ra, "audit", "usage_delta"), *db = get2(rb, "audit", "usage_delta");
	cJSON *o;

	if (cJSON_IsNumber(da) && cJSON_IsNumber(db) && da->valuedouble == db->valuedouble)
		return;
	if (!cJSON_IsNumber(da) && !cJSON_IsNumber(db))
		return;
	o = attempt_ref(rb, NULL);
	cJSON_AddItemToObject(o, "a", cJSON_IsNumber(da) ? cJSON_Duplicate(da, 0) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "b", cJSON_IsNumber(db) ? cJSON_Duplicate(db, 0) : cJSON_CreateNull());
	cJSON_AddItemToArray(arr, o);
}

struct match {
	size_t matched, a_pass, b_pass, only_a, only_b, only_b_failed;
	size_t prompt_differs; /* matched recall attempts whose documents differ */
};

/* Whether two matched recall attempts were sent different documents. */
static int prompt_differs(const cJSON *ra, const cJSON *rb)
{
	const cJSON *pa = get2(ra, "recall", "prompt_sha256"), *pb = get2(rb, "recall", "prompt_sha256");

	return cJSON_IsString(pa) && cJSON_IsString(pb) && strcmp(pa->valuestring, pb->valuestring);
}

/* Walks B's attempts against A's index; fills flips, cases, usage changes. */
static void match_runs(const struct keyed *ka, size_t na, const struct keyed *kb,
		       size_t nb, cJSON *diff, struct match *m)
{
	cJSON *flips = cJSON_AddObjectToObject(diff, "flips");
	cJSON *pf = cJSON_AddArrayToObject(flips, "pass_to_fail");
	cJSON *fp = cJSON_AddArrayToObject(flips, "fail_to_pass");
	cJSON *cases = cJSON_AddArrayToObject(diff, "cases");
	cJSON *usage = cJSON_AddArrayToObject(diff, "usage_changes");
	cJSON *onlyb = cJSON_AddArrayToObject(diff, "only_b_failed");
	size_t i;

	for (i = 0; i < nb; i++) {
		const cJSON *ra, *rb = kb[i].rec;
		int pa, pb;
		if (i && !strcmp(kb[i].key, kb[i - 1].key))
			continue;
		if (!(ra = find(ka, na, kb[i].key))) {
			m->only_b++;
			if (!passed(rb)) {
				m->only_b_failed++;
				cJSON_AddItemToArray(onlyb, attempt_ref(rb, rb));
			}
			continue;
		}
		pa = passed(ra);
		pb = passed(rb);
		m->matched++;
		m->a_pass += pa;
		m->b_pass += pb;
		if (pa && !pb)
			cJSON_AddItemToArray(pf, attempt_ref(rb, rb));
		else if (!pa && pb)
			cJSON_AddItemToArray(fp, attempt_ref(rb, NULL));
		case_tally(cases, get(rb, "case")->valuestring, pa, pb);
		usage_change(usage, ra, rb);
		m->prompt_differs += prompt_differs(ra, rb);
	}
	for (i = 0; i < na; i++)
		if (!(i && !strcmp(ka[i].key, ka[i - 1].key)) && !find(kb, nb, ka[i].key))
			m->only_a++;
}

/* ---- the comparison ---- */

static void warn_if_differs(cJSON *warn, const cJSON *sa, const cJSON *sb,
			    const char *key, const char *what)
{
	const cJSON *a = get2(sa, "run", key), *b = get2(sb, "run", key);
	char msg[400];

	if (!cJSON_IsString(a) && !cJSON_IsString(b))
		return;
	if (cJSON_IsString(a) && cJSON_IsString(b) && !strcmp(a->valuestring, b->valuestring))
		return;
	snprintf(msg, sizeof(msg), "%s differs: '%.80s' in A, '%.80s' in B", what,
		 cJSON_IsString(a) ? a->valuestring : "(none)",
		 cJSON_IsString(b) ? b->valuestring : "(none)");
	cJSON_AddItemToArray(warn, cJSON_CreateString(msg));
}

static cJSON *rate3(double pass, double total)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "pass", pass);
	cJSON_AddNumberToObject(o, "total", total);
	cJSON_AddItemToObject(o, "rate", total > 0 ? cJSON_CreateNumber(pass / total)
						   : cJSON_CreateNull());
	return o;
}

static cJSON *delta_of(const cJSON *a, const cJSON *b)
{
	const cJSON *ra = get(a, "rate"), *rb = get(b, "rate");

	return cJSON_IsNumber(ra) && cJSON_IsNumber(rb)
		? cJSON_CreateNumber(rb->valuedouble - ra->valuedouble) : cJSON_CreateNull();
}

static void add_overall(cJSON *diff, const cJSON *sa, const cJSON *sb,
			const struct match *m)
{
	cJSON *o = cJSON_AddObjectToObject(diff, "overall"), *ma, *mb, *c;
	const cJSON *aa = get(sa, "attempts"), *ab = get(sb, "attempts");

	cJSON_AddItemToObject(o, "a", rate3(num(aa, "pass"), num(aa, "total")));
	cJSON_AddItemToObject(o, "b", rate3(num(ab, "pass"), num(ab, "total")));
	ma = rate3((double)m->a_pass, (double)m->matched);
	mb = rate3((double)m->b_pass, (double)m->matched);
	cJSON_AddItemToObject(o, "matched_delta", delta_of(ma, mb));
	cJSON_AddItemToObject(o, "matched_a", ma);
	cJSON_AddItemToObject(o, "matched_b", mb);
	cJSON_AddNumberToObject(o, "matched", (double)m->matched);
	cJSON_AddNumberToObject(o, "only_a", (double)m->only_a);
	cJSON_AddNumberToObject(o, "only_b", (double)m->only_b);
	cJSON_AddNumberToObject(o, "only_b_failed", (double)m->only_b_failed);
	cJSON_AddNumberToObject(o, "recall_prompt_differs", (double)m->prompt_differs);
	if (m->prompt_differs) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "%zu matched recall attempts were sent different documents (recall.prompt_sha256): not like for like",
			 m->prompt_differs);
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(diff, "warnings"),
				     cJSON_CreateString(msg));
	}
	cJSON_ArrayForEach(c, get(diff, "cases")) {
		cJSON *a = rate3(num(c, "a_pass"), num(c, "total"));
		cJSON *b = rate3(num(c, "b_pass"), num(c, "total"));
		cJSON_AddItemToObject(c, "delta", delta_of(a, b));
		cJSON_AddItemToObject(c, "a", a);
		cJSON_AddItemToObject(c, "b", b);
	}
}

static const cJSON *depth_row(const cJSON *s, double depth)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, get2(s, "recall", "by_depth"))
		if (num(it, "depth") == depth)
			return it;
	return NULL;
}

static cJSON *recall_side(const cJSON *row)
{
	return row ? rate3(num(row, "found"), num(row, "total")) : cJSON_CreateNull();
}

static void add_recall(cJSON *diff, const cJSON *sa, const cJSON *sb)
{
	cJSON *arr = cJSON_AddArrayToObject(diff, "recall_by_depth"), *o, *a, *b;
	const cJSON *it;
	const cJSON *sides[2] = {sa, sb};
	int s;

	for (s = 0; s < 2; s++)
		cJSON_ArrayForEach(it, get2(sides[s], "recall", "by_depth")) {
			double dep = num(it, "depth");
			const cJSON *have;
			int dup = 0;
			cJSON_ArrayForEach(have, arr)
				dup |= num(have, "depth") == dep;
			if (dup)
				continue;
			o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "depth", dep);
			a = recall_side(depth_row(sa, dep));
			b = recall_side(depth_row(sb, dep));
			cJSON_AddItemToObject(o, "delta", delta_of(a, b));
			cJSON_AddItemToObject(o, "a", a);
			cJSON_AddItemToObject(o, "b", b);
			cJSON_AddItemToArray(arr, o);
		}
}

static void add_latency(cJSON *diff, const cJSON *sa, const cJSON *sb)
{
	static const char *const ps[] = {"p50", "p90", "p99"};
	cJSON *lat = cJSON_AddObjectToObject(diff, "latency"), *o, *ratio;
	const cJSON *it;
	size_t i;

	cJSON_ArrayForEach(it, get(sb, "latency")) {
		const cJSON *a = get2(sa, "latency", it->string);
		o = cJSON_AddObjectToObject(lat, it->string);
		cJSON_AddItemToObject(o, "a", a ? cJSON_Duplicate(a, 1) : cJSON_CreateNull());
		cJSON_AddItemToObject(o, "b", cJSON_Duplicate(it, 1));
		ratio = cJSON_AddObjectToObject(o, "ratio");
		for (i = 0; i < 3; i++) {
			const cJSON *va = get(a, ps[i]), *vb = get(it, ps[i]);
			cJSON_AddItemToObject(ratio, ps[i],
				cJSON_IsNumber(va) && cJSON_IsNumber(vb) && va->valuedouble > 0
					? cJSON_CreateNumber(vb->valuedouble / va->valuedouble)
					: cJSON_CreateNull());
		}
	}
}

static void add_sides(cJSON *diff, const cJSON *sa, const cJSON *sb)
{
	cJSON *w = cJSON_AddArrayToObject(diff, "warnings"), *u;

	cJSON_AddItemToObject(diff, "a", cJSON_Duplicate(get(sa, "run"), 1));
	cJSON_AddItemToObject(diff, "b", cJSON_Duplicate(get(sb, "run"), 1));
	warn_if_differs(w, sa, sb, "suite_sha256", "suite SHA-256");
	warn_if_differs(w, sa, sb, "tokenizer_sha256", "tokenizer SHA-256");
	warn_if_differs(w, sa, sb, "template_sha256", "template SHA-256");
	warn_if_differs(w, sa, sb, "model", "served model");
	u = cJSON_AddObjectToObject(diff, "usage");
	cJSON_AddItemToObject(u, "a_max_abs_delta", cJSON_Duplicate(get2(sa, "audit", "max_abs_delta"), 0));
	cJSON_AddItemToObject(u, "b_max_abs_delta", cJSON_Duplicate(get2(sb, "audit", "max_abs_delta"), 0));
	cJSON_AddNumberToObject(u, "a_samples", num(get(sa, "audit"), "samples"));
	cJSON_AddNumberToObject(u, "b_samples", num(get(sb, "audit"), "samples"));
}

enum err diff_runs(const struct report_run *a, const struct report_run *b,
		   cJSON **out, struct diag *d)
{
	cJSON *sa = NULL, *sb = NULL, *diff = NULL;
	struct keyed *ka = NULL, *kb = NULL;
	struct match m;
	size_t na = 0, nb = 0;
	enum err e;

	*out = NULL;
	memset(&m, 0, sizeof(m));
	if ((e = report_summary(a, &sa, d)) || (e = report_summary(b, &sb, d)))
		goto out;
	ka = index_of(a->records, &na);
	kb = index_of(b->records, &nb);
	diff = cJSON_CreateObject();
	if (!ka || !kb || !diff) {
		e = diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
		goto out;
	}
	cJSON_AddNumberToObject(diff, "needle_diff", 1);
	add_sides(diff, sa, sb);
	match_runs(ka, na, kb, nb, diff, &m);
	add_overall(diff, sa, sb, &m);
	add_recall(diff, sa, sb);
	add_latency(diff, sa, sb);
	cJSON_AddItemToObject(diff, "summary_a", sa);
	cJSON_AddItemToObject(diff, "summary_b", sb);
	sa = sb = NULL;
	cJSON_AddArrayToObject(diff, "gates");
	*out = diff;
	diff = NULL;
out:
	cJSON_Delete(sa);
	cJSON_Delete(sb);
	cJSON_Delete(diff);
	index_free(ka, na);
	index_free(kb, nb);
	return e;
}

/* ---- gate evaluation ---- */

static int holds(double v, enum diff_op op, double want)
{
	switch (op) {
	case DIFF_GE: return v >= want;
	case DIFF_LE: return v <= want;
	case DIFF_GT: return v > want;
	case DIFF_LT: return v < want;
	case DIFF_EQ: return v == want;
	}
	return 0;
}

/* The case summary of run B for `id`, or NULL. */
static const cJSON *case_b(const cJSON *diff, const char *id)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, get2(diff, "summary_b", "cases"))
		if (!strcmp(get(c, "id")->valuestring, id))
			return c;
	return NULL;
}

static const cJSON *recall_b(const cJSON *diff, const char *arg, const cJSON **row_a)
{
	const cJSON *it;
	double dep = strtod(arg, NULL);

	*row_a = NULL;
	cJSON_ArrayForEach(it, get(diff, "recall_by_depth"))
		if (num(it, "depth") == dep) {
			*row_a = get(it, "a");
			return get(it, "b");
		}
	return NULL;
}

/* Overall recall of B: found/total over every needle. */
static const cJSON *recall_all(const cJSON *diff, double *v)
{
	const cJSON *it, *cells = get2(get(diff, "summary_b"), "recall", "by_depth");
	double f = 0, t = 0;

	cJSON_ArrayForEach(it, cells) {
		f += num(it, "found");
		t += num(it, "total");
	}
	*v = t > 0 ? f / t : 0;
	return t > 0 ? cells : NULL;
}

/* The metric's value into *v; returns 0 with `why` filled when there is no
 * data for it. */
static int metric(const cJSON *diff, const struct diff_gate *g, double *v,
		  char *why, size_t cap)
{
	const cJSON *x, *y;
	char t[32];
	int pct, ratio;

	if (!strcmp(g->name, "pass_rate")) {
		x = g->arg[0] ? get(case_b(diff, g->arg), "rate") : get2(diff, "summary_b", "attempts");
		if (!g->arg[0])
			x = get(x, "rate");
	} else if (!strcmp(g->name, "pass_rate_delta")) {
		x = get2(diff, "overall", "matched_delta");
	} else if (!strcmp(g->name, "flips")) {
		*v = cJSON_GetArraySize(get2(diff, "flips", "pass_to_fail"));
		return 1;
	} else if (!strcmp(g->name, "max_abs_usage_delta")) {
		x = get2(diff, "usage", "b_max_abs_delta");
	} else if (!strcmp(g->name, "recall") && !g->arg[0]) {
		if (recall_all(diff, v))
			return 1;
		x = NULL;
	} else if (!strcmp(g->name, "recall")) {
		x = get(recall_b(diff, g->arg, &y), "rate");
	} else if (!strcmp(g->name, "recall_delta")) {
		x = get(recall_b(diff, g->arg, &y), "rate");
		y = get(y, "rate");
		if (cJSON_IsNumber(x) && cJSON_IsNumber(y)) {
			*v = x->valuedouble - y->valuedouble;
			return 1;
		}
		x = NULL;
	} else if (timing_gate(g->name, t, sizeof(t), &pct, &ratio)) {
		char p[8];
		snprintf(p, sizeof(p), "p%d", pct);
		x = get(get2(get(diff, "latency"), t, ratio ? "ratio" : "b"), p);
	} else {
		x = NULL;
	}
	if (cJSON_IsNumber(x)) {
		*v = x->valuedouble;
		return 1;
	}
	snprintf(why, cap, "no data for '%s%s%s' in these runs", g->name,
		 g->arg[0] ? "@" : "", g->arg);
	return 0;
}

enum err diff_gate_eval(cJSON *diff, const struct diff_gate *g, int *ok,
			struct diag *d)
{
	cJSON *o = cJSON_CreateObject();
	char why[640] = "";
	double v = 0;
	int have;

	if (!o)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (!strcmp(g->name, "no_new_failures")) {
		double pf = cJSON_GetArraySize(get2(diff, "flips", "pass_to_fail"));
		double nb = num(get(diff, "overall"), "only_b_failed");
		v = pf + nb;
		*ok = v == 0;
		snprintf(why, sizeof(why), "%.0f pass->fail flips, %.0f failed attempts only in B", pf, nb);
		have = 1;
	} else {
		have = metric(diff, g, &v, why, sizeof(why));
		*ok = have && holds(v, g->op, g->value);
		if (have)
			snprintf(why, sizeof(why), "value %.6g", v);
	}
	cJSON_AddStringToObject(o, "gate", g->spec);
	cJSON_AddBoolToObject(o, "ok", *ok);
	cJSON_AddItemToObject(o, "value", have ? cJSON_CreateNumber(v) : cJSON_CreateNull());
	cJSON_AddStringToObject(o, "detail", why);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(diff, "gates"), o);
	return ERR_OK;
}

/* ---- Markdown ---- */

static const char *num_text(const cJSON *v, const char *fmt, char *tmp, size_t cap)
{
	if (!cJSON_IsNumber(v))
		return "-";
	snprintf(tmp, cap, fmt, v->valuedouble);
	return tmp;
}

static enum err md_side(struct buf *b, const cJSON *r)
{
	const cJSON *p = get(r, "pass") ? get(r, "pass") : get(r, "found");
	char t1[32], t2[32], t3[32];

	if (!cJSON_IsObject(r))
		return buf_puts(b, "-");
	return buf_printf(b, "%s/%s (%s)", num_text(p, "%.0f", t1, sizeof(t1)),
			  num_text(get(r, "total"), "%.0f", t2, sizeof(t2)),
			  num_text(get(r, "rate"), "%.3f", t3, sizeof(t3)));
}

static enum err md_head(const cJSON *diff, struct buf *b)
{
	const cJSON *w, *o = get(diff, "overall");
	char t[32];
	enum err e = buf_printf(b, "# needle diff\n\nA: %s (model %s)\nB: %s (model %s)\n",
				get2(diff, "a", "dir")->valuestring,
				cJSON_IsString(get2(diff, "a", "model")) ? get2(diff, "a", "model")->valuestring : "-",
				get2(diff, "b", "dir")->valuestring,
				cJSON_IsString(get2(diff, "b", "model")) ? get2(diff, "b", "model")->valuestring : "-");

	cJSON_ArrayForEach(w, get(diff, "warnings"))
		if (!e)
			e = buf_printf(b, "\n**warning:** %s", w->valuestring);
	if (!e)
		e = buf_printf(b, "\n\n## Pass rate\n\nAll attempts: A ");
	if (!e)
		e = md_side(b, get(o, "a"));
	if (!e)
		e = buf_puts(b, ", B ");
	if (!e)
		e = md_side(b, get(o, "b"));
	if (!e)
		e = buf_printf(b, ".\nMatched (same case, repeat, seed): %.0f attempts, A ", num(o, "matched"));
	if (!e)
		e = md_side(b, get(o, "matched_a"));
	if (!e)
		e = buf_puts(b, ", B ");
	if (!e)
		e = md_side(b, get(o, "matched_b"));
	if (!e)
		e = buf_printf(b, ", change %s. Only in A: %.0f; only in B: %.0f (%.0f failed).\n",
			       num_text(get(o, "matched_delta"), "%+.3f", t, sizeof(t)),
			       num(o, "only_a"), num(o, "only_b"), num(o, "only_b_failed"));
	return e;
}

static enum err md_flips(const cJSON *diff, struct buf *b, const char *key,
			 const char *title)
{
	const cJSON *arr = strcmp(key, "only_b_failed") ? get2(diff, "flips", key)
							: get(diff, key), *it, *f;
	char t[32];
	enum err e = buf_printf(b, "\n### %s: %d\n\n", title, cJSON_GetArraySize(arr));

	cJSON_ArrayForEach(it, arr) {
		if (!e)
			e = buf_printf(b, "- %s repeat %.0f seed %s", get(it, "case")->valuestring,
				       num(it, "repeat"), num_text(get(it, "seed"), "%.0f", t, sizeof(t)));
		cJSON_ArrayForEach(f, get(it, "failures"))
			if (!e)
				e = buf_printf(b, " [%s]", f->valuestring);
		if (!e && cJSON_IsString(get(it, "reason")))
			e = buf_puts(b, ": ");
		if (!e && cJSON_IsString(get(it, "reason")))
			e = report_md_cell(b, get(it, "reason")->valuestring);
		if (!e)
			e = buf_puts(b, "\n");
	}
	return e;
}

static enum err md_cases(const cJSON *diff, struct buf *b)
{
	const cJSON *c;
	char t[32];
	enum err e = buf_puts(b, "\n## Per case (matched attempts)\n\n| case | A | B | change |\n|---|---|---|---|\n");

	cJSON_ArrayForEach(c, get(diff, "cases")) {
		if (!e)
			e = buf_puts(b, "| ");
		if (!e)
			e = report_md_cell(b, get(c, "id")->valuestring);
		if (!e)
			e = buf_puts(b, " | ");
		if (!e)
			e = md_side(b, get(c, "a"));
		if (!e)
			e = buf_puts(b, " | ");
		if (!e)
			e = md_side(b, get(c, "b"));
		if (!e)
			e = buf_printf(b, " | %s |\n", num_text(get(c, "delta"), "%+.3f", t, sizeof(t)));
	}
	return e;
}

static enum err md_recall(const cJSON *diff, struct buf *b)
{
	const cJSON *r;
	char t[32];
	enum err e = ERR_OK;

	if (!cJSON_GetArraySize(get(diff, "recall_by_depth")))
		return ERR_OK;
	e = buf_puts(b, "\n## Recall by depth\n\n| depth | A | B | change |\n|---|---|---|---|\n");
	cJSON_ArrayForEach(r, get(diff, "recall_by_depth")) {
		if (!e)
			e = buf_printf(b, "| %.0f%% | ", num(r, "depth"));
		if (!e)
			e = md_side(b, get(r, "a"));
		if (!e)
			e = buf_puts(b, " | ");
		if (!e)
			e = md_side(b, get(r, "b"));
		if (!e)
			e = buf_printf(b, " | %s |\n", num_text(get(r, "delta"), "%+.3f", t, sizeof(t)));
	}
	return e;
}

static enum err md_usage(const cJSON *diff, struct buf *b)
{
	const cJSON *u = get(diff, "usage"), *it;
	char t1[32], t2[32], t3[32];
	enum err e = buf_printf(b, "\n## Usage audit\n\nmax |usage_delta|: A %s (%.0f samples), B %s (%.0f samples). Changed deltas on matched attempts: %d.\n",
				num_text(get(u, "a_max_abs_delta"), "%.0f", t1, sizeof(t1)), num(u, "a_samples"),
				num_text(get(u, "b_max_abs_delta"), "%.0f", t2, sizeof(t2)), num(u, "b_samples"),
				cJSON_GetArraySize(get(diff, "usage_changes")));

	cJSON_ArrayForEach(it, get(diff, "usage_changes"))
		if (!e)
			e = buf_printf(b, "- %s repeat %.0f seed %s: %s -> %s\n", get(it, "case")->valuestring,
				       num(it, "repeat"), num_text(get(it, "seed"), "%.0f", t3, sizeof(t3)),
				       num_text(get(it, "a"), "%+.0f", t1, sizeof(t1)),
				       num_text(get(it, "b"), "%+.0f", t2, sizeof(t2)));
	return e;
}

static enum err md_latency(const cJSON *diff, struct buf *b)
{
	static const char *const ps[] = {"p50", "p90", "p99"};
	const cJSON *it;
	char t1[32], t2[32], t3[32];
	size_t i;
	enum err e = buf_puts(b, "\n## Latency (ms, nearest rank)\n\n| timing | n A | n B | pct | A | B | B/A |\n|---|---|---|---|---|---|---|\n");

	cJSON_ArrayForEach(it, get(diff, "latency"))
		for (i = 0; !e && i < 3; i++)
			e = buf_printf(b, "| %s | %.0f | %.0f | %s | %s | %s | %s |\n", it->string,
				       num(get(it, "a"), "n"), num(get(it, "b"), "n"), ps[i],
				       num_text(get2(it, "a", ps[i]), "%.1f", t1, sizeof(t1)),
				       num_text(get2(it, "b", ps[i]), "%.1f", t2, sizeof(t2)),
				       num_text(get2(it, "ratio", ps[i]), "%.3f", t3, sizeof(t3)));
	return e;
}

static enum err md_gates(const cJSON *diff, struct buf *b)
{
	const cJSON *g;
	enum err e = ERR_OK;

	if (!cJSON_GetArraySize(get(diff, "gates")))
		return ERR_OK;
	e = buf_puts(b, "\n## Gates\n\n");
	cJSON_ArrayForEach(g, get(diff, "gates"))
		if (!e)
			e = buf_printf(b, "- %s `%s`: %s\n", cJSON_IsTrue(get(g, "ok")) ? "PASS" : "FAIL",
				       get(g, "gate")->valuestring, get(g, "detail")->valuestring);
	return e;
}

enum err diff_markdown(const cJSON *diff, struct buf *out, struct diag *d)
{
	enum err e = md_head(diff, out);

	if (!e)
		e = md_flips(diff, out, "pass_to_fail", "pass -> fail");
	if (!e)
		e = md_flips(diff, out, "fail_to_pass", "fail -> pass");
	if (!e)
		e = md_flips(diff, out, "only_b_failed", "failed, only in B");
	if (!e)
		e = md_cases(diff, out);
	if (!e)
		e = md_recall(diff, out);
	if (!e)
		e = md_usage(diff, out);
	if (!e)
		e = md_latency(diff, out);
	if (!e)
		e = md_gates(diff, out);
	if (e)
		return diag_fail(d, e, "cannot render the diff: %s", err_name(e));
	return ERR_OK;
}
