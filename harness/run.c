/* run — see run.h. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "buf.h"
#include "endpoint.h"
#include "grade.h"
#include "haystack.h"
#include "http.h"
#include "io.h"
#include "json.h"
#include "mem.h"
#include "record.h"
#include "req.h"
#include "results.h"
#include "run.h"
#include "stream.h"
#include "suite.h"
#include "tok.h"
#include "toolturn.h"
#include "tpl_model.h"

#define RAW_MAX ((size_t)512 << 20)

/* One attempt in flight. */
struct attempt {
	const struct suite_case *c;
	long repeat;
	int has_seed;              /* key seed: recall seed, else sampling seed */
	long seed;
	struct req req;
	struct stream st;
	struct buf raw;            /* the raw response bytes */
	char url[ENDPOINT_URL_MAX];
	struct grade_needle needles[HAYSTACK_MAX_NEEDLES];
	char projects[HAYSTACK_MAX_NEEDLES][64];
	char codes[HAYSTACK_MAX_NEEDLES][32];
	int nneedles;
	struct audit_count count;  /* the local prompt count */
	char prompt_sha256[IO_SHA256_HEX]; /* recall: of the rendered prompt */
	double start_ms;
	char started_at[32];
	int feed_failed;
	char feed_msg[DIAG_MSG_MAX];
	int round;                 /* 1; 2 = the answer after a tool result */
	struct grade g;            /* accumulates over both rounds */
	cJSON *round1;             /* owned summary of round 1 when round == 2 */
	cJSON *calls1;             /* owned tool calls of round 1 */
	struct audit_result audit1;/* the audit of round 1 when round == 2 */
};

struct run {
	const struct run_opts *o;
	struct suite *suite;
	char suite_dir[4096];
	char dir[4096];
	struct tok *tok;
	struct tpl *tpl;
	struct audit_ctx audit;
	struct results *res;
	struct http_multi *multi;
	struct endpoint ep;
	struct buf warnings;       /* from loading a model folder (tpl_model.h) */
	cJSON *manifest;
	struct run_counts n;
	/* cursor over (case, repeat, seed) */
	size_t ci;
	long ri;
	int si;
	struct attempt **slots;
	size_t nslots;
};

/* ---- the attempt cursor ---- */

static int seeds_of(const struct suite_case *c)
{
	return c->kind == SUITE_RECALL ? c->recall.nseeds : 1;
}

static long repeats_of(const struct run *r, const struct suite_case *c)
{
	return r->o->repeat > 0 ? r->o->repeat : c->repeat;
}

static int selected(const struct run *r, const struct suite_case *c)
{
	return !r->o->case_glob || !fnmatch(r->o->case_glob, c->id, 0);
}

static void key_seed(const struct suite_case *c, int si, int *has, long *seed)
{
	if (c->kind == SUITE_RECALL) {
		*has = 1;
		*seed = c->recall.seeds[si];
	} else {
		*has = c->has_seed;
		*seed = c->seed;
	}
}

/* Advances to the next attempt not yet recorded; 0 when none is left. */
static int next_attempt(struct run *r, const struct suite_case **c,
			long *repeat, int *has_seed, long *seed)
{
	char key[1024];

	for (; r->ci < r->suite->ncases; r->ci++, r->ri = 0, r->si = 0) {
		const struct suite_case *k = &r->suite->cases[r->ci];
		if (!selected(r, k))
			continue;
		for (; r->ri < repeats_of(r, k); r->ri++, r->si = 0) {
			for (; r->si < seeds_of(k); r->si++) {
				key_seed(k, r->si, has_seed, seed);
				record_key(k->id, r->ri + 1, *has_seed, *seed, key, sizeof(key));
				if (results_has(r->res, key))
					continue;
				*c = k;
				*repeat = r->ri + 1;
				r->si++;
				return 1;
			}
		}
	}
	return 0;
}

static size_t count_todo(struct run *r)
{
	const struct suite_case *c;
	long repeat, seed;
	int has;
	size_t n = 0, ci = r->ci;
	long ri = r->ri;
	int si = r->si;

	while (next_attempt(r, &c, &repeat, &has, &seed))
		n++;
	r->ci = ci, r->ri = ri, r->si = si;
	return n;
}

/* Every attempt the options select, recorded or not, as "planned" in the
 * manifest (record_manifest_plan). */
static enum err add_plan(struct run *r, struct diag *d)
{
	struct json_build jb;
	cJSON *keys;
	char key[1024];
	size_t ci;
	long ri, seed;
	int si, has;

