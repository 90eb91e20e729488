/*
 * why — see why.h.
 */
#include "why.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "base/jget.h"
#include "base/keyset.h"
#include "base/mem.h"
#include "keys.h"

#define MODELS_NAMED 4 /* served model names quoted in the 404 advice */

static const char *str_or(const cJSON *v, const char *dflt)
{
	return jget_type(v) == cJSON_String ? v->valuestring : dflt;
}

/* Copies s into out[0..cap), cut at a UTF-8 character boundary when long. */
static void copy_cut(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = utf8_whole(s, cap - 1);
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Ends what snprintf cut in out at the last whole character. */
static void whole(char *out)
{
	out[utf8_whole(out, strlen(out))] = '\0';
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

static size_t transport_reasons(const struct record_view *v, struct why_reason *out, size_t max)
{
	const cJSON *f, *msgs = v->f[RF_TR_MESSAGES];
	const cJSON *st = v->f[RF_HTTP_STATUS];
	size_t n = 0;

	cJSON_ArrayForEach(f, v->f[RF_TR_FAILURES]) {
		const char *code = str_or(f, "unknown");
		const cJSON *m = cJSON_GetArrayItem(msgs, (int)n);
		const char *text;
		if (n == max)
			break;
		out[n].stage = "transport";
		if (!strcmp(code, "http_status") && cJSON_IsNumber(st))
			snprintf(out[n].key, sizeof(out[n].key), "%s %.0f", code, st->valuedouble);
		else
			copy_cut(out[n].key, sizeof(out[n].key), code, strlen(code));
		text = str_or(m, str_or(cJSON_GetArrayItem(msgs, 0), code));
		copy_cut(out[n].text, sizeof(out[n].text), text, strlen(text));
		n++;
	}
	return n;
}

static void audit_reason(const struct record_view *v, struct why_reason *r)
{
	const cJSON *dl = v->f[RF_AU_USAGE_DELTA], *hint = v->f[RF_AU_HINT];

	r->stage = "audit";
	if (!cJSON_IsNumber(dl)) {
		snprintf(r->key, sizeof(r->key), "no usage reported");
		snprintf(r->text, sizeof(r->text),
			 "the server reported no prompt_tokens (local count %.0f)",
			 jget_numv(v->f[RF_AU_LOCAL_PROMPT_TOKENS]));
		return;
	}
	snprintf(r->key, sizeof(r->key), "usage_delta outside tolerance");
	snprintf(r->text, sizeof(r->text),
		 "usage_delta %+.0f (server %.0f prompt tokens, local %.0f, tolerance %.0f)%s%s",
		 dl->valuedouble, jget_numv(v->f[RF_AU_SERVER_PROMPT_TOKENS]),
		 jget_numv(v->f[RF_AU_LOCAL_PROMPT_TOKENS]), jget_numv(v->f[RF_AU_TOLERANCE]),
		 hint ? "; likely cause: " : "", str_or(hint, ""));
	whole(r->text);
}

size_t why_reasons(const struct record_view *v, struct why_reason *out, size_t max)
{
	const char *verdict;
	const cJSON *g;
	size_t n = 0;

	if (record_view_passed(v) || !max)
		return 0;
	verdict = str_or(v->f[RF_VERDICT], "");
	if (jget_type(v->f[RF_TR_OK]) == cJSON_False)
		n = transport_reasons(v, out, max);
	else {
		if (jget_type(v->f[RF_AU_OK]) == cJSON_False)
			audit_reason(v, &out[n++]);
		cJSON_ArrayForEach(g, v->f[RF_GR_REASONS])
			if (cJSON_IsString(g) && n < max) {
				out[n].stage = "grade";
				grade_key(g->valuestring, out[n].key, sizeof(out[n].key));
				copy_cut(out[n].text, sizeof(out[n].text), g->valuestring,
					 strlen(g->valuestring));
				n++;
			}
	}
	if (!n) {
		out[0].stage = jget_type(v->f[RF_TR_OK]) == cJSON_False ? "transport" : "grade";
		snprintf(out[0].key, sizeof(out[0].key), "verdict '%s' with no reason recorded", verdict);
		whole(out[0].key);
		memcpy(out[0].text, out[0].key, sizeof(out[0].text));
		n = 1;
	}
	return n;
}

const char *why_first(const struct record_view *v, char *out, size_t cap)
{
	struct why_reason r[1];

	if (!why_reasons(v, r, 1)) {
		out[0] = '\0';
		return "";
	}
	copy_cut(out, cap, r[0].text, strlen(r[0].text));
	return r[0].stage;
}

/* The model's answer in the record `v` views for quoting: its content, else
 * its tool calls as compact JSON, else its reasoning, cut to WHY_ANSWER_MAX
 * bytes at a character boundary ("..." marks the cut), into out[0..cap); ""
 * when the model said nothing. */
static void why_answer(const struct record_view *v, char *out, size_t cap)
{
	const char *s = str_or(jget(v->rec, RK_CONTENT), "");
	char *calls = NULL;
	size_t n;

	if (!*s && cJSON_GetArraySize(jget(v->rec, RK_TOOL_CALLS)) > 0)
		s = calls = cJSON_PrintUnformatted(jget(v->rec, RK_TOOL_CALLS));
	if (!s || !*s)
		s = str_or(jget(v->rec, RK_REASONING), "");
	n = strlen(s);
	if (cap > WHY_ANSWER_MAX + 4)
		cap = WHY_ANSWER_MAX + 4;
	copy_cut(out, cap - 3, s, n);
	if (strlen(out) < n)
		memcpy(out + strlen(out), "...", 4);
	cJSON_free(calls);
}

/* ---- the summary's failures ---- */

/* The attempts that failed for one reason key. */
struct group {
	const char *stage;   /* static */
	char *key;           /* owned */
	size_t count;
	struct keyset seen;  /* the case ids listed */
	cJSON *cases;        /* owned array of ids, first-seen order */
	cJSON *example;      /* owned: the first such attempt */
};

struct why_fold {
	char *dir;           /* owned */
	struct group *g;     /* owned, first-seen order */
	size_t ng, capg;
	struct tally *t;     /* owned */
	int oom;             /* a take failed: the fold is incomplete */
};

static struct group *group_of(struct why_fold *w, const struct why_reason *r)
{
	struct group *g;
	size_t i;

	for (i = 0; i < w->ng; i++)
		if (w->g[i].stage == r->stage && !strcmp(w->g[i].key, r->key))
			return &w->g[i];
	if (w->ng == w->capg) {
		struct group *n = mem_grow(w->g, &w->capg, sizeof(*n), 8);
		if (!n)
			return NULL;
		w->g = n;
	}
	g = &w->g[w->ng];
	memset(g, 0, sizeof(*g));
	keyset_init(&g->seen);
	g->stage = r->stage;
	if (!(g->key = mem_strndup(r->key, strlen(r->key))) || !(g->cases = cJSON_CreateArray())) {
		mem_free(g->key);
		return NULL;
	}
	w->ng++;
	return g;
}

static cJSON *example_of(const struct record_view *v, const struct why_reason *r,
			 const char *dir)
{
	struct json_build jb;
	cJSON *ex;
	const cJSON *raw = v->f[RF_RAW];
	char answer[WHY_ANSWER_MAX + 4], path[4096];
	int n = cJSON_IsString(raw) ? snprintf(path, sizeof(path), "%s/%s", dir, raw->valuestring) : -1;

	json_build_init(&jb);
	ex = json_new_obj(&jb);
	json_add_dup(&jb, ex, RK_CASE, v->f[RF_CASE]);
	json_add_dup(&jb, ex, RK_REPEAT, v->f[RF_REPEAT]);
	json_add_dup(&jb, ex, RK_SEED, v->f[RF_SEED]);
	json_add_str(&jb, ex, SK_REASON, r->text);
	why_answer(v, answer, sizeof(answer));
	json_add_str(&jb, ex, SK_ANSWER, answer);
	if (n > 0 && (size_t)n < sizeof(path))
		json_add_str(&jb, ex, RK_RAW, path);
	else
		json_add_null(&jb, ex, RK_RAW);
	return json_build_end(&jb, &ex, "an example", NULL) ? NULL : ex;
}

/* Counts one reason of the record `v` views under its group; 0 when out of
 * memory. */
static int take_reason(struct why_fold *w, const struct record_view *v,
		       const struct why_reason *r)
{
	struct group *g = group_of(w, r);
	const char *id = str_or(v->f[RF_CASE], "");
	int added = 0;
	cJSON *s;

	if (!g)
		return 0;
	g->count++;
	if (keyset_add(&g->seen, id, &added, NULL))
		return 0;
	if (added && (!(s = cJSON_CreateString(id)) || !cJSON_AddItemToArray(g->cases, s))) {
		cJSON_Delete(s);
		return 0;
	}
	return g->example || (g->example = example_of(v, r, w->dir)) != NULL;
}

/* Stable insertion sort of the groups by count, most first. */
static void sort_groups(struct group *g, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct group x = g[i];
		for (j = i; j > 0 && g[j - 1].count < x.count; j--)
			g[j] = g[j - 1];
		g[j] = x;
	}
}

static void add_failures(const struct why_fold *w, struct json_build *jb, cJSON *summary)
{
	cJSON *arr = json_add_arr(jb, summary, SK_FAILURES);
	size_t i;

	for (i = 0; i < w->ng; i++) {
		const struct group *g = &w->g[i];
		cJSON *o = json_add_obj(jb, arr, NULL);
		json_add_str(jb, o, SK_STAGE, g->stage);
		json_add_str(jb, o, SK_KEY, g->key);
		json_add_num(jb, o, SK_COUNT, (double)g->count);
		json_add_dup(jb, o, SK_CASES, g->cases);
		json_add_dup(jb, o, SK_EXAMPLE, g->example);
	}
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
	cJSON *first_fail;      /* owned copy of the first transport-failed record */
};

/* A prompt too long for the server: the code stream.h gives it
 * (context_overflow: a 400 for context length, or refused before sending by
 * the pre-flight check), or an HTTP 400 whose message says so. */
static int is_context_error(const struct record_view *v)
{
	const char *m = str_or(cJSON_GetArrayItem(v->f[RF_TR_MESSAGES], 0), "");
	const cJSON *f;

	cJSON_ArrayForEach(f, v->f[RF_TR_FAILURES])
		if (cJSON_IsString(f) && !strcmp(f->valuestring, "context_overflow"))
			return 1;
	return jget_numv(v->f[RF_HTTP_STATUS]) == 400 &&
	       (strstr(m, "context length") || strstr(m, "context_length") ||
		strstr(m, "maximum context") || strstr(m, "max_model_len") ||
		strstr(m, "too long"));
}

/* 0 when out of memory. */
static int count_record(struct tally *t, const struct record_view *v)
{
	const cJSON *st = v->f[RF_HTTP_STATUS], *dl = v->f[RF_AU_USAGE_DELTA];
	int number = jget_type(st) == cJSON_Number;

	t->total++;
	if (jget_type(v->f[RF_TR_OK]) == cJSON_False) {
		if (!t->transport++) {
			if (!(t->first_fail = cJSON_Duplicate(v->rec, 1)))
				return 0;
			t->status = number ? st->valuedouble : -1;
		}
		t->same_status += (number ? st->valuedouble : -1) == t->status;
		t->ctx400 += is_context_error(v);
		if (is_context_error(v) && jget_numv(st) == 400)
			t->ctx_sent++;
	} else if (jget_type(v->f[RF_AU_OK]) == cJSON_False && jget_type(dl) == cJSON_Number) {
		if (!t->audit_fail++)
			t->delta = dl->valuedouble;
		t->same_delta += dl->valuedouble == t->delta;
	}
	return 1;
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
	const cJSON *models = jget2(manifest, MK_ENDPOINT, EP_MODELS);
	const char *want = str_or(jget(t->first_fail, RK_MODEL),
				  str_or(jget2(manifest, MK_ENDPOINT, EP_SERVED_MODEL), "?"));

	if (cJSON_GetArraySize(models) > 0 && !listed(models, want)) {
		say(b, "every request got HTTP 404: the server serves ");
		model_list(b, models);
		say(b, ", not '%s'; pass one of those to --model", want);
	} else
		say(b, "every request got HTTP 404 at '%s': check --base-url (the API root, "
			   "usually ending in /v1)", str_or(jget(t->first_fail, RK_ENDPOINT), "?"));
}

/* The advice for a run where every attempt failed at transport. */
static void advise_transport(struct line *b, const struct tally *t, const cJSON *manifest)
{
	const char *msg = str_or(cJSON_GetArrayItem(jget2(t->first_fail, RK_TRANSPORT, RK_MESSAGES), 0), "");
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
			   str_or(cJSON_GetArrayItem(jget2(t->first_fail, RK_TRANSPORT, RK_FAILURES), 0), "?"),
			   msg);
}

