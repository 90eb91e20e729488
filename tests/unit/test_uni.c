/*
 * Unit tests of uni: pattern rewriting, NFC, predicates, decoding.
 *
 * Run without arguments it checks fixed cases. With a mode argument it is the
 * C side of tests/cli/uni_classes.sh, which compares it with the HF oracle:
 *   test_uni classes              every class, as the rewritten pattern
 *                                 matches it under PCRE2 (both forms, which
 *                                 must agree) and the rust_* predicates, as
 *                                 "NAME lo-hi ..." lines
 *   test_uni split PAT... <jsonl  each JSON string split by the rewritten
 *                                 patterns in sequence (Split, Isolated), one
 *                                 JSON array of pieces per line
 *   test_uni nfc <jsonl           uni_nfc of each JSON string, one per line
 *   test_uni bench FILE PAT...    MB/s of that split over FILE (not a test)
 *   test_uni bench-nfc FILE       MB/s of uni_nfc over FILE (not a test)
 *   test_uni oom                  the entry points under NEEDLE_FAIL_ALLOC
 *                                 (tests/cli/uni_oom.sh)
 * UNI_FORM=ranges in the environment selects uni_rewrite_pattern_ranges for
 * split and bench, UNI_FORM=raw no rewrite at all (to see checks fail).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cjson/cJSON.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "base/utf8.h"
#include "tok/uni.h"
#include "tok/uni_data.h"
#include "t.h"

/* Which rewrite compile() uses: 0 uni_rewrite_pattern, 1 the _ranges form,
 * 2 none (the raw pattern, to show that the checks can fail). */
static int form;

/* Compiles the rewrite of `pat` (with JIT); NULL if either step fails. */
static pcre2_code *compile(const char *pat, uint32_t extra)
{
	struct buf b;
	struct diag d;
	pcre2_code *re = NULL;
	int en;
	PCRE2_SIZE off;

	buf_init(&b, BUF_MAX_DEFAULT);
	diag_init(&d);
	if (form == 2 ? buf_puts(&b, pat) == ERR_OK :
	    (form ? uni_rewrite_pattern_ranges : uni_rewrite_pattern)(
		    pat, strlen(pat), &b, &d) == ERR_OK)
		re = pcre2_compile((PCRE2_SPTR)b.data, b.len,
				   PCRE2_UTF | PCRE2_UCP | extra, &en, &off, NULL);
	buf_release(&b);
	if (re)
		pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	return re;
}

/* 1 if the rewrite of `pat` matches all of `subj`, 0 if not, -1 if the
 * pattern is refused. */
