/* jinja_fmt — see jinja_int.h. Follows CPython 3.11: Objects/unicodeobject.c
 * (PyUnicode_Format and unicode_format_arg_output: printf-style `%`),
 * Python/formatter_unicode.c (the format-spec mini-language) and
 * Objects/stringlib/unicode_format.h (str.format's field syntax). Floats are
 * written by glibc's printf, which rounds correctly as CPython's dtoa does. */
#include "jinja_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyfmt.h"
#include "base/utf8.h"

#define NOMEM(e, at) jinja_util_nomem(e, at)

/* A parsed conversion: a format spec, or a %-conversion's flags. */
struct spec {
	char fill[5];  /* UTF-8 of the fill code point, NUL-terminated */
	char align;    /* '<', '>', '^', '=' or 0 (the type's default) */
	char sign;     /* '+', '-', ' ' or 0 */
	char group;    /* ',', '_' or 0 */
	char type;     /* conversion letter, 0 for none */
	int alt, z;    /* '#', 'z' */
	long width;    /* -1 when absent */
	long prec;     /* -1 when absent */
};

/* Code points in `n` bytes of UTF-8: the bytes that start one. */
static size_t cp_count(const char *p, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += ((unsigned char)p[i] & 0xC0) != 0x80;
	return k;
}

static void spec_init(struct spec *s)
{
	memset(s, 0, sizeof(*s));
	s->fill[0] = ' ';
	s->width = -1;
	s->prec = -1;
}

/* --- padding and the parts of a number --- */

/* head (sign and prefix) + body padded to the width: '=' puts the fill
 * between head and body; '^' splits it, the extra one on the right. */
static enum err put_padded(struct buf *o, const struct spec *s, const char *head,
			   const char *body, size_t blen)
{
	size_t hlen = strlen(head), ncp = hlen + cp_count(body, blen), pad = 0, left, i;
	enum err r = ERR_OK;

	if (s->width > 0 && (size_t)s->width > ncp)
		pad = (size_t)s->width - ncp;
	left = s->align == '<' ? 0 : s->align == '^' ? pad / 2 : pad;
	if (s->align == '=' && (r = buf_puts(o, head)))
		return r;
	for (i = 0; i < left && !r; i++)
		r = buf_puts(o, s->fill);
	if (!r && s->align != '=')
		r = buf_puts(o, head);
	if (!r)
		r = buf_append(o, body, blen);
	for (i = left; i < pad && !r; i++)
		r = buf_puts(o, s->fill);
	return r;
}

/* The sign character of a number (negative or not) under `s`, in `head`. */
static void put_sign(const struct spec *s, int neg, char *head)
{
	head[0] = neg ? '-' : s->sign == '+' ? '+' : s->sign == ' ' ? ' ' : 0;
	head[1] = 0;
}

/* Inserts `sep` every `every` digits from the right of the first `n` bytes
 * of `b` (the integer part). */
static enum err group_digits(struct buf *b, size_t n, char sep, size_t every)
{
	struct buf t;
	size_t i;
	enum err r = ERR_OK;

	buf_init(&t, b->max);
	for (i = 0; i < n && !r; i++) {
		if (i && (n - i) % every == 0)
			r = buf_putc(&t, sep);
		if (!r)
			r = buf_putc(&t, b->data[i]);
	}
	if (!r)
		r = buf_append(&t, b->data + n, b->len - n);
	if (!r) {
		buf_release(b);
		*b = t;
	} else {
		buf_release(&t);
	}
	return r;
}

/* --- integers --- */

/* The magnitude of an int value in `base` into `b`; *neg its sign.
 * ERR_UNSUPPORTED for a big integer outside base 10 (jinja_bigint_digits). */
static enum err int_digits(const struct jv *v, int base, int upper, struct buf *b, int *neg)
{
	char tmp[72];
	const char *digs = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	uint64_t m;
	size_t n = sizeof(tmp);

	if (v->k == JV_BIGINT) {
		*neg = v->u.s->data[0] == '-';
		if (base != 10)
			return ERR_UNSUPPORTED;
		return buf_append(b, v->u.s->data + *neg, v->u.s->len - (size_t)*neg);
	}
	*neg = v->u.i < 0;
	m = *neg ? (uint64_t)0 - (uint64_t)v->u.i : (uint64_t)v->u.i;
	do {
		tmp[--n] = digs[m % (uint64_t)base];
		m /= (uint64_t)base;
	} while (m);
	return buf_append(b, tmp + n, sizeof(tmp) - n);
}

