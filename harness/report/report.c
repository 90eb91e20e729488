/*
 * report — see report.h.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "casetab.h"
#include "heatmap.h"
#include "keys.h"
#include "base/ctl.h"
#include "base/io.h"
#include "base/jget.h"
#include "base/json.h"
#include "load/loadcells.h"
#include "loadplot.h"
#include "load/loadview.h"
#include "base/md.h"
#include "probesum.h"
#include "base/mem.h"
#include "run/record.h"
#include "report.h"
#include "run/results.h"
#include "rows.h"
#include "base/stats.h"
#include "why.h"

#define PATHBUF 4096
#define REPORT_CASES_NAMED 20  /* cases listed per failure reason in summary.md */
#define REPORT_TERM_REASON 160 /* bytes of a first reason on the terminal */

/* The timing members in the summary's order ("latency"), from RF_TI_FIRST_BYTE_MS. */
static const char *const timing_keys[] = {RK_FIRST_BYTE_MS, RK_TTFT_MS, RK_TTFC_MS,
					  RK_E2E_MS, RK_TPOT_MS};
#define NTIMINGS (sizeof(timing_keys) / sizeof(timing_keys[0]))
_Static_assert(RF_TI_TPOT_MS - RF_TI_FIRST_BYTE_MS + 1 == NTIMINGS, "record.h's timing fields");

/* ---- loading ---- */

static enum err fold_take(struct report_fold *F, const struct record_view *v, struct diag *d);

/* results_each's callback of report_load: keeps the attempt key when the
 * manifest has a plan to count it against, and the record itself when it
 * is a load round; folds it into the summary and the rows when the run is
 * loaded for them. */
static enum err load_key(void *ctx, const struct record_view *v, struct diag *d)
{
	struct report_run *r = ctx;
	char key[RECORD_KEY_MAX];
	enum err e;

	if (!report_keeps(r, v))
		return ERR_OK;
	if (v->f[RF_LOAD]) {
		struct loadcells_req q;

		r->has_load = 1;
		if (record_load_request(v, &q) && loadcells_reqs_add(&r->load_reqs, &q, NULL))
			return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", r->dir);
	}
	if (r->fold && (e = fold_take(r->fold, v, d)))
		return e;
	if (r->rows && (e = rows_take(r->rows, v, d)))
		return diag_fail(d, e, "cannot write the attempts of '%s': %s", r->dir, err_name(e));
	if (r->also.take && (e = r->also.take(r->also.ctx, v, d)))
		return d && d->code ? e : diag_fail(d, e, "cannot read '%s': %s", r->dir, err_name(e));
	if (!r->has_plan)
		return ERR_OK;
	record_view_key(v, key, sizeof(key));
	return keyset_add(&r->keys, key, NULL, d);
}

int report_keeps(const struct report_run *r, const struct record_view *v)
{
	const cJSON *id = v->f[RF_CASE];

	return !r->nglobs || (jget_type(id) == cJSON_String &&
			      record_case_selected(r->globs, r->nglobs, id->valuestring));
}

static enum err fold_begin(struct report_run *r, struct diag *d);

/* What a load folds in its one pass over the journal besides the keys. */
enum { FOLD_SUMMARY = 1, FOLD_ROWS = 2 };

static enum err load_run(const char *dir, int folds, const char *const *globs,
			 size_t nglobs, const struct report_also *also, struct report_run **out,
			 struct diag *d)
{
	struct report_run *r;
	struct results_scan sc = {0};
	enum err e;

	*out = NULL;
	r = mem_calloc(1, sizeof(*r));
	if (r && also)
		r->also = *also;
	else if (also && also->drop)
		also->drop(also->ctx);
	if (!r || !(r->dir = mem_strndup(dir, strlen(dir)))) {
		if (r && r->also.drop)
			r->also.drop(r->also.ctx);
		mem_free(r);
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	keyset_init(&r->keys);
	buf_init(&r->csv, BUF_MAX_DEFAULT);
	r->globs = globs;
	r->nglobs = nglobs;
	e = results_read_manifest(dir, &r->manifest, d);
	r->has_plan = cJSON_IsArray(jget2(r->manifest, MK_PLANNED, MK_KEYS));
	if (!e && (folds & FOLD_SUMMARY))
		e = fold_begin(r, d);
	if (!e && (folds & FOLD_ROWS) && !(r->rows = mem_alloc(sizeof(*r->rows))))
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", dir);
	if (!e && r->rows && (e = rows_begin(r->rows, dir, cJSON_GetStringValue(jget(r->manifest, MK_RUN_ID)), 1, &r->csv)))
		e = diag_fail(d, e, "cannot write the attempts of '%s': %s", dir,
			      e == ERR_NOMEM ? "out of memory" : err_name(e));
	if (!e && r->also.start)
		e = r->also.start(r->also.ctx, r, d);
	if (!e)
		e = results_each(dir, load_key, r, &sc, d);
	r->records = sc.records;
	r->torn_bytes = sc.torn_bytes;
	if (e)
		report_run_free(r);
	else
		*out = r;
	return e;
}

enum err report_load(const char *dir, const struct report_also *also, struct report_run **out,
		     struct diag *d)
{
	return load_run(dir, FOLD_SUMMARY | FOLD_ROWS, NULL, 0, also, out, d);
}

enum err report_load_cases(const char *dir, const char *const *globs, size_t nglobs,
			   const struct report_also *also, struct report_run **out,
			   struct diag *d)
{
	return load_run(dir, FOLD_SUMMARY, globs, nglobs, also, out, d);
}

static void fold_free(struct report_fold *F);

void report_run_free(struct report_run *r)
{
	if (!r)
		return;
	cJSON_Delete(r->manifest);
	keyset_release(&r->keys);
	loadcells_reqs_free(&r->load_reqs);
	fold_free(r->fold);
	mem_free(r->rows);
	buf_release(&r->csv);
	if (r->also.drop)
		r->also.drop(r->also.ctx);
	mem_free(r->dir);
	mem_free(r);
}

/* ---- summary ---- */

struct cell {
	long depth, tokens;
	size_t found, failed, total; /* failed: the attempt failed at transport */
};

/* TTFT and E2E samples of the recall attempts of one prompt length. */
struct lenlat {
	long tokens;
	struct stats_vec ttft, e2e;
};

struct report_fold {
	cJSON *s;            /* the summary being built */
	struct casetab ct;   /* the cases, first-seen order */
	cJSON *eps;          /* array of endpoint objects, first-seen order */
	cJSON *codes, *finish; /* the summary's failure_codes, finish_reasons */
	struct stats_vec timing[NTIMINGS];
	struct stats_vec deltas;  /* usage_delta samples */
	struct cell *cells;
	struct lenlat *ll;   /* recall timings per prompt length */
	size_t nll, capll;
	size_t ncells, capcells;
	size_t pass, total, recall_attempts;
	size_t audit_enabled, audit_failed;
	size_t stage_transport, stage_audit, stage_grade;
	struct why_fold *why;   /* the Failures section and the advice */
	struct probesum probes; /* the probing recall steps */
	struct loadcells load;  /* the load cells (add_load) */
	struct json_build jb; /* the summary's adds */
	int oom;              /* a sample list or cell table could not grow */
	const struct report_run *run; /* borrowed: the run summarised */
};

/* Adds `by` to the number at o[key], creating it at 0 (found by jget, whose
 * names are told apart by their first byte before strcmp: some 3 bumps a
 * record). */
static void bump(struct report_fold *A, cJSON *o, const char *key, double by)
{
	cJSON *n = (cJSON *)(uintptr_t)jget(o, key);

	if (n)
		cJSON_SetNumberValue(n, n->valuedouble + by);
	else
		json_add_num(&A->jb, o, key, by);
}

static void add_cell(struct report_fold *A, long depth, long tokens, int found, int failed)
{
	size_t i;

	for (i = 0; i < A->ncells; i++)
		if (A->cells[i].depth == depth && A->cells[i].tokens == tokens)
			break;
	if (i == A->ncells) {
		if (A->ncells == A->capcells) {
			size_t cap = A->capcells ? A->capcells * 2 : 16;
			struct cell *nc = mem_realloc(A->cells, cap * sizeof(*nc));
			if (!nc) {
				A->oom = 1;
				return;
			}
			A->cells = nc;
			A->capcells = cap;
		}
		A->cells[i] = (struct cell){depth, tokens, 0, 0, 0};
		A->ncells++;
	}
	A->cells[i].total++;
	A->cells[i].found += found != 0;
	A->cells[i].failed += failed != 0;
}

static struct lenlat *lenlat_of(struct report_fold *A, long tokens)
{
	size_t i;

