/*
 * test_tpl_msg — the servers' message preparation alone: content flattening
 * per server (vLLM "\n" and media refused, SGLang " " and media dropped),
 * reasoning fields, tool-call arguments parsed as vLLM does, a tool as
 * pydantic's model_dump leaves it, reasoning_effort folded into kwargs per
 * server, server names, and the \u0000 guard.
 */
#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "base/mem.h"
#include "tpl/tpl_msg.h"
#include "t.h"

static const char convo[] =
	"[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},\"b\","
	"{\"type\":\"input_text\",\"text\":\"c\"},{\"type\":\"refusal\",\"refusal\":\"r\"}]},"
	"{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"why\","
	"\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\": [1, 2]}\"}},"
	"{\"function\":{\"name\":\"g\",\"arguments\":\"not json\"}},"
	"{\"function\":{\"name\":\"h\",\"arguments\":{\"k\":true}}}]},"
	"{\"role\":\"assistant\",\"content\":\"done\",\"tool_calls\":[]}]";

static void test_prepare_vllm(void)
{
	struct tpl_conv c = {NULL, 0};
	struct diag d;
	cJSON *m = cJSON_Parse(convo);
	char *a;

	diag_init(&d);
	CHECK_EQ_LONG(tpl_conv_prepare(&c, m, TPL_SERVER_VLLM, &d), ERR_OK);
	CHECK_EQ_LONG(c.n, 3);
	if (c.n == 3) {
		CHECK_STR(c.m[0].content, "a\nb\nc\nr");
		CHECK(tpl_msg_is(&c.m[0], "user") && !tpl_msg_is(&c.m[0], "assistant"));
		CHECK_STR(c.m[1].content, "");
		CHECK_STR(c.m[1].reasoning, "why");
		CHECK_EQ_LONG(cJSON_GetArraySize(c.m[1].args), 3);
		a = cJSON_PrintUnformatted(c.m[1].args);
		CHECK_STR(a, "[{\"x\":[1,2]},{},{\"k\":true}]");
		cJSON_free(a);
		CHECK(c.m[2].tool_calls == NULL && c.m[2].args == NULL);
	}
	tpl_conv_release(&c);
	CHECK(c.m == NULL && c.n == 0);
	cJSON_Delete(m);
}

static void test_prepare_sglang_and_media(void)
{
	static const char media[] = "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
				    "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:,\"}},"
				    "{\"type\":\"input_text\",\"text\":\"skipped by sglang\"},"
				    "{\"type\":\"text\",\"text\":\"b\"}]}]";
	struct tpl_conv c = {NULL, 0};
	struct diag d;
	cJSON *m = cJSON_Parse(media);

	diag_init(&d);
	CHECK_EQ_LONG(tpl_conv_prepare(&c, m, TPL_SERVER_SGLANG, &d), ERR_OK);
	CHECK(c.n == 1 && !strcmp(c.m[0].content, "a b"));
	tpl_conv_release(&c);
	diag_init(&d);
	CHECK_EQ_LONG(tpl_conv_prepare(&c, m, TPL_SERVER_VLLM, &d), ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "part 1") && strstr(d.msg, "'image_url'"));
	tpl_conv_release(&c);
	cJSON_Delete(m);
}

static void test_prepare_errors(void)
{
	static const char *const bad[][2] = {
		{"[]", "non-empty array"},
		{"[{\"content\":\"x\"}]", "message 0"},
		{"[{\"role\":\"user\",\"content\":7}]", "'content'"},
		{"[{\"role\":\"user\",\"content\":\"\"},{\"role\":\"assistant\",\"tool_calls\":{}}]",
		 "message 1: 'tool_calls'"},
		{"[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{}}]}]", "tool call 0"},
		{"[{\"role\":\"user\",\"content\":[{\"text\":\"x\"}]}]", "content part 0"},
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tpl_conv c = {NULL, 0};
		struct diag d;
		cJSON *m = cJSON_Parse(bad[i][0]);

		diag_init(&d);
		CHECK_EQ_LONG(tpl_conv_prepare(&c, m, TPL_SERVER_VLLM, &d), ERR_INPUT);
		CHECK(strstr(d.msg, bad[i][1]) != NULL);
		tpl_conv_release(&c);
		cJSON_Delete(m);
	}
}

