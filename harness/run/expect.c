/* expect — see expect.h. */
#include <string.h>

#include "expect.h"
#include "base/jcheck.h"
#include "base/jget.h"
#include "base/mem.h"
#include "base/rx.h"

/* Empties `x` (kind EXPECT_NONE). Allocates nothing. */
static void expect_init(struct expect *x)
{
	memset(x, 0, sizeof(*x));
}

void expect_release(struct expect *x)
{
	if (!x)
		return;
	mem_free(x->contains);
	mem_free(x->calls);
	mem_free(x->final_contains);
	mem_free(x->facts);
	expect_init(x);
}

/* The strings of array `a` into a new array; 0 when out of memory. */
static int strings(const cJSON *a, const char ***out, size_t *n)
{
	const cJSON *it;
	size_t k = (size_t)cJSON_GetArraySize(a);

	*n = 0;
	if (!k)
		return 1;
	if (!(*out = mem_calloc(k, sizeof(**out))))
		return 0;
	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it))
			(*out)[(*n)++] = it->valuestring;
	return 1;
}

static void call_of(const cJSON *f, const cJSON *result, struct expect_call *c)
{
	c->name = jget(f, "name")->valuestring;
	c->arguments = jget(f, "arguments");
	c->result = result;
}

static int calls(const cJSON *v, struct expect *x)
{
	const cJSON *one = jget(v, "tool_call"), *many = jget(v, "tool_calls"), *it;

	x->one_call = one != NULL;
	x->ncalls = one ? 1 : (size_t)cJSON_GetArraySize(many);
	if (!(x->calls = mem_calloc(x->ncalls, sizeof(*x->calls))))
		return 0;
	if (one) {
		call_of(one, jget(v, "tool_result"), &x->calls[0]);
		return 1;
	}
	x->ncalls = 0;
	cJSON_ArrayForEach(it, many)
		call_of(it, jget(it, "tool_result"), &x->calls[x->ncalls++]);
	return 1;
}

static int facts(const cJSON *rec, struct expect *x)
{
	const cJSON *it;
	size_t n = (size_t)cJSON_GetArraySize(rec);

	if (!n)
		return 1;
	if (!(x->facts = mem_calloc(n, sizeof(*x->facts))))
		return 0;
	cJSON_ArrayForEach(it, rec) {
		const cJSON *k = jget(it, "key"), *m = jget(it, "message");
		if (!cJSON_IsString(k) || !cJSON_IsNumber(m))
			continue; /* informative only: skipped, as ever */
		x->facts[x->nfacts].key = k->valuestring;
		x->facts[x->nfacts++].message = m->valueint;
	}
	return 1;
}

/* ---- validation ---- */

static const char *const expect_keys[] = {"json", "schema", "regex", "contains",
					  "tool_call", "tool_calls",
					  "tool_result", "final_contains",
					  "no_tool_call", "recall",
					  "image_order", NULL};

/* {"name": S, "arguments": {...}?, "tool_result": S|{}?} */
static enum err check_call(const struct jcheck *c, const cJSON *f, const char *q)
{
	const cJSON *args = jget(f, "arguments");
	const cJSON *res = jget(f, "tool_result");

	if (!cJSON_IsObject(f))
		return jcheck_fail(c, q, "expected an object, got %s", jcheck_type(f));
	if (!cJSON_IsString(jget(f, "name")))
		return jcheck_fail(c, q, "expected 'name' as a string");
	if (args && !cJSON_IsObject(args))
		return jcheck_fail(c, q, "expected 'arguments' as an object");
	if (res && !cJSON_IsString(res) && !cJSON_IsObject(res))
		return jcheck_fail(c, q, "expected 'tool_result' as a string or an object");
	return ERR_OK;
}

static enum err check_calls(const struct jcheck *c, const cJSON *f, const char *p)
{
	const cJSON *it;
	char q[JCHECK_PATH_MAX];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f))
		return jcheck_fail(c, p, "expected a non-empty array of calls, got %s", jcheck_type(f));
	cJSON_ArrayForEach(it, f) {
		jcheck_index(q, p, i++);
		if ((e = check_call(c, it, q)))
			return e;
	}
	return ERR_OK;
}

enum err expect_check(const struct jcheck *c, const cJSON *v, const char *p)
{
	const cJSON *f;
	char q[JCHECK_PATH_MAX];
	int n = 0;
	enum err e;

