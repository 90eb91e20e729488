/*
 * scan_ds_split2 (DeepSeek V3's digits and CJK Splits in one pass) against
 * the two Splits run one after the other as tok_pre runs them: scan_find
 * of \p{N}{1,3} over the text, then of the CJK class over each gap. The
 * pieces (matches of either and the spans between) must be the same, in
 * order, on hand-picked texts, on every BMP code point (shuffled among
 * ASCII digits, letters and CJK, so that each meets every neighbour kind)
 * and on the bench corpora when a bench run has left them in build/bench;
 * and a run of ideographs (kind 3) must be one match of the third Split.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "tok/tok_scan.h"
#include "base/utf8.h"
#include "t.h"

static struct scan_tab *tab;

/* Appends piece [a, b) as "a-b " to out. */
static void piece(struct buf *out, size_t a, size_t b)
{
	buf_printf(out, "%zu-%zu ", a, b);
}

/* The Splits one after the other (Isolated: matches and gaps are pieces). */
static void two_passes(const char *s, size_t n, struct buf *out)
{
	size_t prev = 0, ms, me, at;

	for (;;) {
		int more = scan_find(SCAN_DIGITS3, tab, s, n, prev, &ms, &me);
		size_t end = more ? ms : n, cs, ce;

		/* the gap [prev, end) through the CJK Split */
		for (at = prev; at < end && scan_find(SCAN_CJK, tab, s + prev, end - prev,
						      at - prev, &cs, &ce); at = prev + ce) {
			if (prev + cs != at)
				piece(out, at, prev + cs);
			piece(out, prev + cs, prev + ce);
		}
		if (at < end)
			piece(out, at, end);
		if (!more)
			break;
		piece(out, ms, me);
		prev = me;
	}
}

static void one_pass(const char *s, size_t n, struct buf *out)
{
	size_t prev = 0, ms, me;
	int kind;

	while ((kind = scan_ds_split2(tab, s, n, prev, &ms, &me))) {
		size_t a, z;

		CHECK(kind >= 1 && kind <= 3);
		/* a run of ideographs is one match of the third pattern, which
		 * chain_ds counts whole */
		if (kind == 3)
			CHECK(scan_find(SCAN_DS_MAIN, tab, s + ms, me - ms, 0, &a, &z) && a == 0 &&
			      z == me - ms);
		if (prev != ms)
			piece(out, prev, ms);
		piece(out, ms, me);
		prev = me;
	}
	if (prev != n)
		piece(out, prev, n);
}

static int same(const char *s, size_t n)
{
	struct buf a, b;
	int ok;

	buf_init(&a, BUF_MAX_DEFAULT);
	buf_init(&b, BUF_MAX_DEFAULT);
	two_passes(s, n, &a);
	one_pass(s, n, &b);
	ok = a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
	if (!ok)
		fprintf(stderr, "  pieces differ on %zu bytes\n", n);
	buf_release(&a);
	buf_release(&b);
	return ok;
}

static void test_texts(void)
{
	static const char *const texts[] = {
		"", "1", "12345", "a1b22c333d4444", "x 7:30, Channel 5 \n",
		"\xe4\xb8\xad\xe6\x96\x87" "123" "\xe6\x97\xa5\xe6\x9c\xac", /* 中文123日本 */
		"\xe3\x82\xab\xe3\x83\xbc\xe3\x83\xbb\xe3\x82\xa2",       /* カー・ア */
		"\xef\xbc\x91\xef\xbc\x92\xef\xbc\x93\xef\xbc\x94",       /* fullwidth 1234 */
		"\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4 \xe0\xa5\xa7\xe0\xa5\xa8", /* Arabic-Indic, Devanagari */
		"\xe3\x80\x82\xe3\x80\x87\xe4\xb8\x80\xe9\xbe\xa5\xe9\xbe\xa6", /* 。〇一龥龦 */
		"caf\xc3\xa9 \xf0\x9f\x98\x80 \xf0\x9d\x9f\x8e\xf0\x9d\x9f\x8f 9", /* 😀 𝟎𝟏 */
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		CHECK(same(texts[i], strlen(texts[i])));
}

/* Every BMP code point but the surrogates, shuffled, each followed by one
 * of: nothing, an ASCII digit, a letter, a CJK character. */
static void test_bmp(void)
{
	static const char *const after[] = {"", "7", "q", "\xe4\xb8\xad"};
	uint32_t *cps = mem_alloc(0x10000 * sizeof(*cps)), n = 0, cp, i;
	struct buf text;
	char u[4];

	CHECK(cps != NULL);
	if (!cps)
		return;
	for (cp = 1; cp < 0x10000; cp++)
		if (cp < 0xD800 || cp > 0xDFFF)
			cps[n++] = cp;
	srand(14);
	for (i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % (i + 1), x = cps[i];

		cps[i] = cps[j], cps[j] = x;
	}
	buf_init(&text, BUF_MAX_DEFAULT);
	for (i = 0; i < n; i++) {
		buf_append(&text, u, utf8_encode(cps[i], u));
		buf_printf(&text, "%s", after[(unsigned)rand() % 4]);
	}
	CHECK(same(text.data, text.len));
	buf_release(&text);
	mem_free(cps);
}

static void test_corpora(void)
{
	static const char *const files[] = {"build/bench/english.txt", "build/bench/chinese.txt",
					    "/usr/share/games/fortunes/chinese"};
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct buf b;
		struct diag d;

		diag_init(&d);
		buf_init(&b, BUF_MAX_DEFAULT);
		if (!io_read_file(files[i], &b, &d))
			CHECK(same(b.data, b.len));
		buf_release(&b);
	}
}

int main(void)
{
	if (scan_tab_new(&tab)) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	T_RUN(test_texts);
	T_RUN(test_bmp);
	T_RUN(test_corpora);
	scan_tab_free(tab);
	return T_DONE();
}
