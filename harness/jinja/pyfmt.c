/* pyfmt — see pyfmt.h. Follows CPython 3.11: Objects/floatobject.c
 * (float_repr, 'r' format: exponent form when the decimal point position is
 * < -3 or > 16), Objects/unicodeobject.c (unicode_repr) and Lib/json/encoder.py. */
#include "pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "base/mem.h"
#include "base/utf8.h"

#define NOMEM(d) diag_fail(d, ERR_NOMEM, "out of memory")

/* Shortest digits that round-trip (glibc printf rounds correctly): digits
 * without dot into `dig`, the decimal point position (value =
 * 0.DIGITS x 10^decpt) returned. */
static int shortest_digits(double f, char *dig, size_t cap)
{
	char tmp[40];
	int p, exp10 = 0;
	size_t n = 0, i;

	for (p = 0; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	for (i = 0; tmp[i] && tmp[i] != 'e'; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9' && n + 1 < cap)
			dig[n++] = tmp[i];
	if (tmp[i] == 'e')
		exp10 = atoi(tmp + i + 1);
	while (n > 1 && dig[n - 1] == '0')
		n--;
	dig[n] = 0;
	return exp10 + 1;
}

enum err pyfmt_float(double f, struct buf *out)
{
	char dig[40];
	int decpt, n, i;
	enum err e = ERR_OK;

	if (isnan(f))
		return buf_puts(out, "nan");
	if (isinf(f))
		return buf_puts(out, f < 0 ? "-inf" : "inf");
	if (signbit(f) && (e = buf_putc(out, '-')))
		return e;
	f = fabs(f);
	if (f == 0.0)
		return buf_puts(out, "0.0");
	decpt = shortest_digits(f, dig, sizeof(dig));
	n = (int)strlen(dig);
	if (decpt < -3 || decpt > 16) {
		e = buf_putc(out, dig[0]);
		if (!e && n > 1)
			e = buf_printf(out, ".%s", dig + 1);
		if (!e)
			e = buf_printf(out, "e%c%02d", decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
		return e;
	}
	if (decpt <= 0) {
		e = buf_puts(out, "0.");
		for (i = 0; !e && i < -decpt; i++)
			e = buf_putc(out, '0');
		return e ? e : buf_puts(out, dig);
	}
	if (decpt >= n) {
		e = buf_puts(out, dig);
		for (i = n; !e && i < decpt; i++)
			e = buf_putc(out, '0');
		return e ? e : buf_puts(out, ".0");
	}
	e = buf_append(out, dig, (size_t)decpt);
	return e ? e : buf_printf(out, ".%s", dig + decpt);
}

/* str.isprintable for one non-ASCII code point: 1 printable, 0 not, -1 the
 * answer depends on the Unicode version (utf8proc's 13.0 against Python's). */
static int printable(uint32_t cp)
{
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);

	if (cp > 0xFFFF && !(cp >= 0x1F300 && cp <= 0x1F64F) &&
	    !(cp >= 0x20000 && cp <= 0x2A6D6))
		return -1;
	switch (c) {
	case UTF8PROC_CATEGORY_CN:
		return -1;
	case UTF8PROC_CATEGORY_CC:
	case UTF8PROC_CATEGORY_CF:
	case UTF8PROC_CATEGORY_CS:
	case UTF8PROC_CATEGORY_CO:
	case UTF8PROC_CATEGORY_ZL:
	case UTF8PROC_CATEGORY_ZP:
	case UTF8PROC_CATEGORY_ZS:
		return 0;
	default:
		return 1;
	}
}

static enum err repr_escape(uint32_t cp, struct buf *out)
{
	if (cp < 0x100)
		return buf_printf(out, "\\x%02x", cp);
	if (cp < 0x10000)
		return buf_printf(out, "\\u%04x", cp);
	return buf_printf(out, "\\U%08x", cp);
}

static enum err repr_char(const char *s, size_t n, size_t *i, char quote,
			  struct buf *out, struct diag *d)
{
	unsigned char c = (unsigned char)s[*i];
	uint32_t cp;
	size_t k;
	int p;

	if (c < 0x80) {
		(*i)++;
		if (c == '\\' || c == (unsigned char)quote)
			return buf_printf(out, "\\%c", c);
		if (c == '\n')
			return buf_puts(out, "\\n");
		if (c == '\r')
			return buf_puts(out, "\\r");
		if (c == '\t')
			return buf_puts(out, "\\t");
		if (c < 0x20 || c == 0x7F)
			return repr_escape(c, out);
		return buf_putc(out, (char)c);
	}
	k = utf8_decode(s + *i, n - *i, &cp);
	p = printable(cp);
	if (p < 0)
		return diag_fail(d, ERR_UNSUPPORTED,
				 "repr of U+%04X depends on the server's Unicode version", cp);
	if (!p) {
		*i += k;
		return repr_escape(cp, out);
	}
	*i += k;
	return buf_append(out, s + *i - k, k);
}

static enum err repr_string(const struct jv_str *str, struct buf *out, struct diag *d)
{
	char quote = '\'';
	size_t i;

	if (memchr(str->data, '\'', str->len) && !memchr(str->data, '"', str->len))
		quote = '"';
	if (buf_putc(out, quote))
		return NOMEM(d);
	for (i = 0; i < str->len;) {
		enum err e = repr_char(str->data, str->len, &i, quote, out, d);

		if (e)
			return d->code ? d->code : NOMEM(d);
	}
	return buf_putc(out, quote) ? NOMEM(d) : ERR_OK;
}

static enum err repr_at(const struct jv *v, int level, struct buf *out, struct diag *d);

static enum err repr_seq(const struct jv *v, int level, struct buf *out, struct diag *d)
{
	const struct jv_seq *l = v->u.l;
	int tuple = v->k == JV_TUPLE;
	size_t i;

	if (buf_putc(out, tuple ? '(' : '['))
		return NOMEM(d);
	for (i = 0; i < l->n; i++) {
		if (i && buf_puts(out, ", "))
			return NOMEM(d);
		if (repr_at(&l->v[i], level, out, d))
			return d->code;
	}
	if (tuple && l->n == 1 && buf_putc(out, ','))
		return NOMEM(d);
	return buf_putc(out, tuple ? ')' : ']') ? NOMEM(d) : ERR_OK;
}

/* dict_keys(['a']), dict_values([1]), dict_items([('a', 1)]). */
static enum err repr_view(const struct jv *v, int level, struct buf *out, struct diag *d)
{
	struct jv list = *v;
	const char *name = v->flags & JV_F_KEYS ? "dict_keys" : v->flags & JV_F_VALUES ? "dict_values"
			   : "dict_items";

	list.flags = 0;
	if (buf_printf(out, "%s(", name))
		return NOMEM(d);
	if (repr_seq(&list, level, out, d))
		return d->code;
	return buf_putc(out, ')') ? NOMEM(d) : ERR_OK;
}

static enum err repr_dict(const struct jv *v, int level, struct buf *out, struct diag *d)
{
	const struct jv_dict *m = v->u.d;
	size_t i;

	if (v->k == JV_NS && buf_puts(out, "<Namespace "))
		return NOMEM(d);
	if (buf_putc(out, '{'))
		return NOMEM(d);
	for (i = 0; i < m->n; i++) {
		if (i && buf_puts(out, ", "))
			return NOMEM(d);
		if (repr_at(&m->keys[i], level, out, d))
			return d->code;
		if (buf_puts(out, ": "))
			return NOMEM(d);
		if (repr_at(&m->vals[i], level, out, d))
			return d->code;
	}
	if (buf_putc(out, '}') || (v->k == JV_NS && buf_putc(out, '>')))
		return NOMEM(d);
	return ERR_OK;
}

/* repr(v) inside `level` containers. */
static enum err repr_at(const struct jv *v, int level, struct buf *out, struct diag *d)
{
	enum err e = ERR_OK;

	if (level > JV_MAX_DEPTH)
		return diag_fail(d, ERR_UNSUPPORTED, "printing values nested deeper than %d "
				 "(Python raises RecursionError)", JV_MAX_DEPTH);
	switch (v->k) {
	case JV_UNDEF: /* jinja2's Undefined.__repr__ */
		e = buf_puts(out, "Undefined");
		break;
	case JV_NONE:
		e = buf_puts(out, "None");
		break;
	case JV_BOOL:
		e = buf_puts(out, v->u.i ? "True" : "False");
		break;
	case JV_INT:
		e = buf_printf(out, "%lld", (long long)v->u.i);
		break;
	case JV_BIGINT:
		e = buf_puts(out, v->u.s->data);
		break;
	case JV_FLOAT:
		e = pyfmt_float(v->u.f, out);
		break;
	case JV_STR:
		if (v->flags & JV_F_MARKUP)
			return diag_fail(d, ERR_UNSUPPORTED, "repr of a Markup string");
		return repr_string(v->u.s, out, d);
	case JV_LIST:
	case JV_TUPLE:
		if (v->flags & JV_F_VIEW)
			return repr_view(v, level + 1, out, d);
		if (v->flags & (JV_F_GEN | JV_F_RANGE))
			return diag_fail(d, ERR_UNSUPPORTED, "printing a %s object",
					 jinja_value_type_name(v));
		return repr_seq(v, level + 1, out, d);
	case JV_DICT:
	case JV_NS:
		return repr_dict(v, level + 1, out, d);
	default:
		return diag_fail(d, ERR_UNSUPPORTED, "printing a %s object",
				 jinja_value_type_name(v));
	}
	return e ? NOMEM(d) : ERR_OK;
}

enum err pyfmt_repr(const struct jv *v, struct buf *out, struct diag *d)
{
	return repr_at(v, 0, out, d);
}

enum err pyfmt_str(const struct jv *v, struct buf *out, struct diag *d)
{
	if (v->k == JV_UNDEF)
		return ERR_OK;
	if (v->k == JV_STR)
		return buf_append(out, v->u.s->data, v->u.s->len) ? NOMEM(d) : ERR_OK;
	return pyfmt_repr(v, out, d);
}

/* --- json.dumps --- */

enum err pyfmt_json_string(const char *s, size_t n, int ascii, struct buf *out)
{
	size_t i = 0, k;
	enum err e = buf_putc(out, '"');
	uint32_t cp;

	while (!e && i < n) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x80) {
			k = utf8_decode(s + i, n - i, &cp);
			if (!ascii)
				e = buf_append(out, s + i, k);
			else if (cp < 0x10000)
				e = buf_printf(out, "\\u%04x", cp);
			else
				e = buf_printf(out, "\\u%04x\\u%04x",
					       0xD800 + ((cp - 0x10000) >> 10),
					       0xDC00 + ((cp - 0x10000) & 0x3FF));
			i += k;
			continue;
		}
		i++;
		switch (c) {
		case '"': e = buf_puts(out, "\\\""); break;
		case '\\': e = buf_puts(out, "\\\\"); break;
		case '\n': e = buf_puts(out, "\\n"); break;
		case '\r': e = buf_puts(out, "\\r"); break;
		case '\t': e = buf_puts(out, "\\t"); break;
		case '\b': e = buf_puts(out, "\\b"); break;
		case '\f': e = buf_puts(out, "\\f"); break;
		default:
			e = c < 0x20 ? buf_printf(out, "\\u%04x", c) : buf_putc(out, (char)c);
		}
	}
	return e ? e : buf_putc(out, '"');
}

