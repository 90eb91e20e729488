/*
 * needle run — send a suite's cases to an OpenAI-compatible endpoint, judge
 * every streamed response strictly, audit the server's prompt token count, and
 * journal one record per attempt (DESIGN.md §4, §7).
 *
 * An attempt is (case, repeat, seed). Attempts are prepared only when a slot
 * is free (--concurrency), so a recall document (megabytes for 1M tokens) is in
 * memory only while its request is in flight; once its body is built the
 * document is dropped and only the needles are kept for grading.
 *
 * verdict = pass only if the transport check, the audit (when enabled) and the
 * grade all pass. A failure is recorded like a pass and stays in every count.
 */
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cli.h"
#include "cmd.h"
#include "grade.h"
#include "haystack.h"
#include "http.h"
#include "io.h"
#include "mem.h"
#include "report.h"
#include "req.h"
#include "results.h"
#include "stream.h"
#include "suite.h"
#include "tok.h"
#include "tpl.h"
#include "tpl_model.h"

#define RAW_MAX ((size_t)512 << 20)
#define URL_MAX 2048
#define MAX_CONCURRENCY 1024

struct run_opts {
	const char *base_url, *model, *tokenizer, *template_name, *out;
	const char *case_glob, *api_key_env, *server;
	long concurrency, repeat;
	double timeout, idle_timeout;
	int resume;
};

/* One attempt in flight. */
struct attempt {
	const struct suite_case *c;
	long repeat;
	int has_seed;              /* key seed: recall seed, else sampling seed */
	long seed;
	struct req req;
	struct stream st;
	struct buf raw;            /* the raw response bytes */
	char url[URL_MAX];
	struct grade_needle needles[HAYSTACK_MAX_NEEDLES];
	char projects[HAYSTACK_MAX_NEEDLES][64];
	char codes[HAYSTACK_MAX_NEEDLES][32];
	int nneedles;
	long long local_tokens;    /* -1 when not counted */
	int audit_skipped;         /* images: the count cannot include them */
	char prompt_sha256[IO_SHA256_HEX]; /* recall: of the rendered prompt */
	double start_ms;
	char started_at[32];
	int feed_failed;
	char feed_msg[DIAG_MSG_MAX];
	int round;                 /* 1; 2 = the answer after a tool result */
	struct grade g;            /* accumulates over both rounds */
	cJSON *round1;             /* owned summary of round 1 when round == 2 */
	cJSON *calls1;             /* owned tool calls of round 1 */
	cJSON *audit1;             /* owned audit of round 1 */
	int audit1_ok;
};

struct counts {
	size_t total, done, pass, fail;
	size_t fail_transport, fail_audit, fail_grade;
	size_t refused;            /* connect failures and 401/403 */
};

struct runner {
	const struct run_opts *o;
	struct suite *suite;
	char suite_dir[4096];
	struct tok *tok;
	struct tpl *tpl;
	struct results *res;
	struct http_multi *multi;
	const char *api_key;
	char base[URL_MAX];
	char model[256];
	long long max_model_len;   /* -1 when unknown */
	long long bos_id;          /* BOS the HF tokenizer class adds on
				    * /v1/completions (add_bos_token), or -1 */
	enum tpl_server server;    /* whose message preparation the audit renders */
	const char *server_source; /* "option", "detected" or "default" */
	cJSON *manifest;
	struct counts n;
	/* cursor over (case, repeat, seed) */
	size_t ci;
	long ri;
	int si;
	struct attempt **slots;
	size_t nslots;
	double t0;
	int tty;
	double last_progress;
};

static const char examples[] =
	"  needle run suites/smoke.json --base-url http://127.0.0.1:8000 --model my-model\n"
	"  OPENAI_BASE_URL=http://gpu:8000/v1 needle run suites/recall-128k.json \\\n"
	"      --tokenizer tokenizer.json --template deepseek-v3 --out results/r1\n"
	"  needle run suites/recall-1m.json --tokenizer tokenizer.json \\\n"
	"      --template deepseek-v3 --out results/r1 --resume\n"
	"  needle run suite.json --case 'json-*' --repeat 5 --concurrency 8\n"
	"\nResults: DIR/manifest.json, DIR/results.jsonl (one record per attempt),\n"
	"DIR/raw/*.sse (raw response bytes). The API key (OPENAI_API_KEY, or the\n"
	"variable named by --api-key-env) is sent as a bearer token and never written.\n"
	"Default timeouts scale with the prompt: first byte 60 s + 0.5 s per 1000\n"
	"prompt tokens; whole request that plus 0.1 s per max_tokens; idle 120 s.\n";

/* ---- small helpers ---- */

