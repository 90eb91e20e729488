/*
 * xml — see xml.h.
 */
#include "xml.h"

#include <stdint.h>
#include <string.h>

#include "utf8.h"

/* U+FFFD, for what is not a character of UTF-8 text or not one XML 1.0 allows. */
#define REPLACEMENT "\xef\xbf\xbd"

/* The entity or character reference of ASCII `c`, or NULL when `c` stays
 * as is (in an attribute when `attr`). */
static const char *ref(unsigned char c, int attr)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return attr ? "&quot;" : NULL;
	case '\'': return attr ? "&#39;" : NULL;
	case '\t': return attr ? "&#9;" : NULL;
	case '\n': return attr ? "&#10;" : NULL;
	case '\r': return attr ? "&#13;" : NULL;
	default: return c < 0x20 || c == 0x7f ? "?" : NULL;
	}
}

/* The length of the character at s[0..n) when it stays as it is, else 0
 * with *r its replacement and *skip the bytes it replaces. */
static size_t keep(const char *s, size_t n, int attr, const char **r, size_t *skip)
{
	unsigned char c = (unsigned char)*s;
	size_t w = n < 4 ? n : 4, len;
	uint32_t cp;

	*skip = 1;
	if (c < 0x80)
		return (*r = ref(c, attr)) ? 0 : 1;
	*r = REPLACEMENT;
	if (!utf8_first_bad_char(s, w))
		return 0; /* a byte that is not UTF-8: one U+FFFD each */
	len = utf8_decode(s, w, &cp);
	if (cp == 0xfffe || cp == 0xffff) { /* not XML 1.0 characters */
		*skip = len;
		return 0;
	}
	return len;
}

static enum err escape(struct buf *out, const char *s, int attr)
{
	size_t n = strlen(s), i = 0, run = 0, k, skip;
	const char *r;
	enum err e = ERR_OK;

	while (!e && i + run < n) {
		if ((k = keep(s + i + run, n - i - run, attr, &r, &skip))) {
			run += k;
			continue;
		}
		if (!(e = buf_append(out, s + i, run)))
			e = buf_puts(out, r);
		i += run + skip;
		run = 0;
	}
	return e ? e : buf_append(out, s + i, run);
}

enum err xml_text(struct buf *out, const char *s)
{
	return escape(out, s, 0);
}

enum err xml_attr(struct buf *out, const char *s)
{
	return escape(out, s, 1);
}
