/*
 * schema — see schema.h.
 */
#include "schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/rx.h"


static const char *const annotations[] = {"$schema", "$comment", "title", "description", "default",
					  "examples", "readOnly", "writeOnly", "deprecated", NULL};
static const char *const assertions[] = {
	"type", "enum", "const", "properties", "required", "additionalProperties",
	"patternProperties", "minProperties", "maxProperties", "items", "additionalItems",
	"prefixItems", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength",
	"pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"allOf", "anyOf", "oneOf", "not", NULL};
static const char *const types[] = {"null", "boolean", "object", "array", "number", "integer",
				    "string", NULL};

static int listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

/* Appends a JSON pointer segment (~ and / escaped) to path[SCHEMA_WHERE_MAX];
 * returns the old length, to cut back to. */
static size_t push(char *path, const char *seg)
{
	size_t n = strlen(path), k = n;

	if (k + 1 < SCHEMA_WHERE_MAX)
		path[k++] = '/';
	for (; *seg && k + 3 < SCHEMA_WHERE_MAX; seg++) {
		if (*seg == '~' || *seg == '/') {
			path[k++] = '~';
			path[k++] = *seg == '~' ? '0' : '1';
		} else {
			path[k++] = *seg;
		}
	}
	path[k] = '\0';
	return n;
}

static size_t push_index(char *path, size_t i)
{
	char t[24];

	snprintf(t, sizeof(t), "%zu", i);
	return push(path, t);
}

/* The schema at JSON pointer `ref` ("#", "#/a/b") inside `root`, or NULL. */
static const cJSON *resolve(const cJSON *root, const char *ref)
{
	const cJSON *at = root;
	char seg[256];

	if (ref[0] != '#')
		return NULL;
	ref++;
	while (*ref == '/' && at) {
		size_t k = 0;

		for (ref++; *ref && *ref != '/' && k + 1 < sizeof(seg); ref++) {
			if (*ref == '~' && (ref[1] == '0' || ref[1] == '1'))
				seg[k++] = *++ref == '0' ? '~' : '/';
			else
				seg[k++] = *ref;
		}
		seg[k] = '\0';
		if (cJSON_IsArray(at)) {
			char *end;
			long i = strtol(seg, &end, 10);
			at = *end || end == seg || i < 0 ? NULL : cJSON_GetArrayItem(at, (int)i);
		} else {
			at = cJSON_GetObjectItemCaseSensitive(at, seg);
		}
	}
	return *ref ? NULL : at;
}

/* ---- checking a schema ---- */

struct check {
	const cJSON *root;
	char where[SCHEMA_WHERE_MAX];
	char *why;
	size_t cap;
};

static int bad(struct check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->cap, fmt, ap);
	va_end(ap);
	return 1;
}

static int check_schema(struct check *c, const cJSON *s, int depth);

static int is_count(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble == floor(v->valuedouble);
}

/* Each member of an object of schemas, or each item of an array of them. */
static int check_each(struct check *c, const cJSON *v, int depth, int nonempty)
{
	const cJSON *it;
	size_t i = 0, at;

	if ((!cJSON_IsObject(v) && !cJSON_IsArray(v)) || (nonempty && !cJSON_GetArraySize(v)))
		return bad(c, nonempty ? "expected a non-empty array of schemas" : "expected schemas");
	cJSON_ArrayForEach(it, v) {
		at = it->string ? push(c->where, it->string) : push_index(c->where, i);
		if (check_schema(c, it, depth + 1))
			return 1;
		c->where[at] = '\0';
		i++;
	}
	return 0;
}

static int check_type(struct check *c, const cJSON *v)
{
	const cJSON *it;

	if (cJSON_IsString(v))
		return listed(types, v->valuestring) ? 0 : bad(c, "unknown type '%s'", v->valuestring);
	if (!cJSON_IsArray(v) || !cJSON_GetArraySize(v))
		return bad(c, "expected a type name or a non-empty list of them");
	cJSON_ArrayForEach(it, v)
		if (!cJSON_IsString(it) || !listed(types, it->valuestring))
			return bad(c, "expected type names");
	return 0;
}