static void utc_now(char *out, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *num_or_null(double v, int present)
{
	return present ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *ms_or_null(double v)
{
	return v >= 0 ? cJSON_CreateNumber((double)(long long)(v * 1000.0 + 0.5) / 1000.0)
		      : cJSON_CreateNull();
}

/* The base URL without trailing "/" or "/v1" (OPENAI_BASE_URL usually ends
 * in /v1; needle adds the paths itself). */
static enum err normalise_base(const char *in, char *out, struct diag *d)
{
	size_t n = strlen(in);

	if (strncmp(in, "http://", 7) && strncmp(in, "https://", 8))
		return diag_fail(d, ERR_USAGE, "base URL '%s' must start with http:// or https://", in);
	if (n >= URL_MAX - 64)
		return diag_fail(d, ERR_USAGE, "base URL is too long");
	memcpy(out, in, n + 1);
	while (n && out[n - 1] == '/')
		out[--n] = '\0';
	if (n >= 3 && !strcmp(out + n - 3, "/v1"))
		out[n -= 3] = '\0';
	return ERR_OK;
}

/* The base URL for the manifest, with any user:password@ removed. */
static void redacted_base(const char *base, char *out, size_t cap)
{
	const char *s = strstr(base, "://"), *at, *slash;

	snprintf(out, cap, "%s", base);
	if (!s)
		return;
	s += 3;
	at = strchr(s, '@');
	slash = strchr(s, '/');
	if (at && (!slash || at < slash))
		snprintf(out, cap, "%.*s%s", (int)(s - base), base, at + 1);
}

/* ---- endpoint discovery ---- */

/* GET base+path as JSON; *out NULL when unavailable. Connection failure is
 * ERR_ENDPOINT. */
static enum err get_json(struct runner *r, const char *path, long *status,
			 cJSON **out, struct diag *d)
{
	char url[URL_MAX];
	struct buf body;
	enum err e;

	*out = NULL;
	*status = 0;
	snprintf(url, sizeof(url), "%s%s", r->base, path);
	buf_init(&body, (size_t)16 << 20);
	e = http_get(url, r->api_key, r->o->timeout > 0 ? r->o->timeout : 30,
		     &body, status, NULL, d);
	if (!e && *status == 200)
		*out = cJSON_ParseWithLength(body.data, body.len);
	if (e == ERR_LIMIT) {
		e = ERR_OK; /* an oversized answer is just not usable */
		diag_init(d);
	}
	buf_release(&body);
	return e;
}

static enum err pick_model(struct runner *r, const cJSON *models, long status,
			   struct diag *d)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(models, "data"), *m;
	const cJSON *chosen = NULL;
	int n = cJSON_GetArraySize(data);

	if (status == 401 || status == 403)
		return diag_fail(d, ERR_ENDPOINT,
				 "endpoint '%s' refused the request for /v1/models with HTTP %ld (check the API key in $%s)",
				 r->base, status, r->o->api_key_env ? r->o->api_key_env : "OPENAI_API_KEY");
	if (r->o->model) {
		snprintf(r->model, sizeof(r->model), "%s", r->o->model);
		cJSON_ArrayForEach(m, data) {
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
			if (cJSON_IsString(id) && !strcmp(id->valuestring, r->o->model))
				chosen = m;
		}
	} else if (!cJSON_IsArray(data)) {
		return diag_fail(d, ERR_ENDPOINT,
				 "cannot list models at '%s/v1/models' (HTTP %ld); pass --model", r->base, status);
	} else if (n != 1) {
		return diag_fail(d, ERR_USAGE, "endpoint serves %d models; choose one with --model", n);
	} else {
		chosen = data->child;
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(chosen, "id")))
			return diag_fail(d, ERR_ENDPOINT, "'/v1/models' lists a model without an id");
		snprintf(r->model, sizeof(r->model), "%s",
			 cJSON_GetObjectItemCaseSensitive(chosen, "id")->valuestring);
	}
	m = cJSON_GetObjectItemCaseSensitive(chosen, "max_model_len");
	/* The server's word is input: a value out of range is "unknown". */
	r->max_model_len = cJSON_IsNumber(m) && m->valuedouble >= 0 &&
				   m->valuedouble <= 9e15
			   ? (long long)m->valuedouble : -1;
	return ERR_OK;
}

/* vLLM: GET /version {"version"}; SGLang: GET /server_info {"version"}
 * (PROTOCOL.md §5). */
static void server_version(struct runner *r, cJSON *server)
{
	static const char *const paths[][2] = {{"/version", "vllm"},
					      {"/server_info", "sglang"}};
	struct diag d;
	size_t i;

	for (i = 0; i < 2; i++) {
		cJSON *v = NULL;
		long status;
		const cJSON *ver;
		diag_init(&d);
		if (get_json(r, paths[i][0], &status, &v, &d))
			return;
		ver = cJSON_GetObjectItemCaseSensitive(v, "version");
		if (cJSON_IsString(ver)) {
			cJSON_AddStringToObject(server, "version", ver->valuestring);
			cJSON_AddStringToObject(server, "version_from", paths[i][0]);
			cJSON_AddStringToObject(server, "kind_guess", paths[i][1]);
			cJSON_Delete(v);
			return;
		}
		cJSON_Delete(v);
	}
}

/* The audit renders as the server prepares messages (tpl.h, tpl_render_ex):
 * --server, else the dialect server_version() guessed, else vLLM. */
static void choose_server(struct runner *r, const cJSON *server)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(server, "kind_guess");

	if (r->server_source)
		return; /* --server */
	r->server_source = "default";
	r->server = TPL_SERVER_VLLM;
	if (cJSON_IsString(kind) && !tpl_server_parse(kind->valuestring, &r->server, NULL))
		r->server_source = "detected";
}

static enum err discover(struct runner *r, cJSON *endpoint, struct diag *d)
{
	cJSON *models = NULL, *server = cJSON_CreateObject(), *ids;
	const cJSON *m;
	long status = 0;
	enum err e;

	e = get_json(r, "/v1/models", &status, &models, d);
	if (e) {
		diag_prefix(d, "endpoint unusable");
		cJSON_Delete(server);
		return ERR_ENDPOINT;
	}
	e = pick_model(r, models, status, d);
	cJSON_AddNumberToObject(endpoint, "models_status", (double)status);
	ids = cJSON_AddArrayToObject(endpoint, "models");
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(models, "data")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		if (cJSON_IsString(id))
			cJSON_AddItemToArray(ids, cJSON_CreateString(id->valuestring));
	}
	cJSON_Delete(models);
	if (e) {
		cJSON_Delete(server);
		return e;
	}
	cJSON_AddStringToObject(endpoint, "served_model", r->model);
	cJSON_AddItemToObject(endpoint, "max_model_len",
			      num_or_null((double)r->max_model_len, r->max_model_len >= 0));
	server_version(r, server);
	choose_server(r, server);
	cJSON_AddItemToObject(endpoint, "server", server);
	return ERR_OK;
}

/* ---- the attempt cursor ---- */

static int seeds_of(const struct suite_case *c)
{
	return c->kind == SUITE_RECALL ? c->recall.nseeds : 1;
}

static long repeats_of(const struct runner *r, const struct suite_case *c)
{
	return r->o->repeat > 0 ? r->o->repeat : c->repeat;
}

