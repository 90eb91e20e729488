/* jinja_str — see jinja_int.h. Follows CPython 3.11 Objects/unicodeobject.c
 * and Objects/stringlib (split, strip, replace, find), markupsafe 2.1. */
#define _GNU_SOURCE /* memmem, memrchr */
#include "jinja_int.h"

#include <string.h>

#include <utf8proc.h>

#include "jinja_lex.h"
#include "pyfmt.h"
#include "base/utf8.h"

#define NOMEM(e, at) jinja_util_nomem(e, at)

static size_t cp_offset(const struct jv_str *s, size_t i)
{
	size_t b = 0;

	while (i && b < s->len) {
		b++;
		while (b < s->len && ((unsigned char)s->data[b] & 0xC0) == 0x80)
			b++;
		i--;
	}
	return b;
}

static size_t cp_len(const char *p, size_t n)
{
	size_t k = 1;

	while (k < n && ((unsigned char)p[k] & 0xC0) == 0x80)
		k++;
	return k;
}

static enum err mkstr(struct je *e, const struct jn *at, const char *p, size_t n,
		      struct jv *out)
{
	return jinja_value_str_new(e->a, p, n, out) ? NOMEM(e, at) : ERR_OK;
}

/* The first `needle` (`n` >= 1 bytes) in the `len` bytes at `hay`: memchr
 * to each place its first byte occurs and a compare there, which is what
 * the needles of chat templates ('</think>', '<tool_call>') cost on text
 * that seldom holds their first byte. Where the first byte is common, the
 * bytes compared at false starts are counted, and once they pass twice the
 * bytes skipped the rest goes to memmem (linear in the worst case): the
 * search stays linear in `len`. */
static const char *find_bytes(const char *hay, size_t len, const char *needle, size_t n)
{
	const char *p = hay, *last = hay + (len - n), *q;
	size_t wasted = 0;

	while (p <= last) {
		if (!(q = memchr(p, (unsigned char)needle[0], (size_t)(last - p) + 1)))
			return NULL;
		if (!memcmp(q + 1, needle + 1, n - 1))
			return q;
		wasted += n;
		p = q + 1;
		if (wasted > 2 * (size_t)(p - hay) + 256)
			return memmem(p, (size_t)(hay + len - p), needle, n);
	}
	return NULL;
}

long jinja_str_find(const struct jv_str *hay, const struct jv_str *needle, size_t from)
{
	const char *p;

	if (from > hay->len || needle->len > hay->len - from)
		return -1;
	if (!needle->len)
		return (long)from;
	p = find_bytes(hay->data + from, hay->len - from, needle->data, needle->len);
	return p ? (long)(p - hay->data) : -1;
}

/* The last `needle` within the first `len` bytes of `hay`, or -1. */
static long rfind(const struct jv_str *hay, size_t len, const struct jv_str *needle)
{
	const char *p;
	size_t end;

	if (needle->len > len)
		return -1;
	if (!needle->len)
		return (long)len;
	for (end = len - needle->len + 1; end > 0; end = (size_t)(p - hay->data)) {
		if (!(p = memrchr(hay->data, needle->data[0], end)))
			return -1;
		if (!memcmp(p, needle->data, needle->len))
			return (long)(p - hay->data);
	}
	return -1;
}

enum err jinja_str_char_at(struct je *e, const struct jn *at, const struct jv *s, size_t i,
			   struct jv *out)
{
	size_t b = cp_offset(s->u.s, i);

	return mkstr(e, at, s->u.s->data + b, cp_len(s->u.s->data + b, s->u.s->len - b), out);
}