/* model_dump order: type, function {name, description, parameters, rest},
 * rest; absent description/parameters become null. */
static void test_dump_tool(void)
{
	cJSON *t = cJSON_Parse("{\"extra\":1,\"function\":{\"strict\":true,\"name\":\"f\"},\"type\":\"function\"}");
	cJSON *bad = cJSON_Parse("{\"type\":\"retrieval\",\"function\":{\"name\":\"f\"}}");
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 12);
	diag_init(&d);
	CHECK_EQ_LONG(tpl_msg_dump_tool(t, 0, TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": null, "
			  "\"parameters\": null, \"strict\": true}, \"extra\": 1}");
	/* SGLang: Function's declared order, strict kept, extras dropped. */
	buf_reset(&b);
	CHECK_EQ_LONG(tpl_msg_dump_tool(t, 0, TPL_SERVER_SGLANG, &b, &d), ERR_OK);
	CHECK_STR(b.data, "{\"type\": \"function\", \"function\": {\"description\": null, \"name\": \"f\", "
			  "\"parameters\": null, \"strict\": true}, \"defer_loading\": null}");
	cJSON_AddTrueToObject(t, "defer_loading");
	CHECK_EQ_LONG(tpl_msg_dump_tool(t, 1, TPL_SERVER_SGLANG, &b, &d), ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "defer_loading") != NULL);
	diag_init(&d);
	CHECK_EQ_LONG(tpl_msg_dump_tool(bad, 3, TPL_SERVER_VLLM, &b, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "tools[3]") != NULL);
	buf_release(&b);
	cJSON_Delete(t);
	cJSON_Delete(bad);
}

static int kw_is(const cJSON *kw, const char *key, int want)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(kw, key);

	return want < 0 ? v == NULL : cJSON_IsBool(v) && cJSON_IsTrue(v) == want;
}

static void test_effort_kwargs(void)
{
	cJSON *none = cJSON_CreateString("none"), *high = cJSON_CreateString("high");
	cJSON *given = cJSON_Parse("{\"enable_thinking\":false}"), *kw = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_EQ_LONG(tpl_msg_effort_kwargs(given, TPL_SERVER_VLLM, NULL, &kw, &d), ERR_OK);
	CHECK(kw == NULL);
	CHECK_EQ_LONG(tpl_msg_effort_kwargs(NULL, TPL_SERVER_VLLM, high, &kw, &d), ERR_OK);
	CHECK(kw_is(kw, "enable_thinking", 1) && kw_is(kw, "thinking", -1));
	cJSON_Delete(kw);
	CHECK_EQ_LONG(tpl_msg_effort_kwargs(NULL, TPL_SERVER_SGLANG, none, &kw, &d), ERR_OK);
	CHECK(kw_is(kw, "enable_thinking", 0) && kw_is(kw, "thinking", 0));
	cJSON_Delete(kw);
	/* explicit kwargs win; the caller's object is not modified */
	CHECK_EQ_LONG(tpl_msg_effort_kwargs(given, TPL_SERVER_SGLANG, high, &kw, &d), ERR_OK);
	CHECK(kw_is(kw, "enable_thinking", 0) && kw_is(kw, "thinking", 1));
	CHECK(kw_is(given, "thinking", -1));
	cJSON_Delete(kw);
	cJSON_Delete(none);
	cJSON_Delete(high);
	cJSON_Delete(given);
}

static void test_server_names(void)
{
	enum tpl_server sv = TPL_SERVER_VLLM;
	struct diag d;

	diag_init(&d);
	CHECK(tpl_server_parse("sglang", &sv, &d) == ERR_OK && sv == TPL_SERVER_SGLANG);
	CHECK(tpl_server_parse("vllm", &sv, &d) == ERR_OK && sv == TPL_SERVER_VLLM);
	CHECK(tpl_server_parse("tgi", &sv, &d) == ERR_USAGE && strstr(d.msg, "'tgi'"));
	CHECK_STR(tpl_server_name(TPL_SERVER_VLLM), "vllm");
	CHECK_STR(tpl_server_name(TPL_SERVER_SGLANG), "sglang");
}