	for (i = 0; i < A->nll; i++)
		if (A->ll[i].tokens == tokens)
			return &A->ll[i];
	if (A->nll == A->capll) {
		struct lenlat *n = mem_grow(A->ll, &A->capll, sizeof(*n), 8);
		if (!n)
			return NULL;
		A->ll = n;
	}
	memset(&A->ll[A->nll], 0, sizeof(A->ll[0]));
	A->ll[A->nll].tokens = tokens;
	return &A->ll[A->nll++];
}

static void take_recall_timing(struct report_fold *A, const struct record_view *v, long tokens)
{
	const cJSON *t = v->f[RF_TI_TTFT_MS], *e = v->f[RF_TI_E2E_MS];
	struct lenlat *l = lenlat_of(A, tokens);

	if (!l || (cJSON_IsNumber(t) && stats_vec_push(&l->ttft, t->valuedouble)) ||
	    (cJSON_IsNumber(e) && stats_vec_push(&l->e2e, e->valuedouble)))
		A->oom = 1;
}

/* A JSON number as a long, or `dflt` when it is not a number or does not fit
 * (results files are input: "1e300" must not reach an undefined cast). */
static long num_long(const cJSON *v, long dflt)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= -9e15 && v->valuedouble <= 9e15))
		return dflt;
	return (long)v->valuedouble;
}

static void take_recall(struct report_fold *A, const struct record_view *v, int transport_ok)
{
	const cJSON *needles = v->f[RF_GR_NEEDLES], *n;
	long len = num_long(v->f[RF_RE_TOKENS], 0);

	A->recall_attempts++;
	take_recall_timing(A, v, len);
	if (cJSON_IsArray(needles) && cJSON_GetArraySize(needles) > 0) {
		cJSON_ArrayForEach(n, needles) {
			long dep = num_long(jget(n, RK_DEPTH), -1);

			if (dep >= 0)
				add_cell(A, dep, len,
					 transport_ok && cJSON_IsTrue(jget(n, RK_OK)), !transport_ok);
		}
		return;
	}
	cJSON_ArrayForEach(n, v->f[RF_RE_DEPTHS])
		if (num_long(n, -1) >= 0)
			add_cell(A, num_long(n, -1), len, 0, !transport_ok);
}

static void take_timing(struct report_fold *A, const struct record_view *v)
{
	size_t i;

	for (i = 0; i < NTIMINGS; i++) {
		const cJSON *t = v->f[RF_TI_FIRST_BYTE_MS + i];
		if (jget_type(t) == cJSON_Number && stats_vec_push(&A->timing[i], t->valuedouble))
			A->oom = 1;
	}
}

static void take_audit(struct report_fold *A, const struct record_view *v)
{
	const cJSON *dl = v->f[RF_AU_USAGE_DELTA];

	A->audit_enabled += jget_type(v->f[RF_AU_ENABLED]) == cJSON_True;
	A->audit_failed += jget_type(v->f[RF_AU_OK]) == cJSON_False;
	if (jget_type(dl) == cJSON_Number && stats_vec_push(&A->deltas, dl->valuedouble))
		A->oom = 1;
}

/* The case's reasons ("STAGE: KEY" -> count) and its first failed
 * attempt's first reason. */
static void take_reasons(struct report_fold *A, struct casetab_case *c,
			 const struct record_view *v)
{
	struct why_reason r[WHY_REASONS_MAX];
	size_t i, n = why_reasons(v, r, WHY_REASONS_MAX);
	char key[WHY_TEXT_MAX + 16];

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%s: %s", r[i].stage, r[i].key);
		if (casetab_bump(&c->reasons, key, 1))
			A->oom = 1;
	}
	if (n && !c->first_reason) {
		snprintf(key, sizeof(key), "%s: %s", r[0].stage, r[0].text);
		if (!(c->first_reason = mem_strndup(key, strlen(key))))
			A->oom = 1;
	}
}

/* Counts `rec` under the replica that served it ("base_url"; records
 * written before replicas were recorded have none and are not counted). */
static void take_endpoint(struct report_fold *A, const struct record_view *v, int pass)
{
	const cJSON *url = v->f[RF_BASE_URL], *f;
	cJSON *e, *total;

	if (jget_type(url) != cJSON_String)
		return;
	/* an endpoint's members while folding, in the order made below:
	 * base_url, replica, total, pass, failure_codes (read by position: a
	 * lookup by name cost more than the count) */
	cJSON_ArrayForEach(e, A->eps)
		if (!strcmp(e->child->valuestring, url->valuestring))
			break;
	if (!e) {
		e = json_add_obj(&A->jb, A->eps, NULL);
		json_add_str(&A->jb, e, RK_BASE_URL, url->valuestring);
		json_add_num(&A->jb, e, RK_REPLICA, jget_numv(v->f[RF_REPLICA]));
		json_add_num(&A->jb, e, SK_TOTAL, 0);
		json_add_num(&A->jb, e, SK_PASS, 0);
		json_add_obj(&A->jb, e, SK_FAILURE_CODES);
		if (A->jb.code)
			return;
	}
	total = e->child->next->next;
	cJSON_SetNumberValue(total, total->valuedouble + 1);
	cJSON_SetNumberValue(total->next, total->next->valuedouble + pass);
	cJSON_ArrayForEach(f, v->f[RF_TR_FAILURES])
		if (jget_type(f) == cJSON_String)
			bump(A, total->next->next, f->valuestring, 1);
}

static void take_record(struct report_fold *A, const struct record_view *v)
{
	const cJSON *kind = v->f[RF_KIND], *fr = v->f[RF_FINISH_REASON], *f;
	int pass = record_view_passed(v);
	int tr_ok = jget_type(v->f[RF_TR_OK]) != cJSON_False;
	struct casetab_case *c = casetab_of(&A->ct, v->f[RF_CASE]->valuestring,
					    jget_type(kind) == cJSON_String ? kind->valuestring
									    : "unknown");

	if (!c) {
		A->oom = 1;
		return;
	}
	A->total++;
	A->pass += pass;
	c->total++;
	c->pass += pass;
	if (!pass) {
		if (!tr_ok)
			A->stage_transport++;
		else if (jget_type(v->f[RF_AU_OK]) == cJSON_False)
			A->stage_audit++;
		else
			A->stage_grade++;
	}
	cJSON_ArrayForEach(f, v->f[RF_TR_FAILURES])
		if (cJSON_IsString(f)) {
			bump(A, A->codes, f->valuestring, 1);
			if (casetab_bump(&c->codes, f->valuestring, 1))
				A->oom = 1;
		}
	take_reasons(A, c, v);
	bump(A, A->finish, jget_type(fr) == cJSON_String ? fr->valuestring : "(none)", 1);
	take_endpoint(A, v, pass);
	if (jget_type(v->f[RF_LOAD]) != cJSON_Object) /* a load request counts in its cell only */
		take_timing(A, v);
	take_audit(A, v);
	if (jget_type(v->f[RF_RECALL]) == cJSON_Object)
		take_recall(A, v, tr_ok);
}

/* Adds "rate" (null without attempts) and "wilson95" [lo, hi] to `o`. */
static void add_rate(struct json_build *jb, cJSON *o, size_t pass, size_t n)
{
	double lo, hi, rate;
	cJSON *w;

	stats_wilson(pass, n, &lo, &hi);
	json_add_item(jb, o, SK_RATE, stats_rate((double)pass, (double)n, &rate)
				     ? cJSON_CreateNumber(rate) : cJSON_CreateNull());
	w = json_add_arr(jb, o, SK_WILSON95);
	json_add_num(jb, w, NULL, lo);
	json_add_num(jb, w, NULL, hi);
}

/* Copies the scalar at m[a][b][c] (b, c may be NULL) into o[key]; null when
 * absent or not a scalar. */
