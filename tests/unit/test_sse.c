/* Unit tests of the SSE parser: every framing variant of the WHATWG rules, fed
 * whole, one byte at a time and in random splits, must give the same events. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "net/sse.h"
#include "t.h"

#define S(lit) lit, sizeof(lit) - 1

/* Events rendered as "type|id|data" lines joined by "\x1e", for comparison. */
static int record(void *ctx, const struct sse_event *ev)
{
	struct buf *out = ctx;

	if (strlen(ev->type) != ev->type_len || strlen(ev->data) != ev->data_len)
		buf_puts(out, "<len mismatch>");
	buf_printf(out, "%s|%s|%s\x1e", ev->type, ev->id, ev->data);
	return 0;
}

struct result {
	struct buf events;
	size_t malformed, malformed_at, comments, unknown;
	long retry;
	int finish; /* sse_finish's code */
	int feed;   /* ERR_INPUT if any sse_feed reported malformed input */
};

static unsigned long rng_state = 12345;

static size_t rng(size_t n)
{
	rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
	return (size_t)((rng_state >> 33) % n);
}

/* Parses `in` cut into pieces: step 0 = whole, 1 = one byte at a time, -1 =
 * random pieces. */
static void parse(const char *in, size_t n, int step, size_t max, struct result *r)
{
	struct sse_parser p;
	struct diag d;
	size_t i = 0, k;
	int e;

	buf_init(&r->events, 1 << 20);
	sse_init(&p, max);
	diag_init(&d);
	r->feed = 0;
	while (i < n) {
		k = step == 0 ? n - i : step > 0 ? (size_t)step : 1 + rng(7);
		if (k > n - i)
			k = n - i;
		e = sse_feed(&p, in + i, k, record, &r->events, &d);
		if (e == ERR_INPUT)
			r->feed = ERR_INPUT;
		i += k;
	}
	r->finish = sse_finish(&p, &d);
	r->malformed = p.malformed;
	r->malformed_at = p.malformed_at;
	r->comments = p.comments;
	r->unknown = p.unknown;
	r->retry = p.retry_ms;
	sse_release(&p);
}

/* Checks that all splits of `in` give `want` events; returns the whole-feed
 * result for further checks (caller releases r->events). */
static void same_each_way(const char *in, size_t n, const char *want,
			  size_t max, struct result *whole)
{
	struct result r;
	int trial;

	parse(in, n, 0, max, whole);
	CHECK_STR(whole->events.data, want);
	parse(in, n, 1, max, &r);
	CHECK_STR(r.events.data, want);
	CHECK_EQ_LONG(r.malformed, whole->malformed);
	CHECK_EQ_LONG(r.malformed_at, whole->malformed_at);
	CHECK_EQ_LONG(r.finish, whole->finish);
	CHECK_EQ_LONG(r.comments, whole->comments);
	buf_release(&r.events);
	for (trial = 0; trial < 40; trial++) {
		parse(in, n, -1, max, &r);
		CHECK_STR(r.events.data, want);
		CHECK_EQ_LONG(r.malformed, whole->malformed);
		CHECK_EQ_LONG(r.malformed_at, whole->malformed_at);
		CHECK_EQ_LONG(r.finish, whole->finish);
		buf_release(&r.events);
	}
}

static void check_clean(const char *in, const char *want)
{
	struct result r;

	same_each_way(in, strlen(in), want, 4096, &r);
	CHECK_EQ_LONG(r.malformed, 0);
	CHECK_EQ_LONG(r.finish, ERR_OK);
	CHECK_EQ_LONG(r.feed, ERR_OK);
	buf_release(&r.events);
}

static void test_line_ends(void)
{
	const char *want = "message||a\x1emessage||b\x1e";

	check_clean("data: a\n\ndata: b\n\n", want);
	check_clean("data: a\r\n\r\ndata: b\r\n\r\n", want);
	check_clean("data: a\r\rdata: b\r\r", want);
	check_clean("data: a\r\n\ndata: b\n\r\n", want);      /* mixed */
	check_clean("data: a\r\rdata: b\n\r", want);
	/* CR then LF is one line end, CR CR two: "\r\n\r" is end + blank line */
	check_clean("data: a\r\n\rdata: b\r\n\r", want);
	/* a CRLF is one line end, so two data lines stay one event */
	check_clean("data: a\r\ndata: b\r\n\r\n", "message||a\nb\x1e");
	check_clean("data: a\rdata: b\n\r\n", "message||a\nb\x1e");
}

