/* Placeholder until the HF Unicode tables land: passes patterns and text
 * through unchanged, which is close to but not exactly what HF does. */
#include "uni.h"

enum err uni_rewrite_pattern(const char *pattern, size_t len, struct buf *out,
			     struct diag *d)
{
	(void)d;
	return buf_append(out, pattern, len);
}

enum err uni_nfc(const char *s, size_t len, struct buf *out)
{
	return buf_append(out, s, len);
}

int uni_is_space(uint32_t cp)
{
	return cp == ' ' || (cp >= 9 && cp <= 13);
}

int uni_is_word(uint32_t cp)
{
	return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
	       (cp >= 'A' && cp <= 'Z') || cp == '_' || cp >= 0x80;
}

int uni_is_numeric(uint32_t cp)
{
	return cp >= '0' && cp <= '9';
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