	json_build_init(&jb);
	keys = json_new_arr(&jb);
	for (ci = 0; ci < r->suite->ncases && !jb.code; ci++) {
		const struct suite_case *k = &r->suite->cases[ci];
		if (!selected(r, k))
			continue;
		for (ri = 0; ri < repeats_of(r, k); ri++)
			for (si = 0; si < seeds_of(k); si++) {
				key_seed(k, si, &has, &seed);
				record_key(k->id, ri + 1, has, seed, key, sizeof(key));
				json_add_str(&jb, keys, NULL, key);
			}
	}
	if (json_build_end(&jb, &keys, "the plan", d))
		return d->code;
	return record_manifest_plan(r->manifest, keys, d);
}

/* ---- preparing one attempt ---- */

/* Keeps the asked needles of `h` for grading. */
static void keep_needles(struct attempt *a, const struct haystack *h)
{
	int i;

	for (i = 0; i < h->nneedles && a->nneedles < HAYSTACK_MAX_NEEDLES; i++) {
		int k = a->nneedles;
		if (!h->needle[i].asked)
			continue;
		snprintf(a->projects[k], sizeof(a->projects[k]), "%s", h->needle[i].project);
		snprintf(a->codes[k], sizeof(a->codes[k]), "%s", h->needle[i].code);
		a->needles[k].project = a->projects[k];
		a->needles[k].code = a->codes[k];
		a->needles[k].depth = h->needle[i].depth;
		a->nneedles++;
	}
}

static enum err build_recall(struct run *r, struct attempt *a, struct diag *d)
{
	const struct suite_recall *rc = &a->c->recall;
	struct haystack_opts ho;
	struct tpl_render_opts ro = {0};
	struct haystack h;
	int i;
	enum err e;

	memset(&ho, 0, sizeof(ho));
	memset(&h, 0, sizeof(h));
	ro.server = r->ep.server;
	ro.reasoning_effort = cJSON_GetObjectItemCaseSensitive(a->c->json, "reasoning_effort");
	ho.tok = r->tok;
	ho.tpl = r->tpl;
	ho.kwargs = a->c->kwargs;
	ho.render = &ro;
	ho.tokens = rc->tokens;
	ho.seed = (uint64_t)a->seed;
	for (i = 0; i < rc->ndepths; i++)
		ho.depths[i] = rc->depths[i];
	ho.ndepths = rc->ndepths;
	ho.needles = rc->needles;
	ho.filler = rc->filler;
	ho.distractors = rc->distractors;
	e = haystack_build(&ho, &h, d);
	if (!e)
		e = req_build(&a->req, a->c, h.messages, r->ep.model, r->suite_dir, d);
	if (!e) {
		a->count.local_tokens = (long long)h.prompt_tokens;
		memcpy(a->prompt_sha256, h.prompt_sha256, IO_SHA256_HEX);
		keep_needles(a, &h);
	}
	if (e)
		diag_prefix(d, "case '%s' seed %ld", a->c->id, a->seed);
	haystack_release(&h);
	return e;
}

/* Default timeouts scale with the prompt (a 1M-token prefill takes minutes:
 * seed report 002 §7 measured ~97 s to the first token). */
static void timeouts(const struct run *r, const struct attempt *a,
		     struct http_req *hr)
{
	double tokens = a->count.local_tokens >= 0 ? (double)a->count.local_tokens
						   : (double)a->req.body.len / 3.0;
	double first = 60.0 + tokens / 1000.0 * 0.5;
	double maxt = a->c->max_tokens ? (double)a->c->max_tokens : 4096.0;

	hr->first_byte_s = first;
	hr->timeout_s = first + maxt * 0.1;
	hr->idle_s = 120.0;
	if (r->o->timeout > 0) {
		hr->timeout_s = r->o->timeout;
		hr->first_byte_s = r->o->timeout;
	}
	if (r->o->idle_timeout > 0)
		hr->idle_s = r->o->idle_timeout;
}

static int on_data(void *ctx, const char *bytes, size_t n, double now_ms)
{
	struct attempt *a = ctx;
	struct diag d;

	if (a->feed_failed)
		return 1;
	diag_init(&d);
	if (buf_append(&a->raw, bytes, n) ||
	    stream_feed(&a->st, bytes, n, now_ms, &d)) {
		a->feed_failed = 1;
		snprintf(a->feed_msg, sizeof(a->feed_msg), "%s",
			 d.code ? d.msg : "response larger than needle keeps");
		return 1;
	}
	return 0;
}

