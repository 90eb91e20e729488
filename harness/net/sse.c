/*
 * sse — WHATWG "Interpreting an event stream", byte by byte. See sse.h.
 *
 * The standard's stream grammar (html.spec.whatwg.org, server-sent events):
 *   stream = [ bom ] *event ; event = *( comment / field ) end-of-line
 *   end-of-line = ( cr lf / cr / lf )
 * and its processing steps: a blank line dispatches; ':' starts a comment;
 * the value after "field:" loses one leading space; data lines append value
 * and LF; dispatch drops the final LF, skips empty data, defaults the type to
 * "message"; the end of the stream discards a pending event.
 */
#include "sse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

enum {
	S_BOM,      /* sniffing the leading bytes for EF BB BF */
	S_LINE,     /* at or inside a line */
	S_AFTER_CR, /* a line ended in CR: an LF right after belongs to it */
	S_SKIP      /* inside an over-long line: dropped up to its end */
};

static const unsigned char bom_bytes[3] = {0xEF, 0xBB, 0xBF};

struct feed {
	struct sse_parser *p;
	sse_event_fn fn;
	void *ctx;
	int stop;    /* the callback's non-zero value */
	int bad;     /* a malformation was found during this call */
	int nomem;
};

void sse_init(struct sse_parser *p, size_t max)
{
	memset(p, 0, sizeof(*p));
	buf_init(&p->line, max);
	buf_init(&p->data, max);
	buf_init(&p->type, max);
	buf_init(&p->id, max);
	p->max = max;
	p->state = S_BOM;
	p->retry_ms = -1;
}

void sse_release(struct sse_parser *p)
{
	size_t max;

	if (!p)
		return;
	max = p->max;
	buf_release(&p->line);
	buf_release(&p->data);
	buf_release(&p->type);
	buf_release(&p->id);
	sse_init(p, max);
}

