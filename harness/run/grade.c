/*
 * grade — see grade.h. PCRE2 errors are translated here and nowhere else.
 *
 * Numbers compare by value (RFC 8259 has one number type, so 34 == 34.0), but
 * a reason quotes the number as the model wrote it: the answer's number
 * lexemes are scanned in document order and paired with the parsed number
 * nodes (a pre-order walk meets numbers in the order they are written).
 */

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "grade.h"
#include "base/json.h"
#include "base/mem.h"
#include "base/rx.h"
#include "schema.h"

#define SHOW_MAX 48 /* bytes of a string value quoted in a reason */

/* How many of the first `len` bytes of `s` to quote so that at most `max`
 * are shown and no UTF-8 character is cut. */
static int quote_len(const char *s, size_t len, size_t max)
{
	size_t n = len;

	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	return (int)n;
}

struct numlex {
	const cJSON *node;
	const char *text; /* lexeme in the answer */
	int len;
	int is_int;       /* written without '.', 'e' or 'E' */
};

struct numtab {
	struct numlex *v;
	size_t n;
};

void grade_init(struct grade *g)
{
	g->ok = 1;
	g->nomem = 0;
	g->reasons = NULL;
	g->needles = NULL;
}

void grade_release(struct grade *g)
{
	if (!g)
		return;
	cJSON_Delete(g->reasons);
	cJSON_Delete(g->needles);
	grade_init(g);
}

void grade_fail(struct grade *g, const char *fmt, ...)
{
	char msg[512];
	struct json_build jb;
	int n;
	va_list ap;

	g->ok = 0;
	json_build_init(&jb);
	if (!g->reasons)
		g->reasons = json_new_arr(&jb);
	n = cJSON_GetArraySize(g->reasons);
	if (n == GRADE_MAX_REASONS) {
		json_add_str(&jb, g->reasons, NULL, "... and more differences");
	} else if (n < GRADE_MAX_REASONS) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		json_add_str(&jb, g->reasons, NULL, msg);
	}
	g->nomem |= json_build_end(&jb, NULL, "a reason", NULL) != ERR_OK;
}

/* `e`, or ERR_NOMEM when a reason could not be kept. */
static enum err kept(const struct grade *g, enum err e, struct diag *d)
{
	if (!e && g->nomem)
		return diag_fail(d, ERR_NOMEM, "out of memory grading an answer");
	return e;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_space(**s))
		(*s)++, (*len)--;
	while (*len && is_space((*s)[*len - 1]))
		(*len)--;
}

/* Number lexemes outside strings, in order. */
static enum err scan_numbers(const char *s, size_t len, struct numtab *t)
{
	size_t i = 0, cap = 0;

	while (i < len) {
		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			i++;
		} else if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
			size_t j = i;
			int is_int = 1;
			while (j < len && strchr("+-0123456789.eE", s[j])) {
				if (s[j] == '.' || s[j] == 'e' || s[j] == 'E')
					is_int = 0;
				j++;
			}
			if (t->n == cap) {
				struct numlex *nv;
				cap = cap ? cap * 2 : 16;
				nv = mem_realloc(t->v, cap * sizeof(*nv));
				if (!nv)
					return ERR_NOMEM;
				t->v = nv;
			}
			t->v[t->n].node = NULL;
			t->v[t->n].text = s + i;
			t->v[t->n].len = (int)(j - i);
			t->v[t->n++].is_int = is_int;
			i = j;
		} else {
			i++;
		}
	}
	return ERR_OK;
}

static void pair_numbers(const cJSON *v, struct numtab *t, size_t *k)
{
	const cJSON *it;

	if (cJSON_IsNumber(v)) {
		if (*k < t->n)
			t->v[(*k)++].node = v;
		return;
	}
	cJSON_ArrayForEach(it, v)
		pair_numbers(it, t, k);
}

static int by_node(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct numlex *)a)->node;
	uintptr_t y = (uintptr_t)((const struct numlex *)b)->node;

	return x < y ? -1 : x > y;
}

