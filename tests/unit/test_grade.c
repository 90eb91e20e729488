/* Unit tests of grading: strict JSON (types, fences, prose), regex, contains,
 * recall per depth, tool calls (one, several in any order, none allowed), the
 * final answer of round 2, and the planted-fact annotation. */
#include <string.h>
#include <time.h>

#include "base/buf.h"

#include "run/grade.h"
#include "run/results.h"
#include "t.h"

/* Grades `answer` against the expect object in `expect_json`; returns ok and
 * leaves the first reason (or "") in `reason`. */
static int run(const char *expect_json, const char *answer, char *reason,
	       size_t cap)
{
	cJSON *j = cJSON_Parse(expect_json);
	struct expect x;
	struct grade g;
	struct diag d;
	int ok;

	diag_init(&d);
	grade_init(&g);
	CHECK(j != NULL);
	CHECK(expect_parse(j, &x, &d) == ERR_OK);
	CHECK(grade_content(&x, answer, strlen(answer), &g, &d) == ERR_OK);
	ok = g.ok;
	snprintf(reason, cap, "%s", g.reasons && g.reasons->child
		 ? g.reasons->child->valuestring : "");
	CHECK(ok == (g.reasons == NULL || cJSON_GetArraySize(g.reasons) == 0));
	grade_release(&g);
	expect_release(&x);
	cJSON_Delete(j);
	return ok;
}

#define EXPECT_FAIL(x, a, want)                                          \
	do {                                                             \
		char r_[512];                                            \
		CHECK(!run(x, a, r_, sizeof(r_)));                       \
		if (!strstr(r_, want))                                   \
			fprintf(stderr, "  reason was: %s\n", r_);       \
		CHECK(strstr(r_, want) != NULL);                         \
	} while (0)

#define EXPECT_PASS(x, a)                                                \
	do {                                                             \
		char r_[512];                                            \
		int ok_ = run(x, a, r_, sizeof(r_));                     \
		if (!ok_)                                                \
			fprintf(stderr, "  unexpected failure: %s\n", r_); \
		CHECK(ok_);                                              \
	} while (0)

static void test_json_strict(void)
{
	const char *x = "{\"json\":{\"answer\":437}}";
	const char *order = "{\"json\":{\"items\":5,\"total\":34}}";

	EXPECT_PASS(x, "{\"answer\":437}");
	EXPECT_PASS(x, "  \n{\"answer\": 437}\n\n");
	EXPECT_FAIL(x, "{\"answer\":\"437\"}", "key 'answer': expected integer 437, got string \"437\"");
	EXPECT_PASS(x, "{\"answer\":437.0}"); /* one JSON number type */
	EXPECT_FAIL(x, "{\"answer\":437.5}", "key 'answer': expected integer 437, got number 437.5");
	EXPECT_FAIL(x, "{\"answer\":438}", "key 'answer': expected integer 437, got integer 438");
	EXPECT_FAIL(x, "```json\n{\"answer\":437}\n```", "answer is wrapped in a code fence");
	EXPECT_FAIL(x, "The answer is {\"answer\":437}.", "answer has prose around the JSON value");
	EXPECT_FAIL(x, "437", "answer: expected object, got integer 437");
	EXPECT_FAIL(x, "", "answer is empty");
	EXPECT_FAIL(x, "<think>hmm</think>{\"answer\":437}", "think block");
	EXPECT_FAIL(x, "four hundred", "answer is not JSON");
	EXPECT_FAIL(x, "{\"answer\":437,\"note\":1}", "unexpected key 'note'");
	EXPECT_FAIL(x, "{\"answer\":437,\"answer\":437}", "key 'answer' appears twice");
	EXPECT_FAIL(x, "{}", "missing key 'answer'");
	EXPECT_FAIL(order, "{\"items\":[\"apple\",\"book\"],\"total\":34}",
		    "key 'items': expected integer 5, got array");
	EXPECT_PASS("{\"json\":{\"a\":[1,\"x\",true,null,{\"b\":0.5}]}}",
		    "{\"a\":[1,\"x\",true,null,{\"b\":0.5}]}");
	EXPECT_FAIL("{\"json\":{\"a\":[1,2]}}", "{\"a\":[1,2,3]}",
		    "key 'a': expected an array of 2, got an array of 3");
	EXPECT_FAIL("{\"json\":{\"a\":[1,{\"b\":false}]}}", "{\"a\":[1,{\"b\":\"false\"}]}",
		    "key 'a[1].b': expected boolean false, got string \"false\"");
	/* numbers inside strings do not shift the lexeme pairing */
	EXPECT_FAIL("{\"json\":{\"s\":\"1.5 2\",\"n\":3}}", "{\"s\":\"1.5 2\",\"n\":3.50}",
		    "key 'n': expected integer 3, got number 3.50");
	EXPECT_PASS("{\"json\":{\"s\":\"1.5 \\\" 2\",\"n\":3}}", "{\"s\":\"1.5 \\\" 2\",\"n\":3}");
	EXPECT_PASS("{\"json\":2.5}", "2.5");
	EXPECT_PASS("{\"json\":\"Ada\"}", "\"Ada\"");
}

