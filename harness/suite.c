/*
 * suite — see suite.h. Validation walks the file once: every value is checked
 * where it is written (so an error in "defaults" names defaults.KEY), then the
 * merged case is checked as a whole (kind-specific required fields).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grade.h"
#include "mem.h"
#include "suite.h"

#define PATH_MAX_LEN 512

struct ctx {
	const char *file;
	struct diag *d;
};

static enum err fail(const struct ctx *c, const char *jpath, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));

/* "FILE: JPATH: REASON" — the one shape of every validation error. */
static enum err fail(const struct ctx *c, const char *jpath, const char *fmt,
		     ...)
{
	char reason[DIAG_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (jpath && *jpath)
		return diag_fail(c->d, ERR_INPUT, "%s: %s: %s", c->file, jpath,
				 reason);
	return diag_fail(c->d, ERR_INPUT, "%s: %s", c->file, reason);
}

static const char *const case_keys[] = {
	"id", "kind", "description", "messages", "prompt", "tools",
	"tool_choice", "temperature", "top_p", "max_tokens", "seed",
	"ignore_eos", "min_tokens", "repeat", "chat_template_kwargs",
	"reasoning_effort", "recall", "usage_tolerance", "expect", "load", NULL};
static const char *const top_keys[] = {"suite", "description", "defaults",
				       "cases", NULL};
static const char *const recall_keys[] = {"tokens", "depths", "seeds",
					  "needles", "filler", "distractors",
					  NULL};
static const char *const expect_keys[] = {"json", "regex", "contains",
					  "tool_call", "tool_calls",
					  "tool_result", "final_contains",
					  "no_tool_call", "recall",
					  "image_order", NULL};
static const char *const kind_names[] = {"chat", "recall", "tool_call",
					 "multi_turn", "image_order", "load", NULL};
static const char *const fillers[] = {"prose", "code", "zh", "mixed", NULL};
static const char *const roles[] = {"system", "developer", "user",
				    "assistant", "tool", NULL};

const char *suite_kind_name(enum suite_kind k)
{
	return (unsigned)k <= SUITE_LOAD ? kind_names[k] : "?";
}

static int lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* Levenshtein distance, case-insensitive, capped at 9 for long strings. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64];

	if (la > 62 || lb > 62)
		return 9;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag +
				(lower(a[i - 1]) != lower(b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The closest of `names` to `s` if it is plausibly a typo, else NULL. */
static const char *closest(const char *s, const char *const *names)
{
	const char *best = NULL;
	size_t bd = 99, limit = strlen(s) <= 4 ? 1 : 2;

	for (; *names; names++) {
		size_t dist = edit_distance(s, *names);
		if (dist < bd) {
			bd = dist;
			best = *names;
		}
	}
	return bd <= limit ? best : NULL;
}

static int in_list(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

/* Appends `s` at `*n` in `out` (PATH_MAX_LEN bytes), truncating. */
static void put(char *out, size_t *n, const char *s)
{
	while (*s && *n + 1 < PATH_MAX_LEN)
		out[(*n)++] = *s++;
	out[*n] = '\0';
}

/* out = base.key; `out` may be `base`. */
static void join(char *out, const char *base, const char *key)
{
	size_t n = 0;

	if (out == base)
		n = strlen(out);
	else
		put(out, &n, base);
	if (n)
		put(out, &n, ".");
	put(out, &n, key);
}

/* out = base[i]. */
static void index_path(char *out, const char *base, size_t i)
{
	char num[32];
	size_t n = 0, k = sizeof(num) - 1;

	num[k] = '\0';
	do
		num[--k] = (char)('0' + i % 10);
	while ((i /= 10) && k);
	put(out, &n, base);
	put(out, &n, "[");
	put(out, &n, num + k);
	put(out, &n, "]");
}

/* Every key of `obj` must be in `names`. */
static enum err check_keys(const struct ctx *c, const cJSON *obj,
			   const char *jpath, const char *const *names,
			   const char *what)
{
	const cJSON *it;
	char p[PATH_MAX_LEN];

	cJSON_ArrayForEach(it, obj) {
		const char *hint;
		if (in_list(it->string, names))
			continue;
		join(p, jpath, it->string);
		hint = closest(it->string, names);
		if (hint)
			return fail(c, p, "unknown %s key '%s' (did you mean '%s'?)",
				    what, it->string, hint);
		return fail(c, p, "unknown %s key '%s'", what, it->string);
	}
	return ERR_OK;
}

/* Two keys with the same name in one object: cJSON keeps both, we refuse. */
static enum err check_dupes(const struct ctx *c, const cJSON *obj,
			    const char *jpath)
{
	const cJSON *a, *b;
	char p[PATH_MAX_LEN];

	cJSON_ArrayForEach(a, obj)
		for (b = a->next; b; b = b->next)
			if (!strcmp(a->string, b->string)) {
				join(p, jpath, a->string);
				return fail(c, p, "key '%s' appears twice",
					    a->string);
			}
	return ERR_OK;
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v)) return "string";
	if (cJSON_IsBool(v)) return "boolean";
	if (cJSON_IsNull(v)) return "null";
	if (cJSON_IsArray(v)) return "array";
	if (cJSON_IsObject(v)) return "object";
	if (cJSON_IsNumber(v))
		return v->valuedouble == floor(v->valuedouble) ? "integer"
							       : "number";
	return "invalid";
}

/* An integer in [lo, hi]. */
static enum err want_int(const struct ctx *c, const cJSON *v, const char *p,
			 double lo, double hi, long *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
		return fail(c, p, "expected an integer, got %s", type_name(v));
	if (v->valuedouble < lo || v->valuedouble > hi)
		return fail(c, p, "%.17g is out of range [%.17g, %.17g]",
			    v->valuedouble, lo, hi);
	if (out)
		*out = (long)v->valuedouble;
	return ERR_OK;
}

static enum err want_type(const struct ctx *c, const cJSON *v, const char *p,
			  int ok, const char *what)
{
	return ok ? ERR_OK : fail(c, p, "expected %s, got %s", what, type_name(v));
}

static enum err check_strings(const struct ctx *c, const cJSON *v,
			      const char *p, int nonempty)
{
	const cJSON *it;
	char q[PATH_MAX_LEN];
	size_t i = 0;

	if (!cJSON_IsArray(v))
		return fail(c, p, "expected an array of strings, got %s",
			    type_name(v));
	if (nonempty && !cJSON_GetArraySize(v))
		return fail(c, p, "expected at least one string");
	cJSON_ArrayForEach(it, v) {
		index_path(q, p, i++);
		if (!cJSON_IsString(it))
			return fail(c, q, "expected a string, got %s",
				    type_name(it));
	}
	return ERR_OK;
}

static enum err check_part(const struct ctx *c, const cJSON *part,
			   const char *p)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
	const cJSON *img, *url;
	char q[PATH_MAX_LEN];

	if (!cJSON_IsObject(part))
		return fail(c, p, "expected a content part object, got %s",
			    type_name(part));
	join(q, p, "type");
	if (!cJSON_IsString(type))
		return fail(c, q, "expected a string ('text' or 'image_url')");
	if (!strcmp(type->valuestring, "text")) {
		join(q, p, "text");
		return want_type(c, cJSON_GetObjectItemCaseSensitive(part, "text"),
				 q, cJSON_IsString(cJSON_GetObjectItemCaseSensitive(part, "text")),
				 "a string");
	}
	if (strcmp(type->valuestring, "image_url"))
		return fail(c, q, "unknown content part type '%s' (expected 'text' or 'image_url')",
			    type->valuestring);
	img = cJSON_GetObjectItemCaseSensitive(part, "image_url");
	url = cJSON_GetObjectItemCaseSensitive(img, "url");
	join(q, p, "image_url.url");
	if (!cJSON_IsString(url) || !*url->valuestring)
		return fail(c, q, "expected the image as a non-empty string (a data: URL or a file path)");
	return ERR_OK;
}