/* The lexeme of `node` (t sorted by node, see sort_numbers), or NULL. */
static const struct numlex *lexeme(const struct numtab *t, const cJSON *node)
{
	struct numlex key;

	if (!t || !t->n)
		return NULL;
	key.node = node;
	return bsearch(&key, t->v, t->n, sizeof(key), by_node);
}

/* Sorts the paired lexemes by node so that lexeme() is a binary search;
 * unpaired ones (node NULL) are dropped. */
static void sort_numbers(struct numtab *t, size_t paired)
{
	t->n = paired;
	if (paired)
		qsort(t->v, t->n, sizeof(*t->v), by_node);
}

static int integral(double x)
{
	return isfinite(x) && x == floor(x) && fabs(x) < 9007199254740992.0;
}

/* A short description of a value: integer 5, string "x", array of 3, ... */
static void describe(const cJSON *v, const struct numtab *t, char *out,
		     size_t cap)
{
	if (cJSON_IsNumber(v)) {
		const struct numlex *lx = lexeme(t, v);
		if (lx)
			snprintf(out, cap, "%s %.*s", lx->is_int ? "integer" : "number",
				 lx->len, lx->text);
		else
			snprintf(out, cap, "%s %.17g",
				 integral(v->valuedouble) ? "integer" : "number",
				 v->valuedouble);
	} else if (cJSON_IsString(v)) {
		size_t n = strlen(v->valuestring);
		snprintf(out, cap, "string \"%.*s%s\"", quote_len(v->valuestring, n, SHOW_MAX),
			 v->valuestring, n > SHOW_MAX ? "..." : "");
	} else if (cJSON_IsBool(v)) {
		snprintf(out, cap, "boolean %s", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNull(v)) {
		snprintf(out, cap, "null");
	} else if (cJSON_IsArray(v)) {
		snprintf(out, cap, "array");
	} else if (cJSON_IsObject(v)) {
		snprintf(out, cap, "object");
	} else {
		snprintf(out, cap, "nothing");
	}
}

static void where(char *out, size_t cap, const char *path)
{
	if (*path)
		snprintf(out, cap, "key '%s': ", path);
	else
		snprintf(out, cap, "answer: ");
}

static int same_kind(const cJSON *a, const cJSON *b)
{
	return (a->type & 0xFF) == (b->type & 0xFF) ||
	       (cJSON_IsBool(a) && cJSON_IsBool(b));
}

static int equal_at(const cJSON *want, const cJSON *got, const char *path,
		    const struct numtab *t, struct grade *g);

static int equal_objects(const cJSON *want, const cJSON *got, const char *path,
			 const struct numtab *t, struct grade *g)
{
	const cJSON *it, *o;
	char p[256];
	int ok = 1;

	cJSON_ArrayForEach(it, want) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(got, it->string);
		snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", it->string);
		if (!v) {
			grade_fail(g, "missing key '%s'", p);
			ok = 0;
		} else if (!equal_at(it, v, p, t, g)) {
			ok = 0;
		}
	}
	/* linear in the answer: each made key is looked up among the expected
	 * ones, and only an expected key can be reported twice (an unexpected
	 * one already fails) */
	cJSON_ArrayForEach(it, got) {
		if (cJSON_GetObjectItemCaseSensitive(want, it->string))
			continue;
		snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", it->string);
		grade_fail(g, "unexpected key '%s'", p);
		ok = 0;
	}
	cJSON_ArrayForEach(it, want) {
		int seen = 0;
		for (o = got->child; o && seen < 2; o = o->next)
			seen += !strcmp(o->string, it->string);
		if (seen < 2)
			continue;
		snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", it->string);
		grade_fail(g, "key '%s' appears twice", p);
		ok = 0;
	}
	return ok;
}

static int equal_arrays(const cJSON *want, const cJSON *got, const char *path,
			const struct numtab *t, struct grade *g)
{
	int nw = cJSON_GetArraySize(want), ng = cJSON_GetArraySize(got), i, ok = 1;
	const cJSON *a = want->child, *b = got->child;
	char p[256];

	if (nw != ng) {
		char w[300];
		where(w, sizeof(w), path);
		grade_fail(g, "%sexpected an array of %d, got an array of %d", w,
			   nw, ng);
		return 0;
	}
	for (i = 0; i < nw; i++, a = a->next, b = b->next) {
		snprintf(p, sizeof(p), "%s[%d]", path, i);
		if (!equal_at(a, b, p, t, g))
			ok = 0;
	}
	return ok;
}

