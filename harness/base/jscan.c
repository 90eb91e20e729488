#include "jscan.h"
#include "utf8.h"

#include <stdint.h>
#include <string.h>

void jscan_init(struct jscan *j, const char *s, size_t len, const char *name)
{
	j->s = s;
	j->len = len;
	j->pos = 0;
	j->name = name;
}

enum err jscan_fail(struct jscan *j, struct diag *d, const char *what)
{
	size_t line = 1, col = 1, i, at = j->pos < j->len ? j->pos : j->len;

	for (i = 0; i < at; i++) {
		if (j->s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (j->pos >= j->len)
		return diag_fail(d, ERR_INPUT,
				 "cannot parse '%s': line %zu, column %zu (byte %zu): "
				 "unexpected end of file, %s",
				 j->name, line, col, at, what);
	return diag_fail(d, ERR_INPUT,
			 "cannot parse '%s': line %zu, column %zu (byte %zu): %s",
			 j->name, line, col, at, what);
}

int jscan_peek(struct jscan *j)
{
	const char *s = j->s;
	size_t pos = j->pos, len = j->len;
	uint64_t v;

	while (pos < len) {
		char c = s[pos];

		if (c == ' ') {
			/* pretty-printed files indent every entry: 8 spaces a step */
			while (pos + 8 <= len) {
				memcpy(&v, s + pos, 8);
				if (v != 0x2020202020202020ULL)
					break;
				pos += 8;
			}
			while (pos < len && s[pos] == ' ')
				pos++;
			continue;
		}
		if (c != '\n' && c != '\r' && c != '\t') {
			j->pos = pos;
			return (unsigned char)c;
		}
		pos++;
	}
	j->pos = pos;
	return -1;
}

static enum err expected(struct jscan *j, char c, struct diag *d)
{
	char what[16] = "expected ' '";

	what[10] = c;
	return jscan_fail(j, d, what);
}

enum err jscan_expect(struct jscan *j, char c, struct diag *d)
{
	if (j->pos < j->len && j->s[j->pos] == c) { /* no whitespace: the usual case */
		j->pos++;
		return ERR_OK;
	}
	if (jscan_peek(j) == (unsigned char)c) {
		j->pos++;
		return ERR_OK;
	}
	return expected(j, c, d);
}

int jscan_open(struct jscan *j, char open, struct diag *d)
{
	if (jscan_expect(j, open, d))
		return -1;
	if (jscan_peek(j) == (open == '{' ? '}' : ']')) {
		j->pos++;
		return 0;
	}
	return 1;
}

int jscan_next(struct jscan *j, char close, struct diag *d)
{
	int c = jscan_peek(j);

	j->pos += c >= 0;
	if (c == ',')
		return 1;
	if (c == (unsigned char)close)
		return 0;
	j->pos -= c >= 0;
	jscan_fail(j, d, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	return -1;
}

static int hex4(const char *p, uint32_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		int x = utf8_hexval((unsigned char)p[i]);

		if (x < 0)
			return -1;
		*v = *v << 4 | (uint32_t)x;
	}
	return 0;
}

/* Decodes the escape at j->pos (just after the backslash) into `o`. */
static enum err unescape(struct jscan *j, char *o, size_t *n, struct diag *d)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;
	uint32_t cp, lo;

	if (j->pos >= j->len)
		return jscan_fail(j, d, "inside a string");
	k = strchr(from, j->s[j->pos]);
	if (k && *k) {
		o[0] = to[k - from];
		*n = 1;
		j->pos++;
		return ERR_OK;
	}
	if (j->s[j->pos] != 'u')
		return jscan_fail(j, d, "bad escape in a string");
	if (j->len - j->pos < 5 || hex4(j->s + j->pos + 1, &cp))
		return jscan_fail(j, d, "bad \\u escape in a string");
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return jscan_fail(j, d, "lone low surrogate in a string");
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (j->len - j->pos < 11 || j->s[j->pos + 5] != '\\' ||
		    j->s[j->pos + 6] != 'u' || hex4(j->s + j->pos + 7, &lo) ||
		    lo < 0xDC00 || lo > 0xDFFF)
			return jscan_fail(j, d, "lone high surrogate in a string");
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		j->pos += 6;
	}
	j->pos += 5;
	*n = utf8_encode(cp, o);
	return ERR_OK;
}

/* Scans a string body from j->pos (after the quote) to the closing quote,
 * decoding into `out` when it is non-NULL. */
