/* Unit tests of utf8: the fast check (AVX2 on this machine) and the scalar
 * scan against a reference written from RFC 3629's code point ranges, on
 * every 1- and 2-byte sequence and every 3- and 4-byte one over the lead
 * bytes that start them (later bytes from one of each class the vector
 * tables tell apart), placed at every offset of a 32-byte block, in the
 * middle of a text and cut by its end; on mutated real and random text; on
 * the bench corpora; utf8_check's message, the broken character's start
 * (utf8_first_bad_char) and the codec. Run from the repository root.
 *
 * `test_utf8 bench [FILE...]` prints each path's speed on the files (default
 * the bench corpora) instead: a benchmark, not a test. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "generators/prng.h"
#include "base/utf8.h"
#include "t.h"

static const char *const CORPORA[] = {"build/bench/english.txt", "build/bench/chinese.txt",
				      "/usr/share/games/fortunes/chinese"};

/* The bytes that the vector tables tell apart as a 3rd or 4th byte: ASCII,
 * each continuation range (80..8F, 90..9F, A0..BF), and leads by the
 * nibbles that matter when they are the byte before the next. */
static const unsigned char LATER[] = {0x41, 0x80, 0x8F, 0x90, 0xA0, 0xBF, 0xC2, 0xE0, 0xF4};

/* The code points an n-byte form may carry: at least `min`, at most `max`. */
static const uint32_t FORM_MIN[5] = {0, 0, 0x80, 0x800, 0x10000};
static const uint32_t FORM_MAX[5] = {0, 0x7F, 0x7FF, 0xFFFF, 0x10FFFF};

/* Whether the first k bytes of an n-byte form (lead pattern and 10xxxxxx
 * continuations already checked) can still end in a valid character: the
 * code points they leave open meet RFC 3629's range for that length, less
 * the surrogates. */
static int prefix_ok(const unsigned char *b, size_t k, size_t n)
{
	uint32_t lo = b[0] & (0x7F >> n), hi;
	size_t j;

	for (j = 1; j < k; j++)
		lo = lo << 6 | (b[j] & 0x3F);
	hi = lo;
	for (; j < n; j++) {
		lo <<= 6;
		hi = hi << 6 | 0x3F;
	}
	if (hi < FORM_MIN[n] || lo > FORM_MAX[n])
		return 0;
	return lo < 0xD800 || hi > 0xDFFF;
}

/* The reference: where utf8.h says a text goes wrong, from the ranges. */
static size_t ref_first_bad(const unsigned char *s, size_t len)
{
	size_t i = 0, n, k;

	while (i < len) {
		unsigned c = s[i];

		n = c < 0x80 ? 1 : c < 0xC0 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 0;
		if (!n || !prefix_ok(s + i, 1, n))
			return i;
		if (i + n > len)
			return i;
		for (k = 1; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80 || !prefix_ok(s + i, k + 1, n))
				return i + k;
		}
		i += n;
	}
	return len;
}

static long mismatches;

/* Both paths on s[0..len) against the reference answer `want`. */
static void agree(const unsigned char *s, size_t len, size_t want)
{
	size_t scalar = utf8_first_bad((const char *)s, len);
	int fast = utf8_valid((const char *)s, len);

	if (scalar == want && fast == (want == len))
		return;
	if (mismatches++ < 5) {
		fprintf(stderr, "len %zu: reference %zu, scalar %zu, fast %d:", len, want, scalar, fast);
		for (size_t j = want > 4 ? want - 4 : 0; j < len && j < want + 8; j++)
			fprintf(stderr, " %02x", s[j]);
		fprintf(stderr, "\n");
	}
}

/* `seq` after 32..63 bytes of ASCII, and after some 128 or 256 (where the
 * fast path's ASCII blocks of 128 bytes end), followed by more ASCII and
 * then cut by the end of the text. */
static void place(const unsigned char *seq, size_t n)
{
	unsigned char text[264 + 4 + 40];
	size_t off, mid, end;

	memset(text, 'a', sizeof(text));
	memcpy(text, seq, n);
	mid = ref_first_bad(text, n + 40);
	end = ref_first_bad(text, n);
	for (off = 32; off < 264; off = off == 63 ? 120 : off == 135 ? 248 : off + 1) {
		memset(text, 'a', sizeof(text));
		memcpy(text + off, seq, n);
		agree(text, off + n + 40, mid == n + 40 ? off + n + 40 : off + mid);
		agree(text, off + n, end == n ? off + n : off + end);
	}
}

