#include "tok_scan.h"

#include <string.h>

#include "base/mem.h"
#include "base/utf8.h"
#include "uni.h"
#include "uni_data.h"

enum { C_L = 1, C_M = 2, C_N = 4, C_P = 8, C_S = 16, C_SP = 32, C_LL = 64, C_LUT = 128 };

static const struct {
	enum uni_class_id id;
	uint8_t bit;
} class_bits[] = {
	{UNI_L, C_L}, {UNI_M, C_M}, {UNI_N, C_N}, {UNI_P, C_P}, {UNI_S, C_S},
	{UNI_ONIG_SPACE, C_SP}, {UNI_Ll, C_LL}, {UNI_Lu, C_LUT}, {UNI_Lt, C_LUT},
};
#define NBITS (sizeof(class_bits) / sizeof(class_bits[0]))

struct scan_tab {
	uint8_t bmp[0x10000];
};

/* DeepSeek V3's pre-tokenizer patterns as JSON-decoded (CR and LF literal). */
static const char ds_digits[] = "\\p{N}{1,3}";
static const char ds_cjk[] = "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f"
			     "\xe3\x82\xa0-\xe3\x83\xbf]+";
static const char ds_main[] =
	"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|"
	"[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
	" ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

/* The Split patterns of Qwen2/3 (\p{N}), Llama 3 (\p{N}{1,3}, as cl100k)
 * and GPT-4o (o200k), JSON-decoded. */
#define CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
#define CL100K_TAIL " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
static const char qwen_pat[] = CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|" CL100K_TAIL;
static const char llama3_pat[] =
	CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|" CL100K_TAIL;
#define O200K_U "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
#define O200K_L "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"
static const char o200k_pat[] =
	"[^\\r\\n\\p{L}\\p{N}]?" O200K_U "*" O200K_L "+" CONTRACTIONS "?|"
	"[^\\r\\n\\p{L}\\p{N}]?" O200K_U "+" O200K_L "*" CONTRACTIONS "?|"
	"\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

enum scan_kind scan_kind_of(const char *pat, size_t n)
{
	if (n == sizeof(qwen_pat) - 1 && !memcmp(pat, qwen_pat, n))
		return SCAN_QWEN;
	if (n == sizeof(llama3_pat) - 1 && !memcmp(pat, llama3_pat, n))
		return SCAN_LLAMA3;
	if (n == sizeof(o200k_pat) - 1 && !memcmp(pat, o200k_pat, n))
		return SCAN_O200K;
	if (n == sizeof(ds_digits) - 1 && !memcmp(pat, ds_digits, n))
		return SCAN_DIGITS3;
	if (n == sizeof(ds_cjk) - 1 && !memcmp(pat, ds_cjk, n))
		return SCAN_CJK;
	if (n == sizeof(ds_main) - 1 && !memcmp(pat, ds_main, n))
		return SCAN_DS_MAIN;
	return SCAN_NONE;
}

enum err scan_tab_new(struct scan_tab **out)
{
	struct scan_tab *t = mem_calloc(1, sizeof(*t));
	size_t c, i;
	uint32_t cp;

	*out = t;
	if (!t)
		return ERR_NOMEM;
	for (c = 0; c < NBITS; c++) {
		const struct uni_class *k = &uni_classes[class_bits[c].id];

		for (i = 0; i < k->n && k->r[i].lo < 0x10000; i++)
			for (cp = k->r[i].lo; cp <= k->r[i].hi && cp < 0x10000; cp++)
				t->bmp[cp] |= class_bits[c].bit;
	}
	return ERR_OK;
}

void scan_tab_free(struct scan_tab *t)
{
	mem_free(t);
}

static inline uint8_t bits_of(const struct scan_tab *t, uint32_t cp)
{
	uint8_t b = 0;
	size_t c;

	if (cp < 0x10000)
		return t->bmp[cp];
	for (c = 0; c < NBITS; c++) {
		const struct uni_class *k = &uni_classes[class_bits[c].id];

		if (uni_in_ranges(k->r, k->n, cp))
			b |= class_bits[c].bit;
	}
	return b;
}