static int equal_at(const cJSON *want, const cJSON *got, const char *path,
		    const struct numtab *t, struct grade *g)
{
	char w[300], dw[128], dg[128];

	where(w, sizeof(w), path);
	if (!same_kind(want, got)) {
		describe(want, NULL, dw, sizeof(dw));
		describe(got, t, dg, sizeof(dg));
		grade_fail(g, "%sexpected %s, got %s", w, dw, dg);
		return 0;
	}
	if (cJSON_IsNumber(want)) {
		/* RFC 8259 has one number type: 34 and 34.0 are the same value
		 * (the case generator's contract); the lexeme only makes the
		 * reason readable. */
		if (want->valuedouble == got->valuedouble)
			return 1;
		describe(want, NULL, dw, sizeof(dw));
		describe(got, t, dg, sizeof(dg));
		grade_fail(g, "%sexpected %s, got %s", w, dw, dg);
		return 0;
	}
	if (cJSON_IsString(want) && strcmp(want->valuestring, got->valuestring)) {
		describe(want, NULL, dw, sizeof(dw));
		describe(got, t, dg, sizeof(dg));
		grade_fail(g, "%sexpected %s, got %s", w, dw, dg);
		return 0;
	}
	if (cJSON_IsBool(want) && cJSON_IsTrue(want) != cJSON_IsTrue(got)) {
		grade_fail(g, "%sexpected boolean %s, got boolean %s", w,
			   cJSON_IsTrue(want) ? "true" : "false",
			   cJSON_IsTrue(got) ? "true" : "false");
		return 0;
	}
	if (cJSON_IsArray(want))
		return equal_arrays(want, got, path, t, g);
	if (cJSON_IsObject(want))
		return equal_objects(want, got, path, t, g);
	return 1;
}

/* Compares a parsed value with the expected one, types included, adding a
 * reason per difference under `path` ("" for the root). Returns 1 if equal.
 * Used for tool-call arguments. */
static int grade_json_equal(const cJSON *expected, const cJSON *got, const char *path,
			    struct grade *g)
{
	return equal_at(expected, got, path ? path : "", NULL, g);
}

static const char *find_fence(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i + 3 <= len; i++)
		if (s[i] == '`' && s[i + 1] == '`' && s[i + 2] == '`')
			return s + i;
	return NULL;
}

static int has(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= len; i++)
		if (!memcmp(s + i, needle, n))
			return 1;
	return 0;
}

/* Openings tried by embedded_json: each try may read to the end of the
 * answer, so the work stays linear in its size. */
#define EMBED_TRIES 8

/* The first JSON object or array embedded in prose, or NULL. Caller frees. */
static cJSON *embedded_json(const char *s, size_t len)
{
	size_t i;
	int tries = 0;

	for (i = 0; i < len && tries < EMBED_TRIES; i++) {
		if (s[i] == '{' || s[i] == '[') {
			tries++;
			cJSON *v = cJSON_ParseWithLengthOpts(s + i, len - i, NULL, 0);
			if (v)
				return v;
		}
	}
	return NULL;
}

/*
 * Parses the trimmed answer strictly. On failure adds the reason a person
 * needs (empty, fenced, think block, prose around JSON, not JSON) and returns
 * NULL; `*inner` then receives an embedded JSON value when there is one.
 */