static enum err json_value(const struct jv *v, const struct pyfmt_json *o, int level,
			   struct buf *out, struct diag *d);

static enum err json_newline(const struct pyfmt_json *o, int level, struct buf *out)
{
	int i;
	enum err e = buf_putc(out, '\n');

	for (i = 0; !e && i < level * o->indent; i++)
		e = buf_putc(out, ' ');
	return e;
}

static const char *item_sep(const struct pyfmt_json *o)
{
	return o->item_sep ? o->item_sep : o->indent >= 0 ? "," : ", ";
}

static enum err json_seq(const struct jv *v, const struct pyfmt_json *o, int level,
			 struct buf *out, struct diag *d)
{
	const struct jv_seq *l = v->u.l;
	size_t i;

	if (!l->n)
		return buf_puts(out, "[]") ? NOMEM(d) : ERR_OK;
	if (buf_putc(out, '['))
		return NOMEM(d);
	for (i = 0; i < l->n; i++) {
		if (i && buf_puts(out, item_sep(o)))
			return NOMEM(d);
		if (o->indent >= 0 && json_newline(o, level + 1, out))
			return NOMEM(d);
		if (json_value(&l->v[i], o, level + 1, out, d))
			return d->code;
	}
	if (o->indent >= 0 && json_newline(o, level, out))
		return NOMEM(d);
	return buf_putc(out, ']') ? NOMEM(d) : ERR_OK;
}