static int full_match(const char *pat, const char *subj)
{
	pcre2_code *re = compile(pat, PCRE2_ANCHORED | PCRE2_ENDANCHORED);
	pcre2_match_data *md;
	int rc;

	if (!re)
		return -1;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	rc = pcre2_match(re, (PCRE2_SPTR)subj, strlen(subj), 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc > 0;
}

static enum err rewrite(const char *pat, struct buf *b, struct diag *d)
{
	buf_reset(b);
	diag_init(d);
	return uni_rewrite_pattern(pat, strlen(pat), b, d);
}

static void test_space(void)
{
	CHECK(full_match("\\s", " ") == 1);
	CHECK(full_match("\\s", "\xC2\x85") == 1);      /* U+0085 */
	CHECK(full_match("\\s", "\xC2\xA0") == 1);      /* U+00A0 */
	CHECK(full_match("\\s", "\xE1\xA0\x8E") == 0);  /* U+180E */
	CHECK(full_match("\\s", "\xE2\x80\x8B") == 0);  /* U+200B */
	CHECK(full_match("\\s", "\x1C") == 0);
	CHECK(full_match("\\S", "\xE1\xA0\x8E") == 1);
	CHECK(full_match("[\\s]", "\xE3\x80\x80") == 1); /* U+3000 */
	CHECK(full_match("[^\\s]", "\xE1\xA0\x8E") == 1);
	CHECK(full_match("[^\\S]", "\xE1\xA0\x8E") == 0);
	CHECK(full_match("[\\Sa]", "\xE3\x80\x80") == 0);
	CHECK(full_match("\\s+(?!\\S)", "  ") == 1);
	CHECK(uni_is_space(0x3000) && uni_is_space(0x85) && uni_is_space('\t'));
	CHECK(!uni_is_space(0x180E) && !uni_is_space(0x200B) && !uni_is_space(0x1C));
}

static void test_properties(void)
{
	CHECK(full_match("\\p{L}", "\xF0\x9E\x93\x90") == 1);   /* U+1E4D0 15.0 */
	CHECK(full_match("\\p{L}", "\xF0\x96\x84\x80") == 1);   /* U+16100 16.0 */
	CHECK(full_match("\\p{N}", "\xF0\x9C\xB3\xB0") == 1);   /* U+1CCF0 16.0 */
	CHECK(full_match("\\p{L}", "\xF0\x90\xA5\x80") == 0);   /* U+10940 17.0 */
	CHECK(full_match("\\p{Ll}", "\xCA\x95") == 1);          /* U+0295 */
	CHECK(full_match("\\p{M}", "\xE0\xA2\x97") == 1);       /* U+0897 */
	CHECK(full_match("\\P{L}", "a") == 0);
	CHECK(full_match("\\p{^L}", "1") == 1);
	CHECK(full_match("\\p{Letter}", "a") == 1);
	CHECK(full_match("\\p{lowercase_letter}", "a") == 1);
	CHECK(full_match("[^\\r\\n\\p{L}\\p{N}]", "!") == 1);
	CHECK(full_match("[^\\r\\n\\p{L}\\p{N}]", "\r") == 0);
	CHECK(full_match("[^\r\n\\p{L}\\p{P}\\p{S}]", "\n") == 0); /* literal LF */
	CHECK(full_match("[^\r\n\\p{L}\\p{P}\\p{S}]", "1") == 1);
	CHECK(full_match("[\\p{L}\\p{M}]+", "e\xCC\x81") == 1);
	CHECK(full_match("\\d", "\xD9\xA3") == 1);               /* U+0663 */
	CHECK(full_match("\\w", "_") == 1);
	CHECK(full_match("\\h", "F") == 1);                      /* onig: hex */
	CHECK(full_match("\\h", " ") == 0);
}

static void test_syntax(void)
{
	CHECK(full_match("[\xE4\xB8\x80-\xE9\xBE\xA5]+", "\xE4\xB8\xAD") == 1);
	CHECK(full_match("[\xE4\xB8\x80-\xE9\xBE\xA5]", "\xE9\xBE\xA6") == 0);
	CHECK(full_match("(?i:'s|'t)", "'\xC5\xBF") == 1);        /* 'ſ */
	CHECK(full_match("(?i:'k)", "'\xE2\x84\xAA") == 1);       /* Kelvin */
	CHECK(full_match("(?i:'s)", "'S") == 1);
	CHECK(full_match("a(?i)b|c", "aC") == 1);                 /* Ruby scope */
	CHECK(full_match("a(?i)b|c", "c") == 0);
	CHECK(full_match("a{,2}", "aa") == 1);
	CHECK(full_match("a{,2}", "a{,2}") == 0);
	CHECK(full_match("a{x", "a{x") == 1);
	CHECK(full_match("\\p{N}{1,3}", "123") == 1);
	CHECK(full_match(".", "\n") == 0);
	CHECK(full_match(".", "\r") == 1);
	CHECK(full_match("a$\\n", "a\n") == 1);
	CHECK(full_match("a$\\r", "a\r") == 0);
	CHECK(full_match("\\n^a", "\na") == 1);
	CHECK(full_match("\\u0041\\x42\\x{43}\\v", "ABC\x0B") == 1);
	CHECK(full_match("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+",
			 "-abc") == 1);
	CHECK(full_match("[]a]", "]") == 1);
	CHECK(full_match("[a-]", "-") == 1);
	CHECK(full_match("(?<x>a)(?#note)(?:b)(?=c)c", "abc") == 1);
	CHECK(full_match("\\s++$", "  ") == 1);
	CHECK(full_match("a\\Z\\n", "a\n") == 1);
	CHECK(full_match("a\\Z\\r", "a\r") == 0);
	CHECK(full_match("[\\w-]+", "a-b") == 1);
	CHECK(full_match("(?i:[a-z]+)", "AbK\xE2\x84\xAA\xC5\xBF") == 1);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"\\b", "\\1", "(a)\\1", "\\p{Han}", "[[:alpha:]]", "[a&&b]",
		"[a[b]]", "(?m).", "(?x)a", "a{1,2}+", "(?i:\\p{Lu})", "(?i)[a\\s]",
		"(?i)[a-\xC3\xA9]",
		"\\R", "\\X", "\\K", "\\k<x>", "(?'x'a)", "\\p{L&}",
		"[\\w-z]", "(*FAIL)", "(?i:\xC3\xA9)", "\\Q.\\E", "(?s).",
	};
	struct buf b;
	struct diag d;
	size_t i;

	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		enum err e = rewrite(bad[i], &b, &d);

		CHECK_EQ_LONG(e, ERR_UNSUPPORTED);
		CHECK(b.len == 0);
		CHECK(strstr(d.msg, "unsupported") != NULL);
	}
	CHECK_EQ_LONG(rewrite("(a", &b, &d), ERR_INPUT);
	CHECK_EQ_LONG(rewrite("[a", &b, &d), ERR_INPUT);
	CHECK_EQ_LONG(rewrite("a)", &b, &d), ERR_INPUT);
	CHECK_EQ_LONG(rewrite("\\x{110000}", &b, &d), ERR_INPUT);
	buf_release(&b);
}