static void test_sequences(void)
{
	unsigned char q[4];
	unsigned a, b, c, e;

	mismatches = 0;
	for (a = 0; a < 256; a++) {
		q[0] = (unsigned char)a;
		place(q, 1);
		for (b = 0; b < 256; b++) {
			q[1] = (unsigned char)b;
			place(q, 2);
			for (c = 0; a >= 0xE0 && c < sizeof(LATER); c++) {
				q[2] = LATER[c];
				place(q, 3);
				for (e = 0; a >= 0xF0 && e < sizeof(LATER); e++) {
					q[3] = LATER[e];
					place(q, 4);
				}
			}
		}
	}
	CHECK_EQ_LONG(mismatches, 0);
}

/* One character of a random class into `out`, weighted to the edges. */
static size_t random_char(struct prng *p, unsigned char *out)
{
	static const uint32_t edges[] = {0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF,
					 0x10000, 0x10FFFF, 0x4E00, 0x9FFF, 0xFF0C, 0x1F642};
	uint32_t cp = (uint32_t)prng_below(p, 0x10F800);
	unsigned r = (unsigned)prng_below(p, 8);

	if (r < 3)
		cp = 0x20 + (uint32_t)prng_below(p, 0x5F);
	else if (r == 3)
		cp = edges[prng_below(p, sizeof(edges) / sizeof(edges[0]))];
	else if (r == 4)
		cp = 0x4E00 + (uint32_t)prng_below(p, 0x5200);
	else if (cp >= 0xD800)
		cp += 0x800;
	if (cp < 0x80)
		return out[0] = (unsigned char)cp, 1;
	if (cp < 0x800)
		return out[0] = (unsigned char)(0xC0 | cp >> 6), out[1] = (unsigned char)(0x80 | (cp & 0x3F)), 2;
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xE0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Up to four edits: a byte replaced (by a random one or a class edge), one
 * inserted, one deleted. */
static size_t mutate(struct prng *p, unsigned char *s, size_t len, size_t cap)
{
	static const unsigned char edge[] = {0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
					     0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xF8, 0xFF, 0x9F, 0xA0, 0x8F, 0x90};
	long k, edits = prng_range(p, 0, 4);
	size_t at;

	for (k = 0; k < edits && len; k++) {
		unsigned char v = prng_below(p, 2) ? (unsigned char)prng_next(p)
						   : edge[prng_below(p, sizeof(edge))];

		at = (size_t)prng_below(p, len);
		switch (prng_below(p, 3)) {
		case 0:
			s[at] = v;
			break;
		case 1:
			if (len < cap) {
				memmove(s + at + 1, s + at, len - at);
				s[at] = v;
				len++;
			}
			break;
		default:
			memmove(s + at, s + at + 1, len - at - 1);
			len--;
		}
	}
	return len;
}

/* Slices of real text (at random offsets, so cut characters too) and of
 * random characters, mutated. */
static void test_fuzz(void)
{
	unsigned char text[400];
	struct prng p;
	struct buf real;
	struct diag d;
	size_t i, n, len;

	mismatches = 0;
	prng_init(&p, 14, 8);
	diag_init(&d);
	buf_init(&real, BUF_MAX_DEFAULT);
	for (i = 0; i < sizeof(CORPORA) / sizeof(CORPORA[0]); i++)
		(void)io_read_file(CORPORA[i], &real, &d);
	for (i = 0; i < 400000; i++) {
		n = 1 + (size_t)prng_below(&p, 300);
		if (real.len > n && i % 2) {
			memcpy(text, real.data + prng_below(&p, real.len - n), n);
			len = n;
		} else {
			for (len = 0; len + 4 <= n;)
				len += random_char(&p, text + len);
		}
		len = mutate(&p, text, len, sizeof(text));
		agree(text, len, ref_first_bad(text, len));
	}
	CHECK_EQ_LONG(mismatches, 0);
	buf_release(&real);
}

static void test_corpora(void)
{
	size_t i;

	for (i = 0; i < sizeof(CORPORA) / sizeof(CORPORA[0]); i++) {
		struct buf b;
		struct diag d;

		diag_init(&d);
		buf_init(&b, BUF_MAX_DEFAULT);
		if (!io_read_file(CORPORA[i], &b, &d)) {
			CHECK_EQ_LONG(utf8_valid(b.data, b.len), 1);
			CHECK_EQ_LONG(utf8_first_bad(b.data, b.len), b.len);
		}
		buf_release(&b);
	}
}

/* The fast check is the vector one wherever the CPU has it, so the tests
 * above did compare the two paths. */
static void test_path(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	CHECK_STR(utf8_path(), __builtin_cpu_supports("avx2") ? "avx2" : "scalar");
#else
	CHECK_STR(utf8_path(), "scalar");
#endif
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median MB/s of 21 passes over `s` of the fast path (`fast` set) or the
 * scalar scan. */
static double speed(const char *s, size_t len, int fast)
{
	double t[21], t0;
	size_t k, sink = 0;

	for (k = 0; k < 21; k++) {
		t0 = now();
		sink += fast ? (size_t)utf8_valid(s, len) : utf8_first_bad(s, len);
		t[k] = now() - t0;
	}
	qsort(t, 21, sizeof(t[0]), cmp_double);
	if (!sink)
		fprintf(stderr, "(no pass)\n");
	return (double)len / t[10] / 1e6;
}

static int bench(int argc, char **argv)
{
	int i;

	for (i = 0; i < (argc ? argc : 2); i++) {
		const char *path = argc ? argv[i] : CORPORA[i];
		struct buf b;
		struct diag d;

		diag_init(&d);
		buf_init(&b, BUF_MAX_DEFAULT);
		if (io_read_file(path, &b, &d)) {
			fprintf(stderr, "%s\n", d.msg);
			buf_release(&b);
			return 2;
		}
		printf("%s (%zu bytes): %s %.0f MB/s, scalar %.0f MB/s\n", path, b.len, utf8_path(),
		       speed(b.data, b.len, 1), speed(b.data, b.len, 0));
		buf_release(&b);
	}
	return 0;
}

static void test_check(void)
{
	struct diag d;
	static const struct {
		const char *s;
		long bad; /* offset of the first bad byte, -1 if valid */
	} cases[] = {
		{"", -1}, {"abc", -1}, {"h\xc3\xa9llo", -1}, {"\xf0\x9f\x99\x82", -1},
		{"\xf4\x8f\xbf\xbf", -1}, {"0123456789abcdef\xe4\xb8\x80", -1},
		{"ab\xff", 2}, {"\xc0\x80", 0}, {"\xc1\xbf", 0}, {"a\xe0\x80\x80", 2},
		{"a\xed\xa0\x80", 2}, {"\xf4\x90\x80\x80", 1}, {"\xf5\x80\x80\x80", 0},
		{"abc\xe4\xb8", 3}, {"\xe4\x41\x80", 1}, {"0123456789abcdef\x80", 16},
		{"\xf0\x9f\x99", 0}, {"x\xf0\x9f\x41\x82", 3},
		/* after a run of CJK (the 3-byte fast path) */
		{"\xe4\xb8\x80\xe4\xb8\x80\xe4\x41\x80", 7}, {"\xe4\xb8\x80\xed\xa0\x80", 4},
		{"\xe4\xb8\x80\xe0\x80\x80", 4}, {"\xe4\xb8\x80\xe4\xb8", 3},
		{"\xe4\xb8\x80\xed\x9f\xbf", -1}, {"\xe4\xb8\x80\xe4\xb8\x41", 5},
		{"\xe4\xb8\x80" "a\xef\xbc\x8c\xf0\x9f\x99\x82", -1}, {"\xe4\xb8\x80\xff", 3},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum err e;
		char want[64];

		diag_init(&d);
		e = utf8_check(cases[i].s, strlen(cases[i].s), &d);
		if (cases[i].bad < 0) {
			CHECK_EQ_LONG(e, ERR_OK);
			continue;
		}
		CHECK_EQ_LONG(e, ERR_INPUT);
		snprintf(want, sizeof(want), "invalid UTF-8 at byte %ld", cases[i].bad);
		CHECK_STR(d.msg, want);
	}
}

/* Every 3-byte sequence with a lead E0..EF, between two CJK characters,
 * against RFC 3629's table: valid, or refused at its second or third byte. */
static void test_check_3byte(void)
{
	unsigned lead, b1, b2, bad = 0;
	char s[9] = "\xe4\xb8\x80...\xe4\xb8\x80", want[64];
	struct diag d;

	for (lead = 0xE0; lead <= 0xEF; lead++) {
		unsigned lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;

		for (b1 = 0; b1 < 256; b1++) {
			for (b2 = 0; b2 < 256; b2++) {
				long at = b1 < lo || b1 > hi ? 4 : (b2 & 0xC0) != 0x80 ? 5 : -1;
				enum err e;

				s[3] = (char)lead, s[4] = (char)b1, s[5] = (char)b2;
				diag_init(&d);
				e = utf8_check(s, sizeof(s), &d);
				snprintf(want, sizeof(want), "invalid UTF-8 at byte %ld", at);
				bad += at < 0 ? e != ERR_OK : e != ERR_INPUT || strcmp(d.msg, want);
			}
		}
	}
	CHECK_EQ_LONG(bad, 0);
}

/* The start of the broken character: the byte utf8_first_bad names, or the
 * lead before it inside the same character, never a finished one. */
static void test_first_bad_char(void)
{
	static const struct {
		const char *s;
		size_t bad, start;
	} cases[] = {
		{"abc", 3, 3}, {"a\x80z", 1, 1}, {"\xC0\xAF", 0, 0},
		{"ab\xED\xA0\x80", 3, 2}, {"\xEF\xBBx", 2, 0}, {"\xE4\xB8", 0, 0},
		{"\xC3\xA9\x80", 2, 2}, {"x\xF0\x9F\x41\x82", 3, 1},
		{"\xF4\x8F\xBF\xBF\x80", 4, 4}, {"\xE4\xB8\x80\xE4\x41\x80", 4, 3},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].s);

		CHECK_EQ_LONG(utf8_first_bad(cases[i].s, n), cases[i].bad);
		CHECK_EQ_LONG(utf8_first_bad_char(cases[i].s, n), cases[i].start);
	}
}