static int type_base(char t)
{
	return t == 'x' || t == 'X' ? 16 : t == 'o' ? 8 : t == 'b' ? 2 : 10;
}

/* An integer under `s` (type d, x, X, o, b or none; precision = minimum
 * digits, as %-formatting has it). */
static enum err put_int(struct je *e, const struct jn *at, const struct spec *s,
			const struct jv *v, struct buf *o)
{
	struct buf b, d;
	char head[8];
	int neg = 0, base = type_base(s->type);
	enum err r;

	if (jinja_util_room(e, at, (size_t)(s->prec > 0 ? s->prec : 0)))
		return e->d->code;
	buf_init(&b, jinja_util_buf_cap(e));
	buf_init(&d, jinja_util_buf_cap(e));
	r = int_digits(v, base, s->type == 'X', &d, &neg);
	if (r == ERR_UNSUPPORTED && jinja_bigint_digits(e, at, v, base, s->type == 'X', &d, &neg)) {
		buf_release(&d);
		return e->d->code;
	}
	r = r == ERR_UNSUPPORTED ? ERR_OK : r;
	while (!r && s->prec > 0 && b.len + d.len < (size_t)s->prec)
		r = buf_putc(&b, '0');
	if (!r)
		r = buf_append(&b, d.data, d.len);
	buf_release(&d);
	if (!r && s->group)
		r = group_digits(&b, b.len, s->group, base == 10 ? 3 : 4);
	put_sign(s, neg, head);
	if (s->alt && base != 10) {
		size_t h = strlen(head);

		head[h] = '0';
		head[h + 1] = s->type == 'o' ? 'o' : s->type == 'b' ? 'b' : s->type;
		head[h + 2] = 0;
	}
	if (!r)
		r = put_padded(o, s, head, b.data, b.len);
	buf_release(&b);
	return r ? NOMEM(e, at) : ERR_OK;
}

/* --- floats --- */

/* printf of `x` (finite, not negative) with conversion `c` into `b`. */
static enum err c_float(double x, char c, long prec, int alt, struct buf *b)
{
	char fmt[8];
	int n;

	snprintf(fmt, sizeof(fmt), "%%%s.*%c", alt ? "#" : "", c);
	n = snprintf(NULL, 0, fmt, (int)prec, x);
	if (n < 0 || buf_reserve(b, (size_t)n + 1))
		return ERR_NOMEM;
	snprintf(b->data + b->len, (size_t)n + 1, fmt, (int)prec, x);
	buf_commit(b, (size_t)n);
	return ERR_OK;
}

/* 'g' in exponent form with trailing zeros cut: CPython's type-less format
 * with a precision (Py_DTSF_ADD_DOT_0) switches to it one digit earlier
 * than 'g', where the fixed form would end in ".0" with every digit before
 * the point. */
static enum err g_exponent(double x, long prec, struct buf *b)
{
	char *e;
	size_t k;

	buf_reset(b);
	if (c_float(x, 'e', prec > 1 ? prec - 1 : 0, 0, b))
		return ERR_NOMEM;
	e = memchr(b->data, 'e', b->len);
	for (k = (size_t)(e - b->data); k > 1 && b->data[k - 1] == '0'; k--)
		;
	if (b->data[k - 1] == '.')
		k--;
	memmove(b->data + k, e, b->len - (size_t)(e - b->data));
	buf_truncate(b, k + b->len - (size_t)(e - b->data));
	return ERR_OK;
}

/* The magnitude of `x` under type `t` (e E f F g G %, 'r' repr, 0 none
 * with a precision) into `b`. */
static enum err float_body(double x, const struct spec *s, char t, struct buf *b)
{
	long prec = s->prec < 0 ? 6 : s->prec;
	int upper = t == 'E' || t == 'F' || t == 'G';
	enum err r;