static void attempt_free(struct attempt *a)
{
	if (!a)
		return;
	req_release(&a->req);
	stream_release(&a->st);
	buf_release(&a->raw);
	grade_release(&a->g);
	cJSON_Delete(a->round1);
	cJSON_Delete(a->calls1);
	mem_free(a);
}

/* Starts (or restarts, for round 2) the HTTP request of `a` with a fresh
 * stream and raw buffer. */
static enum err send_attempt(struct run *r, struct attempt *a, struct diag *d)
{
	struct http_req hr;

	snprintf(a->url, sizeof(a->url), "%s%s", r->ep.base, a->req.path);
	record_utc_now(a->started_at, sizeof(a->started_at));
	a->start_ms = io_now_ms();
	stream_release(&a->st);
	stream_init(&a->st, a->req.endpoint == REQ_COMPLETIONS ? STREAM_COMPLETIONS
							       : STREAM_CHAT, a->start_ms);
	buf_reset(&a->raw);
	a->feed_failed = 0;
	a->feed_msg[0] = '\0';
	memset(&hr, 0, sizeof(hr));
	hr.url = a->url;
	hr.body = a->req.body.data;
	hr.body_len = a->req.body.len;
	hr.api_key = r->o->api_key;
	hr.on_data = on_data;
	hr.ctx = a;
	hr.user = a;
	timeouts(r, a, &hr);
	return http_multi_add(r->multi, &hr, d);
}

/* Prepares and starts one attempt. ERR_INPUT etc. for a case that cannot be
 * built (the run stops: the suite or tokenizer is wrong). */
static enum err start_attempt(struct run *r, const struct suite_case *c,
			      long repeat, int has_seed, long seed,
			      struct attempt **out, struct diag *d)
{
	struct attempt *a = mem_calloc(1, sizeof(*a));
	enum err e;

	*out = NULL;
	if (!a)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	a->c = c, a->repeat = repeat, a->has_seed = has_seed, a->seed = seed;
	a->round = 1;
	grade_init(&a->g);
	stream_init(&a->st, STREAM_CHAT, io_now_ms());
	req_init(&a->req);
	buf_init(&a->raw, RAW_MAX);
	a->count.local_tokens = -1;
	if (c->kind == SUITE_RECALL) {
		e = build_recall(r, a, d);
	} else {
		e = req_build(&a->req, c, c->messages, r->ep.model, r->suite_dir, d);
		if (!e)
			e = audit_count_case(&r->audit, c, c->messages, &a->count, d);
		if (e)
			diag_prefix(d, "case '%s'", c->id);
	}
	if (!e)
		e = send_attempt(r, a, d);
	if (!e) {
		*out = a;
		return ERR_OK;
	}
	attempt_free(a);
	return e;
}

/* ---- judging and recording ---- */

/* The record's view of attempt `a` after request `dn`. */
static void record_view(const struct run *r, const struct attempt *a,
			const struct http_done *dn, const struct stream_checks *ck,
			const struct audit_result *au, const char *raw_name,
			struct record_attempt *v)
{
	memset(v, 0, sizeof(*v));
	v->c = a->c, v->repeat = a->repeat, v->has_seed = a->has_seed, v->seed = a->seed;
	v->st = &a->st, v->ck = ck, v->http_status = dn->status, v->audit = au;
	v->g = &a->g;
	v->tool_calls = a->calls1;
	v->round1 = a->round1;
	v->request_sha256 = a->req.sha256;
	v->endpoint = a->req.path;
	v->model = r->ep.model;
	v->started_at = a->started_at;
	v->raw_name = raw_name;
	v->response_bytes = a->raw.len;
	v->prompt_sha256 = a->prompt_sha256;
}

static void judge_audit(const struct run *r, const struct attempt *a,
			struct audit_result *out)
{
	audit_judge(&a->count, r->tok && r->tpl, &a->st.usage, a->c->usage_tolerance, out);
}

