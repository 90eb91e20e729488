/*
 * vbench — see vbench.h.
 */
#include "vbench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/jget.h"
#include "base/json.h"
#include "base/mem.h"
#include "base/stats.h"
#include "load/loadstat.h"
#include "run/record.h"

/* One counted request of a level. */
struct vb_req {
	struct loadstat_req q;
	long round;
	double prompt_tokens, ttft, e2e;
	int meets_slo;
};

/* One level: a case at one concurrency or rate. */
struct vb_level {
	char *case_id;            /* owned */
	long level;
	const char *endpoint;     /* "openai" or "openai-chat" (static) */
	int open_loop, has_slo;
	double value;             /* the concurrency or the rate */
	struct vb_req *r;         /* owned */
	size_t n, cap;
	double *itl;              /* owned: the completed requests' inter-token
				     latencies (ms), pooled as serve.py does */
	size_t nitl, citl;
};

struct vb_walk {
	struct vb_level *l;       /* owned, first-seen order */
	size_t n, cap;
};

static struct vb_level *level_of(struct vb_walk *w, const cJSON *rec, const struct loadcells_req *q)
{
	const char *ep;
	struct vb_level *l, *p;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->l[i].level == q->level && !strcmp(w->l[i].case_id, q->case_id))
			return &w->l[i];
	if (w->n == w->cap) {
		if (!(p = mem_grow(w->l, &w->cap, sizeof(*p), 8)))
			return NULL;
		w->l = p;
	}
	l = &w->l[w->n];
	memset(l, 0, sizeof(*l));
	if (!(l->case_id = mem_strndup(q->case_id, strlen(q->case_id))))
		return NULL;
	w->n++;
	l->level = q->level;
	l->open_loop = q->open_loop;
	l->value = q->level_value;
	l->has_slo = q->has_slo;
	ep = cJSON_GetStringValue(jget(rec, RK_ENDPOINT));
	l->endpoint = ep && strstr(ep, "/chat/") ? "openai-chat" : "openai";
	return l;
}

static enum err take(void *ctx, const struct record_view *v, struct diag *d)
{
	struct vb_walk *w = ctx;
	struct loadcells_req lq;
	struct vb_level *l;
	struct vb_req *r, *p;
	const cJSON *g, *gaps;
	double *t;

	(void)d;
	if (!record_load_request(v, &lq))
		return ERR_OK;
	if (!(l = level_of(w, v->rec, &lq)))
		return ERR_NOMEM;
	if (l->n == l->cap) {
		if (!(p = mem_grow(l->r, &l->cap, sizeof(*p), 64)))
			return ERR_NOMEM;
		l->r = p;
	}
	r = &l->r[l->n];
	memset(r, 0, sizeof(*r));
	r->q = lq.q;
	l->n++;
	r->round = lq.round;
	r->prompt_tokens = jget_numv(v->f[RF_US_PROMPT_TOKENS]);
	r->ttft = r->q.first >= 0 ? r->q.first - r->q.sent : -1;
	r->e2e = r->q.done - r->q.sent;
	r->meets_slo = loadstat_meets(&r->q, &lq.slo);
	gaps = r->q.ok ? lq.itl_ms : NULL; /* serve.py keeps a success's only */
	cJSON_ArrayForEach(g, gaps) {
		if (!cJSON_IsNumber(g))
			continue;
		if (l->nitl == l->citl) {
			if (!(t = mem_grow(l->itl, &l->citl, sizeof(*t), 256)))
				return ERR_NOMEM;
			l->itl = t;
		}
		l->itl[l->nitl++] = g->valuedouble;
	}
	return ERR_OK;
}

/* The sum over the level's rounds of each round's wall time, in seconds;
 * the rounds into *rounds. */