/* A dict key as json.dumps writes it: str as is, numbers, bools and None by
 * their JSON spelling; other keys are a TypeError. */
static enum err json_key(const struct jv *k, const struct pyfmt_json *o, struct buf *out,
			 struct diag *d)
{
	struct buf tmp;
	enum err e;

	if (k->k == JV_STR)
		return pyfmt_json_string(k->u.s->data, k->u.s->len, o->ensure_ascii, out) ? NOMEM(d) : ERR_OK;
	if (k->k == JV_BOOL || k->k == JV_NONE)
		return pyfmt_json_string(k->k == JV_NONE ? "null" : k->u.i ? "true" : "false",
				   k->k == JV_NONE ? 4 : k->u.i ? 4 : 5, 0, out) ? NOMEM(d) : ERR_OK;
	if (k->k != JV_INT && k->k != JV_BIGINT && k->k != JV_FLOAT)
		return diag_fail(d, ERR_INPUT,
				 "TypeError: keys must be str, int, float, bool or None, not %s",
				 jinja_value_type_name(k));
	buf_init(&tmp, out->max);
	e = json_value(k, o, 0, &tmp, d);
	if (!e && pyfmt_json_string(tmp.data, tmp.len, 0, out))
		e = NOMEM(d);
	buf_release(&tmp);
	return e;
}