static void tally(struct run *r, const struct record_verdict *v,
		  const struct stream_checks *ck, long status)
{
	int pass = v->transport_ok && v->audit_ok && v->grade_ok;

	r->n.done++;
	if (pass) {
		r->n.pass++;
		return;
	}
	r->n.fail++;
	r->n.fail_transport += !v->transport_ok;
	r->n.fail_audit += v->transport_ok && !v->audit_ok;
	r->n.fail_grade += v->transport_ok && v->audit_ok && !v->grade_ok;
	if (stream_checks_has(ck, STREAM_F_CONNECT) ||
	    (stream_checks_has(ck, STREAM_F_HTTP_STATUS) && (status == 401 || status == 403)))
		r->n.refused++;
}

/* Keeps what round 1 of a tool case showed, writes its raw bytes, and sends
 * round 2: the tool results, for the final answer. */
static enum err start_round2(struct run *r, struct attempt *a,
			     const struct http_done *dn,
			     const struct stream_checks *ck, const char *raw_name,
			     struct diag *d)
{
	char name1[300];
	struct record_attempt v;
	cJSON *msgs = NULL;
	size_t n = strlen(raw_name);
	enum err e;

	snprintf(name1, sizeof(name1), "%.*s-round1.sse", (int)(n > 4 ? n - 4 : n), raw_name);
	e = results_write_raw(r->res, name1, a->raw.data, a->raw.len, d);
	if (e)
		return e;
	judge_audit(r, a, &a->audit1);
	a->calls1 = record_tool_calls(&a->st);
	record_view(r, a, dn, ck, &a->audit1, name1, &v);
	a->round1 = a->calls1 ? record_round(&v) : NULL;
	if (a->round1)
		msgs = toolturn_messages(a->c, &a->st, a->calls1);
	if (!msgs)
		e = diag_fail(d, ERR_NOMEM, "out of memory preparing a tool result");
	if (!e)
		e = req_build(&a->req, a->c, msgs, r->ep.model, r->suite_dir, d);
	cJSON_Delete(msgs);
	a->round = 2;
	if (!e)
		e = send_attempt(r, a, d);
	return e;
}

/* Grades the round of `a` that just ended. */
static enum err grade_round(struct attempt *a, struct diag *d)
{
	const struct stream *s = &a->st;

	if (a->round == 2)
		return grade_final(&a->c->expect, s->content.data, &a->g, d);
	if (a->c->kind == SUITE_RECALL)
		return grade_recall(a->needles, a->nneedles, s->content.data,
				    s->content.len, &a->g, d);
	return grade_answer(&a->c->expect, s, cJSON_GetArraySize(a->c->messages), &a->g, d);
}

/* Journals attempt `a`: raw bytes first, then the record (so a record never
 * points at missing raw bytes). */
static enum err journal(struct run *r, struct attempt *a, const struct http_done *dn,
			const struct stream_checks *ck, const char *raw_name,
			struct diag *d)
{
	struct record_attempt v;
	struct record_verdict verdict;
	struct audit_result au;
	cJSON *rec;
	enum err e = results_write_raw(r->res, raw_name, a->raw.data, a->raw.len, d);

	if (e)
		return e;
	if (a->round1)
		au = a->audit1;
	else
		judge_audit(r, a, &au);
	record_view(r, a, dn, ck, &au, raw_name, &v);
	v.transport_msg = dn->fail ? dn->msg : a->feed_msg;
	rec = record_new(&v, &verdict);
	e = rec ? results_append(r->res, rec, d)
		: diag_fail(d, ERR_NOMEM, "out of memory writing a result");
	if (!e)
		tally(r, &verdict, ck, dn->status);
	cJSON_Delete(rec);
	return e;
}

/* Judges a finished request of `a`. A tool case whose round 1 passed goes on
 * to round 2 (`*again` = 1, the attempt stays in flight); otherwise the record
 * is journalled. */
static enum err finish_attempt(struct run *r, struct attempt *a,
			       const struct http_done *dn, int *again,
			       struct diag *d)
{
	struct stream_transport tr = {dn->status, dn->fail, dn->msg};
	struct stream_expect x = {1, a->c->ignore_eos ? a->c->max_tokens : -1};
	struct stream_checks ck;
	char raw_name[256];
	enum err e;

	*again = 0;
	if (a->feed_failed && tr.fail == HTTP_FAIL_NONE) {
		tr.fail = HTTP_FAIL_OTHER;
		tr.msg = a->feed_msg;
	}
	stream_end(&a->st, dn->end_ms);
	stream_check(&a->st, &tr, &x, &ck);
	results_raw_name(a->c->id, a->repeat, a->has_seed, a->seed, raw_name, sizeof(raw_name));
	e = grade_round(a, d);
	if (!e && a->round == 1 && a->c->expect.round2) {
		if (ck.n == 0 && a->g.ok) {
			*again = 1;
			return start_round2(r, a, dn, &ck, raw_name, d);
		}
		grade_fail(&a->g, "final answer not requested: round 1 failed");
		if (a->g.nomem)
			e = diag_fail(d, ERR_NOMEM, "out of memory grading an answer");
	}
	return e ? e : journal(r, a, dn, &ck, raw_name, d);
}