static enum err check_message(const struct ctx *c, const cJSON *m,
			      const char *p)
{
	const cJSON *role, *content, *it;
	char q[PATH_MAX_LEN], r[PATH_MAX_LEN];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsObject(m))
		return fail(c, p, "expected a message object, got %s",
			    type_name(m));
	role = cJSON_GetObjectItemCaseSensitive(m, "role");
	join(q, p, "role");
	if (!cJSON_IsString(role))
		return fail(c, role ? q : p, role ? "expected a string" : "missing 'role'");
	if (!in_list(role->valuestring, roles))
		return fail(c, q, "unknown role '%s'", role->valuestring);
	content = cJSON_GetObjectItemCaseSensitive(m, "content");
	join(q, p, "content");
	if (!content || cJSON_IsNull(content)) {
		if (!strcmp(role->valuestring, "assistant") &&
		    cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))
			return ERR_OK;
		return fail(c, p, "missing 'content'");
	}
	if (cJSON_IsString(content))
		return ERR_OK;
	if (!cJSON_IsArray(content))
		return fail(c, q, "expected a string or an array of parts, got %s",
			    type_name(content));
	cJSON_ArrayForEach(it, content) {
		index_path(r, q, i++);
		e = check_part(c, it, r);
		if (e)
			return e;
	}
	return ERR_OK;
}

static enum err check_messages(const struct ctx *c, const cJSON *v,
			       const char *p)
{
	const cJSON *it;
	char q[PATH_MAX_LEN];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsArray(v))
		return fail(c, p, "expected an array of messages, got %s",
			    type_name(v));
	if (!cJSON_GetArraySize(v))
		return fail(c, p, "expected at least one message");
	cJSON_ArrayForEach(it, v) {
		index_path(q, p, i++);
		e = check_message(c, it, q);
		if (e)
			return e;
	}
	return ERR_OK;
}

