/* Unit tests of the round-2 messages: the case's messages, the assistant turn
 * with the calls as made, and one tool message per call in the model's order,
 * each answered with the result of the expected call it matched. */
#include <string.h>

#include "run/record.h"
#include "t.h"
#include "run/toolturn.h"

static const char two_calls[] =
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c0\","
	"\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]}}]}\n\n"
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c1\","
	"\"function\":{\"name\":\"a\",\"arguments\":\"{\\\"x\\\":1}\"}}]}}]}\n\n"
	"data: [DONE]\n\n";

static struct suite *load(const char *expect)
{
	char txt[1024];
	struct suite *s = NULL;
	struct diag d;

	snprintf(txt, sizeof(txt), "{\"suite\":\"t\",\"cases\":[{\"id\":\"t\",\"kind\":\"tool_call\","
		 "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
		 "\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"expect\":%s}]}", expect);
	diag_init(&d);
	if (suite_parse("t.json", txt, strlen(txt), &s, &d))
		fprintf(stderr, "  %s\n", d.msg);
	return s;
}

static const char *content_of(const cJSON *m, int i)
{
	const cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(m, i), "content");

	return cJSON_IsString(c) ? c->valuestring : "(not a string)";
}

static void check_turn(const char *expect, const char *r0, const char *r1)
{
	struct suite *s = load(expect);
	struct stream st;
	struct diag d;
	cJSON *calls, *m;

	diag_init(&d);
	stream_init(&st, STREAM_CHAT, 0);
	CHECK(stream_feed(&st, two_calls, strlen(two_calls), 1, &d) == ERR_OK);
	stream_end(&st, 2);
	calls = record_tool_calls(&st);
	CHECK(s != NULL);
	if (!s) {
		cJSON_Delete(calls);
		stream_release(&st);
		return;
	}
	m = toolturn_messages(&s->cases[0], &st, calls);
	CHECK_EQ_LONG(cJSON_GetArraySize(m), 4);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 1), "role")->valuestring, "assistant");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 1), "content")));
	CHECK_EQ_LONG(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 1), "tool_calls")), 2);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 2), "tool_call_id")->valuestring, "c0");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 3), "role")->valuestring, "tool");
	CHECK_STR(content_of(m, 2), r0);
	CHECK_STR(content_of(m, 3), r1);
	cJSON_Delete(m);
	cJSON_Delete(calls);
	stream_release(&st);
	suite_free(s);
}

static void test_results(void)
{
	/* matched by name and arguments, answered in the model's order */
	check_turn("{\"tool_calls\":[{\"name\":\"a\",\"arguments\":{\"x\":1},\"tool_result\":{\"r\":\"A\"}},"
		   "{\"name\":\"b\",\"tool_result\":\"B\"}]}", "B", "{\"r\":\"A\"}");
	/* an expected call without a result, or none matched: "" */
	check_turn("{\"tool_calls\":[{\"name\":\"a\",\"arguments\":{\"x\":2},\"tool_result\":\"A\"},"
		   "{\"name\":\"b\"}]}", "", "");
	/* one expected call: its result answers every call */
	check_turn("{\"tool_call\":{\"name\":\"a\"},\"tool_result\":\"R\"}", "R", "R");
}

/* Round 1's content goes into round 2 whole: a NUL the model wrote does not
 * cut it (the request carries it as \u0000). */
static void test_content_with_nul(void)
{
	static const char sse[] =
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\\u0000cd\"}}]}\n\n"
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c0\","
		"\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]}}]}\n\n"
		"data: [DONE]\n\n";
	struct suite *s = load("{\"tool_call\":{\"name\":\"a\"},\"tool_result\":\"R\"}");
	struct stream st;
	struct diag d;
	cJSON *calls, *m;
	char *txt;

	diag_init(&d);
	stream_init(&st, STREAM_CHAT, 0);
	CHECK(stream_feed(&st, sse, strlen(sse), 1, &d) == ERR_OK);
	stream_end(&st, 2);
	CHECK_EQ_LONG((long)st.content.len, 5);
	calls = record_tool_calls(&st);
	m = s ? toolturn_messages(&s->cases[0], &st, calls) : NULL;
	txt = m ? cJSON_PrintUnformatted(cJSON_GetArrayItem(m, 1)) : NULL;
	CHECK(txt && strstr(txt, "\"content\":\"ab\\u0000cd\"") != NULL);
	cJSON_free(txt);
	cJSON_Delete(m);
	cJSON_Delete(calls);
	stream_release(&st);
	suite_free(s);
}

int main(void)
{
	T_RUN(test_results);
	T_RUN(test_content_with_nul);
	return T_DONE();
}
