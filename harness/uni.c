/* First usable version: `\s`/`\S` rewritten to White_Space (no U+180E),
 * other constructs passed through; NFC through utf8proc (Unicode 13, not yet
 * frozen at 9.0). Replaced by the table-driven version. */
#include <stdlib.h>

#include <utf8proc.h>

#include "uni.h"

/* White_Space as PCRE2 class members: PCRE2's UCP \s adds U+180E. */
#define WS_MEMBERS "\\t\\n\\x{0B}\\f\\r\\x{85}\\p{Z}"

enum err uni_rewrite_pattern(const char *p, size_t len, struct buf *out,
			     struct diag *d)
{
	size_t i;
	int in_class = 0;
	enum err e = ERR_OK;

	for (i = 0; i < len && !e; i++) {
		char c = p[i];

		if (c == '\\' && i + 1 < len) {
			char n = p[++i];

			if (n == 's' && !in_class)
				e = buf_puts(out, "[" WS_MEMBERS "]");
			else if (n == 'S' && !in_class)
				e = buf_puts(out, "[^" WS_MEMBERS "]");
			else if (n == 's')
				e = buf_puts(out, WS_MEMBERS);
			else if (n == 'S')
				return diag_fail(d, ERR_UNSUPPORTED,
						 "unsupported regex construct '\\S' inside a class at offset %zu",
						 i - 1);
			else if (!(e = buf_putc(out, c)))
				e = buf_putc(out, n);
			continue;
		}
		if (c == '[' && !in_class) {
			in_class = 1;
			e = buf_putc(out, c);
			if (!e && i + 1 < len && p[i + 1] == '^')
				e = buf_putc(out, p[++i]);
			if (!e && i + 1 < len && p[i + 1] == ']')
				e = buf_putc(out, p[++i]);
			continue;
		}
		if (c == ']' && in_class)
			in_class = 0;
		e = buf_putc(out, c);
	}
	return e;
}

enum err uni_nfc(const char *s, size_t len, struct buf *out)
{
	utf8proc_uint8_t *r = NULL;
	utf8proc_ssize_t n;
	size_t i;
	enum err e;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] >= 0xCC)
			break;
	if (i == len)
		return buf_append(out, s, len);
	n = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &r,
			 UTF8PROC_STABLE | UTF8PROC_COMPOSE);
	if (n < 0)
		return n == UTF8PROC_ERROR_NOMEM ? ERR_NOMEM : ERR_INPUT;
	e = buf_append(out, r, (size_t)n);
	free(r);
	return e;
}

int uni_is_space(uint32_t cp)
{
	return (cp >= 9 && cp <= 13) || cp == ' ' || cp == 0x85 ||
	       cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
	       cp == 0x3000;
}

int uni_is_word(uint32_t cp)
{
	utf8proc_category_t c;

	if (cp == 0x200C || cp == 0x200D)
		return 1;
	c = utf8proc_category((utf8proc_int32_t)cp);
	return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_ND) ||
	       c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_PC;
}

int uni_is_numeric(uint32_t cp)
{
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);

	return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL ||
	       c == UTF8PROC_CATEGORY_NO;
}

size_t uni_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = u[0] < 0x80 ? 1 : u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : 4;
	size_t i;

	if (n > len)
		n = len;
	*cp = n == 1 ? u[0] : (uint32_t)(u[0] & (0x7F >> n));
	for (i = 1; i < n; i++)
		*cp = (*cp << 6) | (u[i] & 0x3F);
	return n;
}