static enum err check_tools(const struct ctx *c, const cJSON *v, const char *p)
{
	const cJSON *it;
	char q[PATH_MAX_LEN];
	size_t i = 0;

	if (!cJSON_IsArray(v) || !cJSON_GetArraySize(v))
		return fail(c, p, "expected a non-empty array of tools, got %s",
			    type_name(v));
	cJSON_ArrayForEach(it, v) {
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(it, "function");
		index_path(q, p, i++);
		if (!cJSON_IsObject(it))
			return fail(c, q, "expected a tool object, got %s",
				    type_name(it));
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(fn, "name"))) {
			join(q, q, "function.name");
			return fail(c, q, "expected the tool's name as a string");
		}
	}
	return ERR_OK;
}

static enum err check_recall(const struct ctx *c, const cJSON *v,
			     const char *p)
{
	const cJSON *it, *f;
	char q[PATH_MAX_LEN], r[PATH_MAX_LEN];
	size_t i;
	enum err e;

	if (!cJSON_IsObject(v))
		return fail(c, p, "expected an object, got %s", type_name(v));
	e = check_keys(c, v, p, recall_keys, "recall");
	if (!e)
		e = check_dupes(c, v, p);
	if (e)
		return e;
	join(q, p, "tokens");
	f = cJSON_GetObjectItemCaseSensitive(v, "tokens");
	if (!f)
		return fail(c, p, "missing 'tokens' (the exact prompt size)");
	if ((e = want_int(c, f, q, 64, 100000000, NULL)))
		return e;
	join(q, p, "depths");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "depths"))) {
		if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f) ||
		    cJSON_GetArraySize(f) > SUITE_MAX_DEPTHS)
			return fail(c, q, "expected an array of 1 to %d percentages",
				    SUITE_MAX_DEPTHS);
		i = 0;
		cJSON_ArrayForEach(it, f) {
			index_path(r, q, i++);
			if ((e = want_int(c, it, r, 0, 100, NULL)))
				return e;
		}
	}
	join(q, p, "seeds");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "seeds"))) {
		if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f) ||
		    cJSON_GetArraySize(f) > SUITE_MAX_SEEDS)
			return fail(c, q, "expected an array of 1 to %d seeds",
				    SUITE_MAX_SEEDS);
		i = 0;
		cJSON_ArrayForEach(it, f) {
			const cJSON *o;
			index_path(r, q, i);
			if ((e = want_int(c, it, r, 0, 9007199254740991.0, NULL)))
				return e;
			for (o = f->child; o != it; o = o->next)
				if (o->valuedouble == it->valuedouble)
					return fail(c, r, "seed %.0f appears twice",
						    it->valuedouble);
			i++;
		}
	}
	join(q, p, "needles");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "needles")) &&
	    (e = want_int(c, f, q, 1, SUITE_MAX_DEPTHS, NULL)))
		return e;
	join(q, p, "distractors");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "distractors")) &&
	    (e = want_int(c, f, q, 0, 1000, NULL)))
		return e;
	join(q, p, "filler");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "filler")) &&
	    (!cJSON_IsString(f) || !in_list(f->valuestring, fillers)))
		return fail(c, q, "expected one of 'prose', 'code', 'zh', 'mixed'");
	return ERR_OK;
}

/* {"name": S, "arguments": {...}?, "tool_result": S|{}?} */
static enum err check_call(const struct ctx *c, const cJSON *f, const char *q)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "arguments");
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(f, "tool_result");

	if (!cJSON_IsObject(f))
		return fail(c, q, "expected an object, got %s", type_name(f));
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "name")))
		return fail(c, q, "expected 'name' as a string");
	if (args && !cJSON_IsObject(args))
		return fail(c, q, "expected 'arguments' as an object");
	if (res && !cJSON_IsString(res) && !cJSON_IsObject(res))
		return fail(c, q, "expected 'tool_result' as a string or an object");
	return ERR_OK;
}

static enum err check_calls(const struct ctx *c, const cJSON *f, const char *p)
{
	const cJSON *it;
	char q[PATH_MAX_LEN];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f))
		return fail(c, p, "expected a non-empty array of calls, got %s", type_name(f));
	cJSON_ArrayForEach(it, f) {
		index_path(q, p, i++);
		if ((e = check_call(c, it, q)))
			return e;
	}
	return ERR_OK;
}

