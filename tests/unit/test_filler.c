/* Unit tests of the generators' prng and filler. */
#include <stdint.h>
#include <stdlib.h>

#include "base/buf.h"
#include "generators/filler.h"
#include "base/mem.h"
#include "generators/prng.h"
#include "t.h"

/* Reference values computed with an independent implementation of
 * SplitMix64 + xoshiro256** (the published algorithms; splitmix64(0)'s first
 * output 0xe220a8397b1dcdaf is the well-known test vector). */
static void test_prng_vectors(void)
{
	struct prng p;
	uint64_t x = 0;
	int i, want[10] = {4, 1, 9, 0, 4, 6, 8, 0, 4, 0};

	CHECK(prng_splitmix64(&x) == UINT64_C(0xe220a8397b1dcdaf));
	prng_init(&p, 42, 0);
	CHECK(prng_next(&p) == UINT64_C(0x1ff785474f113b15));
	CHECK(prng_next(&p) == UINT64_C(0x4b7867ceff5d8325));
	CHECK(prng_next(&p) == UINT64_C(0x90ca7a95a9909966));
	prng_init(&p, 42, 1);
	CHECK(prng_next(&p) == UINT64_C(0x584870a53e6ddcdf));
	prng_init(&p, 7, 3);
	for (i = 0; i < 10; i++)
		CHECK_EQ_LONG(prng_below(&p, 10), want[i]);
	CHECK_EQ_LONG(prng_below(&p, 1000003), 225731);
}

static void test_prng_bounded(void)
{
	struct prng p;
	long hist[7] = {0}, i, lo = 1 << 30, hi = -1;
	uint64_t big = (UINT64_C(1) << 63) + 12345;

	prng_init(&p, 1, 0);
	for (i = 0; i < 70000; i++) {
		long v = prng_range(&p, -3, 3);

		CHECK(v >= -3 && v <= 3);
		hist[v + 3]++;
	}
	for (i = 0; i < 7; i++) {
		CHECK(hist[i] > 9500 && hist[i] < 10500);
		lo = hist[i] < lo ? hist[i] : lo;
		hi = hist[i] > hi ? hist[i] : hi;
	}
	for (i = 0; i < 1000; i++)
		CHECK(prng_below(&p, big) < big);
	CHECK(prng_below(&p, 0) == 0 && prng_below(&p, 1) == 0);
}