static int selected(const struct runner *r, const struct suite_case *c)
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
static int next_attempt(struct runner *r, const struct suite_case **c,
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
				results_key(k->id, r->ri + 1, *has_seed, *seed, key, sizeof(key));
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

static size_t count_todo(struct runner *r)
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

/* ---- preparing one attempt ---- */

static int has_images(const cJSON *messages)
{
	char *txt = cJSON_PrintUnformatted(messages);
	int yes = txt && strstr(txt, "\"image_url\"") != NULL;

	cJSON_free(txt);
	return yes;
}

/* Template kwargs as the server sees them: the case's chat_template_kwargs,
 * plus reasoning_effort, which vLLM and SGLang pass into the template
 * (PROTOCOL.md §3). The caller owns the result (may be NULL). */
static cJSON *render_kwargs(const struct suite_case *c)
{
	const cJSON *eff = cJSON_GetObjectItemCaseSensitive(c->json, "reasoning_effort");
	cJSON *kw;

	if (!eff)
		return c->kwargs ? cJSON_Duplicate(c->kwargs, 1) : NULL;
	kw = c->kwargs ? cJSON_Duplicate(c->kwargs, 1) : cJSON_CreateObject();
	if (kw && !cJSON_GetObjectItemCaseSensitive(kw, "reasoning_effort"))
		cJSON_AddItemToObject(kw, "reasoning_effort", cJSON_Duplicate(eff, 1));
	return kw;
}

/* Counts the prompt the server will tokenize: the rendered chat prompt
 * (add_special_tokens=false, PROTOCOL.md §6) or a raw completion prompt
 * (add_special_tokens=true on /v1/completions). */
static enum err audit_count(struct runner *r, struct attempt *a,
			    const cJSON *messages, struct diag *d)
{
	struct buf prompt;
	struct tpl_render_opts ro = {0};
	cJSON *kw = NULL;
	size_t n = 0;
	enum err e = ERR_OK;

	a->local_tokens = -1;
	if (!r->tok || !r->tpl)
		return ERR_OK;
	if (a->c->prompt) { /* add_special_tokens=true (PROTOCOL.md §6) */
		uint32_t *ids = NULL;
		size_t cap = 0;
		e = tok_encode(r->tok, a->c->prompt, strlen(a->c->prompt), 1, &ids, &n,
			       &cap, d);
		if (!e && r->bos_id >= 0 && (!n || ids[0] != (uint32_t)r->bos_id))
			n++;
		mem_free(ids);
		if (!e)
			a->local_tokens = (long long)n;
		return e;
	}
	a->audit_skipped = has_images(messages);
	buf_init(&prompt, BUF_MAX_DEFAULT);
	kw = render_kwargs(a->c);
	ro.server = r->server;
	ro.reasoning_effort = cJSON_GetObjectItemCaseSensitive(a->c->json, "reasoning_effort");
	e = tpl_render_ex(r->tpl, messages, a->c->tools, kw, 1, &ro, &prompt, d);
	if (!e)
		e = tok_count(r->tok, prompt.data, prompt.len, &n, d);
	if (!e)
		a->local_tokens = (long long)n;
	if (e && a->audit_skipped) { /* the text count is informative only */
		diag_init(d);
		e = ERR_OK;
	}
	cJSON_Delete(kw);
	buf_release(&prompt);
	return e;
}

static enum err build_recall(struct runner *r, struct attempt *a,
			     struct diag *d)
{
	const struct suite_recall *rc = &a->c->recall;
	struct haystack_opts ho;
	struct tpl_render_opts ro = {0};
	struct haystack h;
	int i;
	enum err e;

	memset(&ho, 0, sizeof(ho));
	memset(&h, 0, sizeof(h));
	ro.server = r->server;
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
		e = req_build(&a->req, a->c, h.messages, r->model, r->suite_dir, d);
	if (!e) {
		a->local_tokens = (long long)h.prompt_tokens;
		memcpy(a->prompt_sha256, h.prompt_sha256, IO_SHA256_HEX);
		for (i = 0; i < h.nneedles && a->nneedles < HAYSTACK_MAX_NEEDLES; i++) {
			int k = a->nneedles;
			if (!h.needle[i].asked)
				continue;
			snprintf(a->projects[k], sizeof(a->projects[k]), "%s", h.needle[i].project);
			snprintf(a->codes[k], sizeof(a->codes[k]), "%s", h.needle[i].code);
			a->needles[k].project = a->projects[k];
			a->needles[k].code = a->codes[k];
			a->needles[k].depth = h.needle[i].depth;
			a->nneedles++;
		}
	}
	if (e)
		diag_prefix(d, "case '%s' seed %ld", a->c->id, a->seed);
	haystack_release(&h);
	return e;
}

/* Default timeouts scale with the prompt (a 1M-token prefill takes minutes:
 * seed report 002 §7 measured ~97 s to the first token). */
static void timeouts(const struct runner *r, const struct attempt *a,
		     struct http_req *hr)
{
	double tokens = a->local_tokens >= 0 ? (double)a->local_tokens
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
	cJSON_Delete(a->audit1);
	mem_free(a);
}

/* Starts (or restarts, for round 2) the HTTP request of `a` with a fresh
 * stream and raw buffer. */
static enum err send_attempt(struct runner *r, struct attempt *a,
			     struct diag *d)
{
	struct http_req hr;

	snprintf(a->url, sizeof(a->url), "%s%s", r->base, a->req.path);
	utc_now(a->started_at, sizeof(a->started_at));
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
	hr.api_key = r->api_key;
	hr.on_data = on_data;
	hr.ctx = a;
	hr.user = a;
	timeouts(r, a, &hr);
	return http_multi_add(r->multi, &hr, d);
}

/* Prepares and starts one attempt. ERR_INPUT etc. for a case that cannot be
 * built (the run stops: the suite or tokenizer is wrong). */
static enum err start_attempt(struct runner *r, const struct suite_case *c,
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
	a->local_tokens = -1;
	if (c->kind == SUITE_RECALL) {
		e = build_recall(r, a, d);
	} else {
		e = req_build(&a->req, c, c->messages, r->model, r->suite_dir, d);
		if (!e)
			e = audit_count(r, a, c->messages, d);
		if (e)
			diag_prefix(d, "case '%s'", c->id);
	}
	if (e)
		goto fail;
	e = send_attempt(r, a, d);
	if (e)
		goto fail;
	*out = a;
	return ERR_OK;
fail:
	attempt_free(a);
	return e;
}

/* ---- judging and recording ---- */

static cJSON *tool_calls_json(const struct stream *s)
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

/* Whether made call `t` has `want`'s name and (when given) arguments. Adds
 * the differences to `g` (which may be a scratch grade). */
static int call_matches(const struct stream_tool_call *t, const cJSON *want,
			struct grade *g)
{
	const cJSON *wname = cJSON_GetObjectItemCaseSensitive(want, "name");
	const cJSON *wargs = cJSON_GetObjectItemCaseSensitive(want, "arguments");
	cJSON *args;
	int ok = 1;

	if (strcmp(t->name.data, wname->valuestring)) {
		grade_fail(g, "tool call: expected name '%s', got '%s'", wname->valuestring,
			   t->name.data);
		ok = 0;
	}
	if (!wargs)
		return ok;
	args = cJSON_ParseWithLength(t->arguments.data, t->arguments.len);
	if (!args) {
		grade_fail(g, "tool call '%s': arguments are not JSON: '%.60s'", t->name.data,
			   t->arguments.data);
		ok = 0;
	} else if (!grade_json_equal(wargs, args, "arguments", g)) {
		ok = 0;
	}
	cJSON_Delete(args);
	return ok;
}

/* Round 1 of a tool case: exactly the expected call(s), any order for
 * "tool_calls" (each expected call matched to a distinct made call). */
static void grade_calls(const struct attempt *a, struct grade *g)
{
	const cJSON *one = cJSON_GetObjectItemCaseSensitive(a->c->expect, "tool_call");
	const cJSON *many = cJSON_GetObjectItemCaseSensitive(a->c->expect, "tool_calls");
	const cJSON *w;
	int used[64] = {0};
	size_t i, nw = one ? 1 : (size_t)cJSON_GetArraySize(many);

	if (a->st.ntools != nw) {
		grade_fail(g, "expected %zu tool call%s, got %zu", nw, nw == 1 ? "" : "s",
			   a->st.ntools);
		if (!a->st.ntools)
			return;
	}
	if (one) {
		call_matches(&a->st.tools[0], one, g);
		return;
	}
	cJSON_ArrayForEach(w, many) {
		int found = 0;
		for (i = 0; i < a->st.ntools && i < 64 && !found; i++) {
			struct grade scratch;
			grade_init(&scratch);
			if (!used[i] && call_matches(&a->st.tools[i], w, &scratch))
				used[i] = found = 1;
			grade_release(&scratch);
		}
		if (!found) {
			char *args = cJSON_PrintUnformatted(
				cJSON_GetObjectItemCaseSensitive(w, "arguments"));
			grade_fail(g, "no tool call matches %s(%s)",
				   cJSON_GetObjectItemCaseSensitive(w, "name")->valuestring,
				   args ? args : "");
			cJSON_free(args);
		}
	}
}

/* multi_turn: name the planted turn of each fact the answer lost
 * (expect.recall: [{"key", "message"}], from the case generator). */
static void annotate_recall(const struct attempt *a, struct grade *g)
{
	const cJSON *rec = cJSON_GetObjectItemCaseSensitive(a->c->expect, "recall"), *it;
	int nmsg = cJSON_GetArraySize(a->c->messages);

	if (g->ok || !cJSON_IsArray(rec))
		return;
	cJSON_ArrayForEach(it, rec) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "key");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "message");
		const cJSON *r;
		char quoted[160];
		int lost = 0;
		if (!cJSON_IsString(k) || !cJSON_IsNumber(m))
			continue;
		snprintf(quoted, sizeof(quoted), "'%s'", k->valuestring);
		cJSON_ArrayForEach(r, g->reasons)
			lost |= strstr(r->valuestring, quoted) != NULL;
		if (lost)
			grade_fail(g, "fact '%s' was planted at messages[%d], %d messages before the question",
				   k->valuestring, m->valueint, nmsg - 1 - m->valueint);
	}
}