static cJSON *parse_strict(const char *s, size_t len, struct grade *g,
			   cJSON **inner)
{
	const char *end = NULL;
	cJSON *v;

	*inner = NULL;
	if (!len) {
		grade_fail(g, "answer is empty");
		return NULL;
	}
	if (json_nul_at(s, len) < len) {
		grade_fail(g, "answer holds a NUL character at byte %zu", json_nul_at(s, len));
		return NULL;
	}
	v = cJSON_ParseWithLengthOpts(s, len, &end, 0);
	if (v && end == s + len) /* trimmed: nothing may follow the value */
		return v;
	cJSON_Delete(v);
	*inner = embedded_json(s, len);
	if (len >= 3 && !memcmp(s, "```", 3))
		grade_fail(g, "answer is wrapped in a code fence");
	else if (find_fence(s, len))
		grade_fail(g, "answer contains a code fence");
	else if (has(s, len, "<think>") || has(s, len, "</think>"))
		grade_fail(g, "answer contains a think block (reasoning leaked into content)");
	else if (*inner)
		grade_fail(g, "answer has prose around the JSON value");
	else
		grade_fail(g, "answer is not JSON (parse error at byte %zu: '%.*s')",
			   end && end >= s ? (size_t)(end - s) : 0,
			   end && end >= s && end < s + len
				   ? quote_len(end, (size_t)(s + len - end), 20) : 0,
			   end && end >= s && end < s + len ? end : "");
	return NULL;
}

static enum err grade_json(const cJSON *want, const char *s, size_t len,
			   struct grade *g)
{
	struct numtab t = {NULL, 0};
	cJSON *inner = NULL, *v = parse_strict(s, len, g, &inner);
	size_t k = 0;
	enum err e = ERR_OK;

	if (v) {
		e = scan_numbers(s, len, &t);
		if (!e) {
			pair_numbers(v, &t, &k);
			sort_numbers(&t, k);
			equal_at(want, v, "", &t, g);
		}
	} else if (inner) {
		struct grade tmp;
		grade_init(&tmp);
		grade_fail(g, equal_at(want, inner, "", NULL, &tmp)
				      ? "the JSON inside matches the expected value"
				      : "the JSON inside does not match the expected value either");
		grade_release(&tmp);
	}
	mem_free(t.v);
	cJSON_Delete(v);
	cJSON_Delete(inner);
	return e;
}

/* Structured outputs: the answer parses as JSON valid against the schema.
 * 1 when it parsed (valid or not), so that an expected value is compared
 * only then. */
static int grade_schema(const cJSON *schema, const char *s, size_t len, struct grade *g)
{
	cJSON *inner = NULL, *v = parse_strict(s, len, g, &inner);
	char why[SCHEMA_WHY_MAX];

	if (v && !schema_valid(schema, v, why, sizeof(why)))
		grade_fail(g, "answer breaks the schema at %s", why);
	cJSON_Delete(inner);
	cJSON_Delete(v);
	return v != NULL;
}

static enum err grade_regex(const char *pattern, const char *s, size_t len,
			    struct grade *g, struct diag *d)
{
	struct rx *re = NULL;
	struct diag md;
	size_t span[2];
	int found = 0;
	enum err e;

	if ((e = rx_compile(pattern, strlen(pattern), RX_WHOLE, &re, d)))
		return e;
	diag_init(&md);
	e = rx_find(re, NULL, s, len, 0, span, &found, &md);
	rx_free(re);
	if (e == ERR_NOMEM)
		return diag_fail(d, e, "out of memory matching a regex");
	if (e)
		grade_fail(g, "answer cannot be matched: %s", md.msg);
	else if (!found)
		grade_fail(g, "answer does not match /%s/ (answer: \"%.*s%s\")", pattern,
			   quote_len(s, len, SHOW_MAX), s, len > SHOW_MAX ? "..." : "");
	return ERR_OK;
}

static void grade_contains(const struct expect *x, const char *s, size_t len,
			   struct grade *g)
{
	size_t i;

	for (i = 0; i < x->ncontains; i++)
		if (!has(s, len, x->contains[i]))
			grade_fail(g, "answer does not contain \"%s\"", x->contains[i]);
}

enum err grade_content(const struct expect *x, const char *answer, size_t len,
		       struct grade *g, struct diag *d)
{
	enum err e = ERR_OK;