/* ---- the loop ---- */

static enum err fill_slots(struct run *r, struct diag *d)
{
	size_t i;

	for (i = 0; i < r->nslots; i++) {
		const struct suite_case *c;
		long repeat, seed;
		int has;
		enum err e;

		if (r->slots[i])
			continue;
		if (!next_attempt(r, &c, &repeat, &has, &seed))
			return ERR_OK;
		e = start_attempt(r, c, repeat, has, seed, &r->slots[i], d);
		if (e)
			return e;
	}
	return ERR_OK;
}

static void drop_slot(struct run *r, struct attempt *a)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (r->slots[i] == a)
			r->slots[i] = NULL;
	attempt_free(a);
}

static void progress(const struct run *r, int force)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_ctx, r, force);
}

static enum err loop(struct run *r, struct diag *d)
{
	struct http_done dn;
	enum err e = fill_slots(r, d);

	while (!e && http_multi_pending(r->multi)) {
		e = http_multi_poll(r->multi, r->o->poll_ms > 0 ? r->o->poll_ms : 1000, d);
		while (!e && http_multi_next(r->multi, &dn)) {
			struct attempt *a = dn.user;
			int again = 0;
			e = finish_attempt(r, a, &dn, &again, d);
			if (!again || e)
				drop_slot(r, a);
		}
		progress(r, 0);
		if (!e)
			e = fill_slots(r, d);
	}
	return e;
}

enum err run_go(struct run *r, struct diag *d)
{
	enum err e;

	progress(r, 1);
	e = loop(r, d);
	if (!e)
		e = record_manifest_end(r->manifest, r->n.total, r->n.done, r->n.pass, r->n.fail,
					r->n.prior_pass + r->n.prior_fail, d);
	if (!e)
		e = results_write_manifest(r->res, r->manifest, d);
	return e;
}

/* ---- set-up ---- */

static enum err check_inputs(struct run *r, struct diag *d)
{
	size_t i, n = 0;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];
		if (!selected(r, c))
			continue;
		n++;
		if (c->kind == SUITE_RECALL && (!r->o->tokenizer ||
						 (!r->o->template_name && !tpl_model_is_dir(r->o->tokenizer))))
			return diag_fail(d, ERR_USAGE,
					 "recall case '%s' needs '--tokenizer' and '--template' to build its documents",
					 c->id);
	}
	if (!n)
		return diag_fail(d, ERR_USAGE, "no case of '%s' matches '--case %s'",
				 r->suite->path, r->o->case_glob);
	if (!!r->o->tokenizer != (r->o->template_name || tpl_model_is_dir(r->o->tokenizer)))
		return diag_fail(d, ERR_USAGE,
				 "the token audit needs both '--tokenizer' and '--template'");
	return ERR_OK;
}

static void folders(struct run *r)
{
	const char *slash = strrchr(r->suite->path, '/');
	time_t t = time(NULL);
	struct tm tm;
	char stamp[32];

	if (slash)
		snprintf(r->suite_dir, sizeof(r->suite_dir), "%.*s",
			 (int)(slash - r->suite->path), r->suite->path);
	else
		snprintf(r->suite_dir, sizeof(r->suite_dir), ".");
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (r->o->out)
		snprintf(r->dir, sizeof(r->dir), "%s", r->o->out);
	else
		snprintf(r->dir, sizeof(r->dir), "results/%s-%s", r->suite->name, stamp);
}

static enum err load_locals(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;

	r->audit.bos_id = -1;
	e = tpl_model_load(r->o->tokenizer, r->o->template_name, &r->tok, &r->tpl,
			   &r->warnings, d);
	if (!e && r->tok)
		r->audit.bos_id = audit_bos_id(r->tok, r->o->tokenizer);
	r->audit.tok = r->tok;
	r->audit.tpl = r->tpl;
	return e;
}

static enum err discover(struct run *r, struct diag *d)
{
	struct endpoint_opts eo = {0};
	enum err e;

