#include "tok_pat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "uni.h"

size_t tok_pat_char_len(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];
	size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

	return k < n ? k : n;
}

/* Bytes of s[0..n) at or above 0x80. */
static size_t non_ascii(const char *s, size_t n)
{
	uint64_t v;
	size_t i = 0, k = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		k += (size_t)__builtin_popcountll(v & 0x8080808080808080ULL);
	}
	for (; i < n; i++)
		k += (unsigned char)s[i] >= 0x80;
	return k;
}

void tok_pieces_init(struct tok_pieces *ps)
{
	memset(ps, 0, sizeof(*ps));
	buf_init(&ps->s, BUF_MAX_DEFAULT);
}

void tok_pieces_release(struct tok_pieces *ps)
{
	buf_release(&ps->s);
	mem_free(ps->it);
	ps->it = NULL;
	ps->n = ps->cap = 0;
}

enum err tok_pieces_push(struct tok_pieces *ps, size_t a, size_t b, int match)
{
	if (ps->n == ps->cap) {
		struct tok_item *p = mem_grow(ps->it, &ps->cap, sizeof(*p), 64);

		if (!p)
			return ERR_NOMEM;
		ps->it = p;
	}
	ps->it[ps->n++] = (struct tok_item){a, b, match};
	return ERR_OK;
}

static enum err scan_split(const struct tok_pat *p, const struct scan_tab *tab,
			   const char *s, size_t n, int invert,
			   struct tok_pieces *ps)
{
	size_t prev = 0, ms[64], me[64], k, j;

	while ((k = scan_find_many(p->scan, tab, s, n, prev, ms, me, 64))) {
		for (j = 0; j < k; j++) {
			if (prev != ms[j] && tok_pieces_push(ps, prev, ms[j], invert))
				return ERR_NOMEM;
			if (tok_pieces_push(ps, ms[j], me[j], !invert))
				return ERR_NOMEM;
			prev = me[j];
		}
	}
	if (prev != n && tok_pieces_push(ps, prev, n, invert))
		return ERR_NOMEM;
	return ERR_OK;
}

enum err tok_pat_split(const struct tok_pat *p, const struct scan_tab *tab,
		       struct rx_match *m, const char *s, size_t n, int invert,
		       struct tok_pieces *ps, struct diag *d)
{
	size_t last_end = 0, prev = 0, last_match_end = 0, ov[2];
	int have_last = 0, found;
	const struct rx *re;
	enum err e;

	ps->n = 0;
	if (p->scan)
		return scan_split(p, tab, s, n, invert, ps)
			       ? diag_fail(d, ERR_NOMEM, "out of memory") : ERR_OK;
	/* both forms are exact; the ranges form is the faster one up to 2-5 %
	 * non-ASCII bytes (uni.h): 1.2-1.5 times fewer instructions on the
	 * bench's English (2.2 %) */
	re = p->ascii && non_ascii(s, n) * 25 <= n ? p->ascii : p->exact;
	while (last_end <= n) {
		if ((e = rx_find(re, m, s, n, last_end, ov, &found, d)))
			return e;
		if (!found)
			break;
		if (ov[0] == ov[1] && have_last && last_match_end == ov[1]) {
			last_end += last_end < n ? tok_pat_char_len(s + last_end, n - last_end) : 1;
			continue;
		}
		last_end = last_match_end = ov[1];
		have_last = 1;
		if ((prev != ov[0] && tok_pieces_push(ps, prev, ov[0], invert)) ||
		    tok_pieces_push(ps, ov[0], ov[1], !invert))
			return diag_fail(d, ERR_NOMEM, "out of memory");
		prev = ov[1];
	}
	if (prev != n && tok_pieces_push(ps, prev, n, invert))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

void tok_pat_release(struct tok_pat *p)
{
	rx_free(p->exact);
	rx_free(p->ascii);
	p->exact = p->ascii = NULL;
}

/* A String pattern as HF's regex::escape writes it: every ASCII character
 * but letters and digits escaped, NUL as \x{0}. */
static enum err escape_literal(const char *pat, size_t n, struct buf *b)
{
	size_t i;
	enum err e = ERR_OK;

	for (i = 0; !e && i < n; i++) {
		unsigned char c = (unsigned char)pat[i];

		if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
				  (c >= 'A' && c <= 'Z')))
			e = c == 0 ? buf_append(b, "\\x{0}", 5) : buf_putc(b, '\\');
		if (!e && c)
			e = buf_putc(b, (char)c);
	}
	return e;
}

/* The exact form of `pat` compiled into out->exact. */
static enum err compile_exact(struct tok_pat *out, const char *pat, size_t n,
			      int literal, struct buf *b, struct diag *d)
{
	struct diag why;
	enum err e;

	if (literal) {
		if (escape_literal(pat, n, b))
			return diag_fail(d, ERR_NOMEM, "out of memory");
	} else if ((e = uni_rewrite_pattern(pat, n, b, d))) {
		return e;
	}
	diag_init(&why);
	if ((e = rx_compile(b->data, b->len, RX_UCP | RX_FAST, &out->exact, &why)))
		return e == ERR_NOMEM ? diag_fail(d, e, "out of memory")
				      : diag_fail(d, ERR_UNSUPPORTED,
						  "regex '%.200s' does not compile: %s", pat, why.msg);
	return ERR_OK;
}

enum err tok_pat_compile(struct tok_pat *out, const char *pat, size_t n,
			 int literal, struct scan_tab **tab, struct diag *d)
{
	struct buf b;
	enum err e;

	if (!literal && !getenv("NEEDLE_NO_SCAN"))
		out->scan = scan_kind_of(pat, n);
	if (out->scan) /* the scanner is the pattern: no PCRE2 form needed */
		return !*tab && scan_tab_new(tab) ? diag_fail(d, ERR_NOMEM, "out of memory")
						  : ERR_OK;
	buf_init(&b, BUF_MAX_DEFAULT);
	e = compile_exact(out, pat, n, literal, &b, d);
	/* the ASCII form must be translated too: Oniguruma's `$`, `\h`, `{,n}`
	 * and `(?i)` scope differ from PCRE2's even on ASCII subjects; the
	 * ranges form is as fast as the raw pattern there (uni.h) */
	if (!e && !literal) {
		struct diag quiet; /* no ASCII form is no error: `exact` serves */
		enum err er;

		diag_init(&quiet);
		buf_reset(&b);
		er = uni_rewrite_pattern_ranges(pat, n, &b, &quiet);
		if (!er)
			er = rx_compile(b.data, b.len, RX_UCP | RX_FAST, &out->ascii, &quiet);
		if (er == ERR_NOMEM)
			e = diag_fail(d, ERR_NOMEM, "out of memory");
	}
	buf_release(&b);
	return e;
}