static enum err grade_round1(struct attempt *a, struct diag *d)
{
	const struct stream *s = &a->st;
	struct grade *g = &a->g;
	enum err e = ERR_OK;

	if (a->c->kind == SUITE_RECALL)
		return grade_recall(a->needles, a->nneedles, s->content.data,
				    s->content.len, g, d);
	if (a->c->expect_kind == SUITE_EXPECT_TOOL_CALL) {
		grade_calls(a, g);
		return ERR_OK;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a->c->expect, "no_tool_call")) &&
	    s->ntools)
		grade_fail(g, "unexpected tool call '%s' (the case allows none)",
			   s->tools[0].name.data);
	if (a->c->expect_kind != SUITE_EXPECT_NONE)
		e = grade_expect(a->c->expect, s->content.data, s->content.len, g, d);
	annotate_recall(a, g);
	return e;
}

/* Round 2: the final answer must contain every final_contains string. */
static void grade_round2(struct attempt *a)
{
	const cJSON *fc = cJSON_GetObjectItemCaseSensitive(a->c->expect, "final_contains"), *it;

	cJSON_ArrayForEach(it, fc)
		if (!strstr(a->st.content.data, it->valuestring))
			grade_fail(&a->g, "final answer does not contain \"%s\"", it->valuestring);
}

static int wants_round2(const struct attempt *a)
{
	const cJSON *x = a->c->expect;

	return a->c->expect_kind == SUITE_EXPECT_TOOL_CALL &&
	       (cJSON_GetObjectItemCaseSensitive(x, "tool_result") ||
		cJSON_GetObjectItemCaseSensitive(x, "tool_calls") ||
		cJSON_GetObjectItemCaseSensitive(x, "final_contains"));
}

/* The tool result for made call `t`: expect.tool_result, or the result of
 * the expected entry of tool_calls that it matches. */
static cJSON *result_for(const struct attempt *a, const struct stream_tool_call *t,
			 int *used)
{
	const cJSON *x = a->c->expect, *w, *res = NULL;
	int i = 0;

	if (cJSON_GetObjectItemCaseSensitive(x, "tool_call"))
		res = cJSON_GetObjectItemCaseSensitive(x, "tool_result");
	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(x, "tool_calls")) {
		struct grade scratch;
		int ok;
		grade_init(&scratch);
		ok = i < 64 && !used[i] && call_matches(t, w, &scratch);
		grade_release(&scratch);
		if (ok) {
			used[i] = 1;
			res = cJSON_GetObjectItemCaseSensitive(w, "tool_result");
			break;
		}
		i++;
	}
	if (cJSON_IsString(res))
		return cJSON_CreateString(res->valuestring);
	if (res) {
		char *txt = cJSON_PrintUnformatted(res);
		cJSON *v = cJSON_CreateString(txt ? txt : "");
		cJSON_free(txt);
		return v;
	}
	return cJSON_CreateString("");
}

/* messages + the assistant turn with the calls as received + one tool
 * message per call, in the order the model made them. */
