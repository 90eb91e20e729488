/* Unit tests of the stream assembler and the transport check, over the golden
 * transcripts in fixtures/sse/ (both server dialects and their failures), each
 * fed whole, one byte at a time and in random splits. Run from the repository
 * root (make test does), or set NEEDLE_ROOT (t_fixture). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "net/stream.h"
#include "t.h"

struct golden {
	const char *file;         /* fixtures/sse/NAME */
	enum stream_api api;
	long status;              /* HTTP status of the response */
	int usage_requested;
	long long fixed_length;   /* -1: any */
	const char *failures;     /* codes joined by ',' ("" = passes) */
	const char *content;
	const char *reasoning;
	const char *tools;        /* "id|name|arguments;..." or "" */
	const char *finish;       /* finish_reason */
	long long prompt, completion; /* usage, -1 when absent */
};

static const struct golden goldens[] = {
	{"vllm_reasoning.sse", STREAM_CHAT, 200, 1, -1, "", "{\"answer\": 437}",
	 "19 * 23 = 19 * 20 + 19 * 3 = 380 + 57 = 437.", "", "stop", 31, 17},
	{"vllm_legacy.sse", STREAM_CHAT, 200, 1, -1, "", "{\"answer\": 437}",
	 "Multiply. 437.", "", "stop", 31, 9},
	{"vllm_both.sse", STREAM_CHAT, 200, 1, -1, "", "{\"answer\": 437}",
	 "Think hard", "", "stop", 31, 8},
	{"sglang_finish.sse", STREAM_CHAT, 200, 1, -1, "", "{\"answer\": 437}",
	 "Compute it.", "", "stop", 31, 9},
	{"vllm_tools.sse", STREAM_CHAT, 200, 1, -1, "", "", "",
	 "chatcmpl-tool-3f9c2a|get_weather|{\"city\": \"Paris\"};"
	 "chatcmpl-tool-88e1b0|get_time|{\"tz\": \"CET\"}", "tool_calls", 120, 40},
	{"sglang_tools.sse", STREAM_CHAT, 200, 1, -1, "", "", "",
	 "call_5d2f1c0a9b8e7d6c5b4a3f2e|get_weather|{\"city\": \"Paris\"};"
	 "call_0a1b2c3d4e5f6a7b8c9d0e1f|get_time|{\"tz\": \"CET\"}", "tool_calls", 120, 40},
	{"error_nested.sse", STREAM_CHAT, 200, 1, -1, "sse_error_frame", "{\"ans", "",
	 "", "", -1, -1},
	/* SGLang's context refusal in a frame: context_overflow, as its 400 is */
	{"error_flat.sse", STREAM_CHAT, 200, 1, -1, "context_overflow", "", "", "", "",
	 40000, 0},
	{"error_string.sse", STREAM_CHAT, 200, 1, -1, "sse_error_frame", "", "", "", "",
	 -1, -1},
	{"no_done.sse", STREAM_CHAT, 200, 1, -1, "no_done", "{\"answer\": 437}", "", "",
	 "stop", 31, 6},
	{"cut.sse", STREAM_CHAT, 200, 1, -1, "malformed_sse,no_done", "{\"answer\"", "",
	 "", "", -1, -1},
	{"empty_200.sse", STREAM_COMPLETIONS, 200, 1, 128, "empty_output", "", "", "",
	 "length", 1024, 128},
	{"reasoning_only.sse", STREAM_CHAT, 200, 1, -1, "reasoning_only", "",
	 "Let me think step by step about 19 times 23", "", "length", 31, 64},
	{"missing_usage.sse", STREAM_CHAT, 200, 1, -1, "missing_usage", "{\"answer\": 437}",
	 "", "", "stop", -1, -1},
	{"missing_usage.sse", STREAM_CHAT, 200, 0, -1, "", "{\"answer\": 437}",
	 "", "", "stop", -1, -1},
	{"bad_usage.sse", STREAM_CHAT, 200, 1, -1, "bad_usage", "{\"answer\": 437}", "", "",
	 "stop", 31, 6},
	{"keepalive.sse", STREAM_CHAT, 200, 1, -1, "", "{\"answer\": 437}", "", "", "stop",
	 31, 6},
	{"utf8.sse", STREAM_CHAT, 200, 1, -1, "",
	 "\xE7\xAD\x94\xE6\xA1\x88\xE6\x98\xAF 437 \xE2\x9C\x85 \xF0\x9F\x98\x80",
	 "\xE5\x85\x88\xE7\xAE\x97 19\xC3\x97" "23", "", "stop", 31, 9},
	{"framing.sse", STREAM_CHAT, 200, 1, -1, "", "{\"answer\": 437}", "", "", "stop",
	 31, 6},
	{"completions.sse", STREAM_COMPLETIONS, 200, 1, 5, "",
	 "The quick brown fox jumps", "", "", "length", 5, 5},
	{"completions.sse", STREAM_COMPLETIONS, 200, 1, 6, "length_mismatch",
	 "The quick brown fox jumps", "", "", "length", 5, 5},
	{"truncated_json.sse", STREAM_CHAT, 200, 1, -1, "malformed_sse",
	 "{\"answer\": 437}", "", "", "stop", 31, 6},
	{"http_400.body", STREAM_CHAT, 400, 1, -1, "context_overflow", "", "", "", "", -1, -1},
	{"http_401.body", STREAM_CHAT, 401, 1, -1, "http_status", "", "", "", "", -1, -1},
	{"http_500.body", STREAM_CHAT, 500, 1, -1, "http_status", "", "", "", "", -1, -1},
};

