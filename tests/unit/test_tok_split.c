/*
 * Counting in parts (harness/tok/tok_split.h): on the four real tokenizers, a
 * text cut at every boundary tok_split_next finds counts, part by part, to
 * exactly the count of the whole; tok_split_count on 2..8 threads agrees;
 * tokenizers with a stage the boundaries are not proven for are refused.
 * Texts: natural Chinese (fortunes-zh, from tests/setup.sh) and a mixed
 * text of English, code, numbers, CJK and odd spacing. Run from the
 * repository root; also under ASan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/io.h"
#include "tok/tok_hf.h"
#include "tok/tok_split.h"
#include "t.h"

#define REAL "hf/%s/tokenizer.json" /* t_fixture names */
#define TEXT_MAX ((size_t)256 << 10)

static const char *const REALS[] = {"deepseek_v3", "qwen3", "llama3", "gpt4o"};

static const char mixed_line[] =
	"It's 2024: the model's ids (1234567) don't change.\n"
	"int main(void) { return x->y[3] /* \xe4\xb8\xad */; }\n"
	"  indented line\twith tabs\n\n\nTriple newline above\r\n"
	"\xe4\xb8\xad\xe6\x96\x87\xe5\x8f\xa5\xe5\xad\x90\xe3\x80\x82\n"
	"\xe7\xac\xac\xe4\xba\x8c\xe8\xa1\x8c\xef\xbc\x8c\xe6\x9c\x89 ASCII \xe5\x92\x8c 42\xe3\x80\x82\n"
	"!\nword after bang\n?\nQuestion\n \nspace before newline\n"
	"caf\xc3\xa9 na\xc3\xafve \xce\x95\xce\xbb\xce\xbb\xce\xac\xce\xb4\xce\xb1\n"
	"URL http://x.org/a/b\nslash/\nend\n\xe3\x80\x80\n\xe5\x85\xa8\xe8\xa7\x92\n";

static struct tok_hf *load(const char *path)
{
	struct tok_hf *h = NULL;
	struct buf b;
	struct diag d;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	if (io_read_file(path, &b, &d) || tok_hf_load(path, b.data, b.len, &h, &d))
		fprintf(stderr, "  cannot load '%s': %s\n", path, d.msg);
	buf_release(&b);
	return h;
}

static size_t count(const struct tok_hf *h, const char *s, size_t n, int parts)
{
	struct diag d;
	size_t c = 0;

	diag_init(&d);
	CHECK(tok_split_count(h, s, n, parts, &c, &d) == ERR_OK);
	return c;
}

/* The text cut at every boundary: the parts' counts add up to the whole's. */
static void check_text(const struct tok_hf *h, const char *name, const char *s, size_t n)
{
	size_t whole = count(h, s, n, 1), sum = 0, at = 0, p, cuts = 0;
	int parts;

	do { /* at < n: the next boundary after it */
		p = tok_split_next(s, n, at + 1);
		sum += count(h, s + at, p - at, 1);
		cuts += p < n;
		at = p;
	} while (at < n);
	if (sum != whole)
		fprintf(stderr, "  %s: %zu cuts: parts add to %zu, whole %zu\n", name, cuts, sum, whole);
	CHECK(sum == whole);
	CHECK(cuts > 20);
	for (parts = 2; parts <= TOK_SPLIT_THREADS; parts += 3)
		CHECK(count(h, s, n, parts) == whole);
}

static void test_real(void)
{
	static const char *const zh[] = {"/usr/share/games/fortunes/chinese",
					 "/usr/share/games/fortunes/tang300"};
	struct buf mixed, text;
	struct diag d;
	size_t i, j;

	buf_init(&mixed, BUF_MAX_DEFAULT);
	buf_init(&text, BUF_MAX_DEFAULT);
	for (i = 0; i < 200; i++)
		buf_append(&mixed, mixed_line, sizeof(mixed_line) - 1);
	for (i = 0; i < sizeof(REALS) / sizeof(REALS[0]); i++) {
		char name[256];
		struct tok_hf *h;

		snprintf(name, sizeof(name), REAL, REALS[i]);
		h = load(t_fixture(name));
		CHECK(h != NULL);
		if (!h)
			continue;
		CHECK(tok_split_ok(h));
		check_text(h, "mixed", mixed.data, mixed.len);
		for (j = 0; j < sizeof(zh) / sizeof(zh[0]); j++) {
			diag_init(&d);
			buf_reset(&text);
			CHECK(io_read_file(zh[j], &text, &d) == ERR_OK);
			while (text.len > TEXT_MAX || (text.len && text.data[text.len - 1] != '\n'))
				text.len--; /* whole lines: valid UTF-8 */
			check_text(h, zh[j], text.data, text.len);
		}
		tok_hf_free(h);
	}
	buf_release(&mixed);
	buf_release(&text);
}

/* Stages the boundaries are not proven for: Prepend/Replace normalizers,
 * Metaspace, Split by PCRE2. */
static void test_refused(void)
{
	static const char *const fix[] = {"prepend_replace", "metaspace_always",
					  "split_Isolated", "bytelevel_gpt2"};
	size_t i;

	for (i = 0; i < sizeof(fix) / sizeof(fix[0]); i++) {
		char name[256];
		struct tok_hf *h;

		snprintf(name, sizeof(name), "tokenizers/%s.json", fix[i]);
		h = load(t_fixture(name));
		CHECK(h != NULL);
		if (h)
			CHECK(!tok_split_ok(h));
		tok_hf_free(h);
	}
}

/* Boundaries: after '\n', before a letter or ideograph, not after a space. */
static void test_boundaries(void)
{
	const char *s = "a\nb \nc\n\nd\n1\n\xe4\xb8\xad\n\xe3\x80\x80\ne";

	CHECK_EQ_LONG(tok_split_next(s, strlen(s), 0), 2);     /* a\n|b */
	CHECK_EQ_LONG(tok_split_next(s, strlen(s), 3), 12);    /* 1\n|中 */
	CHECK_EQ_LONG(tok_split_next(s, strlen(s), 13), strlen(s)); /* not after U+3000 */
}

int main(void)
{
	T_RUN(test_boundaries);
	T_RUN(test_refused);
	T_RUN(test_real);
	return T_DONE();
}
