/* Unit tests of the serving-stack probes (recprobe.h): the suite keys
 * "jitter", "cache" and "during" (parsed and refused with their JSON path),
 * the steps, the cache nonce line and its manifest entry across --resume, the
 * jitter fit check, and the haystack options they use (a preface counted in
 * the exact length, codes moved at their end only), with the real Qwen3
 * tokenizer. Run from the repository root. */
#include <stdlib.h>

#include "base/buf.h"
#include "generators/haystack.h"
#include "run/recprobe.h"
#include "run/suite.h"
#include "t.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

#define LOAD "{\"id\":\"hold\",\"kind\":\"load\",\"load\":{\"input_tokens\":256,\"output_tokens\":64," \
	"\"endpoint\":\"completions\",\"concurrency\":[4],\"requests\":[16]}}"

/* Parses `cases` (the text of a cases array's members) as "s.json". */
static enum err load(const char *cases, struct suite **s, struct diag *d)
{
	char text[4096];

	snprintf(text, sizeof(text), "{\"suite\":\"p\",\"cases\":[%s]}", cases);
	diag_init(d);
	*s = NULL;
	return suite_parse("s.json", text, strlen(text), s, d);
}

static void bad(const char *cases, const char *want)
{
	struct suite *s;
	struct diag d;

	CHECK(load(cases, &s, &d) == ERR_INPUT);
	CHECK(s == NULL);
	if (!strstr(d.msg, want))
		fprintf(stderr, "  message was: %s\n  wanted: %s\n", d.msg, want);
	CHECK(strstr(d.msg, want) != NULL);
	suite_free(s);
}

static void recall(char *out, size_t cap, const char *extra)
{
	snprintf(out, cap, "{\"id\":\"r\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096%s}}", extra);
}

static void test_keys_parsed(void)
{
	struct suite *s;
	struct diag d;
	char c[1024];

	snprintf(c, sizeof(c), "%s,{\"id\":\"j\",\"kind\":\"recall\",\"during\":\"hold\","
		 "\"recall\":{\"tokens\":4096,\"jitter\":4,\"seeds\":[1,2]}},"
		 "{\"id\":\"k\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096,\"cache\":true}},"
		 "{\"id\":\"p\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096,\"cache\":false,\"jitter\":1}}",
		 LOAD);
	CHECK(load(c, &s, &d) == ERR_OK);
	if (!s) {
		fprintf(stderr, "  %s\n", d.msg);
		return;
	}
	CHECK_EQ_LONG(s->cases[1].recall.jitter, 4);
	CHECK_EQ_LONG(s->cases[1].recall.cache, 0);
	CHECK_STR(s->cases[1].during, "hold");
	CHECK(s->cases[0].during == NULL && s->cases[2].during == NULL);
	CHECK_EQ_LONG(s->cases[2].recall.cache, 1);
	CHECK_EQ_LONG(s->cases[2].recall.jitter, 1);
	CHECK_EQ_LONG(s->cases[3].recall.cache, 0);
	CHECK_EQ_LONG(recprobe_steps(&s->cases[1].recall), 4);
	CHECK_EQ_LONG(recprobe_steps(&s->cases[2].recall), RECPROBE_CACHE_STEPS);
	CHECK_EQ_LONG(recprobe_steps(&s->cases[3].recall), 1);
	suite_free(s);
}