static unsigned long rng_state = 42;

static size_t rng(size_t n)
{
	rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
	return (size_t)((rng_state >> 33) % n);
}

static int load(const char *name, struct buf *out)
{
	char fix[256];
	struct diag d;
	int e;

	diag_init(&d);
	snprintf(fix, sizeof(fix), "sse/%s", name);
	e = io_read_file(t_fixture(fix), out, &d);
	if (e)
		fprintf(stderr, "%s\n", d.msg);
	return e;
}

/* Feeds `in` in pieces (0 whole, 1 byte by byte, -1 random), one ms apart. */
static void assemble(struct stream *s, enum stream_api api, const struct buf *in,
		     int step)
{
	struct diag d;
	size_t i = 0, k;
	double now = 1000;

	diag_init(&d);
	stream_init(s, api, now);
	while (i < in->len) {
		k = step == 0 ? in->len - i : step > 0 ? (size_t)step : 1 + rng(13);
		if (k > in->len - i)
			k = in->len - i;
		CHECK_EQ_LONG(stream_feed(s, in->data + i, k, now += 1, &d), ERR_OK);
		i += k;
	}
	stream_end(s, now + 1);
}

static void codes(const struct stream_checks *c, struct buf *out)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		buf_printf(out, "%s%s", i ? "," : "", stream_fail_name(c->f[i].code));
}

static void tools(const struct stream *s, struct buf *out)
{
	size_t i;

	for (i = 0; i < s->ntools; i++)
		buf_printf(out, "%s%s|%s|%s", i ? ";" : "", s->tools[i].id.data,
			   s->tools[i].name.data, s->tools[i].arguments.data);
}

static void check_golden(const struct golden *g, const struct buf *in, int step)
{
	struct stream_transport tr = {g->status, HTTP_FAIL_NONE, NULL};
	struct stream_expect x = {g->usage_requested, g->fixed_length};
	struct stream_checks c;
	struct stream s;
	struct buf got;
	size_t i;

	buf_init(&got, 1 << 16);
	assemble(&s, g->api, in, step);
	stream_check(&s, &tr, &x, &c);
	codes(&c, &got);
	if (strcmp(got.data, g->failures))
		fprintf(stderr, "%s (step %d):\n", g->file, step);
	CHECK_STR(got.data, g->failures);
	for (i = 0; i < c.n; i++)
		CHECK(c.f[i].msg[0] != '\0');
	if (g->status == 200) {
		CHECK_STR(s.content.data, g->content);
		CHECK_STR(s.reasoning.data, g->reasoning);
		CHECK_STR(s.finish_reason.data, g->finish);
		CHECK_EQ_LONG(s.usage.prompt_tokens, g->prompt);
		CHECK_EQ_LONG(s.usage.completion_tokens, g->completion);
		buf_reset(&got);
		tools(&s, &got);
		CHECK_STR(got.data, g->tools);
	}
	buf_release(&got);
	stream_release(&s);
}

static void test_goldens(void)
{
	size_t i;
	int trial;
	struct buf in;

	for (i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		buf_init(&in, 1 << 20);
		CHECK(load(goldens[i].file, &in) == ERR_OK);
		check_golden(&goldens[i], &in, 0);
		check_golden(&goldens[i], &in, 1);
		for (trial = 0; trial < 10; trial++)
			check_golden(&goldens[i], &in, -1);
		buf_release(&in);
	}
}

/* The messages say what happened, taken from the frame or the body. */
static void check_message(const char *file, long status, enum stream_fail code,
			  const char *want)
{
	struct stream_transport tr = {status, HTTP_FAIL_NONE, NULL};
	struct stream_checks c;
	struct stream s;
	struct buf in;
	size_t i;
	int found = 0;

	buf_init(&in, 1 << 20);
	CHECK(load(file, &in) == ERR_OK);
	assemble(&s, STREAM_CHAT, &in, 0);
	stream_check(&s, &tr, NULL, &c);
	for (i = 0; i < c.n; i++)
		if (c.f[i].code == code) {
			found = 1;
			if (!strstr(c.f[i].msg, want))
				fprintf(stderr, "%s: message '%s' lacks '%s'\n", file,
					c.f[i].msg, want);
			CHECK(strstr(c.f[i].msg, want) != NULL);
		}
	CHECK(found);
	stream_release(&s);
	buf_release(&in);
}