static void test_regex_contains(void)
{
	EXPECT_PASS("{\"regex\":\"\\\\d{3}\"}", "437\n");
	EXPECT_FAIL("{\"regex\":\"\\\\d{3}\"}", "437 is the answer", "does not match");
	EXPECT_FAIL("{\"regex\":\"\\\\d{3}\"}", "x437", "does not match");
	EXPECT_PASS("{\"regex\":\"(?s).*437.*\"}", "it is\n437!");
	EXPECT_PASS("{\"regex\":\"\xe5\x8c\x97\xe4\xba\xac.\"}", "\xe5\x8c\x97\xe4\xba\xac\xe5\xb8\x82");
	EXPECT_PASS("{\"contains\":[\"Ada\",\"6\"]}", "Ada wants 6 seats");
	EXPECT_FAIL("{\"contains\":[\"Ada\",\"platform\"]}", "Ada wants 6 seats",
		    "answer does not contain \"platform\"");
}

/* A reason quoting the answer never cuts a UTF-8 character. */
static void test_reason_utf8(void)
{
	char r[512];

	CHECK(!run("{\"json\":1}", "You said: \xe4\xbb\x8e\xe4\xb8\x8b\xe9\x9d\xa2\xe7\x9a\x84", r, sizeof(r)));
	CHECK_EQ_LONG(results_fix_utf8(r), 0);
	CHECK(strstr(r, "'You said: \xe4\xbb\x8e\xe4\xb8\x8b\xe9\x9d\xa2')") != NULL);
}

static void recall(const char *answer, int want_ok, const int *want_needles,
		   const char *want_reason)
{
	struct grade_needle n[3] = {{"Aurora", "K7Q2-19XZ", 10},
				    {"Basalt", "M3T8-44PL", 50},
				    {"Cobalt", "Z9W1-07AB", 90}};
	struct grade g;
	struct diag d;
	const cJSON *it;
	int i = 0;

	diag_init(&d);
	grade_init(&g);
	CHECK(grade_recall(n, 3, answer, strlen(answer), &g, &d) == ERR_OK);
	CHECK_EQ_LONG(g.ok, want_ok);
	CHECK_EQ_LONG(cJSON_GetArraySize(g.needles), 3);
	cJSON_ArrayForEach(it, g.needles) {
		CHECK_EQ_LONG(cJSON_GetObjectItem(it, "depth")->valueint, n[i].depth);
		CHECK_EQ_LONG(cJSON_IsTrue(cJSON_GetObjectItem(it, "ok")), want_needles[i]);
		i++;
	}
	if (want_reason) {
		int found = 0;
		cJSON_ArrayForEach(it, g.reasons)
			found |= strstr(it->valuestring, want_reason) != NULL;
		if (!found)
			fprintf(stderr, "  no reason contains: %s\n", want_reason);
		CHECK(found);
	}
	grade_release(&g);
}

