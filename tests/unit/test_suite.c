/* Unit tests of suite validation: every error names file, JSON path, reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/suite.h"
#include "t.h"

/* Parses `text` as "s.json"; returns the error code, message in `d`. */
static enum err load(const char *text, struct suite **s, struct diag *d)
{
	diag_init(d);
	return suite_parse("s.json", text, strlen(text), s, d);
}

/* The suite must fail with a message containing every `want` fragment. */
static void bad(const char *text, const char *want1, const char *want2)
{
	struct suite *s = NULL;
	struct diag d;
	enum err e = load(text, &s, &d);

	CHECK(e == ERR_INPUT);
	CHECK(s == NULL);
	CHECK(strncmp(d.msg, "s.json: ", 8) == 0);
	if (!strstr(d.msg, want1) || (want2 && !strstr(d.msg, want2)))
		fprintf(stderr, "  message was: %s\n", d.msg);
	CHECK(strstr(d.msg, want1) != NULL);
	CHECK(!want2 || strstr(d.msg, want2) != NULL);
}

#define ARITH "{\"id\":\"arith\",\"kind\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"Compute 19 * 23.\"}],\"max_tokens\":64,\"expect\":{\"json\":{\"answer\":437}}}"

static void test_valid_and_defaults(void)
{
	struct suite *s = NULL;
	struct diag d;
	const char *text =
		"{\"suite\":\"x\",\"description\":\"d\",\"defaults\":{\"max_tokens\":32,\"temperature\":1.0,\"repeat\":3,"
		"\"chat_template_kwargs\":{\"thinking\":false}},\"cases\":[" ARITH ","
		"{\"id\":\"r\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096,\"seeds\":[7,8]}},"
		"{\"id\":\"re\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"expect\":{\"regex\":\"\\\\d+\"},\"repeat\":1}]}";

	CHECK(load(text, &s, &d) == ERR_OK);
	if (!s) {
		fprintf(stderr, "  %s\n", d.msg);
		return;
	}
	CHECK_STR(s->name, "x");
	CHECK_EQ_LONG(s->ncases, 3);
	CHECK_EQ_LONG(s->cases[0].max_tokens, 64); /* own value wins */
	CHECK_EQ_LONG(s->cases[0].repeat, 3);      /* default merged */
	CHECK(s->cases[0].expect.kind == EXPECT_JSON);
	CHECK(s->cases[0].kwargs != NULL);
	CHECK(s->cases[1].kind == SUITE_RECALL);
	CHECK_EQ_LONG(s->cases[1].recall.tokens, 4096);
	CHECK_EQ_LONG(s->cases[1].recall.ndepths, 3);
	CHECK_EQ_LONG(s->cases[1].recall.depths[1], 50);
	CHECK_EQ_LONG(s->cases[1].recall.nseeds, 2);
	CHECK_EQ_LONG(s->cases[1].recall.seeds[1], 8);
	CHECK(s->cases[2].kind == SUITE_CHAT); /* kind defaults to chat */
	CHECK_EQ_LONG(s->cases[2].repeat, 1);
	CHECK(suite_find(s, "re") == &s->cases[2]);
	CHECK(suite_find(s, "nope") == NULL);
	CHECK(strlen(s->sha256) == 64);
	suite_free(s);
	suite_free(NULL);
}

#define MSG "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]"

/* Structured outputs: "request" passes members through, never needle's own;
 * "expect.schema" stands alone or with "json", its schema checked where it
 * is written, "response_format" taken from the case's request. */
static void test_structured(void)
{
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"request\":{\"temperature\":0}}]}",
	    "cases[0].request.temperature: set 'temperature' as the case's own field", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"request\":{\"model\":\"m\"}}]}",
	    "cases[0].request.model: 'model' is needle's to write", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"request\":[]}]}",
	    "cases[0].request: expected an object", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"expect\":{\"schema\":{},\"regex\":\"x\"}}]}",
	    "cases[0].expect: ", "('schema' may come with 'json') (found 2)");
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"expect\":{\"schema\":\"response_format\"}}]}",
	    "cases[0].request.response_format: expect.schema is \"response_format\" but there is no json_schema.schema here", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"expect\":{\"schema\":{\"items\":{\"if\":{}}}}}]}",
	    "cases[0].expect.schema: /items/if: 'if' is not a keyword needle checks", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"expect\":{\"schema\":7}}]}",
	    "cases[0].expect.schema: expected a JSON Schema", NULL);
	{
		struct suite *s = NULL;
		struct diag d;

		CHECK(!load("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\"," MSG ",\"request\":{\"response_format\":{\"type\":"
			    "\"json_schema\",\"json_schema\":{\"schema\":{\"type\":\"object\"}}}},"
			    "\"expect\":{\"schema\":\"response_format\",\"json\":{}}}]}", &s, &d));
		CHECK(s && s->cases[0].expect.kind == EXPECT_JSON &&
		      cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s->cases[0].expect.schema, "type")));
		suite_free(s);
	}
}

