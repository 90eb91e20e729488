/* Unit tests of the tokenizer internals: the JSON scanner,
 * BPE behaviours pinned by small fixtures (docs/tokenizers.md "BPE merges", verified
 * against the oracle by tests/tok/compare.js), every truncation of a
 * tokenizer.json failing cleanly, and long runs staying fast. Run from the
 * repository root (fixtures/tokenizers). Also built with ASan/UBSan. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "base/jscan.h"
#include "base/mem.h"
#include "tok/tok.h"
#include "tok/tok_bpe.h"
#include "tok/tok_hf.h"
#include "t.h"

static void test_jscan(void)
{
	const char *doc = "{\"a\\u00e9\\ud83d\\ude42\\n\": [1, 2.5e3, true, null, {\"x\": \"\"}],\n \"b\": 42}";
	struct jscan j;
	struct buf scratch;
	struct diag d;
	const char *s;
	size_t n, start;
	unsigned long long v;

	buf_init(&scratch, 1 << 20);
	diag_init(&d);
	jscan_init(&j, doc, strlen(doc), "doc.json");
	CHECK_EQ_LONG(jscan_open(&j, '{', &d), 1);
	CHECK(!jscan_string(&j, &scratch, &s, &n, &d));
	CHECK(n == 8 && !memcmp(s, "a\xc3\xa9\xf0\x9f\x99\x82\n", 8));
	CHECK(!jscan_expect(&j, ':', &d));
	CHECK(!jscan_skip(&j, &start, &d));
	CHECK(doc[start] == '[' && doc[j.pos - 1] == ']');
	CHECK_EQ_LONG(jscan_next(&j, '}', &d), 1);
	CHECK(!jscan_string(&j, &scratch, &s, &n, &d));
	CHECK(n == 1 && s[0] == 'b' && s >= doc && s < doc + strlen(doc)); /* a view */
	CHECK(!jscan_expect(&j, ':', &d));
	CHECK(!jscan_uint(&j, 100, &v, &d) && v == 42);
	CHECK_EQ_LONG(jscan_next(&j, '}', &d), 0);
	CHECK_EQ_LONG(jscan_peek(&j), -1);

	jscan_init(&j, "{\n  \"k\": [1,, 2]}", 17, "bad.json");
	CHECK(jscan_skip(&j, NULL, &d) == ERR_INPUT);
	CHECK_STR(d.msg, "cannot parse 'bad.json': line 2, column 11 (byte 12): expected a value");
	diag_init(&d);
	jscan_init(&j, "\"\\ud800x\"", 9, "s.json");
	CHECK(jscan_string(&j, &scratch, &s, &n, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "lone high surrogate") != NULL);
	diag_init(&d);
	jscan_init(&j, "300", 3, "n.json");
	CHECK(jscan_uint(&j, 255, &v, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "out of range") != NULL);
	buf_release(&scratch);
}

static void test_bytelevel_table(void)
{
	unsigned char out[8];

	/* space -> U+0120, LF -> U+010A, 0x7F -> U+0121, 0xAD -> U+0143 */
	CHECK_EQ_LONG(bpe_bytelevel_decode("\xc4\xa0\xc4\x8a", 4, out), 2);
	CHECK(out[0] == ' ' && out[1] == '\n');
	CHECK_EQ_LONG(bpe_bytelevel_decode("\xc4\xa1\xc5\x83", 4, out), 2);
	CHECK(out[0] == 0x7F && out[1] == 0xAD);
	CHECK_EQ_LONG(bpe_bytelevel_decode("a\xc3\xbf", 3, out), 2);
	CHECK(out[0] == 'a' && out[1] == 0xFF);
	CHECK_EQ_LONG(bpe_bytelevel_decode("\xe2\x96\x81", 3, out), -1); /* U+2581 is not in the table */
}

static size_t count(const struct tok *t, const char *s)
{
	struct diag d;
	size_t n = 0;

	diag_init(&d);
	CHECK(!tok_count(t, s, strlen(s), &n, &d));
	return n;
}

static struct tok *load(const char *path)
{
	struct diag d;
	struct tok *t = NULL;

	diag_init(&d);
	if (tok_load(path, &t, &d))
		fprintf(stderr, "%s\n", d.msg);
	CHECK(t != NULL);
	return t;
}