/* Decodes the code point at s[i] (valid UTF-8); returns its length. */
static inline size_t dec(const char *s, size_t n, size_t i, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s + i;

	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] >= 0xE0 && u[0] < 0xF0 && i + 3 <= n) {
		*cp = (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
		return 3;
	}
	return utf8_decode(s + i, n - i, cp);
}

/* Whether s[i] starts a 3-byte character (valid UTF-8), its code point
 * then in *cp: the loops over runs take these, the bulk of CJK text,
 * without dec's other cases. */
static inline int bmp3(const char *s, size_t n, size_t i, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s + i;

	if ((u[0] & 0xF0) != 0xE0 || i + 3 > n)
		return 0;
	*cp = (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
	return 1;
}

/* Number of leading ASCII letters in the 8 bytes v (little-endian), by
 * SWAR: after folding case (| 0x20), a byte is a letter iff it lies in
 * 'a'..'z' and its high bit was clear; no carries cross bytes since every
 * folded byte without the high bit is < 0x80. */
static inline unsigned ascii_letters8(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t x = (v | ones * 0x20) & ~high;
	uint64_t ge_a = (x + ones * (0x80 - 'a')) & high;
	uint64_t le_z = ~(x + ones * (0x80 - 'z' - 1)) & high;
	uint64_t bad = ~(ge_a & le_z & ~v) & high;

	return bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
}

/* End of the run of code points whose bits meet `mask`, from s[i]. */
static inline __attribute__((always_inline)) size_t run(const struct scan_tab *t, const char *s, size_t n, size_t i,
		  uint8_t mask)
{
	/* the ASCII members of \p{L} (and of \p{L} with \p{M}) are the
	 * letters A-Z a-z, taken eight at a time; a run that starts at a
	 * character outside ASCII (CJK) goes straight to the loop below */
	if (mask == (C_L | C_M) || mask == C_L) {
		while (i + 8 <= n && (unsigned char)s[i] < 0x80) {
			uint64_t v;
			unsigned k;

			memcpy(&v, s + i, 8);
			k = ascii_letters8(v);
			i += k;
			if (k < 8) {
				/* stopped at an ASCII non-letter (in neither
				 * class) or at a non-ASCII byte */
				if ((unsigned char)s[i] < 0x80)
					return i;
				break;
			}
		}
	}
	while (i < n) {
		uint32_t cp;
		size_t k;

		if ((unsigned char)s[i] < 0x80) {
			if (!(t->bmp[(unsigned char)s[i]] & mask))
				break;
			i++;
			continue;
		}
		if (bmp3(s, n, i, &cp)) { /* CJK and most non-ASCII text */
			if (!(t->bmp[cp] & mask))
				break;
			i += 3;
			continue;
		}
		k = dec(s, n, i, &cp);

		if (!(bits_of(t, cp) & mask))
			break;
		i += k;
	}
	return i;
}

static int ascii_punct(uint32_t c)
{
	return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
	       (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

static int ascii_alpha(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* The whitespace alternatives \s*[\r\n]+ | \s+(?!\S) | \s+ at s[i], a
 * White_Space code point: returns the match end. */
static size_t spaces(const struct scan_tab *t, const char *s, size_t n, size_t i)
{
	size_t w = i, last_crlf = n, last_start = i;

	while (w < n) {
		uint32_t cp;
		size_t k;
		uint64_t v;

		if (w + 8 <= n && (memcpy(&v, s + w, 8), v == 0x2020202020202020ULL)) {
			last_start = w + 7; /* eight spaces (indentation) a step */
			w += 8;
			continue;
		}
		if (s[w] == ' ') { /* no decoding for the common space */
			last_start = w++;
			continue;
		}
		k = dec(s, n, w, &cp);

		if (!(bits_of(t, cp) & C_SP))
			break;
		if (cp == '\r' || cp == '\n')
			last_crlf = w;
		last_start = w;
		w += k;
	}
	if (last_crlf != n)
		return last_crlf + 1;
	if (w == n || last_start == i)
		return w;
	return last_start; /* give back the last space: (?!\S) holds before it */
}

/* Leftmost-first match of the third DeepSeek pattern starting at s[i], or 0. */
static inline __attribute__((always_inline)) size_t ds_main_at(const struct scan_tab *t, const char *s, size_t n, size_t i)
{
	uint32_t c0, c1 = 0;
	size_t k0, e;
	uint8_t b0, b1 = 0;

	/* the common cases, ASCII: a letter, or a space then a letter, start
	 * [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ (the first alternative needs
	 * punctuation first) */
	if (ascii_alpha((unsigned char)s[i]) ||
	    (s[i] == ' ' && i + 1 < n && ascii_alpha((unsigned char)s[i + 1])))
		return run(t, s, n, i + 1, C_L | C_M);
	if (ascii_punct((unsigned char)s[i])) {
		/* every ASCII punct is in \p{P} or \p{S}: the first alternative
		 * if a letter follows, else the third (the second needs a
		 * letter or mark, or a first character outside P and S) */
		if (i + 1 < n && ascii_alpha((unsigned char)s[i + 1])) {
			for (e = i + 2; e < n && ascii_alpha((unsigned char)s[e]); e++)
				;
			return e;
		}
		e = run(t, s, n, i + 1, C_P | C_S);
		while (e < n && (s[e] == '\r' || s[e] == '\n'))
			e++;
		return e;
	}
	if (s[i] == '\n' && (i + 1 == n || ((unsigned char)s[i + 1] < 0x80 &&
					    !(t->bmp[(unsigned char)s[i + 1]] & C_SP))))
		return i + 1; /* \s*[\r\n]+ (the only alternative for LF) */
	if ((unsigned char)s[i] < 0x80 && (t->bmp[(unsigned char)s[i]] & C_SP) && i + 1 < n &&
	    (unsigned char)s[i + 1] < 0x80 && !ascii_alpha((unsigned char)s[i + 1]) &&
	    !(s[i] == ' ' && ascii_punct((unsigned char)s[i + 1])))
		/* ASCII space before ASCII that is no letter (the second
		 * alternative's), nor punctuation after ' ' (the third's) */
		return spaces(t, s, n, i);
	k0 = dec(s, n, i, &c0);
	b0 = bits_of(t, c0);

	if (ascii_punct(c0) && i + 1 < n && ascii_alpha((unsigned char)s[i + 1])) {
		for (e = i + 1; e < n && ascii_alpha((unsigned char)s[e]); e++)
			;
		return e;
	}
	if (c0 != '\r' && c0 != '\n' && !(b0 & (C_L | C_P | C_S))) {
		e = run(t, s, n, i + k0, C_L | C_M);
		if (e > i + k0 || (b0 & C_M))
			return e;
	} else if (b0 & C_L) {
		return run(t, s, n, i, C_L | C_M);
	}
	if (i + k0 < n) {
		dec(s, n, i + k0, &c1);
		b1 = bits_of(t, c1);
	}
	if ((c0 == ' ' && (b1 & (C_P | C_S))) || (b0 & (C_P | C_S))) {
		e = run(t, s, n, c0 == ' ' && !(b0 & (C_P | C_S)) ? i + 1 : i, C_P | C_S);
		while (e < n && (s[e] == '\r' || s[e] == '\n'))
			e++;
		return e;
	}
	if (b0 & C_SP)
		return spaces(t, s, n, i);
	return 0;
}

/* ---- cl100k (Qwen, Llama 3) and o200k (GPT-4o) ------------------------ */

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i]: the match end, or 0. Under (?i)
 * Oniguruma's s also matches U+017F (long s); no other letter here has a
 * fold outside ASCII. */
static size_t contraction(const char *s, size_t n, size_t i)
{
	unsigned char a, b;

	if (i + 1 >= n || s[i] != '\'')
		return 0;
	a = fold((unsigned char)s[i + 1]);
	if (a == 's' || a == 't' || a == 'm' || a == 'd')
		return i + 2;
	if (i + 2 >= n)
		return 0;
	if ((unsigned char)s[i + 1] == 0xC5 && (unsigned char)s[i + 2] == 0xBF)
		return i + 3;
	b = fold((unsigned char)s[i + 2]);
	return (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') ? i + 3 : 0;
}

/* End of the run of code points none of whose bits meet `mask`, from s[i]. */
static size_t run_not(const struct scan_tab *t, const char *s, size_t n, size_t i,
		      uint8_t mask)
{
	while (i < n) {
		uint32_t cp;
		size_t k;

		if (bmp3(s, n, i, &cp)) { /* a table's rules, CJK punctuation */
			if (t->bmp[cp] & mask)
				break;
			i += 3;
			continue;
		}
		k = dec(s, n, i, &cp);
		if (bits_of(t, cp) & mask)
			break;
		i += k;
	}
	return i;
}

/* \p{N}{1,max} at s[i], s[i] numeric: the match end. */
static size_t numbers(const struct scan_tab *t, const char *s, size_t n, size_t i,
		      size_t k, int max)
{
	size_t e = i + k;
	int j;

	for (j = 1; j < max && e < n; j++) {
		uint32_t cp;
		size_t k2 = dec(s, n, e, &cp);

		if (!(bits_of(t, cp) & C_N))
			break;
		e += k2;
	}
	return e;
}

/* ` ?[^\s\p{L}\p{N}]+` then `[\r\n]*` (with '/' too when `slash`) at s[i],
 * given that s[i] (or s[i + 1] after a space) is none of \s, L, N. */
static size_t punct_run(const struct scan_tab *t, const char *s, size_t n, size_t i,
			int slash)
{
	size_t e = run_not(t, s, n, s[i] == ' ' ? i + 1 : i, C_SP | C_L | C_N);

	while (e < n && (s[e] == '\r' || s[e] == '\n' || (slash && s[e] == '/')))
		e++;
	return e;
}

/* The class bits of the code point at s[i] (i < n) and its length. */
static inline uint8_t bits_at(const struct scan_tab *t, const char *s, size_t n, size_t i,
			      size_t *k)
{
	uint32_t cp;

	*k = dec(s, n, i, &cp);
	return bits_of(t, cp);
}

/* Whether bits `b` may start `[^\r\n\p{L}\p{N}]?` (CR and LF tested apart). */
static int prefix_ok(uint8_t b)
{
	return !(b & (C_L | C_N));
}

/* The cl100k-shaped pattern (Qwen: max_digits 1, Llama 3: 3) at s[i]:
 * every position starts a match; returns its end. */
static size_t cl100k_at(const struct scan_tab *t, const char *s, size_t n, size_t i,
			int max_digits)
{
	size_t k0, k1 = 0, e;
	uint8_t b0, b1;

	/* the common cases, ASCII: a letter, or a space then a letter, start
	 * [^\r\n\p{L}\p{N}]?\p{L}+ (a contraction needs the apostrophe) */
	if (ascii_alpha((unsigned char)s[i]))
		return run(t, s, n, i + 1, C_L);
	if (s[i] == ' ' && i + 1 < n && ascii_alpha((unsigned char)s[i + 1]))
		return run(t, s, n, i + 2, C_L);
	if (s[i] == '\'' && (e = contraction(s, n, i)))
		return e;
	b0 = bits_at(t, s, n, i, &k0);
	if (b0 & C_L)
		return run(t, s, n, i + k0, C_L);
	b1 = i + k0 < n ? bits_at(t, s, n, i + k0, &k1) : 0;
	if (s[i] != '\r' && s[i] != '\n' && prefix_ok(b0) && (b1 & C_L))
		return run(t, s, n, i + k0 + k1, C_L);
	if (b0 & C_N)
		return numbers(t, s, n, i, k0, max_digits);
	if ((s[i] == ' ' && i + 1 < n && !(b1 & (C_SP | C_L | C_N))) ||
	    !(b0 & (C_SP | C_L | C_N)))
		return punct_run(t, s, n, i, 0);
	return spaces(t, s, n, i);
}

/* o200k's letter classes: U = Lu Lt Lm Lo M, W = Ll Lm Lo M. */
static int is_u(uint8_t b)
{
	return ((b & C_L) && !(b & C_LL)) || (b & C_M);
}

static int is_w(uint8_t b)
{
	return ((b & C_L) && !(b & C_LUT)) || (b & C_M);
}

/* End of the run of U characters from s[a]; *last_w becomes the start of
 * the last of them that is also W (Lm, Lo, M). The ASCII members of U are
 * A-Z, and of W a-z. */
static size_t u_run(const struct scan_tab *t, const char *s, size_t n, size_t a,
		    size_t *last_w)
{
	size_t k;
	uint8_t b;

	for (;;) {
		while (a < n && s[a] >= 'A' && s[a] <= 'Z')
			a++;
		if (a >= n || (unsigned char)s[a] < 0x80 || !is_u(b = bits_at(t, s, n, a, &k)))
			return a;
		if (is_w(b))
			*last_w = a;
		a += k;
	}
}

/* End of the run of W characters from s[e]. */
static size_t w_run(const struct scan_tab *t, const char *s, size_t n, size_t e)
{
	size_t k;

	for (;;) {
		while (e < n && s[e] >= 'a' && s[e] <= 'z')
			e++;
		if (e >= n || (unsigned char)s[e] < 0x80 || !is_w(bits_at(t, s, n, e, &k)))
			return e;
		e += k;
	}
}

/* U*W+ (first) or U+W* (second) from s[j], then an optional contraction:
 * the match end, or 0. U* gives back characters from its right end until a
 * W can start (the engine's backtracking). */
static size_t o200k_word(const struct scan_tab *t, const char *s, size_t n, size_t j,
			 int second)
{
	size_t last_w = n, a = u_run(t, s, n, j, &last_w), e, c, k;

	if (second && a == j)
		return 0;
	if (second || (a < n && is_w(bits_at(t, s, n, a, &k)))) {
		e = w_run(t, s, n, a);
	} else if (last_w != n) {
		bits_at(t, s, n, last_w, &k);
		e = last_w + k;
	} else {
		return 0;
	}
	return (c = e < n && s[e] == '\'' ? contraction(s, n, e) : 0) ? c : e;
}

/* GPT-4o's pattern at s[i]: every position starts a match; its end. */
static size_t o200k_at(const struct scan_tab *t, const char *s, size_t n, size_t i)
{
	size_t k0, k1, e;
	uint8_t b0, b1;
	int alt, pre;

	b0 = bits_at(t, s, n, i, &k0);
	b1 = i + k0 < n ? bits_at(t, s, n, i + k0, &k1) : 0;
	/* a word starts with a letter or a mark, after the prefix or not */
	pre = s[i] != '\r' && s[i] != '\n' && prefix_ok(b0) && (b1 & (C_L | C_M));
	for (alt = 0; alt < 2 && (pre || (b0 & (C_L | C_M))); alt++) {
		if (pre && (e = o200k_word(t, s, n, i + k0, alt)))
			return e;
		if ((b0 & (C_L | C_M)) && (e = o200k_word(t, s, n, i, alt)))
			return e;
	}
	if (b0 & C_N)
		return numbers(t, s, n, i, k0, 3);
	if ((s[i] == ' ' && i + 1 < n && !(b1 & (C_SP | C_L | C_N))) ||
	    !(b0 & (C_SP | C_L | C_N)))
		return punct_run(t, s, n, i, 1);
	return spaces(t, s, n, i);
}

/* The next byte at or after i that is an ASCII digit or not ASCII, eight
 * bytes at a time (SWAR: no carry crosses a byte below the first with its
 * high bit set, which is flagged itself). */
static size_t skip_ascii_nondigit_bytes(const char *s, size_t n, size_t i)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t v, stop;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		stop = (v & high) | ((v + ones * (0x80 - '0')) & ~(v + ones * (0x80 - ':')) & high);
		if (stop)
			return i + (size_t)__builtin_ctzll(stop) / 8;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || (s[i] >= '0' && s[i] <= '9'))
			break;
	return i;
}

/* First byte at or after i that may start \p{N}: an ASCII digit, or a
 * character other than a 3-byte one outside \p{N} (CJK and its punctuation,
 * box drawing, fullwidth forms: looked up in the table). */
static size_t skip_ascii_nondigits(const struct scan_tab *t, const char *s, size_t n,
				   size_t i)
{
	const unsigned char *u = (const unsigned char *)s;

	for (;;) {
		i = skip_ascii_nondigit_bytes(s, n, i);
		if (i + 3 > n || (u[i] & 0xF0) != 0xE0 ||
		    t->bmp[(u[i] & 0x0F) << 12 | (u[i + 1] & 0x3F) << 6 | (u[i + 2] & 0x3F)] & C_N)
			return i;
		i += 3;
	}
}

/* First byte at or after i that is >= 0xE3 (the lead byte of U+3040..),
 * skipping all-ASCII words eight bytes at a time. */
static size_t skip_below_e3(const char *s, size_t n, size_t i)
{
	uint64_t v;

	for (;;) {
		while (i + 8 <= n) {
			memcpy(&v, s + i, 8);
			if (v & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n || (unsigned char)s[i] >= 0xE3)
			return i;
		i++;
	}
}

/* End of the run of [一-龥぀-ゟ゠-ヿ] (U+4E00..U+9FA5, U+3040..U+30FF) from
 * s[i] (valid UTF-8), 3-byte characters all. Each is tested without a
 * branch, on its code point decoded as if it were one (any other lead byte
 * fails the first test): the lead bytes of Chinese text vary over E4..E9
 * from one character to the next, and testing the bytes one after another
 * mispredicted every few characters. *kana (may be NULL) is set if the
 * run holds a character of U+3040..U+30FF. */
static size_t cjk_run(const char *s, size_t n, size_t i, int *kana)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp, seen = 0;

	while (i + 3 <= n) {
		cp = (uint32_t)(u[i] & 0x0F) << 12 | (uint32_t)(u[i + 1] & 0x3F) << 6 |
		     (u[i + 2] & 0x3F);
		if (!(((u[i] & 0xF0) == 0xE0) &
		      ((cp - 0x4E00 <= 0x9FA5 - 0x4E00) | (cp - 0x3040 <= 0x30FF - 0x3040))))
			break;
		seen |= cp < 0x4E00;
		i += 3;
	}
	if (kana)
		*kana = (int)seen;
	return i;
}

/* Length of the UTF-8 sequence that starts with byte c (valid UTF-8). */
static inline size_t utf8_len(unsigned char c)
{
	return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* End of \p{N}{1,3} from s[i], the first code point (k bytes) in \p{N}. */
static size_t digits3(const struct scan_tab *t, const char *s, size_t n, size_t i, size_t k)
{
	size_t e = i + k, j;
	uint32_t cp;

	for (j = 1; j < 3 && e < n; j++) {
		size_t k2 = dec(s, n, e, &cp);

		if (!(bits_of(t, cp) & C_N))
			break;
		e += k2;
	}
	return e;
}

int scan_ds_split2(const struct scan_tab *t, const char *s, size_t n, size_t at,
		   size_t *ms, size_t *me)
{
	size_t i = at, k, e;
	uint32_t cp;
	int kana;

	while ((i = skip_ascii_nondigit_bytes(s, n, i)) < n) {
		/* the common non-ASCII case, 3-byte characters (CJK, its
		 * punctuation, a table's rules): no code point of the CJK class
		 * is in \p{N}, so each starts a CJK run or is skipped unless it
		 * is numeric */
		while (bmp3(s, n, i, &cp)) {
			if ((cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF)) {
				*ms = i;
				*me = cjk_run(s, n, i, &kana);
				return kana ? 2 : 3;
			}
			if (t->bmp[cp] & C_N)
				break;
			i += 3;
		}
		if (i >= n || ((unsigned char)s[i] < 0x80 && (s[i] < '0' || s[i] > '9')))
			continue;
		k = dec(s, n, i, &cp);
		/* \p{N} first: the digits Split runs before the CJK one (and no
		 * code point of the CJK class is in \p{N}) */
		int digits = !!(bits_of(t, cp) & C_N);

		e = digits ? digits3(t, s, n, i, k) : cjk_run(s, n, i, &kana);
		if (e > i) {
			*ms = i;
			*me = e;
			return digits ? 1 : kana ? 2 : 3;
		}
		i += k;
	}
	return 0;
}

int scan_find(enum scan_kind kind, const struct scan_tab *t, const char *s,
	      size_t n, size_t at, size_t *ms, size_t *me)
{
	size_t i = at;

	if (kind == SCAN_QWEN || kind == SCAN_LLAMA3 || kind == SCAN_O200K) {
		/* every position starts a match */
		if (i >= n)
			return 0;
		*ms = i;
		*me = kind == SCAN_O200K ? o200k_at(t, s, n, i)
					 : cl100k_at(t, s, n, i, kind == SCAN_QWEN ? 1 : 3);
		return 1;
	}
	if (kind == SCAN_DS_MAIN) {
		/* nearly every position starts a match: no skipping, no decoding */
		for (; i < n; i += utf8_len((unsigned char)s[i])) {
			size_t e = ds_main_at(t, s, n, i);

			if (e) {
				*ms = i;
				*me = e;
				return 1;
			}
		}
		return 0;
	}
	while (i < n) {
		uint32_t cp;
		size_t k, e = 0;

		/* skip what cannot start a match: ASCII non-digits for \p{N}
		 * (ASCII's only N are 0-9), bytes below the lead byte of U+3040
		 * for the CJK class */
		if (kind == SCAN_DIGITS3)
			i = skip_ascii_nondigits(t, s, n, i);
		else if (kind == SCAN_CJK)
			i = skip_below_e3(s, n, i);
		if (i >= n)
			break;
		k = dec(s, n, i, &cp);
		switch (kind) {
		case SCAN_DIGITS3:
			if (bits_of(t, cp) & C_N)
				e = digits3(t, s, n, i, k);
			break;
		case SCAN_CJK:
			e = cjk_run(s, n, i, NULL);
			if (e == i)
				e = 0;
			break;
		case SCAN_DS_MAIN:
		case SCAN_QWEN:
		case SCAN_LLAMA3:
		case SCAN_O200K:
		case SCAN_NONE:
			return 0;
		}
		if (e) {
			*ms = i;
			*me = e;
			return 1;
		}
		i += k;
	}
	return 0;
}

size_t scan_find_many(enum scan_kind kind, const struct scan_tab *t, const char *s,
		      size_t n, size_t at, size_t *ms, size_t *me, size_t max)
{
	size_t k = 0, i = at, e;

	switch (kind) {
	case SCAN_QWEN:
	case SCAN_LLAMA3:
		for (; k < max && i < n; i = me[k++])
			ms[k] = i, me[k] = cl100k_at(t, s, n, i, kind == SCAN_QWEN ? 1 : 3);
		return k;
	case SCAN_O200K:
		for (; k < max && i < n; i = me[k++])
			ms[k] = i, me[k] = o200k_at(t, s, n, i);
		return k;
	case SCAN_DS_MAIN:
		while (k < max && i < n) {
			if ((e = ds_main_at(t, s, n, i))) {
				ms[k] = i, me[k++] = e;
				i = e;
			} else {
				i += utf8_len((unsigned char)s[i]);
			}
		}
		return k;
	case SCAN_DIGITS3:
	case SCAN_CJK:
	case SCAN_NONE:
		break;
	}
	for (; k < max && scan_find(kind, t, s, n, i, &ms[k], &me[k]); i = me[k++])
		;
	return k;
}