static int key_cmp(const struct jv *a, const struct jv *b)
{
	size_t n = a->u.s->len < b->u.s->len ? a->u.s->len : b->u.s->len;
	int c = memcmp(a->u.s->data, b->u.s->data, n);

	return c ? c : (a->u.s->len > b->u.s->len) - (a->u.s->len < b->u.s->len);
}

/* Entry order for sort_keys: insertion sort of indexes (dicts are small). */
static enum err sorted_order(const struct jv_dict *m, size_t *idx, struct diag *d)
{
	size_t i, j;

	for (i = 0; i < m->n; i++) {
		if (m->keys[i].k != JV_STR)
			return diag_fail(d, ERR_UNSUPPORTED,
					 "tojson sort_keys with non-string keys");
		for (j = i; j > 0 && key_cmp(&m->keys[idx[j - 1]], &m->keys[i]) > 0; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return ERR_OK;
}

static enum err json_dict(const struct jv *v, const struct pyfmt_json *o, int level,
			  struct buf *out, struct diag *d)
{
	const struct jv_dict *m = v->u.d;
	size_t i, *idx = NULL;
	enum err e = ERR_OK;

	if (!m->n)
		return buf_puts(out, "{}") ? NOMEM(d) : ERR_OK;
	if (o->sort_keys) {
		idx = mem_alloc(m->n * sizeof(*idx));
		if (!idx)
			return NOMEM(d);
		if ((e = sorted_order(m, idx, d)))
			goto out;
	}
	if (buf_putc(out, '{'))
		goto nomem;
	for (i = 0; i < m->n; i++) {
		size_t k = idx ? idx[i] : i;

		if (i && buf_puts(out, item_sep(o)))
			goto nomem;
		if (o->indent >= 0 && json_newline(o, level + 1, out))
			goto nomem;
		if ((e = json_key(&m->keys[k], o, out, d)))
			goto out;
		if (buf_puts(out, o->key_sep ? o->key_sep : ": "))
			goto nomem;
		if ((e = json_value(&m->vals[k], o, level + 1, out, d)))
			goto out;
	}
	if ((o->indent >= 0 && json_newline(o, level, out)) || buf_putc(out, '}'))
		goto nomem;
	goto out;
nomem:
	e = NOMEM(d);
out:
	mem_free(idx);
	return e;
}

static enum err json_value(const struct jv *v, const struct pyfmt_json *o, int level,
			   struct buf *out, struct diag *d)
{
	enum err e = ERR_OK;

	if (level > JV_MAX_DEPTH)
		return diag_fail(d, ERR_UNSUPPORTED, "tojson of values nested deeper than %d "
				 "(Python raises RecursionError)", JV_MAX_DEPTH);
	switch (v->k) {
	case JV_NONE:
		e = buf_puts(out, "null");
		break;
	case JV_BOOL:
		e = buf_puts(out, v->u.i ? "true" : "false");
		break;
	case JV_INT:
	case JV_BIGINT:
		return pyfmt_repr(v, out, d);
	case JV_FLOAT:
		if (isnan(v->u.f))
			e = buf_puts(out, "NaN");
		else if (isinf(v->u.f))
			e = buf_puts(out, v->u.f < 0 ? "-Infinity" : "Infinity");
		else
			e = pyfmt_float(v->u.f, out);
		break;
	case JV_STR:
		e = pyfmt_json_string(v->u.s->data, v->u.s->len, o->ensure_ascii, out);
		break;
	case JV_LIST:
	case JV_TUPLE:
		if (v->flags & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE))
			return diag_fail(d, ERR_INPUT,
					 "TypeError: Object of type %s is not JSON serializable",
					 jinja_value_type_name(v));
		return json_seq(v, o, level, out, d);
	case JV_DICT:
		return json_dict(v, o, level, out, d);
	default:
		return diag_fail(d, ERR_INPUT,
				 "TypeError: Object of type %s is not JSON serializable",
				 jinja_value_type_name(v));
	}
	return e ? NOMEM(d) : ERR_OK;
}

enum err pyfmt_json(const struct jv *v, const struct pyfmt_json *o, struct buf *out,
		    struct diag *d)
{
	return json_value(v, o, 0, out, d);
}