	if (isnan(x) || isinf(x))
		r = buf_puts(b, isnan(x) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"));
	else if (t == 'r')
		r = pyfmt_float(x, b);
	else if (t == '%')
		r = c_float(x * 100.0, 'f', prec, s->alt, b);
	else if (t == 0)
		r = c_float(x, 'g', prec ? prec : 1, s->alt, b);
	else
		r = c_float(x, upper ? (char)(t + 32) : t, prec, s->alt, b);
	if (!r && (isnan(x) || isinf(x)) && t == '%')
		r = buf_putc(b, '%');
	if (r || isnan(x) || isinf(x))
		return r;
	if (upper)
		for (size_t i = 0; i < b->len; i++)
			b->data[i] = b->data[i] == 'e' ? 'E' : b->data[i];
	if (t == '%')
		return buf_putc(b, '%');
	if (t == 0 && !memchr(b->data, '.', b->len) && !memchr(b->data, 'e', b->len))
		return b->len < (size_t)(prec ? prec : 1) ? buf_puts(b, ".0") : g_exponent(x, prec, b);
	return ERR_OK;
}

/* Whether the digits of `b` are all zero (a negative zero after rounding). */
static int all_zero(const struct buf *b)
{
	size_t i;

	for (i = 0; i < b->len && b->data[i] != 'e' && b->data[i] != 'E'; i++)
		if (b->data[i] >= '1' && b->data[i] <= '9')
			return 0;
	return 1;
}

static enum err put_float(struct je *e, const struct jn *at, const struct spec *s, double x,
			  char t, struct buf *o)
{
	struct buf b;
	char head[4];
	size_t ip;
	int neg = signbit(x) && !isnan(x);
	enum err r;

	if (jinja_util_room(e, at, (size_t)(s->prec > 0 ? s->prec : 0) + 400))
		return e->d->code;
	buf_init(&b, jinja_util_buf_cap(e));
	r = float_body(fabs(x), s, t, &b);
	if (!r && s->z && neg && isfinite(x) && all_zero(&b))
		neg = 0;
	for (ip = 0; ip < b.len && b.data[ip] >= '0' && b.data[ip] <= '9'; ip++)
		;
	if (!r && s->group && isfinite(x))
		r = group_digits(&b, ip, s->group, 3);
	put_sign(s, neg, head);
	if (!r)
		r = put_padded(o, s, head, b.data, b.len);
	buf_release(&b);
	return r ? NOMEM(e, at) : ERR_OK;
}

/* An int or bool as a double for a float conversion, rounded to nearest as
 * Python's int.__float__ (the C conversion and strtod both are). */
static enum err int_as_float(struct je *e, const struct jn *at, const struct jv *v, double *x)
{
	if (v->k != JV_BIGINT) {
		*x = (double)v->u.i;
		return ERR_OK;
	}
	*x = strtod(v->u.s->data, NULL); /* correctly rounded, as int.__float__ */
	if (isinf(*x))
		return jinja_util_reject(e, at, "OverflowError: int too large to convert to float");
	return ERR_OK;
}

/* --- strings --- */

/* str(v) or repr(v) ('r'; 'a' as repr of ASCII text) under `s`, the
 * precision cutting code points. */
static enum err put_text(struct je *e, const struct jn *at, const struct spec *s,
			 const struct jv *v, char conv, struct buf *o)
{
	struct buf b;
	struct diag pd;
	size_t n = 0, k = 0;
	enum err r;

	buf_init(&b, jinja_util_buf_cap(e));
	diag_init(&pd);
	if (conv == 's') {
		r = jinja_print(e, at, v, &b);
	} else if (pyfmt_repr(v, &b, &pd)) {
		r = jinja_util_refuse(e, at, "%s", pd.msg);
	} else {
		for (r = ERR_OK; conv == 'a' && n < b.len && !r; n++)
			if ((unsigned char)b.data[n] >= 0x80)
				r = jinja_util_refuse(e, at, "ascii() of non-ASCII text");
	}
	for (n = 0; !r && s->prec >= 0 && n < b.len; n++)
		if (((unsigned char)b.data[n] & 0xC0) != 0x80 && k++ == (size_t)s->prec)
			buf_truncate(&b, n);
	if (!r && put_padded(o, s, "", b.data, b.len))
		r = NOMEM(e, at);
	buf_release(&b);
	return r;
}

/* %c and {:c}: a code point from an int, or a one-character str. */
static enum err put_char(struct je *e, const struct jn *at, const struct spec *s,
			 const struct jv *v, struct buf *o)
{
	char u[4];
	size_t n;

	if (v->k == JV_STR && v->u.s->ncp == 1)
		return put_padded(o, s, "", v->u.s->data, v->u.s->len) ? NOMEM(e, at) : ERR_OK;
	if (v->k != JV_INT && v->k != JV_BOOL)
		return jinja_util_reject(e, at, "TypeError: %%c requires int or char");
	if (v->u.i < 0 || v->u.i > 0x10FFFF)
		return jinja_util_reject(e, at, "OverflowError: %%c arg not in range(0x110000)");
	if (!v->u.i || (v->u.i >= 0xD800 && v->u.i <= 0xDFFF))
		return jinja_util_refuse(e, at, "a NUL or lone surrogate from %%c");
	n = utf8_encode((uint32_t)v->u.i, u);
	return put_padded(o, s, "", u, n) ? NOMEM(e, at) : ERR_OK;
}

/* --- printf-style: fmt % args --- */

struct pct {
	const struct jv *items; /* the positional arguments */
	size_t n, used;
	const struct jv *map;   /* the mapping (a dict argument), or NULL */
	int lenient;            /* the argument has __getitem__ (CPython's
				 * PyMapping_Check: a dict, list or range): unused
				 * arguments are no error */
};

static enum err next_arg(struct je *e, const struct jn *at, struct pct *p, const struct jv **v)
{
	if (p->used >= p->n)
		return jinja_util_reject(e, at, "TypeError: not enough arguments for format string");
	*v = &p->items[p->used++];
	return ERR_OK;
}

/* '%(key)': the mapping's value for key. */
static enum err pct_key(struct je *e, const struct jn *at, const struct jv_str *f, size_t *i,
			struct pct *p, const struct jv **v)
{
	size_t start = ++*i, depth = 1;

