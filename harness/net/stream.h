/*
 * stream — assembles one streamed response of /v1/chat/completions or
 * /v1/completions from its raw bytes, and judges it (the transport check).
 *
 * Bytes go through the sse parser; each `data:` event is one JSON chunk. Both
 * server dialects are understood (docs/protocol.md "Chat streams"):
 *   - reasoning: `delta.reasoning` (vLLM >= ~0.11.2) is read first, the legacy
 *     `delta.reasoning_content` (vLLM <= 0.11, SGLang) only when `reasoning`
 *     is null or absent, so transitional vLLM builds that send both are not
 *     doubled; SGLang's always-present `"reasoning_content": null` is nothing;
 *   - finish_reason on the last content chunk (vLLM) or in its own empty chunk
 *     (SGLang chat);
 *   - tool-call deltas merged by `index`: id, type and name from the first
 *     chunk that has them non-null, `function.arguments` concatenated;
 *   - usage in the chunk with `choices: []` (or on every chunk with
 *     continuous_usage_stats: the last one wins);
 *   - error frames `{"error":{...}}` (nested), `{"object":"error",...}` (flat)
 *     and `{"error":"Unauthorized"}` (a string);
 *   - `data: [DONE]` ends the stream;
 *   - /v1/completions chunks carry `choices[].text` (kept as content).
 * A response asked for with `stream: false` (stream_init_whole) is one JSON
 * document read whole at stream_end: `choices[0].message` in place of the
 * deltas (content, reasoning, tool_calls), `text` for completions,
 * finish_reason and usage, or an error body; it is judged like a stream, a
 * complete document standing for `data: [DONE]` and its arrival for every
 * token's.
 * null and a missing key are the same; unknown keys are ignored. Only choice
 * index 0 is assembled (needle sends n = 1); other indices are counted.
 *
 * Timings: the caller stamps every chunk of bytes with its arrival time (the
 * io_now_ms monotonic clock); a chunk's events all get that time. A token is a
 * chunk that adds non-empty reasoning, content (or text) or a tool call (an id,
 * name or arguments); a role-only or empty chunk is never a first token.
 *
 * Text is kept byte for byte: a `\u0000` escape (or a raw NUL) inside a string
 * of a chunk is kept as a NUL byte, so content, reasoning and arguments are
 * (data, len) pairs, never C strings, from the stream to the grade.
 *
 * Memory: content, reasoning and tool arguments grow in capped bufs; the first
 * STREAM_HEAD_MAX bytes of the body are kept to explain a non-200 response.
 * Every cap (STREAM_*_MAX) that a response exceeds stops the parse and is
 * named in `too_large` (judged as response_too_large).
 */
#ifndef NEEDLE_STREAM_H
#define NEEDLE_STREAM_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "http.h"
#include "sse.h"

#define STREAM_TEXT_MAX ((size_t)256 << 20) /* cap on content, reasoning, arguments */
#define STREAM_HEAD_MAX ((size_t)16 << 10)  /* body bytes kept to explain errors */
#define STREAM_GAPS_MAX ((size_t)1 << 22)   /* inter-token gaps kept (then no more) */
#define STREAM_MSG_MAX 512                  /* one failure's message, NUL included */
#define STREAM_TOOLS_MAX 1024               /* cap on distinct tool calls */
#define STREAM_FINISH_MAX 256               /* cap on finish_reason */
#define STREAM_MODEL_MAX 1024               /* cap on `model` */
#define STREAM_USAGE_MAX ((size_t)64 << 10) /* cap on the usage object's JSON */

enum stream_api {
	STREAM_CHAT,       /* /v1/chat/completions: choices[].delta */
	STREAM_COMPLETIONS /* /v1/completions: choices[].text */
};

/* One tool call assembled from its deltas. */
struct stream_tool_call {
	long index;          /* the delta's `index` */
	struct buf id;       /* first non-null id ("" when none came) */
	struct buf type;     /* first non-null type, normally "function" */
	struct buf name;     /* first non-null function.name */
	struct buf arguments;/* function.arguments fragments, concatenated */
};

/* The usage object; the last non-null one in the stream wins. */
struct stream_usage {
	int present;                /* a non-null `usage` object was seen */
	int valid;                  /* the three counts are integers >= 0 and
				     * total == prompt + completion */
	long long prompt_tokens;    /* -1 when absent or not an integer >= 0 */
	long long completion_tokens;
	long long total_tokens;
	long long reasoning_tokens; /* SGLang top-level `reasoning_tokens` or
				     * completion_tokens_details.reasoning_tokens; -1 */
	long long cached_tokens;    /* prompt_tokens_details.cached_tokens; -1 */
	struct buf json;            /* that usage object, compact JSON ("" if none) */
	char why[STREAM_MSG_MAX];   /* why it is not valid, "" when valid */
};