static void test_keys_refused(void)
{
	char c[1024];

	recall(c, sizeof(c), ",\"jitter\":0");
	bad(c, "s.json: cases[0].recall.jitter: ");
	recall(c, sizeof(c), ",\"jitter\":65");
	bad(c, "cases[0].recall.jitter");
	recall(c, sizeof(c), ",\"jitter\":2.5");
	bad(c, "cases[0].recall.jitter");
	recall(c, sizeof(c), ",\"jitter\":\"4\"");
	bad(c, "cases[0].recall.jitter");
	recall(c, sizeof(c), ",\"cache\":1");
	bad(c, "cases[0].recall.cache: expected true or false, got integer");
	recall(c, sizeof(c), ",\"cache\":true,\"jitter\":2");
	bad(c, "cases[0].recall.cache: a cache probe has no jitter: use two cases");
	bad("{\"id\":\"r\",\"kind\":\"recall\",\"recall\":{\"tokens\":\"max\",\"jitter\":2}}",
	    "cases[0].recall.jitter: jitter needs a number of \"tokens\"");
	bad("{\"id\":\"r\",\"kind\":\"recall\",\"during\":\"nope\",\"recall\":{\"tokens\":4096}}",
	    "s.json: cases[0].during: 'nope' is not a load case of this suite");
	bad("{\"id\":\"a\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096}},"
	    "{\"id\":\"r\",\"kind\":\"recall\",\"during\":\"a\",\"recall\":{\"tokens\":4096}}",
	    "cases[1].during: 'a' is not a load case of this suite");
	bad(LOAD ",{\"id\":\"l2\",\"kind\":\"load\",\"during\":\"hold\",\"load\":{\"input_tokens\":256,"
	    "\"output_tokens\":64,\"endpoint\":\"completions\",\"concurrency\":[4],\"requests\":[16]}}",
	    "cases[1].during: a load case cannot run during another");
	bad(LOAD ",{\"id\":\"r\",\"kind\":\"recall\",\"during\":7,\"recall\":{\"tokens\":4096}}",
	    "cases[1].during");
}

static void test_steps(void)
{
	struct suite_recall j = {0}, k = {0};
	char id[64];

	j.tokens = 1000, j.jitter = 3;
	k.tokens = 1000, k.jitter = 1, k.cache = 1;
	recprobe_step_id("x", &j, 2, id, sizeof(id));
	CHECK_STR(id, "x@1002");
	recprobe_step_id("x", &k, 2, id, sizeof(id));
	CHECK_STR(id, "x/warm-reordered");
	CHECK_EQ_LONG(recprobe_tokens(&j, 2), 1002);
	CHECK_EQ_LONG(recprobe_tokens(&k, 2), 1000);
	CHECK(!recprobe_reversed(&k, 1) && recprobe_reversed(&k, 2) && !recprobe_reversed(&j, 2));
	CHECK(!recprobe_waits(&k, 0) && recprobe_waits(&k, 1) && !recprobe_waits(&j, 1));
	CHECK(!recprobe_group_ends(&k, 0) && !recprobe_group_ends(&k, 1) && recprobe_group_ends(&k, 2));
	CHECK(recprobe_group_ends(&j, 0) && recprobe_group_ends(&j, 1));
	CHECK_EQ_LONG(recprobe_code_shift(&j, 0), 0);
	CHECK_EQ_LONG(recprobe_code_shift(&j, 2), 50);
	CHECK_EQ_LONG(recprobe_code_shift(&k, 2), 0);
}

static void test_preface(void)
{
	struct suite_recall k = {0}, j = {0};
	char a[RECPROBE_NONCE_MAX + 64], b[sizeof(a)], c[sizeof(a)];

	k.cache = 1, j.jitter = 4;
	recprobe_preface(&k, "0123456789abcdef.0", "case", 1, 1, a, sizeof(a));
	CHECK(!strncmp(a, "Run 0123456789abcdef.0, document ", 33));
	CHECK(strlen(a) == 33 + 8 + 3 && !strcmp(a + 41, ".\n\n"));
	recprobe_preface(&k, "0123456789abcdef.0", "case", 1, 1, b, sizeof(b));
	CHECK_STR(a, b); /* the three steps of a group share it */
	recprobe_preface(&k, "0123456789abcdef.0", "case", 2, 1, b, sizeof(b));
	recprobe_preface(&k, "0123456789abcdef.0", "case", 1, 2, c, sizeof(c));
	CHECK(strcmp(a, b) && strcmp(a, c) && strcmp(b, c)); /* repeat and seed tag it */
	recprobe_preface(&k, "0123456789abcdef.1", "case", 1, 1, b, sizeof(b));
	CHECK(strcmp(a, b) != 0);
	recprobe_preface(&j, "0123456789abcdef.0", "case", 1, 1, b, sizeof(b));
	CHECK_STR(b, "");
}

