/*
 * sse — an incremental parser for server-sent events (text/event-stream).
 * Private to net/: only stream.c feeds it (stream.h embeds the parser in
 * struct stream) and the unit and fuzz tests include this header.
 *
 * Follows the parsing rules of the WHATWG HTML standard, section "Server-sent
 * events", "Interpreting an event stream": bytes may arrive in any split (one
 * byte at a time included); lines end in CR, LF or CRLF, and a CR that ends one
 * chunk followed by an LF that starts the next is one line end; one leading
 * UTF-8 BOM is skipped; lines starting with ':' are comments; "field:value"
 * drops one space after the colon (so "data:x" and "data: x" are the same); a
 * line without a colon is a field with an empty value; several "data" lines are
 * joined with "\n"; "event", "id" (ignored when it contains NUL) and "retry"
 * (ASCII digits only) are kept; unknown fields are ignored (but counted); a
 * blank line dispatches the event unless its data is empty; an event not closed
 * by a blank line when the stream ends is discarded.
 *
 * Stricter than a browser (a browser decodes with U+FFFD replacement), because
 * needle judges servers: invalid UTF-8 and lines longer than the cap are
 * reported as malformations with the byte offset where they occur. The parser
 * recovers from both (the invalid bytes are passed through; the rest of an
 * over-long line is skipped and its event is not dispatched), so the caller may
 * keep feeding and still see later events.
 *
 * Memory: the parser owns four capped buffers (pending partial line, pending
 * event data, event type, last event id); a line that lies whole inside one chunk is
 * parsed in place without copying it. Nothing is allocated per byte or per
 * event once the buffers have grown. Events are handed out as views that stay
 * valid only during the callback (picohttpparser style: copy what you keep).
 *
 *	struct sse_parser p;
 *	sse_init(&p, SSE_MAX_DEFAULT);
 *	while (more bytes)
 *		e = sse_feed(&p, bytes, n, on_event, ctx, &d); // ERR_INPUT: malformed, may go on
 *	sse_finish(&p, &d);                                // ERR_INPUT: ended inside an event
 *	sse_release(&p);
 */
#ifndef NEEDLE_SSE_H
#define NEEDLE_SSE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

/* Default cap on one line and on one event's joined data: 16 MiB. A chat chunk
 * is a few hundred bytes; an echo chunk carries the prompt (1M tokens ~ 5 MB). */
#define SSE_MAX_DEFAULT ((size_t)16 << 20)

#define SSE_WHY_MAX 160

/* One dispatched event. All pointers are views into the parser, NUL-terminated,
 * valid only until the callback returns. */
struct sse_event {
	const char *type;    /* "event" field, "message" when none was given */
	size_t type_len;
	const char *data;    /* data lines joined by "\n", final "\n" removed */
	size_t data_len;
	const char *id;      /* the last event id seen so far ("" when none) */
	size_t id_len;
	size_t offset;       /* byte offset of the event's first line */
	size_t end;          /* byte offset of the blank line that dispatched it */
};

/* Called once per dispatched event. A non-zero return stops the parse and is
 * returned by sse_feed (use an enum err value). */
typedef int (*sse_event_fn)(void *ctx, const struct sse_event *ev);

/* Parser state. Fields are private except the counters and the report of the
 * first malformation, which callers may read. */
struct sse_parser {
	/* private */
	struct buf line;      /* partial line carried across chunks */
	struct buf data;      /* data of the pending event, each line + "\n" */
	struct buf type;      /* event type of the pending event */
	struct buf id;        /* last event id */
	size_t max;           /* cap on a line and on an event's data */
	size_t line_start;    /* offset of the current line's first byte */
	size_t event_start;   /* offset of the pending event's first line */
	int state;            /* BOM sniffing / in a line / after CR / skipping */
	unsigned char bom[3]; /* leading bytes held back while sniffing a BOM */
	size_t bom_len;
	int event_open;       /* a field line has been seen since the last dispatch */
	int event_bad;        /* the pending event lost bytes: do not dispatch */

	/* public, read-only */
	size_t offset;        /* bytes consumed so far, BOM included */
	size_t events;        /* events dispatched */
	size_t comments;      /* comment lines (e.g. vLLM ": keep-alive") */
	size_t unknown;       /* lines with a field name other than data/event/id/retry */
	size_t unknown_at;    /* offset of the first such line */
	long retry_ms;        /* last valid "retry" value, -1 when none */
	size_t malformed;     /* malformations seen (over-long line, invalid UTF-8) */
	size_t malformed_at;  /* byte offset of the first one */
	size_t overlong;      /* of them, lines or event data over the cap */
	char why[SSE_WHY_MAX];/* the first one: "line longer than N bytes at byte X" */
};

/* Sets up an empty parser whose line and event data may each grow to `max`
 * bytes. Allocates nothing. */
void sse_init(struct sse_parser *p, size_t max);

/* Frees the parser's buffers and re-initialises it with the same cap. Accepts
 * NULL. */
void sse_release(struct sse_parser *p);

/* Consumes `n` bytes (borrowed, any split) and calls `fn(ctx, ev)` for each
 * event they complete. Returns ERR_OK; ERR_INPUT when these bytes contained a
 * new malformation (`d` gets the first one with its byte offset; the parser has
 * recovered and the whole chunk was consumed); ERR_NOMEM; or the callback's
 * non-zero value (the parse stops there and the parser must not be fed again). */
int sse_feed(struct sse_parser *p, const char *bytes, size_t n, sse_event_fn fn,
	     void *ctx, struct diag *d);

/* Marks the end of the stream. A pending event (data seen but no blank line)
 * is discarded as the standard says; ERR_INPUT with the offset tells the caller
 * that the stream ended inside an event or inside a line. Returns ERR_OK when
 * the stream ended cleanly between events. */
enum err sse_finish(struct sse_parser *p, struct diag *d);

#endif