/* vLLM's context refusal in an error frame (its nested shape, docs/protocol.md
 * §1b) is context_overflow too; another error frame stays sse_error_frame. */
static void test_context_frame(void)
{
	static const char vllm[] =
		"data: {\"error\": {\"message\": \"You passed 131073 input tokens and requested 0 output "
		"tokens. However, the model's context length is only 131072 tokens, resulting in a maximum "
		"input length of 131072 tokens.\", \"type\": \"BadRequestError\", \"param\": null, "
		"\"code\": 400}}\n\ndata: [DONE]\n\n";
	struct stream_checks c;
	struct stream s;
	struct diag d;

	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 0);
	CHECK(stream_feed(&s, vllm, strlen(vllm), 1, &d) == ERR_OK);
	stream_end(&s, 2);
	stream_check(&s, NULL, NULL, &c);
	CHECK(stream_checks_has(&c, STREAM_F_CONTEXT_OVERFLOW));
	CHECK(!stream_checks_has(&c, STREAM_F_SSE_ERROR_FRAME));
	stream_release(&s);
}

static void test_messages(void)
{
	check_message("error_nested.sse", 200, STREAM_F_SSE_ERROR_FRAME,
		      "generation failed: engine core died (type InternalServerError, code 500)");
	check_message("error_flat.sse", 200, STREAM_F_CONTEXT_OVERFLOW,
		      "longer than the model's context length (32768 tokens)");
	check_message("error_string.sse", 200, STREAM_F_SSE_ERROR_FRAME, "Unauthorized");
	check_message("http_400.body", 400, STREAM_F_CONTEXT_OVERFLOW,
		      "HTTP 400: This model's maximum context length is 32768 tokens.");
	check_message("http_400_flat.body", 400, STREAM_F_HTTP_STATUS,
		      "HTTP 400: Messages cannot be empty.");
	check_message("http_401.body", 401, STREAM_F_HTTP_STATUS, "HTTP 401: Unauthorized");
	check_message("http_500.body", 500, STREAM_F_HTTP_STATUS,
		      "HTTP 500: 500 Internal Server Error");
	check_message("http_502_notitle.body", 502, STREAM_F_HTTP_STATUS,
		      "HTTP 502: Bad Gateway upstream vllm closed the connection");
	check_message("bad_usage.sse", 200, STREAM_F_BAD_USAGE,
		      "usage.total_tokens 40 != prompt_tokens 31 + completion_tokens 6");
	check_message("truncated_json.sse", 200, STREAM_F_MALFORMED_SSE,
		      "event at byte 206 is not a JSON object");
	check_message("cut.sse", 200, STREAM_F_MALFORMED_SSE, "ended inside an event");
}

static void test_body_message(void)
{
	char out[40];

	stream_body_message("", 0, out, sizeof(out));
	CHECK_STR(out, "empty body");
	stream_body_message(" \r\n", 3, out, sizeof(out));
	CHECK_STR(out, "empty body");
	stream_body_message("{\"detail\":\"Not Found\"}", 22, out, sizeof(out));
	CHECK_STR(out, "Not Found");
	stream_body_message("plain\n\ntext  here", 17, out, sizeof(out));
	CHECK_STR(out, "plain text here");
	/* long text is cut with "..." on a character boundary */
	stream_body_message("\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD"
			    "\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD"
			    "\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD", 39, out, 16);
	CHECK_STR(out, "\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD...");
	stream_body_message("abcdefghijklmno", 15, out, 16); /* fits exactly */
	CHECK_STR(out, "abcdefghijklmno");
	stream_body_message("abcdefghijklmnop", 16, out, 16);
	CHECK_STR(out, "abcdefghijkl...");
	/* a JSON body that is not an error shape is quoted as text */
	stream_body_message("{\"a\":1}", 7, out, sizeof(out));
	CHECK_STR(out, "{\"a\":1}");
}

/* Transport outcomes: each is the only code, except a timeout keeps framing
 * facts; a 200 that is not SSE at all is malformed. */