/* uni_nfc_changed into b, as tok_norm uses it: s itself when nothing
 * changed (then b must be empty); 0 on failure. */
static int nfc_lazy(const char *s, size_t n, struct buf *b)
{
	int changed = -1;

	if (uni_nfc_changed(s, n, b, &changed))
		return 0;
	if (changed)
		return 1;
	return b->len == 0 && !buf_append(b, s, n);
}

static void check_nfc(const char *in, const char *want)
{
	struct buf b;

	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(uni_nfc(in, strlen(in), &b) == ERR_OK);
	CHECK_STR(b.data, want);
	buf_reset(&b);
	CHECK(nfc_lazy(in, strlen(in), &b));
	CHECK_STR(b.data, want);
	buf_release(&b);
}

static void test_nfc(void)
{
	check_nfc("", "");
	check_nfc("plain ascii", "plain ascii");
	check_nfc("e\xCC\x81", "\xC3\xA9");
	check_nfc("xe\xCC\x81y", "x\xC3\xA9y");
	check_nfc("\xCC\x81", "\xCC\x81");                        /* lone mark */
	check_nfc("a\xCC\xA3\xCC\x82", "\xE1\xBA\xAD");            /* ậ */
	check_nfc("a\xCC\x82\xCC\xA3", "\xE1\xBA\xAD");            /* reordered */
	check_nfc("\xE2\x84\xAB", "\xC3\x85");                    /* Å sign */
	check_nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x81"); /* 각 */
	check_nfc("\xEA\xB0\x80\xE1\x86\xA8", "\xEA\xB0\x81");
	check_nfc("\xE0\xA5\x98", "\xE0\xA4\x95\xE0\xA4\xBC");    /* excluded */
	/* U+11935 U+11930 composes to U+11938 only since Unicode 13 */
	check_nfc("\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0",
		  "\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0");
	/* 中 and 𜳰 (16.0) are untouched */
	check_nfc("\xE4\xB8\xAD\xF0\x9C\xB3\xB0", "\xE4\xB8\xAD\xF0\x9C\xB3\xB0");
	/* a mark after CJK stays (uni_nfc skips U+4000..U+9FFF unchecked) */
	check_nfc("\xE4\xB8\xAD\xCC\x81x", "\xE4\xB8\xAD\xCC\x81x");
	/* unsafe stretches NFC keeps, then one it changes (uni_nfc_changed
	 * appends nothing until that one) */
	check_nfc("\xE3\x82\xB4x \xCC\x81 e\xCC\x81!", "\xE3\x82\xB4x \xCC\x81 \xC3\xA9!");
	check_nfc("\xE3\x82\xB4\xCC\x81", "\xE3\x82\xB4\xCC\x81");
	/* 16-byte blocks: a fullwidth comma (looked up, safe) then U+F900 in
	 * the same block, which NFC maps to U+8C48; the comma alone after */
	check_nfc("\xE4\xB8\xAD\xEF\xBC\x8C\xE4\xB8\xAD\xEF\xA4\x80\xE4\xB8\xAD\xE4\xB8\xAD"
		  "\xE4\xB8\xAD\xEF\xBC\x8C\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD",
		  "\xE4\xB8\xAD\xEF\xBC\x8C\xE4\xB8\xAD\xE8\xB1\x88\xE4\xB8\xAD\xE4\xB8\xAD"
		  "\xE4\xB8\xAD\xEF\xBC\x8C\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD");
}