static enum err check_expect(const struct ctx *c, const cJSON *v,
			     const char *p)
{
	const cJSON *f;
	char q[PATH_MAX_LEN];
	int n = 0;
	enum err e;

	if (!cJSON_IsObject(v))
		return fail(c, p, "expected an object, got %s", type_name(v));
	if ((e = check_keys(c, v, p, expect_keys, "expect")) ||
	    (e = check_dupes(c, v, p)))
		return e;
	n = !!cJSON_GetObjectItemCaseSensitive(v, "json") +
	    !!cJSON_GetObjectItemCaseSensitive(v, "regex") +
	    !!cJSON_GetObjectItemCaseSensitive(v, "contains") +
	    !!cJSON_GetObjectItemCaseSensitive(v, "tool_call") +
	    !!cJSON_GetObjectItemCaseSensitive(v, "tool_calls");
	if (n != 1)
		return fail(c, p, "expected exactly one of 'json', 'regex', 'contains', 'tool_call', 'tool_calls' (found %d)",
			    n);
	join(q, p, "no_tool_call");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "no_tool_call")) && !cJSON_IsBool(f))
		return fail(c, q, "expected a boolean, got %s", type_name(f));
	join(q, p, "recall");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "recall")) && !cJSON_IsArray(f))
		return fail(c, q, "expected an array of {key, message}, got %s", type_name(f));
	join(q, p, "image_order");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "image_order")) && !cJSON_IsObject(f))
		return fail(c, q, "expected an object, got %s", type_name(f));
	join(q, p, "tool_calls");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "tool_calls")) &&
	    (e = check_calls(c, f, q)))
		return e;
	join(q, p, "regex");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "regex"))) {
		if (!cJSON_IsString(f))
			return fail(c, q, "expected a string, got %s",
				    type_name(f));
		if ((e = grade_regex_check(f->valuestring, c->d))) {
			diag_prefix(c->d, "%s: %s", c->file, q);
			return e;
		}
	}
	join(q, p, "contains");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "contains")) &&
	    (e = check_strings(c, f, q, 1)))
		return e;
	join(q, p, "final_contains");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "final_contains")) &&
	    (e = check_strings(c, f, q, 0)))
		return e;
	join(q, p, "tool_result");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "tool_result")) &&
	    !cJSON_IsString(f) && !cJSON_IsObject(f))
		return fail(c, q, "expected a string or an object, got %s",
			    type_name(f));
	if ((cJSON_GetObjectItemCaseSensitive(v, "tool_result") ||
	     cJSON_GetObjectItemCaseSensitive(v, "final_contains")) &&
	    !cJSON_GetObjectItemCaseSensitive(v, "tool_call") &&
	    !cJSON_GetObjectItemCaseSensitive(v, "tool_calls"))
		return fail(c, p, "'tool_result' and 'final_contains' need 'tool_call' or 'tool_calls'");
	join(q, p, "tool_call");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "tool_call")) &&
	    (e = check_call(c, f, q)))
		return e;
	return ERR_OK;
}

/* Checks one field's value where it is written (a case or "defaults"). */
static enum err check_field(const struct ctx *c, const cJSON *v,
			    const char *p)
{
	const char *k = v->string;

	if (!strcmp(k, "id"))
		return cJSON_IsString(v) && *v->valuestring
			       ? ERR_OK
			       : fail(c, p, "expected a non-empty string, got %s",
				      type_name(v));
	if (!strcmp(k, "kind")) {
		const char *hint;
		if (!cJSON_IsString(v))
			return fail(c, p, "expected a string, got %s", type_name(v));
		if (in_list(v->valuestring, kind_names))
			return ERR_OK;
		hint = closest(v->valuestring, kind_names);
		return fail(c, p, "unknown kind '%s'%s%s%s (expected chat, recall, tool_call, multi_turn, image_order or load)",
			    v->valuestring, hint ? " (did you mean '" : "",
			    hint ? hint : "", hint ? "'?)" : "");
	}
	if (!strcmp(k, "description") || !strcmp(k, "prompt"))
		return want_type(c, v, p, cJSON_IsString(v), "a string");
	if (!strcmp(k, "messages"))
		return check_messages(c, v, p);
	if (!strcmp(k, "tools"))
		return check_tools(c, v, p);
	if (!strcmp(k, "tool_choice"))
		return want_type(c, v, p, cJSON_IsString(v) || cJSON_IsObject(v),
				 "a string or an object");
	if (!strcmp(k, "temperature"))
		return !cJSON_IsNumber(v) ? want_type(c, v, p, 0, "a number")
		       : v->valuedouble < 0 || v->valuedouble > 100
			       ? fail(c, p, "%.17g is out of range [0, 100]", v->valuedouble)
			       : ERR_OK;
	if (!strcmp(k, "top_p"))
		return !cJSON_IsNumber(v) ? want_type(c, v, p, 0, "a number")
		       : v->valuedouble <= 0 || v->valuedouble > 1
			       ? fail(c, p, "%.17g is out of range (0, 1]", v->valuedouble)
			       : ERR_OK;
	if (!strcmp(k, "max_tokens"))
		return want_int(c, v, p, 1, 100000000, NULL);
	if (!strcmp(k, "min_tokens"))
		return want_int(c, v, p, 0, 100000000, NULL);
	if (!strcmp(k, "seed"))
		return want_int(c, v, p, -9007199254740991.0, 9007199254740991.0, NULL);
	if (!strcmp(k, "repeat"))
		return want_int(c, v, p, 1, SUITE_MAX_REPEAT, NULL);
	if (!strcmp(k, "usage_tolerance"))
		return want_int(c, v, p, 0, 100000000, NULL);
	if (!strcmp(k, "ignore_eos"))
		return want_type(c, v, p, cJSON_IsBool(v), "a boolean");
	if (!strcmp(k, "chat_template_kwargs"))
		return want_type(c, v, p, cJSON_IsObject(v), "an object");
	if (!strcmp(k, "reasoning_effort"))
		return want_type(c, v, p, cJSON_IsString(v) || cJSON_IsNumber(v),
				 "a string or a number");
	if (!strcmp(k, "recall"))
		return check_recall(c, v, p);
	if (!strcmp(k, "load"))
		return loadspec_parse(v, c->file, p, NULL, c->d);
	if (!strcmp(k, "expect"))
		return check_expect(c, v, p);
	return fail(c, p, "unknown key '%s'", k);
}

