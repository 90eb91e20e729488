/*
 * why — see why.h.
 */
#include "why.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jget.h"

#define MODELS_NAMED 4 /* served model names quoted in the 404 advice */

static const char *str_or(const cJSON *v, const char *dflt)
{
	return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* Copies s into out[0..cap), cut at a UTF-8 character boundary when long. */
static void copy_cut(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

/* A grade reason's group key: see why.h. */
static void grade_key(const char *reason, char *out, size_t cap)
{
	const char *paren = strstr(reason, " ("), *colon = strstr(reason, ": ");
	size_t n = strlen(reason);

	if (colon && colon - reason >= 8 && (!paren || colon < paren))
		n = (size_t)(colon - reason);
	else if (paren)
		n = (size_t)(paren - reason);
	copy_cut(out, cap, reason, n);
}

static size_t transport_reasons(const cJSON *rec, struct why_reason *out, size_t max)
{
	const cJSON *f, *msgs = jget2(rec, "transport", "messages");
	const cJSON *st = jget(rec, "http_status");
	size_t n = 0;

	cJSON_ArrayForEach(f, jget2(rec, "transport", "failures")) {
		const char *code = str_or(f, "unknown");
		const cJSON *m = cJSON_GetArrayItem(msgs, (int)n);
		if (n == max)
			break;
		out[n].stage = "transport";
		if (!strcmp(code, "http_status") && cJSON_IsNumber(st))
			snprintf(out[n].key, sizeof(out[n].key), "%s %.0f", code, st->valuedouble);
		else
			snprintf(out[n].key, sizeof(out[n].key), "%s", code);
		snprintf(out[n].text, sizeof(out[n].text), "%s",
			 str_or(m, str_or(cJSON_GetArrayItem(msgs, 0), code)));
		n++;
	}
	return n;
}

static void audit_reason(const cJSON *rec, struct why_reason *r)
{
	const cJSON *au = jget(rec, "audit");
	const cJSON *dl = jget(au, "usage_delta");

	r->stage = "audit";
	if (!cJSON_IsNumber(dl)) {
		snprintf(r->key, sizeof(r->key), "no usage reported");
		snprintf(r->text, sizeof(r->text),
			 "the server reported no prompt_tokens (local count %.0f)",
			 jget_num(au, "local_prompt_tokens"));
		return;
	}
	snprintf(r->key, sizeof(r->key), "usage_delta outside tolerance");
	snprintf(r->text, sizeof(r->text),
		 "usage_delta %+.0f (server %.0f prompt tokens, local %.0f, tolerance %.0f)%s%s",
		 dl->valuedouble, jget_num(au, "server_prompt_tokens"),
		 jget_num(au, "local_prompt_tokens"), jget_num(au, "tolerance"),
		 jget(au, "hint") ? "; likely cause: " : "", str_or(jget(au, "hint"), ""));
}

size_t why_reasons(const cJSON *rec, struct why_reason *out, size_t max)
{
	const char *verdict = str_or(jget(rec, "verdict"), "");
	const cJSON *g;
	size_t n = 0;

	if (!strcmp(verdict, "pass") || !max)
		return 0;
	if (cJSON_IsFalse(jget2(rec, "transport", "ok")))
		n = transport_reasons(rec, out, max);
	else {
		if (cJSON_IsFalse(jget2(rec, "audit", "ok")))
			audit_reason(rec, &out[n++]);
		cJSON_ArrayForEach(g, jget2(rec, "grade", "reasons"))
			if (cJSON_IsString(g) && n < max) {
				out[n].stage = "grade";
				grade_key(g->valuestring, out[n].key, sizeof(out[n].key));
				snprintf(out[n].text, sizeof(out[n].text), "%s", g->valuestring);
				n++;
			}
	}
	if (!n) {
		out[0].stage = cJSON_IsFalse(jget2(rec, "transport", "ok")) ? "transport" : "grade";
		snprintf(out[0].key, sizeof(out[0].key), "verdict '%s' with no reason recorded", verdict);
		snprintf(out[0].text, sizeof(out[0].text), "%s", out[0].key);
		n = 1;
	}
	return n;
}

const char *why_first(const cJSON *rec, char *out, size_t cap)
{
	struct why_reason r[1];

	if (!why_reasons(rec, r, 1)) {
		out[0] = '\0';
		return "";
	}
	snprintf(out, cap, "%s", r[0].text);
	return r[0].stage;
}

void why_answer(const cJSON *rec, char *out, size_t cap)
{
	const char *s = str_or(jget(rec, "content"), "");
	char *calls = NULL;
	size_t n;

	if (!*s && cJSON_GetArraySize(jget(rec, "tool_calls")) > 0)
		s = calls = cJSON_PrintUnformatted(jget(rec, "tool_calls"));
	if (!s || !*s)
		s = str_or(jget(rec, "reasoning"), "");
	n = strlen(s);
	if (cap > WHY_ANSWER_MAX + 4)
		cap = WHY_ANSWER_MAX + 4;
	copy_cut(out, cap - 3, s, n);
	if (strlen(out) < n)
		memcpy(out + strlen(out), "...", 4);
	cJSON_free(calls);
}

/* ---- the summary's failures ---- */

static cJSON *group_of(struct json_build *jb, cJSON *arr, const struct why_reason *r)
{
	cJSON *g;

	cJSON_ArrayForEach(g, arr)
		if (!strcmp(jget(g, "stage")->valuestring, r->stage) &&
		    !strcmp(jget(g, "key")->valuestring, r->key))
			return g;
	g = json_add_obj(jb, arr, NULL);
	json_add_str(jb, g, "stage", r->stage);
	json_add_str(jb, g, "key", r->key);
	json_add_num(jb, g, "count", 0);
	json_add_arr(jb, g, "cases");
	return jb->code ? NULL : g;
}

static void add_example(struct json_build *jb, cJSON *g, const cJSON *rec,
			const struct why_reason *r, const char *dir)
{
	cJSON *ex = json_add_obj(jb, g, "example");
	const cJSON *raw = jget(rec, "raw");
	char answer[WHY_ANSWER_MAX + 4], path[4096];
	int n = cJSON_IsString(raw) ? snprintf(path, sizeof(path), "%s/%s", dir, raw->valuestring) : -1;

	json_add_dup(jb, ex, "case", jget(rec, "case"));
	json_add_dup(jb, ex, "repeat", jget(rec, "repeat"));
	json_add_dup(jb, ex, "seed", jget(rec, "seed"));
	json_add_str(jb, ex, "reason", r->text);
	why_answer(rec, answer, sizeof(answer));
	json_add_str(jb, ex, "answer", answer);
	if (n > 0 && (size_t)n < sizeof(path))
		json_add_str(jb, ex, "raw", path);
	else
		json_add_null(jb, ex, "raw");
}

static void take(struct json_build *jb, cJSON *arr, const cJSON *rec, const char *dir)
{
	struct why_reason r[WHY_REASONS_MAX];
	size_t i, n = why_reasons(rec, r, WHY_REASONS_MAX);
	const char *id = str_or(jget(rec, "case"), "");

	for (i = 0; i < n; i++) {
		cJSON *g = group_of(jb, arr, &r[i]), *c, *cases;
		int seen = 0;
		if (!g)
			return;
		cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "count"),
				     jget_num(g, "count") + 1);
		cases = cJSON_GetObjectItemCaseSensitive(g, "cases");
		cJSON_ArrayForEach(c, cases)
			seen |= !strcmp(c->valuestring, id);
		if (!seen)
			json_add_str(jb, cases, NULL, id);
		if (!jget(g, "example"))
			add_example(jb, g, rec, &r[i], dir);
	}
}