static void test_transport(void)
{
	struct stream_transport conn = {0, HTTP_FAIL_CONNECT,
					"cannot connect to '127.0.0.1:9': connection refused"};
	struct stream_transport tmo = {200, HTTP_FAIL_TIMEOUT, "no bytes for 2 s (idle timeout)"};
	struct stream_transport none = {0, HTTP_FAIL_OTHER, "empty reply from server"};
	struct stream_transport ok = {200, HTTP_FAIL_NONE, NULL};
	struct stream_expect x = {1, -1};
	struct stream_checks c;
	struct stream s;
	struct buf got;
	struct diag d;
	const char *body;
	const char *json = "{\"id\":\"x\",\"choices\":[{\"message\":{\"content\":\"hi\"}}]}";

	buf_init(&got, 4096);
	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 0);
	stream_end(&s, 5);
	stream_check(&s, &conn, &x, &c);
	codes(&c, &got);
	CHECK_STR(got.data, "connect");
	CHECK_STR(c.f[0].msg, conn.msg);
	buf_reset(&got);
	stream_check(&s, &none, &x, &c);
	codes(&c, &got);
	CHECK_STR(got.data, "http_status");
	CHECK(strstr(c.f[0].msg, "empty reply") != NULL);
	buf_reset(&got);
	stream_check(&s, &ok, &x, &c); /* an empty 200 body */
	codes(&c, &got);
	CHECK_STR(got.data, "no_done,empty_output");
	stream_release(&s);

	stream_init(&s, STREAM_CHAT, 0);
	body = "data: {\"error\":\"x\"}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
	stream_feed(&s, body, strlen(body), 1, &d);
	stream_end(&s, 2);
	buf_reset(&got);
	stream_check(&s, &tmo, &x, &c);
	codes(&c, &got);
	CHECK_STR(got.data, "timeout,sse_error_frame");
	CHECK_STR(c.f[0].msg, tmo.msg);
	stream_release(&s);

	stream_init(&s, STREAM_CHAT, 0);
	stream_feed(&s, json, strlen(json), 1, &d);
	stream_end(&s, 2);
	buf_reset(&got);
	stream_check(&s, &ok, &x, &c);
	codes(&c, &got);
	CHECK_STR(got.data, "malformed_sse,no_done,empty_output");
	stream_release(&s);
	buf_release(&got);
}

/* Timings follow arrival stamps: role-only and empty chunks are no tokens. */
static void test_timing(void)
{
	static const char *const ev[] = {
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
		": keep-alive\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null,\"content\":\"\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hm\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"4\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"37\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5,\"total_tokens\":8}}\n\n",
		"data: [DONE]\n\n",
	};
	static const double at[] = {120, 150, 200, 260, 300, 340, 400, 410, 415};
	struct stream_timing t;
	struct stream s;
	struct diag d;
	const char *body;
	size_t i;

	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 100);
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		CHECK_EQ_LONG(stream_feed(&s, ev[i], strlen(ev[i]), at[i], &d), ERR_OK);
	stream_end(&s, 420);
	stream_timing(&s, &t);
	CHECK(t.first_byte_ms == 20);
	CHECK(t.ttft_ms == 160);  /* the reasoning chunk at 260 */
	CHECK(t.ttfc_ms == 200);  /* the first content at 300 */
	CHECK(t.e2e_ms == 320);
	CHECK(t.tpot_ms == (340.0 - 260.0) / 4); /* 5 completion tokens */
	stream_release(&s);

	/* nothing arrived: everything but e2e is undefined */
	stream_init(&s, STREAM_CHAT, 100);
	stream_end(&s, 150);
	stream_timing(&s, &t);
	CHECK(t.first_byte_ms == -1 && t.ttft_ms == -1 && t.ttfc_ms == -1);
	CHECK(t.tpot_ms == -1 && t.e2e_ms == 50);
	stream_release(&s);

	/* a tool call counts as content for ttfc */
	stream_init(&s, STREAM_CHAT, 0);
	body = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
	       "\"function\":{\"name\":\"f\"}}]}}]}\n\n";
	stream_feed(&s, body, strlen(body), 7, &d);
	stream_end(&s, 9);
	stream_timing(&s, &t);
	CHECK(t.ttft_ms == 7 && t.ttfc_ms == 7);
	CHECK_EQ_LONG(s.ntools, 1);
	stream_release(&s);
	stream_release(NULL);
}