static cJSON *round2_messages(const struct attempt *a, const cJSON *calls)
{
	cJSON *m = cJSON_Duplicate(a->c->messages, 1), *asst = cJSON_CreateObject();
	int used[64] = {0};
	size_t i;

	cJSON_AddStringToObject(asst, "role", "assistant");
	cJSON_AddItemToObject(asst, "content", a->st.content.len
			      ? cJSON_CreateString(a->st.content.data) : cJSON_CreateNull());
	cJSON_AddItemToObject(asst, "tool_calls", cJSON_Duplicate(calls, 1));
	cJSON_AddItemToArray(m, asst);
	for (i = 0; i < a->st.ntools; i++) {
		cJSON *tm = cJSON_CreateObject();
		cJSON_AddStringToObject(tm, "role", "tool");
		cJSON_AddStringToObject(tm, "tool_call_id", a->st.tools[i].id.data);
		cJSON_AddItemToObject(tm, "content", result_for(a, &a->st.tools[i], used));
		cJSON_AddItemToArray(m, tm);
	}
	return m;
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

/* audit.ok: true when disabled or skipped; otherwise |delta| <= tolerance. */
static cJSON *audit_json(const struct runner *r, const struct attempt *a,
			 int *ok)
{
	const struct stream_usage *u = &a->st.usage;
	cJSON *o = cJSON_CreateObject();
	int counted = r->tok && r->tpl && a->local_tokens >= 0;
	int enabled = counted && !a->audit_skipped;
	int have = counted && u->present && u->prompt_tokens >= 0;
	long long delta = have ? u->prompt_tokens - a->local_tokens : 0;

	/* DESIGN.md §4: image cases record the delta (text tokens counted,
	 * image tokens not) but cannot fail the audit */
	*ok = !enabled || (have && llabs(delta) <= a->c->usage_tolerance);
	cJSON_AddBoolToObject(o, "ok", *ok);
	cJSON_AddBoolToObject(o, "enabled", enabled);
	if (a->audit_skipped)
		cJSON_AddStringToObject(o, "note", "images: the local count has the text only; the delta is the image tokens and is not judged");
	cJSON_AddItemToObject(o, "local_prompt_tokens",
			      num_or_null((double)a->local_tokens, a->local_tokens >= 0));
	cJSON_AddItemToObject(o, "server_prompt_tokens",
			      num_or_null((double)u->prompt_tokens, u->present && u->prompt_tokens >= 0));
	cJSON_AddItemToObject(o, "usage_delta", num_or_null((double)delta, have));
	cJSON_AddNumberToObject(o, "tolerance", (double)a->c->usage_tolerance);
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

static cJSON *recall_json(const struct attempt *a)
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

static cJSON *str_or_null(const struct buf *b)
{
	return b->len ? cJSON_CreateString(b->data) : cJSON_CreateNull();
}

struct verdict {
	int transport_ok, audit_ok, grade_ok, refused;
};

static cJSON *make_record(const struct runner *r, const struct attempt *a,
			  const struct http_done *dn, const struct stream_checks *ck,
			  const char *raw_name, struct verdict *v)
{
	cJSON *rec = cJSON_CreateObject();
	char rawpath[300];

	v->transport_ok = ck->n == 0;
	v->grade_ok = a->g.ok;
	cJSON_AddStringToObject(rec, "case", a->c->id);
	cJSON_AddStringToObject(rec, "kind", suite_kind_name(a->c->kind));
	cJSON_AddNumberToObject(rec, "repeat", (double)a->repeat);
	cJSON_AddItemToObject(rec, "seed", num_or_null((double)a->seed, a->has_seed));
	cJSON_AddStringToObject(rec, "verdict", "fail"); /* set below */
	cJSON_AddItemToObject(rec, "transport", transport_json(ck, dn->fail ? dn->msg : a->feed_msg));
	if (a->audit1) {
		v->audit_ok = a->audit1_ok;
		cJSON_AddItemToObject(rec, "audit", cJSON_Duplicate(a->audit1, 1));
	} else {
		cJSON_AddItemToObject(rec, "audit", audit_json(r, a, &v->audit_ok));
	}
	cJSON_AddItemToObject(rec, "grade", grade_json(&a->g));
	cJSON_AddNumberToObject(rec, "http_status", (double)dn->status);
	cJSON_AddItemToObject(rec, "timing", timing_json(&a->st));
	cJSON_AddItemToObject(rec, "usage", usage_json(&a->st));
	cJSON_AddItemToObject(rec, "finish_reason", str_or_null(&a->st.finish_reason));
	cJSON_AddStringToObject(rec, "content", a->st.content.data);
	cJSON_AddStringToObject(rec, "reasoning", a->st.reasoning.data);
	cJSON_AddItemToObject(rec, "tool_calls", a->calls1 ? cJSON_Duplicate(a->calls1, 1)
							   : tool_calls_json(&a->st));
	cJSON_AddStringToObject(rec, "request_sha256", a->req.sha256);
	cJSON_AddStringToObject(rec, "endpoint", a->req.path);
	cJSON_AddStringToObject(rec, "model", r->model);
	cJSON_AddStringToObject(rec, "started_at", a->started_at);
	snprintf(rawpath, sizeof(rawpath), "raw/%s", raw_name);
	cJSON_AddStringToObject(rec, "raw", rawpath);
	cJSON_AddNumberToObject(rec, "response_bytes", (double)a->raw.len);
	if (a->c->kind == SUITE_RECALL)
		cJSON_AddItemToObject(rec, "recall", recall_json(a));
	if (a->round1) {
		cJSON *rounds = cJSON_AddArrayToObject(rec, "rounds");
		cJSON_AddItemToArray(rounds, cJSON_Duplicate(a->round1, 1));
	}
	if (v->transport_ok && v->audit_ok && v->grade_ok)
		cJSON_ReplaceItemInObjectCaseSensitive(rec, "verdict", cJSON_CreateString("pass"));
	return rec;
}

static void tally(struct runner *r, const struct verdict *v,
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
static enum err start_round2(struct runner *r, struct attempt *a,
			     const struct http_done *dn,
			     const struct stream_checks *ck, const char *raw_name,
			     struct diag *d)
{
	char name1[300];
	cJSON *msgs;
	size_t n = strlen(raw_name);
	enum err e;

	snprintf(name1, sizeof(name1), "%.*s-round1.sse", (int)(n > 4 ? n - 4 : n), raw_name);
	e = results_write_raw(r->res, name1, a->raw.data, a->raw.len, d);
	if (e)
		return e;
	a->calls1 = tool_calls_json(&a->st);
	a->audit1 = audit_json(r, a, &a->audit1_ok);
	a->round1 = cJSON_CreateObject();
	cJSON_AddItemToObject(a->round1, "transport", transport_json(ck, NULL));
	cJSON_AddNumberToObject(a->round1, "http_status", (double)dn->status);
	cJSON_AddItemToObject(a->round1, "timing", timing_json(&a->st));
	cJSON_AddItemToObject(a->round1, "usage", usage_json(&a->st));
	cJSON_AddItemToObject(a->round1, "finish_reason", str_or_null(&a->st.finish_reason));
	cJSON_AddStringToObject(a->round1, "content", a->st.content.data);
	cJSON_AddStringToObject(a->round1, "reasoning", a->st.reasoning.data);
	cJSON_AddItemToObject(a->round1, "tool_calls", cJSON_Duplicate(a->calls1, 1));
	cJSON_AddStringToObject(a->round1, "request_sha256", a->req.sha256);
	{
		char rp[320];
		snprintf(rp, sizeof(rp), "raw/%s", name1);
		cJSON_AddStringToObject(a->round1, "raw", rp);
	}
	msgs = round2_messages(a, a->calls1);
	if (!msgs || !a->round1 || !a->calls1 || !a->audit1)
		e = diag_fail(d, ERR_NOMEM, "out of memory preparing a tool result");
	if (!e)
		e = req_build(&a->req, a->c, msgs, r->model, r->suite_dir, d);
	cJSON_Delete(msgs);
	a->round = 2;
	if (!e)
		e = send_attempt(r, a, d);
	return e;
}

/* Judges a finished request of `a`. A tool case whose round 1 passed goes on
 * to round 2 (`*again` = 1, the attempt stays in flight); otherwise the record
 * is journalled: raw bytes first, then the record (so a record never points
 * at missing raw bytes). */
static enum err finish_attempt(struct runner *r, struct attempt *a,
			       const struct http_done *dn, int *again,
			       struct diag *d)
{
	struct stream_transport tr = {dn->status, dn->fail, dn->msg};
	struct stream_expect x = {1, a->c->ignore_eos ? a->c->max_tokens : -1};
	struct stream_checks ck;
	struct verdict v;
	char raw_name[256];
	cJSON *rec = NULL;
	enum err e = ERR_OK;

	*again = 0;
	if (a->feed_failed && tr.fail == HTTP_FAIL_NONE) {
		tr.fail = HTTP_FAIL_OTHER;
		tr.msg = a->feed_msg;
	}
	stream_end(&a->st, dn->end_ms);
	stream_check(&a->st, &tr, &x, &ck);
	results_raw_name(a->c->id, a->repeat, a->has_seed, a->seed, raw_name, sizeof(raw_name));
	if (a->round == 1)
		e = grade_round1(a, d);
	else
		grade_round2(a);
	if (!e && a->round == 1 && wants_round2(a)) {
		if (ck.n == 0 && a->g.ok) {
			*again = 1;
			return start_round2(r, a, dn, &ck, raw_name, d);
		}
		grade_fail(&a->g, "final answer not requested: round 1 failed");
	}
	if (!e)
		e = results_write_raw(r->res, raw_name, a->raw.data, a->raw.len, d);
	if (!e) {
		rec = make_record(r, a, dn, &ck, raw_name, &v);
		e = rec ? results_append(r->res, rec, d)
			: diag_fail(d, ERR_NOMEM, "out of memory writing a result");
	}
	if (!e)
		tally(r, &v, &ck, dn->status);
	cJSON_Delete(rec);
	return e;
}

/* ---- progress ---- */

static void fmt_dur(double s, char *out, size_t cap)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

static void progress(struct runner *r, int force)
{
	double now = io_now_ms(), el = (now - r->t0) / 1000.0, slow = -1;
	const struct attempt *sa = NULL;
	char e1[32], e2[32], e3[32];
	size_t i;

	if (!r->tty || (!force && now - r->last_progress < 250))
		return;
	r->last_progress = now;
	for (i = 0; i < r->nslots; i++)
		if (r->slots[i] && (slow < 0 || now - r->slots[i]->start_ms > slow)) {
			slow = now - r->slots[i]->start_ms;
			sa = r->slots[i];
		}
	fmt_dur(el, e1, sizeof(e1));
	if (r->n.done)
		fmt_dur(el / (double)r->n.done * (double)(r->n.total - r->n.done), e2, sizeof(e2));
	else
		snprintf(e2, sizeof(e2), "?");
	fprintf(stderr, "\r\033[K%zu/%zu  pass %zu  fail %zu  elapsed %s  eta %s", r->n.done,
		r->n.total, r->n.pass, r->n.fail, e1, e2);
	if (sa) {
		fmt_dur(slow / 1000.0, e3, sizeof(e3));
		fprintf(stderr, "  slowest %.40s#%ld %s", sa->c->id, sa->repeat, e3);
	}
	fflush(stderr);
}

/* ---- the loop ---- */

static enum err fill_slots(struct runner *r, struct diag *d)
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

static void drop_slot(struct runner *r, struct attempt *a)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (r->slots[i] == a)
			r->slots[i] = NULL;
	attempt_free(a);
}

static enum err loop(struct runner *r, struct diag *d)
{
	struct http_done dn;
	enum err e = fill_slots(r, d);

	while (!e && http_multi_pending(r->multi)) {
		e = http_multi_poll(r->multi, r->tty ? 250 : 1000, d);
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

/* ---- set-up ---- */

static enum err check_inputs(struct runner *r, struct diag *d)
{
	size_t i, n = 0;
	int recall = 0;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];
		if (!selected(r, c))
			continue;
		n++;
		recall |= c->kind == SUITE_RECALL;
		if (c->kind == SUITE_RECALL && (!r->o->tokenizer ||
						 (!r->o->template_name && !tpl_model_is_dir(r->o->tokenizer))))
			return diag_fail(d, ERR_USAGE,
					 "recall case '%s' needs '--tokenizer' and '--template' to build its documents",
					 c->id);
	}
	(void)recall;
	if (!n)
		return diag_fail(d, ERR_USAGE, "no case of '%s' matches '--case %s'",
				 r->suite->path, r->o->case_glob);
	if (!!r->o->tokenizer != (r->o->template_name || tpl_model_is_dir(r->o->tokenizer)))
		return diag_fail(d, ERR_USAGE,
				 "the token audit needs both '--tokenizer' and '--template'");
	return ERR_OK;
}

static void suite_folder(struct runner *r)
{
	const char *slash = strrchr(r->suite->path, '/');

	if (slash)
		snprintf(r->suite_dir, sizeof(r->suite_dir), "%.*s",
			 (int)(slash - r->suite->path), r->suite->path);
	else
		snprintf(r->suite_dir, sizeof(r->suite_dir), ".");
}

/* transformers' Llama-style fast tokenizers (DeepSeek V3 among them) add the
 * BOS themselves when tokenizer_config.json sets add_bos_token, although
 * tokenizer.json's post-processor does not: a raw /v1/completions prompt
 * (add_special_tokens=true) then starts with one BOS. Reads the config next
 * to the tokenizer; a missing or unreadable config means no BOS. */
static void find_bos(struct runner *r)
{
	const char *slash = strrchr(r->o->tokenizer, '/');
	const cJSON *add, *bos;
	char path[4096];
	struct buf b;
	struct diag d;
	cJSON *cfg = NULL;
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0;

	r->bos_id = -1;
	if (tpl_model_is_dir(r->o->tokenizer)) /* a model folder (tpl_model.h) */
		snprintf(path, sizeof(path), "%s/tokenizer_config.json", r->o->tokenizer);
	else
		snprintf(path, sizeof(path), "%.*s%stokenizer_config.json",
			 slash ? (int)(slash - r->o->tokenizer) : 0, r->o->tokenizer, slash ? "/" : "");
	buf_init(&b, (size_t)16 << 20);
	diag_init(&d);
	if (!io_read_file(path, &b, &d))
		cfg = cJSON_ParseWithLength(b.data, b.len);
	add = cJSON_GetObjectItemCaseSensitive(cfg, "add_bos_token");
	bos = cJSON_GetObjectItemCaseSensitive(cfg, "bos_token");
	if (cJSON_IsObject(bos))
		bos = cJSON_GetObjectItemCaseSensitive(bos, "content");
	if (cJSON_IsTrue(add) && cJSON_IsString(bos) &&
	    !tok_encode(r->tok, bos->valuestring, strlen(bos->valuestring), 0, &ids, &n, &cap, &d) &&
	    n == 1)
		r->bos_id = ids[0];
	mem_free(ids);
	cJSON_Delete(cfg);
	buf_release(&b);
}

static enum err load_locals(struct runner *r, struct diag *d)
{
	enum err e = ERR_OK;

	struct buf warn;

	r->bos_id = -1;
	buf_init(&warn, 1 << 20);
	e = tpl_model_load(r->o->tokenizer, r->o->template_name, &r->tok, &r->tpl, &warn, d);
	fputs(warn.len ? warn.data : "", stderr);
	buf_release(&warn);
	if (!e && r->tok)
		find_bos(r);
	return e;
}

static cJSON *options_json(const struct run_opts *o)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "concurrency", (double)o->concurrency);
	cJSON_AddItemToObject(j, "timeout_s", num_or_null(o->timeout, o->timeout > 0));
	cJSON_AddItemToObject(j, "idle_timeout_s", num_or_null(o->idle_timeout, o->idle_timeout > 0));
	cJSON_AddItemToObject(j, "repeat", num_or_null((double)o->repeat, o->repeat > 0));
	cJSON_AddItemToObject(j, "case", o->case_glob ? cJSON_CreateString(o->case_glob)
						      : cJSON_CreateNull());
	cJSON_AddBoolToObject(j, "resume", o->resume);
	cJSON_AddStringToObject(j, "api_key_env", o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	cJSON_AddItemToObject(j, "server", o->server ? cJSON_CreateString(o->server) : cJSON_CreateNull());
	return j;
}

static void manifest_fill(struct runner *r, cJSON *endpoint)
{
	cJSON *m = cJSON_CreateObject(), *s, *h, *t;
	char when[32], base[URL_MAX];

	h = cJSON_AddObjectToObject(m, "harness");
	cJSON_AddStringToObject(h, "name", "needle");
	cJSON_AddStringToObject(h, "version", NEEDLE_VERSION);
	s = cJSON_AddObjectToObject(m, "suite");
	cJSON_AddStringToObject(s, "name", r->suite->name);
	cJSON_AddStringToObject(s, "path", r->suite->path);
	cJSON_AddStringToObject(s, "sha256", r->suite->sha256);
	cJSON_AddNumberToObject(s, "cases", (double)r->suite->ncases);
	redacted_base(r->base, base, sizeof(base));
	cJSON_AddStringToObject(endpoint, "base_url", base);
	cJSON_AddItemToObject(m, "endpoint", endpoint);
	if (r->tok) {
		t = cJSON_AddObjectToObject(m, "tokenizer");
		cJSON_AddStringToObject(t, "path", r->o->tokenizer);
		cJSON_AddStringToObject(t, "kind", tok_kind(r->tok));
		cJSON_AddStringToObject(t, "sha256", tok_sha256(r->tok));
		cJSON_AddItemToObject(t, "completions_bos_id",
				      num_or_null((double)r->bos_id, r->bos_id >= 0));
	} else {
		cJSON_AddNullToObject(m, "tokenizer");
	}
	if (r->tpl) {
		t = cJSON_AddObjectToObject(m, "template");
		cJSON_AddStringToObject(t, "name", tpl_name(r->tpl));
		cJSON_AddStringToObject(t, "sha256", tpl_sha256(r->tpl));
		cJSON_AddStringToObject(t, "source", tpl_source(r->tpl));
		cJSON_AddStringToObject(t, "source_sha256", tpl_source_sha256(r->tpl));
		/* how the audit prepared messages (tpl.h, tpl_render_ex) */
		cJSON_AddStringToObject(t, "server", tpl_server_name(r->server));
		cJSON_AddStringToObject(t, "server_from", r->server_source);
	} else {
		cJSON_AddNullToObject(m, "template");
	}
	cJSON_AddItemToObject(m, "options", options_json(r->o));
	utc_now(when, sizeof(when));
	cJSON_AddStringToObject(m, "started_at", when);
	cJSON_AddNullToObject(m, "ended_at");
	r->manifest = m;
}

static void manifest_end(struct runner *r)
{
	cJSON *c = cJSON_CreateObject();
	char when[32];

	utc_now(when, sizeof(when));
	cJSON_ReplaceItemInObjectCaseSensitive(r->manifest, "ended_at", cJSON_CreateString(when));
	cJSON_AddNumberToObject(c, "planned", (double)r->n.total);
	cJSON_AddNumberToObject(c, "run", (double)r->n.done);
	cJSON_AddNumberToObject(c, "pass", (double)r->n.pass);
	cJSON_AddNumberToObject(c, "fail", (double)r->n.fail);
	cJSON_AddNumberToObject(c, "recorded_before", (double)(r->res->prior_pass + r->res->prior_fail));
	cJSON_DeleteItemFromObjectCaseSensitive(r->manifest, "attempts");
	cJSON_AddItemToObject(r->manifest, "attempts", c);
}

/* On --resume the suite must be the one the folder was started with. */
static enum err check_resume(struct runner *r, const char *dir, struct diag *d)
{
	cJSON *old = NULL;
	const cJSON *sha;
	enum err e = results_read_manifest(dir, &old, d);

	sha = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old, "suite"),
					       "sha256");
	if (!e && cJSON_IsString(sha) && strcmp(sha->valuestring, r->suite->sha256))
		e = diag_fail(d, ERR_USAGE,
			      "cannot resume '%s': the suite changed since the run started (SHA-256 %.12s..., now %.12s...)",
			      dir, sha->valuestring, r->suite->sha256);
	if (!e && old)
		cJSON_ReplaceItemInObjectCaseSensitive(r->manifest, "started_at",
			cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(old, "started_at"), 1));
	cJSON_Delete(old);
	return e;
}