	for (; *i < f->len; ++*i) {
		depth += f->data[*i] == '(';
		depth -= f->data[*i] == ')';
		if (!depth)
			break;
	}
	if (*i >= f->len)
		return jinja_util_reject(e, at, "ValueError: incomplete format key");
	if (!p->map && p->lenient)
		return jinja_util_reject(e, at, "TypeError: %s indices must be integers or slices, "
					 "not str", jinja_value_type_name(p->items));
	if (!p->map)
		return jinja_util_reject(e, at, "TypeError: format requires a mapping");
	*v = jinja_value_dict_get_str(p->map, f->data + start, *i - start);
	++*i;
	if (!*v)
		return jinja_util_reject(e, at, "KeyError: '%.*s'", (int)(*i - 1 - start),
					 f->data + start);
	return ERR_OK;
}

/* A width or precision: digits, or '*' taking an int argument. */
static enum err pct_number(struct je *e, const struct jn *at, const struct jv_str *f, size_t *i,
			   struct pct *p, long *out)
{
	const struct jv *v = NULL;

	if (*i < f->len && f->data[*i] == '*') {
		++*i;
		if (next_arg(e, at, p, &v))
			return e->d->code;
		if (v->k != JV_INT && v->k != JV_BOOL)
			return jinja_util_reject(e, at, "TypeError: * wants int");
		if (v->u.i > 100000000 || v->u.i < -100000000)
			return jinja_util_refuse(e, at, "a %%-format width beyond 10**8");
		*out = (long)v->u.i;
		return ERR_OK;
	}
	for (*out = -1; *i < f->len && f->data[*i] >= '0' && f->data[*i] <= '9'; ++*i) {
		*out = (*out < 0 ? 0 : *out) * 10 + (f->data[*i] - '0');
		if (*out > 100000000)
			return jinja_util_refuse(e, at, "a %%-format width beyond 10**8");
	}
	return ERR_OK;
}

/* The flags, width and precision after '%' (and the key) into `s`. */
static enum err pct_flags(struct je *e, const struct jn *at, const struct jv_str *f, size_t *i,
			  struct pct *p, struct spec *s, int *zero)
{
	const char *fl;