/* Continuous usage: the last one wins; odd counts are bad usage. */
static void test_usage_shapes(void)
{
	static const struct {
		const char *usage;
		const char *why; /* substring of the reason, "" = valid */
	} cases[] = {
		{"{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}", ""},
		{"{\"prompt_tokens\":3,\"completion_tokens\":2.5,\"total_tokens\":5.5}",
		 "completion_tokens is not an integer"},
		{"{\"prompt_tokens\":-3,\"completion_tokens\":8,\"total_tokens\":5}",
		 "prompt_tokens is negative"},
		{"{\"prompt_tokens\":\"3\",\"completion_tokens\":2,\"total_tokens\":5}",
		 "prompt_tokens is not a number"},
		{"{\"prompt_tokens\":3,\"completion_tokens\":2}", "total_tokens is missing"},
		{"[]", "usage is not an object"},
	};
	struct stream_expect x = {1, -1};
	struct stream_checks c;
	struct stream s;
	struct buf in;
	struct diag d;
	size_t i;

	diag_init(&d);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_init(&in, 4096);
		buf_printf(&in,
			   "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":"
			   "{\"prompt_tokens\":3,\"completion_tokens\":0,\"total_tokens\":3}}\n\n"
			   "data: {\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n",
			   cases[i].usage);
		stream_init(&s, STREAM_CHAT, 0);
		stream_feed(&s, in.data, in.len, 1, &d);
		stream_end(&s, 2);
		stream_check(&s, NULL, &x, &c);
		if (!cases[i].why[0]) {
			CHECK_EQ_LONG(c.n, 0);
			CHECK(s.usage.valid);
			CHECK_EQ_LONG(s.usage.completion_tokens, 2);
		} else {
			CHECK_EQ_LONG(c.n, 1);
			CHECK(c.f[0].code == STREAM_F_BAD_USAGE);
			CHECK(strstr(c.f[0].msg, cases[i].why) != NULL);
		}
		stream_release(&s);
		buf_release(&in);
	}
}

/* Only choice 0 is assembled; other indices are counted. */
static void test_other_choices(void)
{
	const char *in =
		"data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"B\"}},"
		"{\"index\":0,\"delta\":{\"content\":\"A\"}}]}\n\ndata: [DONE]\n\n";
	struct stream s;
	struct diag d;

	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 0);
	stream_feed(&s, in, strlen(in), 1, &d);
	stream_end(&s, 2);
	CHECK_STR(s.content.data, "A");
	CHECK_EQ_LONG(s.other_choices, 1);
	CHECK(s.done);
	stream_release(&s);
}

/* A non-streamed response (stream: false): the message in place of the
 * deltas, judged like a stream; an error body, and a body that is not JSON. */
static void test_whole(void)
{
	const char *ok =
		"{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
		"\"message\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"think\","
		"\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get\","
		"\"arguments\":\"{\\\"city\\\": \\\"Oslo\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],"
		"\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":7,\"total_tokens\":17}}";
	const char *err = "{\"object\":\"error\",\"message\":\"Grammar error\",\"type\":\"BadRequestError\",\"code\":400}";
	struct stream_transport tr = {200, HTTP_FAIL_NONE, NULL, 0};
	struct stream_expect x = {1, -1, 64};
	struct stream_checks ck;
	struct stream s;
	struct diag d;

	diag_init(&d);
	stream_init_whole(&s, STREAM_CHAT, 0);
	CHECK(!stream_feed(&s, ok, 40, 5, &d));
	CHECK(!stream_feed(&s, ok + 40, strlen(ok) - 40, 9, &d));
	stream_end(&s, 10);
	stream_check(&s, &tr, &x, &ck);
	CHECK_EQ_LONG(ck.n, 0);
	CHECK(s.done && s.ntools == 1 && s.content.len == 0);
	CHECK_STR(s.reasoning.data, "think");
	CHECK_STR(s.tools[0].name.data, "get");
	CHECK_STR(s.tools[0].arguments.data, "{\"city\": \"Oslo\"}");
	CHECK_STR(s.finish_reason.data, "tool_calls");
	CHECK_EQ_LONG(s.usage.completion_tokens, 7);
	CHECK(s.t_first_token == 10 && s.t_first_byte == 5);
	stream_release(&s);
	stream_init_whole(&s, STREAM_CHAT, 0);
	stream_feed(&s, err, strlen(err), 1, &d);
	stream_end(&s, 2);
	stream_check(&s, &tr, &x, &ck);
	CHECK(stream_checks_has(&ck, STREAM_F_SSE_ERROR_FRAME) && strstr(ck.f[0].msg, "Grammar error"));
	stream_release(&s);
	stream_init_whole(&s, STREAM_COMPLETIONS, 0);
	stream_feed(&s, "data: {}\n\n", 10, 1, &d);
	stream_end(&s, 2);
	stream_check(&s, &tr, &x, &ck);
	CHECK(stream_checks_has(&ck, STREAM_F_MALFORMED_SSE) && strstr(ck.f[0].msg, "not a JSON object"));
	stream_release(&s);
}

/* Numbers too large for the integer they become (found by fuzzing: the
 * conversion was undefined): an optional count is absent, a tool index is a
 * malformation and the call falls back to its position. */