/* Behaviours docs/tokenizers.md "BPE merges" describes as verified against HF. */
static void test_bpe_rules(void)
{
	struct tok *t = load(t_fixture("tokenizers/bpe_duplicate_merges.json"));

	if (t) /* merges [a b], [b a], [a b]: the last [a b] ranks below [b a] */
		CHECK_EQ_LONG(count(t, "aba"), 2);
	tok_free(t);
	t = load(t_fixture("tokenizers/bpe_ignore_merges.json"));
	if (t) { /* vocab has abc, merges only b c */
		CHECK_EQ_LONG(count(t, "abc"), 1);
		CHECK_EQ_LONG(count(t, "abcabc"), 4); /* not whole: a bc a bc */
	}
	tok_free(t);
	t = load(t_fixture("tokenizers/bpe_no_ignore_merges.json"));
	if (t) { /* abc is in the vocab but not whole: never counted as 1 */
		CHECK_EQ_LONG(count(t, "abc"), 2);
		CHECK_EQ_LONG(count(t, "bc"), 1);
		CHECK_EQ_LONG(count(t, "abc"), 2);
	}
	tok_free(t);
	t = load(t_fixture("tokenizers/unknown_dropped.json"));
	if (t) /* vocab {a, b, ...}, no unk: "abxab" drops x */
		CHECK_EQ_LONG(count(t, "abxab"), 2);
	tok_free(t);
	t = load(t_fixture("tokenizers/bpe_ties.json"));
	if (t) { /* merges a+a, aa+a, aa+aa; a+a leftmost first */
		CHECK_EQ_LONG(count(t, "aaa"), 1);
		CHECK_EQ_LONG(count(t, "aaaaa"), 2); /* aa aa a -> aa aaa */
	}
	tok_free(t);
}

/* Every prefix of a tokenizer.json is refused with a message, no leak. */
static void test_truncations(void)
{
	struct buf raw;
	struct diag d;
	size_t cut, step;

	buf_init(&raw, BUF_MAX_DEFAULT);
	diag_init(&d);
	CHECK(!io_read_file(t_fixture("tokenizers/added_tokens.json"), &raw, &d));
	step = raw.len / 400 + 1;
	for (cut = 0; cut < raw.len; cut += step) {
		struct tok_hf *h = NULL;
		char *copy = mem_strndup(raw.data, cut);
		enum err e;

		diag_init(&d);
		e = tok_hf_load("t.json", copy, cut, &h, &d);
		if (cut + 2 < raw.len) { /* the last bytes may be whitespace */
			CHECK(e == ERR_INPUT && h == NULL);
			CHECK(strncmp(d.msg, "cannot parse 't.json': line ", 28) == 0);
		}
		tok_hf_free(h);
		mem_free(copy);
	}
	buf_release(&raw);
}

/* A 1 MB run of one character is linear, not quadratic, in BPE. */
static void test_long_runs(void)
{
	struct tok *t = load(t_fixture("tokenizers/bpe_ties.json"));
	size_t n = 1 << 20, got = 0;
	char *s = mem_alloc(n + 1);
	struct diag d;
	clock_t c0;

	if (!t || !s)
		goto out;
	memset(s, 'a', n);
	s[n] = '\0';
	c0 = clock();
	diag_init(&d);
	CHECK(!tok_count(t, s, n, &got, &d));
	/* merges a+a, aa+a, aa+aa: 2^20 a's become 2^18 aaaa */
	CHECK_EQ_LONG(got, n / 4);
	CHECK((double)(clock() - c0) / CLOCKS_PER_SEC < 20.0);
out:
	mem_free(s);
	tok_free(t);
}

static void test_ids_and_specials(void)
{
	struct tok *t = load(t_fixture("tokenizers/bytelevel_gpt2.json"));
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, plain;
	struct diag d;

	diag_init(&d);
	if (!t)
		return;
	CHECK(!tok_encode(t, "ab<s>ab", 7, 0, &ids, &n, &cap, &d));
	plain = n;
	CHECK_EQ_LONG(plain, count(t, "ab<s>ab"));
	n = 0;
	CHECK(!tok_encode(t, "ab<s>ab", 7, 1, &ids, &n, &cap, &d));
	CHECK_EQ_LONG(n, plain + 3); /* template: <s> $A </s>, </s> has two ids */
	CHECK_STR(tok_kind(t), "hf-bpe");
	CHECK_EQ_LONG(strlen(tok_sha256(t)), 64);
	mem_free(ids);
	tok_free(t);
}

/* A text whose every character is unknown and dropped encodes to no ids. */
static void test_all_dropped(void)
{
	struct tok *t = load(t_fixture("tokenizers/unknown_dropped.json"));
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0;
	struct diag d;

	diag_init(&d);
	if (!t)
		return;
	CHECK(!tok_encode(t, "xyz", 3, 0, &ids, &n, &cap, &d));
	CHECK_EQ_LONG(n, 0);
	CHECK_EQ_LONG(count(t, "xyz"), 0);
	mem_free(ids);
	tok_free(t);
}

int main(void)
{
	T_RUN(test_all_dropped);
	T_RUN(test_jscan);
	T_RUN(test_bytelevel_table);
	T_RUN(test_bpe_rules);
	T_RUN(test_truncations);
	T_RUN(test_long_runs);
	T_RUN(test_ids_and_specials);
	return T_DONE();
}