static void fact(struct json_build *jb, cJSON *o, const char *key, const cJSON *m,
		 const char *a, const char *b, const char *c)
{
	const cJSON *v = jget(m, a);

	if (b)
		v = jget(v, b);
	if (c)
		v = jget(v, c);
	if (v && !cJSON_IsObject(v) && !cJSON_IsArray(v))
		json_add_dup(jb, o, key, v);
	else
		json_add_null(jb, o, key);
}

static void add_run_facts(struct json_build *jb, cJSON *s, const struct report_run *r)
{
	cJSON *o = json_add_obj(jb, s, SK_RUN);
	const cJSON *m = r->manifest;

	json_add_str(jb, o, SK_DIR, r->dir);
	fact(jb, o, SK_MODEL, m, MK_ENDPOINT, EP_SERVED_MODEL, NULL);
	fact(jb, o, SK_MAX_MODEL_LEN, m, MK_ENDPOINT, EP_MAX_MODEL_LEN, NULL);
	fact(jb, o, SK_BASE_URL, m, MK_ENDPOINT, EP_BASE_URL, NULL);
	fact(jb, o, SK_SERVER_VERSION, m, MK_ENDPOINT, EP_SERVER, EP_VERSION);
	fact(jb, o, SK_SERVER_KIND, m, MK_ENDPOINT, EP_SERVER, EP_KIND_GUESS);
	fact(jb, o, SK_SUITE, m, MK_SUITE, MK_NAME, NULL);
	fact(jb, o, SK_SUITE_PATH, m, MK_SUITE, MK_PATH, NULL);
	fact(jb, o, SK_SUITE_SHA256, m, MK_SUITE, MK_SHA256, NULL);
	fact(jb, o, SK_TOKENIZER_KIND, m, MK_TOKENIZER, MK_KIND, NULL);
	fact(jb, o, SK_TOKENIZER_SHA256, m, MK_TOKENIZER, MK_SHA256, NULL);
	fact(jb, o, SK_TEMPLATE, m, MK_TEMPLATE, MK_NAME, NULL);
	fact(jb, o, SK_TEMPLATE_SHA256, m, MK_TEMPLATE, MK_SHA256, NULL);
	fact(jb, o, SK_HARNESS_VERSION, m, MK_HARNESS, MK_VERSION, NULL);
	fact(jb, o, SK_HARNESS_COMMIT, m, MK_HARNESS, MK_COMMIT, NULL);
	fact(jb, o, SK_RUN_ID, m, MK_RUN_ID, NULL, NULL);
	fact(jb, o, SK_STARTED_AT, m, MK_STARTED_AT, NULL, NULL);
	fact(jb, o, SK_ENDED_AT, m, MK_ENDED_AT, NULL, NULL);
	fact(jb, o, SK_MERGE_NOTE, m, MK_MERGE, MK_NOTE, NULL);
	json_add_bool(jb, o, SK_HAS_MANIFEST, m != NULL);
}

/* Adds to[key] = {n, p50, p90, p99} of the samples (sorting them). */
static void add_pct(struct json_build *jb, cJSON *to, const char *key, struct stats_vec *v)
{
	static const char *const names[3] = {SK_P50, SK_P90, SK_P99};
	struct stats_pct p;
	cJSON *o = json_add_obj(jb, to, key);
	const double *val[3] = {&p.p50, &p.p90, &p.p99};
	int i;

	stats_percentiles(v->v, v->n, &p);
	json_add_num(jb, o, SK_N, (double)p.n);
	for (i = 0; i < 3; i++)
		if (p.n)
			json_add_num(jb, o, names[i], *val[i]);
		else
			json_add_null(jb, o, names[i]);
}

/* recall.latency_by_length, in the order of `len` (ascending). */
static void add_length_latency(struct report_fold *A, cJSON *rc, const long *len, size_t nl)
{
	cJSON *arr = json_add_arr(&A->jb, rc, SK_LATENCY_BY_LENGTH);
	size_t i, j;

	for (j = 0; j < nl; j++)
		for (i = 0; i < A->nll; i++)
			if (A->ll[i].tokens == len[j]) {
				cJSON *o = json_add_obj(&A->jb, arr, NULL);
				json_add_num(&A->jb, o, RK_TOKENS, (double)len[j]);
				add_pct(&A->jb, o, RK_TTFT_MS, &A->ll[i].ttft);
				add_pct(&A->jb, o, RK_E2E_MS, &A->ll[i].e2e);
			}
}

static void add_latency(struct report_fold *A)
{
	cJSON *lat = json_add_obj(&A->jb, A->s, SK_LATENCY);
	size_t i;

	for (i = 0; i < NTIMINGS; i++)
		add_pct(&A->jb, lat, timing_keys[i], &A->timing[i]);
}

