/* UTF-8 validation: the scalar scan that names the first bad byte, and a
 * branch-free AVX2 check of 32-byte blocks after the "lookup" method of
 * Keiser and Lemire ("Validating UTF-8 in less than one instruction per
 * byte", 2021). */
#include "utf8.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define UTF8_AVX2 1
#include <immintrin.h>
#endif

/* The end of the run of valid 3-byte characters from s[i] whose lead byte
 * puts no bound on the second byte (E1..EC, EE..EF: most of CJK), each a
 * lead then two continuation bytes. */
static size_t skip_3byte(const unsigned char *s, size_t len, size_t i)
{
	while (i + 3 <= len) {
		uint32_t w = s[i] | (uint32_t)s[i + 1] << 8 | (uint32_t)s[i + 2] << 16;

		if ((w & 0xC0C0F0) != 0x8080E0 || (w & 0x0F) == 0 || (w & 0x0F) == 0x0D)
			break;
		i += 3;
	}
	return i;
}

/* utf8_first_bad, with the offset of the broken character's first byte in
 * *lead. */
static size_t first_bad(const char *text, size_t len, size_t *lead)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n, k;
		unsigned lo = 0x80, hi = 0xBF;
		uint64_t v;

		if (i + 8 <= len) {
			memcpy(&v, s + i, 8);
			if (!(v & 0x8080808080808080ULL)) {
				i += 8;
				continue;
			}
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xE1 && c != 0xED && c <= 0xEF) {
			if ((i = skip_3byte(s, len, i)) >= len)
				break;
			if ((c = s[i]) < 0x80)
				continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			n = 2;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 3;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 4;
		else
			break;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
		else if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
		*lead = i;
		if (i + n > len)
			return i;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return i + 1;
		for (k = 2; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i + k;
		}
		i += n;
	}
	*lead = i;
	return i;
}

size_t utf8_first_bad(const char *s, size_t len)
{
	size_t lead;

	return first_bad(s, len, &lead);
}

size_t utf8_first_bad_char(const char *s, size_t len)
{
	size_t lead;

	first_bad(s, len, &lead);
	return lead;
}

#ifdef UTF8_AVX2
/* What can be wrong with a byte given the one before it, one bit each. A
 * block's bytes are classified by three table lookups (the previous byte's
 * high and low nibble, the byte's own high nibble); the AND of the three has
 * a bit set exactly where that pair is one of these cases. */
enum {
	BAD_SHORT = 0x01,    /* a lead byte, then no continuation byte */
	BAD_LONG = 0x02,     /* ASCII, then a continuation byte */
	BAD_OVER3 = 0x04,    /* E0 80..9F: a 3-byte overlong */
	BAD_LARGE = 0x08,    /* F4 90..BF, F5..FF 90..BF: above U+10FFFF */
	BAD_SURR = 0x10,     /* ED A0..BF: a surrogate */
	BAD_OVER2 = 0x20,    /* C0..C1 80..BF: a 2-byte overlong */
	BAD_OVER4 = 0x40,    /* F0 80..8F: a 4-byte overlong; also F5..FF 80..8F */
	BAD_CONTS = 0x80,    /* two continuation bytes: right only as a 3rd or 4th */
	BAD_ANY_LOW = BAD_SHORT | BAD_LONG | BAD_CONTS, /* cases no low nibble decides */
};

