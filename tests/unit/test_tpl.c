/*
 * test_tpl — the render entry point without the CLI: Python str.strip()
 * semantics for Llama 3's `trim` (which @huggingface/jinja, using
 * JavaScript's trim, cannot check), every shipped descriptor loading and
 * rendering every case of the tests/tpl JSON files (under ASan in `make
 * test`), the server flavours end to end, and tpl_load's errors. The
 * modules underneath have their own tests: test_tpl_py, test_tpl_msg,
 * test_tpl_desc. Run from the repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "tpl/tpl.h"
#include "t.h"

static const char *const shipped[] = {"chatml", "deepseek-v3", "deepseek-v3.1", "deepseek-v3.2",
				      "deepseek-v4", "deepseek-v4.1", "llama3", "qwen3"};

static char *render(const char *tpl_name, const char *messages_json, struct diag *d)
{
	struct tpl *t = NULL;
	cJSON *m = cJSON_Parse(messages_json);
	struct buf b;
	char *s = NULL;

	buf_init(&b, BUF_MAX_DEFAULT);
	if (tpl_load(tpl_name, &t, d) == ERR_OK && tpl_render(t, m, NULL, NULL, 1, &b, d) == ERR_OK)
		s = buf_take(&b, NULL);
	buf_release(&b);
	tpl_free(t);
	cJSON_Delete(m);
	return s;
}

/* Jinja's trim on the server is Python's str.strip(): U+0085 and U+001C..1F
 * are whitespace there, U+FEFF is not. */
static void test_llama3_trim_is_python(void)
{
	struct diag d;
	char *s;

	diag_init(&d);
	s = render("llama3", "[{\"role\":\"user\",\"content\":\"\\u0085\\u001c \\u3000hi there\\u2029\\u000b\"}]", &d);
	CHECK_STR(s, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi there<|eot_id|>"
		     "<|start_header_id|>assistant<|end_header_id|>\n\n");
	mem_free(s);
	s = render("llama3", "[{\"role\":\"user\",\"content\":\"\\ufeffhi\\ufeff\"}]", &d);
	CHECK_STR(s, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n\xef\xbb\xbfhi\xef\xbb\xbf<|eot_id|>"
		     "<|start_header_id|>assistant<|end_header_id|>\n\n");
	mem_free(s);
	s = render("llama3", "[{\"role\":\"user\",\"content\":\" \\n\\t \"}]", &d);
	CHECK_STR(s, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n<|eot_id|>"
		     "<|start_header_id|>assistant<|end_header_id|>\n\n");
	mem_free(s);
	CHECK(d.code == ERR_OK);
}

/* Renders every case of one test file with every shipped template; each
 * either renders or fails with an input/unsupported error and a message. */
static void render_all(const char *path, const char *array_key)
{
	struct buf raw, out;
	struct diag d;
	cJSON *root, *cases, *c;
	size_t i, rendered = 0;

	diag_init(&d);
	buf_init(&raw, BUF_MAX_DEFAULT);
	buf_init(&out, BUF_MAX_DEFAULT);
	CHECK(io_read_file(path, &raw, &d) == ERR_OK);
	root = cJSON_Parse(raw.data);
	cases = array_key ? cJSON_GetObjectItem(root, array_key) : root;
	CHECK(cJSON_IsArray(cases));
	for (i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		struct tpl *t = NULL;

		diag_init(&d);
		CHECK(tpl_load(shipped[i], &t, &d) == ERR_OK);
		if (!t)
			continue;
		CHECK_STR(tpl_name(t), shipped[i]);
		CHECK(strlen(tpl_sha256(t)) == 64);
		cJSON_ArrayForEach(c, cases) {
			enum err e;

			diag_init(&d);
			buf_reset(&out);
			e = tpl_render(t, cJSON_GetObjectItem(c, "messages"), cJSON_GetObjectItem(c, "tools"),
				       cJSON_GetObjectItem(c, "kwargs"), 1, &out, &d);
			CHECK(e == ERR_OK || e == ERR_INPUT || e == ERR_UNSUPPORTED);
			CHECK(e == ERR_OK ? out.len > 0 : d.msg[0] != 0);
			rendered += e == ERR_OK;
		}
		tpl_free(t);
	}
	CHECK(rendered > 0);
	cJSON_Delete(root);
	buf_release(&raw);
	buf_release(&out);
}