static void default_out(const struct suite *s, char *out, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;
	char stamp[32];

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, cap, "results/%s-%s", s->name, stamp);
}

static void summary(const struct runner *r, const char *dir, int status)
{
	double el = (io_now_ms() - r->t0) / 1000.0;
	size_t prior = r->res ? r->res->prior_pass + r->res->prior_fail : 0;

	if (r->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr,
		"needle run: %zu attempts, %zu passed, %zu failed (transport %zu, audit %zu, grade %zu)",
		r->n.done, r->n.pass, r->n.fail, r->n.fail_transport, r->n.fail_audit,
		r->n.fail_grade);
	if (prior)
		fprintf(stderr, "; %zu recorded before (%zu failed)", prior, r->res->prior_fail);
	fprintf(stderr, " in %.1f s; results in %s; exit %d\n", el, dir, status);
}

/* DESIGN.md §7: summary.json, summary.md and recall.png are written at the
 * end of every run (report.h). Failing to write them is a warning: the
 * journal is intact and the run's status stands. */
static void write_report(const char *dir)
{
	struct diag rd;

	diag_init(&rd);
	if (report_write(dir, NULL, &rd))
		fprintf(stderr, "warning: %s (results are intact; retry with 'needle report %s')\n",
			rd.msg, dir);
}