/* Checks every field of a case (or of "defaults") where it is written. */
static enum err check_fields(const struct ctx *c, const cJSON *obj,
			     const char *jpath, int is_defaults)
{
	const cJSON *it;
	char p[PATH_MAX_LEN];
	enum err e;

	if (!cJSON_IsObject(obj))
		return fail(c, jpath, "expected an object, got %s", type_name(obj));
	if ((e = check_keys(c, obj, jpath, case_keys, "case")) ||
	    (e = check_dupes(c, obj, jpath)))
		return e;
	cJSON_ArrayForEach(it, obj) {
		join(p, jpath, it->string);
		if (is_defaults && !strcmp(it->string, "id"))
			return fail(c, p, "'id' cannot have a default");
		if ((e = check_field(c, it, p)))
			return e;
	}
	return ERR_OK;
}

/* Defaults first, then the case's own fields replacing them. */
static cJSON *merge(const cJSON *defaults, const cJSON *kase)
{
	cJSON *m = cJSON_CreateObject();
	const cJSON *it;

	if (!m)
		return NULL;
	cJSON_ArrayForEach(it, defaults)
		if (!cJSON_GetObjectItemCaseSensitive(kase, it->string) &&
		    !cJSON_AddItemToObject(m, it->string, cJSON_Duplicate(it, 1)))
			goto nomem;
	cJSON_ArrayForEach(it, kase)
		if (!cJSON_AddItemToObject(m, it->string, cJSON_Duplicate(it, 1)))
			goto nomem;
	return m;
nomem:
	cJSON_Delete(m);
	return NULL;
}

static int count_images(const cJSON *messages)
{
	const cJSON *m, *part;
	int n = 0;

	cJSON_ArrayForEach(m, messages) {
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsArray(content))
			continue;
		cJSON_ArrayForEach(part, content) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "type");
			n += cJSON_IsString(t) && !strcmp(t->valuestring, "image_url");
		}
	}
	return n;
}

static int has_role(const cJSON *messages, const char *role)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, messages) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "role");
		if (cJSON_IsString(r) && !strcmp(r->valuestring, role))
			return 1;
	}
	return 0;
}

static void fill_recall(struct suite_recall *r, const cJSON *v)
{
	const cJSON *f, *it;

	r->tokens = (long)cJSON_GetObjectItemCaseSensitive(v, "tokens")->valuedouble;
	f = cJSON_GetObjectItemCaseSensitive(v, "depths");
	if (f) {
		cJSON_ArrayForEach(it, f)
			r->depths[r->ndepths++] = (int)it->valuedouble;
	} else {
		r->depths[0] = 10, r->depths[1] = 50, r->depths[2] = 90;
		r->ndepths = 3;
	}
	f = cJSON_GetObjectItemCaseSensitive(v, "seeds");
	if (f) {
		cJSON_ArrayForEach(it, f)
			r->seeds[r->nseeds++] = (long)it->valuedouble;
	} else {
		r->seeds[0] = 1;
		r->nseeds = 1;
	}
	f = cJSON_GetObjectItemCaseSensitive(v, "needles");
	r->needles = f ? (int)f->valuedouble : r->ndepths;
	f = cJSON_GetObjectItemCaseSensitive(v, "filler");
	r->filler = f ? f->valuestring : "prose";
	f = cJSON_GetObjectItemCaseSensitive(v, "distractors");
	r->distractors = f ? (int)f->valuedouble : 0;
}

