/*
 * tpl_py — Python json.dumps and str.strip (see tpl_py.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpl_py.h"
#include "uni.h"

enum err tpl_py_string(const char *s, struct buf *out)
{
	enum err e = buf_putc(out, '"');

	for (; !e && *s; s++) {
		unsigned char c = (unsigned char)*s;

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

/* Python's repr(float): the shortest digits that round-trip, fixed notation
 * for 1e-4 <= |x| < 1e16, else d.ddde+XX. */
static enum err py_float(double x, struct buf *out)
{
	char tmp[40], digits[24];
	int prec, exp10, nd = 0, i;
	const char *p;

	if (isnan(x))
		return buf_puts(out, "NaN");
	if (isinf(x))
		return buf_puts(out, x < 0 ? "-Infinity" : "Infinity");
	for (prec = 0; prec < 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	p = tmp;
	if (*p == '-')
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	exp10 = (int)strtol(p + 1, NULL, 10);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (x < 0 && buf_putc(out, '-'))
		return ERR_NOMEM;
	if (exp10 >= -4 && exp10 < 16) {
		struct buf *b = out;
		enum err e = ERR_OK;

		if (exp10 < 0) {
			e = buf_puts(b, "0.");
			for (i = -1; !e && i > exp10; i--)
				e = buf_putc(b, '0');
			return e ? e : buf_append(b, digits, (size_t)nd);
		}
		for (i = 0; !e && i <= exp10; i++)
			e = buf_putc(b, i < nd ? digits[i] : '0');
		if (!e)
			e = buf_putc(b, '.');
		if (!e && nd > exp10 + 1)
			return buf_append(b, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
		return e ? e : buf_putc(b, '0');
	}
	if (buf_putc(out, digits[0]) || (nd > 1 && (buf_putc(out, '.') ||
						   buf_append(out, digits + 1, (size_t)(nd - 1)))))
		return ERR_NOMEM;
	return buf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
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
		return tpl_py_string(v->valuestring, out);
	if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;

		if (x == floor(x) && fabs(x) < 9007199254740992.0)
			return buf_printf(out, "%lld", (long long)x);
		return py_float(x, out);
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
			e = tpl_py_string(c->string, out);
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