static int exit_status(const struct runner *r)
{
	if (r->n.done && r->n.refused == r->n.done)
		return EXIT_ENDPOINT;
	if (r->n.fail || r->res->prior_fail)
		return EXIT_FAIL;
	return EXIT_PASS;
}

static int run(const struct run_opts *o, enum tpl_server forced,
	       const char *suite_path, struct diag *d)
{
	struct runner r;
	cJSON *endpoint = cJSON_CreateObject();
	char dir[4096];
	const char *base;
	enum err e;
	int status = EXIT_USAGE;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.server = forced;
	r.server_source = o->server ? "option" : NULL;
	r.t0 = io_now_ms();
	r.tty = isatty(STDERR_FILENO);
	r.api_key = getenv(o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	base = o->base_url ? o->base_url : getenv("OPENAI_BASE_URL");
	if (!base || !*base)
		e = diag_fail(d, ERR_USAGE, "no endpoint: pass '--base-url URL' or set OPENAI_BASE_URL");
	else if (o->api_key_env && !r.api_key)
		e = diag_fail(d, ERR_USAGE, "environment variable '%s' (from --api-key-env) is not set",
			      o->api_key_env);
	else
		e = normalise_base(base, r.base, d);
	if (!e)
		e = suite_load(suite_path, &r.suite, d);
	if (!e) {
		suite_folder(&r);
		e = check_inputs(&r, d);
	}
	if (!e)
		e = load_locals(&r, d);
	if (!e)
		e = http_multi_new(&r.multi, d);
	if (!e)
		e = discover(&r, endpoint, d);
	if (e)
		goto out;
	if (o->out)
		snprintf(dir, sizeof(dir), "%s", o->out);
	else
		default_out(r.suite, dir, sizeof(dir));
	manifest_fill(&r, endpoint);
	endpoint = NULL;
	if (o->resume && (e = check_resume(&r, dir, d)))
		goto out;
	if ((e = results_open(dir, o->resume, &r.res, d)))
		goto out;
	if ((e = results_write_manifest(r.res, r.manifest, d)))
		goto out;
	r.nslots = (size_t)o->concurrency;
	r.slots = mem_calloc(r.nslots, sizeof(*r.slots));
	if (!r.slots) {
		e = diag_fail(d, ERR_NOMEM, "out of memory");
		goto out;
	}
	r.n.total = count_todo(&r);
	progress(&r, 1);
	e = loop(&r, d);
	manifest_end(&r);
	if (!e)
		e = results_write_manifest(r.res, r.manifest, d);
	status = e ? err_exit_status(e) : exit_status(&r);
	if (!e)
		write_report(dir);
	summary(&r, dir, status);
out:
	if (e && r.tty)
		fprintf(stderr, "\r\033[K");
	if (e)
		status = cli_report("run", d);
	if (r.slots)
		for (size_t i = 0; i < r.nslots; i++)
			attempt_free(r.slots[i]);
	mem_free(r.slots);
	http_multi_free(r.multi);
	results_free(r.res);
	cJSON_Delete(r.manifest);
	cJSON_Delete(endpoint);
	tok_free(r.tok);
	tpl_free(r.tpl);
	suite_free(r.suite);
	return status;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = {0};
	const struct cli_opt opts[] = {
		{"base-url", 0, CLI_STR, "URL", "endpoint, e.g. http://127.0.0.1:8000 (default $OPENAI_BASE_URL)", &o.base_url},
		{"model", 'm', CLI_STR, "NAME", "served model name (default: the only one /v1/models lists)", &o.model},
		{"tokenizer", 't', CLI_STR, "PATH|DIR", "tokenizer.json, .model or a model folder: audit usage.prompt_tokens; needed for recall", &o.tokenizer},
		{"template", 0, CLI_STR, "NAME|PATH", "chat template for the audit and recall documents (deepseek-v3, ..., a .jinja file; default: the model folder's)", &o.template_name},
		{"concurrency", 'c', CLI_LONG, "N", "requests in flight at once (default 1)", &o.concurrency},
		{"timeout", 0, CLI_DOUBLE, "SEC", "whole-request and first-byte timeout (default scales with the prompt)", &o.timeout},
		{"idle-timeout", 0, CLI_DOUBLE, "SEC", "longest gap between response bytes (default 120)", &o.idle_timeout},
		{"out", 'o', CLI_STR, "DIR", "results folder (default results/SUITE-TIMESTAMP)", &o.out},
		{"resume", 0, CLI_FLAG, NULL, "continue DIR: skip attempts already recorded", &o.resume},
		{"case", 0, CLI_STR, "GLOB", "run only the cases whose id matches (shell glob)", &o.case_glob},
		{"repeat", 0, CLI_LONG, "N", "run every case N times (overrides the suite's repeat)", &o.repeat},
		{"api-key-env", 0, CLI_STR, "NAME", "environment variable holding the API key (default OPENAI_API_KEY)", &o.api_key_env},
		{"server", 0, CLI_STR, "vllm|sglang", "render the audit as this server prepares messages (default: detected, else vllm)", &o.server},
	};
	const struct cli_cmd cmd = {
		"run", "SUITE.json [--base-url URL] [--model NAME] [--tokenizer PATH --template NAME] [--out DIR] [--resume]",
		"Send every case of SUITE.json to an OpenAI-compatible endpoint with streaming,\n"
		"judge each response strictly (HTTP 200 alone is never success), audit\n"
		"usage.prompt_tokens against the local tokenizer, grade the answer, and journal\n"
		"one record per attempt. A live progress line is shown on a terminal; a summary\n"
		"line always ends the run on stderr.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 1, 1};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	enum tpl_server forced = TPL_SERVER_VLLM;
	struct diag d;

	diag_init(&d);
	o.concurrency = 1;
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN) {
		if (o.concurrency < 1 || o.concurrency > MAX_CONCURRENCY)
			diag_fail(&d, ERR_USAGE, "option '--concurrency' wants 1 to %d", MAX_CONCURRENCY);
		else if (o.repeat < 0 || o.repeat > SUITE_MAX_REPEAT)
			diag_fail(&d, ERR_USAGE, "option '--repeat' wants 1 to %d", SUITE_MAX_REPEAT);
		else if (o.server && tpl_server_parse(o.server, &forced, &d))
			diag_prefix(&d, "option '--server'");
	}
	if (d.code)
		return cli_report("run", &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error, not death */
	return run(&o, forced, args[0], &d);
}
