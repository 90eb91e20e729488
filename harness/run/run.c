/* run — the attempt loop of the run engine (run.h, run_int.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "base/mem.h"
#include "load/arrival.h"
#include "run_int.h"
#include "parity.h"
#include "toolturn.h"

#define RAW_MAX ((size_t)512 << 20)

/* ---- the attempt cursor ---- */

/* Whether an attempt is in flight; the requests of a load case are left out
 * with `but_load` (a cache probe run "during" it waits for its own steps, not
 * for the load it is meant to meet). */
static int busy(const struct run *r, int but_load)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (r->slots[i] && !(but_load && r->slots[i]->is_load))
			return 1;
	return 0;
}

/* 1 when a cursor skips case `k`: `dl` is the load case whose "during"
 * cases it walks, NULL for the suite's own cursor (which skips those). */
static int skips(const struct run *r, const struct suite_case *dl,
		 const struct suite_case *k)
{
	if (!run_selected(r, k))
		return 1;
	if (!dl)
		return k->during != NULL;
	return !k->during || strcmp(k->during, dl->id);
}

/* Advances cursor `u` to the next attempt not yet recorded; 0 when none is
 * left, 2 when the next case is a load case (*c; the cursor stays on it), 3
 * when the next attempt must wait for those in flight (a warm cache step). */
static int next_attempt(struct run *r, struct cursor *u, const struct suite_case *dl,
			const struct suite_case **c, long *repeat, int *has_seed,
			long *seed, int *step)
{
	char key[RECORD_KEY_MAX];

	for (; u->ci < r->suite->ncases; u->ci++, u->ri = 0, u->si = 0) {
		const struct suite_case *k = &r->suite->cases[u->ci];
		if (skips(r, dl, k))
			continue;
		if (k->kind == SUITE_LOAD) {
			*c = k;
			return 2;
		}
		for (; u->ri < run_repeats(r, k); u->ri++, u->si = 0) {
			for (; u->si < run_seeds(k); u->si++) {
				if (r->mine && !r->mine[r->first[u->ci] +
							(size_t)u->ri * (size_t)run_seeds(k) + (size_t)u->si])
					continue;
				run_key_seed(k, u->si, has_seed, seed);
				*step = run_step(k, u->si);
				run_attempt_key(k, *step, u->ri + 1, *has_seed, *seed, key, sizeof(key));
				if (results_has(r->res, key))
					continue;
				if (k->kind == SUITE_RECALL &&
				    recprobe_waits(&k->recall, *step) && busy(r, dl != NULL))
					return 3;
				*c = k;
				*repeat = u->ri + 1;
				u->si++;
				return 1;
			}
		}
	}
	return 0;
}

/* Bytes of the strings in `v`, its keys included (no allocation). */
static double text_bytes(const cJSON *v)
{
	const cJSON *it;
	double n = v->string ? (double)strlen(v->string) : 0;

	if (cJSON_IsString(v))
		return n + (double)strlen(v->valuestring);
	cJSON_ArrayForEach(it, v)
		n += text_bytes(it);
	return n;
}

/* An attempt's weight for the ETA (run.h): about its prompt tokens. */
static double case_weight(const struct suite_case *c)
{
	double prompt = c->kind == SUITE_RECALL ? (double)c->recall.tokens
						: (c->json ? text_bytes(c->json) / 4 : 0);

	return prompt + RUN_WEIGHT_BASE;
}

/* The requests of load case `c` not recorded yet (--resume). */
static size_t load_todo(const struct run *r, const struct suite_case *c)
{
	const struct loadspec *s = run_load_spec(r, c);
	char key[RECORD_KEY_MAX];
	long i, total = loadplan_total(s);
	size_t n = 0;

	for (i = 1; i <= total; i++) {
		record_key(c->id, i, r->load.shares != NULL, s->seed, key, sizeof(key));
		n += !results_has(r->res, key);
	}
	return n;
}

/* The attempts left on cursor `u` (a copy) over the cases of `dl` (as
 * next_attempt), counting each load case with its own "during" cases. */
static size_t todo(struct run *r, struct cursor u, const struct suite_case *dl)
{
	const struct suite_case *c;
	long repeat, seed;
	int has, step, more;
	size_t n = 0;

	while ((more = next_attempt(r, &u, dl, &c, &repeat, &has, &seed, &step))) {
		if (more == 2) {
			struct cursor d0 = {0, 0, 0};
			size_t left = load_todo(r, c);
			n += left + todo(r, d0, c);
			r->n.weight_total += (double)left * case_weight(c);
			u.ci++;
			continue;
		}
		n++;
		r->n.weight_total += case_weight(c);
	}
	return n;
}

