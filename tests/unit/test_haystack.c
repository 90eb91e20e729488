/* Unit tests of the needle-document generator, with the real Qwen3
 * tokenizer.json and the shipped qwen3 template: exact sizes over a sweep of
 * small N (where fitting is hardest), exact token offsets, depths 0 and 100,
 * determinism, and every input error. Run from the repository root. */
#include <stdlib.h>

#include "base/buf.h"
#include "generators/haystack.h"
#include "base/mem.h"
#include "t.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

static struct tok *tk;
static struct tpl *tp;

static void base(struct haystack_opts *o, long tokens, uint64_t seed)
{
	memset(o, 0, sizeof(*o));
	o->tok = tk;
	o->tpl = tp;
	o->tokens = tokens;
	o->seed = seed;
}

static size_t count(const char *s, size_t n)
{
	size_t c = 0;
	struct diag d;

	diag_init(&d);
	CHECK(tok_count(tk, s, n, &c, &d) == ERR_OK);
	return c;
}

/* Renders the messages independently and checks every promise of the
 * output against fresh counts. */
static void check_output(const struct haystack_opts *o, const struct haystack *h)
{
	struct buf p;
	struct diag d;
	int i;

	diag_init(&d);
	buf_init(&p, BUF_MAX_DEFAULT);
	CHECK(tpl_render(tp, h->messages, NULL, NULL, 1, &p, &d) == ERR_OK);
	CHECK_EQ_LONG(count(p.data, p.len), o->tokens);
	CHECK_EQ_LONG(h->prompt_tokens, o->tokens);
	CHECK_EQ_LONG(count(h->document, h->document_len), h->document_tokens);
	for (i = 0; i < h->nneedles + h->ndistractors; i++) {
		const struct haystack_needle *n = i < h->nneedles ? &h->needle[i]
								  : &h->distractor[i - h->nneedles];

		CHECK_EQ_LONG(count(h->document, n->char_offset), n->token_offset);
		CHECK(strstr(h->document + n->char_offset, n->code) != NULL);
		CHECK(strstr(h->document, n->code) == strstr(h->document + n->char_offset, n->code));
	}
	buf_release(&p);
}

static void test_sweep_small(void)
{
	struct haystack_opts o;
	struct haystack h;
	struct diag d;
	long n;
	int built = 0;

	for (n = 60; n <= 1400; n += 61) {
		base(&o, n, (uint64_t)n);
		o.depths[0] = 0, o.depths[1] = 50, o.depths[2] = 100, o.ndepths = 3;
		diag_init(&d);
		if (haystack_build(&o, &h, &d) == ERR_OK) {
			built++;
			check_output(&o, &h);
			CHECK_EQ_LONG(h.needle[0].token_offset, 0);
			CHECK_EQ_LONG(h.needle[2].token_offset + h.needle[2].tokens, h.document_tokens);
		} else {
			CHECK(d.code == ERR_INPUT); /* too small to hold three needles */
			CHECK(n < 200);
		}
		haystack_release(&h);
	}
	CHECK(built >= 18);
}

static void test_options(void)
{
	static const char *const kinds[] = {"prose", "code", "zh", "mixed"};
	struct haystack_opts o;
	struct haystack h;
	struct diag d;
	int k, asked, i;

	for (k = 0; k < 4; k++) {
		base(&o, 6000, 42);
		o.filler = kinds[k];
		o.needles = 4;
		o.ask = 2;
		o.distractors = 5;
		diag_init(&d);
		CHECK(haystack_build(&o, &h, &d) == ERR_OK);
		if (d.code) {
			fprintf(stderr, "%s: %s\n", kinds[k], d.msg);
			continue;
		}
		check_output(&o, &h);
		CHECK_EQ_LONG(h.nneedles, 4);
		CHECK_EQ_LONG(h.ndistractors, 5);
		for (i = asked = 0; i < 4; i++)
			asked += h.needle[i].asked;
		CHECK_EQ_LONG(asked, 2);
		CHECK_EQ_LONG(cJSON_GetArraySize(h.expected), 2);
		CHECK(strstr(h.question, "access_code") != NULL);
		haystack_release(&h);
	}
}

static void test_deterministic(void)
{
	struct haystack_opts o;
	struct haystack a, b, c;
	struct diag d;

	diag_init(&d);
	base(&o, 5000, 7);
	CHECK(haystack_build(&o, &a, &d) == ERR_OK);
	CHECK(haystack_build(&o, &b, &d) == ERR_OK);
	o.seed = 8;
	CHECK(haystack_build(&o, &c, &d) == ERR_OK);
	CHECK(a.document && b.document && c.document);
	if (a.document && b.document && c.document) {
		CHECK(a.document_len == b.document_len && !memcmp(a.document, b.document, a.document_len));
		CHECK_STR(a.prompt_sha256, b.prompt_sha256);
		CHECK(strcmp(a.prompt_sha256, c.prompt_sha256) != 0);
	}
	haystack_release(&a);
	haystack_release(&b);
	haystack_release(&c);
	haystack_release(NULL);
}

static void expect_input_error(struct haystack_opts *o, const char *want)
{
	struct haystack h;
	struct diag d;

	diag_init(&d);
	CHECK(haystack_build(o, &h, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, want) != NULL);
	if (!strstr(d.msg, want))
		fprintf(stderr, "message: %s (wanted '%s')\n", d.msg, want);
	CHECK(h.document == NULL && h.messages == NULL);
	haystack_release(&h);
}

static void test_errors(void)
{
	struct haystack_opts o;

	base(&o, 10, 1);
	expect_input_error(&o, "too small");
	base(&o, 4000, 1);
	o.depths[0] = 10, o.depths[1] = 10, o.ndepths = 2;
	expect_input_error(&o, "given twice");
	base(&o, 4000, 1);
	o.depths[0] = 101, o.ndepths = 1;
	expect_input_error(&o, "outside 0..100");
	base(&o, 250, 1);
	o.needles = 16;
	expect_input_error(&o, "more needles than the document can hold");
	base(&o, 4000, 1);
	o.filler = "poetry";
	expect_input_error(&o, "unknown filler 'poetry'");
	base(&o, 4000, 1);
	o.ask = 5;
	expect_input_error(&o, "ask '5'");
	base(&o, 4000, 1);
	o.needles = 2;
	o.depths[0] = 10, o.ndepths = 1;
	expect_input_error(&o, "2 needles but 1 depths");
}

int main(void)
{
	struct diag d;

	diag_init(&d);
	if (tok_load(t_fixture("hf/qwen3/tokenizer.json"), &tk, &d) || tpl_load("qwen3", &tp, &d)) {
		fprintf(stderr, "cannot set up: %s\n", d.msg);
		return 1;
	}
	T_RUN(test_errors);
	T_RUN(test_deterministic);
	T_RUN(test_options);
	T_RUN(test_sweep_small);
	tok_free(tk);
	tpl_free(tp);
	return T_DONE();
}
