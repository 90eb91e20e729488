/* record — see record.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "record.h"

void record_key(const char *id, long repeat, int has_seed, long seed,
		char *out, size_t cap)
{
	if (has_seed)
		snprintf(out, cap, "%s\x1f%ld\x1f%ld", id, repeat, seed);
	else
		snprintf(out, cap, "%s\x1f%ld\x1fnull", id, repeat);
}

/* Whether `v` is an integer in the range suite seeds take (|x| < 2^53), which
 * converts to long exactly; converting a larger one would be undefined (found
 * by tests/fuzz/fuzz_results). */
static int as_long(const cJSON *v, long *out)
{
	double x = cJSON_IsNumber(v) ? v->valuedouble : 0.5;

	if (x != floor(x) || x < -9007199254740991.0 || x > 9007199254740991.0)
		return 0;
	*out = (long)x;
	return 1;
}

int record_key_of(const cJSON *rec, char *out, size_t cap)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(rec, "case");
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(rec, "repeat");
	const cJSON *seed = cJSON_GetObjectItemCaseSensitive(rec, "seed");
	long r, sd = 0;

	if (!cJSON_IsString(id) || !as_long(rep, &r) ||
	    !(cJSON_IsNull(seed) || as_long(seed, &sd)))
		return 0;
	record_key(id->valuestring, r, !cJSON_IsNull(seed), sd, out, cap);
	return 1;
}

const char *record_problem(const cJSON *rec)
{
	char key[1024];

	if (!rec)
		return "not JSON";
	if (!cJSON_IsObject(rec))
		return "not a JSON object";
	if (!record_key_of(rec, key, sizeof(key)))
		return "no \"case\" string, \"repeat\" number or \"seed\" (number or null)";
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "verdict")))
		return "no \"verdict\" string";
	return NULL;
}

int record_passed(const cJSON *rec)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, "verdict");

	return cJSON_IsString(v) && !strcmp(v->valuestring, "pass");
}

void record_utc_now(char *out, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the attempt record ---- */

static cJSON *num_or_null(double v, int present)
{
	return present ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *ms_or_null(double v)
{
	return v >= 0 ? cJSON_CreateNumber((double)(long long)(v * 1000.0 + 0.5) / 1000.0)
		      : cJSON_CreateNull();
}

static cJSON *str_or_null(const struct buf *b)
{
	return b->len ? cJSON_CreateString(b->data) : cJSON_CreateNull();
}

cJSON *record_tool_calls(const struct stream *s)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; arr && i < s->ntools; i++) {
		const struct stream_tool_call *t = &s->tools[i];
		cJSON *o = cJSON_CreateObject(), *fn;
		cJSON_AddStringToObject(o, "id", t->id.data);
		cJSON_AddStringToObject(o, "type", t->type.len ? t->type.data : "function");
		fn = cJSON_AddObjectToObject(o, "function");
		cJSON_AddStringToObject(fn, "name", t->name.data);
		cJSON_AddStringToObject(fn, "arguments", t->arguments.data);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *transport_json(const struct stream_checks *ck, const char *extra)
{
	cJSON *o = cJSON_CreateObject(), *codes, *msgs;
	size_t i;

	cJSON_AddBoolToObject(o, "ok", ck->n == 0);
	codes = cJSON_AddArrayToObject(o, "failures");
	msgs = cJSON_AddArrayToObject(o, "messages");
	for (i = 0; i < ck->n; i++) {
		cJSON_AddItemToArray(codes, cJSON_CreateString(stream_fail_name(ck->f[i].code)));
		cJSON_AddItemToArray(msgs, cJSON_CreateString(ck->f[i].msg));
	}
	for (i = 0; extra && *extra && i < ck->n; i++)
		if (strstr(ck->f[i].msg, extra))
			extra = NULL; /* already said */
	if (extra && *extra)
		cJSON_AddItemToArray(msgs, cJSON_CreateString(extra));
	return o;
}

static cJSON *audit_json(const struct audit_result *v)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "ok", v->ok);
	cJSON_AddBoolToObject(o, "enabled", v->enabled);
	if (v->skipped)
		cJSON_AddStringToObject(o, "note", "images: the local count has the text only; the delta is the image tokens and is not judged");
	cJSON_AddItemToObject(o, "local_prompt_tokens",
			      num_or_null((double)v->local_tokens, v->local_tokens >= 0));
	cJSON_AddItemToObject(o, "server_prompt_tokens",
			      num_or_null((double)v->server_tokens, v->server_tokens >= 0));
	cJSON_AddItemToObject(o, "usage_delta", num_or_null((double)v->delta, v->have_delta));
	cJSON_AddNumberToObject(o, "tolerance", (double)v->tolerance);
	return o;
}

