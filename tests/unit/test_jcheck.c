/* Unit tests of the shared validation pieces: JSON paths (cut at the cap),
 * type names, allowed keys with a near-miss hint, duplicate keys, integer
 * ranges, string arrays, and the "FILE: PATH: REASON" shape. */
#include <string.h>

#include "base/jcheck.h"
#include "t.h"

static void test_paths(void)
{
	char p[JCHECK_PATH_MAX], big[JCHECK_PATH_MAX + 100];

	jcheck_join(p, "", "cases");
	CHECK_STR(p, "cases");
	jcheck_index(p, "cases", 12);
	jcheck_join(p, p, "expect");
	CHECK_STR(p, "cases[12].expect");
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	jcheck_join(p, "a", big);
	CHECK_EQ_LONG(strlen(p), JCHECK_PATH_MAX - 1);
}

static void test_types(void)
{
	cJSON *v = cJSON_Parse("[1, 1.5, \"s\", true, null, [], {}]");

	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 0)), "integer");
	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 1)), "number");
	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 2)), "string");
	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 3)), "boolean");
	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 4)), "null");
	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 5)), "array");
	CHECK_STR(jcheck_type(cJSON_GetArrayItem(v, 6)), "object");
	cJSON_Delete(v);
}

static void test_checks(void)
{
	static const char *const names[] = {"tokens", "depths", NULL};
	struct diag d;
	struct jcheck c = {"s.json", &d};
	cJSON *o = cJSON_Parse("{\"tokens\":5,\"depth\":[1],\"tokens\":7}");
	cJSON *a = cJSON_Parse("[\"x\", 3]");
	long n = 0;

	diag_init(&d);
	CHECK(jcheck_in("depths", names) && !jcheck_in("depth", names));
	CHECK(jcheck_keys(&c, o, "recall", names, "recall") == ERR_INPUT);
	CHECK_STR(d.msg, "s.json: recall.depth: unknown recall key 'depth' (did you mean 'depths'?)");
	diag_init(&d);
	CHECK(jcheck_dupes(&c, o, "recall") == ERR_INPUT);
	CHECK_STR(d.msg, "s.json: recall.tokens: key 'tokens' appears twice");
	diag_init(&d);
	CHECK(jcheck_int(&c, o->child, "recall.tokens", 1, 10, &n) == ERR_OK);
	CHECK_EQ_LONG(n, 5);
	CHECK(jcheck_int(&c, o->child, "recall.tokens", 6, 10, NULL) == ERR_INPUT);
	CHECK_STR(d.msg, "s.json: recall.tokens: 5 is out of range [6, 10]");
	diag_init(&d);
	CHECK(jcheck_strings(&c, a, "contains", 1) == ERR_INPUT);
	CHECK_STR(d.msg, "s.json: contains[1]: expected a string, got integer");
	diag_init(&d);
	CHECK(jcheck_want(&c, a, NULL, 0, "an object") == ERR_INPUT);
	CHECK_STR(d.msg, "s.json: expected an object, got array");
	cJSON_Delete(o);
	cJSON_Delete(a);
}

int main(void)
{
	T_RUN(test_paths);
	T_RUN(test_types);
	T_RUN(test_checks);
	return T_DONE();
}