/* uni_nfc passes U+4000..U+9FFF without a table lookup: no character there
 * may change under NFC or change a neighbour. */
static void test_nfc_cjk_safe(void)
{
	uint32_t cp;
	size_t bad = 0;

	for (cp = 0x4000; cp <= 0x9FFF; cp++)
		bad += uni_in_ranges(nfc_unsafe, nfc_unsafe_n, cp) != 0;
	CHECK_EQ_LONG(bad, 0);
}

static void test_tables(void)
{
	static const char *const names[UNI_CLASS_COUNT] = {
		"L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N",
		"Nd", "Nl", "No", "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
		"S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp", "C", "Cc",
		"Cf", "Co", "Cn", "onig_space", "onig_digit", "onig_word",
		"rust_numeric", "rust_word", "rust_space",
	};
	size_t i, k;

	CHECK_EQ_LONG(uni_classes_n, UNI_CLASS_COUNT);
	for (i = 0; i < UNI_CLASS_COUNT; i++) {
		const struct uni_class *c = &uni_classes[i];

		CHECK_STR(c->name, names[i]);
		for (k = 0; k < c->n; k++) {
			CHECK(c->r[k].lo <= c->r[k].hi && c->r[k].hi <= 0x10FFFF);
			CHECK(k == 0 || c->r[k].lo > c->r[k - 1].hi + 1 ||
			      (c->r[k - 1].hi == 0xD7FF && c->r[k].lo == 0xE000));
		}
	}
	CHECK(uni_is_numeric('7') && uni_is_numeric(0x0663) && uni_is_numeric(0x2155));
	CHECK(!uni_is_numeric('a') && !uni_is_numeric(0x180E));
	CHECK(uni_is_word('_') && uni_is_word(0x200D) && uni_is_word(0x0301));
	CHECK(!uni_is_word('-') && !uni_is_word(' '));
}

/* With the PCRE2 tables uni_pcre2.c was made for, the default form spells
 * big classes natively (the fast path); the ranges form never does. */
static void test_forms(void)
{
	char ver[24];
	struct buf b;
	struct diag d;

	buf_init(&b, BUF_MAX_DEFAULT);
	diag_init(&d);
	pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, ver);
	CHECK(uni_rewrite_pattern("\\p{L}", 5, &b, &d) == ERR_OK);
	CHECK((strstr(b.data, "\\p{L}") != NULL) == !strcmp(ver, uni_pcre2_unicode));
	buf_reset(&b);
	CHECK(uni_rewrite_pattern_ranges("\\p{L}\\s", 7, &b, &d) == ERR_OK);
	CHECK(strstr(b.data, "\\p") == NULL);
	CHECK(strstr(b.data, "\\x{180E}") == NULL);
	buf_release(&b);
}

static void test_decode(void)
{
	uint32_t cp;

	CHECK_EQ_LONG(utf8_decode("a", 1, &cp), 1);
	CHECK_EQ_LONG(cp, 'a');
	CHECK_EQ_LONG(utf8_decode("\xC3\xA9", 2, &cp), 2);
	CHECK_EQ_LONG(cp, 0xE9);
	CHECK_EQ_LONG(utf8_decode("\xE4\xB8\xAD", 3, &cp), 3);
	CHECK_EQ_LONG(cp, 0x4E2D);
	CHECK_EQ_LONG(utf8_decode("\xF0\x9F\x98\x80", 4, &cp), 4);
	CHECK_EQ_LONG(cp, 0x1F600);
}