static void test_bom(void)
{
	struct result r;

	check_clean("\xEF\xBB\xBF" "data: a\n\n", "message||a\x1e");
	/* only one BOM is dropped: the second makes the field name unknown */
	same_each_way(S("\xEF\xBB\xBF\xEF\xBB\xBF" "data: a\n\ndata: b\n\n"),
		      "message||b\x1e", 4096, &r);
	CHECK_EQ_LONG(r.unknown, 1);
	CHECK_EQ_LONG(r.malformed, 0);
	buf_release(&r.events);
	/* a partial BOM is text: EF BB then 'x' is invalid UTF-8 at byte 0 */
	same_each_way(S("\xEF\xBB" "x: 1\n\ndata: c\n\n"), "message||c\x1e", 4096, &r);
	CHECK_EQ_LONG(r.malformed, 1);
	CHECK_EQ_LONG(r.malformed_at, 0);
	buf_release(&r.events);
	/* no BOM: the first bytes are ordinary */
	check_clean("data:\xE2\x82\xAC\n\n", "message||\xE2\x82\xAC\x1e");
}

static void test_fields(void)
{
	struct result r;

	check_clean("data:x\n\n", "message||x\x1e");          /* no space */
	check_clean("data:  x\n\n", "message|| x\x1e");       /* one space dropped */
	check_clean("data: a\ndata: b\ndata:\n\n", "message||a\nb\n\x1e");
	check_clean("data\n\n", "message||\x1e");            /* empty data is an event */
	check_clean("event: x\n\n", "");                     /* no data: no event */
	check_clean("data: {\"a\": 1}\n\n", "message||{\"a\": 1}\x1e");
	check_clean("event: ping\ndata: 1\n\ndata: 2\n\n", "ping||1\x1emessage||2\x1e");
	check_clean("id: 7\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n",
		    "message|7|1\x1emessage|7|2\x1emessage||3\x1e");
	check_clean("data: a: b\n\n", "message||a: b\x1e");  /* later colons stay */
	same_each_way(S(": keep-alive\n\n:\ndata: a\n: mid\ndata: b\n\n: tail\n"),
		      "message||a\nb\x1e", 4096, &r);
	CHECK_EQ_LONG(r.comments, 4);
	CHECK_EQ_LONG(r.finish, ERR_OK); /* a trailing comment line is harmless */
	buf_release(&r.events);
	same_each_way(S("retry: 1500\nfoo: bar\nDATA: no\ndata: y\n\nretry: 1x\n\n"),
		      "message||y\x1e", 4096, &r);
	CHECK_EQ_LONG(r.retry, 1500);
	CHECK_EQ_LONG(r.unknown, 2); /* field names are case-sensitive */
	buf_release(&r.events);
	/* an id with NUL is ignored */
	same_each_way(S("id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n"),
		      "message|1|a\x1emessage|1|b\x1e", 4096, &r);
	buf_release(&r.events);
}

static void test_end_of_stream(void)
{
	struct result r;

	/* an event without its blank line is discarded and reported */
	same_each_way(S("data: a\n\ndata: [DONE]\n"), "message||a\x1e", 4096, &r);
	CHECK_EQ_LONG(r.finish, ERR_INPUT);
	buf_release(&r.events);
	same_each_way(S("data: a\n\ndata: [DO"), "message||a\x1e", 4096, &r);
	CHECK_EQ_LONG(r.finish, ERR_INPUT);
	buf_release(&r.events);
	same_each_way(S(""), "", 4096, &r);
	CHECK_EQ_LONG(r.finish, ERR_OK);
	buf_release(&r.events);
}