void run_count_unneeded(struct run *r, const struct suite_case *c, long n)
{
	r->n.total -= (size_t)n < r->n.total ? (size_t)n : r->n.total;
	r->n.weight_total -= (double)n * case_weight(c);
}

void run_count_todo(struct run *r)
{
	r->n.weight_total = 0;
	r->n.total = todo(r, r->cur, NULL);
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

long long run_context_room(const struct run *r)
{
	if (r->eps[0].max_model_len < 0)
		return -1;
	return r->eps[0].max_model_len - (r->eps[0].server == TPL_SERVER_SGLANG);
}

/* The prompt size of recall case `c`: its "tokens", or for "max" the
 * server's room (run_context_room) minus max_tokens. */
static enum err recall_tokens(const struct run *r, const struct suite_case *c,
			      long *out, struct diag *d)
{
	long long room;

	*out = c->recall.tokens;
	if (c->recall.tokens != SUITE_TOKENS_MAX)
		return ERR_OK;
	if (run_context_room(r) < 0)
		return diag_fail(d, ERR_INPUT, "recall \"tokens\": \"max\" needs the server's "
				 "max_model_len, and /v1/models did not give one");
	room = run_context_room(r) - (c->max_tokens > 0 ? c->max_tokens : 1);
	if (room < 64)
		return diag_fail(d, ERR_INPUT, "recall \"tokens\": \"max\": max_model_len %lld "
				 "leaves %lld prompt tokens after max_tokens (at least 64 needed)",
				 r->eps[0].max_model_len, room);
	*out = (long)room;
	return ERR_OK;
}

/* The document of `a` (haystack.h): kept from an earlier repeat, or built
 * now and kept for the repeats after it (doccache.h). *own holds a document
 * built and not kept. */
static enum err recall_doc(struct run *r, struct attempt *a, const char *key,
			   const char *preface, struct haystack *own,
			   const struct haystack **out, struct diag *d)
{
	const struct suite_recall *rc = &a->c->recall;
	struct haystack_opts ho;
	struct tpl_render_opts ro = {0};
	int i;
	enum err e;

	if ((*out = doccache_get(&r->docs, key)))
		return ERR_OK;
	memset(&ho, 0, sizeof(ho));
	ro.server = r->eps[0].server;
	ro.reasoning_effort = cJSON_GetObjectItemCaseSensitive(a->c->json, "reasoning_effort");
	ho.tok = r->tok;
	ho.tpl = r->tpl;
	ho.kwargs = a->c->kwargs;
	ho.render = &ro;
	ho.tokens = a->recall_tokens;
	ho.seed = (uint64_t)a->seed;
	ho.preface = preface;
	ho.code_shift = recprobe_code_shift(rc, a->step);
	ho.ask_reversed = recprobe_reversed(rc, a->step);
	for (i = 0; i < rc->ndepths; i++)
		ho.depths[i] = rc->depths[i];
	ho.ndepths = rc->ndepths;
	ho.needles = rc->needles;
	ho.filler = rc->filler;
	ho.distractors = rc->distractors;
	e = haystack_build(&ho, own, d);
	/* a cache probe's document is its repeat's own (the preface): kept for none */
	if (!e && !(*out = doccache_put(&r->docs, key, own,
					*preface ? 1 : run_repeats(r, a->c) - a->repeat + 1)))
		*out = own;
	return e;
}

static enum err build_recall(struct run *r, struct attempt *a, struct diag *d)
{
	const struct haystack *h = NULL;
	struct haystack own;
	char key[DOCCACHE_KEY_MAX], preface[128];
	enum err e;

	memset(&own, 0, sizeof(own));
	e = recall_tokens(r, a->c, &a->recall_tokens, d);
	if (e) {
		diag_prefix(d, "case '%s'", a->c->id);
		return e;
	}
	/* every parameter of the document that differs between attempts */
	recprobe_preface(&a->c->recall, r->nonce, r->suite->cases[a->c->index].id, a->repeat,
			 a->seed, preface, sizeof(preface));
	snprintf(key, sizeof(key), "%s\x1f%ld\x1f%d\x1f%ld\x1f%s", a->c->id, a->seed, a->step,
		 a->recall_tokens, preface);
	e = recall_doc(r, a, key, preface, &own, &h, d);
	if (!e)
		e = req_build(&a->req, a->c, h->messages, r->eps[0].model, r->suite_dir, d);
	if (!e) {
		a->count.local_tokens = (long long)h->prompt_tokens;
		memcpy(a->prompt_sha256, h->prompt_sha256, IO_SHA256_HEX);
		keep_needles(a, h);
	}
	if (e)
		diag_prefix(d, "case '%s' seed %ld", a->c->id, a->seed);
	doccache_done(&r->docs, key);
	haystack_release(&own);
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
	hr->tls = &r->tls;
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
	enum err e;

	if (a->feed_failed)
		return 1;
	diag_init(&d);
	e = buf_append(&a->raw, bytes, n);
	if (e == ERR_LIMIT) {
		a->feed_failed = 2; /* needle's cap, not the server's failure */
		snprintf(a->feed_msg, sizeof(a->feed_msg),
			 "the response body exceeds needle's cap of %zu bytes", a->raw.max);
		return 1;
	}
	if (e || stream_feed(&a->st, bytes, n, now_ms, &d)) {
		a->feed_failed = d.code == ERR_LIMIT ? 2 : 1;
		snprintf(a->feed_msg, sizeof(a->feed_msg), "%s",
			 d.code ? d.msg : "out of memory keeping the response");
		return 1;
	}
	return 0;
}

void run_attempt_free(struct attempt *a)
{
	if (!a)
		return;
	req_release(&a->req);
	stream_release(&a->st);
	buf_release(&a->raw);
	if (a->parity) {
		stream_release(&a->first.st);
		buf_release(&a->first.raw);
	}
	grade_release(&a->g);
	loadgen_release(&a->lp);
	cJSON_Delete(a->round1);
	cJSON_Delete(a->calls1);
	mem_free(a);
}

enum err run_send(struct run *r, struct attempt *a, struct diag *d)
{
	struct http_req hr;

	snprintf(a->url, sizeof(a->url), "%s%s", r->eps[a->replica].base, a->req.path);
	record_utc_now(a->started_at, sizeof(a->started_at));
	a->started_unix_ms = record_unix_ms();
	a->start_ms = io_now_ms();
	stream_release(&a->st);
	if (a->req.whole)
		stream_init_whole(&a->st, a->req.endpoint == REQ_COMPLETIONS ? STREAM_COMPLETIONS
									     : STREAM_CHAT, a->start_ms);
	else
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

static enum err journal(struct run *r, struct attempt *a, const struct http_done *dn,
			const struct stream_checks *ck, const char *raw_name,
			struct diag *d);

/* Pre-flight (docs/protocol.md "Context-length refusals"): whether the local prompt count plus
 * max_tokens exceeds the server's max_model_len; the reason in `why`. Older
 * vLLM and SGLang answer such a request with HTTP 400; vLLM 0.32 refuses only
 * prompt >= max_model_len and serves the rest with max_tokens shortened
 * (make test-vllm measures both), so the attempt is not sent either way: its
 * answer would not have the max_tokens the case asks for. Without a local
 * count or a max_model_len nothing is known: 0. */
static int cannot_fit(const struct run *r, const struct attempt *a, char *why,
		      size_t cap)
{
	long long n = run_context_room(r), p = a->count.local_tokens;
	long m = a->c->max_tokens;

	if (n < 0 || p < 0 || p + (m > 0 ? m : 1) <= n)
		return 0;
	if (m > 0)
		snprintf(why, cap, "not sent: the prompt (%lld tokens, counted locally) plus "
			 "max_tokens %ld is %lld tokens, over the server's max_model_len %lld",
			 p, m, p + m, r->eps[0].max_model_len);
	else
		snprintf(why, cap, "not sent: the prompt (%lld tokens, counted locally) "
			 "leaves no room in the server's max_model_len %lld", p,
			 r->eps[0].max_model_len);
	return 1;
}

enum err run_not_sent(struct run *r, struct attempt *a, enum stream_fail code,
		      const char *why, struct diag *d)
{
	struct http_done dn;
	struct stream_checks ck;
	char raw_name[256];
	enum err e;

	memset(&dn, 0, sizeof(dn));
	memset(&ck, 0, sizeof(ck));
	dn.start_ms = dn.end_ms = io_now_ms();
	dn.first_byte_ms = -1;
	ck.n = 1;
	ck.f[0].code = code;
	snprintf(ck.f[0].msg, sizeof(ck.f[0].msg), "%s", why);
	stream_end(&a->st, dn.end_ms);
	grade_fail(&a->g, "not graded: the request was not sent");
	record_utc_now(a->started_at, sizeof(a->started_at));
	a->started_unix_ms = record_unix_ms();
	if ((e = results_raw_name(a->c->id, a->repeat, a->has_seed, a->seed, raw_name,
				  sizeof(raw_name), d)))
		return e;
	return journal(r, a, &dn, &ck, raw_name, d);
}

/* The replica for a new attempt: the fewest requests in flight, ties in
 * turn. */
static int pick_replica(struct run *r)
{
	int i, k, best = r->turn % r->neps;

	for (i = 1; i < r->neps; i++) {
		k = (r->turn + i) % r->neps;
		if (r->inflight[k] < r->inflight[best])
			best = k;
	}
	r->turn = best + 1;
	return best;
}

struct attempt *run_attempt_new(struct run *r)
{
	struct attempt *a = mem_calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->round = 1;
	a->replica = pick_replica(r);
	a->count.local_tokens = -1;
	grade_init(&a->g);
	stream_init(&a->st, STREAM_CHAT, io_now_ms());
	req_init(&a->req);
	buf_init(&a->raw, RAW_MAX);
	return a;
}

/* Prepares and starts one attempt. ERR_INPUT etc. for a case that cannot be
 * built (the run stops: the suite or tokenizer is wrong). An attempt that
 * cannot fit the context is journalled at once and *out stays NULL. */
static enum err start_attempt(struct run *r, const struct suite_case *c,
			      long repeat, int has_seed, long seed, int step,
			      struct attempt **out, struct diag *d)
{
	struct attempt *a = run_attempt_new(r);
	char why[STREAM_MSG_MAX];
	enum err e;

	*out = NULL;
	if (!a)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	a->c = c, a->repeat = repeat, a->has_seed = has_seed, a->seed = seed;
	a->idle = c->during && !r->load.c; /* fill_during starts these after the load */
	if (c->kind == SUITE_RECALL && recprobe_steps(&c->recall) > 1) {
		/* the step is a case of its own id */
		a->step = step;
		recprobe_step_id(c->id, &c->recall, step, a->step_id, sizeof(a->step_id));
		a->lcase = *c;
		a->lcase.id = a->step_id;
		a->lcase.recall.tokens = recprobe_tokens(&c->recall, step);
		a->c = &a->lcase;
	}
	if (c->kind == SUITE_RECALL) {
		e = build_recall(r, a, d);
	} else {
		e = req_build(&a->req, c, c->messages, r->eps[0].model, r->suite_dir, d);
		if (!e)
			e = audit_count_case(&r->audit, c, c->messages, &a->count, d);
		if (e)
			diag_prefix(d, "case '%s'", c->id);
	}
	if (!e && cannot_fit(r, a, why, sizeof(why))) {
		e = run_not_sent(r, a, STREAM_F_CONTEXT_OVERFLOW, why, d);
		run_attempt_free(a);
		return e;
	}
	if (!e)
		e = run_send(r, a, d);
	if (!e) {
		r->inflight[a->replica]++;
		*out = a;
		return ERR_OK;
	}
	run_attempt_free(a);
	return e;
}

struct attempt **run_empty_slot(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (!r->slots[i])
			return &r->slots[i];
	return NULL;
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
	v->model = r->eps[0].model;
	v->started_at = a->started_at;
	v->started_unix_ms = a->started_unix_ms;
	v->raw_name = raw_name;
	v->response_bytes = a->raw.len;
	v->prompt_sha256 = a->prompt_sha256;
	v->recall_tokens = a->recall_tokens;
}

static void judge_audit(const struct run *r, const struct attempt *a,
			struct audit_result *out)
{
	audit_judge(&a->count, r->tok && r->tpl, &a->st.usage, a->c->usage_tolerance, out);
}

/* What an attempt adds to the counts once its record is durable: the note
 * queued with the record (results_collect hands it back). */
struct done_note {
	struct record_verdict v;
	int refused;     /* the server could not be reached or refused the key */
	double weight;   /* case_weight */
};
_Static_assert(sizeof(struct done_note) <= JOURNAL_NOTE_MAX, "a note the journal keeps whole");

static void note_of(const struct record_verdict *v, const struct stream_checks *ck,
		    long status, double weight, struct done_note *n)
{
	memset(n, 0, sizeof(*n));
	n->v = *v;
	n->refused = stream_checks_has(ck, STREAM_F_CONNECT) ||
		     (stream_checks_has(ck, STREAM_F_HTTP_STATUS) && (status == 401 || status == 403));
	n->weight = weight;
}

/* results_collect's callback: counts an attempt whose record is durable. */
static enum err tally(void *ctx, const void *note, struct diag *d)
{
	struct run *r = ctx;
	struct done_note n;
	const struct record_verdict *v = &n.v;

	(void)d;
	memcpy(&n, note, sizeof(n));
	r->n.done++;
	r->n.weight_done += n.weight;
	if (v->transport_ok && v->audit_ok && v->grade_ok) {
		r->n.pass++;
		return ERR_OK;
	}
	r->n.fail++;
	r->n.fail_transport += !v->transport_ok;
	r->n.fail_audit += v->transport_ok && !v->audit_ok;
	r->n.fail_grade += v->transport_ok && v->audit_ok && !v->grade_ok;
	r->n.refused += n.refused != 0;
	return ERR_OK;
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
	enum err e = ERR_OK;

	snprintf(name1, sizeof(name1), "%.*s-round1.sse", (int)(n > 4 ? n - 4 : n), raw_name);
	judge_audit(r, a, &a->audit1);
	a->calls1 = record_tool_calls(&a->st);
	record_view(r, a, dn, ck, &a->audit1, name1, &v);
	a->round1 = a->calls1 ? record_round(&v) : NULL;
	if (a->round1)
		msgs = toolturn_messages(a->c, &a->st, a->calls1);
	if (!msgs)
		e = diag_fail(d, ERR_NOMEM, "out of memory preparing a tool result");
	if (!e)
		e = results_queue_raw(r->res, name1, &a->raw, d);
	if (!e)
		e = req_build(&a->req, a->c, msgs, r->eps[0].model, r->suite_dir, d);
	cJSON_Delete(msgs);
	a->round = 2;
	if (!e)
		e = run_send(r, a, d);
	return e;
}

/* Grades the round of `a` that just ended. */
static enum err grade_round(struct attempt *a, struct diag *d)
{
	const struct stream *s = &a->st;

	if (a->round == 2)
		return grade_final(&a->c->expect, s->content.data, s->content.len,
				   &a->g, d);
	if (a->c->kind == SUITE_RECALL)
		return grade_recall(a->needles, a->nneedles, s->content.data,
				    s->content.len, &a->g, d);
	return grade_answer(&a->c->expect, s, cJSON_GetArraySize(a->c->messages), &a->g, d);
}

/* Queues record `rec` (taken); it counts once durable (tally). */
static enum err append(struct run *r, cJSON *rec, const struct record_verdict *v,
		       const struct stream_checks *ck, long status, double weight,
		       struct diag *d)
{
	struct done_note note;
	enum err e;

	note_of(v, ck, status, weight, &note);
	e = results_queue(r->res, rec, &note, sizeof(note), d);
	cJSON_Delete(rec);
	return e;
}

/* Journals the record `rec` (taken) of attempt `a`, or holds it when `a` is
 * a cache step before its group's last: then the group's records go in
 * together, so an interruption leaves none of a group (recprobe.h). */
static enum err commit(struct run *r, const struct attempt *a, cJSON *rec,
		       const struct record_verdict *v, const struct stream_checks *ck,
		       long status, struct diag *d)
{
	const struct suite_recall *rc = &a->c->recall;
	enum err e = ERR_OK;
	struct held *h;
	int i;

	if (a->c == &a->lcase && !a->is_load && !recprobe_group_ends(rc, a->step)) {
		if (r->nheld == RECPROBE_CACHE_STEPS - 1) {
			cJSON_Delete(rec);
			return diag_fail(d, ERR_INTERNAL, "a cache group overlaps another");
		}
		h = &r->held[r->nheld++];
		h->rec = rec, h->v = *v, h->ck = *ck, h->status = status;
		h->weight = case_weight(a->c);
		return ERR_OK;
	}
	for (i = 0; i < r->nheld; i++) {
		h = &r->held[i];
		if (!e)
			e = append(r, h->rec, &h->v, &h->ck, h->status, h->weight, d);
		else
			cJSON_Delete(h->rec);
		h->rec = NULL;
	}
	r->nheld = 0;
	if (e) {
		cJSON_Delete(rec);
		return e;
	}
	return append(r, rec, v, ck, status, case_weight(a->c), d);
}

/* Journals attempt `a`: raw bytes first, then the record (so a record never
 * points at missing raw bytes); it counts once durable (tally). */
static enum err journal(struct run *r, struct attempt *a, const struct http_done *dn,
			const struct stream_checks *ck, const char *raw_name,
			struct diag *d)
{
	struct record_attempt v;
	struct record_verdict verdict;
	struct audit_result au;
	struct record_load load;
	struct record_probe probe;
	char base[ENDPOINT_URL_MAX];
	cJSON *rec;
	enum err e;

	if (a->round1)
		au = a->audit1;
	else
		judge_audit(r, a, &au);
	record_view(r, a, dn, ck, &au, raw_name, &v);
	v.transport_msg = dn->fail ? dn->msg : a->feed_msg;
	endpoint_redact(r->eps[a->replica].base, base, sizeof(base));
	v.replica = a->replica;
	v.base_url = base;
	if (a->is_load) {
		run_load_view(a, &load);
		v.load = &load;
	}
	v.during = a->c->during;
	v.under_load = !a->idle;
	if (a->c == &a->lcase && !a->is_load &&
	    recprobe_view(&r->suite->cases[a->c->index].recall, a->step, r->nonce, &a->st, &probe))
		v.probe = &probe;
	rec = record_new(&v, &verdict);
	if (!rec)
		return diag_fail(d, ERR_NOMEM, "out of memory writing a result");
	a->passed = verdict.transport_ok && verdict.audit_ok && verdict.grade_ok;
	if ((e = results_queue_raw(r->res, raw_name, &a->raw, d))) {
		cJSON_Delete(rec);
		return e;
	}
	return commit(r, a, rec, &verdict, ck, dn->status, d);
}

/* After the round that just ended (its checks `ck`): a tool case whose round
 * 1 passed goes on to round 2 (`*again` = 1, the attempt stays in flight);
 * otherwise the record is journalled. */
static enum err after_round(struct run *r, struct attempt *a, const struct http_done *dn,
			    const struct stream_checks *ck, const char *raw_name, int *again,
			    struct diag *d)
{
	enum err e = ERR_OK;

	if (a->round == 1 && a->c->expect.round2) {
		if (ck->n == 0 && a->g.ok) {
			*again = 1;
			return start_round2(r, a, dn, ck, raw_name, d);
		}
		grade_fail(&a->g, "final answer not requested: round 1 failed");
		if (a->g.nomem)
			e = diag_fail(d, ERR_NOMEM, "out of memory grading an answer");
	}
	if (!e && a->idle) {
		grade_fail(&a->g, "not under load: load case '%s' had ended when this attempt started",
			   a->c->during);
		if (a->g.nomem)
			e = diag_fail(d, ERR_NOMEM, "out of memory grading an answer");
	}
	return e ? e : journal(r, a, dn, ck, raw_name, d);
}

/* How the transfer of `a`'s request ended, a stop of needle's own reading
 * (a cap) included. */
static struct stream_transport transport_of(const struct attempt *a, const struct http_done *dn)
{
	struct stream_transport tr = {dn->status, dn->fail, dn->msg, 0};

	if (a->feed_failed && tr.fail == HTTP_FAIL_NONE) {
		tr.fail = HTTP_FAIL_OTHER;
		tr.msg = a->feed_msg;
		tr.too_large = a->feed_failed == 2;
	}
	return tr;
}

/* Round 1 of a "parity" case arrived whole: it waits in a->first while the
 * same request goes again, not streamed. */
static enum err start_twin(struct run *r, struct attempt *a, const struct http_done *dn,
			   struct diag *d)
{
	enum err e;

	a->first.st = a->st;
	a->first.raw = a->raw;
	a->first.dn = *dn;
	a->first.start_ms = a->start_ms;
	a->first.started_unix_ms = a->started_unix_ms;
	memcpy(a->first.started_at, a->started_at, sizeof(a->started_at));
	memcpy(a->first.sha256, a->req.sha256, sizeof(a->req.sha256));
	stream_init(&a->st, STREAM_CHAT, a->start_ms); /* now a->first's: not released */
	buf_init(&a->raw, a->first.raw.max);
	a->parity = 1;
	a->req.whole = 1;
	e = req_build(&a->req, a->c, a->c->messages, r->eps[0].model, r->suite_dir, d);
	if (!e)
		e = run_send(r, a, d);
	a->req.whole = 0; /* round 2 streams */
	return e;
}

/* The non-streamed twin ended: judged against round 1 (parity.h), its body
 * kept as RAW-NAME.json, then round 1 goes on as if it had just ended. */
static enum err end_twin(struct run *r, struct attempt *a, const struct http_done *dn,
			 const struct stream_expect *x, const char *raw_name, int *again,
			 struct diag *d)
{
	struct stream_transport tr = transport_of(a, dn);
	struct stream_checks ck;
	char twin[300];
	size_t n = strlen(raw_name);
	enum err e;

	stream_end(&a->st, dn->end_ms);
	stream_check(&a->st, &tr, x, &ck);
	parity_judge(&a->first.st, &a->st, &ck, &a->g);
	snprintf(twin, sizeof(twin), "%.*s-whole.json", (int)(n > 4 ? n - 4 : n), raw_name);
	e = a->g.nomem ? diag_fail(d, ERR_NOMEM, "out of memory grading an answer")
		       : results_queue_raw(r->res, twin, &a->raw, d);
	stream_release(&a->st);
	buf_release(&a->raw);
	a->st = a->first.st;
	a->raw = a->first.raw;
	a->start_ms = a->first.start_ms;
	a->started_unix_ms = a->first.started_unix_ms;
	memcpy(a->started_at, a->first.started_at, sizeof(a->started_at));
	memcpy(a->req.sha256, a->first.sha256, sizeof(a->req.sha256));
	a->parity = 0;
	a->feed_failed = 0; /* round 1 passed transport: its reading was whole */
	a->feed_msg[0] = '\0';
	if (e)
		return e;
	tr = transport_of(a, &a->first.dn);
	stream_check(&a->st, &tr, x, &ck);
	return after_round(r, a, &a->first.dn, &ck, raw_name, again, d);
}

/* Judges a finished request of `a`: round 1 of a "parity" case that passed
 * transport is asked again without streaming first (start_twin); then the
 * round goes on (after_round). */
static enum err finish_attempt(struct run *r, struct attempt *a,
			       const struct http_done *dn, int *again,
			       struct diag *d)
{
	struct stream_transport tr = transport_of(a, dn);
	struct stream_expect x = {1, a->c->ignore_eos ? a->c->max_tokens : -1,
				  a->c->max_tokens};
	struct stream_checks ck;
	char raw_name[256];
	enum err e;

	*again = 0;
	if ((e = results_raw_name(a->c->id, a->repeat, a->has_seed, a->seed, raw_name,
				  sizeof(raw_name), d)))
		return e;
	if (a->parity)
		return end_twin(r, a, dn, &x, raw_name, again, d);
	stream_end(&a->st, dn->end_ms);
	stream_check(&a->st, &tr, &x, &ck);
	e = grade_round(a, d);
	if (!e && a->round == 1 && a->c->parity && ck.n == 0) {
		*again = 1;
		return start_twin(r, a, dn, d);
	}
	return e ? e : after_round(r, a, dn, &ck, raw_name, again, d);
}

/* ---- the loop ---- */

/* Starts the attempts of the cases run during load case r->load.during once
 * its load is under way (a first request after its pre-check has ended);
 * those left when it ends run after it. */
static enum err fill_during(struct run *r, struct diag *d)
{
	struct attempt **slot;
	enum err e = ERR_OK;

	if (!r->load.during || (r->load.c && r->load.finished < 1))
		return ERR_OK;
	while (!e && (slot = run_empty_slot(r))) {
		const struct suite_case *c;
		long repeat, seed;
		int has, step;
		int next = next_attempt(r, &r->load.dcur, r->load.during, &c, &repeat, &has, &seed, &step);

		if (!next)
			r->load.during = NULL;
		if (next != 1)
			break;
		e = start_attempt(r, c, repeat, has, seed, step, slot, d);
	}
	return e;
}

static enum err fill_slots(struct run *r, struct diag *d)
{
	size_t i;
	enum err e;

	if (r->load.c || r->load.during) {
		if (r->load.c && (e = run_load_fill(r, d)))
			return e;
		if ((e = fill_during(r, d)) || r->load.c || r->load.during)
			return e;
	}
	for (i = 0; i < r->nslots; i++) {
		const struct suite_case *c;
		long repeat, seed;
		int has, next, step;

		if (r->slots[i])
			continue;
		next = next_attempt(r, &r->cur, NULL, &c, &repeat, &has, &seed, &step);
		if (!next || next == 3)
			return ERR_OK;
		if (next == 2) { /* a load case: alone, once the slots are empty */
			if (busy(r, 0))
				return ERR_OK;
			if ((e = run_load_begin(r, c, d)) || (e = run_load_fill(r, d)) || r->load.c ||
			    r->load.during)
				return e;
			i = (size_t)-1; /* it finished at once (all recorded): go on */
			continue;
		}
		e = start_attempt(r, c, repeat, has, seed, step, &r->slots[i], d);
		if (e)
			return e;
		if (!r->slots[i]) /* judged before sending (preflight): fill it again */
			i--;
	}
	return ERR_OK;
}

static void drop_slot(struct run *r, struct attempt *a)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (r->slots[i] == a)
			r->slots[i] = NULL;
	r->inflight[a->replica]--;
	run_attempt_free(a);
}

static void progress(const struct run *r, int force)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_ctx, r, force);
}

