/*
 * tpl_py — Python json.dumps and str.strip (see tpl_py.h); floats are
 * pyfmt's repr.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pyfmt.h"
#include "tpl_py.h"
#include "uni.h"

/* The number token at `s` (its length to *n): whether cJSON keeps it. */
static int number_exact(const char *s, size_t *n)
{
	char *end;
	double x = strtod(s, &end);
	int integral_lexeme = 1;
	const char *p;

	*n = (size_t)(end - s);
	if (!*n) {
		*n = 1;
		return 1;
	}
	for (p = s; p < end; p++)
		if (*p == '.' || *p == 'e' || *p == 'E')
			integral_lexeme = 0;
	if (fabs(x) >= 9007199254740992.0)
		return !integral_lexeme;
	return integral_lexeme || x != floor(x);
}

int tpl_py_numbers_exact(const char *s)
{
	int in_str = 0;
	size_t n;

	while (*s) {
		if (in_str) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				in_str = 0;
			s++;
		} else if (*s == '"') {
			in_str = 1;
			s++;
		} else if (*s == '-' || (*s >= '0' && *s <= '9')) {
			if (!number_exact(s, &n))
				return 0;
			s += n;
		} else {
			s++;
		}
	}
	return 1;
}

enum err tpl_pyjson(const cJSON *v, struct buf *out)
{
	const cJSON *c;
	enum err e = ERR_OK;

	if (cJSON_IsNull(v))
		return buf_puts(out, "null");
	if (cJSON_IsTrue(v))
		return buf_puts(out, "true");
	if (cJSON_IsFalse(v))
		return buf_puts(out, "false");
	if (cJSON_IsString(v))
		return pyfmt_json_string(v->valuestring, strlen(v->valuestring), 0, out);
	if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;

		if (x == floor(x) && fabs(x) < 9007199254740992.0)
			return buf_printf(out, "%lld", (long long)x);
		if (isnan(x))
			return buf_puts(out, "NaN");
		if (isinf(x))
			return buf_puts(out, x < 0 ? "-Infinity" : "Infinity");
		return pyfmt_float(x, out);
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

	while (a < len && (n = uni_decode(s + a, len - a, &cp)) && is_py_space(cp))
		a += n;
	for (i = a; i < len; i += n) {
		n = uni_decode(s + i, len - i, &cp);
		if (!is_py_space(cp))
			last_end = i + n;
	}
	b = last_end > a ? last_end : a;
	return buf_append(out, s + a, b - a);
}