static void test_huge_numbers(void)
{
	const char *in =
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1e300,"
		"\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n"
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,"
		"\"total_tokens\":3,\"reasoning_tokens\":1e300,"
		"\"prompt_tokens_details\":{\"cached_tokens\":-1e300}}}\n\ndata: [DONE]\n\n";
	struct stream s;
	struct diag d;

	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 0);
	stream_feed(&s, in, strlen(in), 1, &d);
	stream_end(&s, 2);
	CHECK_EQ_LONG(s.ntools, 1);
	CHECK(s.ntools == 1 && s.tools[0].index == 0);
	CHECK_EQ_LONG(s.malformed, 1);
	CHECK(strstr(s.malformed_msg, "index") != NULL);
	CHECK(s.usage.valid);
	CHECK_EQ_LONG(s.usage.reasoning_tokens, -1);
	CHECK_EQ_LONG(s.usage.cached_tokens, -1);
	stream_release(&s);
}

/* A summary of everything assembled, to compare runs. */
static void summary(const struct stream *s, struct buf *out)
{
	struct stream_checks c;

	stream_check(s, NULL, NULL, &c);
	buf_printf(out, "%s|%s|%s|%lld|%d|", s->content.data, s->reasoning.data,
		   s->finish_reason.data, s->usage.total_tokens, s->done);
	tools(s, out);
	buf_puts(out, "|");
	codes(&c, out);
}

/* Damaged transcripts (bytes dropped, changed or cut) never crash, and give
 * the same result in any split. */
static void test_damaged(void)
{
	static const char *const files[] = {"vllm_tools.sse", "sglang_finish.sse",
					    "utf8.sse", "framing.sse"};
	static const char noise[] = "\r\n:{}\"\\[]0a\x80\xE4";
	struct buf in, whole, split;
	struct stream s;
	size_t f, pos, cut;
	int iter;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		for (iter = 0; iter < 60; iter++) {
			buf_init(&in, 1 << 20);
			buf_init(&whole, 1 << 20);
			buf_init(&split, 1 << 20);
			CHECK(load(files[f], &in) == ERR_OK);
			pos = rng(in.len);
			in.data[pos] = noise[rng(sizeof(noise) - 1)];
			cut = in.len - rng(in.len / 4 + 1);
			buf_truncate(&in, cut);
			assemble(&s, STREAM_CHAT, &in, 0);
			summary(&s, &whole);
			stream_release(&s);
			assemble(&s, STREAM_CHAT, &in, -1);
			summary(&s, &split);
			stream_release(&s);
			CHECK_STR(split.data, whole.data);
			buf_release(&in);
			buf_release(&whole);
			buf_release(&split);
		}
	}
}

/* Feeds `text` whole as a chat stream and judges it with `x`. */
static void judge(const char *text, const struct stream_expect *x, struct stream *s,
		  struct stream_checks *c)
{
	struct diag d;

	diag_init(&d);
	stream_init(s, STREAM_CHAT, 0);
	stream_feed(s, text, strlen(text), 1, &d);
	stream_end(s, 2);
	stream_check(s, NULL, x, c);
}

#define DELTA(d, fr) "data: {\"choices\":[{\"index\":0,\"delta\":" d ",\"finish_reason\":" fr "}]}\n\n"
#define USAGE7 "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":7,\"total_tokens\":10}}\n\n"
#define DONE "data: [DONE]\n\n"

/* A \u0000 escape does not end the text; "\\u0000" is no NUL; a raw NUL
 * inside a string is a raw control byte (test_raw_control), never the end. */
static void test_nul_kept(void)
{
	static const char raw[] = DELTA("{\"content\":\"a\0b\"}", "null") DONE;
	struct stream_expect x = {0, -1, 64};
	struct stream_checks c;
	struct stream s;
	struct diag d;

	judge(DELTA("{\"content\":\"{\\\"answer\\\": 437}\\u0000 junk\",\"reasoning\":\"r\\u0000s\"}", "\"stop\"")
	      DELTA("{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\\u0000x\"}}]}", "null")
	      DONE, &x, &s, &c);
	CHECK_EQ_LONG(c.n, 0);
	CHECK_EQ_LONG(s.content.len, 21);
	CHECK(!memcmp(s.content.data, "{\"answer\": 437}\0 junk", 21));
	CHECK_EQ_LONG(s.reasoning.len, 3);
	CHECK(!memcmp(s.reasoning.data, "r\0s", 3));
	CHECK_EQ_LONG(s.ntools, 1);
	CHECK_EQ_LONG(s.tools[0].arguments.len, 4);
	stream_release(&s);
	judge(DELTA("{\"content\":\"a\\\\u0000\"}", "\"stop\"") DONE, &x, &s, &c);
	CHECK_STR(s.content.data, "a\\u0000");
	stream_release(&s);
	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 0);
	stream_feed(&s, raw, sizeof(raw) - 1, 1, &d);
	stream_end(&s, 2);
	CHECK(strstr(s.malformed_msg, "raw control byte 0x00") != NULL);
	stream_release(&s);
}