static void advise_context(struct line *b, const struct tally *t, const cJSON *manifest)
{
	const cJSON *mml = jget2(manifest, MK_ENDPOINT, EP_MAX_MODEL_LEN);
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

static void add_advice(struct json_build *jb, cJSON *summary, const struct tally *t,
		       const cJSON *manifest)
{
	cJSON *arr = json_add_arr(jb, summary, SK_ADVICE);
	struct line b;

	b.n = 0;
	b.s[0] = '\0';
	if (t->ctx400)
		advise_context(&b, t, manifest);
	else if (t->total && t->transport == t->total && t->same_status == t->total)
		advise_transport(&b, t, manifest);
	if (b.n)
		json_add_str(jb, arr, NULL, b.s);
	b.n = 0;
	b.s[0] = '\0';
	if (t->audit_fail >= 2 && t->same_delta == t->audit_fail && t->delta != 0)
		say(&b, "every failed audit is off by %+.0f tokens: the local tokenizer or "
			   "chat template differs from the server's; check --tokenizer and --template",
			   t->delta);
	if (b.n)
		json_add_str(jb, arr, NULL, b.s);
}

void why_audit_diff(size_t n, double delta, int same_delta, int same_files,
		    char *out, size_t cap)
{
	char off[64];

	if (!n) {
		snprintf(out, cap, "%s", "");
		return;
	}
	snprintf(off, sizeof(off), same_delta ? "usage_delta %+.0f on every one" : "usage_delta %+.0f first",
		 delta);
	if (same_files)
		snprintf(out, cap, "%zu attempts that passed the usage audit in A fail it in B (%s) with "
			 "the same tokenizer and chat template (SHA-256 equal in both manifests): the server "
			 "changed its tokenizer, chat template or usage counting; the local --tokenizer and "
			 "--template are not the cause", n, off);
	else
		snprintf(out, cap, "%zu attempts that passed the usage audit in A fail it in B (%s), and B "
			 "used another tokenizer or chat template than A (SHA-256): check B's --tokenizer and "
			 "--template against the deployment", n, off);
}

/* ---- the fold ---- */

struct why_fold *why_fold_new(const char *dir)
{
	struct why_fold *w = mem_calloc(1, sizeof(*w));

	if (!w || !(w->dir = mem_strndup(dir, strlen(dir))) ||
	    !(w->t = mem_calloc(1, sizeof(*w->t)))) {
		why_fold_free(w);
		return NULL;
	}
	return w;
}

void why_fold_free(struct why_fold *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->ng; i++) {
		mem_free(w->g[i].key);
		keyset_release(&w->g[i].seen);
		cJSON_Delete(w->g[i].cases);
		cJSON_Delete(w->g[i].example);
	}
	mem_free(w->g);
	if (w->t)
		cJSON_Delete(w->t->first_fail);
	mem_free(w->t);
	mem_free(w->dir);
	mem_free(w);
}

enum err why_fold_take(struct why_fold *w, const struct record_view *v)
{
	struct why_reason r[WHY_REASONS_MAX];
	size_t i, n;

	if (w->oom)
		return ERR_NOMEM;
	n = why_reasons(v, r, WHY_REASONS_MAX);
	for (i = 0; !w->oom && i < n; i++)
		w->oom = !take_reason(w, v, &r[i]);
	if (!w->oom)
		w->oom = !count_record(w->t, v);
	return w->oom ? ERR_NOMEM : ERR_OK;
}

void why_fold_summarise(struct why_fold *w, const cJSON *manifest, struct json_build *jb,
			cJSON *summary)
{
	if (w->oom && !jb->code)
		jb->code = ERR_NOMEM;
	sort_groups(w->g, w->ng);
	add_failures(w, jb, summary);
	add_advice(jb, summary, w->t, manifest);
}