static enum suite_expect expect_kind(const cJSON *e)
{
	if (!e) return SUITE_EXPECT_NONE;
	if (cJSON_GetObjectItemCaseSensitive(e, "json")) return SUITE_EXPECT_JSON;
	if (cJSON_GetObjectItemCaseSensitive(e, "regex")) return SUITE_EXPECT_REGEX;
	if (cJSON_GetObjectItemCaseSensitive(e, "contains")) return SUITE_EXPECT_CONTAINS;
	return SUITE_EXPECT_TOOL_CALL; /* tool_call or tool_calls */
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Fills the typed view of a merged case. */
static void fill_case(struct suite_case *k, const cJSON *m, size_t index)
{
	const cJSON *f;
	size_t i;

	memset(k, 0, sizeof(*k));
	k->index = index;
	k->json = m;
	k->id = get(m, "id")->valuestring;
	f = get(m, "kind");
	k->kind = SUITE_CHAT;
	for (i = 0; f && kind_names[i]; i++)
		if (!strcmp(f->valuestring, kind_names[i]))
			k->kind = (enum suite_kind)i;
	k->messages = get(m, "messages");
	k->prompt = (f = get(m, "prompt")) ? f->valuestring : NULL;
	k->tools = get(m, "tools");
	k->kwargs = get(m, "chat_template_kwargs");
	k->expect = get(m, "expect");
	k->expect_kind = expect_kind(k->expect);
	k->repeat = (f = get(m, "repeat")) ? (long)f->valuedouble : 1;
	k->usage_tolerance = (f = get(m, "usage_tolerance")) ? (long)f->valuedouble : 0;
	k->max_tokens = (f = get(m, "max_tokens")) ? (long)f->valuedouble : 0;
	if ((f = get(m, "seed"))) {
		k->has_seed = 1;
		k->seed = (long)f->valuedouble;
	}
	k->ignore_eos = cJSON_IsTrue(get(m, "ignore_eos"));
	if (k->kind == SUITE_RECALL)
		fill_recall(&k->recall, get(m, "recall"));
	if (k->kind == SUITE_LOAD && get(m, "load")) /* validated where written */
		(void)loadspec_parse(get(m, "load"), "", "", &k->load, NULL);
}

/* Kind-specific rules on the merged case. */
static enum err check_case(const struct ctx *c, const struct suite_case *k,
			   const char *p)
{
	const cJSON *min = get(k->json, "min_tokens");
	int chatty = k->kind != SUITE_RECALL && k->kind != SUITE_LOAD;

	if (chatty && !k->messages && !k->prompt)
		return fail(c, p, "a %s case needs 'messages'%s", suite_kind_name(k->kind),
			    k->kind == SUITE_CHAT ? " or 'prompt'" : "");
	if (k->messages && k->prompt)
		return fail(c, p, "give 'messages' or 'prompt', not both");
	if (k->prompt && k->kind != SUITE_CHAT)
		return fail(c, p, "'prompt' (raw completion) is for chat cases only");
	if (k->kind == SUITE_RECALL) {
		if (!get(k->json, "recall"))
			return fail(c, p, "a recall case needs 'recall' (at least {\"tokens\": N})");
		if (k->messages || k->prompt)
			return fail(c, p, "a recall case is generated: remove 'messages'/'prompt'");
		if (k->expect)
			return fail(c, p, "a recall case is graded against its generated needles: remove 'expect'");
		if (k->recall.needles < k->recall.ndepths)
			return fail(c, p, "recall.needles (%d) is less than the number of depths (%d)",
				    k->recall.needles, k->recall.ndepths);
	} else if (get(k->json, "recall")) {
		return fail(c, p, "'recall' is only for recall cases");
	}
	if (k->kind == SUITE_LOAD) {
		if (!get(k->json, "load"))
			return fail(c, p, "a load case needs 'load' (at least input_tokens, output_tokens, concurrency or rate, requests)");
		if (k->messages || k->prompt || k->expect)
			return fail(c, p, "a load case is generated and checked for exact lengths: remove 'messages'/'prompt'/'expect'");
	} else if (get(k->json, "load")) {
		return fail(c, p, "'load' is only for load cases");
	}
	if (k->kind == SUITE_TOOL_CALL && (!k->tools || !k->expect ||
	    (k->expect_kind != SUITE_EXPECT_TOOL_CALL &&
	     !cJSON_IsTrue(get(k->expect, "no_tool_call")))))
		return fail(c, p, "a tool_call case needs 'tools' and 'expect.tool_call', 'expect.tool_calls' or 'expect.no_tool_call'");
	if (k->kind != SUITE_TOOL_CALL && k->expect_kind == SUITE_EXPECT_TOOL_CALL)
		return fail(c, p, "'expect.tool_call' is only for tool_call cases");
	if (k->kind == SUITE_MULTI_TURN && !has_role(k->messages, "assistant"))
		return fail(c, p, "a multi_turn case needs an earlier assistant turn in 'messages'");
	if (k->kind == SUITE_IMAGE_ORDER && count_images(k->messages) < 2)
		return fail(c, p, "an image_order case needs at least two images in 'messages'");
	if (k->ignore_eos && !k->max_tokens)
		return fail(c, p, "'ignore_eos' needs 'max_tokens' (the fixed length)");
	if (min && k->max_tokens && (long)min->valuedouble > k->max_tokens)
		return fail(c, p, "'min_tokens' (%ld) is greater than 'max_tokens' (%ld)",
			    (long)min->valuedouble, k->max_tokens);
	return ERR_OK;
}

/* 1-based line and column of byte `off`. */
static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = 1, *col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n')
			(*line)++, *col = 1;
		else
			(*col)++;
	}
}