static int check_pattern(struct check *c, const cJSON *v)
{
	struct rx *re = NULL;
	struct diag d;

	if (!cJSON_IsString(v))
		return bad(c, "expected a regular expression as a string");
	diag_init(&d);
	if (rx_compile(v->valuestring, strlen(v->valuestring), 0, &re, &d))
		return bad(c, "%s", d.msg);
	rx_free(re);
	return 0;
}

/* One keyword `k` of a schema, its value `v`. */
static int check_keyword(struct check *c, const cJSON *s, const cJSON *v, int depth)
{
	const char *k = v->string;
	const cJSON *it;

	if (!strcmp(k, "type"))
		return check_type(c, v);
	if (!strcmp(k, "enum"))
		return cJSON_IsArray(v) ? 0 : bad(c, "expected an array of values");
	if (!strcmp(k, "required")) {
		if (!cJSON_IsArray(v))
			return bad(c, "expected an array of property names");
		cJSON_ArrayForEach(it, v)
			if (!cJSON_IsString(it))
				return bad(c, "expected property names as strings");
		return 0;
	}
	if (!strcmp(k, "properties") || !strcmp(k, "patternProperties") || !strcmp(k, "$defs") ||
	    !strcmp(k, "definitions")) {
		if (!cJSON_IsObject(v))
			return bad(c, "expected an object of schemas");
		if (!strcmp(k, "patternProperties"))
			cJSON_ArrayForEach(it, v) {
				cJSON key = {0};

				key.type = cJSON_String;
				key.valuestring = it->string;
				if (check_pattern(c, &key))
					return 1;
			}
		return check_each(c, v, depth, 0);
	}
	if (!strcmp(k, "items"))
		return cJSON_IsArray(v) ? (cJSON_GetObjectItemCaseSensitive(s, "prefixItems") ? bad(c, "a list of items beside prefixItems")
								: check_each(c, v, depth, 0))
					: check_schema(c, v, depth + 1);
	if (!strcmp(k, "prefixItems"))
		return check_each(c, v, depth, 1);
	if (!strcmp(k, "allOf") || !strcmp(k, "anyOf") || !strcmp(k, "oneOf")) {
		if (!cJSON_IsArray(v))
			return bad(c, "expected a non-empty array of schemas");
		return check_each(c, v, depth, 1);
	}
	if (!strcmp(k, "additionalProperties") || !strcmp(k, "additionalItems") || !strcmp(k, "not"))
		return check_schema(c, v, depth + 1);
	if (!strcmp(k, "minProperties") || !strcmp(k, "maxProperties") || !strcmp(k, "minItems") ||
	    !strcmp(k, "maxItems") || !strcmp(k, "minLength") || !strcmp(k, "maxLength"))
		return is_count(v) ? 0 : bad(c, "expected a whole number >= 0");
	if (!strcmp(k, "minimum") || !strcmp(k, "maximum") || !strcmp(k, "exclusiveMinimum") ||
	    !strcmp(k, "exclusiveMaximum"))
		return cJSON_IsNumber(v) ? 0 : bad(c, "expected a number (draft 4's boolean form is not checked)");
	if (!strcmp(k, "multipleOf"))
		return cJSON_IsNumber(v) && v->valuedouble > 0 ? 0 : bad(c, "expected a number > 0");
	if (!strcmp(k, "uniqueItems"))
		return cJSON_IsBool(v) ? 0 : bad(c, "expected a boolean");
	if (!strcmp(k, "pattern"))
		return check_pattern(c, v);
	return 0; /* const: any value */
}

