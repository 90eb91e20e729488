/* jcheck — see jcheck.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hint.h"
#include "jcheck.h"

enum err jcheck_fail(const struct jcheck *c, const char *jpath, const char *fmt, ...)
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

int jcheck_in(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

/* Appends `s` at `*n` in `out` (JCHECK_PATH_MAX bytes), truncating. */
static void put(char *out, size_t *n, const char *s)
{
	while (*s && *n + 1 < JCHECK_PATH_MAX)
		out[(*n)++] = *s++;
	out[*n] = '\0';
}

/* out = base.key; `out` may be `base`. */
void jcheck_join(char *out, const char *base, const char *key)
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
void jcheck_index(char *out, const char *base, size_t i)
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
enum err jcheck_keys(const struct jcheck *c, const cJSON *obj, const char *jpath,
		     const char *const *names, const char *what)
{
	const cJSON *it;
	char p[JCHECK_PATH_MAX];

	cJSON_ArrayForEach(it, obj) {
		const char *hint;
		if (jcheck_in(it->string, names))
			continue;
		jcheck_join(p, jpath, it->string);
		hint = hint_closest(it->string, names);
		if (hint)
			return jcheck_fail(c, p, "unknown %s key '%s' (did you mean '%s'?)",
					   what, it->string, hint);
		return jcheck_fail(c, p, "unknown %s key '%s'", what, it->string);
	}
	return ERR_OK;
}

/* Two keys with the same name in one object: cJSON keeps both, we refuse. */
enum err jcheck_dupes(const struct jcheck *c, const cJSON *obj, const char *jpath)
{
	const cJSON *a, *b;
	char p[JCHECK_PATH_MAX];

	cJSON_ArrayForEach(a, obj)
		for (b = a->next; b; b = b->next)
			if (!strcmp(a->string, b->string)) {
				jcheck_join(p, jpath, a->string);
				return jcheck_fail(c, p, "key '%s' appears twice",
						   a->string);
			}
	return ERR_OK;
}

const char *jcheck_type(const cJSON *v)
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
enum err jcheck_int(const struct jcheck *c, const cJSON *v, const char *p,
		    double lo, double hi, long *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
		return jcheck_fail(c, p, "expected an integer, got %s", jcheck_type(v));
	if (v->valuedouble < lo || v->valuedouble > hi)
		return jcheck_fail(c, p, "%.17g is out of range [%.17g, %.17g]",
				   v->valuedouble, lo, hi);
	if (out)
		*out = (long)v->valuedouble;
	return ERR_OK;
}

enum err jcheck_want(const struct jcheck *c, const cJSON *v, const char *p, int ok,
		     const char *what)
{
	return ok ? ERR_OK : jcheck_fail(c, p, "expected %s, got %s", what, jcheck_type(v));
}

enum err jcheck_strings(const struct jcheck *c, const cJSON *v, const char *p,
			int nonempty)
{
	const cJSON *it;
	char q[JCHECK_PATH_MAX];
	size_t i = 0;

	if (!cJSON_IsArray(v))
		return jcheck_fail(c, p, "expected an array of strings, got %s",
				   jcheck_type(v));
	if (nonempty && !cJSON_GetArraySize(v))
		return jcheck_fail(c, p, "expected at least one string");
	cJSON_ArrayForEach(it, v) {
		jcheck_index(q, p, i++);
		if (!cJSON_IsString(it))
			return jcheck_fail(c, q, "expected a string, got %s",
					   jcheck_type(it));
	}
	return ERR_OK;
}