static void add_audit(struct report_fold *A)
{
	struct json_build *jb = &A->jb;
	cJSON *o = json_add_obj(jb, A->s, SK_AUDIT), *dist;
	double maxabs = 0;
	size_t i, j;

	json_add_num(jb, o, SK_ENABLED, (double)A->audit_enabled);
	json_add_num(jb, o, SK_FAILED, (double)A->audit_failed);
	json_add_num(jb, o, SK_SAMPLES, (double)A->deltas.n);
	stats_sort(A->deltas.v, A->deltas.n);
	dist = json_add_arr(jb, o, SK_DELTAS);
	for (i = 0; i < A->deltas.n; i = j) {
		cJSON *b = json_add_obj(jb, dist, NULL);
		for (j = i; j < A->deltas.n && A->deltas.v[j] == A->deltas.v[i]; j++)
			;
		json_add_num(jb, b, SK_DELTA, A->deltas.v[i]);
		json_add_num(jb, b, SK_COUNT, (double)(j - i));
		if (fabs(A->deltas.v[i]) > maxabs)
			maxabs = fabs(A->deltas.v[i]);
	}
	json_add_item(jb, o, SK_MAX_ABS_DELTA, A->deltas.n ? cJSON_CreateNumber(maxabs)
							  : cJSON_CreateNull());
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The distinct depths (which = 0) or lengths (1) of the cells, ascending. */
static size_t axis(const struct report_fold *A, int which, long *out)
{
	size_t i, j, n = 0;

	for (i = 0; i < A->ncells; i++) {
		long v = which ? A->cells[i].tokens : A->cells[i].depth;
		for (j = 0; j < n && out[j] != v; j++)
			;
		if (j == n)
			out[n++] = v;
	}
	qsort(out, n, sizeof(*out), cmp_long);
	return n;
}

/* Appends {key: v, found, total, rate, wilson95} to array `to`; returns it. */
static cJSON *add_count(struct json_build *jb, cJSON *to, const char *key, long v,
			size_t found, size_t total)
{
	cJSON *o = json_add_obj(jb, to, NULL);

	json_add_num(jb, o, key, (double)v);
	json_add_num(jb, o, SK_FOUND, (double)found);
	json_add_num(jb, o, SK_TOTAL, (double)total);
	add_rate(jb, o, found, total);
	return o;
}

/* by = 0: per depth; 1: per length. */
static void add_margin(struct report_fold *A, cJSON *rc, int by, const long *vals, size_t n)
{
	cJSON *arr = json_add_arr(&A->jb, rc, by ? SK_BY_LENGTH : SK_BY_DEPTH);
	size_t i, k;

	for (k = 0; k < n; k++) {
		size_t f = 0, t = 0;
		for (i = 0; i < A->ncells; i++)
			if ((by ? A->cells[i].tokens : A->cells[i].depth) == vals[k]) {
				f += A->cells[i].found;
				t += A->cells[i].total;
			}
		add_count(&A->jb, arr, by ? RK_TOKENS : SK_DEPTH, vals[k], f, t);
	}
}

static void add_recall(struct report_fold *A)
{
	long *dep = NULL, *len = NULL;
	cJSON *rc, *cells, *da, *la;
	size_t nd, nl, i, j, k;

	if (!A->ncells) {
		json_add_null(&A->jb, A->s, SK_RECALL);
		return;
	}
	dep = mem_alloc(A->ncells * sizeof(long));
	len = mem_alloc(A->ncells * sizeof(long));
	if (!dep || !len) {
		A->oom = 1;
		goto out;
	}
	nd = axis(A, 0, dep);
	nl = axis(A, 1, len);
	rc = json_add_obj(&A->jb, A->s, SK_RECALL);
	json_add_num(&A->jb, rc, SK_ATTEMPTS, (double)A->recall_attempts);
	da = json_add_arr(&A->jb, rc, SK_DEPTHS);
	la = json_add_arr(&A->jb, rc, SK_LENGTHS);
	for (i = 0; i < nd; i++)
		json_add_num(&A->jb, da, NULL, (double)dep[i]);
	for (j = 0; j < nl; j++)
		json_add_num(&A->jb, la, NULL, (double)len[j]);
	cells = json_add_arr(&A->jb, rc, SK_CELLS);
	for (i = 0; i < nd; i++)
		for (j = 0; j < nl; j++)
			for (k = 0; k < A->ncells; k++)
				if (A->cells[k].depth == dep[i] && A->cells[k].tokens == len[j]) {
					cJSON *o = add_count(&A->jb, cells, SK_DEPTH, dep[i],
							     A->cells[k].found, A->cells[k].total);
					json_add_num(&A->jb, o, RK_TOKENS, (double)len[j]);
					json_add_num(&A->jb, o, SK_TRANSPORT_FAILED,
						     (double)A->cells[k].failed);
				}
	add_margin(A, rc, 0, dep, nd);
	add_margin(A, rc, 1, len, nl);
	add_length_latency(A, rc, len, nl);
out:
	mem_free(dep);
	mem_free(len);
}

static void acc_release(struct report_fold *A)
{
	size_t i;

	for (i = 0; i < NTIMINGS; i++)
		stats_vec_release(&A->timing[i]);
	stats_vec_release(&A->deltas);
	mem_free(A->cells);
	for (i = 0; i < A->nll; i++) {
		stats_vec_release(&A->ll[i].ttft);
		stats_vec_release(&A->ll[i].e2e);
	}
	mem_free(A->ll);
	why_fold_free(A->why);
	probesum_release(&A->probes);
}

/* planned, planned_done and complete (null without a plan: record.h; never
 * true beside "incomplete": true), and planned_note when an older plan counts
 * each load case of the run as one attempt. */
static void add_plan(struct report_fold *A, cJSON *o, const struct report_run *r,
		     const struct record_plan_count *p, int inc)
{
	struct record_plan_count pc = *p;

	json_add_item(&A->jb, o, SK_PLANNED, pc.planned < 0 ? cJSON_CreateNull()
							   : cJSON_CreateNumber((double)pc.planned));
	json_add_num(&A->jb, o, SK_PLANNED_DONE, (double)pc.done);
	json_add_item(&A->jb, o, SK_COMPLETE, pc.planned < 0 ? cJSON_CreateNull()
							    : cJSON_CreateBool(!inc));
	if (pc.planned >= 0 && pc.per_case && r->has_load)
		json_add_str(&A->jb, o, SK_PLANNED_NOTE,
			     "a load case counts as one attempt in this plan: its manifest.json "
			     "predates plans that list every load request");
}

const char *report_plan_note(const cJSON *a, char *out, size_t cap)
{
	const cJSON *note = jget(a, SK_PLANNED_NOTE);

	snprintf(out, cap, "%s%s%s", cJSON_IsString(note) ? " (" : "",
		 cJSON_IsString(note) ? note->valuestring : "", cJSON_IsString(note) ? ")" : "");
	return out;
}

/* Whether the manifest says the run stopped before its plan was done: it was
 * interrupted, or it ran fewer attempts than it planned. */
static int incomplete(const cJSON *m)
{
	const cJSON *a = jget(m, MK_ATTEMPTS);

	return cJSON_IsTrue(jget(m, MK_INTERRUPTED)) ||
	       (cJSON_IsNumber(jget(a, MK_PLANNED)) && cJSON_IsNumber(jget(a, MK_RUN)) &&
		jget_num(a, MK_RUN) < jget_num(a, MK_PLANNED));
}

static void add_totals(struct report_fold *A, const struct report_run *r)
{
	struct json_build *jb = &A->jb;
	cJSON *o = json_add_obj(jb, A->s, SK_ATTEMPTS), *st, *c;
	struct record_plan_count pc;
	int inc;

	json_add_num(jb, o, SK_TOTAL, (double)A->total);
	json_add_num(jb, o, SK_PASS, (double)A->pass);
	json_add_num(jb, o, SK_FAIL, (double)(A->total - A->pass));
	add_rate(jb, o, A->pass, A->total);
	json_add_num(jb, o, SK_TORN_BYTES_SKIPPED, (double)r->torn_bytes);
	/* one verdict: the manifest's (interrupted, fewer run than planned) or
	 * the plan's (a planned attempt without a record) */
	record_plan_done(r->manifest, &r->keys, r->globs, r->nglobs, &pc);
	inc = incomplete(r->manifest) || (pc.planned >= 0 && pc.done < pc.planned);
	json_add_bool(jb, o, SK_INCOMPLETE, inc);
	add_plan(A, o, r, &pc, inc);
	st = json_add_obj(jb, A->s, SK_FAIL_STAGES);
	json_add_num(jb, st, RK_TRANSPORT, (double)A->stage_transport);
	json_add_num(jb, st, RK_AUDIT, (double)A->stage_audit);
	json_add_num(jb, st, RK_GRADE, (double)A->stage_grade);
	cJSON_ArrayForEach(c, A->eps)
		add_rate(jb, c, (size_t)jget_num(c, SK_PASS), (size_t)jget_num(c, SK_TOTAL));
}

/* One record into the summary being folded. */
static enum err fold_take(struct report_fold *A, const struct record_view *v, struct diag *d)
{
	(void)d;
	/* a failed add may leave a case without its fields: stop at once */
	if (!A->jb.code && !A->oom) {
		take_record(A, v);
		if (why_fold_take(A->why, v))
			A->oom = 1;
		probesum_take(&A->probes, v);
	}
	return ERR_OK;
}

/* "load": the cells of the run's load cases (loadcells.h), when it has any,
 * kept typed in A->load and written once. */
static void add_load(struct report_fold *A, const struct report_run *r, struct diag *d)
{
	cJSON *load = NULL;

	if (A->jb.code || A->oom || !r->load_reqs.n)
		return;
	if (loadcells_build(&r->load_reqs, &A->load, d) || loadview_attach(&A->load, r->manifest, r->dir, d) ||
	    loadcells_sizing(&A->load, r->manifest, d) || (A->load.n && loadcells_json(&A->load, &load, d)))
		A->oom = 1;
	else if (load)
		json_add_item(&A->jb, A->s, LC_LOAD, load);
}

/* The probing recall steps (probesum.h), when the run has any. */
static void add_probes(struct report_fold *A, struct diag *d)
{
	cJSON *p = NULL;

	if (A->jb.code || A->oom)
		return;
	if (probesum_end(&A->probes, &p, d))
		A->oom = 1;
	else if (p)
		json_add_item(&A->jb, A->s, SK_PROBES, p);
}

void report_sum_release(struct report_sum *m)
{
	cJSON_Delete(m->s);
	m->s = NULL;
	casetab_release(&m->cases);
	loadcells_free(&m->load);
}

/* Sets up the summary of `r` for its records to be folded in (r->fold).
 * ERR_NOMEM. */
static enum err fold_begin(struct report_run *r, struct diag *d)
{
	struct report_fold *A = mem_calloc(1, sizeof(*A));

	if (!A || !(A->why = why_fold_new(r->dir))) {
		mem_free(A);
		return diag_fail(d, ERR_NOMEM, "out of memory summarising '%s'", r->dir);
	}
	A->run = r;
	json_build_init(&A->jb);
	probesum_init(&A->probes);
	casetab_init(&A->ct);
	A->s = json_new_obj(&A->jb);
	json_add_num(&A->jb, A->s, SK_NEEDLE_SUMMARY, 1);
	add_run_facts(&A->jb, A->s, r);
	A->eps = json_new_arr(&A->jb);
	A->codes = json_add_obj(&A->jb, A->s, SK_FAILURE_CODES);
	A->finish = json_add_obj(&A->jb, A->s, SK_FINISH_REASONS);
	r->fold = A;
	return ERR_OK;
}

/* Frees a fold not taken by report_summary. Accepts NULL. */
static void fold_free(struct report_fold *A)
{
	if (!A)
		return;
	acc_release(A);
	casetab_release(&A->ct);
	cJSON_Delete(A->eps); /* not yet in A->s */
	cJSON_Delete(A->s);
	mem_free(A);
}

enum err report_summary(struct report_run *r, struct report_sum *out, struct diag *d)
{
	struct report_fold *A = r->fold;
	enum err e;

	out->s = NULL;
	casetab_init(&out->cases);
	memset(&out->load, 0, sizeof(out->load));
	if (!A)
		return diag_fail(d, ERR_INTERNAL, "the summary of '%s' was taken already", r->dir);
	r->fold = NULL;
	add_totals(A, r);
	json_add_arr(&A->jb, A->s, SK_CASES); /* stands for A->ct (report_cases) */
	json_add_item(&A->jb, A->s, SK_ENDPOINTS, A->eps);
	add_audit(A);
	add_recall(A);
	add_latency(A);
	add_load(A, r, d);
	why_fold_summarise(A->why, r->manifest, &A->jb, A->s);
	add_probes(A, d);
	acc_release(A);
	if (A->oom) {
		e = diag_fail(d, ERR_NOMEM, "out of memory summarising '%s'", r->dir);
	} else if (!(e = json_build_end(&A->jb, &A->s, "the summary", d))) {
		out->s = A->s;
		out->cases = A->ct;
		out->load = A->load;
		casetab_init(&A->ct);
		memset(&A->load, 0, sizeof(A->load));
		A->s = NULL;
	}
	cJSON_Delete(A->s);
	casetab_release(&A->ct);
	loadcells_free(&A->load);
	mem_free(A);
	return e;
}

/* Adds the counts `c` to `o` as an object under `key`. */
static void add_counts(struct json_build *jb, cJSON *o, const char *key,
		       const struct casetab_counts *c)
{
	cJSON *to = json_add_obj(jb, o, key);
	size_t i;

	for (i = 0; i < c->len; i++)
		json_add_num(jb, to, c->key[i], c->n[i]);
}

/* One case as summary.json shows it: a new object the caller owns {id, kind,
 * total, pass, failure_codes, reasons, [first_reason,] rate, wilson95}, in
 * the order the summary has always had (a first reason, when there is one,
 * comes before the rate); NULL when out of memory. */
static cJSON *report_case_json(const struct casetab_case *c)
{
	struct json_build jb;
	cJSON *o;

	json_build_init(&jb);
	o = json_new_obj(&jb);
	json_add_str(&jb, o, SK_ID, c->id);
	json_add_str(&jb, o, SK_KIND, c->kind);
	json_add_num(&jb, o, SK_TOTAL, (double)c->total);
	json_add_num(&jb, o, SK_PASS, (double)c->pass);
	add_counts(&jb, o, SK_FAILURE_CODES, &c->codes);
	add_counts(&jb, o, SK_REASONS, &c->reasons);
	if (c->first_reason)
		json_add_str(&jb, o, SK_FIRST_REASON, c->first_reason);
	add_rate(&jb, o, c->pass, c->total);
	if (!c->first_reason)
		json_add_null(&jb, o, SK_FIRST_REASON);
	return json_build_end(&jb, &o, "a case", NULL) ? NULL : o;
}

static cJSON *case_item(void *ctx, size_t i)
{
	const struct casetab *t = ctx;

	return report_case_json(&t->c[i]);
}

struct jout_list report_cases(const struct report_sum *m, const cJSON *at)
{
	struct jout_list l = {at, m->cases.n, case_item, (void *)&m->cases};

	return l;
}

/* ---- rendering helpers ---- */

/* "17/20 (0.850, 95% CI 0.640-0.948)" or "0/0". */
static void rate_text(const cJSON *o, const char *pass_key, char *out, size_t cap)
{
	const cJSON *w = jget(o, SK_WILSON95);
	size_t p = (size_t)jget_num(o, pass_key), n = (size_t)jget_num(o, SK_TOTAL);

	if (!n)
		snprintf(out, cap, "0/0");
	else
		snprintf(out, cap, "%zu/%zu (%.3f, 95%% CI %.3f-%.3f)", p, n,
			 (double)p / (double)n, cJSON_GetArrayItem(w, 0)->valuedouble,
			 cJSON_GetArrayItem(w, 1)->valuedouble);
}

/* "a (3); b (1)" for an object of counts ('|' escaped); "-" when empty. */
static enum err counts_text(struct buf *b, const cJSON *o)
{
	const cJSON *it;
	enum err e = ERR_OK;
	int first = 1;

	cJSON_ArrayForEach(it, o) {
		if (!e && !first)
			e = buf_puts(b, "; ");
		if (!e)
			e = md_cell(b, it->string);
		if (!e)
			e = buf_printf(b, " (%.0f)", it->valuedouble);
		first = 0;
	}
	if (first)
		e = buf_puts(b, "-");
	return e;
}

static enum err sec_facts(const cJSON *s, struct buf *b)
{
	static const char *const keys[][2] = {
		{"model", SK_MODEL}, {"max_model_len", SK_MAX_MODEL_LEN},
		{"server", SK_SERVER_VERSION}, {"server kind", SK_SERVER_KIND},
		{"endpoint", SK_BASE_URL}, {"suite", SK_SUITE}, {"suite SHA-256", SK_SUITE_SHA256},
		{"tokenizer", SK_TOKENIZER_KIND}, {"tokenizer SHA-256", SK_TOKENIZER_SHA256},
		{"template", SK_TEMPLATE}, {"template SHA-256", SK_TEMPLATE_SHA256},
		{"needle", SK_HARNESS_VERSION}, {"needle commit", SK_HARNESS_COMMIT},
		{"run id", SK_RUN_ID}, {"started", SK_STARTED_AT}, {"ended", SK_ENDED_AT}};
	const cJSON *run = jget(s, SK_RUN);
	char tmp[64], note[160];
	size_t i;
	const cJSON *a = jget(s, SK_ATTEMPTS);
	enum err e = buf_printf(b, "# needle report: %s\n\n", jget(run, SK_DIR)->valuestring);

	if (!e && cJSON_IsFalse(jget(a, SK_COMPLETE)))
		e = buf_printf(b, "**INCOMPLETE: %.0f/%.0f** planned attempts recorded%s; no gate passes on this run.\n\n",
			       jget_num(a, SK_PLANNED_DONE), jget_num(a, SK_PLANNED),
			       report_plan_note(a, note, sizeof(note)));
	if (!e)
		e = buf_puts(b, "| fact | value |\n|---|---|\n");

	for (i = 0; !e && i < sizeof(keys) / sizeof(keys[0]); i++)
		e = buf_printf(b, "| %s | %s |\n", keys[i][0],
			       md_value(jget(run, keys[i][1]), tmp, sizeof(tmp)));
	if (!e && cJSON_IsString(jget(run, SK_MERGE_NOTE)))
		e = buf_printf(b, "\nMerged from shards: %s\n", jget(run, SK_MERGE_NOTE)->valuestring);
	if (!e && !cJSON_IsTrue(jget(run, SK_HAS_MANIFEST)))
		e = buf_puts(b, "\nNo manifest.json in this folder: the facts above are unknown.\n");
	if (!e && cJSON_IsTrue(jget2(s, SK_ATTEMPTS, SK_INCOMPLETE)))
		e = buf_puts(b, "\n**INCOMPLETE**: the run stopped before all its attempts were made; "
			     "the numbers below cover only what was recorded. Rerun the same command "
			     "with --resume to finish it.\n");
	return e;
}

static enum err sec_attempts(const cJSON *s, struct buf *b)
{
	const cJSON *a = jget(s, SK_ATTEMPTS), *st = jget(s, SK_FAIL_STAGES);
	char rt[128];
	enum err e;

	rate_text(a, SK_PASS, rt, sizeof(rt));
	e = buf_printf(b, "\n## Pass rate\n\nOverall: **%s** passed. Failed at transport %.0f, audit %.0f, grade %.0f.\n",
		       rt, jget_num(st, RK_TRANSPORT), jget_num(st, RK_AUDIT), jget_num(st, RK_GRADE));
	if (!e && jget_num(a, SK_TORN_BYTES_SKIPPED) > 0)
		e = buf_printf(b, "\nA torn last line (%.0f bytes) was skipped.\n",
			       jget_num(a, SK_TORN_BYTES_SKIPPED));
	return e ? e : buf_puts(b, "\n| case | kind | passed | why it failed (attempts) |\n|---|---|---|---|\n");
}

/* One row of the pass-rate table. */
static enum err case_row(void *ctx, struct buf *b, const cJSON *c)
{
	char rt[128];
	enum err e = buf_puts(b, "| ");

	(void)ctx;
	rate_text(c, SK_PASS, rt, sizeof(rt));
	if (!e)
		e = md_cell(b, jget(c, SK_ID)->valuestring);
	if (!e)
		e = buf_printf(b, " | %s | %s | ", jget(c, SK_KIND)->valuestring, rt);
	if (!e)
		e = counts_text(b, jget(c, SK_REASONS));
	return e ? e : buf_puts(b, " |\n");
}

/* Calls `fn` with each case of `m` as its summary object, made one at a
 * time; stops at the first error. */
static enum err each_case(const struct report_sum *m, struct buf *b, void *ctx,
			  enum err (*fn)(void *ctx, struct buf *b, const cJSON *c))
{
	enum err e = ERR_OK;
	size_t i;

	for (i = 0; !e && i < m->cases.n; i++) {
		cJSON *c = report_case_json(&m->cases.c[i]);
		e = c ? fn(ctx, b, c) : ERR_NOMEM;
		cJSON_Delete(c);
	}
	return e;
}

static enum err sec_finish(const cJSON *s, struct buf *b)
{
	enum err e = buf_puts(b, "\nFinish reasons: ");

	if (!e)
		e = counts_text(b, jget(s, SK_FINISH_REASONS));
	return e ? e : buf_puts(b, "\n");
}

/* Appends `s` on one line (line breaks as spaces). */
static enum err one_line(struct buf *b, const char *s)
{
	enum err e = ERR_OK;

	for (; !e && *s; s++)
		e = buf_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
	return e;
}

static enum err failure_group(struct buf *b, const cJSON *g)
{
	const cJSON *ex = jget(g, SK_EXAMPLE), *c, *raw = jget(ex, RK_RAW);
	const char *answer = jget(ex, SK_ANSWER)->valuestring;
	char tmp[32];
	int i = 0, n = cJSON_GetArraySize(jget(g, SK_CASES));
	enum err e = buf_printf(b, "\n### %s: ", jget(g, SK_STAGE)->valuestring);

	if (!e)
		e = one_line(b, jget(g, SK_KEY)->valuestring);
	if (!e)
		e = buf_printf(b, " (%.0f attempts, %d case%s)\n\nCases:", jget_num(g, SK_COUNT),
			       n, n == 1 ? "" : "s");
	cJSON_ArrayForEach(c, jget(g, SK_CASES))
		if (!e && i++ < REPORT_CASES_NAMED)
			e = buf_printf(b, "%s `%s`", i > 1 ? "," : "", c->valuestring);
	if (!e && n > REPORT_CASES_NAMED)
		e = buf_printf(b, " and %d more", n - REPORT_CASES_NAMED);
	if (!e)
		e = buf_printf(b, ".\n\nExample: `%s` repeat %s", jget(ex, RK_CASE)->valuestring,
			       md_value(jget(ex, RK_REPEAT), tmp, sizeof(tmp)));
	if (!e && cJSON_IsNumber(jget(ex, RK_SEED)))
		e = buf_printf(b, ", seed %.0f", jget_num(ex, RK_SEED));
	if (!e)
		e = buf_puts(b, ": ");
	if (!e)
		e = one_line(b, jget(ex, SK_REASON)->valuestring);
	if (!e)
		e = buf_puts(b, *answer ? "\n\n> answer: " : "\n\n> answer: (nothing)");
	if (!e)
		e = one_line(b, answer);
	if (!e && cJSON_IsString(raw))
		e = buf_printf(b, "\n\nRaw stream: `%s`", raw->valuestring);
	return e ? e : buf_puts(b, "\n");
}

static enum err sec_failures(const cJSON *s, struct buf *b)
{
	const cJSON *g, *adv;
	enum err e = buf_puts(b, "\n## Failures\n");

	cJSON_ArrayForEach(adv, jget(s, SK_ADVICE))
		if (!e && cJSON_IsString(adv))
			e = buf_printf(b, "\n**What to do:** %s.\n", adv->valuestring);
	if (!e && !cJSON_GetArraySize(jget(s, SK_FAILURES)))
		e = buf_puts(b, "\nNo attempt failed.\n");
	cJSON_ArrayForEach(g, jget(s, SK_FAILURES))
		if (!e)
			e = failure_group(b, g);
	return e;
}

/* Per endpoint, when the run used several: where the failures were. */
static enum err sec_endpoints(const cJSON *s, struct buf *b)
{
	const cJSON *eps = jget(s, SK_ENDPOINTS), *e, *failing = NULL;
	double fails = jget_num(jget(s, SK_ATTEMPTS), SK_FAIL);
	int nfailing = 0;
	char rt[128];
	enum err err;

	if (cJSON_GetArraySize(eps) < 2)
		return ERR_OK;
	err = buf_puts(b, "\n## Per endpoint\n\n| replica | base URL | passed | failure codes |\n|---|---|---|---|\n");
	cJSON_ArrayForEach(e, eps) {
		double f = jget_num(e, SK_TOTAL) - jget_num(e, SK_PASS);
		if (f > 0)
			nfailing++, failing = e;
		rate_text(e, SK_PASS, rt, sizeof(rt));
		if (!err)
			err = buf_printf(b, "| %.0f | ", jget_num(e, RK_REPLICA));
		if (!err)
			err = md_cell(b, jget(e, RK_BASE_URL)->valuestring);
		if (!err)
			err = buf_printf(b, " | %s | ", rt);
		if (!err)
			err = counts_text(b, jget(e, SK_FAILURE_CODES));
		if (!err)
			err = buf_puts(b, " |\n");
	}
	if (!err && nfailing == 1)
		err = buf_printf(b, "\nAll %.0f failures on replica %.0f (%s).\n", fails,
				 jget_num(failing, RK_REPLICA), jget(failing, RK_BASE_URL)->valuestring);
	return err;
}

static enum err sec_audit(const cJSON *s, struct buf *b)
{
	const cJSON *au = jget(s, SK_AUDIT), *it;
	char tmp[64];
	enum err e;
	int first = 1;

	e = buf_printf(b, "\n## Usage audit\n\n%.0f attempts audited, %.0f failed the audit; "
		       "%.0f usage deltas (server prompt_tokens - local count), max |delta| %s.\n",
		       jget_num(au, SK_ENABLED), jget_num(au, SK_FAILED), jget_num(au, SK_SAMPLES),
		       md_value(jget(au, SK_MAX_ABS_DELTA), tmp, sizeof(tmp)));
	if (!e && cJSON_GetArraySize(jget(au, SK_DELTAS)))
		e = buf_puts(b, "\nDelta distribution: ");
	cJSON_ArrayForEach(it, jget(au, SK_DELTAS)) {
		if (!e)
			e = buf_printf(b, "%s%+.0f x%.0f", first ? "" : ", ", jget_num(it, SK_DELTA),
				       jget_num(it, SK_COUNT));
		first = 0;
	}
	return e || first ? e : buf_puts(b, "\n");
}

static enum err margin_table(struct buf *b, const cJSON *arr, const char *key,
			  const char *title, const char *unit)
{
	const cJSON *it;
	char rt[128];
	enum err e = buf_printf(b, "\n| %s | found |\n|---|---|\n", title);

	cJSON_ArrayForEach(it, arr) {
		rate_text(it, SK_FOUND, rt, sizeof(rt));
		if (!e)
			e = buf_printf(b, "| %.0f%s | %s |\n", jget_num(it, key), unit, rt);
	}
	return e;
}

static enum err length_latency_table(struct buf *b, const cJSON *arr)
{
	const cJSON *it;
	char t1[32], t2[32], t3[32], t4[32];
	enum err e = buf_puts(b, "\n| prompt tokens | TTFT n | TTFT p50 ms | TTFT p90 ms | E2E n | E2E p50 ms | E2E p90 ms |\n|---|---|---|---|---|---|---|\n");

	cJSON_ArrayForEach(it, arr)
		if (!e)
			e = buf_printf(b, "| %.0f | %.0f | %s | %s | %.0f | %s | %s |\n", jget_num(it, RK_TOKENS),
				       jget_num(jget(it, RK_TTFT_MS), SK_N),
				       md_value(jget2(it, RK_TTFT_MS, SK_P50), t1, sizeof(t1)),
				       md_value(jget2(it, RK_TTFT_MS, SK_P90), t2, sizeof(t2)),
				       jget_num(jget(it, RK_E2E_MS), SK_N),
				       md_value(jget2(it, RK_E2E_MS, SK_P50), t3, sizeof(t3)),
				       md_value(jget2(it, RK_E2E_MS, SK_P90), t4, sizeof(t4)));
	return e;
}

static enum err sec_recall(const cJSON *s, struct buf *b)
{
	const cJSON *rc = jget(s, SK_RECALL), *d, *l, *c;
	enum err e;

	if (!cJSON_IsObject(rc))
		return ERR_OK;
	e = buf_printf(b, "\n## Recall\n\n%.0f recall attempts. Needles found, by depth (rows) and prompt tokens (columns); a needle whose attempt failed at transport counts as not found and is shown as \"no answer\". Heatmap in recall.png.\n\n| depth |",
		       jget_num(rc, SK_ATTEMPTS));
	cJSON_ArrayForEach(l, jget(rc, SK_LENGTHS))
		if (!e)
			e = buf_printf(b, " %.0f |", l->valuedouble);
	if (!e)
		e = buf_puts(b, "\n|---|");
	cJSON_ArrayForEach(l, jget(rc, SK_LENGTHS))
		if (!e)
			e = buf_puts(b, "---|");
	cJSON_ArrayForEach(d, jget(rc, SK_DEPTHS)) {
		if (!e)
			e = buf_printf(b, "\n| %.0f%% |", d->valuedouble);
		cJSON_ArrayForEach(l, jget(rc, SK_LENGTHS)) {
			const cJSON *hit = NULL;
			cJSON_ArrayForEach(c, jget(rc, SK_CELLS))
				if (jget_num(c, SK_DEPTH) == d->valuedouble &&
				    jget_num(c, RK_TOKENS) == l->valuedouble)
					hit = c;
			if (!e && hit && jget_num(hit, SK_TRANSPORT_FAILED) > 0)
				e = buf_printf(b, " %.0f/%.0f (%.0f no answer) |", jget_num(hit, SK_FOUND),
					       jget_num(hit, SK_TOTAL), jget_num(hit, SK_TRANSPORT_FAILED));
			else if (!e)
				e = hit ? buf_printf(b, " %.0f/%.0f |", jget_num(hit, SK_FOUND), jget_num(hit, SK_TOTAL))
					: buf_puts(b, " - |");
		}
	}
	if (!e)
		e = buf_puts(b, "\n");
	if (!e)
		e = margin_table(b, jget(rc, SK_BY_DEPTH), SK_DEPTH, "depth", "%");
	if (!e)
		e = margin_table(b, jget(rc, SK_BY_LENGTH), RK_TOKENS, "prompt tokens", "");
	return e ? e : length_latency_table(b, jget(rc, SK_LATENCY_BY_LENGTH));
}

int report_timed(const cJSON *latency)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, latency)
		if (jget_num(it, SK_N) > 0)
			return 1;
	return 0;
}