static int check_schema(struct check *c, const cJSON *s, int depth)
{
	const cJSON *v, *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
	size_t at;

	if (depth > SCHEMA_DEPTH_MAX)
		return bad(c, "nests deeper than %d schemas", SCHEMA_DEPTH_MAX);
	if (cJSON_IsBool(s))
		return 0;
	if (!cJSON_IsObject(s))
		return bad(c, "expected a schema (an object or a boolean)");
	if (ref && (!cJSON_IsString(ref) || !resolve(c->root, ref->valuestring))) {
		push(c->where, "$ref");
		return bad(c, cJSON_IsString(ref) ? "'%s' is not a JSON pointer to a part of this schema"
						  : "expected a string", cJSON_IsString(ref) ? ref->valuestring : "");
	}
	cJSON_ArrayForEach(v, s) {
		if (!strcmp(v->string, "$ref") || listed(annotations, v->string) ||
		    (!strcmp(v->string, "$id") && s == c->root))
			continue;
		at = push(c->where, v->string);
		if (ref && listed(assertions, v->string))
			return bad(c, "beside $ref: draft 7 ignores it and 2020-12 applies it, so needle does not check it "
				   "(move it into an allOf)");
		if (!listed(assertions, v->string) && strcmp(v->string, "$defs") && strcmp(v->string, "definitions"))
			return bad(c, "'%s' is not a keyword needle checks (see docs/suite-files.md \"Structured outputs\")",
				   v->string);
		if (check_keyword(c, s, v, depth))
			return 1;
		c->where[at] = '\0';
	}
	return 0;
}

int schema_check(const cJSON *schema, char where[SCHEMA_WHERE_MAX], char *why, size_t cap)
{
	struct check c = {schema, "", why, cap};
	int r = check_schema(&c, schema, 0);

	memcpy(where, c.where, SCHEMA_WHERE_MAX);
	return r;
}

/* ---- validating a value ---- */

struct val {
	const cJSON *root;
	char path[SCHEMA_WHERE_MAX];
	char *why;
	size_t cap;
};

/* The value as compact JSON, cut to fit out[48]. */
static const char *shown(const cJSON *v, char out[48])
{
	char *t = cJSON_PrintUnformatted(v);

	if (!t)
		return "(a value)";
	if (strlen(t) > 40)
		snprintf(out, 48, "%.37s...", t);
	else
		snprintf(out, 48, "%s", t);
	cJSON_free(t);
	return out;
}

static int fail(struct val *x, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	snprintf(x->why, x->cap, "%s: ", x->path[0] ? x->path : "/");
	n = strlen(x->why);
	va_start(ap, fmt);
	vsnprintf(x->why + n, x->cap - n, fmt, ap);
	va_end(ap);
	return 0;
}

/* JSON equality as enum, const and uniqueItems mean it: numbers by value,
 * objects in any order (cJSON_Compare). */
static int same(const cJSON *a, const cJSON *b)
{
	return cJSON_Compare(a, b, 1);
}

static int is_type(const cJSON *v, const char *t)
{
	if (!strcmp(t, "integer"))
		return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble);
	return !strcmp(t, "null") ? cJSON_IsNull(v) : !strcmp(t, "boolean") ? cJSON_IsBool(v)
	       : !strcmp(t, "object") ? cJSON_IsObject(v) : !strcmp(t, "array") ? cJSON_IsArray(v)
	       : !strcmp(t, "number") ? cJSON_IsNumber(v) : cJSON_IsString(v);
}

static const char *type_name(const cJSON *v)
{
	return cJSON_IsNull(v) ? "null" : cJSON_IsBool(v) ? "a boolean" : cJSON_IsObject(v) ? "an object"
	       : cJSON_IsArray(v) ? "an array" : cJSON_IsNumber(v) ? "a number" : "a string";
}