static double duration_s(const struct vb_level *l, size_t *rounds)
{
	double sum = 0;
	size_t i, j;

	*rounds = 0;
	for (i = 0; i < l->n; i++) {
		double start = l->r[i].q.scheduled, end = l->r[i].q.done;
		for (j = 0; j < i && l->r[j].round != l->r[i].round; j++)
			;
		if (j < i)
			continue; /* the round was summed at its first request */
		(*rounds)++;
		for (j = i + 1; j < l->n; j++)
			if (l->r[j].round == l->r[i].round) {
				start = fmin(start, l->r[j].q.scheduled);
				end = fmax(end, l->r[j].q.done);
			}
		sum += end - start;
	}
	return sum / 1000;
}

/* mean_, median_, std_, p50_, p90_, p95_, p99_ of `name` (ms) over v[0..n)
 * (sorted here); all 0 without samples, as serve.py. */
static void add_figure(struct json_build *jb, cJSON *o, const char *name, double *v, size_t n)
{
	static const double pcts[] = {50, 90, 95, 99};
	char key[40];
	double mean, sd;
	size_t i;

	stats_sort(v, n);
	stats_moments(v, n, &mean, &sd);
	snprintf(key, sizeof(key), "mean_%s_ms", name);
	json_add_num(jb, o, key, mean);
	snprintf(key, sizeof(key), "median_%s_ms", name);
	json_add_num(jb, o, key, stats_linear(v, n, 50));
	snprintf(key, sizeof(key), "std_%s_ms", name);
	json_add_num(jb, o, key, sd);
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		snprintf(key, sizeof(key), "p%.0f_%s_ms", pcts[i], name);
		json_add_num(jb, o, key, stats_linear(v, n, pcts[i]));
	}
}

/* The inter-token latencies pooled over the level's completed requests
 * (serve.py's itls); null when its records have none (recorded before needle
 * kept them). */
static void add_itl(struct json_build *jb, cJSON *o, struct vb_level *l)
{
	static const char *const keys[] = {"mean_itl_ms", "median_itl_ms", "std_itl_ms", "p50_itl_ms",
					   "p90_itl_ms", "p95_itl_ms", "p99_itl_ms"};
	size_t i;

	if (l->nitl) {
		add_figure(jb, o, "itl", l->itl, l->nitl);
		return;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_add_null(jb, o, keys[i]);
}

/* The counts and throughputs of level `l` over `dur` seconds. */
static void add_counts(struct json_build *jb, cJSON *o, const struct vb_level *l, double dur)
{
	double in = 0, out = 0, good = 0, done = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->r[i].q.ok) {
			done++;
			in += l->r[i].prompt_tokens;
			out += (double)l->r[i].q.completion_tokens;
			good += l->r[i].meets_slo;
		}
	json_add_num(jb, o, "duration", dur);
	json_add_num(jb, o, "completed", done);
	json_add_num(jb, o, "failed", (double)l->n - done);
	json_add_num(jb, o, "total_input_tokens", in);
	json_add_num(jb, o, "total_output_tokens", out);
	json_add_num(jb, o, "request_throughput", dur > 0 ? done / dur : 0);
	if (l->has_slo)
		json_add_num(jb, o, "request_goodput", dur > 0 ? good / dur : 0);
	else
		json_add_null(jb, o, "request_goodput");
	json_add_num(jb, o, "output_throughput", dur > 0 ? out / dur : 0);
	json_add_num(jb, o, "total_token_throughput", dur > 0 ? (in + out) / dur : 0);
}

/* ttft, tpot, itl and e2el of `l`'s completed requests; `v` holds 3 x l->n
 * doubles. */
static void add_latency(struct json_build *jb, cJSON *o, const struct vb_level *l, double *v)
{
	double *ttft = v, *tpot = v + l->n, *e2e = v + 2 * l->n;
	size_t i, nt = 0, np = 0, ne = 0;

	for (i = 0; i < l->n; i++) {
		const struct vb_req *r = &l->r[i];
		if (!r->q.ok)
			continue;
		if (r->ttft >= 0)
			ttft[nt++] = r->ttft;
		if (r->ttft >= 0 && r->q.completion_tokens > 1)
			tpot[np++] = (r->e2e - r->ttft) / (double)(r->q.completion_tokens - 1);
		e2e[ne++] = r->e2e;
	}
	add_figure(jb, o, "ttft", ttft, nt);
	add_figure(jb, o, "tpot", tpot, np);
	add_itl(jb, o, (struct vb_level *)l);
	add_figure(jb, o, "e2el", e2e, ne);
}