static enum err scan_string(struct jscan *j, struct buf *out, struct diag *d)
{
	for (;;) {
		const char *p = j->s + j->pos, *end = j->s + j->len;
		size_t run;
		char esc[4];
		size_t n = 0;

		p = jscan_plain_end(p, end);
		run = (size_t)(p - (j->s + j->pos));
		if (out && run && buf_append(out, j->s + j->pos, run))
			return diag_fail(d, ERR_NOMEM, "cannot parse '%s': out of memory", j->name);
		j->pos += run;
		if (p >= end)
			return jscan_fail(j, d, "inside a string");
		if (*p == '"') {
			j->pos++;
			return ERR_OK;
		}
		if (*p != '\\')
			return jscan_fail(j, d, "control character in a string");
		j->pos++;
		if (unescape(j, esc, &n, d))
			return d->code;
		if (out && buf_append(out, esc, n))
			return diag_fail(d, ERR_NOMEM, "cannot parse '%s': out of memory", j->name);
	}
}

enum err jscan_string(struct jscan *j, struct buf *scratch, const char **out,
		      size_t *n, struct diag *d)
{
	const char *p, *end;
	size_t start;

	if (jscan_expect(j, '"', d))
		return jscan_fail(j, d, "expected a string");
	start = j->pos;
	p = j->s + start;
	end = j->s + j->len;
	p = jscan_plain_end(p, end);
	if (p < end && *p == '"') {
		*out = j->s + start;
		*n = (size_t)(p - *out);
		j->pos = (size_t)(p - j->s) + 1;
		return ERR_OK;
	}
	buf_reset(scratch);
	if (scan_string(j, scratch, d))
		return d->code;
	*out = scratch->data;
	*n = scratch->len;
	return ERR_OK;
}

enum err jscan_uint(struct jscan *j, unsigned long long max,
		    unsigned long long *v, struct diag *d)
{
	size_t start;

	if (jscan_peek(j) < '0' || jscan_peek(j) > '9')
		return jscan_fail(j, d, "expected a non-negative integer");
	start = j->pos;
	{
		const char *s = j->s;
		size_t pos = start, len = j->len;
		unsigned long long x = 0;

		while (pos < len && s[pos] >= '0' && s[pos] <= '9') {
			unsigned digit = (unsigned)(s[pos] - '0');

			if (x > max / 10 || (x == max / 10 && digit > max % 10))
				return jscan_fail(j, d, "integer out of range");
			x = x * 10 + digit;
			pos++;
		}
		j->pos = pos;
		*v = x;
		if (pos < len && (s[pos] == '.' || s[pos] == 'e' || s[pos] == 'E'))
			return jscan_fail(j, d, "expected an integer");
	}
	return ERR_OK;
}

static enum err skip_number(struct jscan *j, struct diag *d)
{
	size_t digits = 0;

	if (j->s[j->pos] == '-')
		j->pos++;
	while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9')
		j->pos++, digits++;
	if (!digits)
		return jscan_fail(j, d, "bad number");
	if (j->pos < j->len && j->s[j->pos] == '.') {
		j->pos++;
		for (digits = 0; j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9'; digits++)
			j->pos++;
		if (!digits)
			return jscan_fail(j, d, "bad number");
	}
	if (j->pos < j->len && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
		j->pos++;
		if (j->pos < j->len && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
			j->pos++;
		for (digits = 0; j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9'; digits++)
			j->pos++;
		if (!digits)
			return jscan_fail(j, d, "bad number");
	}
	return ERR_OK;
}

static enum err skip_word(struct jscan *j, const char *w, struct diag *d)
{
	size_t n = strlen(w);

	if (j->len - j->pos < n || memcmp(j->s + j->pos, w, n))
		return jscan_fail(j, d, "expected a value");
	j->pos += n;
	return ERR_OK;
}

static enum err skip_value(struct jscan *j, int depth, struct diag *d)
{
	int c = jscan_peek(j), more;

	if (depth > JSCAN_MAX_DEPTH)
		return jscan_fail(j, d, "nested too deeply");
	switch (c) {
	case '"':
		j->pos++;
		return scan_string(j, NULL, d);
	case '{':
	case '[':
		more = jscan_open(j, (char)c, d);
		while (more > 0) {
			if (c == '{' && (jscan_peek(j) != '"' || skip_value(j, depth + 1, d) ||
					 jscan_expect(j, ':', d)))
				return jscan_fail(j, d, "expected a member name");
			if (skip_value(j, depth + 1, d))
				return d->code;
			more = jscan_next(j, c == '{' ? '}' : ']', d);
		}
		return more < 0 ? d->code : ERR_OK;
	case 't':
		return skip_word(j, "true", d);
	case 'f':
		return skip_word(j, "false", d);
	case 'n':
		return skip_word(j, "null", d);
	case -1:
		return jscan_fail(j, d, "expected a value");
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return skip_number(j, d);
		return jscan_fail(j, d, "expected a value");
	}
}

enum err jscan_skip(struct jscan *j, size_t *start, struct diag *d)
{
	jscan_peek(j);
	if (start)
		*start = j->pos;
	return skip_value(j, 0, d);
}