	if (!cJSON_IsObject(v))
		return jcheck_fail(c, p, "expected an object, got %s", jcheck_type(v));
	if ((e = jcheck_keys(c, v, p, expect_keys, "expect")) ||
	    (e = jcheck_dupes(c, v, p)))
		return e;
	n = !!jget(v, "json") +
	    !!jget(v, "regex") +
	    !!jget(v, "contains") +
	    !!jget(v, "tool_call") +
	    !!jget(v, "tool_calls");
	f = jget(v, "schema");
	if (f ? n > 1 || (n == 1 && !jget(v, "json")) : n != 1)
		return jcheck_fail(c, p, "expected exactly one of 'json', 'regex', 'contains', 'tool_call', 'tool_calls', 'schema' "
				   "('schema' may come with 'json') (found %d)", n + !!f);
	jcheck_join(q, p, "schema");
	if (f && !cJSON_IsObject(f) && !cJSON_IsBool(f) &&
	    !(cJSON_IsString(f) && !strcmp(f->valuestring, "response_format")))
		return jcheck_fail(c, q, "expected a JSON Schema (an object or a boolean) or \"response_format\", got %s",
				   jcheck_type(f));
	jcheck_join(q, p, "no_tool_call");
	if ((f = jget(v, "no_tool_call")) && !cJSON_IsBool(f))
		return jcheck_fail(c, q, "expected a boolean, got %s", jcheck_type(f));
	jcheck_join(q, p, "recall");
	if ((f = jget(v, "recall")) && !cJSON_IsArray(f))
		return jcheck_fail(c, q, "expected an array of {key, message}, got %s", jcheck_type(f));
	jcheck_join(q, p, "image_order");
	if ((f = jget(v, "image_order")) && !cJSON_IsObject(f))
		return jcheck_fail(c, q, "expected an object, got %s", jcheck_type(f));
	jcheck_join(q, p, "tool_calls");
	if ((f = jget(v, "tool_calls")) &&
	    (e = check_calls(c, f, q)))
		return e;
	jcheck_join(q, p, "regex");
	if ((f = jget(v, "regex"))) {
		if (!cJSON_IsString(f))
			return jcheck_fail(c, q, "expected a string, got %s",
					   jcheck_type(f));
		struct rx *re = NULL;

		if ((e = rx_compile(f->valuestring, strlen(f->valuestring),
				    RX_WHOLE, &re, c->d))) {
			diag_prefix(c->d, "%s: %s", c->file, q);
			return e;
		}
		rx_free(re);
	}
	jcheck_join(q, p, "contains");
	if ((f = jget(v, "contains")) &&
	    (e = jcheck_strings(c, f, q, 1)))
		return e;
	jcheck_join(q, p, "final_contains");
	if ((f = jget(v, "final_contains")) &&
	    (e = jcheck_strings(c, f, q, 0)))
		return e;
	jcheck_join(q, p, "tool_result");
	if ((f = jget(v, "tool_result")) &&
	    !cJSON_IsString(f) && !cJSON_IsObject(f))
		return jcheck_fail(c, q, "expected a string or an object, got %s",
				   jcheck_type(f));
	if ((jget(v, "tool_result") ||
	     jget(v, "final_contains")) &&
	    !jget(v, "tool_call") &&
	    !jget(v, "tool_calls"))
		return jcheck_fail(c, p, "'tool_result' and 'final_contains' need 'tool_call' or 'tool_calls'");
	jcheck_join(q, p, "tool_call");
	if ((f = jget(v, "tool_call")) &&
	    (e = check_call(c, f, q)))
		return e;
	return ERR_OK;
}

/* Checks one field's value where it is written (a case or "defaults"). */
/* ---- the typed struct ---- */

static enum expect_kind kind_of(const cJSON *v)
{
	if (jget(v, "json")) return EXPECT_JSON;
	if (jget(v, "schema")) return EXPECT_SCHEMA;
	if (jget(v, "regex")) return EXPECT_REGEX;
	if (jget(v, "contains")) return EXPECT_CONTAINS;
	return EXPECT_TOOL_CALLS; /* tool_call or tool_calls */
}

enum err expect_parse(const cJSON *v, struct expect *x, struct diag *d)
{
	int ok = 1;

	expect_init(x);
	if (!v)
		return ERR_OK;
	x->kind = kind_of(v);
	x->json = jget(v, "json");
	x->schema = jget(v, "schema");
	x->regex = x->kind == EXPECT_REGEX ? jget(v, "regex")->valuestring : NULL;
	x->no_tool_call = cJSON_IsTrue(jget(v, "no_tool_call"));
	if (x->kind == EXPECT_CONTAINS)
		ok = strings(jget(v, "contains"), &x->contains, &x->ncontains);
	if (ok && x->kind == EXPECT_TOOL_CALLS)
		ok = calls(v, x);
	if (ok)
		ok = strings(jget(v, "final_contains"), &x->final_contains, &x->nfinal);
	if (ok)
		ok = facts(jget(v, "recall"), x);
	x->round2 = x->kind == EXPECT_TOOL_CALLS &&
		    (jget(v, "tool_result") || jget(v, "tool_calls") || jget(v, "final_contains"));
	if (ok)
		return ERR_OK;
	expect_release(x);
	return diag_fail(d, ERR_NOMEM, "out of memory reading an expectation");
}