static enum err check_top(const struct ctx *c, const cJSON *root)
{
	const cJSON *f;
	enum err e;

	if (!cJSON_IsObject(root))
		return fail(c, NULL, "expected a JSON object at the top, got %s",
			    type_name(root));
	if ((e = check_keys(c, root, "", top_keys, "top-level")) ||
	    (e = check_dupes(c, root, "")))
		return e;
	f = get(root, "suite");
	if (!f)
		return fail(c, NULL, "missing 'suite' (the suite's name)");
	if (!cJSON_IsString(f) || !*f->valuestring)
		return fail(c, "suite", "expected a non-empty string, got %s", type_name(f));
	f = get(root, "description");
	if (f && !cJSON_IsString(f))
		return fail(c, "description", "expected a string, got %s", type_name(f));
	f = get(root, "defaults");
	if (f && (e = check_fields(c, f, "defaults", 1)))
		return e;
	f = get(root, "cases");
	if (!f)
		return fail(c, NULL, "missing 'cases'");
	if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f))
		return fail(c, "cases", "expected a non-empty array of cases, got %s",
			    cJSON_IsArray(f) ? "an empty array" : type_name(f));
	if (cJSON_GetArraySize(f) > SUITE_MAX_CASES)
		return fail(c, "cases", "more than %d cases", SUITE_MAX_CASES);
	return ERR_OK;
}

static enum err build_cases(const struct ctx *c, struct suite *s)
{
	const cJSON *defaults = get(s->root, "defaults"), *it;
	size_t i = 0, j;
	char p[PATH_MAX_LEN];
	enum err e;

	s->merged = cJSON_CreateArray();
	s->cases = mem_calloc((size_t)cJSON_GetArraySize(get(s->root, "cases")),
			      sizeof(*s->cases));
	if (!s->merged || !s->cases)
		return diag_fail(c->d, ERR_NOMEM, "out of memory reading '%s'", c->file);
	cJSON_ArrayForEach(it, get(s->root, "cases")) {
		cJSON *m;
		index_path(p, "cases", i);
		if ((e = check_fields(c, it, p, 0)))
			return e;
		if (!get(it, "id"))
			return fail(c, p, "missing 'id'");
		m = merge(defaults, it);
		if (!m || !cJSON_AddItemToArray(s->merged, m)) {
			cJSON_Delete(m);
			return diag_fail(c->d, ERR_NOMEM, "out of memory reading '%s'", c->file);
		}
		fill_case(&s->cases[i], m, i);
		for (j = 0; j < i; j++)
			if (!strcmp(s->cases[j].id, s->cases[i].id)) {
				char q[PATH_MAX_LEN];
				join(q, p, "id");
				return fail(c, q, "duplicate id '%s' (first at cases[%zu])",
					    s->cases[i].id, j);
			}
		s->ncases = ++i;
		if ((e = check_case(c, &s->cases[i - 1], p)))
			return e;
	}
	return ERR_OK;
}

/* ---- strings holding \u0000 -------------------------------------------- */

#define NUL_MAX_DEPTH 1024 /* beyond cJSON's nesting limit (1000) */
#define NUL_KEY_DEPTH 32   /* frames whose key is kept for the path */

struct nul_scan {
	unsigned char is_arr[NUL_MAX_DEPTH];
	size_t idx[NUL_MAX_DEPTH];
	char key[NUL_KEY_DEPTH][64];
	int depth;
};

/* Skips the string starting at t[*i] == '"'; *i ends on the closing quote.
 * Returns 1 if it holds the escape \u0000. Copies up to cap-1 raw bytes into
 * `raw` when given. */
static int nul_string(const char *t, size_t len, size_t *i, char *raw, size_t cap)
{
	size_t j = *i + 1, n = 0;
	int nul = 0;

	for (; j < len && t[j] != '"'; j++) {
		if (raw && n + 1 < cap)
			raw[n++] = t[j];
		if (t[j] == '\\' && j + 1 < len) {
			if (t[j + 1] == 'u' && j + 5 < len && !memcmp(t + j + 2, "0000", 4))
				nul = 1;
			if (raw && n + 1 < cap)
				raw[n++] = t[j + 1];
			j++;
		}
	}
	if (raw)
		raw[n] = '\0';
	*i = j;
	return nul;
}