	for (; *i < f->len && (fl = strchr("-+ #0", f->data[*i])) && *fl; ++*i) {
		if (*fl == '-')
			s->align = '<';
		else if (*fl == '#')
			s->alt = 1;
		else if (*fl == '0')
			*zero = 1;
		else if (*fl == '+' || !s->sign)
			s->sign = *fl;
	}
	if (pct_number(e, at, f, i, p, &s->width))
		return e->d->code;
	if (s->width < -1 || (s->width < 0 && *i > 0 && f->data[*i - 1] == '*'))
		s->align = '<', s->width = s->width < 0 ? -s->width : s->width;
	if (*i < f->len && f->data[*i] == '.') {
		++*i;
		if (pct_number(e, at, f, i, p, &s->prec))
			return e->d->code;
		if (s->prec < 0)
			s->prec = 0;
	}
	while (*i < f->len && strchr("hlL", f->data[*i]) && f->data[*i])
		++*i;
	if (*i >= f->len)
		return jinja_util_reject(e, at, "ValueError: incomplete format");
	return ERR_OK;
}

/* One numeric %-conversion of `v`. */
static enum err pct_number_conv(struct je *e, const struct jn *at, struct spec *s,
				const struct jv *v, struct buf *o)
{
	char c = s->type;
	double x;

	if (strchr("eEfFgG", c)) {
		if (v->k == JV_FLOAT)
			return put_float(e, at, s, v->u.f, c, o);
		if (v->k != JV_INT && v->k != JV_BOOL && v->k != JV_BIGINT)
			return jinja_util_reject(e, at, "TypeError: must be real number, not %s",
						 jinja_value_type_name(v));
		return int_as_float(e, at, v, &x) ? e->d->code : put_float(e, at, s, x, c, o);
	}
	if (v->k == JV_FLOAT && strchr("diu", c)) {
		struct jv t;

		if (!isfinite(v->u.f) || fabs(v->u.f) >= 9.2e18)
			return jinja_util_refuse(e, at, "%%d of a float beyond 2**63");
		t = jinja_value_int((int64_t)v->u.f);
		return put_int(e, at, s, &t, o);
	}
	if (v->k != JV_INT && v->k != JV_BOOL && v->k != JV_BIGINT)
		return jinja_util_reject(e, at, "TypeError: %%%c format: %s is required, not %s", c,
					 strchr("diu", c) ? "a real number" : "an integer",
					 jinja_value_type_name(v));
	s->type = c == 'i' || c == 'u' ? 'd' : c;
	return put_int(e, at, s, v, o);
}

/* One conversion: the text after '%' at f[*i]. */
static enum err pct_conv(struct je *e, const struct jn *at, const struct jv_str *f, size_t *i,
			 struct pct *p, struct buf *o)
{
	struct spec s;
	const struct jv *v = NULL;
	int zero = 0, numeric;
	char c;

	spec_init(&s);
	if (f->data[*i] == '(' && pct_key(e, at, f, i, p, &v))
		return e->d->code;
	if (pct_flags(e, at, f, i, p, &s, &zero))
		return e->d->code;
	c = f->data[(*i)++];
	if (c == '%' && !v && s.width < 0 && s.prec < 0 && !zero && !s.sign && !s.alt && !s.align)
		return buf_putc(o, '%') ? NOMEM(e, at) : ERR_OK;
	if (c == '%' || !strchr("sradiuoxXeEfFgGc", c))
		return c == '%' ? jinja_util_refuse(e, at, "a %%-format '%%' with flags")
		       : jinja_util_reject(e, at, "ValueError: unsupported format character '%c' "
					   "(0x%x) at index %zu", c, (unsigned char)c, *i - 1);
	if (!v && next_arg(e, at, p, &v))
		return e->d->code;
	numeric = !strchr("sra", c) && c != 'c';
	if (!s.align)
		s.align = zero && numeric ? '=' : '>';
	if (zero && numeric && s.align == '=')
		s.fill[0] = '0';
	s.type = c;
	if (c == 'c')
		return put_char(e, at, &s, v, o);
	if (!numeric)
		return put_text(e, at, &s, v, c, o);
	return pct_number_conv(e, at, &s, v, o);
}

static enum err pct_loop(struct je *e, const struct jn *at, const struct jv_str *f,
			 struct pct *p, struct buf *o)
{
	size_t i = 0, lit;

