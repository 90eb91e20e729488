/*
 * test_tpl_jinja — a model's Jinja template with the context each server
 * builds: content as a string or as parts (the template's content format),
 * tool-call arguments as objects, reasoning under both names, tools None
 * when absent, special tokens, kwargs filtered by what the template reads
 * (vLLM) or all (SGLang), reasoning_effort folded in, the pinned clock, and
 * the refusals.
 */
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "tpl/tpl_jinja.h"
#include "t.h"

static enum err render(const char *text, const char *specials, const char *msgs, const char *tools,
		       const char *kwargs, const char *effort, enum tpl_server server, struct buf *out,
		       struct diag *d)
{
	struct tpl_text x = {"t.jinja", (char *)text, strlen(text), "", ""};
	struct tpl_jinja *j = NULL;
	cJSON *sp = specials ? cJSON_Parse(specials) : NULL, *m = cJSON_Parse(msgs);
	cJSON *tl = tools ? cJSON_Parse(tools) : NULL, *kw = kwargs ? cJSON_Parse(kwargs) : NULL;
	cJSON *eff = effort ? cJSON_CreateString(effort) : NULL;
	struct tm clock;
	struct tpl_jinja_req r;
	enum err e;

	memset(&clock, 0, sizeof clock);
	clock.tm_year = 124;
	clock.tm_mon = 6;
	clock.tm_mday = 26;
	r.messages = m;
	r.tools = tl;
	r.kwargs = kw;
	r.effort = eff;
	r.gen = 1;
	r.server = server;
	r.clock = &clock;
	diag_init(d);
	buf_reset(out);
	e = tpl_jinja_new(&x, sp, &j, d);
	if (!e)
		e = tpl_jinja_render(j, &r, out, d);
	if (e)
		buf_reset(out);
	tpl_jinja_free(j);
	cJSON_Delete(sp);
	cJSON_Delete(m);
	cJSON_Delete(tl);
	cJSON_Delete(kw);
	cJSON_Delete(eff);
	return e;
}

static void test_messages(void)
{
	static const char msgs[] =
		"[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]},"
		"{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"r\",\"tool_calls\":["
		"{\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\": 1}\"}}]}]";
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 16);
	/* string format: parts joined, null content "", arguments an object */
	CHECK_EQ_LONG(render("{{ messages[0].content }}|{{ messages[1].content }}|{{ messages[1].reasoning }}"
			     "{{ messages[1].reasoning_content }}|{{ messages[1].tool_calls[0].function.arguments.x }}"
			     "|{{ tools }}", NULL, msgs, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "a\nb||rr|1|None");
	CHECK_EQ_LONG(render("{{ messages[0].content }}", NULL, msgs, NULL, NULL, NULL, TPL_SERVER_SGLANG, &b, &d),
		      ERR_OK);
	CHECK_STR(b.data, "a b");
	/* a template looping over content gets parts, a string becomes one part */
	CHECK_EQ_LONG(render("{% for m in messages %}{% for p in m['content'] %}[{{ p.text }}]{% endfor %};{% endfor %}",
			     NULL, "[{\"role\":\"user\",\"content\":\"s\"},{\"role\":\"user\",\"content\":null}]",
			     NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "[s];;");
	/* media parts reach such a template as {"type": "image"}; a string-format
	 * template cannot take them (the model's placeholder is unknown) */
	CHECK_EQ_LONG(render("{% for m in messages %}{% for p in m.content %}{{ p }};{% endfor %}{% endfor %}", NULL,
			     "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
			     "{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]",
			     NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "{'type': 'text', 'text': 'a'};{'type': 'image'};");
	CHECK_EQ_LONG(render("{{ messages[0].content }}", NULL,
			     "[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]",
			     NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_UNSUPPORTED);
	buf_release(&b);
}

static void test_context(void)
{
	static const char user[] = "[{\"role\":\"user\",\"content\":\"q\"}]";
	static const char tools[] = "[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 16);
	CHECK_EQ_LONG(render("{{ bos_token }}{{ tools[0].function.description }}{{ add_generation_prompt }}"
			     "{{ strftime_now('%Y-%m-%d') }}", "{\"bos_token\":\"<s>\"}", user, tools, NULL, NULL,
			     TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "<s>NoneTrue2024-07-26");
	/* vLLM passes a kwarg only when the template reads it, SGLang all */
	CHECK_EQ_LONG(render("{{ enable_thinking }}{{ reasoning_effort }}", NULL, user, NULL, "{\"x\":1}", "low",
			     TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "Truelow");
	CHECK_EQ_LONG(render("{{ thinking }}", NULL, user, NULL, NULL, "none", TPL_SERVER_SGLANG, &b, &d), ERR_OK);
	CHECK_STR(b.data, "False");
	CHECK_EQ_LONG(render("{{ thinking }}", NULL, user, NULL, NULL, "none", TPL_SERVER_VLLM, &b, &d), ERR_OK);
	CHECK_STR(b.data, "");
	/* refusals: a special token without a tokenizer_config.json,
	 * raise_exception (the server's 400), a syntax error */
	CHECK_EQ_LONG(render("{{ eos_token }}", NULL, user, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_UNSUPPORTED);
	CHECK(strstr(d.msg, "'eos_token'") != NULL);
	/* SGLang hands tools as its Tool.model_dump */
	CHECK_EQ_LONG(render("{{ tools | tojson }}", "{}", user, tools, NULL, NULL, TPL_SERVER_SGLANG, &b, &d), ERR_OK);
	CHECK_STR(b.data, "[{\"type\": \"function\", \"function\": {\"description\": null, \"name\": \"f\", "
			  "\"parameters\": null, \"strict\": false}, \"defer_loading\": null}]");
	CHECK_EQ_LONG(render("{{ raise_exception('no') }}", "{}", user, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d),
		      ERR_INPUT);
	CHECK(strstr(d.msg, "t.jinja") && strstr(d.msg, "no"));
	CHECK_EQ_LONG(render("{% for %}", "{}", user, NULL, NULL, NULL, TPL_SERVER_VLLM, &b, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "line 1") != NULL);
	CHECK_EQ_LONG(render("x", "{}", user, NULL, "{\"tokenize\":true}", NULL, TPL_SERVER_VLLM, &b, &d), ERR_INPUT);
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_messages);
	T_RUN(test_context);
	return T_DONE();
}