	if (!answer)
		answer = "", len = 0;
	trim(&answer, &len);
	if (x->schema && !grade_schema(x->schema, answer, len, g))
		return kept(g, e, d); /* not JSON: said once */
	if (x->kind == EXPECT_JSON)
		e = grade_json(x->json, answer, len, g);
	else if (x->kind == EXPECT_REGEX)
		e = grade_regex(x->regex, answer, len, g, d);
	else if (x->kind == EXPECT_CONTAINS)
		grade_contains(x, answer, len, g);
	if (e == ERR_NOMEM)
		diag_fail(d, e, "out of memory grading an answer");
	return kept(g, e, d);
}

/* ---- tool calls and the final answer ---- */

int grade_call_matches(const struct stream_tool_call *t,
		       const struct expect_call *want, struct grade *g)
{
	cJSON *args;
	int ok = 1;

	if (strcmp(t->name.data, want->name)) {
		grade_fail(g, "tool call: expected name '%s', got '%s'", want->name,
			   t->name.data);
		ok = 0;
	}
	if (!want->arguments)
		return ok;
	if (json_nul_at(t->arguments.data, t->arguments.len) < t->arguments.len) {
		grade_fail(g, "tool call '%s': arguments hold a NUL character at byte %zu",
			   t->name.data, json_nul_at(t->arguments.data, t->arguments.len));
		return 0;
	}
	if (json_parse(t->arguments.data, t->arguments.len, &args, "arguments", NULL) ==
	    ERR_NOMEM)
		g->nomem = 1;
	if (!args) {
		grade_fail(g, "tool call '%s': arguments are not JSON: '%.60s'", t->name.data,
			   t->arguments.data);
		ok = 0;
	} else if (!grade_json_equal(want->arguments, args, "arguments", g)) {
		ok = 0;
	}
	cJSON_Delete(args);
	return ok;
}

/* Expected call `w` against the unused made calls; marks the one it matched. */
static void match_one(const struct stream *s, const struct expect_call *w,
		      int *used, struct grade *g)
{
	size_t i;
	char *args;

	for (i = 0; i < s->ntools && i < 64; i++) {
		struct grade scratch;
		int ok;
		grade_init(&scratch);
		ok = !used[i] && grade_call_matches(&s->tools[i], w, &scratch);
		grade_release(&scratch);
		if (ok) {
			used[i] = 1;
			return;
		}
	}
	args = cJSON_PrintUnformatted(w->arguments);
	grade_fail(g, "no tool call matches %s(%s)", w->name, args ? args : "");
	cJSON_free(args);
}

static void grade_calls(const struct expect *x, const struct stream *s,
			struct grade *g)
{
	int used[64] = {0};
	size_t i;

	if (s->ntools != x->ncalls) {
		grade_fail(g, "expected %zu tool call%s, got %zu", x->ncalls,
			   x->ncalls == 1 ? "" : "s", s->ntools);
		if (!s->ntools)
			return;
	}
	if (x->one_call) {
		grade_call_matches(&s->tools[0], &x->calls[0], g);
		return;
	}
	for (i = 0; i < x->ncalls; i++)
		match_one(s, &x->calls[i], used, g);
}

/* multi_turn: name the planted turn of each fact the answer lost. */
static void annotate_facts(const struct expect *x, int nmsg, struct grade *g)
{
	size_t i;

	if (g->ok)
		return;
	for (i = 0; i < x->nfacts; i++) {
		const struct expect_fact *f = &x->facts[i];
		const cJSON *r;
		char quoted[160];
		int lost = 0;
		snprintf(quoted, sizeof(quoted), "'%s'", f->key);
		cJSON_ArrayForEach(r, g->reasons)
			lost |= strstr(r->valuestring, quoted) != NULL;
		if (lost)
			grade_fail(g, "fact '%s' was planted at messages[%d], %d messages before the question",
				   f->key, f->message, nmsg - 1 - f->message);
	}
}

