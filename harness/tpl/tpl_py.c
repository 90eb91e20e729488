/*
 * tpl_py — Python json.dumps and str.strip (see tpl_py.h); floats are
 * pyfmt's repr.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/utf8.h"
#include "jinja/pyfmt.h"
#include "tpl_py.h"

/* ---- request JSON as json.loads reads it (tpl_py_parse) ----------------- */

/* Where the next number lexeme is looked for. */
struct lexcur {
	const char *s;
	size_t len, pos;
};

/* Whether the `n` bytes at `s` are a JSON number as json.loads reads one:
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (cJSON also takes "01" and "1."). */
static int strict_number(const char *s, size_t n)
{
	size_t i = 0, k;

	i += i < n && s[i] == '-';
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		for (k = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == k)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		i += i < n && (s[i] == '+' || s[i] == '-');
		for (k = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == k)
			return 0;
	}
	return i == n;
}

/* The next number token outside strings: its start and length. */
static int next_lexeme(struct lexcur *c, const char **at, size_t *n)
{
	const char *s = c->s;
	size_t i = c->pos, j;

	while (i < c->len && s[i] != '-' && (s[i] < '0' || s[i] > '9')) {
		if (s[i] == '"')
			for (i++; i < c->len && s[i] != '"'; i++)
				i += s[i] == '\\';
		i++;
	}
	if (i >= c->len)
		return 0;
	for (j = i; j < c->len && strchr("+-0123456789.eE", s[j]) && s[j]; j++)
		;
	*at = s + i;
	*n = j - i;
	c->pos = j;
	return 1;
}

/* json.loads keeps a repeated key at its first position with its last value. */
static void dedupe_keys(cJSON *o)
{
	cJSON *c, *p, *next;

	for (c = o->child; c; c = next) {
		next = c->next;
		for (p = o->child; p != c && strcmp(p->string, c->string); p = p->next)
			;
		if (p != c)
			cJSON_ReplaceItemViaPointer(o, p, cJSON_DetachItemViaPointer(o, c));
	}
}

/* Turns every number of `v` into a raw item holding its lexeme (document
 * order pairs nodes and lexemes), and dedupes keys. */
static enum err keep_lexemes(cJSON *v, struct lexcur *c, const char *what, struct diag *d)
{
	const char *at;
	size_t n;
	cJSON *it;
	enum err e = ERR_OK;

	if (cJSON_IsNumber(v)) {
		if (!next_lexeme(c, &at, &n))
			return diag_fail(d, ERR_INTERNAL, "%s: a number without its text", what);
		if (!strict_number(at, n))
			return diag_fail(d, ERR_INPUT, "cannot parse %s: '%.*s' at byte %zu is not a JSON "
					 "number (Python's json.loads rejects it)", what, (int)(n > 40 ? 40 : n),
					 at, (size_t)(at - c->s));
		v->valuestring = cJSON_malloc(n + 1);
		if (!v->valuestring)
			return diag_fail(d, ERR_NOMEM, "out of memory parsing %s", what);
		memcpy(v->valuestring, at, n);
		v->valuestring[n] = 0;
		v->type = cJSON_Raw;
		return ERR_OK;
	}
	for (it = v->child; it && !e; it = it->next)
		e = keep_lexemes(it, c, what, d);
	if (!e && cJSON_IsObject(v))
		dedupe_keys(v);
	return e;
}

enum err tpl_py_parse(const char *text, size_t len, cJSON **out, const char *what,
		      struct diag *d)
{
	struct lexcur c = {text, len, 0};
	enum err e = json_parse(text, len, out, what, d);

	if (!e)
		e = keep_lexemes(*out, &c, what, d);
	if (e) {
		cJSON_Delete(*out);
		*out = NULL;
	}
	return e;
}

/* Whether `v` holds anything json.loads would read differently from the
 * tree: a cJSON number (its lexeme is cJSON's printing) or a repeated key. */