static void test_recall(void)
{
	int all[3] = {1, 1, 1}, middle[3] = {1, 0, 1}, none[3] = {0, 0, 0};

	recall("{\"Aurora\":\"K7Q2-19XZ\",\"Basalt\":\"M3T8-44PL\",\"Cobalt\":\"Z9W1-07AB\"}",
	       1, all, NULL);
	recall("{\"Aurora\":\"K7Q2-19XZ\",\"Basalt\":\"M3T8-44PX\",\"Cobalt\":\"Z9W1-07AB\"}",
	       0, middle, "needle at depth 50%: key 'Basalt': expected \"M3T8-44PL\", got \"M3T8-44PX\"");
	recall("{\"Aurora\":\"K7Q2-19XZ\",\"Cobalt\":\"Z9W1-07AB\"}", 0, middle,
	       "needle at depth 50%: missing key 'Basalt'");
	recall("{\"Aurora\":\"K7Q2-19XZ\",\"Basalt\":\"M3T8-44PL\",\"Cobalt\":\"Z9W1-07AB\",\"Dune\":\"X\"}",
	       0, all, "unexpected key 'Dune'");
	recall("```json\n{\"Aurora\":\"K7Q2-19XZ\",\"Basalt\":\"M3T8-44PL\",\"Cobalt\":\"Z9W1-07AB\"}\n```",
	       0, none, "code fence");
	recall("[]", 0, none, "expected an object");
}

/* A chat stream of `n` tool calls named names[i] with arguments args[i],
 * then content `text`. */
static void tool_stream(struct stream *st, int n, const char *const *names,
			const char *const *args, const char *text)
{
	char ev[512];
	struct diag d;
	int i;

	diag_init(&d);
	stream_init(st, STREAM_CHAT, 0);
	for (i = 0; i < n; i++) {
		cJSON *a = cJSON_CreateString(args[i]);
		char *q = cJSON_PrintUnformatted(a);
		snprintf(ev, sizeof(ev), "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
			 "[{\"index\":%d,\"id\":\"c%d\",\"type\":\"function\",\"function\":"
			 "{\"name\":\"%s\",\"arguments\":%s}}]}}]}\n\n", i, i, names[i], q);
		CHECK(stream_feed(st, ev, strlen(ev), 1, &d) == ERR_OK);
		cJSON_free(q);
		cJSON_Delete(a);
	}
	snprintf(ev, sizeof(ev), "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n"
		 "data: [DONE]\n\n", text);
	CHECK(stream_feed(st, ev, strlen(ev), 2, &d) == ERR_OK);
	stream_end(st, 3);
}

/* Grades round 1 of `st` against `expect_json`; the first reason in `why`. */
static int answer(const char *expect_json, const struct stream *st, int nmsg,
		  char *why, size_t cap)
{
	cJSON *j = cJSON_Parse(expect_json);
	struct expect x;
	struct grade g;
	struct diag d;
	int ok;

	diag_init(&d);
	grade_init(&g);
	CHECK(expect_parse(j, &x, &d) == ERR_OK);
	CHECK(grade_answer(&x, st, nmsg, &g, &d) == ERR_OK);
	ok = g.ok;
	snprintf(why, cap, "%s", g.reasons && g.reasons->child ? g.reasons->child->valuestring : "");
	if (!ok && g.reasons && g.reasons->child && g.reasons->child->next)
		snprintf(why, cap, "%s | %s", g.reasons->child->valuestring,
			 g.reasons->child->next->valuestring);
	grade_release(&g);
	expect_release(&x);
	cJSON_Delete(j);
	return ok;
}