static cJSON *timing_json(const struct stream *s)
{
	struct stream_timing t;
	cJSON *o = cJSON_CreateObject();

	stream_timing(s, &t);
	cJSON_AddItemToObject(o, "first_byte_ms", ms_or_null(t.first_byte_ms));
	cJSON_AddItemToObject(o, "ttft_ms", ms_or_null(t.ttft_ms));
	cJSON_AddItemToObject(o, "ttfc_ms", ms_or_null(t.ttfc_ms));
	cJSON_AddItemToObject(o, "e2e_ms", ms_or_null(t.e2e_ms));
	cJSON_AddItemToObject(o, "tpot_ms", ms_or_null(t.tpot_ms));
	return o;
}

static cJSON *grade_json(const struct grade *g)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "ok", g->ok);
	cJSON_AddItemToObject(o, "reasons", g->reasons ? cJSON_Duplicate(g->reasons, 1)
						       : cJSON_CreateArray());
	if (g->needles)
		cJSON_AddItemToObject(o, "needles", cJSON_Duplicate(g->needles, 1));
	return o;
}

static cJSON *recall_json(const struct record_attempt *a)
{
	cJSON *o = cJSON_CreateObject(), *dep;
	int i;

	cJSON_AddNumberToObject(o, "tokens", (double)a->c->recall.tokens);
	dep = cJSON_AddArrayToObject(o, "depths");
	for (i = 0; i < a->c->recall.ndepths; i++)
		cJSON_AddItemToArray(dep, cJSON_CreateNumber(a->c->recall.depths[i]));
	cJSON_AddStringToObject(o, "filler", a->c->recall.filler);
	cJSON_AddStringToObject(o, "prompt_sha256", a->prompt_sha256);
	return o;
}

static cJSON *usage_json(const struct stream *s)
{
	cJSON *u = s->usage.present && s->usage.json.len
		? cJSON_ParseWithLength(s->usage.json.data, s->usage.json.len) : NULL;

	return u ? u : cJSON_CreateNull();
}

/* http_status ... tool_calls, request_sha256: what a record and a round
 * summary both say about a response. */
static void add_response(cJSON *o, const struct record_attempt *a)
{
	cJSON_AddNumberToObject(o, "http_status", (double)a->http_status);
	cJSON_AddItemToObject(o, "timing", timing_json(a->st));
	cJSON_AddItemToObject(o, "usage", usage_json(a->st));
	cJSON_AddItemToObject(o, "finish_reason", str_or_null(&a->st->finish_reason));
	cJSON_AddStringToObject(o, "content", a->st->content.data);
	cJSON_AddStringToObject(o, "reasoning", a->st->reasoning.data);
	cJSON_AddItemToObject(o, "tool_calls", a->tool_calls ? cJSON_Duplicate(a->tool_calls, 1)
							     : record_tool_calls(a->st));
	cJSON_AddStringToObject(o, "request_sha256", a->request_sha256);
}

static void add_raw(cJSON *o, const char *name)
{
	char path[320];

	snprintf(path, sizeof(path), "raw/%s", name);
	cJSON_AddStringToObject(o, "raw", path);
}

cJSON *record_new(const struct record_attempt *a, struct record_verdict *v)
{
	cJSON *rec = cJSON_CreateObject();

	v->transport_ok = a->ck->n == 0;
	v->audit_ok = a->audit->ok;
	v->grade_ok = a->g->ok;
	cJSON_AddStringToObject(rec, "case", a->c->id);
	cJSON_AddStringToObject(rec, "kind", suite_kind_name(a->c->kind));
	cJSON_AddNumberToObject(rec, "repeat", (double)a->repeat);
	cJSON_AddItemToObject(rec, "seed", num_or_null((double)a->seed, a->has_seed));
	cJSON_AddStringToObject(rec, "verdict", v->transport_ok && v->audit_ok && v->grade_ok
						? "pass" : "fail");
	cJSON_AddItemToObject(rec, "transport", transport_json(a->ck, a->transport_msg));
	cJSON_AddItemToObject(rec, "audit", audit_json(a->audit));
	cJSON_AddItemToObject(rec, "grade", grade_json(a->g));
	add_response(rec, a);
	cJSON_AddStringToObject(rec, "endpoint", a->endpoint);
	cJSON_AddStringToObject(rec, "model", a->model);
	cJSON_AddStringToObject(rec, "started_at", a->started_at);
	add_raw(rec, a->raw_name);
	cJSON_AddNumberToObject(rec, "response_bytes", (double)a->response_bytes);
	if (a->c->kind == SUITE_RECALL)
		cJSON_AddItemToObject(rec, "recall", recall_json(a));
	if (a->round1) {
		cJSON *rounds = cJSON_AddArrayToObject(rec, "rounds");
		cJSON_AddItemToArray(rounds, cJSON_Duplicate(a->round1, 1));
	}
	return rec;
}

cJSON *record_round(const struct record_attempt *a)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "transport", transport_json(a->ck, a->transport_msg));
	add_response(o, a);
	add_raw(o, a->raw_name);
	return o;
}

/* ---- manifest.json ---- */