static void nul_path(const struct nul_scan *s, int with_key, char *out)
{
	int f, n = s->depth < NUL_KEY_DEPTH ? s->depth : NUL_KEY_DEPTH;

	out[0] = '\0';
	for (f = 0; f < n; f++) {
		if (s->is_arr[f])
			index_path(out, out, s->idx[f]);
		else if (f < n - 1 || with_key)
			join(out, out, s->key[f]);
	}
}

/* cJSON ends a string at \u0000 and keeps no length, so a suite string holding
 * one would be sent and counted cut short without a word. Scans the (already
 * valid) JSON text and fails naming the first such string's JSON path. */
static enum err check_nul(const struct ctx *c, const char *t, size_t len)
{
	struct nul_scan s; /* ~11 KB */
	char p[PATH_MAX_LEN];
	int expect_key = 0;
	size_t i;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < len; i++) {
		int top = s.depth - 1;

		if (t[i] == '{' || t[i] == '[') {
			if (s.depth == NUL_MAX_DEPTH)
				return ERR_OK; /* cJSON refused it already */
			s.is_arr[s.depth] = t[i] == '[';
			s.idx[s.depth] = 0;
			if (s.depth < NUL_KEY_DEPTH)
				s.key[s.depth][0] = '\0';
			s.depth++;
			expect_key = t[i] == '{';
		} else if (t[i] == '}' || t[i] == ']') {
			s.depth--;
			expect_key = 0;
		} else if (t[i] == ',' && top >= 0) {
			if (s.is_arr[top])
				s.idx[top]++;
			else
				expect_key = 1;
		} else if (t[i] == '"') {
			int is_key = expect_key && top >= 0 && !s.is_arr[top];
			char *raw = is_key && top < NUL_KEY_DEPTH ? s.key[top] : NULL;
			int nul = nul_string(t, len, &i, raw, sizeof(s.key[0]));

			expect_key = 0;
			if (nul) {
				nul_path(&s, !is_key, p);
				return fail(c, p, "%s holds \\u0000, which needle's JSON parser "
					    "would cut short", is_key ? "a key" : "the string");
			}
		}
	}
	return ERR_OK;
}

enum err suite_parse(const char *path, const char *text, size_t len,
		     struct suite **out, struct diag *d)
{
	struct ctx c = {path, d};
	const char *end = NULL;
	struct suite *s;
	enum err e;

	*out = NULL;
	s = mem_calloc(1, sizeof(*s));
	if (!s || !(s->path = mem_strndup(path, strlen(path)))) {
		mem_free(s);
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	}
	io_sha256_hex(text, len, s->sha256);
	s->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (s->root) { /* nothing but whitespace may follow the value */
		const char *p = end;
		while (p < text + len && strchr(" \t\r\n", *p) && *p)
			p++;
		if (p < text + len) {
			cJSON_Delete(s->root);
			s->root = NULL;
			end = p;
		}
	}
	if (!s->root) {
		size_t line, col, off = end && end >= text ? (size_t)(end - text) : 0;
		if (!end)
			off = cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - text) : 0;
		if (off > len)
			off = len;
		line_col(text, off, &line, &col);
		e = fail(&c, NULL, "not valid JSON at line %zu, column %zu", line, col);
		goto out;
	}
	if ((e = check_nul(&c, text, len)) || (e = check_top(&c, s->root)) ||
	    (e = build_cases(&c, s)))
		goto out;
	s->name = get(s->root, "suite")->valuestring;
	s->description = cJSON_IsString(get(s->root, "description"))
				 ? get(s->root, "description")->valuestring
				 : NULL;
out:
	if (e)
		suite_free(s);
	else
		*out = s;
	return e;
}

enum err suite_load(const char *path, struct suite **out, struct diag *d)
{
	struct buf b;
	enum err e;

	*out = NULL;
	buf_init(&b, SUITE_MAX_BYTES);
	e = io_read_file(path, &b, d);
	if (e == ERR_LIMIT)
		diag_prefix(d, "suite '%s' is too large", path);
	if (!e)
		e = suite_parse(path, b.data, b.len, out, d);
	buf_release(&b);
	return e;
}

void suite_free(struct suite *s)
{
	if (!s)
		return;
	cJSON_Delete(s->root);
	cJSON_Delete(s->merged);
	mem_free(s->cases);
	mem_free(s->path);
	mem_free(s);
}

const struct suite_case *suite_find(const struct suite *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->ncases; i++)
		if (!strcmp(s->cases[i].id, id))
			return &s->cases[i];
	return NULL;
}