static void test_errors(void)
{
	bad("{\"suite\":\"x\",\"cases\":[" ARITH ",{\"id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":64,\"expect\":{\"json\":1,\"regex\":\"x\"}}]}",
	    "cases[1].expect: ", "exactly one of");
	bad("{\"suite\":\"x\",\"cases\":[" ARITH ",{\"id\":\"b\",\"kind\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_token\":64}]}",
	    "cases[1].max_token: unknown case key 'max_token'", "did you mean 'max_tokens'?");
	bad("{\"suite\":\"x\",\"cases\":[" ARITH "," ARITH "]}",
	    "cases[1].id: duplicate id 'arith'", "cases[0]");
	bad("{\"suite\":\"x\",\"cases\":[{\"kind\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}]}",
	    "cases[0]: missing 'id'", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"recal\",\"recall\":{\"tokens\":100}}]}",
	    "cases[0].kind: unknown kind 'recal'", "did you mean 'recall'?");
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"banana\"}]}",
	    "cases[0].kind: unknown kind 'banana'", "expected chat, recall");
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":\"64\"}]}",
	    "cases[0].max_tokens: expected an integer, got string", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":6.5}]}",
	    "cases[0].max_tokens: expected an integer, got number", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_p\":0}]}",
	    "cases[0].top_p: 0 is out of range", NULL);
	bad("{\"suite\":\"x\",\"defaults\":{\"temperature\":\"hot\"},\"cases\":[" ARITH "]}",
	    "defaults.temperature: expected a number, got string", NULL);
	bad("{\"suite\":\"x\",\"defaults\":{\"id\":\"a\"},\"cases\":[" ARITH "]}",
	    "defaults.id: 'id' cannot have a default", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"expect\":{\"regex\":\"(ab\"}}]}",
	    "cases[0].expect.regex: bad regex at offset 3", "missing closing parenthesis");
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"usr\",\"content\":\"x\"}]}]}",
	    "cases[0].messages[0].role: unknown role 'usr'", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\"}]}]}]}",
	    "cases[0].messages[0].content[0].type: unknown content part type 'image'", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096,\"depths\":[10,150]}}]}",
	    "cases[0].recall.depths[1]: 150 is out of range", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096,\"depht\":[10]}}]}",
	    "cases[0].recall.depht: unknown recall key 'depht'", "did you mean 'depths'?");
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096},\"expect\":{\"json\":1}}]}",
	    "cases[0]: a recall case is graded against its generated needles", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"chat\"}]}",
	    "cases[0]: a chat case needs 'messages'", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"tool_call\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}]}",
	    "cases[0]: a tool_call case needs 'tools'", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"kind\":\"image_order\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"expect\":{\"contains\":[\"a\"]}}]}",
	    "cases[0]: an image_order case needs at least two images", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"expect\":{\"contains\":[\"a\",3]}}]}",
	    "cases[0].expect.contains[1]: expected a string, got integer", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"ignore_eos\":true}]}",
	    "cases[0]: 'ignore_eos' needs 'max_tokens'", NULL);
	bad("{\"suite\":\"x\",\"cases\":[]}", "cases: expected a non-empty array", NULL);
	bad("{\"suite\":\"x\",\"case\":[]}", "unknown top-level key 'case'", "did you mean 'cases'?");
	bad("{\"cases\":[" ARITH "]}", "missing 'suite'", NULL);
	bad("{\"suite\":\"x\",\n \"cases\": [1,]}", "not valid JSON at line 2", NULL);
	bad("{\"suite\":\"x\",\"cases\":[" ARITH "]} trailing", "not valid JSON at line 1", NULL);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\",\"id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}]}",
	    "cases[0].id: key 'id' appears twice", NULL);
	/* \u0000 would be cut short by cJSON: refused with its path */
	bad("{\"suite\":\"x\",\"cases\":[" ARITH ",{\"id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\\u0000b\"}]}]}]}",
	    "cases[1].messages[1].content[0].text: the string holds \\u0000", NULL);
	bad("{\"suite\":\"x\",\"defaults\":{\"chat_template_kwargs\":{\"k\\u0000\":1}},\"cases\":[" ARITH "]}",
	    "defaults.chat_template_kwargs: a key holds \\u0000", NULL);
	bad("{\"suite\":\"x\\u0000\",\"cases\":[" ARITH "]}", "suite: the string holds", NULL);
}