static void test_tool_calls(void)
{
	static const char *const names[] = {"weather", "time"};
	static const char *const args[] = {"{\"city\":\"Oslo\"}", "{\"tz\":\"UTC\"}"};
	static const char *const bad[] = {"{\"city\":\"Bergen\"}", "not json"};
	struct stream st;
	char why[512];

	tool_stream(&st, 1, names, args, "");
	CHECK(answer("{\"tool_call\":{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"}}}", &st, 1, why, sizeof(why)));
	CHECK(answer("{\"tool_call\":{\"name\":\"weather\"}}", &st, 1, why, sizeof(why)));
	CHECK(!answer("{\"tool_call\":{\"name\":\"time\"}}", &st, 1, why, sizeof(why)));
	CHECK_STR(why, "tool call: expected name 'time', got 'weather'");
	CHECK(!answer("{\"no_tool_call\":true,\"contains\":[\"\"]}", &st, 1, why, sizeof(why)));
	CHECK_STR(why, "unexpected tool call 'weather' (the case allows none)");
	CHECK(!answer("{\"tool_calls\":[{\"name\":\"weather\"},{\"name\":\"time\"}]}", &st, 1, why, sizeof(why)));
	CHECK_STR(why, "expected 2 tool calls, got 1 | no tool call matches time()");
	stream_release(&st);
	tool_stream(&st, 2, names + 0, args, "");
	/* any order, each expected call matched to a distinct made call */
	CHECK(answer("{\"tool_calls\":[{\"name\":\"time\",\"arguments\":{\"tz\":\"UTC\"}},"
		     "{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"}}]}", &st, 1, why, sizeof(why)));
	CHECK(!answer("{\"tool_calls\":[{\"name\":\"weather\"},{\"name\":\"weather\"}]}", &st, 1, why, sizeof(why)));
	CHECK_STR(why, "no tool call matches weather()");
	stream_release(&st);
	tool_stream(&st, 1, names, bad, "");
	CHECK(!answer("{\"tool_call\":{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"}}}", &st, 1, why, sizeof(why)));
	CHECK(strstr(why, "arguments") && strstr(why, "Bergen"));
	stream_release(&st);
	tool_stream(&st, 1, names + 1, bad + 1, "");
	CHECK(!answer("{\"tool_call\":{\"name\":\"time\",\"arguments\":{}}}", &st, 1, why, sizeof(why)));
	CHECK_STR(why, "tool call 'time': arguments are not JSON: 'not json'");
	stream_release(&st);
}

static void test_final_and_facts(void)
{
	cJSON *j = cJSON_Parse("{\"tool_call\":{\"name\":\"f\"},\"final_contains\":[\"17\",\"Oslo\"]}");
	struct expect x;
	struct grade g;
	struct diag d;
	struct stream st;
	char why[512];

	diag_init(&d);
	CHECK(expect_parse(j, &x, &d) == ERR_OK);
	grade_init(&g);
	CHECK(grade_final(&x, "It is 17 degrees", 16, &g, &d) == ERR_OK);
	CHECK(!g.ok);
	CHECK_STR(g.reasons->child->valuestring, "final answer does not contain \"Oslo\"");
	CHECK_EQ_LONG(cJSON_GetArraySize(g.reasons), 1);
	grade_release(&g);
	expect_release(&x);
	cJSON_Delete(j);
	tool_stream(&st, 0, NULL, NULL, "{\\\"a\\\":1,\\\"b\\\":3}");
	CHECK(!answer("{\"json\":{\"a\":1,\"b\":2},\"recall\":[{\"key\":\"a\",\"message\":0},"
		      "{\"key\":\"b\",\"message\":2}]}", &st, 7, why, sizeof(why)));
	CHECK(strstr(why, "fact 'b' was planted at messages[2], 4 messages before the question") != NULL);
	CHECK(strstr(why, "fact 'a'") == NULL);
	CHECK(answer("{\"json\":{\"a\":1,\"b\":3},\"recall\":[{\"key\":\"a\",\"message\":0}]}", &st, 7, why, sizeof(why)));
	stream_release(&st);
}

/* Grades the `len` bytes of `answer` (NULs included) against `expect_json`. */
static int run_n(const char *expect_json, const char *answer, size_t len, char *reason,
		 size_t cap)
{
	cJSON *j = cJSON_Parse(expect_json);
	struct expect x;
	struct grade g;
	struct diag d;
	int ok;

	diag_init(&d);
	grade_init(&g);
	CHECK(expect_parse(j, &x, &d) == ERR_OK);
	CHECK(grade_content(&x, answer, len, &g, &d) == ERR_OK);
	ok = g.ok;
	snprintf(reason, cap, "%s", g.reasons && g.reasons->child
		 ? g.reasons->child->valuestring : "");
	grade_release(&g);
	expect_release(&x);
	cJSON_Delete(j);
	return ok;
}