/* Stable insertion sort of the groups by count, most first. */
static void sort_groups(cJSON *arr)
{
	cJSON *sorted = cJSON_CreateArray(), *g;

	if (!sorted)
		return; /* unsorted is still right */
	while ((g = cJSON_DetachItemFromArray(arr, 0))) {
		int i = 0, n = cJSON_GetArraySize(sorted);
		while (i < n && jget_num(cJSON_GetArrayItem(sorted, i), "count") >= jget_num(g, "count"))
			i++;
		if (i == n)
			cJSON_AddItemToArray(sorted, g);
		else
			cJSON_InsertItemInArray(sorted, i, g);
	}
	while ((g = cJSON_DetachItemFromArray(sorted, 0)))
		cJSON_AddItemToArray(arr, g);
	cJSON_Delete(sorted);
}

/* ---- advice ---- */

/* One sentence of advice, built without allocating (cut when too long). */
struct line {
	char s[1024];
	size_t n;
};

static void say(struct line *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct line *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n += (size_t)k < sizeof(b->s) - b->n ? (size_t)k : sizeof(b->s) - b->n - 1;
}

struct tally {
	size_t total, transport, same_status, ctx400, ctx_sent, audit_fail, same_delta;
	double status, delta;
	const cJSON *first_fail; /* first transport-failed record */
	const cJSON *first_ctx;  /* first 400 context-length record */
};