/* ---- modes used by tests/cli/uni_classes.sh -------------------------- */

/* CPU time in ms: steadier than wall time on a shared machine. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int put_utf8(char *b, uint32_t cp)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xC0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xE0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	b[0] = (char)(0xF0 | cp >> 18);
	b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	b[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Prints "name lo-hi ..." for the scalars where `in(cp)` holds. */
static void print_ranges(const char *name, int (*in)(uint32_t, void *),
			 void *arg)
{
	uint32_t cp, start = 0;
	int open = 0;

	printf("%s", name);
	for (cp = 0; cp <= 0x110000; cp++) {
		int y = cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) &&
			in(cp, arg);

		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		if (y && !open) {
			start = cp;
			open = 1;
		} else if (!y && open) {
			printf(" %X-%X", (unsigned)start,
			       (unsigned)(cp == 0xE000 ? 0xD7FF : cp - 1));
			open = 0;
		}
	}
	printf("\n");
}

/* Appends " lo-hi" for every run of scalars that `pat++` matches in
 * `all` (every scalar value in order, UTF-8): the runs of the class. */
static int class_runs(const char *pat, const struct buf *all, struct buf *out)
{
	char wrapped[48];
	pcre2_code *re;
	pcre2_match_data *md;
	PCRE2_SIZE pos = 0, *ov;
	uint32_t lo, hi;
	int rc;

	snprintf(wrapped, sizeof wrapped, "%s++", pat);
	re = compile(wrapped, 0);
	if (!re)
		return -1;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	while ((rc = pcre2_match(re, (PCRE2_SPTR)all->data, all->len, pos,
				 pos ? PCRE2_NO_UTF_CHECK : 0, md, NULL)) > 0) {
		ov = pcre2_get_ovector_pointer(md);
		utf8_decode(all->data + ov[0], all->len - ov[0], &lo);
		for (pos = ov[1] - 1; (all->data[pos] & 0xC0) == 0x80; pos--)
			;
		utf8_decode(all->data + pos, all->len - pos, &hi);
		buf_printf(out, " %X-%X", (unsigned)lo, (unsigned)hi);
		pos = ov[1];
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	if (rc != PCRE2_ERROR_NOMATCH) {
		fprintf(stderr, "match error %d for '%s'\n", rc, wrapped);
		return -1;
	}
	return 0;
}

static int probe_space(uint32_t cp, void *arg)
{
	(void)arg;
	return uni_is_space(cp);
}

static int probe_word(uint32_t cp, void *arg)
{
	(void)arg;
	return uni_is_word(cp);
}

static int probe_numeric(uint32_t cp, void *arg)
{
	(void)arg;
	return uni_is_numeric(cp);
}

static int mode_classes(void)
{
	static const char *const names[] = {
		"L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N",
		"Nd", "Nl", "No", "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
		"S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp", "C", "Cc",
		"Cf", "Co", "Cn",
	};
	static const char *const esc[][2] = {
		{"\\s", "onig_space"}, {"\\d", "onig_digit"},
		{"\\w", "onig_word"}, {"\\S", "onig_nonspace"},
	};
	const size_t nn = sizeof names / sizeof names[0];
	struct buf all, r[2];
	char pat[32], u[4];
	uint32_t cp;
	size_t i;
	int rc = 0;

	buf_init(&all, BUF_MAX_DEFAULT);
	buf_init(&r[0], BUF_MAX_DEFAULT);
	buf_init(&r[1], BUF_MAX_DEFAULT);
	for (cp = 0; cp <= 0x10FFFF; cp++)
		if (cp < 0xD800 || cp > 0xDFFF)
			buf_append(&all, u, (size_t)put_utf8(u, cp));
	for (i = 0; i < nn + 4 && !rc; i++) {
		if (i < nn)
			snprintf(pat, sizeof pat, "\\p{%s}", names[i]);
		else
			snprintf(pat, sizeof pat, "%s", esc[i - nn][0]);
		for (form = 0; form < 2 && !rc; form++) {
			buf_reset(&r[form]);
			rc = class_runs(pat, &all, &r[form]);
		}
		if (!rc && strcmp(r[0].data, r[1].data)) {
			fprintf(stderr, "the two forms of '%s' disagree\n", pat);
			rc = 1;
		}
		if (!rc)
			printf("%s%s\n", i < nn ? names[i] : esc[i - nn][1], r[0].data);
	}
	form = 0;
	if (!rc) {
		print_ranges("rust_numeric", probe_numeric, NULL);
		print_ranges("rust_word", probe_word, NULL);
		print_ranges("rust_space", probe_space, NULL);
	}
	buf_release(&all);
	buf_release(&r[0]);
	buf_release(&r[1]);
	return rc ? 1 : 0;
}

/* Splits s[0..len) with `re` as HF's Split (Isolated) does, appending the
 * non-empty pieces to `arr`: matches and gaps alternate; an empty match
 * only marks a boundary and the search moves on one character. */
static void split_piece(pcre2_code *re, pcre2_match_data *md, const char *s,
			size_t len, cJSON *next)
{
	size_t pos = 0, last = 0;

	while (pos <= len) {
		PCRE2_SIZE *ov;
		int rc = pcre2_match(re, (PCRE2_SPTR)s, len, pos,
				     PCRE2_NO_UTF_CHECK, md, NULL);
		char *piece;

		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			fprintf(stderr, "match error %d\n", rc);
			exit(1);
		}
		ov = pcre2_get_ovector_pointer(md);
		if (ov[0] > last) {
			piece = mem_strndup(s + last, ov[0] - last);
			cJSON_AddItemToArray(next, cJSON_CreateString(piece));
			mem_free(piece);
		}
		if (ov[1] > ov[0]) {
			piece = mem_strndup(s + ov[0], ov[1] - ov[0]);
			cJSON_AddItemToArray(next, cJSON_CreateString(piece));
			mem_free(piece);
			pos = last = ov[1];
		} else {
			uint32_t cp;

			last = ov[0];
			if (ov[0] >= len)
				break;
			pos = ov[0] + utf8_decode(s + ov[0], len - ov[0], &cp);
		}
	}
	if (last < len) {
		char *piece = mem_strndup(s + last, len - last);

		cJSON_AddItemToArray(next, cJSON_CreateString(piece));
		mem_free(piece);
	}
}