static void test_render_every_case(void)
{
	render_all("tests/tpl/cases.json", NULL);
	render_all("tests/tpl/deepseek.json", "render");
	render_all("tests/tpl/deepseek.json", "errors");
}

static void test_load_errors(void)
{
	struct tpl *t = (struct tpl *)1;
	struct diag d;

	diag_init(&d);
	CHECK_EQ_LONG(tpl_load("no-such", &t, &d), ERR_USAGE);
	CHECK(t == NULL);
	CHECK(strstr(d.msg, "'no-such'") && strstr(d.msg, "qwen3"));
	diag_init(&d);
	CHECK_EQ_LONG(tpl_load("/nonexistent/x.json", &t, &d), ERR_IO);
	CHECK(strstr(d.msg, "/nonexistent/x.json") != NULL);
	tpl_free(NULL);
}

/* Renders `messages` with qwen3 (or `name`) and the given flavour; "" on error. */
static void render_flavour(const char *name, const char *messages, const char *kwargs,
			   enum tpl_server server, const char *effort, struct buf *b)
{
	struct tpl *t = NULL;
	struct tpl_render_opts o = {0};
	struct diag d;
	cJSON *m = cJSON_Parse(messages), *kw = kwargs ? cJSON_Parse(kwargs) : NULL;
	cJSON *eff = effort ? cJSON_CreateString(effort) : NULL;

	diag_init(&d);
	buf_reset(b);
	o.server = server;
	o.reasoning_effort = eff;
	CHECK(tpl_load(name, &t, &d) == ERR_OK);
	if (t && tpl_render_ex(t, m, NULL, kw, 1, &o, b, &d) != ERR_OK)
		buf_reset(b);
	tpl_free(t);
	cJSON_Delete(m);
	cJSON_Delete(kw);
	cJSON_Delete(eff);
}

static void test_server_flavours(void)
{
	static const char parts[] = "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
				    "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:,\"}},{\"type\":\"text\",\"text\":\"b\"}]}]";
	static const char user[] = "[{\"role\":\"user\",\"content\":\"u\"}]";
	struct buf b;

	buf_init(&b, 1 << 20);
	render_flavour("chatml", parts, NULL, TPL_SERVER_SGLANG, NULL, &b);
	CHECK_STR(b.data, "<|im_start|>user\na b<|im_end|>\n<|im_start|>assistant\n");
	/* vLLM refuses the image part (its tokens come from a processor) */
	render_flavour("chatml", parts, NULL, TPL_SERVER_VLLM, NULL, &b);
	CHECK_STR(b.data, "");
	/* qwen3: "none" turns thinking off on both, explicit kwargs win */
	render_flavour("qwen3", user, NULL, TPL_SERVER_SGLANG, "none", &b);
	CHECK(strstr(b.data, "<think>") != NULL);
	render_flavour("qwen3", user, NULL, TPL_SERVER_VLLM, "none", &b);
	CHECK(strstr(b.data, "<think>") != NULL);
	render_flavour("qwen3", user, "{\"enable_thinking\":true}", TPL_SERVER_SGLANG, "none", &b);
	CHECK(b.len && strstr(b.data, "<think>") == NULL);
	render_flavour("qwen3", user, NULL, TPL_SERVER_SGLANG, "low", &b);
	CHECK(b.len && strstr(b.data, "<think>") == NULL);
	/* V3.2: SGLang reads "thinking" only; vLLM "thinking" or "enable_thinking" */
	render_flavour("deepseek-v3.2", user, NULL, TPL_SERVER_VLLM, "high", &b);
	CHECK(b.len > 7 && !strcmp(b.data + b.len - 7, "<think>"));
	render_flavour("deepseek-v3.2", user, "{\"enable_thinking\":true}", TPL_SERVER_SGLANG, NULL, &b);
	CHECK(b.len > 8 && !strcmp(b.data + b.len - 8, "</think>"));
	render_flavour("deepseek-v3.2", user, "{\"enable_thinking\":false}", TPL_SERVER_SGLANG, "high", &b);
	CHECK(b.len > 7 && !strcmp(b.data + b.len - 7, "<think>"));
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_server_flavours);
	T_RUN(test_llama3_trim_is_python);
	T_RUN(test_render_every_case);
	T_RUN(test_load_errors);
	return T_DONE();
}