enum err grade_answer(const struct expect *x, const struct stream *s,
		      int nmessages, struct grade *g, struct diag *d)
{
	enum err e;

	if (x->kind == EXPECT_TOOL_CALLS) {
		grade_calls(x, s, g);
		return kept(g, ERR_OK, d);
	}
	if (x->no_tool_call && s->ntools)
		grade_fail(g, "unexpected tool call '%s' (the case allows none)",
			   s->tools[0].name.data);
	e = grade_content(x, s->content.data, s->content.len, g, d);
	annotate_facts(x, nmessages, g);
	return kept(g, e, d);
}

enum err grade_final(const struct expect *x, const char *answer, size_t len,
		     struct grade *g, struct diag *d)
{
	size_t i;

	for (i = 0; i < x->nfinal; i++)
		if (!has(answer, len, x->final_contains[i]))
			grade_fail(g, "final answer does not contain \"%s\"", x->final_contains[i]);
	return kept(g, ERR_OK, d);
}

/* ---- recall ---- */

/* Appends {depth, project, expected, got, ok} for needle `n` to g->needles;
 * 0 when out of memory. */
static int needle_record(struct grade *g, const struct grade_needle *n,
			 const cJSON *got, int ok)
{
	struct json_build jb;
	cJSON *o;

	json_build_init(&jb);
	o = json_add_obj(&jb, g->needles, NULL);
	json_add_int(&jb, o, RK_DEPTH, n->depth);
	json_add_str(&jb, o, RK_PROJECT, n->project);
	json_add_str(&jb, o, RK_EXPECTED, n->code);
	if (got)
		json_add_dup(&jb, o, RK_GOT, got);
	else
		json_add_null(&jb, o, RK_GOT);
	json_add_bool(&jb, o, RK_OK, ok);
	return json_build_end(&jb, NULL, "a needle", NULL) == ERR_OK;
}

static int asked(const struct grade_needle *needles, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(needles[i].project, key))
			return 1;
	return 0;
}

enum err grade_recall(const struct grade_needle *needles, int n,
		      const char *answer, size_t len, struct grade *g,
		      struct diag *d)
{
	cJSON *inner = NULL, *v, *obj;
	const cJSON *it;
	int i, strict;

	if (!answer)
		answer = "", len = 0;
	trim(&answer, &len);
	v = parse_strict(answer, len, g, &inner);
	strict = v && cJSON_IsObject(v);
	if (v && !strict)
		grade_fail(g, "answer: expected an object mapping project to code, got %s",
			   cJSON_IsArray(v) ? "array" : "a non-object value");
	obj = v ? v : inner;
	if (!(g->needles = cJSON_CreateArray()))
		goto nomem;
	for (i = 0; i < n; i++) {
		const cJSON *got = cJSON_IsObject(obj)
			? cJSON_GetObjectItemCaseSensitive(obj, needles[i].project) : NULL;
		int ok = strict && cJSON_IsString(got) &&
			 !strcmp(got->valuestring, needles[i].code);
		if (!needle_record(g, &needles[i], got, ok))
			goto nomem;
		if (!strict)
			continue;
		if (!got)
			grade_fail(g, "needle at depth %d%%: missing key '%s'",
				   needles[i].depth, needles[i].project);
		else if (!ok && cJSON_IsString(got))
			grade_fail(g, "needle at depth %d%%: key '%s': expected \"%s\", got \"%.*s\"",
				   needles[i].depth, needles[i].project, needles[i].code,
				   quote_len(got->valuestring, strlen(got->valuestring), 40),
				   got->valuestring);
		else if (!ok)
			grade_fail(g, "needle at depth %d%%: key '%s': expected a string, got %s",
				   needles[i].depth, needles[i].project,
				   cJSON_IsNumber(got) ? "number" : cJSON_IsObject(got)
				   ? "object" : cJSON_IsArray(got) ? "array" : "non-string");
	}
	if (strict)
		cJSON_ArrayForEach(it, obj)
			if (!asked(needles, n, it->string))
				grade_fail(g, "unexpected key '%s'", it->string);
	cJSON_Delete(v);
	cJSON_Delete(inner);
	return kept(g, ERR_OK, d);
nomem:
	cJSON_Delete(v);
	cJSON_Delete(inner);
	return diag_fail(d, ERR_NOMEM, "out of memory grading a recall answer");
}