static int mode_split(int argc, char **argv)
{
	pcre2_code *re[8];
	pcre2_match_data *md[8];
	char line[1 << 16];
	int i, n = argc;

	if (n > 8)
		return 2;
	for (i = 0; i < n; i++) {
		re[i] = compile(argv[i], 0);
		if (!re[i]) {
			fprintf(stderr, "cannot compile '%s'\n", argv[i]);
			return 1;
		}
		md[i] = pcre2_match_data_create_from_pattern(re[i], NULL);
	}
	while (fgets(line, sizeof line, stdin)) {
		cJSON *str = cJSON_Parse(line), *pieces = cJSON_CreateArray();
		char *out;

		cJSON_AddItemToArray(pieces, cJSON_CreateString(
					     cJSON_GetStringValue(str)));
		for (i = 0; i < n; i++) {
			cJSON *next = cJSON_CreateArray(), *it;

			cJSON_ArrayForEach(it, pieces) {
				const char *s = cJSON_GetStringValue(it);

				split_piece(re[i], md[i], s, strlen(s), next);
			}
			cJSON_Delete(pieces);
			pieces = next;
		}
		out = cJSON_PrintUnformatted(pieces);
		printf("%s\n", out);
		cJSON_free(out);
		cJSON_Delete(pieces);
		cJSON_Delete(str);
	}
	for (i = 0; i < n; i++) {
		pcre2_match_data_free(md[i]);
		pcre2_code_free(re[i]);
	}
	return 0;
}

