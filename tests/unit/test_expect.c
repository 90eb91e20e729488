/* Unit tests of expect: each form parsed into the typed struct (kind, calls,
 * results, final_contains, facts, whether a second round follows), and the
 * validation (shapes, the rules between members) with its paths. */
#include <string.h>

#include "run/expect.h"
#include "t.h"

static cJSON *parsed; /* the last object parse() read: x borrows from it */

static enum err parse(const char *json, struct expect *x, struct diag *d)
{
	cJSON_Delete(parsed);
	parsed = cJSON_Parse(json);
	diag_init(d);
	CHECK(parsed != NULL);
	return expect_parse(parsed, x, d);
}

/* Validates `json` as cases[3].expect of x.json; the message in d. */
static enum err check(const char *json, struct diag *d)
{
	struct jcheck c = {"x.json", d};
	cJSON *v = cJSON_Parse(json);
	enum err e;

	diag_init(d);
	CHECK(v != NULL);
	e = expect_check(&c, v, "cases[3].expect");
	cJSON_Delete(v);
	return e;
}

static void test_forms(void)
{
	struct expect x;
	struct diag d;

	CHECK(expect_parse(NULL, &x, &d) == ERR_OK);
	CHECK(x.kind == EXPECT_NONE && !x.round2);
	CHECK(parse("{\"json\":{\"a\":1},\"recall\":[{\"key\":\"a\",\"message\":2},{\"key\":1}]}", &x, &d) == ERR_OK);
	CHECK(x.kind == EXPECT_JSON && cJSON_IsObject(x.json) && !x.round2);
	CHECK_EQ_LONG(x.nfacts, 1); /* the malformed one is skipped */
	CHECK_STR(x.facts[0].key, "a");
	CHECK_EQ_LONG(x.facts[0].message, 2);
	expect_release(&x);
	CHECK(parse("{\"contains\":[\"x\",\"y\"]}", &x, &d) == ERR_OK);
	CHECK(x.kind == EXPECT_CONTAINS);
	CHECK_EQ_LONG(x.ncontains, 2);
	CHECK_STR(x.contains[1], "y");
	expect_release(&x);
	CHECK(parse("{\"regex\":\"^a+$\"}", &x, &d) == ERR_OK);
	CHECK(x.kind == EXPECT_REGEX);
	CHECK_STR(x.regex, "^a+$");
	expect_release(&x);
	CHECK(parse("{\"no_tool_call\":true,\"json\":1}", &x, &d) == ERR_OK);
	CHECK(x.no_tool_call && x.kind == EXPECT_JSON);
	expect_release(&x);
	expect_release(NULL);
}

static void test_calls(void)
{
	struct expect x;
	struct diag d;

	CHECK(parse("{\"tool_call\":{\"name\":\"f\"}}", &x, &d) == ERR_OK);
	CHECK(x.kind == EXPECT_TOOL_CALLS && x.one_call && !x.round2);
	CHECK_EQ_LONG(x.ncalls, 1);
	CHECK(x.calls[0].arguments == NULL && x.calls[0].result == NULL);
	expect_release(&x);
	CHECK(parse("{\"tool_call\":{\"name\":\"f\",\"arguments\":{\"q\":1}},\"tool_result\":\"R\","
		    "\"final_contains\":[\"R1\",\"R2\"]}", &x, &d) == ERR_OK);
	CHECK(x.one_call && x.round2);
	CHECK_STR(x.calls[0].result->valuestring, "R");
	CHECK(cJSON_IsObject(x.calls[0].arguments));
	CHECK_EQ_LONG(x.nfinal, 2);
	CHECK_STR(x.final_contains[0], "R1");
	expect_release(&x);
	CHECK(parse("{\"tool_calls\":[{\"name\":\"a\",\"tool_result\":{\"t\":1}},{\"name\":\"b\"}]}",
		    &x, &d) == ERR_OK);
	CHECK(!x.one_call && x.round2); /* tool_calls always answer */
	CHECK_EQ_LONG(x.ncalls, 2);
	CHECK_STR(x.calls[1].name, "b");
	CHECK(cJSON_IsObject(x.calls[0].result) && x.calls[1].result == NULL);
	expect_release(&x);
}

static void test_rules(void)
{
	struct diag d;

	CHECK(check("{\"tool_calls\":[{\"name\":\"a\",\"arguments\":{},\"tool_result\":\"r\"}],"
		    "\"final_contains\":[]}", &d) == ERR_OK);
	CHECK(check("{\"json\":1,\"contains\":[\"a\"]}", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect: expected exactly one of 'json', 'regex', 'contains', 'tool_call', 'tool_calls', "
		  "'schema' ('schema' may come with 'json') (found 2)");
	CHECK(check("{\"schema\":{\"type\":\"object\"},\"json\":{}}", &d) == ERR_OK);
	CHECK(check("{\"schema\":\"response_format\"}", &d) == ERR_OK);
	CHECK(check("{\"schema\":\"other\"}", &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "cases[3].expect.schema: expected a JSON Schema") != NULL);
	CHECK(check("{\"no_tool_call\":true}", &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "(found 0)") != NULL);
	CHECK(check("{\"regex\":\"a(\"}", &d) == ERR_INPUT);
	CHECK(!strncmp(d.msg, "x.json: cases[3].expect.regex: bad regex at offset 2", 52));
	CHECK(check("{\"json\":1,\"final_contains\":[\"a\"]}", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect: 'tool_result' and 'final_contains' need 'tool_call' or 'tool_calls'");
	CHECK(check("{\"regx\":1}", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect.regx: unknown expect key 'regx' (did you mean 'regex'?)");
	CHECK(check("{\"json\":1,\"json\":2}", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect.json: key 'json' appears twice");
	CHECK(check("{\"tool_calls\":[{\"name\":1}]}", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect.tool_calls[0]: expected 'name' as a string");
	CHECK(check("{\"contains\":[]}", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect.contains: expected at least one string");
	CHECK(check("[]", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "x.json: cases[3].expect: expected an object, got array");
}

int main(void)
{
	T_RUN(test_forms);
	T_RUN(test_calls);
	T_RUN(test_rules);
	cJSON_Delete(parsed);
	return T_DONE();
}