	eo.model = r->o->model;
	eo.api_key = r->o->api_key;
	eo.api_key_env = r->o->api_key_env;
	eo.timeout = r->o->timeout;
	eo.server_forced = r->o->server_forced;
	eo.server = r->o->server;
	e = endpoint_discover(&r->ep, &eo, d);
	r->audit.server = r->ep.server;
	return e;
}

static enum err write_manifest(struct run *r, struct diag *d)
{
	struct record_manifest m = {0};
	char base[ENDPOINT_URL_MAX];
	cJSON *old = NULL;
	enum err e = ERR_OK;

	endpoint_redact(r->ep.base, base, sizeof(base));
	m.suite = r->suite, m.base_url = base, m.endpoint = r->ep.json;
	m.tokenizer_path = r->o->tokenizer, m.tok = r->tok, m.bos_id = r->audit.bos_id;
	m.tpl = r->tpl, m.server = r->ep.server, m.server_from = r->ep.server_source;
	m.opts.concurrency = r->o->concurrency, m.opts.repeat = r->o->repeat;
	m.opts.timeout = r->o->timeout, m.opts.idle_timeout = r->o->idle_timeout;
	m.opts.case_glob = r->o->case_glob, m.opts.api_key_env = r->o->api_key_env;
	m.opts.server = r->o->server_name, m.opts.resume = r->o->resume;
	r->ep.json = NULL;
	if (!(r->manifest = record_manifest_new(&m)))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if ((e = add_plan(r, d)))
		return e;
	if (r->o->resume && !(e = results_read_manifest(r->dir, &old, d)))
		e = record_manifest_resume(r->manifest, old, r->dir, d);
	cJSON_Delete(old);
	if (!e)
		e = results_open(r->dir, r->o->resume, &r->res, d);
	if (!e) {
		r->res->redact = r->o->redact;
		r->n.prior_pass = r->res->prior_pass;
		r->n.prior_fail = r->res->prior_fail;
		e = results_write_manifest(r->res, r->manifest, d);
	}
	return e;
}

enum err run_open(const struct run_opts *o, const char *suite_path,
		  struct run **out, struct diag *d)
{
	struct run *r = mem_calloc(1, sizeof(*r));
	enum err e;

	*out = r;
	if (!r)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	r->o = o;
	buf_init(&r->warnings, 1 << 20);
	endpoint_init(&r->ep);
	e = endpoint_set_base(&r->ep, o->base_url, d);
	if (!e)
		e = suite_load(suite_path, &r->suite, d);
	if (!e) {
		folders(r);
		e = check_inputs(r, d);
	}
	if (!e)
		e = load_locals(r, d);
	if (!e)
		e = http_multi_new(&r->multi, d);
	if (!e)
		e = discover(r, d);
	if (!e)
		e = write_manifest(r, d);
	r->nslots = (size_t)o->concurrency;
	if (!e && !(r->slots = mem_calloc(r->nslots, sizeof(*r->slots))))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e)
		r->n.total = count_todo(r);
	return e;
}

struct run_counts run_counts(const struct run *r)
{
	struct run_counts zero = {0};

	return r ? r->n : zero;
}

const char *run_dir(const struct run *r)
{
	return r->dir;
}

const char *run_warnings(const struct run *r)
{
	return r ? r->warnings.data : "";
}

int run_slowest(const struct run *r, const char **id, long *repeat,
		double *start_ms)
{
	const struct attempt *sa = NULL;
	size_t i;

	for (i = 0; r->slots && i < r->nslots; i++)
		if (r->slots[i] && (!sa || r->slots[i]->start_ms < sa->start_ms))
			sa = r->slots[i];
	if (!sa)
		return 0;
	*id = sa->c->id;
	*repeat = sa->repeat;
	*start_ms = sa->start_ms;
	return 1;
}

int run_status(const struct run *r)
{
	if (r->n.done && r->n.refused == r->n.done)
		return EXIT_ENDPOINT;
	if (r->n.fail || r->n.prior_fail)
		return EXIT_FAIL;
	return EXIT_PASS;
}

void run_free(struct run *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->slots && i < r->nslots; i++)
		attempt_free(r->slots[i]);
	mem_free(r->slots);
	http_multi_free(r->multi);
	results_free(r->res);
	cJSON_Delete(r->manifest);
	endpoint_release(&r->ep);
	buf_release(&r->warnings);
	tok_free(r->tok);
	tpl_free(r->tpl);
	suite_free(r->suite);
	mem_free(r);
}