	while (i < f->len) {
		const char *pc = memchr(f->data + i, '%', f->len - i);

		lit = pc ? (size_t)(pc - f->data) - i : f->len - i;
		if (buf_append(o, f->data + i, lit))
			return NOMEM(e, at);
		i += lit;
		if (!pc)
			break;
		if (++i >= f->len)
			return jinja_util_reject(e, at, "ValueError: incomplete format");
		if (pct_conv(e, at, f, &i, p, o))
			return e->d->code;
	}
	if (p->used < p->n && !p->lenient)
		return jinja_util_reject(e, at,
					 "TypeError: not all arguments converted during string formatting");
	return ERR_OK;
}

enum err jinja_fmt_percent(struct je *e, const struct jn *at, const struct jv *fmt,
			   const struct jv *args, struct jv *out)
{
	struct pct p = { args, 1, 0, NULL, 0 };
	unsigned noitem = JV_F_GEN | JV_F_VIEW;
	struct buf o;
	enum err r;

	if (fmt->flags & JV_F_MARKUP)
		return jinja_util_refuse(e, at, "%% formatting of a Markup string");
	if (memchr(fmt->u.s->data, 0, fmt->u.s->len))
		return jinja_util_refuse(e, at, "a format string with a NUL character");
	if (args->k == JV_TUPLE) {
		p.items = args->u.l->v;
		p.n = args->u.l->n;
	} else if (args->k == JV_DICT) {
		p.map = args;
	}
	p.lenient = args->k == JV_DICT || (args->k == JV_LIST && !(args->flags & noitem));
	if (jinja_util_work(e, at, fmt->u.s->len))
		return e->d->code;
	buf_init(&o, jinja_util_buf_cap(e));
	r = pct_loop(e, at, fmt->u.s, &p, &o);
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	return r ? r : jinja_util_work(e, at, out->u.s->len);
}

/* --- str.format --- */

/* Digits at p[*i] into *out (-1 when none); refused past 10**8. */
static enum err spec_number(struct je *e, const struct jn *at, const char *p, size_t n,
			    size_t *i, long *out)
{
	for (*out = -1; *i < n && p[*i] >= '0' && p[*i] <= '9'; ++*i) {
		*out = (*out < 0 ? 0 : *out) * 10 + (p[*i] - '0');
		if (*out > 100000000)
			return jinja_util_refuse(e, at, "a format width or precision beyond 10**8");
	}
	return ERR_OK;
}

/* [[fill]align][sign][z][#][0][width][grouping][.precision][type], the
 * alignment defaulting to `def` ('<' for str, '>' for numbers). */
static enum err parse_spec(struct je *e, const struct jn *at, const char *p, size_t n, char def,
			   struct spec *s)
{
	size_t i = 0, k = 1;
	int filled = 0;