static void test_manifest(void)
{
	struct suite *s;
	struct diag d;
	cJSON *m = cJSON_CreateObject(), *m2 = cJSON_CreateObject(), *bad_old;
	char nonce[RECPROBE_NONCE_MAX], again[RECPROBE_NONCE_MAX];

	CHECK(load("{\"id\":\"k\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096,\"cache\":true}}", &s, &d) == ERR_OK);
	if (!s || !m || !m2)
		return;
	CHECK(recprobe_manifest(m, NULL, s, 0xfeedULL, nonce, &d) == ERR_OK);
	CHECK_STR(nonce, "000000000000feed.0");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "cache_probe"), "nonce")->valuestring,
		  "000000000000feed");
	/* a resume keeps the nonce (a fresh one is ignored) and counts a session */
	CHECK(recprobe_manifest(m2, m, s, 0xbeefULL, again, &d) == ERR_OK);
	CHECK_STR(again, "000000000000feed.1");
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(m2, "cache_probe"), "session")->valuedouble, 1);
	CHECK(recprobe_manifest(m, m2, s, 0xbeefULL, again, &d) == ERR_OK);
	CHECK_STR(again, "000000000000feed.2");
	bad_old = cJSON_Parse("{\"cache_probe\":{\"nonce\":\"XYZ\",\"session\":0}}");
	CHECK(recprobe_manifest(m2, bad_old, s, 1, again, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "cache_probe") != NULL);
	cJSON_Delete(bad_old);
	suite_free(s);
	cJSON_Delete(m2);
	m2 = cJSON_CreateObject();
	/* no cache probe in the suite: nothing in the manifest */
	CHECK(load("{\"id\":\"r\",\"kind\":\"recall\",\"recall\":{\"tokens\":4096}}", &s, &d) == ERR_OK);
	CHECK(s && recprobe_manifest(m2, NULL, s, 5, nonce, &d) == ERR_OK);
	CHECK(cJSON_GetObjectItem(m2, "cache_probe") == NULL);
	suite_free(s);
	cJSON_Delete(m);
	cJSON_Delete(m2);
}

static void test_fit(void)
{
	struct suite_case c;
	struct diag d;

	memset(&c, 0, sizeof(c));
	c.kind = SUITE_RECALL;
	c.index = 3;
	c.max_tokens = 100;
	c.recall.tokens = 1000, c.recall.jitter = 4;
	diag_init(&d);
	CHECK(recprobe_check_fit(&c, 1103, 1103, "s.json", &d) == ERR_OK);
	CHECK(recprobe_check_fit(&c, -1, -1, "s.json", &d) == ERR_OK);
	CHECK(recprobe_check_fit(&c, 1102, 1103, "s.json", &d) == ERR_INPUT);
	CHECK_STR(d.msg, "s.json: cases[3].recall.jitter: the longest length, 1003 tokens "
		  "(1000 + 4 - 1), plus max_tokens 100 is 1103, over the 1102 the server allows "
		  "(max_model_len 1103)");
	c.recall.jitter = 1; /* no jitter: the pre-flight check of each attempt applies */
	CHECK(recprobe_check_fit(&c, 10, 10, "s.json", &d) == ERR_OK);
}

static struct tok *tk;
static struct tpl *tp;

static enum err build(long tokens, const char *preface, int shift, struct haystack *h)
{
	struct haystack_opts o;
	struct diag d;

	memset(&o, 0, sizeof(o));
	o.tok = tk, o.tpl = tp, o.tokens = tokens, o.seed = 5;
	o.preface = preface, o.code_shift = shift;
	diag_init(&d);
	return haystack_build(&o, h, &d);
}

/* The rendered prompt of `h` has `want` tokens and its user content starts
 * with `preface`. */
static void check_prompt(const struct haystack *h, long want, const char *preface)
{
	const cJSON *content = cJSON_GetObjectItem(cJSON_GetArrayItem(h->messages, 0), "content");
	struct buf p;
	struct diag d;
	size_t n = 0;

	diag_init(&d);
	buf_init(&p, BUF_MAX_DEFAULT);
	CHECK(tpl_render(tp, h->messages, NULL, NULL, 1, &p, &d) == ERR_OK);
	CHECK(tok_count(tk, p.data, p.len, &n, &d) == ERR_OK);
	CHECK_EQ_LONG(n, want);
	CHECK(cJSON_IsString(content) && !strncmp(content->valuestring, preface, strlen(preface)));
	buf_release(&p);
}