static int mode_nfc(void)
{
	static char line[1 << 20];
	struct buf b, lazy;

	buf_init(&b, BUF_MAX_DEFAULT);
	buf_init(&lazy, BUF_MAX_DEFAULT);
	while (fgets(line, sizeof line, stdin)) {
		cJSON *str = cJSON_Parse(line), *o;
		const char *s = cJSON_GetStringValue(str);
		char *out;

		buf_reset(&b);
		buf_reset(&lazy);
		if (!s || uni_nfc(s, strlen(s), &b) || !nfc_lazy(s, strlen(s), &lazy)) {
			fprintf(stderr, "bad line or nfc failure\n");
			return 1;
		}
		if (b.len != lazy.len || memcmp(b.data, lazy.data, b.len)) {
			fprintf(stderr, "uni_nfc_changed differs from uni_nfc\n");
			return 1;
		}
		o = cJSON_CreateString(b.data);
		out = cJSON_PrintUnformatted(o);
		printf("%s\n", out);
		cJSON_free(out);
		cJSON_Delete(o);
		cJSON_Delete(str);
	}
	buf_release(&b);
	buf_release(&lazy);
	return 0;
}

/* MB/s of splitting FILE with the patterns in sequence; pieces counted,
 * not kept (the first pattern's pieces feed the next). */
