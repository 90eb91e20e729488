/*
 * test_tpl — the template module without the CLI: Python-compatible tojson,
 * Python str.strip() semantics for Llama 3's `trim` (which @huggingface/jinja,
 * using JavaScript's trim, cannot check), every shipped descriptor loading and
 * rendering every case of the tests/tpl JSON files (under ASan in `make test`), and the
 * load errors. Run from the repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embed.h"
#include "buf.h"
#include "io.h"
#include "mem.h"
#include "tpl.h"
#include "t.h"

static const char *const shipped[] = {"chatml", "deepseek-v3", "deepseek-v3.1",
				      "deepseek-v3.2", "llama3", "qwen3"};

/* Expected strings are what CPython 3's json.dumps(x, ensure_ascii=False)
 * prints for the same JSON input. */
static void test_pyjson(void)
{
	static const char *const cases[][2] = {
		{"2.5", "2.5"},
		{"1e16", "1e+16"},
		{"1e-5", "1e-05"},
		{"0.0001", "0.0001"},
		{"123456789.123", "123456789.123"},
		{"1.5e300", "1.5e+300"},
		{"-0.5", "-0.5"},
		{"0.1", "0.1"},
		{"0.3333333333333333", "0.3333333333333333"},
		{"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"9007199254740992.0", "9007199254740992.0"},
		{"1000000000000000.5", "1000000000000000.5"},
		{"-1e-7", "-1e-07"},
		{"42", "42"},
		{"-17", "-17"},
		{"{\"a\":[1,\"x\\u0001\\\"\\\\\\n\",null,true],\"\xc3\xa9\":{}}",
		 "{\"a\": [1, \"x\\u0001\\\"\\\\\\n\", null, true], \"\xc3\xa9\": {}}"},
		{"[]", "[]"},
		{"\"\\u00e9\\/\\t\"", "\"\xc3\xa9/\\t\""},
	};
	struct buf b;
	size_t i;

	buf_init(&b, 1 << 16);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *v = cJSON_Parse(cases[i][0]);

		buf_reset(&b);
		CHECK(v != NULL);
		CHECK(tpl_pyjson(v, &b) == ERR_OK);
		CHECK_STR(b.data, cases[i][1]);
		cJSON_Delete(v);
	}
	buf_release(&b);
}

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

/* Seeded byte flips, insertions and truncations of every shipped descriptor:
 * each load either succeeds and renders, or fails with ERR_INPUT and a
 * message naming the file; nothing crashes or leaks (ASan run). */
static void test_mutated_descriptors(void)
{
	static const char msgs[] = "[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"u\"}]";
	char path[] = "/tmp/needle-tpl-mut-XXXXXX.json";
	cJSON *m = cJSON_Parse(msgs);
	unsigned x = 12345;
	size_t i, k, failed = 0, loaded = 0;
	struct buf raw, out;
	int fd = mkstemps(path, 5);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	buf_init(&raw, 1 << 20);
	buf_init(&out, 1 << 20);
	for (i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		struct buf name;
		const struct embed_file *f;

		buf_init(&name, 256);
		buf_printf(&name, "templates/%s.json", shipped[i]);
		f = embed_find(name.data);
		buf_release(&name);
		CHECK(f != NULL);
		for (k = 0; f && k < 60; k++) {
			struct tpl *t = NULL;
			struct diag d;
			FILE *fp;
			size_t pos, len = f->len;
			enum err e;

			buf_reset(&raw);
			buf_append(&raw, f->data, f->len);
			x = x * 1103515245u + 12345u;
			pos = (x >> 8) % len;
			switch (k % 3) {
			case 0: raw.data[pos] = (char)(raw.data[pos] ^ (1 << ((x >> 4) & 7))); break;
			case 1: buf_truncate(&raw, pos); break;
			default: raw.data[pos] = "{}[]\",:0tn\\"[(x >> 3) % 11]; break;
			}
			fp = fopen(path, "wb");
			CHECK(fp != NULL);
			if (!fp)
				break;
			fwrite(raw.data, 1, raw.len, fp);
			fclose(fp);
			diag_init(&d);
			e = tpl_load(path, &t, &d);
			CHECK(e == ERR_OK || (e == ERR_INPUT && strstr(d.msg, path)));
			if (!e) {
				loaded++;
				buf_reset(&out);
				e = tpl_render(t, m, NULL, NULL, 1, &out, &d);
				CHECK(e == ERR_OK || e == ERR_INPUT);
			} else {
				failed++;
			}
			tpl_free(t);
		}
	}
	CHECK(failed > 0 && loaded > 0);
	remove(path);
	cJSON_Delete(m);
	buf_release(&raw);
	buf_release(&out);
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
	enum tpl_server sv;
	struct buf b;
	struct diag d;

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
	diag_init(&d);
	CHECK(tpl_server_parse("sglang", &sv, &d) == ERR_OK && sv == TPL_SERVER_SGLANG);
	CHECK(tpl_server_parse("vllm", &sv, &d) == ERR_OK && sv == TPL_SERVER_VLLM);
	CHECK(tpl_server_parse("VLLM", &sv, &d) == ERR_USAGE && strstr(d.msg, "'VLLM'"));
	CHECK_STR(tpl_server_name(TPL_SERVER_SGLANG), "sglang");
	buf_release(&b);
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

int main(void)
{
	T_RUN(test_check_nul);
	T_RUN(test_server_flavours);
	T_RUN(test_mutated_descriptors);
	T_RUN(test_pyjson);
	T_RUN(test_llama3_trim_is_python);
	T_RUN(test_render_every_case);
	T_RUN(test_load_errors);
	return T_DONE();
}