/* Milliseconds since the start passed to stream_init; -1 when not defined. */
struct stream_timing {
	double first_byte_ms; /* first body byte */
	double ttft_ms;       /* first token of any kind */
	double ttfc_ms;       /* first content (or text) or tool-call token */
	double e2e_ms;        /* stream_end */
	double tpot_ms;       /* (last token - first token) / (completion_tokens - 1);
			       * -1 without valid usage or with < 2 tokens */
};

/* An assembled response. Fields are read-only for the caller. */
struct stream {
	enum stream_api api;
	struct sse_parser sse;        /* private */
	struct buf head;              /* first STREAM_HEAD_MAX body bytes */
	int whole;                    /* a non-streamed response (stream: false) */
	struct buf body;              /* private: its body, read at stream_end */
	size_t bytes;                 /* body bytes fed */

	struct buf content;           /* delta.content (chat) or text (completions) */
	struct buf reasoning;         /* delta.reasoning, else delta.reasoning_content */
	struct stream_tool_call *tools; /* ntools calls in order of first appearance */
	size_t ntools;
	size_t tools_cap;             /* private */
	struct buf finish_reason;     /* last non-null finish_reason ("" when none) */
	struct buf model;             /* `model` of the first chunk that has one */
	struct stream_usage usage;

	size_t chunks;                /* JSON chunks (data events other than [DONE]) */
	size_t other_choices;         /* choice entries with an index other than 0 */
	int saw_reasoning;            /* a delta had a `reasoning` key (vLLM new) */
	int saw_reasoning_content;    /* a delta had a `reasoning_content` key */
	int done;                     /* `data: [DONE]` arrived */
	size_t after_done;            /* data events after [DONE] (ignored) */

	size_t error_frames;          /* chunks with an `error` or object:"error" */
	char error_msg[STREAM_MSG_MAX]; /* the first frame's message (+ type/code) */

	size_t malformed;             /* SSE malformations and unusable chunks */
	char malformed_msg[STREAM_MSG_MAX]; /* the first, with its byte offset */

	double t_start;               /* io_now_ms at the start of the request */
	double t_first_byte;          /* -1 until bytes arrive */
	double t_first_token;         /* -1 until the first token */
	double t_first_content;       /* -1 until the first content/tool token */
	double t_last_token;          /* -1 until the first token */
	double *gaps;                 /* ms between consecutive token chunks (the
				       * inter-token latencies), in order */
	size_t ngaps, gaps_cap;       /* private: gaps_cap */
	double t_end;                 /* -1 until stream_end */
	double t_now;                 /* private: arrival time of the bytes being fed */
	int fatal;                    /* private: ERR_NOMEM/ERR_LIMIT met in a callback */
	int nul_event;                /* private: the chunk being read had NUL marks */
	char too_large[STREAM_MSG_MAX]; /* the cap a response exceeded, "" if none */
};

/* Failure codes of the transport check, in the order they are listed. */
enum stream_fail {
	STREAM_F_HTTP_STATUS,    /* a response other than 200 (body message kept) */
	STREAM_F_CONNECT,        /* no connection (refused, unreachable, DNS, TLS) */
	STREAM_F_TIMEOUT,        /* total, first-byte or idle timeout */
	STREAM_F_MALFORMED_SSE,  /* bad framing, invalid UTF-8, not JSON, not SSE,
				  * stream ended inside an event */
	STREAM_F_SSE_ERROR_FRAME,/* an error frame arrived */
	STREAM_F_NO_DONE,        /* the stream ended without data: [DONE] */
	STREAM_F_EMPTY_OUTPUT,   /* no content, no tool call, no reasoning */
	STREAM_F_MISSING_USAGE,  /* usage was requested and never came */
	STREAM_F_BAD_USAGE,      /* total != prompt + completion, negative, non-integer */
	STREAM_F_LENGTH_MISMATCH,/* completion_tokens != the fixed length asked for */
	STREAM_F_REASONING_ONLY, /* no content or tool call, only reasoning */
	STREAM_F_ABORTED,        /* finish_reason "abort" (e.g. a weight reload) */
	STREAM_F_TRUNCATED,      /* finish_reason "length" on a case that is not
				  * fixed-length: cut at max_tokens */
	STREAM_F_FINISH_REASON,  /* any finish_reason other than stop, length,
				  * tool_calls, function_call, abort */
	STREAM_F_TOO_LARGE,      /* the response exceeded one of needle's caps */
	STREAM_F_CONTEXT_OVERFLOW,/* prompt + max_tokens do not fit the model's
				  * context (a server 400, or needle's pre-flight) */
	STREAM_F_NOT_SENT,       /* never sent: its load case stopped at its
				  * fixed-length pre-check (loadplan.h) */
	STREAM_F_COUNT
};

