#include "buf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mem.h"

static char empty[1];

void buf_init(struct buf *b, size_t max)
{
	b->data = empty;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf_release(struct buf *b)
{
	if (!b)
		return;
	if (b->cap)
		mem_free(b->data);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->data[0] = '\0';
}

char *buf_take(struct buf *b, size_t *len)
{
	char *p;

	if (!b->cap && buf_reserve(b, 0))
		return NULL;
	p = b->data;
	if (len)
		*len = b->len;
	buf_init(b, b->max);
	return p;
}

enum err buf_reserve(struct buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (n > b->max - b->len)
		return ERR_LIMIT;
	want = b->len + n + 1;
	if (want <= b->cap)
		return ERR_OK;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	p = mem_realloc(b->cap ? b->data : NULL, cap);
	if (!p)
		return ERR_NOMEM;
	if (!b->cap)
		p[0] = '\0';
	b->data = p;
	b->cap = cap;
	return ERR_OK;
}

size_t buf_avail(const struct buf *b)
{
	return b->cap ? b->cap - 1 - b->len : 0;
}

void buf_commit(struct buf *b, size_t n)
{
	if (!b->cap)
		return;
	if (n > buf_avail(b))
		n = buf_avail(b);
	b->len += n;
	b->data[b->len] = '\0';
}

enum err buf_append(struct buf *b, const void *p, size_t n)
{
	enum err e;

	if (n < b->cap - b->len) { /* room for it and the NUL (cap <= max + 1) */
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
		return ERR_OK;
	}
	if ((e = buf_reserve(b, n)))
		return e;
	if (n)
		memcpy(b->data + b->len, p, n);
	buf_commit(b, n);
	return ERR_OK;
}

enum err buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

enum err buf_putc(struct buf *b, char c)
{
	if (b->len + 2 > b->cap) /* no room for it and the NUL: grow (cap <= max + 1) */
		return buf_append(b, &c, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
	return ERR_OK;
}

enum err buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	enum err e;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return ERR_INTERNAL;
	e = buf_reserve(b, (size_t)n);
	if (e)
		return e;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	buf_commit(b, (size_t)n);
	return ERR_OK;
}

enum err buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	enum err e;

	va_start(ap, fmt);
	e = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return e;
}

enum err buf_base64(struct buf *b, const void *p, size_t n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	size_t i, out;
	char *w;
	enum err e;

	if (n > SIZE_MAX / 4 * 3 - 2)
		return ERR_LIMIT;
	out = (n + 2) / 3 * 4;
	e = buf_reserve(b, out);
	if (e)
		return e;
	w = b->data + b->len;
	for (i = 0; i + 2 < n; i += 3, w += 4) {
		unsigned long v = (unsigned long)s[i] << 16 | (unsigned long)s[i + 1] << 8 | s[i + 2];

		w[0] = abc[v >> 18];
		w[1] = abc[v >> 12 & 63];
		w[2] = abc[v >> 6 & 63];
		w[3] = abc[v & 63];
	}
	if (i < n) { /* one or two bytes left: pad to a full quantum */
		unsigned long v = (unsigned long)s[i] << 16 | (i + 1 < n ? (unsigned long)s[i + 1] << 8 : 0);

		w[0] = abc[v >> 18];
		w[1] = abc[v >> 12 & 63];
		w[2] = i + 1 < n ? abc[v >> 6 & 63] : '=';
		w[3] = '=';
	}
	buf_commit(b, out);
	return ERR_OK;
}

void buf_truncate(struct buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}