static size_t code_points(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* 1 when `v` matches pattern `p` somewhere; 0 when not; -1 when it cannot
 * be matched (the reason in x). */
static int matches(struct val *x, const char *p, const char *s)
{
	struct rx *re = NULL;
	struct diag d;
	size_t span[2];
	int found = 0;

	diag_init(&d);
	if (rx_compile(p, strlen(p), 0, &re, &d) || rx_find(re, NULL, s, strlen(s), 0, span, &found, &d)) {
		rx_free(re);
		fail(x, "cannot match /%s/: %s", p, d.msg);
		return -1;
	}
	rx_free(re);
	return found;
}

static int valid(struct val *x, const cJSON *s, const cJSON *v, int depth);

/* Whether `v` is valid against `s` without leaving a reason (anyOf, oneOf,
 * not). */
static int quietly(struct val *x, const cJSON *s, const cJSON *v, int depth)
{
	char why[SCHEMA_WHY_MAX];
	struct val q = *x;

	q.why = why;
	q.cap = sizeof(why);
	return valid(&q, s, v, depth);
}

static int valid_type(struct val *x, const cJSON *t, const cJSON *v)
{
	const cJSON *it;
	char s[48];

	if (cJSON_IsString(t))
		return is_type(v, t->valuestring) ? 1 : fail(x, "%s is %s, not of type %s", shown(v, s),
							      type_name(v), t->valuestring);
	cJSON_ArrayForEach(it, t)
		if (is_type(v, it->valuestring))
			return 1;
	return fail(x, "%s is %s, not of any of the types listed", shown(v, s), type_name(v));
}

static int valid_object(struct val *x, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	const cJSON *pats = cJSON_GetObjectItemCaseSensitive(s, "patternProperties");
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
	const cJSON *f, *it, *p;
	size_t at;
	int n = cJSON_GetArraySize(v), m;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(s, "required"))
		if (!cJSON_GetObjectItemCaseSensitive(v, it->valuestring))
			return fail(x, "lacks the required property '%s'", it->valuestring);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "minProperties")) && n < f->valuedouble)
		return fail(x, "has %d properties, fewer than minProperties %g", n, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "maxProperties")) && n > f->valuedouble)
		return fail(x, "has %d properties, more than maxProperties %g", n, f->valuedouble);
	cJSON_ArrayForEach(it, v) {
		int known = 0;

		at = push(x->path, it->string);
		if ((p = cJSON_GetObjectItemCaseSensitive(props, it->string))) {
			known = 1;
			if (!valid(x, p, it, depth + 1))
				return 0;
		}
		cJSON_ArrayForEach(p, pats) {
			if ((m = matches(x, p->string, it->string)) < 0)
				return 0;
			if (m) {
				known = 1;
				if (!valid(x, p, it, depth + 1))
					return 0;
			}
		}
		if (!known && cJSON_IsFalse(extra))
			return fail(x, "is not a property the schema allows (additionalProperties false)");
		if (!known && extra && !valid(x, extra, it, depth + 1))
			return 0;
		x->path[at] = '\0';
	}
	return 1;
}

static int valid_array(struct val *x, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
	const cJSON *prefix = cJSON_GetObjectItemCaseSensitive(s, "prefixItems");
	const cJSON *rest = items, *f, *it, *j;
	int n = cJSON_GetArraySize(v), npre = 0;
	size_t i = 0, at;

	if ((f = cJSON_GetObjectItemCaseSensitive(s, "minItems")) && n < f->valuedouble)
		return fail(x, "has %d items, fewer than minItems %g", n, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "maxItems")) && n > f->valuedouble)
		return fail(x, "has %d items, more than maxItems %g", n, f->valuedouble);
	if (cJSON_IsArray(items)) { /* draft 7's tuple form */
		prefix = items;
		rest = cJSON_GetObjectItemCaseSensitive(s, "additionalItems");
	}
	npre = cJSON_GetArraySize(prefix);
	cJSON_ArrayForEach(it, v) {
		const cJSON *w = (int)i < npre ? cJSON_GetArrayItem(prefix, (int)i) : rest;

		at = push_index(x->path, i);
		if (w && !valid(x, w, it, depth + 1))
			return 0;
		x->path[at] = '\0';
		i++;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "uniqueItems")))
		for (it = v->child, i = 0; it; it = it->next, i++)
			for (j = it->next; j; j = j->next)
				if (same(it, j)) {
					char t[48];
					return fail(x, "item %zu, %s, repeats although uniqueItems is true", i,
						    shown(it, t));
				}
	return 1;
}