/* A raw control byte inside a string is not JSON text (RFC 8259 section 7):
 * malformed_sse, with the byte named; the same byte escaped, or a raw tab
 * between tokens, is fine. */
static void test_raw_control(void)
{
	static const char *const bad[] = {
		DELTA("{\"content\":\"a\x01" "b\"}", "\"stop\"") DONE,
		DELTA("{\"content\":\"tab\there\"}", "\"stop\"") DONE,
		DELTA("{\"content\":\"x\x1f\"}", "\"stop\"") DONE,
		/* two data lines: the line break lands inside the string */
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\ndata: b\"},"
		"\"finish_reason\":\"stop\"}]}\n\n" DONE,
	};
	static const char *const byte[] = {"0x01", "0x09", "0x1f", "0x0a"};
	struct stream_expect x = {0, -1, 64};
	struct stream_checks c;
	struct stream s;
	struct buf got;
	size_t i;

	buf_init(&got, 4096);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		judge(bad[i], &x, &s, &c);
		buf_reset(&got);
		codes(&c, &got);
		CHECK(strstr(got.data, "malformed_sse") != NULL);
		CHECK(strstr(s.malformed_msg, "raw control byte") != NULL);
		CHECK(strstr(s.malformed_msg, byte[i]) != NULL);
		stream_release(&s);
	}
	judge(DELTA("{\"content\":\"a\\u0001\\tb\"}", "\"stop\"") "data:\t{\"choices\":[],\"usage\":"
	      "{\"prompt_tokens\":3,\t\"completion_tokens\":1,\"total_tokens\":4}}\n\n" DONE, &x, &s, &c);
	buf_reset(&got);
	codes(&c, &got);
	CHECK(strstr(got.data, "malformed_sse") == NULL);
	CHECK_EQ_LONG(s.content.len, 4);
	stream_release(&s);
	buf_release(&got);
}

static void check_finish(const char *fr, long long fixed, const char *want)
{
	char text[512];
	struct stream_expect x = {1, fixed, 7};
	struct stream_checks c;
	struct stream s;
	struct buf got;

	snprintf(text, sizeof(text), "%s%s%s",
		 fr ? DELTA("{\"content\":\"ok\"}", "\"%s\"") : DELTA("{\"content\":\"ok\"}", "null"),
		 USAGE7, DONE);
	if (fr) {
		char t2[512];
		snprintf(t2, sizeof(t2), text, fr);
		memcpy(text, t2, sizeof(text));
	}
	judge(text, &x, &s, &c);
	buf_init(&got, 4096);
	codes(&c, &got);
	if (strcmp(got.data, want))
		fprintf(stderr, "finish_reason %s:\n", fr ? fr : "none");
	CHECK_STR(got.data, want);
	CHECK(c.n == 0 || c.f[0].msg[0]);
	buf_release(&got);
	stream_release(&s);
}

static void test_finish_reason(void)
{
	check_finish("stop", -1, "");
	check_finish("tool_calls", -1, "");
	check_finish(NULL, -1, "");
	check_finish("length", 7, "");
	check_finish("length", -1, "truncated");
	check_finish("abort", -1, "aborted");
	check_finish("abort", 7, "aborted");
	check_finish("content_filter", -1, "bad_finish_reason");
	check_finish("repetition", -1, "bad_finish_reason");
	check_finish("weird", -1, "bad_finish_reason");
}

/* An abort before any token is aborted alone, not empty_output too. */
static void test_abort_empty(void)
{
	struct stream_expect x = {1, -1, 7};
	struct stream_checks c;
	struct stream s;

	judge(DELTA("{}", "\"abort\"") USAGE7 DONE, &x, &s, &c);
	CHECK_EQ_LONG(c.n, 1);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_ABORTED);
	stream_release(&s);
}

/* finish_reason length with fewer tokens than asked: vLLM 0.32 shortened
 * max_tokens to what its context left; the message says so instead of "cut
 * at max_tokens" (and a fixed-length case's length_mismatch too). */
static void test_context_cut(void)
{
	struct stream_expect free16 = {1, -1, 16}, fixed16 = {1, 16, 16}, free7 = {1, -1, 7};
	struct stream_checks c;
	struct stream s;

	judge(DELTA("{\"content\":\"ok\"}", "\"length\"") USAGE7 DONE, &free16, &s, &c);
	CHECK_EQ_LONG(c.n, 1);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_TRUNCATED);
	CHECK(strstr(c.f[0].msg, "cut short of max_tokens") && strstr(c.f[0].msg, "context limit"));
	stream_release(&s);
	judge(DELTA("{\"content\":\"ok\"}", "\"length\"") USAGE7 DONE, &fixed16, &s, &c);
	CHECK_EQ_LONG(c.n, 1);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_LENGTH_MISMATCH);
	CHECK(strstr(c.f[0].msg, "expected 16") && strstr(c.f[0].msg, "context limit"));
	stream_release(&s);
	judge(DELTA("{\"content\":\"ok\"}", "\"length\"") USAGE7 DONE, &free7, &s, &c);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_TRUNCATED);
	CHECK(strstr(c.f[0].msg, "cut at max_tokens") && !strstr(c.f[0].msg, "context limit"));
	stream_release(&s);
}

