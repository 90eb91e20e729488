/*
 * test_tpl_model — model folders alone: which tokenizer file, which template
 * text for requests without and with tools (processor chat_template.json,
 * chat_template.jinja, tokenizer_config.json's string or named list),
 * AddedToken special tokens and add_bos_token, template files given to
 * --template, the errors; and tpl_open matching a text to the descriptor
 * that records its SHA-256, else to the Jinja interpreter. Run from the
 * repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "tpl/tpl.h"
#include "tpl/tpl_model.h"
#include "t.h"

static char root[] = "/tmp/needle-tpl-model-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", root, name);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void drop(const char *name)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", root, name);
	remove(path);
}

static int ends(const char *s, const char *tail)
{
	return s && strlen(s) >= strlen(tail) && !strcmp(s + strlen(s) - strlen(tail), tail);
}

static void test_choice(void)
{
	struct tpl_model m;
	struct diag d;

	put("tokenizer.model", "x");
	put("tokenizer_config.json", "{\"bos_token\":{\"__type\":\"AddedToken\",\"content\":\"<s>\"},"
	    "\"eos_token\":\"</s>\",\"add_bos_token\":true,\"chat_template\":[{\"name\":\"default\","
	    "\"template\":\"D\"},{\"name\":\"tool_use\",\"template\":\"T\"}]}");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_OK);
	CHECK(ends(m.tokenizer, "/tokenizer.model"));
	CHECK_STR(m.plain.text, "D");
	CHECK_STR(m.tools.text, "T");
	CHECK(ends(m.plain.path, "tokenizer_config.json") && strstr(m.tools.why, "tool_use"));
	CHECK_STR(m.bos, "<s>");
	CHECK_STR(m.eos, "</s>");
	CHECK_EQ_LONG(m.add_bos, 1);
	tpl_model_release(&m);

	/* tokenizer.json first; chat_template.jinja before the config; the
	 * processor's template only for requests without tools */
	put("tokenizer.json", "{}");
	put("chat_template.jinja", "J");
	put("chat_template.json", "{\"chat_template\":\"P\"}");
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_OK);
	CHECK(ends(m.tokenizer, "/tokenizer.json"));
	CHECK_STR(m.plain.text, "P");
	CHECK_STR(m.tools.text, "J");
	tpl_model_release(&m);
	drop("chat_template.json");
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_OK);
	CHECK_STR(m.plain.text, "J");
	CHECK(ends(m.plain.path, "chat_template.jinja"));
	tpl_model_release(&m);
	drop("chat_template.jinja");
	drop("tokenizer.model");
}

static void test_errors(void)
{
	struct tpl_model m;
	struct tpl_text t;
	struct diag d;
	char cfg[512];

	put("tokenizer_config.json", "{\"chat_template\":[{\"name\":\"other\",\"template\":\"x\"}]}");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "no template named 'default'") != NULL);
	tpl_model_release(&m);
	put("tokenizer_config.json", "{\"chat_template\":");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "invalid JSON") && strstr(d.msg, "tokenizer_config.json"));
	tpl_model_release(&m);
	put("tokenizer_config.json", "{}");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_OK);
	CHECK(m.plain.text == NULL && m.add_bos == -1);
	tpl_model_release(&m);
	snprintf(cfg, sizeof cfg, "%s/tokenizer_config.json", root);
	diag_init(&d);
	CHECK_EQ_LONG(tpl_model_template_file(&t, cfg, 0, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "has no chat_template") != NULL);
	tpl_text_release(&t);
	drop("tokenizer.json");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_model_open(&m, root, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "neither tokenizer.json nor tokenizer.model") != NULL);
	tpl_model_release(&m);
	CHECK(tpl_model_is_dir(root) && !tpl_model_is_dir(cfg) && !tpl_model_is_dir(NULL));
}

/* The qwen3 descriptor records the SHA-256 of the Qwen3 template text; that
 * text as a .jinja file opens as qwen3, a changed text is refused. */
static void test_open_matches(void)
{
	struct buf raw, path;
	struct diag d;
	struct tpl *t = NULL;
	cJSON *cfg;
	const cJSON *ct;

	buf_init(&raw, 1 << 24);
	buf_init(&path, 1024);
	diag_init(&d);
	CHECK(io_read_file(t_fixture("hf/qwen3/tokenizer_config.json"), &raw, &d) == ERR_OK);
	cfg = cJSON_Parse(raw.data);
	ct = cJSON_GetObjectItemCaseSensitive(cfg, "chat_template");
	CHECK(cJSON_IsString(ct));
	buf_printf(&path, "%s/qwen.jinja", root);
	if (cJSON_IsString(ct))
		put("qwen.jinja", ct->valuestring);
	CHECK_EQ_LONG(tpl_open(path.data, NULL, &t, NULL, &d), ERR_OK);
	if (t) {
		CHECK_STR(tpl_name(t), "qwen3");
		CHECK_STR(tpl_source(t), path.data);
		CHECK(strlen(tpl_source_sha256(t)) == 64 && strstr(tpl_explain(t), "'qwen3'"));
	}
	tpl_free(t);
	/* another text goes to the Jinja interpreter; a syntax error is refused */
	put("qwen.jinja", "{{ messages[0]['role'] }}");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_open(path.data, NULL, &t, NULL, &d), ERR_OK);
	CHECK(t && !strcmp(tpl_name(t), "jinja") && strstr(tpl_explain(t), "Jinja interpreter"));
	tpl_free(t);
	put("qwen.jinja", "{{ messages[0]['role'] ");
	diag_init(&d);
	CHECK_EQ_LONG(tpl_open(path.data, NULL, &t, NULL, &d), ERR_INPUT);
	CHECK(t == NULL && strstr(d.msg, "qwen.jinja") && strstr(d.msg, "template line 1"));
	drop("qwen.jinja");
	cJSON_Delete(cfg);
	buf_release(&raw);
	buf_release(&path);
}

static void test_special_tokens(void)
{
	struct tpl *t = NULL;
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 16);
	diag_init(&d);
	CHECK(tpl_load("chatml", &t, &d) == ERR_OK);
	CHECK(t && tpl_special_tokens(t, &b) == ERR_OK);
	/* "<|im_start|>\0<|im_end|>\0", each once */
	CHECK(b.len == 24 && !strcmp(b.data, "<|im_start|>") && !strcmp(b.data + 13, "<|im_end|>"));
	tpl_free(t);
	buf_release(&b);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	T_RUN(test_choice);
	T_RUN(test_errors);
	T_RUN(test_open_matches);
	T_RUN(test_special_tokens);
	drop("tokenizer_config.json");
	rmdir(root);
	return T_DONE();
}