static enum err sec_latency(const cJSON *s, struct buf *b)
{
	const cJSON *it;
	char t50[32], t90[32], t99[32];
	enum err e;

	if (!report_timed(jget(s, SK_LATENCY)))
		return buf_puts(b, "\n## Latency\n\n" REPORT_UNTIMED);
	e = buf_puts(b, "\n## Latency (ms, nearest-rank percentiles)\n\n| timing | n | p50 | p90 | p99 |\n|---|---|---|---|---|\n");

	cJSON_ArrayForEach(it, jget(s, SK_LATENCY)) {
		if (!e)
			e = buf_printf(b, "| %s | %.0f | %s | %s | %s |\n", it->string, jget_num(it, SK_N),
				       md_value(jget(it, SK_P50), t50, sizeof(t50)),
				       md_value(jget(it, SK_P90), t90, sizeof(t90)),
				       md_value(jget(it, SK_P99), t99, sizeof(t99)));
	}
	return e;
}

/* The load cells' sections (loadcells.h, loadview.h), made inert as
 * md_render makes its own. */
static enum err load_markdown(const struct report_sum *m, struct buf *out, struct diag *d)
{
	size_t from = out->len;
	enum err e = loadcells_markdown(&m->load, out);

	if (!e)
		e = loadview_markdown(&m->load, out);
	if (!e)
		e = ctl_escape_from(out, from);
	if (e == ERR_NOMEM)
		return diag_fail(d, e, "out of memory rendering the report");
	return e ? diag_fail(d, e, "cannot render the report: %s", err_name(e)) : ERR_OK;
}