/* What the request asked for, so the check knows what to demand. */
struct stream_expect {
	int usage_requested;     /* stream_options.include_usage was sent */
	long long fixed_length;  /* completion_tokens that must come back; < 0: any */
	long long max_tokens;    /* max_tokens sent, for messages; 0: not known */
};

/* How the transfer ended, from the http module (struct http_done). */
struct stream_transport {
	long status;             /* HTTP status, 0 when none */
	enum http_fail fail;     /* HTTP_FAIL_NONE for a complete response */
	const char *msg;         /* http_done.msg, may be NULL */
	int too_large;           /* the caller stopped reading: the body exceeded
				  * its cap (`msg` names it) */
};

struct stream_failure {
	enum stream_fail code;
	char msg[STREAM_MSG_MAX]; /* readable: the error frame's message, the HTTP
				   * body excerpt, the bad counts... */
};

/* The verdict: `n` failures in enum order; n == 0 means the transport passed. */
struct stream_checks {
	size_t n;
	struct stream_failure f[STREAM_F_COUNT];
};

/* Sets up an empty stream for `api` whose request started at `t_start_ms`
 * (io_now_ms). Allocates nothing. */
void stream_init(struct stream *s, enum stream_api api, double t_start_ms);

/* The same for a response asked for with `stream: false`. */
void stream_init_whole(struct stream *s, enum stream_api api, double t_start_ms);

/* Frees everything the stream holds. Accepts NULL. */
void stream_release(struct stream *s);

/* Consumes `n` body bytes (borrowed) that arrived at `now_ms`. Malformed input
 * is not an error here: it is recorded in the stream (malformed, error frames)
 * for stream_check. Returns ERR_NOMEM, or ERR_LIMIT when the content,
 * reasoning or arguments exceed STREAM_TEXT_MAX (the caller should abort). */
enum err stream_feed(struct stream *s, const char *bytes, size_t n,
		     double now_ms, struct diag *d);

/* Marks the end of the body at `now_ms` (call it exactly once, also after a
 * transport failure); a stream cut inside an event counts as malformed. */
void stream_end(struct stream *s, double now_ms);

/* Fills `t` from the stream's timestamps and usage. */
void stream_timing(const struct stream *s, struct stream_timing *t);

/* The transport check. Judges the stream `s` (after stream_end) given how the
 * transfer ended and what was asked for, and fills `out`. One failure is
 * listed per cause; codes that are mere consequences of another are left out:
 *   - connect, or a non-200 status: that code alone (the message comes from
 *     the body: a JSON error in either shape, an HTML title/text excerpt,
 *     or "empty body");
 *   - a cap of needle's exceeded (stream's too_large, or tr->too_large):
 *     response_too_large alone, naming the cap;
 *   - a 400 whose message says the context length is exceeded (vLLM's and
 *     SGLang's wordings): context_overflow instead of http_status; so is an
 *     error frame of a 200 stream that says so, instead of sse_error_frame;
 *   - timeout: with malformed_sse and sse_error_frame if they also happened;
 *   - a 200 stream: malformed_sse, sse_error_frame, no_done as they happened;
 *     after an error frame nothing else is judged (the server said it failed);
 *     otherwise empty_output or reasoning_only when there is no content and
 *     no tool call; missing_usage (not when the stream was cut: no_done),
 *     bad_usage, length_mismatch (only against valid usage); then the
 *     finish_reason: aborted, truncated ("length" when x->fixed_length < 0),
 *     finish_reason (an unknown or failing value, e.g. content_filter,
 *     error, repetition); no finish_reason at all is not judged.
 * Another transport failure (reset, cut body) of a 200 response shows as
 * no_done with the transport's message. `x` may be NULL (no expectations). */
void stream_check(const struct stream *s, const struct stream_transport *tr,
		  const struct stream_expect *x, struct stream_checks *out);

/* Whether code `c` is among the failures. */
int stream_checks_has(const struct stream_checks *c, enum stream_fail code);

/* The stable name of a code: "http_status", "connect", ... "reasoning_only",
 * "aborted", "truncated", "bad_finish_reason", "response_too_large",
 * "context_overflow". */
const char *stream_fail_name(enum stream_fail code);

/* Whether an error message (`len` bytes) is a server's "prompt does not fit
 * the context" refusal (vLLM's and SGLang's wordings, docs/protocol.md "Context-length refusals"). */
int stream_is_context_error(const char *msg, size_t len);

/* Writes a one-line readable message for an error body (`len` bytes, any
 * content) into `out` (`cap` bytes, NUL-terminated, truncated with "..."):
 * error.message of {"error":{...}}, message of {"object":"error",...}, the
 * string of {"error":"..."}, else the HTML <title> or text with tags stripped
 * and spaces collapsed, else "empty body". */
void stream_body_message(const char *body, size_t len, char *out, size_t cap);

#endif