/* How long to poll: the progress interval, or less when an open-loop
 * request falls due sooner. */
static int poll_wait(const struct run *r)
{
	int ms = r->o->poll_ms > 0 ? r->o->poll_ms : 1000;
	double left;

	if (!r->load.wake_ms)
		return ms;
	left = r->load.wake_ms - io_now_ms();
	return left <= 0 ? 0 : left < ms ? (int)ceil(left) : ms;
}

static int stopped(const struct run *r)
{
	return r->o->stop && *r->o->stop;
}

static enum err loop(struct run *r, struct diag *d)
{
	struct http_done dn;
	enum err e = fill_slots(r, d);

	while (!e && (http_multi_pending(r->multi) || r->load.c || r->load.during) && !stopped(r)) {
		if (http_multi_pending(r->multi))
			e = http_multi_poll(r->multi, poll_wait(r), d);
		else
			io_sleep_until_ms(r->load.wake_ms);
		/* due open-loop sends go first: judging and queueing records
		 * must not delay them */
		if (!e && r->load.c && !stopped(r))
			e = run_load_fill(r, d);
		while (!e && http_multi_next(r->multi, &dn)) {
			struct attempt *a = dn.user;
			int again = 0;
			e = finish_attempt(r, a, &dn, &again, d);
			if (a->is_load && !again)
				run_load_ended(r, a, &dn, !e);
			if (!again || e)
				drop_slot(r, a);
			if (!e && r->load.c && !stopped(r))
				e = run_load_fill(r, d);
		}
		if (!e)
			e = results_collect(r->res, 0, tally, r, d);
		progress(r, 0);
		if (!e && !stopped(r))
			e = fill_slots(r, d);
	}
	r->n.interrupted = stopped(r);
	if (!e) /* what finished is durable, and counted, before the end */
		e = results_collect(r->res, 1, tally, r, d);
	return e;
}