enum err report_markdown(const struct report_sum *m, struct buf *out, struct diag *d)
{
	static const md_section head[] = {sec_facts, sec_attempts};
	static const md_section tail[] = {sec_finish, sec_endpoints, sec_failures, sec_audit,
					  sec_recall, sec_latency};
	static const md_section last[] = {probesum_markdown};
	enum err e = md_render(m->s, head, sizeof(head) / sizeof(head[0]), "report", out, d);
	size_t rows = out->len;

	/* the rows md_render does not make are made inert here */
	if (!e && ((e = each_case(m, out, NULL, case_row)) || (e = ctl_escape_from(out, rows))))
		return diag_fail(d, e, "cannot render the report: %s",
				 e == ERR_NOMEM ? "out of memory" : err_name(e));
	if (!e)
		e = md_render(m->s, tail, sizeof(tail) / sizeof(tail[0]), "report", out, d);
	if (!e)
		e = load_markdown(m, out, d);
	return e ? e : md_render(m->s, last, sizeof(last) / sizeof(last[0]), "report", out, d);
}

/* ---- terminal ---- */

/* Appends `s` on one line, cut to `max` bytes at a character boundary
 * ("..." marks the cut). */
static enum err cut_text(struct buf *b, const char *s, size_t max)
{
	size_t n = strlen(s), i;
	enum err e = ERR_OK;

