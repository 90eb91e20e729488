/* Unit tests of request bodies: streaming with usage always on, pass-through
 * of sampling fields and vLLM/SGLang extras, raw prompts to /v1/completions,
 * image files inlined as data URLs, request_sha256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/io.h"
#include "run/req.h"
#include "run/suite.h"
#include "t.h"

/* Parses suite `text` as if it were the file `path` (its folder is where
 * image paths are looked up). */
static struct suite *load_as(const char *path, const char *text)
{
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	if (suite_parse(path, text, strlen(text), &s, &d))
		fprintf(stderr, "  %s\n", d.msg);
	return s;
}

static struct suite *load(const char *text)
{
	return load_as("t.json", text);
}

static void test_chat_body(void)
{
	struct suite *s = load(
		"{\"suite\":\"t\",\"defaults\":{\"temperature\":1.0,\"top_p\":0.9,\"reasoning_effort\":\"low\"},"
		"\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
		"\"max_tokens\":128,\"seed\":7,\"ignore_eos\":true,\"min_tokens\":128,"
		"\"chat_template_kwargs\":{\"thinking\":false},\"expect\":{\"contains\":[\"x\"]}}]}");
	struct req r;
	struct diag d;
	cJSON *b, *so;
	char hex[IO_SHA256_HEX];

	CHECK(s != NULL);
	if (!s)
		return;
	diag_init(&d);
	req_init(&r);
	CHECK(req_build(&r, &s->cases[0], s->cases[0].messages, "m1", ".", &d) == ERR_OK);
	CHECK_STR(r.path, "/v1/chat/completions");
	b = cJSON_Parse(r.body.data);
	CHECK(b != NULL);
	CHECK_STR(cJSON_GetObjectItem(b, "model")->valuestring, "m1");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(b, "stream")));
	so = cJSON_GetObjectItem(b, "stream_options");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(so, "include_usage")));
	CHECK_EQ_LONG(cJSON_GetObjectItem(b, "max_tokens")->valueint, 128);
	CHECK_EQ_LONG(cJSON_GetObjectItem(b, "min_tokens")->valueint, 128);
	CHECK_EQ_LONG(cJSON_GetObjectItem(b, "seed")->valueint, 7);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(b, "ignore_eos")));
	CHECK(cJSON_GetObjectItem(b, "temperature")->valuedouble == 1.0);
	CHECK(cJSON_GetObjectItem(b, "top_p")->valuedouble == 0.9);
	CHECK_STR(cJSON_GetObjectItem(b, "reasoning_effort")->valuestring, "low");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "chat_template_kwargs"), "thinking")));
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "messages"), 0), "content")->valuestring, "hi");
	/* suite-only fields never reach the server */
	CHECK(cJSON_GetObjectItem(b, "expect") == NULL);
	CHECK(cJSON_GetObjectItem(b, "id") == NULL);
	CHECK(cJSON_GetObjectItem(b, "repeat") == NULL);
	CHECK(!io_sha256_hex(r.body.data, r.body.len, hex, NULL));
	CHECK_STR(r.sha256, hex);
	cJSON_Delete(b);
	req_release(&r);
	suite_free(s);
}

static void test_completions_body(void)
{
	struct suite *s = load("{\"suite\":\"t\",\"cases\":[{\"id\":\"p\",\"prompt\":\"Once upon\","
			       "\"max_tokens\":16,\"ignore_eos\":true,\"chat_template_kwargs\":{\"x\":1}}]}");
	struct req r;
	struct diag d;
	cJSON *b;

	CHECK(s != NULL);
	if (!s)
		return;
	diag_init(&d);
	req_init(&r);
	CHECK(req_build(&r, &s->cases[0], NULL, "m", ".", &d) == ERR_OK);
	CHECK_STR(r.path, "/v1/completions");
	CHECK(r.endpoint == REQ_COMPLETIONS);
	b = cJSON_Parse(r.body.data);
	CHECK_STR(cJSON_GetObjectItem(b, "prompt")->valuestring, "Once upon");
	CHECK(cJSON_GetObjectItem(b, "messages") == NULL);
	CHECK(cJSON_GetObjectItem(b, "chat_template_kwargs") == NULL); /* chat only */
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "stream_options"), "include_usage")));
	cJSON_Delete(b);
	req_release(&r);
	suite_free(s);
}

static void test_image_inlined(void)
{
	char dir[] = "/tmp/needle-test-req-XXXXXX", path[128], text[1024], spath[128];
	const unsigned char png[] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 1};
	struct suite *s;
	struct req r;
	struct diag d;
	cJSON *b, *parts;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/cat.png", dir);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	fwrite(png, 1, sizeof(png), f);
	fclose(f);
	snprintf(text, sizeof(text),
		 "{\"suite\":\"t\",\"cases\":[{\"id\":\"i\",\"kind\":\"image_order\",\"messages\":[{\"role\":\"user\",\"content\":["
		 "{\"type\":\"image_url\",\"image_url\":{\"url\":\"cat.png\"}},"
		 "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}},"
		 "{\"type\":\"text\",\"text\":\"order?\"}]}],\"expect\":{\"contains\":[\"x\"]}}]}");
	snprintf(spath, sizeof(spath), "%s/t.json", dir);
	s = load_as(spath, text);
	CHECK(s != NULL);
	if (!s)
		return;
	diag_init(&d);
	req_init(&r);
	CHECK(req_build(&r, &s->cases[0], s->cases[0].messages, "m", dir, &d) == ERR_OK);
	b = cJSON_Parse(r.body.data);
	parts = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "messages"), 0), "content");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(parts, 0), "image_url"), "url")->valuestring,
		  "data:image/png;base64,iVBORw0KGgoAAQ==");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(parts, 1), "image_url"), "url")->valuestring,
		  "data:image/png;base64,AAAA");
	cJSON_Delete(b);
	/* a missing image file is an error naming it */
	unlink(path);
	diag_init(&d);
	CHECK(req_build(&r, &s->cases[0], s->cases[0].messages, "m", dir, &d) == ERR_IO);
	CHECK(strstr(d.msg, "cat.png") != NULL);
	rmdir(dir);
	req_release(&r);
	suite_free(s);
}

int main(void)
{
	T_RUN(test_chat_body);
	T_RUN(test_completions_body);
	T_RUN(test_image_inlined);
	return T_DONE();
}