/* The three tables, indexed by a nibble. */
static const unsigned char BY_PREV_HIGH[16] = {
	BAD_LONG, BAD_LONG, BAD_LONG, BAD_LONG, BAD_LONG, BAD_LONG, BAD_LONG, BAD_LONG,
	BAD_CONTS, BAD_CONTS, BAD_CONTS, BAD_CONTS,
	BAD_SHORT | BAD_OVER2, BAD_SHORT, BAD_SHORT | BAD_OVER3 | BAD_SURR,
	BAD_SHORT | BAD_LARGE | BAD_OVER4,
};
static const unsigned char BY_PREV_LOW[16] = {
	BAD_ANY_LOW | BAD_OVER3 | BAD_OVER2 | BAD_OVER4, BAD_ANY_LOW | BAD_OVER2,
	BAD_ANY_LOW, BAD_ANY_LOW, BAD_ANY_LOW | BAD_LARGE,
	BAD_ANY_LOW | BAD_LARGE | BAD_OVER4, BAD_ANY_LOW | BAD_LARGE | BAD_OVER4,
	BAD_ANY_LOW | BAD_LARGE | BAD_OVER4, BAD_ANY_LOW | BAD_LARGE | BAD_OVER4,
	BAD_ANY_LOW | BAD_LARGE | BAD_OVER4, BAD_ANY_LOW | BAD_LARGE | BAD_OVER4,
	BAD_ANY_LOW | BAD_LARGE | BAD_OVER4, BAD_ANY_LOW | BAD_LARGE | BAD_OVER4,
	BAD_ANY_LOW | BAD_LARGE | BAD_OVER4 | BAD_SURR,
	BAD_ANY_LOW | BAD_LARGE | BAD_OVER4, BAD_ANY_LOW | BAD_LARGE | BAD_OVER4,
};
static const unsigned char BY_HIGH[16] = {
	BAD_SHORT, BAD_SHORT, BAD_SHORT, BAD_SHORT, BAD_SHORT, BAD_SHORT, BAD_SHORT, BAD_SHORT,
	BAD_LONG | BAD_OVER2 | BAD_CONTS | BAD_OVER3 | BAD_OVER4,
	BAD_LONG | BAD_OVER2 | BAD_CONTS | BAD_OVER3 | BAD_LARGE,
	BAD_LONG | BAD_OVER2 | BAD_CONTS | BAD_SURR | BAD_LARGE,
	BAD_LONG | BAD_OVER2 | BAD_CONTS | BAD_SURR | BAD_LARGE,
	BAD_SHORT, BAD_SHORT, BAD_SHORT, BAD_SHORT,
};

/* The largest byte a block may end with at each place and leave no
 * character open: below F0 third last, below E0 second last, below C0 last. */
static const unsigned char LAST_OK[32] = {
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xEF, 0xDF, 0xBF,
};

/* A 16-entry table in both 128-bit lanes (the shuffle looks up per lane). */
__attribute__((target("avx2"))) static inline __m256i table(const unsigned char t[16])
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)t));
}

/* The bytes of `in` shifted up by `n` (1..3) places, the first `n` taken
 * from the end of `prev` (the block before). */
#define PREV(in, prev, n) \
	_mm256_alignr_epi8((in), _mm256_permute2x128_si256((prev), (in), 0x21), 16 - (n))

/* The error bits of block `in` after block `prev`: the classified pairs, and
 * BAD_CONTS flipped where a lead two or three bytes back (E0.., F0..) asks
 * for a continuation byte, so that what remains set is wrong either way: two
 * continuations where none is due, or a due one missing. */
__attribute__((target("avx2"))) static inline __m256i block_errors(__m256i in, __m256i prev)
{
	const __m256i nib = _mm256_set1_epi8(0x0F);
	__m256i p1 = PREV(in, prev, 1), due, pairs;

	pairs = _mm256_and_si256(
		_mm256_and_si256(
			_mm256_shuffle_epi8(table(BY_PREV_HIGH), _mm256_and_si256(_mm256_srli_epi16(p1, 4), nib)),
			_mm256_shuffle_epi8(table(BY_PREV_LOW), _mm256_and_si256(p1, nib))),
		_mm256_shuffle_epi8(table(BY_HIGH), _mm256_and_si256(_mm256_srli_epi16(in, 4), nib)));
	/* the top bit is set where the byte two back is >= E0 or three back >= F0 */
	due = _mm256_or_si256(_mm256_subs_epu8(PREV(in, prev, 2), _mm256_set1_epi8(0xE0 - 0x80)),
			      _mm256_subs_epu8(PREV(in, prev, 3), _mm256_set1_epi8(0xF0 - 0x80)));
	due = _mm256_and_si256(due, _mm256_set1_epi8((char)0x80));
	return _mm256_xor_si256(pairs, due);
}