	if (n > max)
		while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
			max--;
	else
		max = n;
	for (i = 0; !e && i < max; i++)
		e = buf_putc(b, s[i] == '\n' || s[i] == '\r' ? ' ' : s[i]);
	return e || max == n ? e : buf_puts(b, "...");
}

/* The line of a failing case, "failing cases:" before the first (*ctx
 * counts them). */
static enum err term_case(void *ctx, struct buf *b, const cJSON *c)
{
	int *failing = ctx;
	const cJSON *fr = jget(c, SK_FIRST_REASON), *it;
	double total = jget_num(c, SK_TOTAL), fail = total - jget_num(c, SK_PASS);
	enum err e = ERR_OK;
	int first = 1;

	if (!(fail > 0))
		return ERR_OK;
	if (!(*failing)++)
		e = buf_puts(b, "failing cases:\n");
	if (!e)
		e = buf_printf(b, "  %s: %.0f of %.0f failed (", jget(c, SK_ID)->valuestring, fail, total);

	cJSON_ArrayForEach(it, jget(c, SK_REASONS)) {
		if (!e)
			e = buf_printf(b, "%s%s x%.0f", first ? "" : "; ", it->string, it->valuedouble);
		first = 0;
	}
	if (!e)
		e = buf_puts(b, ")");
	if (!e && cJSON_IsString(fr))
		e = buf_puts(b, ": ");
	if (!e && cJSON_IsString(fr))
		e = cut_text(b, fr->valuestring, REPORT_TERM_REASON);
	return e ? e : buf_puts(b, "\n");
}

enum err report_terminal(const struct report_sum *m, struct buf *out, struct diag *d)
{
	const cJSON *adv, *summary = m->s;
	enum err e = ERR_OK;
	size_t i;
	int failing = 0;
	size_t from = out->len;

	if (cJSON_IsTrue(jget2(summary, SK_ATTEMPTS, SK_INCOMPLETE)))
		e = buf_puts(out, "INCOMPLETE: the run stopped before all its attempts were made\n");
	if (!e)
		e = each_case(m, out, &failing, term_case);
	cJSON_ArrayForEach(adv, jget(summary, SK_ADVICE))
		if (!e && cJSON_IsString(adv))
			e = buf_printf(out, "what to do: %s\n", adv->valuestring);
	for (i = 0; !e && i < m->load.nwarnings; i++)
		e = buf_printf(out, "warning: %s\n", m->load.warnings[i]);
	if (!e) /* answers and ids quoted are shown, not obeyed */
		e = ctl_escape_from(out, from);
	if (e)
		return diag_fail(d, e, "cannot render the end-of-run summary: %s", err_name(e));
	return ERR_OK;
}