/* A prompt too long for the server: the code stream.h gives it
 * (context_overflow: a 400 for context length, or refused before sending by
 * the pre-flight check), or an HTTP 400 whose message says so. */
static int is_context_error(const cJSON *rec)
{
	const char *m = str_or(cJSON_GetArrayItem(jget2(rec, "transport", "messages"), 0), "");
	const cJSON *f;

	cJSON_ArrayForEach(f, jget2(rec, "transport", "failures"))
		if (cJSON_IsString(f) && !strcmp(f->valuestring, "context_overflow"))
			return 1;
	return jget_num(rec, "http_status") == 400 &&
	       (strstr(m, "context length") || strstr(m, "context_length") ||
		strstr(m, "maximum context") || strstr(m, "max_model_len") ||
		strstr(m, "too long"));
}

static void count_record(struct tally *t, const cJSON *rec)
{
	const cJSON *st = jget(rec, "http_status"), *dl = jget2(rec, "audit", "usage_delta");

	t->total++;
	if (cJSON_IsFalse(jget2(rec, "transport", "ok"))) {
		if (!t->transport++) {
			t->first_fail = rec;
			t->status = cJSON_IsNumber(st) ? st->valuedouble : -1;
		}
		t->same_status += (cJSON_IsNumber(st) ? st->valuedouble : -1) == t->status;
		if (is_context_error(rec) && !t->ctx400++)
			t->first_ctx = rec;
		if (is_context_error(rec) && jget_num(rec, "http_status") == 400)
			t->ctx_sent++;
	} else if (cJSON_IsFalse(jget2(rec, "audit", "ok")) && cJSON_IsNumber(dl)) {
		if (!t->audit_fail++)
			t->delta = dl->valuedouble;
		t->same_delta += dl->valuedouble == t->delta;
	}
}

/* "'a', 'b', 'c', 'd' and 3 more" into b. */
static void model_list(struct line *b, const cJSON *models)
{
	const cJSON *m;
	int i = 0, n = cJSON_GetArraySize(models);

	cJSON_ArrayForEach(m, models) {
		if (i == MODELS_NAMED)
			break;
		say(b, "%s'%s'", i ? ", " : "", str_or(m, "?"));
		i++;
	}
	if (n > MODELS_NAMED)
		say(b, " and %d more", n - MODELS_NAMED);
}

static int listed(const cJSON *models, const char *name)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, models)
		if (cJSON_IsString(m) && !strcmp(m->valuestring, name))
			return 1;
	return 0;
}