/* needle's caps give response_too_large, naming the cap. */
static void test_caps(void)
{
	struct stream_checks c;
	struct stream s;
	struct buf in;
	struct diag d;
	enum err e = ERR_OK;
	int i;

	buf_init(&in, 1 << 24);
	for (i = 0; i <= STREAM_TOOLS_MAX; i++)
		CHECK(buf_printf(&in, DELTA("{\"tool_calls\":[{\"index\":%d,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}", "null"), i) == ERR_OK);
	diag_init(&d);
	stream_init(&s, STREAM_CHAT, 0);
	e = stream_feed(&s, in.data, in.len, 1, &d);
	CHECK_EQ_LONG(e, ERR_LIMIT);
	CHECK(strstr(d.msg, "more than 1024 tool calls") != NULL);
	stream_end(&s, 2);
	stream_check(&s, NULL, NULL, &c);
	CHECK_EQ_LONG(c.n, 1);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_TOO_LARGE);
	CHECK_STR(stream_fail_name(c.f[0].code), "response_too_large");
	stream_release(&s);
	buf_reset(&in);
	buf_printf(&in, "data: {\"model\":\"%02000d\",\"choices\":[]}\n\n", 0);
	stream_init(&s, STREAM_CHAT, 0);
	CHECK_EQ_LONG(stream_feed(&s, in.data, in.len, 1, &d), ERR_LIMIT);
	stream_end(&s, 2);
	stream_check(&s, NULL, NULL, &c);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_TOO_LARGE);
	CHECK(strstr(c.f[0].msg, "the model name exceeds needle's cap of 1024 bytes") != NULL);
	stream_release(&s);
	/* one SSE line over the parser's cap: needle's limit, not bad framing */
	buf_release(&in);
	buf_init(&in, SSE_MAX_DEFAULT + 4096);
	buf_puts(&in, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"");
	while (in.len < SSE_MAX_DEFAULT + 16 && buf_puts(&in, "xxxxxxxxxxxxxxxx") == ERR_OK)
		;
	buf_puts(&in, "\"}}]}\n\n" DONE);
	stream_init(&s, STREAM_CHAT, 0);
	stream_feed(&s, in.data, in.len, 1, &d);
	stream_end(&s, 2);
	stream_check(&s, NULL, NULL, &c);
	CHECK_EQ_LONG(c.n, 1);
	CHECK_EQ_LONG(c.f[0].code, STREAM_F_TOO_LARGE);
	CHECK(strstr(c.f[0].msg, "an SSE line or event exceeds needle's cap of 16777216 bytes") != NULL);
	stream_release(&s);
	buf_release(&in);
}

/* The servers' context-length texts (docs/protocol.md "Context-length refusals"). */
static void test_context_error(void)
{
	static const char *const yes[] = {
		"This model's maximum context length is 32768 tokens. However, you requested 33000 tokens",
		"You passed 131073 input tokens and requested 0 output tokens. However, the model's context length is only 131072 tokens",
		"The decoder prompt (length 9000) is longer than the maximum model length of 8192",
		"The input (9000 tokens) is longer than the model's context length (8192 tokens).",
		"Requested token count exceeds the model's maximum context length of 8192 tokens.",
		"Input length (9000) exceeds model's maximum context length (8192).",
	};
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(stream_is_context_error(yes[i], strlen(yes[i])));
	CHECK(!stream_is_context_error("Messages cannot be empty.", 25));
	CHECK(!stream_is_context_error("The model `x` does not exist.", 29));
}

int main(void)
{
	T_RUN(test_nul_kept);
	T_RUN(test_raw_control);
	T_RUN(test_finish_reason);
	T_RUN(test_abort_empty);
	T_RUN(test_context_cut);
	T_RUN(test_caps);
	T_RUN(test_context_error);
	T_RUN(test_goldens);
	T_RUN(test_messages);
	T_RUN(test_context_frame);
	T_RUN(test_body_message);
	T_RUN(test_transport);
	T_RUN(test_timing);
	T_RUN(test_usage_shapes);
	T_RUN(test_other_choices);
	T_RUN(test_whole);
	T_RUN(test_huge_numbers);
	T_RUN(test_damaged);
	return T_DONE();
}