static void test_malformed(void)
{
	struct result r;
	char big[200];

	/* a line over the cap (32 bytes) is skipped with its event, at its offset */
	memset(big, 'x', sizeof(big));
	memcpy(big, "data: a\n\ndata: ", 15);
	memcpy(big + 100, "\n\ndata: b\n\n", 11);
	same_each_way(big, 111, "message||a\x1emessage||b\x1e", 32, &r);
	CHECK_EQ_LONG(r.malformed, 1);
	CHECK_EQ_LONG(r.malformed_at, 9);
	CHECK_EQ_LONG(r.feed, ERR_INPUT);
	CHECK_EQ_LONG(r.finish, ERR_OK);
	buf_release(&r.events);
	/* joined data over the cap */
	same_each_way(S("data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n"
		      "data: ok\n\n"), "message||ok\x1e", 32, &r);
	CHECK_EQ_LONG(r.malformed, 1);
	CHECK_EQ_LONG(r.malformed_at, 34);
	buf_release(&r.events);
	/* invalid UTF-8: a lone continuation byte, an overlong, a surrogate */
	same_each_way(S("data: a\x80z\n\n"), "message||a\x80z\x1e", 4096, &r);
	CHECK_EQ_LONG(r.malformed_at, 7);
	buf_release(&r.events);
	same_each_way(S("data: ok\n\ndata: \xC0\xAF\n\n"),
		      "message||ok\x1emessage||\xC0\xAF\x1e", 4096, &r);
	CHECK_EQ_LONG(r.malformed_at, 16);
	buf_release(&r.events);
	same_each_way(S("data: \xED\xA0\x80\n\n"), "message||\xED\xA0\x80\x1e", 4096, &r);
	CHECK_EQ_LONG(r.malformed_at, 6);
	CHECK_EQ_LONG(r.feed, ERR_INPUT);
	buf_release(&r.events);
	/* a multi-byte character cut by the line end */
	same_each_way(S("data: \xE4\xB8\n\n"), "message||\xE4\xB8\x1e", 4096, &r);
	CHECK_EQ_LONG(r.malformed_at, 6);
	buf_release(&r.events);
	/* valid 2-, 3- and 4-byte characters pass */
	check_clean("data: \xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\n\n",
		    "message||\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\x1e");
}

static int stop_at_first(void *ctx, const struct sse_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return ERR_LIMIT;
}

static void test_callback_stop(void)
{
	struct sse_parser p;
	struct diag d;
	int calls = 0;

	sse_init(&p, 1024);
	diag_init(&d);
	CHECK_EQ_LONG(sse_feed(&p, "data: a\n\ndata: b\n\n", 18, stop_at_first,
			       &calls, &d), ERR_LIMIT);
	CHECK_EQ_LONG(calls, 1);
	sse_release(&p);
	sse_release(NULL);
}

/* A realistic vLLM transcript in random splits: events and offsets. */
static void test_offsets(void)
{
	const char *in = "data: {\"x\":1}\n\n: keep-alive\n\ndata: [DONE]\n\n";
	struct result r;

	same_each_way(in, strlen(in), "message||{\"x\":1}\x1emessage||[DONE]\x1e",
		      64, &r);
	CHECK_EQ_LONG(r.comments, 1);
	buf_release(&r.events);
}

/* Differential fuzzing: random inputs over an alphabet rich in framing bytes
 * must give the same events, malformations and end state in any split. */
static void test_random_inputs(void)
{
	static const char alphabet[] = "data:event:id:retry: 12x\r\n\n\n::\xEF\xBB\xBF\x80\xC3\xA9\xE4";
	struct result whole, r;
	char in[300];
	size_t n, i, max;
	int iter;

	for (iter = 0; iter < 1500; iter++) {
		n = rng(sizeof(in));
		for (i = 0; i < n; i++)
			in[i] = alphabet[rng(sizeof(alphabet) - 1)];
		max = 24 + rng(64);
		parse(in, n, 0, max, &whole);
		same_each_way(in, n, whole.events.data, max, &r);
		buf_release(&r.events);
		buf_release(&whole.events);
	}
}

int main(void)
{
	T_RUN(test_line_ends);
	T_RUN(test_bom);
	T_RUN(test_fields);
	T_RUN(test_end_of_stream);
	T_RUN(test_malformed);
	T_RUN(test_callback_stop);
	T_RUN(test_offsets);
	T_RUN(test_random_inputs);
	return T_DONE();
}