static void test_haystack_options(void)
{
	struct haystack a, b, c;
	long n;
	int i;

	for (n = 3000; n < 3004; n++) {
		CHECK(build(n, "Run 0123456789abcdef.0, document 89abcdef.\n\n", 0, &a) == ERR_OK);
		check_prompt(&a, n, "Run 0123456789abcdef.0, document 89abcdef.\n\n");
		haystack_release(&a);
	}
	CHECK(build(3000, NULL, 0, &a) == ERR_OK);
	CHECK(build(3000, NULL, 25, &b) == ERR_OK);
	CHECK(build(3000, NULL, 575 * 25, &c) == ERR_OK);
	CHECK(a.nneedles == b.nneedles && a.nneedles == 3);
	for (i = 0; i < a.nneedles; i++) {
		const char *x = a.needle[i].code, *y = b.needle[i].code;

		CHECK(strlen(x) == 11 && strlen(y) == 11);
		CHECK(!strncmp(x, y, 9));
		CHECK(x[9] != y[9] && x[10] != y[10]); /* both final letters move */
		CHECK_STR(a.needle[i].project, b.needle[i].project);
		CHECK(!strncmp(x, c.needle[i].code, 9));
	}
	haystack_release(&a);
	haystack_release(&b);
	haystack_release(&c);
}

/* The document id of a cache-probe record with `nonce`, `filler` and, when
 * `code` is not NULL, two needles (the first with that code). */
static void document_id(const char *nonce, const char *filler, const char *code,
			char out[RECPROBE_DOC_ID])
{
	char text[1024], nd[256] = "";
	cJSON *r;

	if (code)
		snprintf(nd, sizeof(nd),
			 ",\"needles\":[{\"depth\":10,\"project\":\"Aster\",\"expected\":\"%s\"},"
			 "{\"depth\":90,\"project\":\"Birch\",\"expected\":\"QX-4471-ZZ\"}]", code);
	snprintf(text, sizeof(text),
		 "{\"case\":\"c/cold\",\"probe\":{\"step\":\"cold\",\"nonce\":\"%s\"},"
		 "\"recall\":{\"tokens\":4096,\"depths\":[10,90],\"filler\":\"%s\",\"prompt_sha256\":\"%s\"},"
		 "\"grade\":{\"ok\":true%s}}", nonce, filler, nonce, nd);
	r = cJSON_Parse(text);
	out[0] = 'x';
	CHECK(r && recprobe_document_id(r, out) == 1);
	cJSON_Delete(r);
}

/* A cache-probe step's document identity leaves its nonce out and keeps
 * what the document is made of. */
static void test_document_id(void)
{
	char a[RECPROBE_DOC_ID], b[RECPROBE_DOC_ID];
	cJSON *r;

	document_id("00aa.0", "prose", "AB-1234-CD", a);
	CHECK(strlen(a) == 16);
	document_id("ff11.3", "prose", "AB-1234-CD", b);
	CHECK_STR(a, b); /* another nonce (and so another prompt): the same document */
	document_id("00aa.0", "zh", "AB-1234-CD", b);
	CHECK(strcmp(a, b) != 0);
	document_id("00aa.0", "prose", "AB-1234-CE", b);
	CHECK(strcmp(a, b) != 0);
	document_id("00aa.0", "prose", NULL, b);
	CHECK_STR(b, ""); /* no needles recorded: nothing to compare */
	r = cJSON_Parse("{\"case\":\"r\",\"recall\":{\"tokens\":4096,\"prompt_sha256\":\"x\"}}");
	CHECK(r && recprobe_document_id(r, a) == 0);
	cJSON_Delete(r);
}

int main(void)
{
	struct diag d;

	diag_init(&d);
	T_RUN(test_keys_parsed);
	T_RUN(test_keys_refused);
	T_RUN(test_steps);
	T_RUN(test_preface);
	T_RUN(test_document_id);
	T_RUN(test_manifest);
	T_RUN(test_fit);
	if (tok_load(t_fixture("hf/qwen3/tokenizer.json"), &tk, &d) || tpl_load("qwen3", &tp, &d)) {
		fprintf(stderr, "cannot set up: %s\n", d.msg);
		return 1;
	}
	T_RUN(test_haystack_options);
	tok_free(tk);
	tpl_free(tp);
	return T_DONE();
}