/* ---- heatmap ---- */

/* Copies the numbers of an array into v[0..). */
static void fill_axis(const cJSON *arr, double *v)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		*v++ = it->valuedouble;
}

/* The index of `x` in v[0..n), or -1. */
static int axis_index(const double *v, int n, double x)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

/* "MODEL M  RUN R  DATE" from the summary's facts (R: the folder's name). */
static void heatmap_title(const cJSON *s, char *out, size_t cap)
{
	const cJSON *run = jget(s, SK_RUN), *when = jget(run, SK_STARTED_AT);
	const char *dir = jget(run, SK_DIR)->valuestring, *base = strrchr(dir, '/');
	char tmp[64];

	base = base && base[1] ? base + 1 : dir;
	snprintf(out, cap, "MODEL %s  RUN %s  %.10s", md_value(jget(run, SK_MODEL), tmp, sizeof(tmp)),
		 base, cJSON_IsString(when) ? when->valuestring : "DATE UNKNOWN");
}

enum err report_heatmap(const cJSON *summary, struct buf *png, struct diag *d)
{
	const cJSON *rc = jget(summary, SK_RECALL), *c;
	double *dep, *len, *found, *total, *failed;
	struct heatmap h;
	char title[512];
	size_t cells;
	enum err e;

	if (!cJSON_IsObject(rc) || !cJSON_GetArraySize(jget(rc, SK_CELLS)))
		return ERR_OK;
	h.ndepths = cJSON_GetArraySize(jget(rc, SK_DEPTHS));
	h.nlengths = cJSON_GetArraySize(jget(rc, SK_LENGTHS));
	cells = (size_t)h.ndepths * (size_t)h.nlengths;
	dep = mem_calloc((size_t)h.ndepths + (size_t)h.nlengths + 3 * cells + 1, sizeof(*dep));
	if (!dep)
		return diag_fail(d, ERR_NOMEM, "out of memory drawing the heatmap");
	len = dep + h.ndepths;
	found = len + h.nlengths;
	total = found + cells;
	failed = total + cells;
	fill_axis(jget(rc, SK_DEPTHS), dep);
	fill_axis(jget(rc, SK_LENGTHS), len);
	cJSON_ArrayForEach(c, jget(rc, SK_CELLS)) {
		int i = axis_index(dep, h.ndepths, jget_num(c, SK_DEPTH));
		int j = axis_index(len, h.nlengths, jget_num(c, RK_TOKENS));
		if (i >= 0 && j >= 0) {
			found[(size_t)i * (size_t)h.nlengths + (size_t)j] = jget_num(c, SK_FOUND);
			total[(size_t)i * (size_t)h.nlengths + (size_t)j] = jget_num(c, SK_TOTAL);
			failed[(size_t)i * (size_t)h.nlengths + (size_t)j] =
				jget_num(c, SK_TRANSPORT_FAILED);
		}
	}
	h.depths = dep;
	h.lengths = len;
	h.found = found;
	h.total = total;
	h.failed = failed;
	heatmap_title(summary, title, sizeof(title));
	h.title = title;
	e = heatmap_png(&h, png, d);
	mem_free(dep);
	return e;
}

/* ---- files ---- */

/* DIR/NAME followed by `suffix` into path[0..PATHBUF). */
static enum err path_in(const char *dir, const char *name, const char *suffix,
			char path[PATHBUF], struct diag *d)
{
	int n = snprintf(path, PATHBUF, "%s/%s%s", dir, name, suffix);

	if (n < 0 || n >= PATHBUF)
		return diag_fail(d, ERR_USAGE, "path '%s/%s' is too long", dir, name);
	return ERR_OK;
}

struct out_file {
	const char *name;
	const struct buf *b;
};

/* Writes the files as a set: each is staged as DIR/NAME.staged.PID (itself
 * written whole by io_write_file), then all are renamed into place. A failure
 * while staging (out of memory, a full disk) removes what was staged and
 * leaves the old files as they were; only a failed rename(2) can leave the
 * set half replaced, each file still whole. */
static enum err write_set(const char *dir, const struct out_file *f, size_t n,
			  struct diag *d)
{
	char suffix[32], staged[PATHBUF], path[PATHBUF];
	size_t i, done = 0;
	enum err e = ERR_OK;

	snprintf(suffix, sizeof(suffix), ".staged.%ld", (long)getpid());
	for (; !e && done < n; done++) /* counts the failed one: io cleans up its own */
		if (!(e = path_in(dir, f[done].name, suffix, staged, d)))
			e = io_write_file(staged, f[done].b->data, f[done].b->len, d);
	for (i = 0; !e && i < n; i++) {
		if ((e = path_in(dir, f[i].name, suffix, staged, d)) ||
		    (e = path_in(dir, f[i].name, "", path, d)))
			break;
		if (rename(staged, path) != 0)
			e = diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	}
	for (i = 0; e && i < done; i++)
		if (!path_in(dir, f[i].name, suffix, staged, NULL))
			unlink(staged);
	return e;
}

void report_files_release(struct report_files *f)
{
	report_sum_release(&f->summary);
	buf_release(&f->json);
	buf_release(&f->md);
	buf_release(&f->png);
	buf_release(&f->load_png);
	buf_release(&f->csv);
}

/* load.png (loadplot.h), titled as the heatmap. */
static enum err report_loadplot(const struct report_sum *m, struct buf *png, struct diag *d)
{
	char title[512];

	heatmap_title(m->s, title, sizeof(title));
	return loadplot_summary(&m->load, title, png, d);
}

enum err report_render(struct report_run *r, struct report_files *f, struct diag *d)
{
	struct jout_list cases;
	enum err e;

	f->summary.s = NULL;
	casetab_init(&f->summary.cases);
	memset(&f->summary.load, 0, sizeof(f->summary.load));
	buf_init(&f->json, BUF_MAX_DEFAULT);
	buf_init(&f->md, BUF_MAX_DEFAULT);
	buf_init(&f->png, BUF_MAX_DEFAULT);
	buf_init(&f->load_png, BUF_MAX_DEFAULT);
	buf_init(&f->csv, BUF_MAX_DEFAULT);
	if ((e = report_summary(r, &f->summary, d)))
		goto out;
	f->csv = r->csv; /* the rows folded while loading */
	buf_init(&r->csv, BUF_MAX_DEFAULT);
	cases = report_cases(&f->summary, jget(f->summary.s, SK_CASES));
	if ((e = jout_print(f->summary.s, &cases, 1, 1, &f->json, NULL, "the summary", d)) ||
	    (e = report_markdown(&f->summary, &f->md, d)) ||
	    (e = report_heatmap(f->summary.s, &f->png, d)) ||
	    (e = report_loadplot(&f->summary, &f->load_png, d)))
		goto out;
	return ERR_OK;
out:
	report_files_release(f);
	return e;
}

enum err report_save(const struct report_files *f, const char *dir, struct diag *d)
{
	struct out_file files[5] = {{"summary.json", &f->json}, {"summary.md", &f->md},
				    {REPORT_CSV_NAME, &f->csv}, {"recall.png", &f->png}};
	size_t n = f->png.len ? 4 : 3;

	if (f->load_png.len)
		files[n].name = "load.png", files[n++].b = &f->load_png;
	return write_set(dir, files, n, d);
}

enum err report_write(const char *dir, struct report_sum *summary_out, struct diag *d)
{
	struct report_run *r = NULL;
	struct report_files f;
	enum err e;

	if (summary_out) {
		summary_out->s = NULL;
		casetab_init(&summary_out->cases);
	}
	if ((e = report_load(dir, NULL, &r, d)))
		return e;
	if (!(e = report_render(r, &f, d))) {
		if (!(e = report_save(&f, dir, d)) && summary_out) {
			*summary_out = f.summary;
			f.summary.s = NULL;
			casetab_init(&f.summary.cases);
			memset(&f.summary.load, 0, sizeof(f.summary.load));
		}
		report_files_release(&f);
	}
	report_run_free(r);
	return e;
}