static void malformed(struct feed *f, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void malformed(struct feed *f, size_t at, const char *fmt, ...)
{
	struct sse_parser *p = f->p;
	va_list ap;

	f->bad = 1;
	if (p->malformed++)
		return;
	p->malformed_at = at;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
}

static void reset_event(struct sse_parser *p)
{
	buf_reset(&p->data);
	buf_reset(&p->type);
	p->event_open = 0;
	p->event_bad = 0;
}

static void dispatch(struct feed *f, size_t end)
{
	struct sse_parser *p = f->p;
	struct sse_event ev;

	if (p->event_bad || !p->data.len) {
		reset_event(p);
		return;
	}
	buf_truncate(&p->data, p->data.len - 1); /* the last data line's LF */
	ev.type = p->type.len ? p->type.data : "message";
	ev.type_len = p->type.len ? p->type.len : 7;
	ev.data = p->data.data;
	ev.data_len = p->data.len;
	ev.id = p->id.data;
	ev.id_len = p->id.len;
	ev.offset = p->event_start;
	ev.end = end;
	p->events++;
	f->stop = f->fn ? f->fn(f->ctx, &ev) : 0;
	reset_event(p);
}

static int all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

static void field(struct feed *f, const char *name, size_t nlen,
		  const char *val, size_t vlen, size_t at)
{
	struct sse_parser *p = f->p;
	enum err e = ERR_OK;

	if (nlen == 4 && !memcmp(name, "data", 4)) {
		if (p->data.len + vlen + 1 > p->max) {
			malformed(f, at, "event data longer than %zu bytes at byte %zu",
				  p->max, at);
			p->overlong++;
			p->event_bad = 1;
			return;
		}
		e = buf_append(&p->data, val, vlen);
		if (!e)
			e = buf_putc(&p->data, '\n');
	} else if (nlen == 5 && !memcmp(name, "event", 5)) {
		buf_reset(&p->type);
		e = buf_append(&p->type, val, vlen);
	} else if (nlen == 2 && !memcmp(name, "id", 2)) {
		if (!memchr(val, '\0', vlen)) {
			buf_reset(&p->id);
			e = buf_append(&p->id, val, vlen);
		}
	} else if (nlen == 5 && !memcmp(name, "retry", 5)) {
		if (all_digits(val, vlen) && vlen < 10) {
			long v = 0;
			size_t i;

			for (i = 0; i < vlen; i++)
				v = v * 10 + (val[i] - '0');
			p->retry_ms = v;
		}
	} else {
		if (!p->unknown++)
			p->unknown_at = at;
	}
	if (e == ERR_NOMEM)
		f->nomem = 1;
	else if (e)
		p->event_bad = 1;
}

/* One complete line (without its end) that started at byte `at`. */
static void line(struct feed *f, const char *s, size_t n, size_t at)
{
	struct sse_parser *p = f->p;
	const char *colon;
	size_t bad, nlen;

	if (!n) {
		dispatch(f, at);
		return;
	}
	/* a character cut by the line's end is invalid: CR and LF never occur
	 * inside one, so no line splits a valid character */
	bad = utf8_first_bad_char(s, n);
	if (bad < n)
		malformed(f, at + bad, "invalid UTF-8 at byte %zu", at + bad);
	if (s[0] == ':') {
		p->comments++;
		return;
	}
	if (!p->event_open) {
		p->event_open = 1;
		p->event_start = at;
	}
	colon = memchr(s, ':', n);
	if (!colon) {
		field(f, s, n, "", 0, at);
		return;
	}
	nlen = (size_t)(colon - s);
	colon++;
	if (colon < s + n && *colon == ' ')
		colon++;
	field(f, s, nlen, colon, (size_t)(s + n - colon), at);
}

/* First CR or LF in s[0..n), or n. */
static size_t find_eol(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\n' || s[i] == '\r')
			return i;
	return n;
}

/* A line too long for the cap: report it once, drop its event, skip to EOL. */
static void overlong(struct feed *f)
{
	struct sse_parser *p = f->p;

	malformed(f, p->line_start, "line longer than %zu bytes at byte %zu",
		  p->max, p->line_start);
	p->overlong++;
	buf_reset(&p->line);
	p->event_bad = 1;
	p->event_open = 1;
	p->state = S_SKIP;
}

/* Consumes bytes after the BOM stage; p->offset is the offset of s[0]. */
static void lines(struct feed *f, const char *s, size_t n)
{
	struct sse_parser *p = f->p;
	size_t i = 0, j, base = p->offset;

	while (i < n && !f->stop && !f->nomem) {
		if (p->state == S_AFTER_CR) {
			p->state = S_LINE;
			if (s[i] == '\n')
				i++;
			continue;
		}
		if (p->state == S_LINE && !p->line.len)
			p->line_start = base + i;
		j = i + find_eol(s + i, n - i);
		if (p->state == S_LINE && p->line.len + (j - i) > p->max)
			overlong(f);
		else if (p->state == S_LINE && (j == n || p->line.len) &&
			 buf_append(&p->line, s + i, j - i))
			f->nomem = 1;
		if (j == n)
			break;
		if (p->state == S_LINE) {
			if (p->line.len)
				line(f, p->line.data, p->line.len, p->line_start);
			else
				line(f, s + i, j - i, p->line_start);
			buf_reset(&p->line);
		}
		p->state = s[j] == '\r' ? S_AFTER_CR : S_LINE;
		i = j + 1;
	}
	p->offset = base + n;
}

/* Holds back up to three leading bytes until they are known to be a BOM (then
 * dropped) or not (then parsed as text). Returns how many of s[] it took. */
static size_t sniff_bom(struct feed *f, const char *s, size_t n)
{
	struct sse_parser *p = f->p;
	size_t i = 0;

	while (i < n && p->bom_len < 3 &&
	       (unsigned char)s[i] == bom_bytes[p->bom_len])
		p->bom[p->bom_len++] = (unsigned char)s[i++];
	if (p->bom_len == 3) {
		p->offset = 3;
		p->state = S_LINE;
	} else if (i < n) {
		p->state = S_LINE;
		lines(f, (const char *)p->bom, p->bom_len);
	}
	return i;
}

int sse_feed(struct sse_parser *p, const char *bytes, size_t n, sse_event_fn fn,
	     void *ctx, struct diag *d)
{
	struct feed f = {p, fn, ctx, 0, 0, 0};
	size_t used = 0;

	if (p->state == S_BOM)
		used = sniff_bom(&f, bytes, n);
	if (p->state != S_BOM)
		lines(&f, bytes + used, n - used);
	if (f.nomem)
		return diag_fail(d, ERR_NOMEM, "out of memory parsing the event stream");
	if (f.stop)
		return f.stop;
	if (f.bad)
		return diag_fail(d, ERR_INPUT, "malformed event stream: %s", p->why);
	return ERR_OK;
}

enum err sse_finish(struct sse_parser *p, struct diag *d)
{
	int partial_line;
	size_t at;

	if (p->state == S_BOM && p->bom_len) {
		p->state = S_LINE;
		buf_append(&p->line, p->bom, p->bom_len);
		p->line_start = 0;
		p->offset = p->bom_len;
	}
	partial_line = p->state == S_SKIP || (p->line.len && p->line.data[0] != ':');
	if (!partial_line && !p->data.len && !p->event_bad) {
		reset_event(p);
		return ERR_OK;
	}
	at = p->event_open ? p->event_start : p->line_start;
	reset_event(p);
	buf_reset(&p->line);
	return diag_fail(d, ERR_INPUT,
			 "event stream ended inside an event at byte %zu (%zu bytes in)",
			 at, p->offset);
}