enum err jinja_str_slice(struct je *e, const struct jn *at, const struct jv *s, int64_t a,
			 int64_t b, int64_t step, struct jv *out)
{
	struct buf o;
	int64_t i;
	enum err r = ERR_OK;

	if (step == 1) {
		size_t x, y;

		if (b <= a)
			return mkstr(e, at, "", 0, out);
		x = cp_offset(s->u.s, (size_t)a);
		y = cp_offset(s->u.s, (size_t)b);
		return mkstr(e, at, s->u.s->data + x, y - x, out);
	}
	buf_init(&o, jinja_util_buf_cap(e));
	for (i = a; !r && (step > 0 ? i < b : i > b); i += step) {
		size_t x = cp_offset(s->u.s, (size_t)i);

		if (buf_append(&o, s->u.s->data + x, cp_len(s->u.s->data + x, s->u.s->len - x)))
			r = NOMEM(e, at);
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	return r;
}

enum err jinja_str_chars(struct je *e, const struct jn *at, const struct jv *s, struct jv *out)
{
	size_t b, k;
	struct jv c;

	if (jinja_value_seq_new(e->a, JV_LIST, jinja_value_str_ncp(s->u.s), out))
		return NOMEM(e, at);
	for (b = 0; b < s->u.s->len; b += k) {
		k = cp_len(s->u.s->data + b, s->u.s->len - b);
		if (mkstr(e, at, s->u.s->data + b, k, &c) || jinja_value_seq_push(e->a, out, c))
			return NOMEM(e, at);
	}
	return ERR_OK;
}

enum err jinja_str_escape(struct je *e, const struct jn *at, const struct jv *v, struct jv *out)
{
	struct jv s;
	struct buf o;
	size_t i;
	enum err r = ERR_OK;

	if (v->k == JV_STR && (v->flags & JV_F_MARKUP)) {
		*out = *v;
		return ERR_OK;
	}
	if (jinja_print_str(e, at, v, &s))
		return e->d->code;
	buf_init(&o, jinja_util_buf_cap(e));
	for (i = 0; i < s.u.s->len && !r; i++) {
		char c = s.u.s->data[i];
		const char *rep = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;"
				  : c == '"' ? "&#34;" : c == '\'' ? "&#39;" : NULL;

		if (rep ? buf_puts(&o, rep) : buf_putc(&o, c))
			r = NOMEM(e, at);
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	out->flags = JV_F_MARKUP;
	return r;
}

/* --- case --- */

/* A code point whose Python case mapping utf8proc's simple mapping does not
 * give (SpecialCasing.txt, final sigma) or may not know. */
static int case_unsafe(uint32_t cp, int upper)
{
	if (utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_CN)
		return 1;
	if (!upper)
		return cp == 0x130 || cp == 0x3A3;
	return cp == 0x149 || cp == 0x1F0 || cp == 0x390 || cp == 0x3B0 ||
	       cp == 0x587 || (cp >= 0x1E96 && cp <= 0x1E9A) || (cp >= 0x1F50 && cp <= 0x1F56) ||
	       (cp >= 0x1F80 && cp <= 0x1FFF) || (cp >= 0xFB13 && cp <= 0xFB17);
}

static int is_ascii_alpha(uint32_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static enum err put_cp(struct buf *o, uint32_t cp)
{
	char tmp[4];
	utf8proc_ssize_t n = utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)tmp);

	return buf_append(o, tmp, (size_t)n);
}

/* Full case mappings (SpecialCasing.txt) that needle reproduces: German
 * sharp s and the Latin ligatures upward, dotted capital I downward. */
static const char *special_case(uint32_t cp, int upper)
{
	static const struct {
		uint32_t cp;
		const char *up;
	} table[] = { { 0xDF, "SS" },    { 0xFB00, "FF" }, { 0xFB01, "FI" }, { 0xFB02, "FL" },
		      { 0xFB03, "FFI" }, { 0xFB04, "FFL" }, { 0xFB05, "ST" }, { 0xFB06, "ST" } };
	size_t k;

	if (!upper)
		return cp == 0x130 ? "i\xcc\x87" : NULL;
	for (k = 0; k < sizeof(table) / sizeof(table[0]); k++)
		if (table[k].cp == cp)
			return table[k].up;
	return NULL;
}

static enum err map_cp(struct je *e, const struct jn *at, uint32_t cp, int upper, struct buf *o)
{
	const char *full = special_case(cp, upper);

	if (cp < 0x80) {
		if (upper && cp >= 'a' && cp <= 'z')
			cp -= 32;
		else if (!upper && cp >= 'A' && cp <= 'Z')
			cp += 32;
		return buf_putc(o, (char)cp) ? NOMEM(e, at) : ERR_OK;
	}
	if (full)
		return buf_puts(o, full) ? NOMEM(e, at) : ERR_OK;
	if (case_unsafe(cp, upper))
		return jinja_util_refuse(e, at, "changing the case of U+%04X", cp);
	cp = (uint32_t)(upper ? utf8proc_toupper((utf8proc_int32_t)cp)
			: utf8proc_tolower((utf8proc_int32_t)cp));
	return put_cp(o, cp) ? NOMEM(e, at) : ERR_OK;
}

/* Whether a word starts at this code point for mode 'c', 't' or 'T'. */
static int starts_word(int mode, size_t idx, uint32_t prev, int prev_cased)
{
	if (mode == 'c')
		return idx == 0;
	if (mode == 't')
		return idx == 0 || strchr("-({[<", (int)prev) || jinja_lex_isspace(prev);
	return !prev_cased;
}

enum err jinja_str_case(struct je *e, const struct jn *at, const struct jv *s, int mode,
			struct jv *out)
{
	struct buf o;
	size_t b = 0, idx = 0;
	uint32_t cp, prev = 0;
	int prev_cased = 0, upper;
	enum err r = ERR_OK;

	buf_init(&o, jinja_util_buf_cap(e));
	while (!r && b < s->u.s->len) {
		b += utf8_decode(s->u.s->data + b, s->u.s->len - b, &cp);
		if (mode != 'u' && mode != 'l' && cp >= 0x80)
			r = jinja_util_refuse(e, at, "title or capitalize of non-ASCII text");
		upper = mode == 'u' || (mode != 'l' && starts_word(mode, idx, prev, prev_cased));
		if (!r)
			r = map_cp(e, at, cp, upper, &o);
		prev_cased = is_ascii_alpha(cp);
		prev = cp;
		idx++;
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	out->flags = s->flags & JV_F_MARKUP;
	return r;
}

/* --- strip / split --- */

static int in_chars(const struct jv *chars, uint32_t cp)
{
	size_t b = 0;
	uint32_t c;

	if (!chars)
		return jinja_lex_isspace(cp);
	while (b < chars->u.s->len) {
		b += utf8_decode(chars->u.s->data + b, chars->u.s->len - b, &c);
		if (c == cp)
			return 1;
	}
	return 0;
}

/* Whether every byte of `chars` is ASCII (and none NUL, which memchr would
 * find at a str's end). */
static int ascii_set(const struct jv_str *chars)
{
	size_t i;

	for (i = 0; i < chars->len; i++)
		if ((unsigned char)chars->data[i] - 1u >= 0x7Fu)
			return 0;
	return 1;
}

enum err jinja_str_strip(struct je *e, const struct jn *at, const struct jv *s, int which,
			 const struct jv *chars, struct jv *out)
{
	const char *p = s->u.s->data;
	size_t a = 0, z = s->u.s->len, k, i;
	uint32_t cp;

	if (chars && chars->k == JV_NONE)
		chars = NULL;
	if (chars && chars->k != JV_STR)
		return jinja_util_reject(e, at, "TypeError: strip arg must be None or str");
	if (chars && ascii_set(chars->u.s)) {
		/* ASCII characters ('\n'): no byte of a longer UTF-8 sequence
		 * is one, so bytes are compared as they are */
		const char *set = chars->u.s->data;
		size_t m = chars->u.s->len;

		if (which != 'r')
			while (a < z && memchr(set, p[a], m))
				a++;
		if (which != 'l')
			while (z > a && memchr(set, p[z - 1], m))
				z--;
	} else {
		if (which != 'r')
			while (a < z && in_chars(chars, (k = utf8_decode(p + a, z - a, &cp), cp)))
				a += k;
		if (which != 'l') /* from the end, a character at a time (a str is valid UTF-8) */
			for (i = z; i > a; z = i) {
				for (i--; i > a && ((unsigned char)p[i] & 0xC0) == 0x80; i--)
					;
				utf8_decode(p + i, z - i, &cp);
				if (!in_chars(chars, cp))
					break;
			}
	}
	if (a == 0 && z == s->u.s->len) {
		*out = *s; /* nothing stripped: the str itself, as CPython returns it */
		return ERR_OK;
	}
	/* a tail ends where the str does, at its NUL: a view of its bytes */
	if (p[z] ? jinja_value_str_new(e->a, p + a, z - a, out)
		 : jinja_value_str_view(e->a, p + a, z - a, out))
		return NOMEM(e, at);
	out->flags = s->flags & JV_F_MARKUP;
	return ERR_OK;
}

/* Appends to `list` the str of the `n` bytes at `p`, a piece of a str: a
 * piece that ends at a NUL (its str's end) is a view of those bytes, which
 * live as long as the str's, not a copy. */
static enum err push_piece(struct je *e, const struct jn *at, struct jv *list, const char *p,
			   size_t n)
{
	struct jv piece;

	if ((p[n] ? jinja_value_str_new(e->a, p, n, &piece) : jinja_value_str_view(e->a, p, n, &piece)) ||
	    jinja_value_seq_push(e->a, list, piece))
		return NOMEM(e, at);
	return ERR_OK;
}

/* str.split() without a separator: runs of whitespace, ends trimmed. */
static enum err split_ws(struct je *e, const struct jn *at, const struct jv_str *s,
			 int64_t maxsplit, struct jv *out)
{
	size_t i = 0, start, k;
	uint32_t cp;

	while (i < s->len) {
		while (i < s->len && (k = utf8_decode(s->data + i, s->len - i, &cp),
				      jinja_lex_isspace(cp)))
			i += k;
		if (i >= s->len)
			break;
		if (maxsplit-- == 0) {
			size_t end = s->len;

			while (end > i) {
				size_t q = end - 1;

				while (q > i && ((unsigned char)s->data[q] & 0xC0) == 0x80)
					q--;
				utf8_decode(s->data + q, end - q, &cp);
				if (!jinja_lex_isspace(cp))
					break;
				end = q;
			}
			return push_piece(e, at, out, s->data + i, end - i);
		}
		start = i;
		while (i < s->len && (k = utf8_decode(s->data + i, s->len - i, &cp),
				      !jinja_lex_isspace(cp)))
			i += k;
		if (push_piece(e, at, out, s->data + start, i - start))
			return e->d->code;
	}
	return ERR_OK;
}

static enum err split_sep(struct je *e, const struct jn *at, const struct jv_str *s,
			  const struct jv_str *sep, int64_t maxsplit, struct jv *out)
{
	size_t start = 0;
	long hit;

	if (!sep->len)
		return jinja_util_reject(e, at, "ValueError: empty separator");
	while (maxsplit != 0 && (hit = jinja_str_find(s, sep, start)) >= 0) {
		if (push_piece(e, at, out, s->data + start, (size_t)hit - start))
			return e->d->code;
		start = (size_t)hit + sep->len;
		if (maxsplit > 0)
			maxsplit--;
	}
	return push_piece(e, at, out, s->data + start, s->len - start);
}

/* str.rsplit: refused with a whitespace separator and maxsplit (rare). */
static enum err rsplit_sep(struct je *e, const struct jn *at, const struct jv_str *s,
			   const struct jv_str *sep, int64_t maxsplit, struct jv *out)
{
	struct jv tmp;
	size_t end = s->len, i, n;
	long hit;

	if (!sep->len)
		return jinja_util_reject(e, at, "ValueError: empty separator");
	if (jinja_value_seq_new(e->a, JV_LIST, 0, &tmp))
		return NOMEM(e, at);
	for (;;) {
		hit = maxsplit != 0 ? rfind(s, end, sep) : -1;
		if (hit < 0)
			break;
		if (push_piece(e, at, &tmp, s->data + hit + sep->len, end - (size_t)hit - sep->len))
			return e->d->code;
		end = (size_t)hit;
		if (maxsplit > 0)
			maxsplit--;
	}
	if (push_piece(e, at, &tmp, s->data, end))
		return e->d->code;
	n = tmp.u.l->n;
	for (i = 0; i < n; i++)
		if (jinja_value_seq_push(e->a, out, tmp.u.l->v[n - 1 - i]))
			return NOMEM(e, at);
	return ERR_OK;
}

static enum err m_split(struct je *e, const struct jn *at, const struct jv *self,
			const struct je_args *a, int right, struct jv *out)
{
	static const char *const names[] = { "sep", "maxsplit", NULL };
	const struct jv *sep = jinja_util_arg(a, 0, "sep"), *max = jinja_util_arg(a, 1, "maxsplit");
	int64_t maxsplit = -1;

	if (jinja_util_check_args(e, at, "split", a, 2, names))
		return e->d->code;
	if (max) {
		if (max->k != JV_INT && max->k != JV_BOOL)
			return jinja_util_reject(e, at, "TypeError: maxsplit must be an integer");
		maxsplit = max->u.i < 0 ? -1 : max->u.i;
	}
	if (jinja_value_seq_new(e->a, JV_LIST, 0, out))
		return NOMEM(e, at);
	if (!sep || sep->k == JV_NONE) {
		if (right && maxsplit >= 0)
			return jinja_util_refuse(e, at, "rsplit on whitespace with maxsplit");
		return split_ws(e, at, self->u.s, maxsplit, out);
	}
	if (sep->k != JV_STR)
		return jinja_util_reject(e, at, "TypeError: must be str or None, not %s",
					 jinja_value_type_name(sep));
	return right ? rsplit_sep(e, at, self->u.s, sep->u.s, maxsplit, out)
		     : split_sep(e, at, self->u.s, sep->u.s, maxsplit, out);
}

/* --- other methods --- */

static int affix(const struct jv_str *s, const struct jv_str *x, int end)
{
	if (x->len > s->len)
		return 0;
	return !memcmp(s->data + (end ? s->len - x->len : 0), x->data, x->len);
}

static enum err m_affix(struct je *e, const struct jn *at, const struct jv *self,
			const struct je_args *a, int end, struct jv *out)
{
	const struct jv *x = jinja_util_arg(a, 0, NULL);
	size_t i;
	int r = 0;

	if (a->npos != 1 || a->nkw)
		return jinja_util_refuse(e, at, "startswith/endswith with start or end");
	if (x->k == JV_STR) {
		r = affix(self->u.s, x->u.s, end);
	} else if (x->k == JV_TUPLE) {
		for (i = 0; i < x->u.l->n && !r; i++) {
			if (x->u.l->v[i].k != JV_STR)
				return jinja_util_reject(e, at,
							 "TypeError: tuple for startswith must only contain str");
			r = affix(self->u.s, x->u.l->v[i].u.s, end);
		}
	} else {
		return jinja_util_reject(e, at,
					 "TypeError: startswith first arg must be str or a tuple of str, not %s",
					 jinja_value_type_name(x));
	}
	*out = jinja_value_bool(r);
	return ERR_OK;
}

static enum err m_replace(struct je *e, const struct jn *at, const struct jv *self,
			  const struct je_args *a, struct jv *out)
{
	const struct jv *old = jinja_util_arg(a, 0, NULL);
	const struct jv *new = jinja_util_arg(a, 1, NULL);
	const struct jv *cnt = jinja_util_arg(a, 2, NULL);
	int64_t count = -1;
	struct buf o;
	size_t i = 0;
	long hit;
	enum err r = ERR_OK;

	if (!old || !new || old->k != JV_STR || new->k != JV_STR || a->nkw || a->npos > 3)
		return jinja_util_reject(e, at, "TypeError: replace() arguments must be str");
	if (cnt && cnt->k != JV_INT)
		return jinja_util_reject(e, at, "TypeError: replace() count must be an integer");
	if (cnt)
		count = cnt->u.i;
	if (!old->u.s->len)
		return jinja_util_refuse(e, at, "replace() with an empty old string");
	buf_init(&o, jinja_util_buf_cap(e));
	while (!r && count != 0 && (hit = jinja_str_find(self->u.s, old->u.s, i)) >= 0) {
		if (buf_append(&o, self->u.s->data + i, (size_t)hit - i) ||
		    buf_append(&o, new->u.s->data, new->u.s->len))
			r = NOMEM(e, at);
		i = (size_t)hit + old->u.s->len;
		count--;
		if (jinja_util_work(e, at, JV_WORK_MATCH))
			r = e->d->code;
	}
	if (!r && (buf_append(&o, self->u.s->data + i, self->u.s->len - i) ||
		   jinja_value_str_buf(e->a, &o, out)))
		r = NOMEM(e, at);
	buf_release(&o);
	return r;
}

/* str.find's optional start and end (positional, int or None), adjusted as
 * CPython's ADJUST_INDICES does, as code point offsets into *lo, *hi. */
static enum err find_bounds(struct je *e, const struct jn *at, const struct jv *self,
			    const struct je_args *a, const char *name, int64_t *lo, int64_t *hi)
{
	int64_t n = (int64_t)jinja_value_str_ncp(self->u.s), v[2] = { 0, n };
	size_t k;

	if (a->nkw)
		return jinja_util_reject(e, at, "TypeError: %s() takes no keyword arguments", name);
	if (a->npos < 1 || a->npos > 3)
		return jinja_util_reject(e, at, "TypeError: %s expected 1 to 3 arguments", name);
	for (k = 1; k < a->npos; k++) {
		const struct jv *x = &a->pos[k];

		if (x->k == JV_NONE)
			continue;
		if (x->k != JV_INT && x->k != JV_BOOL)
			return jinja_util_reject(e, at, "TypeError: slice indices must be integers or "
						 "None or have an __index__ method");
		v[k - 1] = x->u.i;
	}
	if (v[1] > n)
		v[1] = n;
	for (k = 0; k < 2; k++)
		if (v[k] < 0 && (v[k] += n) < 0)
			v[k] = 0;
	*lo = v[0];
	*hi = v[1];
	return ERR_OK;
}

/* The code point index of byte offset `b` of `s`. */
static int64_t cp_index(const struct jv_str *s, size_t b)
{
	size_t i, n = 0;

	for (i = 0; i < b; i++)
		n += ((unsigned char)s->data[i] & 0xC0) != 0x80;
	return (int64_t)n;
}

/* The first `needle` in bytes [from, to) of `s`, or -1. */
static long find_in(const struct jv_str *s, size_t from, size_t to, const struct jv_str *needle)
{
	const char *p = memmem(s->data + from, to - from, needle->data, needle->len);

	return p ? (long)(p - s->data) : -1;
}

/* str.count, find, rfind, index and rindex, with start and end. */
static enum err m_find(struct je *e, const struct jn *at, const struct jv *self,
		       const struct je_args *a, const char *name, struct jv *out)
{
	const struct jv *x = jinja_util_arg(a, 0, NULL);
	int64_t lo = 0, hi = 0;
	long hit;
	size_t n = 0, blo, bhi;

	if (find_bounds(e, at, self, a, name, &lo, &hi))
		return e->d->code;
	if (x->k != JV_STR)
		return jinja_util_reject(e, at, "TypeError: must be str, not %s",
					 jinja_value_type_name(x));
	if (hi - lo < (int64_t)jinja_value_str_ncp(x->u.s)) {
		if (strstr(name, "index"))
			return jinja_util_reject(e, at, "ValueError: substring not found");
		*out = jinja_value_int(name[0] == 'c' ? 0 : -1);
		return ERR_OK;
	}
	if (!strcmp(name, "count") && !x->u.s->len) {
		*out = jinja_value_int(hi - lo + 1);
		return ERR_OK;
	}
	blo = lo ? cp_offset(self->u.s, (size_t)lo) : 0;
	bhi = hi < (int64_t)jinja_value_str_ncp(self->u.s) ? cp_offset(self->u.s, (size_t)hi) : self->u.s->len;
	if (!strcmp(name, "count")) {
		for (; (hit = find_in(self->u.s, blo, bhi, x->u.s)) >= 0; n++)
			blo = (size_t)hit + x->u.s->len;
		*out = jinja_value_int((int64_t)n);
		return jinja_util_work(e, at, n * JV_WORK_MATCH);
	}
	hit = name[0] == 'r' ? rfind(self->u.s, bhi, x->u.s) : find_in(self->u.s, blo, bhi, x->u.s);
	if (hit < (long)blo)
		hit = -1;
	if (hit < 0 && strstr(name, "index"))
		return jinja_util_reject(e, at, "ValueError: substring not found");
	*out = jinja_value_int(hit < 0 ? -1 : cp_index(self->u.s, (size_t)hit));
	return ERR_OK;
}

static enum err m_join(struct je *e, const struct jn *at, const struct jv *self,
		       const struct je_args *a, struct jv *out)
{
	struct jv items;
	struct buf o;
	size_t i;
	enum err r = ERR_OK;

	if (a->npos != 1 || a->nkw)
		return jinja_util_reject(e, at, "TypeError: join() takes exactly one argument");
	if (jinja_builtin_iterate(e, at, &a->pos[0], &items))
		return e->d->code;
	buf_init(&o, jinja_util_buf_cap(e));
	for (i = 0; i < items.u.l->n && !r; i++) {
		if (items.u.l->v[i].k != JV_STR)
			r = jinja_util_reject(e, at,
					      "TypeError: sequence item %zu: expected str instance, %s found",
					      i, jinja_value_type_name(&items.u.l->v[i]));
		else if ((i && buf_append(&o, self->u.s->data, self->u.s->len)) ||
			 buf_append(&o, items.u.l->v[i].u.s->data, items.u.l->v[i].u.s->len))
			r = NOMEM(e, at);
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	return r;
}

static enum err m_class(struct je *e, const struct jn *at, const struct jv *self,
			const char *name, struct jv *out)
{
	size_t i, k;
	uint32_t cp;
	int all = self->u.s->len > 0, cased = 0;

	for (i = 0; i < self->u.s->len; i += k) {
		k = utf8_decode(self->u.s->data + i, self->u.s->len - i, &cp);
		if (cp >= 0x80 && strcmp(name, "isspace"))
			return jinja_util_refuse(e, at, "str.%s on non-ASCII text", name);
		if (!strcmp(name, "isspace"))
			all &= jinja_lex_isspace(cp);
		else if (!strcmp(name, "isdigit") || !strcmp(name, "isdecimal") || !strcmp(name,
											   "isnumeric"))
			all &= cp >= '0' && cp <= '9';
		else if (!strcmp(name, "isalpha"))
			all &= is_ascii_alpha(cp);
		else if (!strcmp(name, "isalnum"))
			all &= is_ascii_alpha(cp) || (cp >= '0' && cp <= '9');
		else if (!strcmp(name, "islower"))
			all &= !(cp >= 'A' && cp <= 'Z'), cased |= cp >= 'a' && cp <= 'z';
		else
			all &= !(cp >= 'a' && cp <= 'z'), cased |= cp >= 'A' && cp <= 'Z';
	}
	if (!strcmp(name, "islower") || !strcmp(name, "isupper"))
		all = all && cased;
	*out = jinja_value_bool(all);
	return ERR_OK;
}

static enum err m_removeaffix(struct je *e, const struct jn *at, const struct jv *self,
			      const struct je_args *a, int end, struct jv *out)
{
	const struct jv *x = jinja_util_arg(a, 0, NULL);
	const struct jv_str *s = self->u.s;

	if (!x || x->k != JV_STR || a->npos != 1 || a->nkw)
		return jinja_util_reject(e, at, "TypeError: removeprefix() argument must be str");
	if (!affix(s, x->u.s, end)) {
		*out = *self;
		return ERR_OK;
	}
	return mkstr(e, at, s->data + (end ? 0 : x->u.s->len), s->len - x->u.s->len, out);
}

static enum err m_splitlines(struct je *e, const struct jn *at, const struct jv *self,
			     const struct je_args *a, struct jv *out)
{
	const struct jv_str *s = self->u.s;
	size_t i, start = 0;

	if (a->npos || a->nkw)
		return jinja_util_refuse(e, at, "splitlines with keepends");
	for (i = 0; i < s->len; i++) {
		unsigned char c = (unsigned char)s->data[i];

		if ((c >= 0x0B && c <= 0x0C) || (c >= 0x1C && c <= 0x1E) || c == 0xC2 || c == 0xE2)
			return jinja_util_refuse(e, at, "splitlines on text with rare line breaks");
	}
	if (jinja_value_seq_new(e->a, JV_LIST, 0, out))
		return NOMEM(e, at);
	for (i = 0; i < s->len; i++) {
		if (s->data[i] != '\n' && s->data[i] != '\r')
			continue;
		if (push_piece(e, at, out, s->data + start, i - start))
			return e->d->code;
		if (s->data[i] == '\r' && i + 1 < s->len && s->data[i + 1] == '\n')
			i++;
		start = i + 1;
	}
	return start < s->len ? push_piece(e, at, out, s->data + start, s->len - start) : ERR_OK;
}

static enum err m_noargs(struct je *e, const struct jn *at, const struct jv *self,
			 const char *name, const struct je_args *a, struct jv *out)
{
	if (a->npos || a->nkw)
		return jinja_util_reject(e, at, "TypeError: str.%s() takes no arguments", name);
	if (!strcmp(name, "upper") || !strcmp(name, "lower"))
		return jinja_str_case(e, at, self, name[0], out);
	if (!strcmp(name, "title"))
		return jinja_str_case(e, at, self, 'T', out);
	if (!strcmp(name, "capitalize"))
		return jinja_str_case(e, at, self, 'c', out);
	return m_class(e, at, self, name, out);
}

enum {
	M_UPPER = 1, M_LOWER, M_TITLE, M_CAPITALIZE, M_ISDIGIT, M_ISDECIMAL, M_ISNUMERIC,
	M_ISALPHA, M_ISALNUM, M_ISSPACE, M_ISLOWER, M_ISUPPER, M_SPLIT, M_RSPLIT, M_STRIP,
	M_LSTRIP, M_RSTRIP, M_STARTSWITH, M_ENDSWITH, M_REMOVEPREFIX, M_REMOVESUFFIX, M_REPLACE,
	M_FIND, M_RFIND, M_INDEX, M_RINDEX, M_COUNT, M_JOIN, M_FORMAT, M_SPLITLINES,
	M_OTHER /* a str method outside the subset: refused by name */
};

int jinja_str_method_id(const char *name)
{
	/* in M_* order, then the other methods Python's str has */
	static const char *const names[] = {
		"upper", "lower", "title", "capitalize", "isdigit", "isdecimal", "isnumeric",
		"isalpha", "isalnum", "isspace", "islower", "isupper", "split", "rsplit", "strip",
		"lstrip", "rstrip", "startswith", "endswith", "removeprefix", "removesuffix",
		"replace", "find", "rfind", "index", "rindex", "count", "join", "format",
		"splitlines", NULL
	};
	static const char *const others[] = {
		"casefold", "center", "encode", "expandtabs", "format_map", "isascii",
		"isidentifier", "isprintable", "istitle", "ljust", "maketrans", "partition",
		"rjust", "rpartition", "swapcase", "translate", "zfill", NULL
	};
	size_t k;

	for (k = 0; names[k]; k++)
		if (names[k][0] == name[0] && !strcmp(names[k], name))
			return (int)k + 1;
	for (k = 0; others[k]; k++)
		if (others[k][0] == name[0] && !strcmp(others[k], name))
			return M_OTHER;
	return 0;
}

static enum err dispatch(struct je *e, const struct jn *at, const struct jv *self, int id,
			 const char *name, const struct je_args *a, struct jv *out)
{
	if (self->flags & JV_F_MARKUP)
		return jinja_util_refuse(e, at, "str.%s on a Markup string", name);
	switch (id) {
	case M_UPPER: case M_LOWER: case M_TITLE: case M_CAPITALIZE: case M_ISDIGIT:
	case M_ISDECIMAL: case M_ISNUMERIC: case M_ISALPHA: case M_ISALNUM: case M_ISSPACE:
	case M_ISLOWER: case M_ISUPPER:
		return m_noargs(e, at, self, name, a, out);
	case M_SPLIT:
	case M_RSPLIT:
		return m_split(e, at, self, a, id == M_RSPLIT, out);
	case M_STRIP:
	case M_LSTRIP:
	case M_RSTRIP:
		if (a->npos > 1 || a->nkw)
			return jinja_util_reject(e, at,
						 "TypeError: %s expected at most 1 argument", name);
		return jinja_str_strip(e, at, self, id == M_STRIP ? 'b' : id == M_LSTRIP ? 'l' : 'r',
				       jinja_util_arg(a, 0, NULL), out);
	case M_STARTSWITH:
	case M_ENDSWITH:
		return m_affix(e, at, self, a, id == M_ENDSWITH, out);
	case M_REMOVEPREFIX:
	case M_REMOVESUFFIX:
		return m_removeaffix(e, at, self, a, id == M_REMOVESUFFIX, out);
	case M_REPLACE:
		return m_replace(e, at, self, a, out);
	case M_FIND: case M_RFIND: case M_INDEX: case M_RINDEX: case M_COUNT:
		return m_find(e, at, self, a, name, out);
	case M_JOIN:
		return m_join(e, at, self, a, out);
	case M_FORMAT:
		return jinja_fmt_format(e, at, self, a, out);
	case M_SPLITLINES:
		return m_splitlines(e, at, self, a, out);
	default:
		return jinja_util_refuse(e, at, "the str method '%s'", name);
	}
}

/* Charges what the method reads before it runs and what it made after. */
enum err jinja_str_call(struct je *e, const struct jn *at, const struct jv *self, int id,
			const char *name, const struct je_args *a, struct jv *out)
{
	if (jinja_util_work(e, at, jinja_util_units(self, a)) ||
	    dispatch(e, at, self, id, name, a, out))
		return e->d->code;
	return jinja_util_work(e, at, jinja_util_units(out, NULL));
}

enum err jinja_str_method(struct je *e, const struct jn *at, const struct jv *self,
			  const char *name, const struct je_args *a, struct jv *out)
{
	return jinja_str_call(e, at, self, jinja_str_method_id(name), name, a, out);
}