static void advise_404(struct line *b, const struct tally *t, const cJSON *manifest)
{
	const cJSON *models = jget2(manifest, "endpoint", "models");
	const char *want = str_or(jget(t->first_fail, "model"),
				  str_or(jget2(manifest, "endpoint", "served_model"), "?"));

	if (cJSON_GetArraySize(models) > 0 && !listed(models, want)) {
		say(b, "every request got HTTP 404: the server serves ");
		model_list(b, models);
		say(b, ", not '%s'; pass one of those to --model", want);
	} else
		say(b, "every request got HTTP 404 at '%s': check --base-url (the API root, "
			   "usually ending in /v1)", str_or(jget(t->first_fail, "endpoint"), "?"));
}

/* The advice for a run where every attempt failed at transport. */
static void advise_transport(struct line *b, const struct tally *t, const cJSON *manifest)
{
	const char *msg = str_or(cJSON_GetArrayItem(jget2(t->first_fail, "transport", "messages"), 0), "");
	int st = (int)t->status, skip = 0;

	/* "HTTP 400: why" says its status once */
	if (st > 0 && sscanf(msg, "HTTP %*d: %n", &skip) >= 0 && skip > 0)
		msg += skip;

	if (st == 404)
		advise_404(b, t, manifest);
	else if (st == 401 || st == 403)
		say(b, "every request got HTTP %d: the server refused the API key; export it in "
			   "the variable --api-key-env names (%s)", st, msg);
	else if (st == 503)
		say(b, "every request got HTTP 503: the server is up but not serving (still "
			 "loading the model, or overloaded); wait, then run again");
	else if (st >= 500)
		say(b, "every request got HTTP %d: the server failed; its log says why (%s)", st, msg);
	else if (st >= 300)
		say(b, "every request got HTTP %d: %s", st, msg);
	else
		say(b, "every request failed at transport (%s): %s",
			   str_or(cJSON_GetArrayItem(jget2(t->first_fail, "transport", "failures"), 0), "?"),
			   msg);
}

static void advise_context(struct line *b, const struct tally *t, const cJSON *manifest)
{
	const cJSON *mml = jget2(manifest, "endpoint", "max_model_len");
	char lim[48] = "unknown";

	if (cJSON_IsNumber(mml))
		snprintf(lim, sizeof(lim), "%.0f", mml->valuedouble);
	if (t->ctx400 == t->total)
		say(b, "every request");
	else
		say(b, "%zu of %zu requests", t->ctx400, t->total);
	say(b, t->ctx_sent ? " got HTTP 400 context length" : " did not fit the context");
	say(b, ": the prompts are longer than the server "
		   "accepts (max_model_len %s); restart it with a larger --max-model-len, or run "
		   "a suite with shorter prompts", lim);
}

static void add_advice(struct json_build *jb, cJSON *summary, const cJSON *records,
		       const cJSON *manifest)
{
	cJSON *arr = json_add_arr(jb, summary, "advice");
	struct tally t;
	const cJSON *rec;
	struct line b;

	memset(&t, 0, sizeof(t));
	b.n = 0;
	b.s[0] = '\0';
	cJSON_ArrayForEach(rec, records)
		count_record(&t, rec);
	if (t.ctx400)
		advise_context(&b, &t, manifest);
	else if (t.total && t.transport == t.total && t.same_status == t.total)
		advise_transport(&b, &t, manifest);
	if (b.n)
		json_add_str(jb, arr, NULL, b.s);
	b.n = 0;
	b.s[0] = '\0';
	if (t.audit_fail >= 2 && t.same_delta == t.audit_fail && t.delta != 0)
		say(&b, "every failed audit is off by %+.0f tokens: the local tokenizer or "
			   "chat template differs from the server's; check --tokenizer and --template",
			   t.delta);
	if (b.n)
		json_add_str(jb, arr, NULL, b.s);
}

void why_summarise(const cJSON *records, const cJSON *manifest, const char *dir,
		   struct json_build *jb, cJSON *summary)
{
	cJSON *arr = json_add_arr(jb, summary, "failures");
	const cJSON *rec;

	cJSON_ArrayForEach(rec, records)
		if (!jb->code)
			take(jb, arr, rec, dir);
	if (!jb->code)
		sort_groups(arr);
	add_advice(jb, summary, records, manifest);
}