static char *make_text(enum filler_kind k, uint64_t seed, int paragraphs,
		       size_t *len)
{
	struct filler *f = NULL;
	struct buf b;
	struct diag d;
	int i;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(filler_new(k, seed, 0, &f, &d) == ERR_OK);
	if (!f) {
		fprintf(stderr, "%s\n", d.msg);
		return NULL;
	}
	for (i = 0; i < paragraphs; i++)
		CHECK(filler_paragraph(f, &b, &d) == ERR_OK);
	filler_free(f);
	return buf_take(&b, len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits on "\n\n" and checks every paragraph is new and starts with a
 * non-space; returns the number of paragraphs. */
static size_t check_paragraphs(char *s, size_t len)
{
	char **v = mem_calloc(len / 2 + 1, sizeof(char *)), *p = s, *q;
	size_t n = 0, i, dups = 0;

	CHECK(len >= 2 && s[len - 1] == '\n' && s[len - 2] == '\n');
	while ((q = strstr(p, "\n\n")) != NULL) {
		*q = '\0';
		CHECK(*p && *p != ' ' && *p != '\t' && *p != '\n');
		v[n++] = p;
		p = q + 2;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 1; i < n; i++)
		dups += !strcmp(v[i - 1], v[i]);
	CHECK_EQ_LONG(dups, 0);
	mem_free(v);
	return n;
}

static void test_kinds_clean_unique(void)
{
	enum filler_kind kinds[] = {FILLER_PROSE, FILLER_ZH, FILLER_CODE, FILLER_MIXED};
	struct filler *f = NULL;
	struct diag d;
	size_t k, len, n;
	char *s;

	diag_init(&d);
	CHECK(filler_new(FILLER_PROSE, 1, 0, &f, &d) == ERR_OK);
	for (k = 0; k < 4; k++) {
		s = make_text(kinds[k], 99, 1500, &len);
		if (!s)
			continue;
		diag_init(&d);
		CHECK(filler_check(f, s, len, NULL, 0, &d) == ERR_OK);
		if (d.code)
			fprintf(stderr, "%s: %s\n", filler_kind_name(kinds[k]), d.msg);
		if (kinds[k] != FILLER_CODE && kinds[k] != FILLER_MIXED)
			CHECK(strpbrk(s, "0123456789") == NULL);
		n = check_paragraphs(s, len);
		CHECK_EQ_LONG(n, 1500);
		mem_free(s);
	}
	filler_free(f);
}

static void test_sentences_unique(void)
{
	struct filler *f = NULL;
	struct buf b;
	struct diag d;
	char **v, *p, *q;
	size_t n = 0, i, dups = 0;
	int j;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(filler_new(FILLER_PROSE, 5, 0, &f, &d) == ERR_OK);
	if (!f)
		return;
	for (j = 0; j < 20000; j++) {
		CHECK(filler_piece(f, FILLER_LANG_EN, 1, j % 4 == 0, &b, &d) == ERR_OK);
		buf_putc(&b, '\n');
	}
	v = mem_calloc(20000, sizeof(char *));
	for (p = b.data; (q = strchr(p, '\n')) != NULL && n < 20000; p = q + 1) {
		*q = '\0';
		v[n++] = p;
	}
	CHECK_EQ_LONG(n, 20000);
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 1; i < n; i++)
		dups += !strcmp(v[i - 1], v[i]);
	CHECK_EQ_LONG(dups, 0);
	mem_free(v);
	buf_release(&b);
	filler_free(f);
}

static void test_deterministic(void)
{
	size_t la, lb, lc;
	char *a = make_text(FILLER_MIXED, 7, 300, &la);
	char *b = make_text(FILLER_MIXED, 7, 300, &lb);
	char *c = make_text(FILLER_MIXED, 8, 300, &lc);

	CHECK(a && b && c && la == lb && !memcmp(a, b, la));
	CHECK(a && c && (la != lc || memcmp(a, c, la)));
	mem_free(a);
	mem_free(b);
	mem_free(c);
}

static void test_check_catches(void)
{
	struct filler *f = NULL;
	struct diag d;
	const char *extra[] = {"Haron"};
	const char *bad[] = {
		"The code is 7QX-4821-KB.", "route 66", "plain A1 text", "x-1",
		"we met Heron today", "the KESTRELS flew", "overospreyed",
	};
	const char *good[] = {
		"the heap is 0 bytes", "for (i = 0; i < n; i++)", "herring and ospre",
		"苍鹭项目",
	};
	size_t i;

	diag_init(&d);
	CHECK(filler_new(FILLER_CODE, 1, 0, &f, &d) == ERR_OK);
	if (!f)
		return;
	CHECK(filler_nprojects(f) >= 40);
	CHECK_STR(filler_project(f, 0), "Heron");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_init(&d);
		CHECK(filler_check(f, bad[i], strlen(bad[i]), NULL, 0, &d) == ERR_INPUT);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		diag_init(&d);
		CHECK(filler_check(f, good[i], strlen(good[i]), NULL, 0, &d) == ERR_OK);
	}
	diag_init(&d);
	CHECK(filler_check(f, "at haron bay", 12, extra, 1, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "haron") || strstr(d.msg, "Haron"));
	filler_free(f);
}

static void test_kind_parse(void)
{
	enum filler_kind k;
	struct diag d;

	diag_init(&d);
	CHECK(filler_kind_parse("zh", &k, &d) == ERR_OK && k == FILLER_ZH);
	CHECK(filler_kind_parse("poetry", &k, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "'poetry'") != NULL);
}

int main(void)
{
	T_RUN(test_prng_vectors);
	T_RUN(test_prng_bounded);
	T_RUN(test_kind_parse);
	T_RUN(test_check_catches);
	T_RUN(test_deterministic);
	T_RUN(test_sentences_unique);
	T_RUN(test_kinds_clean_unique);
	return T_DONE();
}