/* A NUL does not end the answer: the bytes after it are graded too. */
static void test_nul(void)
{
	static const char cut[] = "{\"answer\": 437}\0 junk";
	static const char esc[] = "{\"answer\": \"437\\u0000x\"}";
	static const char *const names[] = {"f"};
	static const char *const nul_args[] = {"{}\\u0000x"};
	static const char *const junk_args[] = {"{} junk"};
	struct expect x = {0};
	struct stream st;
	struct grade g;
	struct diag d;
	char why[512];

	CHECK(!run_n("{\"json\":{\"answer\":437}}", cut, sizeof(cut) - 1, why, sizeof(why)));
	CHECK_STR(why, "answer holds a NUL character at byte 15");
	CHECK(!run_n("{\"json\":{\"answer\":\"437\"}}", esc, sizeof(esc) - 1, why, sizeof(why)));
	CHECK(strstr(why, "NUL character at byte 15") != NULL);
	CHECK(run_n("{\"contains\":[\"junk\"]}", cut, sizeof(cut) - 1, why, sizeof(why)));
	CHECK(!run_n("{\"regex\":\"\\\\{\\\"answer\\\": 437\\\\}\"}", cut, sizeof(cut) - 1, why,
		     sizeof(why)));
	/* arguments: a NUL, or junk after the value, is not the expected call */
	tool_stream(&st, 1, names, nul_args, "");
	CHECK(!answer("{\"tool_call\":{\"name\":\"f\",\"arguments\":{}}}", &st, 1, why, sizeof(why)));
	CHECK(strstr(why, "NUL character") != NULL);
	stream_release(&st);
	tool_stream(&st, 1, names, junk_args, "");
	CHECK(!answer("{\"tool_call\":{\"name\":\"f\",\"arguments\":{}}}", &st, 1, why, sizeof(why)));
	CHECK(strstr(why, "not JSON") != NULL);
	stream_release(&st);
	/* the final answer of round 2 is searched whole */
	diag_init(&d);
	grade_init(&g);
	x.nfinal = 1;
	x.final_contains = (const char *[]){"17"};
	CHECK(grade_final(&x, "It is\0 17", 10, &g, &d) == ERR_OK);
	CHECK(g.ok);
	grade_release(&g);
}

/* Grading is linear in the answer: a 100k-key object and an unclosed,
 * deeply nested answer are judged in well under a second (they took 32 s and
 * 37 s when the duplicate-key check and the embedded-JSON search were
 * quadratic). */
static void test_linear(void)
{
	struct buf a;
	char why[512];
	clock_t t0;
	int i;

	buf_init(&a, 64 << 20);
	buf_puts(&a, "{");
	for (i = 0; i < 100000; i++)
		buf_printf(&a, "%s\"k%d\":%d", i ? "," : "", i, i);
	buf_puts(&a, "}");
	t0 = clock();
	CHECK(!run_n("{\"json\":{\"k1\":1}}", a.data, a.len, why, sizeof(why)));
	CHECK(strstr(why, "unexpected key 'k0'") != NULL);
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
	buf_reset(&a);
	for (i = 0; i < 200000; i++)
		buf_puts(&a, "{\"a\":[");
	t0 = clock();
	CHECK(!run_n("{\"json\":{\"answer\":437}}", a.data, a.len, why, sizeof(why)));
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
	buf_reset(&a);
	buf_puts(&a, "[");
	for (i = 0; i < 100000; i++)
		buf_printf(&a, "%s%d", i ? "," : "", i);
	buf_puts(&a, "]");
	t0 = clock();
	CHECK(!run_n("{\"json\":[1]}", a.data, a.len, why, sizeof(why)));
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
	buf_release(&a);
}

int main(void)
{
	T_RUN(test_nul);
	T_RUN(test_linear);
	T_RUN(test_json_strict);
	T_RUN(test_regex_contains);
	T_RUN(test_reason_utf8);
	T_RUN(test_recall);
	T_RUN(test_tool_calls);
	T_RUN(test_final_and_facts);
	return T_DONE();
}
