/*
 * fuzz_sse — the SSE parser (harness/net/sse.h) on arbitrary bytes.
 *
 * Besides memory errors, it checks the parser's contract that bytes may come
 * in any split: the input is parsed whole and again one byte at a time, and
 * both must dispatch the same events (type, data, id, offsets) and count the
 * same comments, unknown fields and malformations. A difference aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/io.h"
#include "net/sse.h"

/* A running SHA-256 would be heavier than needed: the events are kept as one
 * byte string per parse and compared. */
struct seen {
	struct buf log;
};

static int on_event(void *ctx, const struct sse_event *ev)
{
	struct seen *s = ctx;
	size_t nums[5] = {ev->type_len, ev->data_len, ev->id_len, ev->offset, ev->end};

	if (buf_append(&s->log, nums, sizeof(nums)) ||
	    buf_append(&s->log, ev->type, ev->type_len) ||
	    buf_append(&s->log, ev->data, ev->data_len) ||
	    buf_append(&s->log, ev->id, ev->id_len))
		return ERR_NOMEM;
	return 0;
}

/* Parses `data` in pieces of `step` bytes (0: whole); fills `p` and `s`. */
static int parse(const uint8_t *data, size_t size, size_t step, struct sse_parser *p,
		 struct seen *s)
{
	struct diag d;
	size_t at = 0;
	int e = 0;

	diag_init(&d);
	sse_init(p, 4096); /* small cap: the over-long-line path is reachable */
	buf_init(&s->log, (size_t)64 << 20);
	do {
		size_t n = step && size - at > step ? step : size - at;

		e = sse_feed(p, (const char *)data + at, n, on_event, s, &d);
		if (e && e != ERR_INPUT)
			return e;
		at += n;
	} while (at < size);
	(void)sse_finish(p, &d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sse_parser a, b;
	struct seen sa, sb;
	int ea = parse(data, size, 0, &a, &sa);
	int eb = parse(data, size, 1, &b, &sb);

	if (!ea && !eb &&
	    (sa.log.len != sb.log.len || memcmp(sa.log.data, sb.log.data, sa.log.len) ||
	     a.events != b.events || a.comments != b.comments || a.unknown != b.unknown ||
	     a.retry_ms != b.retry_ms || a.malformed != b.malformed ||
	     a.offset != b.offset || a.offset != size))
		abort();
	buf_release(&sa.log);
	buf_release(&sb.log);
	sse_release(&a);
	sse_release(&b);
	return 0;
}