	spec_init(s);
	while (k < n && ((unsigned char)p[k] & 0xC0) == 0x80)
		k++;
	if (n > k && p[k] && strchr("<>=^", p[k])) {
		memcpy(s->fill, p, k);
		s->fill[k] = 0;
		s->align = p[k];
		i = k + 1;
		filled = 1;
	} else if (n && p[0] && strchr("<>=^", p[0])) {
		s->align = p[i++];
	}
	if (i < n && p[i] && strchr("+- ", p[i]))
		s->sign = p[i++];
	if (i < n && p[i] == 'z')
		s->z = 1, i++;
	if (i < n && p[i] == '#')
		s->alt = 1, i++;
	if (i < n && p[i] == '0' && !filled) {
		s->fill[0] = '0', s->fill[1] = 0, i++;
		if (!s->align && def == '>')
			s->align = '=';
	}
	if (spec_number(e, at, p, n, &i, &s->width))
		return e->d->code;
	if (i < n && (p[i] == ',' || p[i] == '_'))
		s->group = p[i++];
	if (i < n && (p[i] == ',' || p[i] == '_'))
		return jinja_util_reject(e, at, "ValueError: Cannot specify both ',' and '_'.");
	if (i < n && p[i] == '.') {
		i++;
		if (spec_number(e, at, p, n, &i, &s->prec))
			return e->d->code;
		if (s->prec < 0)
			return jinja_util_reject(e, at, "ValueError: Format specifier missing precision");
	}
	if (n - i > 1)
		return jinja_util_reject(e, at, "ValueError: Invalid format specifier");
	s->type = i < n ? p[i] : 0;
	if (!s->align)
		s->align = def;
	return ERR_OK;
}

/* format(str, spec). */
static enum err format_str(struct je *e, const struct jn *at, const struct spec *s,
			   const struct jv *v, struct buf *o)
{
	if (s->type && s->type != 's')
		return jinja_util_reject(e, at, "ValueError: Unknown format code '%c' for object of "
					 "type 'str'", s->type);
	if (s->sign)
		return jinja_util_reject(e, at, "ValueError: Sign not allowed in string format "
					 "specifier");
	if (s->alt)
		return jinja_util_reject(e, at, "ValueError: Alternate form (#) not allowed in "
					 "string format specifier");
	if (s->z)
		return jinja_util_reject(e, at, "ValueError: Negative zero coercion (z) not allowed "
					 "in format specifier");
	if (s->align == '=')
		return jinja_util_reject(e, at, "ValueError: '=' alignment not allowed in string "
					 "format specifier");
	if (s->group)
		return jinja_util_reject(e, at, "ValueError: Cannot specify '%c' with 's'.", s->group);
	return put_text(e, at, s, v, 's', o);
}

/* format(int, spec): the integer types, or a float type on float(v). */
static enum err format_int(struct je *e, const struct jn *at, struct spec *s,
			   const struct jv *v, struct buf *o)
{
	char t = s->type;
	double x;

	if (t && strchr("eEfFgG%", t))
		return int_as_float(e, at, v, &x) ? e->d->code : put_float(e, at, s, x, t, o);
	if (t == 'n')
		return jinja_util_refuse(e, at, "the locale-dependent format type 'n'");
	if (t && !strchr("dbcoxX", t))
		return jinja_util_reject(e, at, "ValueError: Unknown format code '%c' for object of "
					 "type 'int'", t);
	if (s->prec >= 0)
		return jinja_util_reject(e, at, "ValueError: Precision not allowed in integer format "
					 "specifier");
	if (s->z)
		return jinja_util_reject(e, at, "ValueError: Negative zero coercion (z) not allowed "
					 "in integer format specifier");
	if (s->group == ',' && t && t != 'd')
		return jinja_util_reject(e, at, "ValueError: Cannot specify ',' with '%c'.", t);
	if (t == 'c' && (s->sign || s->alt || s->group))
		return jinja_util_reject(e, at, "ValueError: %s not allowed with integer format "
					 "specifier 'c'", s->sign ? "Sign" : s->alt ? "Alternate form (#)"
					 : "Cannot specify ','");
	if (t == 'c')
		return v->k == JV_BIGINT
		       ? jinja_util_reject(e, at, "OverflowError: %%c arg not in range(0x110000)")
		       : put_char(e, at, s, v, o);
	return put_int(e, at, s, v, o);
}

/* format(float, spec). */
static enum err format_float(struct je *e, const struct jn *at, const struct spec *s,
			     double x, struct buf *o)
{
	char t = s->type;

	if (t == 'n')
		return jinja_util_refuse(e, at, "the locale-dependent format type 'n'");
	if (t && !strchr("eEfFgG%", t))
		return jinja_util_reject(e, at, "ValueError: Unknown format code '%c' for object of "
					 "type 'float'", t);
	if (!t && s->alt)
		return jinja_util_refuse(e, at, "the alternate form of a float without a type");
	return put_float(e, at, s, x, t || s->prec >= 0 ? t : 'r', o);
}

/* format(v, spec) for the spec of `n` bytes at `p`. */
static enum err format_value(struct je *e, const struct jn *at, const struct jv *v,
			     const char *p, size_t n, struct buf *o)
{
	struct spec s;
	int num = v->k == JV_INT || v->k == JV_BOOL || v->k == JV_BIGINT || v->k == JV_FLOAT;

	if (!n)
		return jinja_print(e, at, v, o);
	if (v->k != JV_STR && !num)
		return jinja_util_reject(e, at, "TypeError: unsupported format string passed to "
					 "%s.__format__", v->k == JV_UNDEF ? "Undefined"
					 : jinja_value_type_name(v));
	if (parse_spec(e, at, p, n, num ? '>' : '<', &s))
		return e->d->code;
	if (s.group && s.fill[0] == '0' && s.align == '=')
		return jinja_util_refuse(e, at, "zero padding with a grouping separator");
	if (jinja_util_room(e, at, (size_t)(s.width > 0 ? s.width : 0)))
		return e->d->code;
	if (v->k == JV_STR)
		return format_str(e, at, &s, v, o);
	if (v->k == JV_FLOAT)
		return format_float(e, at, &s, v->u.f, o);
	return format_int(e, at, &s, v, o);
}

/* The argument a field names (`n` bytes at `p`: empty, an index or a
 * keyword), numbering empty names automatically; *mode is 'a' or 'm' once
 * set. The sandbox formats with string.Formatter (Lib/string.py), whose
 * messages these are (one for either switch of numbering). */
static enum err field_arg(struct je *e, const struct jn *at, const char *p, size_t n,
			  const struct je_args *a, size_t *auto_n, int *mode, const struct jv **v)
{
	size_t i, idx = 0;

	if (memchr(p, '.', n) || memchr(p, '[', n))
		return jinja_util_refuse(e, at, "a str.format field with an attribute or index");
	for (i = 0; i < n && p[i] >= '0' && p[i] <= '9' && idx < 100000000; i++)
		idx = idx * 10 + (size_t)(p[i] - '0');
	if (n && i < n) {
		for (i = 0; i < a->nkw; i++)
			if (strlen(a->kwn[i]) == n && !memcmp(a->kwn[i], p, n))
				break;
		if (i == a->nkw)
			return jinja_util_reject(e, at, "KeyError: '%.*s'", (int)n, p);
		*v = &a->kwv[i];
		return ERR_OK;
	}
	if (*mode && *mode != (n ? 'm' : 'a'))
		return jinja_util_reject(e, at, "ValueError: cannot switch from manual field "
					 "specification to automatic field numbering");
	*mode = n ? 'm' : 'a';
	if (!n)
		idx = (*auto_n)++;
	if (idx >= a->npos)
		return jinja_util_reject(e, at, "IndexError: tuple index out of range");
	*v = &a->pos[idx];
	return ERR_OK;
}

/* The field at f[*i] (just after its '{'): name, conversion, spec. */
static enum err format_field(struct je *e, const struct jn *at, const struct jv_str *f,
			     size_t *i, const struct je_args *a, size_t *auto_n, int *mode,
			     struct buf *o)
{
	size_t name = *i, nend, spec;
	const struct jv *v = NULL;
	struct jv conv;
	char c = 0;

