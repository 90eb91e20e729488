/*
 * ctl — see ctl.h.
 */
#include "ctl.h"

#include <stdint.h>
#include <string.h>

#include "mem.h"
#include "utf8.h"

/* The length of the character at s[0..n) that stays as it is, or 0 when it
 * is escaped (*cp: the C1 control's code point, else 0). */
static size_t keep(const char *s, size_t n, uint32_t *cp)
{
	unsigned char c = (unsigned char)*s;
	size_t w = n < 4 ? n : 4, len;

	*cp = 0;
	if (c < 0x80)
		return (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n';
	if (!utf8_first_bad_char(s, w))
		return 0; /* not UTF-8: \xHH */
	len = utf8_decode(s, w, cp);
	if (*cp >= 0x80 && *cp <= 0x9f)
		return 0;
	*cp = 0;
	return len;
}

size_t ctl_first(const char *s, size_t n)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < n && (k = keep(s + i, n - i, &cp)))
		i += k;
	return i;
}

enum err ctl_escape(struct buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	enum err e = ERR_OK;
	size_t i = 0, k;
	uint32_t cp;

	while (!e && i < n) {
		k = ctl_first(s + i, n - i);
		if ((e = buf_append(out, s + i, k)) || (i += k) == n)
			break;
		keep(s + i, n - i, &cp);
		if (cp) {
			char u[7] = {'\\', 'u', '0', '0', hex[cp >> 4], hex[cp & 15], 0};
			e = buf_puts(out, u);
			i += 2; /* U+0080..U+009F are two bytes */
		} else {
			unsigned char c = (unsigned char)s[i++];
			char x[5] = {'\\', 'x', hex[c >> 4], hex[c & 15], 0};
			e = buf_puts(out, x);
		}
	}
	return e;
}

enum err ctl_escape_from(struct buf *out, size_t from)
{
	size_t n = out->len - from, at = ctl_first(out->data + from, n);
	char *tail;
	enum err e;

	if (at == n)
		return ERR_OK;
	if (!(tail = mem_alloc(n - at)))
		return ERR_NOMEM;
	memcpy(tail, out->data + from + at, n - at);
	buf_truncate(out, from + at);
	e = ctl_escape(out, tail, n - at);
	mem_free(tail);
	return e;
}