static void test_check_nul(void)
{
	static const char bad[] = "[{\"content\":\"a\\u0000b\"}]";
	static const char escaped[] = "[{\"content\":\"a\\\\u0000b\"}]";
	static const char outside[] = "[\"\\\"\", 0]";
	struct diag d;

	diag_init(&d);
	CHECK_EQ_LONG(tpl_check_nul(bad, strlen(bad), "m.json", &d), ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "'m.json'") && strstr(d.msg, "byte 14"));
	diag_init(&d);
	CHECK_EQ_LONG(tpl_check_nul(escaped, strlen(escaped), "m.json", &d), ERR_OK);
	CHECK_EQ_LONG(tpl_check_nul(outside, strlen(outside), "m.json", &d), ERR_OK);
}

/* The check as a plain byte loop: the byte offset of the first \\u0000
 * escape inside a string, or -1. */
static long nul_escape_at(const char *s, size_t n)
{
	int in = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			in = !in;
		else if (in && s[i] == '\\' && i + 1 < n) {
			if (s[i + 1] == 'u' && i + 5 < n && !memcmp(s + i + 2, "0000", 4))
				return (long)i;
			i++;
		}
	}
	return -1;
}

/* tpl_check_nul scans eight bytes at a time: random texts of quotes,
 * backslashes, 'u', '0' and other bytes (every alignment and length up to
 * 40, bytes above 0x7f included) give the byte loop's answer. */
static void test_check_nul_random(void)
{
	static const char pool[] = "\"\\u000ax\x80\xff\"\\";
	char s[48], want[64];
	uint64_t x = 88172645463325252ULL;
	size_t n, i;
	int k, agree = 0;
	long at;
	struct diag d;

	for (k = 0; k < 20000; k++) {
		n = (size_t)k % 41;
		for (i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			s[i] = pool[x % (sizeof(pool) - 1)];
		}
		diag_init(&d);
		at = nul_escape_at(s, n);
		if (at < 0) {
			agree += tpl_check_nul(s, n, "r", &d) == ERR_OK;
		} else {
			snprintf(want, sizeof want, "at byte %ld,", at);
			agree += tpl_check_nul(s, n, "r", &d) == ERR_UNSUPPORTED && strstr(d.msg, want);
		}
	}
	CHECK_EQ_LONG(agree, 20000);
}

/* Past other escapes a \u0000 is still found at its byte; a cut before
 * it, or an escaped backslash before "u0000", passes. */
static void test_check_nul_after_escapes(void)
{
	static const char nul[] = "[{\"content\":\"line\\none \\\"q\\\" \\u0000 x\"}]";
	static const char esc[] = "[{\"content\":\"a\\\\u0000 b\\n\"}]";
	struct diag d;

	diag_init(&d);
	CHECK(tpl_check_nul(nul, strlen(nul), "m.json", &d) == ERR_UNSUPPORTED);
	CHECK_STR(d.msg, "cannot use 'm.json': a string holds \\u0000 at byte 29, which needle's "
		  "JSON parser would cut short");
	CHECK(tpl_check_nul(esc, strlen(esc), "m.json", NULL) == ERR_OK);
	CHECK(tpl_check_nul(esc, 14, "m.json", NULL) == ERR_OK);
	CHECK(tpl_check_nul("\"\\u0000\"", 8, "m.json", NULL) == ERR_UNSUPPORTED);
}

int main(void)
{
	T_RUN(test_check_nul_after_escapes);
	T_RUN(test_prepare_vllm);
	T_RUN(test_prepare_sglang_and_media);
	T_RUN(test_prepare_errors);
	T_RUN(test_dump_tool);
	T_RUN(test_effort_kwargs);
	T_RUN(test_server_names);
	T_RUN(test_check_nul);
	T_RUN(test_check_nul_random);
	return T_DONE();
}