static int valid_number(struct val *x, const cJSON *s, double d)
{
	const cJSON *f;
	double q;

	if ((f = cJSON_GetObjectItemCaseSensitive(s, "minimum")) && d < f->valuedouble)
		return fail(x, "%.15g is below the minimum %.15g", d, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "maximum")) && d > f->valuedouble)
		return fail(x, "%.15g is above the maximum %.15g", d, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum")) && d <= f->valuedouble)
		return fail(x, "%.15g is not above the exclusiveMinimum %.15g", d, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum")) && d >= f->valuedouble)
		return fail(x, "%.15g is not below the exclusiveMaximum %.15g", d, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "multipleOf"))) {
		q = d / f->valuedouble;
		if (!isfinite(q) || fabs(q - nearbyint(q)) > 1e-9 * fmax(1, fabs(q)))
			return fail(x, "%.15g is not a multiple of %.15g", d, f->valuedouble);
	}
	return 1;
}

static int valid_string(struct val *x, const cJSON *s, const char *t)
{
	const cJSON *f;
	size_t n = code_points(t);
	int m;
	char sh[48];
	cJSON str = {0};

	str.type = cJSON_String;
	str.valuestring = (char *)t;
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "minLength")) && (double)n < f->valuedouble)
		return fail(x, "%s has %zu characters, fewer than minLength %g", shown(&str, sh), n, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "maxLength")) && (double)n > f->valuedouble)
		return fail(x, "%s has %zu characters, more than maxLength %g", shown(&str, sh), n, f->valuedouble);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "pattern"))) {
		if ((m = matches(x, f->valuestring, t)) < 0)
			return 0;
		if (!m)
			return fail(x, "%s does not match /%s/", shown(&str, sh), f->valuestring);
	}
	return 1;
}

/* allOf, anyOf, oneOf, not. */
static int valid_combined(struct val *x, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *f, *it;
	int n = 0;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(s, "allOf"))
		if (!valid(x, it, v, depth + 1))
			return 0;
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "anyOf"))) {
		cJSON_ArrayForEach(it, f)
			if (quietly(x, it, v, depth + 1))
				break;
		if (!it)
			return fail(x, "matches none of the %d schemas of anyOf", cJSON_GetArraySize(f));
	}
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "oneOf"))) {
		cJSON_ArrayForEach(it, f)
			n += quietly(x, it, v, depth + 1);
		if (n != 1)
			return fail(x, "matches %d of the %d schemas of oneOf, not exactly one", n,
				    cJSON_GetArraySize(f));
	}
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "not")) && quietly(x, f, v, depth + 1))
		return fail(x, "matches the schema of 'not'");
	return 1;
}

static int valid(struct val *x, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *f, *it;
	char t[48];

	if (depth > SCHEMA_DEPTH_MAX)
		return fail(x, "the schema nests deeper than %d here ($ref to itself?)", SCHEMA_DEPTH_MAX);
	if (cJSON_IsBool(s))
		return cJSON_IsTrue(s) ? 1 : fail(x, "no value is allowed here (schema false)");
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "$ref")))
		return valid(x, resolve(x->root, f->valuestring), v, depth + 1);
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "type")) && !valid_type(x, f, v))
		return 0;
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "enum"))) {
		cJSON_ArrayForEach(it, f)
			if (same(it, v))
				break;
		if (!it)
			return fail(x, "%s is not one of the %d values of enum", shown(v, t), cJSON_GetArraySize(f));
	}
	if ((f = cJSON_GetObjectItemCaseSensitive(s, "const")) && !same(f, v))
		return fail(x, "%s is not the const value", shown(v, t));
	if (cJSON_IsObject(v) && !valid_object(x, s, v, depth))
		return 0;
	if (cJSON_IsArray(v) && !valid_array(x, s, v, depth))
		return 0;
	if (cJSON_IsNumber(v) && !valid_number(x, s, v->valuedouble))
		return 0;
	if (cJSON_IsString(v) && !valid_string(x, s, v->valuestring))
		return 0;
	return valid_combined(x, s, v, depth);
}

int schema_valid(const cJSON *schema, const cJSON *v, char *why, size_t cap)
{
	struct val x = {schema, "", why, cap};

	why[0] = '\0';
	return valid(&x, schema, v, 0);
}
