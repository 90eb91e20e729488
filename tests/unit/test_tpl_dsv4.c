/*
 * test_tpl_dsv4 — the DeepSeek encoders without the CLI: V4.1's effort
 * budgets and refusals, the prompt ends vLLM's V4.1 releases differ on, tool results put in call order, consecutive user
 * turns merged, V4's tool-call history (printed on vLLM, refused on SGLang)
 * and rejected low effort on vLLM, V3.2's tools block per server (placement, tool JSON key order). The
 * whole matrix against an independent model is tests/tpl/ds_compare.py.
 */
#include <string.h>

#include "base/buf.h"
#include "tpl/tpl.h"
#include "t.h"

#define BOS "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
#define EOS "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
#define ASSISTANT "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"

/* Renders with add_generation_prompt `gen`; returns the error and leaves
 * the prompt (or "") in `b`. */
static enum err render_gen(const char *name, const char *msgs, const char *tools,
			   const char *kwargs, const char *effort, enum tpl_server server, int gen,
			   struct buf *b, struct diag *d)
{
	struct tpl *t = NULL;
	struct tpl_render_opts o = {0};
	cJSON *m = cJSON_Parse(msgs), *tl = tools ? cJSON_Parse(tools) : NULL;
	cJSON *kw = kwargs ? cJSON_Parse(kwargs) : NULL, *eff = effort ? cJSON_CreateString(effort) : NULL;
	enum err e;

	diag_init(d);
	buf_reset(b);
	o.server = server;
	o.reasoning_effort = eff;
	e = tpl_load(name, &t, d);
	if (!e)
		e = tpl_render_ex(t, m, tl, kw, gen, &o, b, d);
	if (e)
		buf_reset(b);
	tpl_free(t);
	cJSON_Delete(m);
	cJSON_Delete(tl);
	cJSON_Delete(kw);
	cJSON_Delete(eff);
	return e;
}

static enum err render(const char *name, const char *msgs, const char *tools, const char *kwargs,
		       const char *effort, enum tpl_server server, struct buf *b, struct diag *d)
{
	return render_gen(name, msgs, tools, kwargs, effort, server, 1, b, d);
}

static int ends_with(const struct buf *b, const char *s)
{
	return b->len >= strlen(s) && !strcmp(b->data + b->len - strlen(s), s);
}

/* vLLM's V4.1 encoder before PR 57882 (main at 8ec00ec2) and after it (main
 * at 21f4c25c) end some prompts differently: refused there, naming both;
 * where they agree, and on SGLang, rendered. */