static int needs_reading(const cJSON *v)
{
	const cJSON *c, *p;

	if (cJSON_IsNumber(v))
		return 1;
	for (c = v->child; c; c = c->next) {
		if (needs_reading(c))
			return 1;
		for (p = cJSON_IsObject(v) ? v->child : c; p != c; p = p->next)
			if (!strcmp(p->string, c->string))
				return 1;
	}
	return 0;
}

enum err tpl_py_as_sent(const cJSON *v, cJSON **owned, const char *what, struct diag *d)
{
	char *txt;
	enum err e;

	*owned = NULL;
	if (!v || !needs_reading(v))
		return ERR_OK;
	txt = cJSON_PrintUnformatted(v);
	if (!txt)
		return diag_fail(d, ERR_NOMEM, "out of memory printing %s", what);
	e = tpl_py_parse(txt, strlen(txt), owned, what, d);
	cJSON_free(txt);
	return e;
}

int tpl_py_number(const cJSON *v, double *x)
{
	if (cJSON_IsNumber(v) || (cJSON_IsRaw(v) && v->valuestring &&
				  (v->valuestring[0] == '-' || (v->valuestring[0] >= '0' && v->valuestring[0] <= '9')))) {
		*x = v->valuedouble;
		return 1;
	}
	return 0;
}

/* json.dumps of a float. */
static enum err py_float(double x, struct buf *out)
{
	if (isnan(x))
		return buf_puts(out, "NaN");
	if (isinf(x))
		return buf_puts(out, x < 0 ? "-Infinity" : "Infinity");
	return pyfmt_float(x, out);
}

/* json.dumps(json.loads(lexeme)) for a lexeme kept by tpl_py_parse (worth
 * `x`): an integer as written ("-0" is int 0), a float as its repr. */
static enum err raw_number(const char *lexeme, double x, struct buf *out)
{
	if (strpbrk(lexeme, ".eE"))
		return py_float(x, out);
	return buf_puts(out, strcmp(lexeme, "-0") ? lexeme : "0");
}

enum err tpl_pyjson(const cJSON *v, struct buf *out)
{
	const cJSON *c;
	double x;
	enum err e = ERR_OK;

	if (cJSON_IsNull(v))
		return buf_puts(out, "null");
	if (cJSON_IsTrue(v))
		return buf_puts(out, "true");
	if (cJSON_IsFalse(v))
		return buf_puts(out, "false");
	if (cJSON_IsString(v))
		return pyfmt_json_string(v->valuestring, strlen(v->valuestring), 0, out);
	if (cJSON_IsRaw(v)) /* a lexeme of tpl_py_parse, else json_add_strn's literal */
		return tpl_py_number(v, &x) ? raw_number(v->valuestring, x, out) : buf_puts(out, v->valuestring);
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9007199254740992.0)
			return buf_printf(out, "%lld", (long long)v->valuedouble);
		return py_float(v->valuedouble, out);
	}
	if (cJSON_IsArray(v)) {
		e = buf_putc(out, '[');
		cJSON_ArrayForEach(c, v) {
			if (!e && c != v->child)
				e = buf_puts(out, ", ");
			if (!e)
				e = tpl_pyjson(c, out);
		}
		return e ? e : buf_putc(out, ']');
	}
	e = buf_putc(out, '{');
	cJSON_ArrayForEach(c, v) {
		if (!e && c != v->child)
			e = buf_puts(out, ", ");
		if (!e)
			e = pyfmt_json_string(c->string, strlen(c->string), 0, out);
		if (!e)
			e = buf_puts(out, ": ");
		if (!e)
			e = tpl_pyjson(c, out);
	}
	return e ? e : buf_putc(out, '}');
}

static int is_py_space(uint32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
	       cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

enum err tpl_py_strip(const char *s, struct buf *out)
{
	size_t len = strlen(s), a = 0, b, n, i, last_end = 0;
	uint32_t cp;

	while (a < len && (n = utf8_decode(s + a, len - a, &cp)) && is_py_space(cp))
		a += n;
	for (i = a; i < len; i += n) {
		n = utf8_decode(s + i, len - i, &cp);
		if (!is_py_space(cp))
			last_end = i + n;
	}
	b = last_end > a ? last_end : a;
	return buf_append(out, s + a, b - a);
}
