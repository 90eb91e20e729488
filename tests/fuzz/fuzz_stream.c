/*
 * fuzz_stream — the stream assembler (harness/net/stream.h) on arbitrary response
 * bodies: SSE framing, JSON chunks, deltas, tool calls, usage, error frames.
 *
 * The body is assembled as a chat stream fed whole and as a completions stream
 * fed in 7-byte pieces; each is ended and judged (stream_check, with and
 * without expectations, as a 200 and as a 500), and the body is also read as an
 * error body (stream_body_message). The assembled content of the chat stream
 * must not depend on the split: it is assembled once more in 1-byte pieces and
 * a different content, reasoning or tool-call count aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/stream.h"

static void assemble(struct stream *s, enum stream_api api, const uint8_t *data,
		     size_t size, size_t step)
{
	struct diag d;
	size_t at = 0;
	double t = 1;

	diag_init(&d);
	stream_init(s, api, 0);
	do {
		size_t n = step && size - at > step ? step : size - at;

		if (stream_feed(s, (const char *)data + at, n, t, &d))
			break; /* ERR_NOMEM/ERR_LIMIT: the caller aborts the transfer */
		at += n;
		t += 1;
	} while (at < size);
	stream_end(s, t);
}

static void judge(const struct stream *s)
{
	struct stream_expect x = {1, 16};
	struct stream_transport ok = {200, HTTP_FAIL_NONE, NULL};
	struct stream_transport bad = {500, HTTP_FAIL_NONE, NULL};
	struct stream_transport cut = {200, HTTP_FAIL_TIMEOUT, "timed out"};
	struct stream_checks c;
	struct stream_timing t;
	size_t i;

	stream_check(s, &ok, NULL, &c);
	stream_check(s, &ok, &x, &c);
	for (i = 0; i < c.n; i++)
		if (!stream_fail_name(c.f[i].code) || !memchr(c.f[i].msg, 0, STREAM_MSG_MAX))
			abort();
	stream_check(s, &bad, &x, &c);
	stream_check(s, &cut, &x, &c);
	stream_timing(s, &t);
}

static int same_buf(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream whole, bytes, comp;
	char msg[96];

	assemble(&whole, STREAM_CHAT, data, size, 0);
	assemble(&bytes, STREAM_CHAT, data, size, 1);
	assemble(&comp, STREAM_COMPLETIONS, data, size, 7);
	judge(&whole);
	judge(&comp);
	if (!whole.fatal && !bytes.fatal &&
	    (!same_buf(&whole.content, &bytes.content) ||
	     !same_buf(&whole.reasoning, &bytes.reasoning) ||
	     whole.ntools != bytes.ntools || whole.chunks != bytes.chunks ||
	     whole.done != bytes.done || whole.error_frames != bytes.error_frames))
		abort();
	stream_body_message((const char *)data, size, msg, sizeof(msg));
	if (!memchr(msg, 0, sizeof(msg)))
		abort();
	stream_release(&whole);
	stream_release(&bytes);
	stream_release(&comp);
	return 0;
}
