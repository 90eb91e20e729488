/* expect — see expect.h. */
#include <string.h>

#include "expect.h"
#include "grade.h"
#include "mem.h"

void expect_init(struct expect *x)
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

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
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
	c->name = get(f, "name")->valuestring;
	c->arguments = get(f, "arguments");
	c->result = result;
}

static int calls(const cJSON *v, struct expect *x)
{
	const cJSON *one = get(v, "tool_call"), *many = get(v, "tool_calls"), *it;

	x->one_call = one != NULL;
	x->ncalls = one ? 1 : (size_t)cJSON_GetArraySize(many);
	if (!(x->calls = mem_calloc(x->ncalls, sizeof(*x->calls))))
		return 0;
	if (one) {
		call_of(one, get(v, "tool_result"), &x->calls[0]);
		return 1;
	}
	x->ncalls = 0;
	cJSON_ArrayForEach(it, many)
		call_of(it, get(it, "tool_result"), &x->calls[x->ncalls++]);
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
		const cJSON *k = get(it, "key"), *m = get(it, "message");
		if (!cJSON_IsString(k) || !cJSON_IsNumber(m))
			continue; /* informative only: skipped, as ever */
		x->facts[x->nfacts].key = k->valuestring;
		x->facts[x->nfacts++].message = m->valueint;
	}
	return 1;
}

/* The rules between members (their shapes are the suite's). */
static enum err check(const cJSON *v, const char *path, struct diag *d)
{
	int n = !!get(v, "json") + !!get(v, "regex") + !!get(v, "contains") +
		!!get(v, "tool_call") + !!get(v, "tool_calls");
	enum err e;

	if (n != 1)
		return diag_fail(d, ERR_INPUT, "%s: expected exactly one of 'json', 'regex', 'contains', 'tool_call', 'tool_calls' (found %d)",
				 path, n);
	if (cJSON_IsString(get(v, "regex")) && (e = grade_regex_check(get(v, "regex")->valuestring, d))) {
		diag_prefix(d, "%s.regex", path);
		return e;
	}
	if ((get(v, "tool_result") || get(v, "final_contains")) &&
	    !get(v, "tool_call") && !get(v, "tool_calls"))
		return diag_fail(d, ERR_INPUT, "%s: 'tool_result' and 'final_contains' need 'tool_call' or 'tool_calls'",
				 path);
	return ERR_OK;
}

static enum expect_kind kind_of(const cJSON *v)
{
	if (get(v, "json")) return EXPECT_JSON;
	if (get(v, "regex")) return EXPECT_REGEX;
	if (get(v, "contains")) return EXPECT_CONTAINS;
	return EXPECT_TOOL_CALLS; /* tool_call or tool_calls */
}

enum err expect_parse(const cJSON *v, const char *path, struct expect *x,
		      struct diag *d)
{
	enum err e;
	int ok = 1;

	expect_init(x);
	if (!v)
		return ERR_OK;
	if ((e = check(v, path, d)))
		return e;
	x->kind = kind_of(v);
	x->json = get(v, "json");
	x->regex = x->kind == EXPECT_REGEX ? get(v, "regex")->valuestring : NULL;
	x->no_tool_call = cJSON_IsTrue(get(v, "no_tool_call"));
	if (x->kind == EXPECT_CONTAINS)
		ok = strings(get(v, "contains"), &x->contains, &x->ncontains);
	if (ok && x->kind == EXPECT_TOOL_CALLS)
		ok = calls(v, x);
	if (ok)
		ok = strings(get(v, "final_contains"), &x->final_contains, &x->nfinal);
	if (ok)
		ok = facts(get(v, "recall"), x);
	x->round2 = x->kind == EXPECT_TOOL_CALLS &&
		    (get(v, "tool_result") || get(v, "tool_calls") || get(v, "final_contains"));
	if (ok)
		return ERR_OK;
	expect_release(x);
	return diag_fail(d, ERR_NOMEM, "out of memory reading %s", path);
}