static void test_v41_releases(void)
{
	static const char asst[] = "[{\"role\":\"user\",\"content\":\"q\"},"
				   "{\"role\":\"assistant\",\"content\":\"a\"}]";
	static const char sys[] = "[{\"role\":\"system\",\"content\":\"s\"}]";
	static const char mid_sys[] = "[{\"role\":\"user\",\"content\":\"q\"},"
				      "{\"role\":\"system\",\"content\":\"s\"}]";
	static const char user[] = "[{\"role\":\"user\",\"content\":\"q\"}]";
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 20);
	CHECK_EQ_LONG(render("deepseek-v4.1", asst, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d),
		      ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "ends with an assistant message") && strstr(d.msg, "PR 57882") &&
	      strstr(d.msg, "8ec00ec2") && strstr(d.msg, "21f4c25c"));
	CHECK_EQ_LONG(render("deepseek-v4.1", sys, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d),
		      ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "a lone system message") != NULL);
	CHECK_EQ_LONG(render_gen("deepseek-v4.1", user, NULL, NULL, NULL, TPL_SERVER_VLLM, 0, &b, &d),
		      ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "without a generation prompt") != NULL);
	/* both releases: nothing after a final assistant turn without a
	 * generation prompt; the assistant token after a later system message */
	CHECK_EQ_LONG(render_gen("deepseek-v4.1", asst, NULL, NULL, NULL, TPL_SERVER_VLLM, 0, &b, &d),
		      ERR_OK);
	CHECK(ends_with(&b, "a" EOS));
	CHECK_EQ_LONG(render("deepseek-v4.1", mid_sys, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK(ends_with(&b, "s" ASSISTANT "<think>"));
	/* SGLang's encoder takes no add_generation_prompt */
	CHECK_EQ_LONG(render("deepseek-v4.1", asst, NULL, NULL, NULL, TPL_SERVER_SGLANG, &b, &d), ERR_OK);
	CHECK(ends_with(&b, "a" EOS));
	CHECK_EQ_LONG(render_gen("deepseek-v4.1", user, NULL, NULL, NULL, TPL_SERVER_SGLANG, 0, &b, &d),
		      ERR_OK);
	CHECK(ends_with(&b, "q" ASSISTANT "</think>"));
	buf_release(&b);
}

static void test_v41_effort(void)
{
	static const char user[] = "[{\"role\":\"user\",\"content\":\"q\"}]";
	static const char *const ok[][2] = {{NULL, "50"}, {"low", "25"}, {"xhigh", "75"}, {"max", "100"}};
	struct buf b;
	struct diag d;
	size_t i;

	buf_init(&b, 1 << 20);
	for (i = 0; i < 4; i++) {
		CHECK_EQ_LONG(render("deepseek-v4.1", user, NULL, NULL, ok[i][0], TPL_SERVER_VLLM, &b, &d), ERR_OK);
		CHECK(strstr(b.data, "Reasoning Effort: ") && !strncmp(strstr(b.data, "Effort: ") + 8, ok[i][1], strlen(ok[i][1])));
	}
	/* vLLM thinks by default; SGLang does not; "none" is chat mode */
	CHECK_EQ_LONG(render("deepseek-v4.1", user, NULL, NULL, NULL, TPL_SERVER_SGLANG, &b, &d), ERR_OK);
	CHECK_STR(b.data, BOS "<\xef\xbd\x9cUser\xef\xbd\x9c>q<\xef\xbd\x9c" "Assistant\xef\xbd\x9c></think>");
	CHECK_EQ_LONG(render("deepseek-v4.1", user, NULL, NULL, "none", TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK(b.len && !strstr(b.data, "Reasoning Effort"));
	CHECK_EQ_LONG(render("deepseek-v4.1", user, NULL, NULL, "medium", TPL_SERVER_VLLM, &b, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "the server would reject this request") != NULL);
	CHECK_EQ_LONG(render("deepseek-v4.1", user, NULL, "{\"thinking\":\"yes\"}", NULL, TPL_SERVER_VLLM, &b, &d),
		      ERR_INPUT);
	buf_release(&b);
}

static void test_v41_merging(void)
{
	static const char conv[] =
		"[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"},"
		"{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":["
		"{\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
		"{\"id\":\"y\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"k\\\":[1,\\\"s\\\"]}\"}}]},"
		"{\"role\":\"tool\",\"tool_call_id\":\"y\",\"content\":\"Y\"},"
		"{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"X\"}]";
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 20);
	CHECK_EQ_LONG(render("deepseek-v4.1", conv, NULL, "{\"thinking\":false}", NULL, TPL_SERVER_SGLANG, &b, &d),
		      ERR_OK);
	CHECK(strstr(b.data, "User\xef\xbd\x9c>a\n\nb<") != NULL);
	CHECK(strstr(b.data, "<tool_result>X</tool_result>\n\n<tool_result>Y</tool_result>") != NULL);
	CHECK(strstr(b.data, "name=\"k\" string=\"false\">[1, \"s\"]<") != NULL);
	/* V4 on vLLM prints the parsed arguments as parameters (an empty object
	 * none); on SGLang it refuses; V4.1 rejects arguments that are no object */
	buf_reset(&b);
	CHECK_EQ_LONG(render("deepseek-v4", conv, NULL, "{\"thinking\":false}", NULL, TPL_SERVER_VLLM, &b, &d),
		      ERR_OK);
	CHECK(strstr(b.data, "invoke name=\"f\">\n\n</\xef\xbd\x9c" "DSML\xef\xbd\x9cinvoke>") != NULL);
	CHECK(strstr(b.data, "parameter name=\"k\" string=\"false\">[1, \"s\"]</") != NULL);
	CHECK_EQ_LONG(render("deepseek-v4", conv, NULL, NULL, NULL, TPL_SERVER_SGLANG, &b, &d), ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "tool-call history") != NULL);
	CHECK_EQ_LONG(render("deepseek-v4.1",
			     "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
			     "{\"name\":\"f\",\"arguments\":\"[1]\"}}]}]", NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d),
		      ERR_INPUT);
	buf_release(&b);
}

static void test_v4_effort(void)
{
	static const char user[] = "[{\"role\":\"user\",\"content\":\"q\"}]";
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 20);
	CHECK_EQ_LONG(render("deepseek-v4", user, NULL, NULL, "max", TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK(strstr(b.data, BOS "Reasoning Effort: Absolute maximum") == b.data);
	CHECK_EQ_LONG(render("deepseek-v4", user, NULL, NULL, "high", TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK(b.len && !strstr(b.data, "Reasoning Effort"));
	CHECK_EQ_LONG(render("deepseek-v4", user, NULL, NULL, "low", TPL_SERVER_VLLM, &b, &d), ERR_INPUT);
	CHECK_EQ_LONG(render("deepseek-v4", user, NULL, "{\"thinking\":true}", "low", TPL_SERVER_SGLANG, &b, &d),
		      ERR_OK);
	buf_release(&b);
}

static void test_v32_tools(void)
{
	static const char conv[] = "[{\"role\":\"system\",\"content\":\"SYS\"},{\"role\":\"user\",\"content\":\"q\"}]";
	static const char tools[] = "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"description\":\"d\"}}]";
	struct buf b;
	struct diag d;
	const char *sys, *hdr;

	buf_init(&b, 1 << 20);
	CHECK_EQ_LONG(render("deepseek-v3.2", conv, tools, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_OK);
	sys = strstr(b.data, "SYS");
	hdr = strstr(b.data, "\n\n## Tools\n");
	CHECK(hdr == b.data + strlen(BOS) && sys > hdr);
	CHECK(strstr(b.data, "{\"name\": \"f\", \"description\": \"d\", \"parameters\": null}\n</functions>\n") != NULL);
	CHECK_EQ_LONG(render("deepseek-v3.2", conv, tools, NULL, NULL, TPL_SERVER_SGLANG, &b, &d), ERR_OK);
	CHECK(strstr(b.data, BOS "SYS\n\n## Tools\n") == b.data);
	CHECK(strstr(b.data, "{\"description\": \"d\", \"name\": \"f\", \"parameters\": null, \"strict\": false}") != NULL);
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_v41_effort);
	T_RUN(test_v41_releases);
	T_RUN(test_v41_merging);
	T_RUN(test_v4_effort);
	T_RUN(test_v32_tools);
	return T_DONE();
}