	while (*i < f->len && !strchr("!:}{", f->data[*i]))
		++*i;
	nend = *i;
	if (*i < f->len && f->data[*i] == '!') {
		if (*i + 2 >= f->len || !strchr(":}", f->data[*i + 2]))
			return jinja_util_reject(e, at, "ValueError: expected ':' after conversion "
						 "specifier");
		c = f->data[*i + 1];
		*i += 2;
		if (!strchr("rsa", c) || !c)
			return jinja_util_reject(e, at, "ValueError: Unknown conversion specifier %c", c);
	}
	spec = *i < f->len && f->data[*i] == ':' ? ++*i : *i;
	while (*i < f->len && f->data[*i] != '}' && f->data[*i] != '{')
		++*i;
	if (*i < f->len && f->data[*i] == '{')
		return jinja_util_refuse(e, at, "a nested str.format field");
	if (*i >= f->len)
		return jinja_util_reject(e, at, "ValueError: expected '}' before end of string");
	if (field_arg(e, at, f->data + name, nend - name, a, auto_n, mode, &v))
		return e->d->code;
	if (c) {
		struct spec plain;
		struct buf b;
		enum err r;

		spec_init(&plain);
		buf_init(&b, jinja_util_buf_cap(e));
		r = put_text(e, at, &plain, v, c, &b);
		if (!r && jinja_value_str_buf(e->a, &b, &conv))
			r = NOMEM(e, at);
		buf_release(&b);
		if (r)
			return r;
		v = &conv;
	}
	return format_value(e, at, v, f->data + spec, (*i)++ - spec, o);
}

enum err jinja_fmt_format(struct je *e, const struct jn *at, const struct jv *self,
			  const struct je_args *a, struct jv *out)
{
	const struct jv_str *f = self->u.s;
	struct buf o;
	size_t i = 0, auto_n = 0;
	int mode = 0;
	enum err r = ERR_OK;

	if (memchr(f->data, 0, f->len))
		return jinja_util_refuse(e, at, "a format string with a NUL character");
	buf_init(&o, jinja_util_buf_cap(e));
	while (i < f->len && !r) {
		char c = f->data[i++];

		if ((c == '{' || c == '}') && i < f->len && f->data[i] == c)
			r = buf_putc(&o, f->data[i++]) ? NOMEM(e, at) : ERR_OK;
		else if (c == '}')
			r = jinja_util_reject(e, at, "ValueError: Single '}' encountered in format "
					      "string");
		else if (c == '{' && i >= f->len)
			r = jinja_util_reject(e, at, "ValueError: Single '{' encountered in format "
					      "string");
		else if (c == '{')
			r = format_field(e, at, f, &i, a, &auto_n, &mode, &o);
		else
			r = buf_putc(&o, c) ? NOMEM(e, at) : ERR_OK;
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	return r;
}