/* o[key] = a copy of v (a scalar), or null. */
static void dup_or_null(struct json_build *jb, cJSON *o, const char *key, const cJSON *v)
{
	json_add_item(jb, o, key, v ? cJSON_Duplicate(v, 0) : cJSON_CreateNull());
}

/* The vllm bench result object of level `l`. */
static cJSON *level_json(struct json_build *jb, const struct vb_level *l, const cJSON *m,
			 double *scratch)
{
	cJSON *o = json_new_obj(jb);
	size_t rounds;
	double dur = duration_s(l, &rounds);

	dup_or_null(jb, o, "date", jget(m, MK_STARTED_AT));
	json_add_str(jb, o, "endpoint_type", l->endpoint);
	json_add_str(jb, o, "label", "needle");
	dup_or_null(jb, o, "model_id", jget2(m, MK_ENDPOINT, EP_SERVED_MODEL));
	dup_or_null(jb, o, "tokenizer_id", jget2(m, MK_TOKENIZER, MK_PATH));
	json_add_num(jb, o, "num_prompts", (double)l->n);
	if (l->open_loop)
		json_add_num(jb, o, "request_rate", l->value);
	else
		json_add_str(jb, o, "request_rate", "inf");
	if (l->open_loop)
		json_add_null(jb, o, "max_concurrency");
	else
		json_add_num(jb, o, "max_concurrency", l->value);
	add_counts(jb, o, l, dur);
	add_latency(jb, o, l, scratch);
	json_add_str(jb, o, "needle_case", l->case_id);
	json_add_num(jb, o, "needle_level", (double)l->level);
	json_add_num(jb, o, "needle_rounds", (double)rounds);
	dup_or_null(jb, o, "needle_run_id", jget(m, MK_RUN_ID));
	return o;
}

static void walk_release(struct vb_walk *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		mem_free(w->l[i].case_id);
		mem_free(w->l[i].r);
		mem_free(w->l[i].itl);
	}
	mem_free(w->l);
}

/* Prints each level of `w` as one line. */
static enum err print_levels(const struct vb_walk *w, const cJSON *m, struct buf *out,
			     struct diag *d)
{
	struct json_build jb;
	enum err e = ERR_OK;
	size_t i;

	for (i = 0; !e && i < w->n; i++) {
		double *scratch = mem_calloc(3 * w->l[i].n + 1, sizeof(double));
		cJSON *o;
		if (!scratch)
			return diag_fail(d, ERR_NOMEM, "out of memory writing the vllm-bench results");
		json_build_init(&jb);
		o = level_json(&jb, &w->l[i], m, scratch);
		mem_free(scratch);
		if (!(e = json_build_end(&jb, &o, "a vllm-bench result", d)))
			e = json_print(o, JSON_NEWLINE, out, "a vllm-bench result", d);
		cJSON_Delete(o);
	}
	return e;
}

static void walk_drop(void *ctx)
{
	walk_release(ctx);
	mem_free(ctx);
}

enum err vbench_fold(struct report_also *also, struct diag *d)
{
	struct vb_walk *w = mem_calloc(1, sizeof(*w));

	if (!w)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	also->take = take;
	also->ctx = w;
	also->drop = walk_drop;
	return ERR_OK;
}

enum err vbench_write(const struct report_run *r, struct buf *out, struct diag *d)
{
	enum err e = print_levels(r->also.ctx, r->manifest, out, d);

	if (e && (!d || !d->code))
		diag_fail(d, e, "cannot write the vllm-bench results of '%s': %s", r->dir, err_name(e));
	return e;
}