/* Whether the block before an all-ASCII one left a character open: its
 * last byte a lead, or its second last E0.. or its third last F0... On such
 * a block this is all block_errors could find (ASCII after ASCII or after a
 * finished character is right), at a fifth of the cost. */
__attribute__((target("avx2"))) static inline __m256i left_open(__m256i prev)
{
	return _mm256_subs_epu8(prev, _mm256_loadu_si256((const __m256i *)(const void *)LAST_OK));
}

/* The last partial block is checked with zeros after it: a character cut by
 * the end of the text then meets a NUL where a continuation byte is due,
 * which is an error like any other. */
__attribute__((target("avx2"))) static int valid_avx2(const unsigned char *s, size_t len)
{
	__m256i prev = _mm256_setzero_si256(), err = prev, in;
	unsigned char tail[32] = {0};
	size_t i;

	/* ASCII first, 128 bytes a test (a journal line is ASCII but for the
	 * model's text): the loop below adds nothing for an ASCII block */
	for (i = 0; i + 128 <= len; i += 128) {
		const __m256i *p = (const __m256i *)(const void *)(s + i);
		__m256i any = _mm256_or_si256(_mm256_or_si256(_mm256_loadu_si256(p), _mm256_loadu_si256(p + 1)),
					      _mm256_or_si256(_mm256_loadu_si256(p + 2), _mm256_loadu_si256(p + 3)));

		if (_mm256_movemask_epi8(any))
			break;
	}
	if (i)
		prev = _mm256_loadu_si256((const __m256i *)(const void *)(s + i - 32));
	for (; i + 32 <= len; i += 32) {
		in = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
		if (_mm256_movemask_epi8(in))
			err = _mm256_or_si256(err, block_errors(in, prev));
		else
			err = _mm256_or_si256(err, left_open(prev));
		prev = in;
	}
	if (i < len)
		memcpy(tail, s + i, len - i);
	in = _mm256_loadu_si256((const __m256i *)(void *)tail);
	err = _mm256_or_si256(err, block_errors(in, prev));
	return _mm256_testz_si256(err, err);
}
#endif

int utf8_valid(const char *s, size_t len)
{
#ifdef UTF8_AVX2
	if (__builtin_cpu_supports("avx2"))
		return valid_avx2((const unsigned char *)s, len);
#endif
	return utf8_first_bad(s, len) == len;
}

/* The fast check first: the scan that finds the offset runs only on text
 * that is refused. */
enum err utf8_check(const char *s, size_t len, struct diag *d)
{
	if (utf8_valid(s, len))
		return ERR_OK;
	return diag_fail(d, ERR_INPUT, "invalid UTF-8 at byte %zu", utf8_first_bad(s, len));
}

const char *utf8_path(void)
{
#ifdef UTF8_AVX2
	if (__builtin_cpu_supports("avx2"))
		return "avx2";
#endif
	return "scalar";
}

size_t utf8_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = u[0] < 0x80 ? 1 : u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : 4;
	size_t i;

	if (n > len)
		n = len;
	*cp = n == 1 ? u[0] : (uint32_t)(u[0] & (0x7F >> n));
	for (i = 1; i < n; i++)
		*cp = (*cp << 6) | (u[i] & 0x3F);
	return n;
}

int utf8_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

size_t utf8_whole(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = n, back = 0, want;

	while (i > 0 && back < 4 && (u[i - 1] & 0xC0) == 0x80)
		i--, back++;
	if (i == 0 || u[i - 1] < 0xC0)
		return n; /* no lead byte: nothing a cut made */
	want = u[i - 1] < 0xE0 ? 2 : u[i - 1] < 0xF0 ? 3 : 4;
	return back + 1 < want ? i - 1 : n;
}