/* An escaped backslash before "u0000" is ordinary text, not a NUL. */
static void test_escaped_backslash_is_not_nul(void)
{
	struct suite *s = NULL;
	struct diag d;

	CHECK(load("{\"suite\":\"x\",\"cases\":[{\"id\":\"a\\\\u0000\",\"kind\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"expect\":{\"contains\":[\"\\\\u0000\"]}}]}",
		   &s, &d) == ERR_OK);
	CHECK(s && s->ncases == 1 && !strcmp(s->cases[0].id, "a\\u0000"));
	suite_free(s);
}

static void test_missing_file(void)
{
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(suite_load("/nonexistent/dir/x.json", &s, &d) == ERR_IO);
	CHECK(strstr(d.msg, "/nonexistent/dir/x.json") != NULL);
	CHECK(s == NULL);
}

/* "tokens": "max" and what else a recall size may be. */
static void test_recall_max(void)
{
	struct suite *s = NULL;
	struct diag d;

	CHECK(load("{\"suite\":\"x\",\"cases\":[{\"id\":\"r\",\"kind\":\"recall\","
		   "\"recall\":{\"tokens\":\"max\"}}]}", &s, &d) == ERR_OK);
	CHECK(s && s->cases[0].recall.tokens == SUITE_TOKENS_MAX);
	suite_free(s);
	bad("{\"suite\":\"x\",\"cases\":[{\"id\":\"r\",\"kind\":\"recall\",\"recall\":{\"tokens\":\"most\"}}]}",
	    "cases[0].recall.tokens", "expected an integer or \"max\", got string 'most'");
}

/* Invalid UTF-8 anywhere in the file is refused with its byte offset. */
static void test_invalid_utf8(void)
{
	static const char text[] = "{\"suite\":\"x\xff\",\"cases\":[" ARITH "]}";
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(suite_parse("s.json", text, sizeof(text) - 1, &s, &d) == ERR_INPUT);
	CHECK(s == NULL);
	CHECK(strstr(d.msg, "suite 's.json'") != NULL);
	CHECK(strstr(d.msg, "invalid UTF-8 at byte 11") != NULL);
}

/* An image file path must name a regular file that is a PNG, JPEG, GIF or
 * WebP (by its first bytes), relative to the suite's folder. */
static void test_image_files(void)
{
	static const struct { const char *name; const char *bytes; size_t n; int ok; } files[] = {
		{"a.png", "\x89PNG\r\n\x1a\n\0\0", 10, 1},
		{"b.jpg", "\xff\xd8\xff\xe0", 4, 1},
		{"c.gif", "GIF89a..", 8, 1},
		{"d.webp", "RIFF\x10\0\0\0WEBPVP8 ", 16, 1},
		{"e.png", "<html>", 6, 0},
		{"f.png", "", 0, 0},
	};
	char dir[] = "/tmp/needle-test-suite-XXXXXX", path[256], spath[256], text[2048];
	struct suite *s;
	struct diag d;
	size_t i;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(spath, sizeof(spath), "%s/s.json", dir);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		f = fopen(path, "wb");
		CHECK(f != NULL);
		if (!f)
			return;
		fwrite(files[i].bytes, 1, files[i].n, f);
		fclose(f);
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]) + 2; i++) {
		const char *name = i < 6 ? files[i].name : i == 6 ? "missing.png" : ".";
		snprintf(text, sizeof(text),
			 "{\"suite\":\"t\",\"cases\":[{\"id\":\"i\",\"kind\":\"image_order\","
			 "\"messages\":[{\"role\":\"user\",\"content\":["
			 "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}},"
			 "{\"type\":\"image_url\",\"image_url\":{\"url\":\"%s\"}}]}],"
			 "\"expect\":{\"contains\":[\"x\"]}}]}", name);
		s = NULL;
		diag_init(&d);
		if (i < 6 && files[i].ok) {
			CHECK(suite_parse(spath, text, strlen(text), &s, &d) == ERR_OK);
			if (!s)
				fprintf(stderr, "  %s: %s\n", name, d.msg);
			suite_free(s);
			continue;
		}
		CHECK(suite_parse(spath, text, strlen(text), &s, &d) == ERR_INPUT);
		CHECK(strstr(d.msg, "cases[0].messages[0].content[1].image_url.url: image '") != NULL);
		CHECK(strstr(d.msg, i < 6 ? "is not a PNG, JPEG, GIF or WebP file" :
				    i == 6 ? "No such file or directory" : "is not a regular file") != NULL);
		if (i < 6) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
			CHECK(strstr(d.msg, path) != NULL);
		}
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	T_RUN(test_recall_max);
	T_RUN(test_invalid_utf8);
	T_RUN(test_image_files);
	T_RUN(test_valid_and_defaults);
	T_RUN(test_errors);
	T_RUN(test_structured);
	T_RUN(test_escaped_backslash_is_not_nul);
	T_RUN(test_missing_file);
	return T_DONE();
}