static cJSON *str_or_null_c(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *options_json(const struct record_options *o)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "concurrency", (double)o->concurrency);
	cJSON_AddItemToObject(j, "timeout_s", num_or_null(o->timeout, o->timeout > 0));
	cJSON_AddItemToObject(j, "idle_timeout_s", num_or_null(o->idle_timeout, o->idle_timeout > 0));
	cJSON_AddItemToObject(j, "repeat", num_or_null((double)o->repeat, o->repeat > 0));
	cJSON_AddItemToObject(j, "case", str_or_null_c(o->case_glob));
	cJSON_AddBoolToObject(j, "resume", o->resume);
	cJSON_AddStringToObject(j, "api_key_env", o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	cJSON_AddItemToObject(j, "server", str_or_null_c(o->server));
	return j;
}

static void add_locals(cJSON *m, const struct record_manifest *in)
{
	cJSON *t;

	if (in->tok) {
		t = cJSON_AddObjectToObject(m, "tokenizer");
		cJSON_AddStringToObject(t, "path", in->tokenizer_path);
		cJSON_AddStringToObject(t, "kind", tok_kind(in->tok));
		cJSON_AddStringToObject(t, "sha256", tok_sha256(in->tok));
		cJSON_AddItemToObject(t, "completions_bos_id",
				      num_or_null((double)in->bos_id, in->bos_id >= 0));
	} else {
		cJSON_AddNullToObject(m, "tokenizer");
	}
	if (in->tpl) {
		t = cJSON_AddObjectToObject(m, "template");
		cJSON_AddStringToObject(t, "name", tpl_name(in->tpl));
		cJSON_AddStringToObject(t, "sha256", tpl_sha256(in->tpl));
		/* how the audit prepared messages (tpl.h, tpl_render_ex) */
		cJSON_AddStringToObject(t, "server", tpl_server_name(in->server));
		cJSON_AddStringToObject(t, "server_from", in->server_from);
	} else {
		cJSON_AddNullToObject(m, "template");
	}
}

cJSON *record_manifest_new(struct record_manifest *in)
{
	cJSON *m = cJSON_CreateObject(), *s, *h;
	char when[32];

	if (!m) {
		cJSON_Delete(in->endpoint);
		in->endpoint = NULL;
		return NULL;
	}
	h = cJSON_AddObjectToObject(m, "harness");
	cJSON_AddStringToObject(h, "name", "needle");
	cJSON_AddStringToObject(h, "version", NEEDLE_VERSION);
	s = cJSON_AddObjectToObject(m, "suite");
	cJSON_AddStringToObject(s, "name", in->suite->name);
	cJSON_AddStringToObject(s, "path", in->suite->path);
	cJSON_AddStringToObject(s, "sha256", in->suite->sha256);
	cJSON_AddNumberToObject(s, "cases", (double)in->suite->ncases);
	cJSON_AddStringToObject(in->endpoint, "base_url", in->base_url);
	if (!cJSON_AddItemToObject(m, "endpoint", in->endpoint))
		cJSON_Delete(in->endpoint);
	in->endpoint = NULL;
	add_locals(m, in);
	cJSON_AddItemToObject(m, "options", options_json(&in->opts));
	record_utc_now(when, sizeof(when));
	cJSON_AddStringToObject(m, "started_at", when);
	cJSON_AddNullToObject(m, "ended_at");
	return m;
}

void record_manifest_end(cJSON *manifest, size_t planned, size_t run, size_t pass,
			 size_t fail, size_t recorded_before)
{
	cJSON *c = cJSON_CreateObject();
	char when[32];

	record_utc_now(when, sizeof(when));
	cJSON_ReplaceItemInObjectCaseSensitive(manifest, "ended_at", cJSON_CreateString(when));
	cJSON_AddNumberToObject(c, "planned", (double)planned);
	cJSON_AddNumberToObject(c, "run", (double)run);
	cJSON_AddNumberToObject(c, "pass", (double)pass);
	cJSON_AddNumberToObject(c, "fail", (double)fail);
	cJSON_AddNumberToObject(c, "recorded_before", (double)recorded_before);
	cJSON_DeleteItemFromObjectCaseSensitive(manifest, "attempts");
	cJSON_AddItemToObject(manifest, "attempts", c);
}

enum err record_manifest_resume(cJSON *manifest, const cJSON *old,
				const char *dir, struct diag *d)
{
	const cJSON *suite = cJSON_GetObjectItemCaseSensitive(manifest, "suite");
	const cJSON *now = cJSON_GetObjectItemCaseSensitive(suite, "sha256");
	const cJSON *sha = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(old, "suite"), "sha256");

	if (cJSON_IsString(sha) && cJSON_IsString(now) && strcmp(sha->valuestring, now->valuestring))
		return diag_fail(d, ERR_USAGE,
				 "cannot resume '%s': the suite changed since the run started (SHA-256 %.12s..., now %.12s...)",
				 dir, sha->valuestring, now->valuestring);
	if (old)
		cJSON_ReplaceItemInObjectCaseSensitive(manifest, "started_at",
			cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(old, "started_at"), 1));
	return ERR_OK;
}