/* ---- --start-at ---- */

double run_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --start-at: waits for the common instant, then records how late this
 * process began in the manifest ("start_lag_ms"). Negative never: a start
 * already past begins at once and records its lateness. The instant is at
 * most SHARD_START_AHEAD_S ahead (checked when parsed); the wait is slept a
 * second at a time so that the stop flag ends it. */
static enum err wait_start(struct run *r, struct diag *d)
{
	struct json_build jb;
	double now = run_wall_s(), want = r->o->start_at;

	if (want <= 0)
		return ERR_OK;
	if (want - now > 1 && r->o->waiting)
		r->o->waiting(r->o->progress_ctx, want, now);
	while (now < want && !(r->o->stop && *r->o->stop)) {
		double left = want - now < 1 ? want - now : 1;
		struct timespec ts = {0, (long)(left * 1e9)};

		if (left >= 1)
			ts.tv_sec = 1, ts.tv_nsec = 0;
		nanosleep(&ts, NULL);
		now = run_wall_s();
	}
	json_build_init(&jb);
	json_add_num(&jb, r->manifest, MK_START_LAG_MS, (now - want) * 1000.0);
	return json_build_end(&jb, NULL, "the manifest", d);
}

enum err run_go(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;

	loadclient_now(&r->started);
	progress(r, 1);
	if (r->o->warmup > 0)
		e = run_warm_up(r, d);
	if (!e)
		e = wait_start(r, d);
	if (!e)
		e = loop(r, d);
	if (!e)
		e = record_manifest_end(r->manifest, r->n.total, r->n.done, r->n.pass, r->n.fail,
					r->n.prior_pass + r->n.prior_fail, d);
	if (!e)
		e = loadclient_total(r->manifest, &r->started, d);
	/* report.h reads it: the run's summary says INCOMPLETE */
	if (!e && r->n.interrupted && !cJSON_AddBoolToObject(r->manifest, MK_INTERRUPTED, 1))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e)
		e = results_write_manifest(r->res, r->manifest, d);
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

