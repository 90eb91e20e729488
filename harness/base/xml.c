/*
 * xml — see xml.h.
 */
#include "xml.h"

/* The entity or character reference of `c`, or NULL when `c` stays as is
 * (in an attribute when `attr`). */
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

static enum err escape(struct buf *out, const char *s, int attr)
{
	enum err e = ERR_OK;
	size_t run = 0;

	for (; !e && s[run]; ) {
		const char *r = ref((unsigned char)s[run], attr);
		if (!r) {
			run++;
			continue;
		}
		if (!(e = buf_append(out, s, run)))
			e = buf_puts(out, r);
		s += run + 1;
		run = 0;
	}
	return e ? e : buf_append(out, s, run);
}

enum err xml_text(struct buf *out, const char *s)
{
	return escape(out, s, 0);
}

enum err xml_attr(struct buf *out, const char *s)
{
	return escape(out, s, 1);
}