static int mode_bench(int argc, char **argv)
{
	struct buf text, cur, nxt;
	struct diag d;
	pcre2_code *re[8];
	pcre2_match_data *md[8];
	double t0, t1, best = 0;
	size_t pieces = 0;
	int i, rep, n = argc - 1;

	if (argc < 2 || n > 8)
		return 2;
	buf_init(&text, BUF_MAX_DEFAULT);
	diag_init(&d);
	if (io_read_file(argv[0], &text, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	for (i = 0; i < n; i++) {
		re[i] = compile(argv[i + 1], 0);
		if (!re[i])
			return 1;
		md[i] = pcre2_match_data_create_from_pattern(re[i], NULL);
	}
	buf_init(&cur, BUF_MAX_DEFAULT);
	buf_init(&nxt, BUF_MAX_DEFAULT);
	/* pieces are kept as (offset,length) pairs in `cur`; best of 5 runs */
	for (rep = 0; rep < 5; rep++) {
	buf_reset(&cur);
	t0 = cpu_ms();
	{
		size_t one[2] = {0, text.len};

		buf_append(&cur, one, sizeof one);
	}
	for (i = 0; i < n; i++) {
		size_t k, np = cur.len / (2 * sizeof(size_t));
		const size_t *pv = (const size_t *)(void *)cur.data;

		buf_reset(&nxt);
		for (k = 0; k < np; k++) {
			size_t off = pv[2 * k], len = pv[2 * k + 1], pos = 0,
			       last = 0;
			const char *s = text.data + off;

			while (pos < len) {
				PCRE2_SIZE *ov;
				size_t pc[2];

				if (pcre2_match(re[i], (PCRE2_SPTR)s, len, pos,
						PCRE2_NO_UTF_CHECK, md[i], NULL) < 0)
					break;
				ov = pcre2_get_ovector_pointer(md[i]);
				if (ov[0] > last) {
					pc[0] = off + last;
					pc[1] = ov[0] - last;
					buf_append(&nxt, pc, sizeof pc);
				}
				pc[0] = off + ov[0];
				pc[1] = ov[1] - ov[0];
				buf_append(&nxt, pc, sizeof pc);
				pos = last = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
			}
			if (last < len) {
				size_t pc[2] = {off + last, len - last};

				buf_append(&nxt, pc, sizeof pc);
			}
		}
		buf_reset(&cur);
		buf_append(&cur, nxt.data, nxt.len);
	}
	t1 = cpu_ms();
	if (rep == 0 || t1 - t0 < best)
		best = t1 - t0;
	}
	pieces = cur.len / (2 * sizeof(size_t));
	printf("%zu bytes, %zu pieces, %.1f ms, %.1f MB/s (CPU, best of 5)\n",
	       text.len, pieces, best, (double)text.len / 1e3 / best);
	for (i = 0; i < n; i++) {
		pcre2_match_data_free(md[i]);
		pcre2_code_free(re[i]);
	}
	buf_release(&text);
	buf_release(&cur);
	buf_release(&nxt);
	return 0;
}

/* CPU time of uni_nfc over FILE, best of 5 (not a test). */
static int mode_bench_nfc(const char *path)
{
	struct buf text, out;
	struct diag d;
	double t0, best = 0;
	int rep;

	buf_init(&text, BUF_MAX_DEFAULT);
	buf_init(&out, BUF_MAX_DEFAULT);
	diag_init(&d);
	if (io_read_file(path, &text, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	for (rep = 0; rep < 5; rep++) {
		buf_reset(&out);
		t0 = cpu_ms();
		if (uni_nfc(text.data, text.len, &out))
			return 1;
		if (rep == 0 || cpu_ms() - t0 < best)
			best = cpu_ms() - t0;
	}
	printf("nfc: %zu -> %zu bytes, %.2f ms, %.0f MB/s (CPU, best of 5)\n",
	       text.len, out.len, best, (double)text.len / 1e3 / best);
	buf_release(&text);
	buf_release(&out);
	return 0;
}

/* Every entry point under allocation failure (NEEDLE_FAIL_ALLOC=N, see
 * mem.h): each returns ERR_OK or ERR_NOMEM/ERR_LIMIT and leaves `out` as it
 * was on failure. Exit 0 if nothing failed, 3 if an allocation failed and was
 * handled, 1 if a contract broke. */
static int mode_oom(void)
{
	static const char pat[] =
		"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
		"[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re)?|\\p{N}{1,3}| ?"
		"[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\P{L}\\W";
	struct buf b, text;
	struct diag d;
	enum err e;
	int i, rc = 0;

	buf_init(&text, BUF_MAX_DEFAULT);
	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; i < 300 && !rc; i++)
		if (buf_puts(&text, "xe\xCC\x81\xCC\xA3 \xEA\xB0\x80\xE1\x86\xA8 ") ||
		    (i == 150 && buf_puts(&text, "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3"
					       "\xCC\x81\xCC\xA3\xCC\x81\xCC\xA3")))
			rc = 3; /* the fixture itself could not be built */
	for (i = 0; i < 3 && rc != 1; i++) {
		buf_reset(&b);
		diag_init(&d);
		e = i == 0 ? uni_rewrite_pattern(pat, sizeof pat - 1, &b, &d) :
		    i == 1 ? uni_rewrite_pattern_ranges(pat, sizeof pat - 1, &b, &d) :
			     uni_nfc(text.data, text.len, &b);
		if (e != ERR_OK && e != ERR_NOMEM && e != ERR_LIMIT) {
			fprintf(stderr, "entry %d: unexpected error %d\n", i, e);
			rc = 1;
		} else if (e && (b.len || (i < 2 && d.code != e))) {
			fprintf(stderr, "entry %d: output or diagnostic wrong on failure\n", i);
			rc = 1;
		} else if (e) {
			rc = 3;
		}
	}
	buf_release(&b);
	buf_release(&text);
	return rc;
}

int main(int argc, char **argv)
{
	if (getenv("UNI_FORM"))
		form = !strcmp(getenv("UNI_FORM"), "ranges") ? 1 :
		       !strcmp(getenv("UNI_FORM"), "raw") ? 2 : 0;
	if (argc > 1 && !strcmp(argv[1], "classes"))
		return mode_classes();
	if (argc > 1 && !strcmp(argv[1], "split"))
		return mode_split(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "nfc"))
		return mode_nfc();
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return mode_bench(argc - 2, argv + 2);
	if (argc > 2 && !strcmp(argv[1], "bench-nfc"))
		return mode_bench_nfc(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "oom"))
		return mode_oom();
	for (form = 0; form < 2; form++) {
		T_RUN(test_space);
		T_RUN(test_properties);
		T_RUN(test_syntax);
	}
	form = 0;
	T_RUN(test_refused);
	T_RUN(test_nfc);
	T_RUN(test_nfc_cjk_safe);
	T_RUN(test_tables);
	T_RUN(test_forms);
	T_RUN(test_decode);
	return T_DONE();
}