/* Every scalar value encodes to what the scan accepts and decodes back; hex
 * digits in either case. */
static void test_codec(void)
{
	uint32_t cp, back;
	size_t n, bad = 0;
	char out[4];

	for (cp = 0; cp <= 0x10FFFF; cp++) {
		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		n = utf8_encode(cp, out);
		bad += n != (cp < 0x80 ? 1u : cp < 0x800 ? 2u : cp < 0x10000 ? 3u : 4u);
		bad += utf8_first_bad(out, n) != n;
		bad += utf8_decode(out, n, &back) != n || back != cp;
	}
	CHECK_EQ_LONG(bad, 0);
	CHECK_EQ_LONG(utf8_hexval('0'), 0);
	CHECK_EQ_LONG(utf8_hexval('f'), 15);
	CHECK_EQ_LONG(utf8_hexval('A'), 10);
	CHECK_EQ_LONG(utf8_hexval('g'), -1);
	CHECK_EQ_LONG(utf8_hexval(-80), -1);
}

static void test_whole(void)
{
	/* a cut inside a character drops its lead and continuation bytes */
	CHECK(utf8_whole("ab\xe6\xbc", 4) == 2);
	CHECK(utf8_whole("ab\xe6", 3) == 2);
	CHECK(utf8_whole("ab\xe6\xbc\xa2", 5) == 5);
	CHECK(utf8_whole("ab\xf0\x90\x80", 5) == 2);
	CHECK(utf8_whole("\xc3\xa9", 2) == 2);
	CHECK(utf8_whole("\xc3", 1) == 0);
	CHECK(utf8_whole("abc", 3) == 3);
	CHECK(utf8_whole("", 0) == 0);
	CHECK(utf8_whole("\x80\x80", 2) == 2); /* no lead: not a cut, left to the checks */
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench(argc - 2, argv + 2);
	T_RUN(test_path);
	T_RUN(test_sequences);
	T_RUN(test_fuzz);
	T_RUN(test_corpora);
	T_RUN(test_check);
	T_RUN(test_check_3byte);
	T_RUN(test_first_bad_char);
	T_RUN(test_codec);
	T_RUN(test_whole);
	return T_DONE();
}
