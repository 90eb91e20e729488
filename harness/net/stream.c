/*
 * stream — chunk assembly and the transport check. See stream.h; the chunk
 * shapes are those of docs/protocol.md "Chat streams" and following (vLLM
 * chat_completion/serving.py, completion/serving.py; SGLang serving_chat.py,
 * serving_completions.py, sse_utils.py).
 */
#include "stream.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "base/mem.h"

#define EXCERPT 60 /* bytes of a bad chunk quoted in a message */

void stream_init(struct stream *s, enum stream_api api, double t_start_ms)
{
	memset(s, 0, sizeof(*s));
	s->api = api;
	sse_init(&s->sse, SSE_MAX_DEFAULT);
	buf_init(&s->head, STREAM_HEAD_MAX);
	buf_init(&s->content, STREAM_TEXT_MAX);
	buf_init(&s->reasoning, STREAM_TEXT_MAX);
	buf_init(&s->finish_reason, STREAM_FINISH_MAX);
	buf_init(&s->model, STREAM_MODEL_MAX);
	buf_init(&s->usage.json, STREAM_USAGE_MAX);
	s->usage.prompt_tokens = s->usage.completion_tokens = -1;
	s->usage.total_tokens = s->usage.reasoning_tokens = -1;
	s->usage.cached_tokens = -1;
	s->t_start = t_start_ms;
	s->t_first_byte = s->t_first_token = s->t_first_content = -1;
	s->t_last_token = s->t_end = -1;
}

void stream_init_whole(struct stream *s, enum stream_api api, double t_start_ms)
{
	stream_init(s, api, t_start_ms);
	s->whole = 1;
	buf_init(&s->body, STREAM_TEXT_MAX);
}

static void tool_release(struct stream_tool_call *t)
{
	buf_release(&t->id);
	buf_release(&t->type);
	buf_release(&t->name);
	buf_release(&t->arguments);
}

void stream_release(struct stream *s)
{
	size_t i;

	if (!s)
		return;
	sse_release(&s->sse);
	buf_release(&s->head);
	buf_release(&s->body);
	buf_release(&s->content);
	buf_release(&s->reasoning);
	buf_release(&s->finish_reason);
	buf_release(&s->model);
	buf_release(&s->usage.json);
	for (i = 0; i < s->ntools; i++)
		tool_release(&s->tools[i]);
	mem_free(s->tools);
	s->tools = NULL;
	mem_free(s->gaps);
	s->gaps = NULL;
	s->ngaps = s->gaps_cap = 0;
	s->ntools = s->tools_cap = 0;
}

static void malformed(struct stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void malformed(struct stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->malformed++)
		return;
	va_start(ap, fmt);
	vsnprintf(s->malformed_msg, sizeof(s->malformed_msg), fmt, ap);
	va_end(ap);
}

/* Records an append failure (ERR_NOMEM, ERR_LIMIT) to stop the parse. */
static void keep(struct stream *s, enum err e)
{
	if (e && !s->fatal)
		s->fatal = e;
}

/* Stops the parse because the response exceeded the cap on `what`. */
static void too_large(struct stream *s, const char *what, size_t cap)
{
	if (!s->too_large[0])
		snprintf(s->too_large, sizeof(s->too_large),
			 "%s exceeds needle's cap of %zu bytes", what, cap);
	keep(s, ERR_LIMIT);
}

/* The marker a NUL of the chunk was turned into before cJSON read it (cJSON
 * strings end at a NUL). 0xFF never occurs in valid UTF-8, and a chunk with
 * invalid UTF-8 is already malformed. */
#define NUL_MARK '\xFF'

/* Appends the string `v` of the current chunk to `b` (capped at `cap`, named
 * `what` when it overflows), turning NUL marks back into NUL bytes. */
static void put(struct stream *s, struct buf *b, const char *v, const char *what)
{
	size_t n = strlen(v), from = b->len, i;
	enum err e = buf_append(b, v, n);

	if (e == ERR_LIMIT) {
		too_large(s, what, b->max);
		return;
	}
	keep(s, e);
	if (e || !s->nul_event)
		return;
	for (i = from; i < b->len; i++)
		if (b->data[i] == NUL_MARK)
			b->data[i] = '\0';
}

/* A readable quote of at most EXCERPT bytes of `p`, control bytes as '.'. */
static void excerpt(const char *p, size_t n, char out[EXCERPT + 4])
{
	size_t i, k = n > EXCERPT ? EXCERPT : n;

	for (i = 0; i < k; i++)
		out[i] = (unsigned char)p[i] < 0x20 ? '.' : p[i];
	memcpy(out + k, n > EXCERPT ? "..." : "", n > EXCERPT ? 4 : 1);
}

/* `obj[key]` as a string; NULL when absent or null; a present non-string is
 * reported as malformed and treated as absent. */
static const char *get_str(struct stream *s, const cJSON *obj, const char *key,
			   size_t at)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v))
		return NULL;
	if (cJSON_IsString(v))
		return v->valuestring;
	malformed(s, "chunk at byte %zu: '%s' is not a string", at, key);
	return NULL;
}

/* --- error frames ------------------------------------------------------ */

/* "message (type T, code C)" from an object holding message/type/code. */
static void error_text(const cJSON *o, char *out, size_t cap)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "code");
	const char *msg = cJSON_IsString(m) ? m->valuestring : "(no message)";
	char code[32] = "";

	if (cJSON_IsNumber(c))
		snprintf(code, sizeof(code), ", code %.0f", c->valuedouble);
	else if (cJSON_IsString(c))
		snprintf(code, sizeof(code), ", code %.20s", c->valuestring);
	if (cJSON_IsString(t))
		snprintf(out, cap, "%s (type %s%s)", msg, t->valuestring, code);
	else if (code[0])
		snprintf(out, cap, "%s (%s)", msg, code + 2);
	else
		snprintf(out, cap, "%s", msg);
}

/* vLLM/SGLang in-stream errors (docs/protocol.md "Errors inside a stream"): {"error":{...}} nested,
 * {"object":"error",...} flat, {"error":"Unauthorized"} a string. Returns 1
 * when `j` is an error frame. */
static int error_frame(struct stream *s, const cJSON *j)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "object");
	char msg[STREAM_MSG_MAX];

	if (e && !cJSON_IsNull(e)) {
		if (cJSON_IsString(e))
			snprintf(msg, sizeof(msg), "%s", e->valuestring);
		else if (cJSON_IsObject(e))
			error_text(e, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "error frame of an unexpected shape");
	} else if (cJSON_IsString(o) && !strcmp(o->valuestring, "error")) {
		error_text(j, msg, sizeof(msg));
	} else {
		return 0;
	}
	if (!s->error_frames++)
		snprintf(s->error_msg, sizeof(s->error_msg), "%s", msg);
	return 1;
}

/* --- usage --------------------------------------------------------------- */

/* An integer >= 0 at `o[key]`, or -1 with the reason in u->why. */
static long long count(struct stream_usage *u, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	double x;

	if (!v || cJSON_IsNull(v)) {
		if (!u->why[0])
			snprintf(u->why, sizeof(u->why), "usage.%s is missing", key);
		return -1;
	}
	if (!cJSON_IsNumber(v)) {
		if (!u->why[0])
			snprintf(u->why, sizeof(u->why), "usage.%s is not a number", key);
		return -1;
	}
	x = v->valuedouble;
	if (x != floor(x) || x > 9e15 || x < -9e15) {
		if (!u->why[0])
			snprintf(u->why, sizeof(u->why),
				 "usage.%s is not an integer (%g)", key, x);
		return -1;
	}
	if (x < 0) {
		if (!u->why[0])
			snprintf(u->why, sizeof(u->why), "usage.%s is negative (%.0f)",
				 key, x);
		return -1;
	}
	return (long long)x;
}

/* An optional count: the value, or -1 when absent or not a count. */
static long long opt_count(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9e15 ||
	    v->valuedouble != floor(v->valuedouble))
		return -1; /* 9e15: as count(); the cast of a larger double is UB */
	return (long long)v->valuedouble;
}

/* vLLM: prompt/completion/total + optional *_details; SGLang adds a
 * top-level reasoning_tokens (docs/protocol.md "Usage"). The last usage wins. */
static void usage(struct stream *s, const cJSON *v)
{
	struct stream_usage *u = &s->usage;
	enum err e;

	u->present = 1;
	u->valid = 0;
	u->why[0] = '\0';
	u->prompt_tokens = u->completion_tokens = u->total_tokens = -1;
	u->reasoning_tokens = u->cached_tokens = -1;
	buf_reset(&u->json);
	e = json_print(v, 0, &u->json, "the usage", NULL);
	if (e == ERR_LIMIT)
		too_large(s, "the usage object", u->json.max);
	else
		keep(s, e);
	if (!cJSON_IsObject(v)) {
		snprintf(u->why, sizeof(u->why), "usage is not an object");
		return;
	}
	u->prompt_tokens = count(u, v, "prompt_tokens");
	u->completion_tokens = count(u, v, "completion_tokens");
	u->total_tokens = count(u, v, "total_tokens");
	u->reasoning_tokens = opt_count(v, "reasoning_tokens");
	if (u->reasoning_tokens < 0)
		u->reasoning_tokens = opt_count(
			cJSON_GetObjectItemCaseSensitive(v, "completion_tokens_details"),
			"reasoning_tokens");
	u->cached_tokens = opt_count(
		cJSON_GetObjectItemCaseSensitive(v, "prompt_tokens_details"),
		"cached_tokens");
	if (u->why[0])
		return;
	if (u->total_tokens != u->prompt_tokens + u->completion_tokens) {
		snprintf(u->why, sizeof(u->why),
			 "usage.total_tokens %lld != prompt_tokens %lld + completion_tokens %lld",
			 u->total_tokens, u->prompt_tokens, u->completion_tokens);
		return;
	}
	u->valid = 1;
}

/* --- choices ------------------------------------------------------------- */

static void token(struct stream *s, int content)
{
	if (s->t_last_token >= 0 && s->ngaps < STREAM_GAPS_MAX) {
		if (s->ngaps == s->gaps_cap) {
			double *g = mem_grow(s->gaps, &s->gaps_cap, sizeof(*g), 256);

			if (!g) {
				keep(s, ERR_NOMEM);
				return;
			}
			s->gaps = g;
		}
		s->gaps[s->ngaps++] = s->t_now - s->t_last_token;
	}
	if (s->t_first_token < 0)
		s->t_first_token = s->t_now;
	if (content && s->t_first_content < 0)
		s->t_first_content = s->t_now;
	s->t_last_token = s->t_now;
}

static struct stream_tool_call *tool_at(struct stream *s, long index)
{
	struct stream_tool_call *t;
	size_t i;

	if (s->ntools && s->tools[s->ntools - 1].index == index)
		return &s->tools[s->ntools - 1]; /* the usual case: the same call goes on */
	for (i = 0; i < s->ntools; i++)
		if (s->tools[i].index == index)
			return &s->tools[i];
	if (s->ntools == STREAM_TOOLS_MAX) {
		if (!s->too_large[0])
			snprintf(s->too_large, sizeof(s->too_large),
				 "more than %d tool calls exceed needle's cap",
				 STREAM_TOOLS_MAX);
		keep(s, ERR_LIMIT);
		return NULL;
	}
	if (s->ntools == s->tools_cap) {
		t = mem_grow(s->tools, &s->tools_cap, sizeof(*t), 4);
		if (!t) {
			keep(s, ERR_NOMEM);
			return NULL;
		}
		s->tools = t;
	}
	t = &s->tools[s->ntools++];
	t->index = index;
	buf_init(&t->id, 4096);
	buf_init(&t->type, 256);
	buf_init(&t->name, 4096);
	buf_init(&t->arguments, STREAM_TEXT_MAX);
	return t;
}

/* Sets `b` from a non-empty `v` unless it already holds a value: id, type
 * and name come in the first chunk of a call; later SGLang chunks repeat
 * them as null. Returns 1 when `v` was non-empty. */
static int first_value(struct stream *s, struct buf *b, const char *v,
		       const char *what)
{
	if (!v || !*v)
		return 0;
	if (!b->len)
		put(s, b, v, what);
	return 1;
}

/* delta.tool_calls: [{index, id?, type?, function:{name?, arguments?}}]
 * (docs/protocol.md "Tool-call deltas"). Returns 1 when a call got a non-empty piece. */
static int tool_deltas(struct stream *s, const cJSON *arr, size_t at)
{
	const cJSON *c, *fn, *ix;
	struct stream_tool_call *t;
	const char *args;
	long pos = 0;
	int tok = 0;

	if (!cJSON_IsArray(arr)) {
		if (arr && !cJSON_IsNull(arr))
			malformed(s, "chunk at byte %zu: 'tool_calls' is not an array", at);
		return 0;
	}
	cJSON_ArrayForEach(c, arr) {
		ix = cJSON_GetObjectItemCaseSensitive(c, "index");
		if (cJSON_IsNumber(ix) && !(fabs(ix->valuedouble) <= 2147483647.0)) {
			/* converting it to long would be undefined */
			malformed(s, "chunk at byte %zu: tool call index %g out of range",
				  at, ix->valuedouble);
			ix = NULL;
		}
		t = tool_at(s, cJSON_IsNumber(ix) ? (long)ix->valuedouble : pos);
		pos++;
		if (!t)
			return tok;
		tok |= first_value(s, &t->id, get_str(s, c, "id", at), "a tool call's id");
		first_value(s, &t->type, get_str(s, c, "type", at), "a tool call's type");
		fn = cJSON_GetObjectItemCaseSensitive(c, "function");
		if (!cJSON_IsObject(fn))
			continue;
		tok |= first_value(s, &t->name, get_str(s, fn, "name", at),
				   "a tool call's name");
		args = get_str(s, fn, "arguments", at);
		if (args && *args) {
			put(s, &t->arguments, args, "a tool call's arguments");
			tok = 1;
		}
	}
	return tok;
}

/* Reasoning: `reasoning` first, `reasoning_content` only when that is null or
 * absent (docs/protocol.md "Reasoning fields"), so transitional vLLM is not doubled. */
static const char *reasoning_of(struct stream *s, const cJSON *d, size_t at)
{
	const char *r;

	if (cJSON_GetObjectItemCaseSensitive(d, "reasoning"))
		s->saw_reasoning = 1;
	if (cJSON_GetObjectItemCaseSensitive(d, "reasoning_content"))
		s->saw_reasoning_content = 1;
	r = get_str(s, d, "reasoning", at);
	return r ? r : get_str(s, d, "reasoning_content", at);
}

static void delta(struct stream *s, const cJSON *d, size_t at)
{
	const char *c, *r;
	int content_tok = 0, any_tok = 0;

	if (!cJSON_IsObject(d)) {
		if (d && !cJSON_IsNull(d))
			malformed(s, "chunk at byte %zu: 'delta' is not an object", at);
		return;
	}
	r = reasoning_of(s, d, at);
	if (r && *r) {
		put(s, &s->reasoning, r, "the reasoning");
		any_tok = 1;
	}
	c = get_str(s, d, "content", at);
	if (c && *c) {
		put(s, &s->content, c, "the content");
		content_tok = 1;
	}
	if (tool_deltas(s, cJSON_GetObjectItemCaseSensitive(d, "tool_calls"), at))
		content_tok = 1;
	if (content_tok || any_tok)
		token(s, content_tok);
}

static void choice(struct stream *s, const cJSON *ch, size_t at)
{
	const cJSON *ix = cJSON_GetObjectItemCaseSensitive(ch, "index");
	const char *t, *fr;

	if (!cJSON_IsObject(ch)) {
		malformed(s, "chunk at byte %zu: a choice is not an object", at);
		return;
	}
	if (cJSON_IsNumber(ix) && ix->valuedouble != 0) {
		s->other_choices++;
		return;
	}
	if (s->api == STREAM_CHAT) {
		delta(s, cJSON_GetObjectItemCaseSensitive(ch, s->whole ? "message" : "delta"), at);
	} else {
		t = get_str(s, ch, "text", at);
		if (t && *t) {
			put(s, &s->content, t, "the text");
			token(s, 1);
		}
	}
	fr = get_str(s, ch, "finish_reason", at);
	if (fr) {
		buf_reset(&s->finish_reason);
		put(s, &s->finish_reason, fr, "finish_reason");
	}
}

static void chunk(struct stream *s, const cJSON *j, size_t at)
{
	const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "choices");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
	const cJSON *c;
	const char *m;

	m = get_str(s, j, "model", at);
	if (m && !s->model.len)
		put(s, &s->model, m, "the model name");
	if (u && !cJSON_IsNull(u))
		usage(s, u);
	if (!ch || cJSON_IsNull(ch))
		return;
	if (!cJSON_IsArray(ch)) {
		malformed(s, "chunk at byte %zu: 'choices' is not an array", at);
		return;
	}
	cJSON_ArrayForEach(c, ch)
		choice(s, c, at);
}

/* Copies the chunk `p` into `out` with every NUL (raw, or the escape
 * `\u0000`) replaced by NUL_MARK, so cJSON keeps the bytes after it. */
static enum err mark_nuls(const char *p, size_t n, struct buf *out)
{
	size_t i;
	enum err e = ERR_OK;

	for (i = 0; i < n && !e; i++) {
		if (p[i] == '\0') {
			e = buf_append(out, "\xFF", 1);
		} else if (p[i] == '\\' && i + 5 < n && p[i + 1] == 'u' &&
			   !memcmp(p + i + 2, "0000", 4)) {
			e = buf_append(out, "\xFF", 1);
			i += 5;
		} else if (p[i] == '\\' && i + 1 < n) {
			e = buf_append(out, p + i, 2);
			i++;
		} else {
			e = buf_append(out, p + i, 1);
		}
	}
	return e;
}

/* Parses the data of event `ev` into `*j`, NULs marked (see put). */
static enum err parse_event(struct stream *s, const struct sse_event *ev, cJSON **j)
{
	struct buf b;
	enum err e;

	s->nul_event = json_nul_at(ev->data, ev->data_len) < ev->data_len;
	if (!s->nul_event)
		return json_parse(ev->data, ev->data_len, j, "an event", NULL);
	buf_init(&b, ev->data_len + 1);
	e = mark_nuls(ev->data, ev->data_len, &b);
	if (!e)
		e = json_parse(b.data, b.len, j, "an event", NULL);
	buf_release(&b);
	return e;
}

static int on_event(void *ctx, const struct sse_event *ev)
{
	struct stream *s = ctx;
	char quote[EXCERPT + 4];
	cJSON *j = NULL;
	size_t at;

	if (s->done) {
		s->after_done++;
		return 0;
	}
	if (ev->data_len == 6 && !memcmp(ev->data, "[DONE]", 6)) {
		s->done = 1;
		return 0;
	}
	s->chunks++;
	if ((at = json_control_at(ev->data, ev->data_len)) < ev->data_len) {
		excerpt(ev->data, ev->data_len, quote);
		malformed(s, "event at byte %zu has a raw control byte 0x%02x inside a string "
			  "(JSON text escapes it: RFC 8259 section 7): '%s'",
			  ev->offset, (unsigned)(unsigned char)ev->data[at], quote);
	} else if (parse_event(s, ev, &j) == ERR_NOMEM) {
		keep(s, ERR_NOMEM); /* our failure, not the server's */
	} else if (!j || !cJSON_IsObject(j)) {
		excerpt(ev->data, ev->data_len, quote);
		malformed(s, "event at byte %zu is not a JSON object: '%s'",
			  ev->offset, quote);
	} else if (!error_frame(s, j)) {
		chunk(s, j, ev->offset);
	}
	cJSON_Delete(j);
	return s->fatal;
}

enum err stream_feed(struct stream *s, const char *bytes, size_t n,
		     double now_ms, struct diag *d)
{
	size_t before = s->sse.malformed;
	int e;

	if (!n)
		return ERR_OK;
	if (s->t_first_byte < 0)
		s->t_first_byte = now_ms;
	if (s->head.len < STREAM_HEAD_MAX)
		buf_append(&s->head, bytes,
			   n < STREAM_HEAD_MAX - s->head.len ? n : STREAM_HEAD_MAX - s->head.len);
	s->bytes += n;
	s->t_now = now_ms;
	if (s->whole) {
		if (buf_append(&s->body, bytes, n) == ERR_NOMEM)
			return diag_fail(d, ERR_NOMEM, "out of memory keeping a response");
		if (s->body.len < s->bytes && !s->too_large[0])
			snprintf(s->too_large, sizeof(s->too_large),
				 "the response exceeds needle's cap of %zu bytes", s->body.max);
		return s->too_large[0] ? diag_fail(d, ERR_LIMIT, "%s", s->too_large) : ERR_OK;
	}
	e = sse_feed(&s->sse, bytes, n, on_event, s, NULL);
	if (s->sse.overlong && !s->too_large[0]) /* needle's cap, not bad framing */
		snprintf(s->too_large, sizeof(s->too_large),
			 "an SSE line or event exceeds needle's cap of %zu bytes", s->sse.max);
	if (s->sse.malformed > before) {
		if (!s->malformed)
			snprintf(s->malformed_msg, sizeof(s->malformed_msg), "%s",
				 s->sse.why);
		s->malformed += s->sse.malformed - before;
	}
	if (e == ERR_NOMEM || s->fatal == ERR_NOMEM)
		return diag_fail(d, ERR_NOMEM, "out of memory assembling a stream");
	if (s->fatal == ERR_LIMIT)
		return diag_fail(d, ERR_LIMIT, "%s", s->too_large);
	return ERR_OK;
}

/* A non-streamed body: one document, read as one chunk that ends the
 * response. */
static void whole_end(struct stream *s, double now_ms)
{
	char quote[EXCERPT + 4];
	cJSON *j = NULL;

	s->t_now = now_ms;
	if (!s->body.len)
		return; /* no body: the transport says why */
	if (json_nul_at(s->body.data, s->body.len) < s->body.len) {
		malformed(s, "the non-streamed response holds a NUL at byte %zu",
			  json_nul_at(s->body.data, s->body.len));
		return;
	}
	if (json_parse(s->body.data, s->body.len, &j, "the response", NULL) == ERR_NOMEM) {
		keep(s, ERR_NOMEM);
		return;
	}
	if (!cJSON_IsObject(j)) {
		excerpt(s->body.data, s->body.len, quote);
		malformed(s, "the non-streamed response is not a JSON object: '%s'", quote);
	} else if (!error_frame(s, j)) {
		s->chunks++;
		chunk(s, j, 0);
		s->done = 1;
	}
	cJSON_Delete(j);
}

void stream_end(struct stream *s, double now_ms)
{
	struct diag d;

	if (s->whole) {
		whole_end(s, now_ms);
		s->t_end = now_ms;
		return;
	}
	diag_init(&d);
	if (sse_finish(&s->sse, &d) == ERR_INPUT && !s->done)
		malformed(s, "%s", d.msg);
	s->t_end = now_ms;
}

static double since(const struct stream *s, double t)
{
	return t < 0 ? -1 : t - s->t_start;
}

void stream_timing(const struct stream *s, struct stream_timing *t)
{
	long long n = s->usage.completion_tokens;

	t->first_byte_ms = since(s, s->t_first_byte);
	t->ttft_ms = since(s, s->t_first_token);
	t->ttfc_ms = since(s, s->t_first_content);
	t->e2e_ms = since(s, s->t_end);
	t->tpot_ms = -1;
	if (n >= 2 && s->t_first_token >= 0)
		t->tpot_ms = (s->t_last_token - s->t_first_token) / (double)(n - 1);
}

/* --- the transport check ------------------------------------------------- */

static const char *const fail_names[STREAM_F_COUNT] = {
	"http_status", "connect", "timeout", "malformed_sse", "sse_error_frame",
	"no_done", "empty_output", "missing_usage", "bad_usage",
	"length_mismatch", "reasoning_only", "aborted", "truncated",
	"bad_finish_reason", "response_too_large", "context_overflow", "not_sent",
};

const char *stream_fail_name(enum stream_fail code)
{
	return (unsigned)code < STREAM_F_COUNT ? fail_names[code] : "unknown";
}

int stream_checks_has(const struct stream_checks *c, enum stream_fail code)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->f[i].code == code)
			return 1;
	return 0;
}

static void add(struct stream_checks *c, enum stream_fail code,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(struct stream_checks *c, enum stream_fail code,
		const char *fmt, ...)
{
	va_list ap;

	if (c->n >= STREAM_F_COUNT || stream_checks_has(c, code))
		return;
	c->f[c->n].code = code;
	va_start(ap, fmt);
	vsnprintf(c->f[c->n].msg, sizeof(c->f[c->n].msg), fmt, ap);
	va_end(ap);
	c->n++;
}

/* Makes out[0..*k) end on a whole UTF-8 character. */
static void whole_chars(const char *out, size_t *k)
{
	size_t start = *k, need;
	unsigned char c;

	while (start && *k - start < 4 &&
	       ((unsigned char)out[start - 1] & 0xC0) == 0x80)
		start--;
	if (!start)
		return;
	c = (unsigned char)out[start - 1];
	need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (*k - (start - 1) < need)
		*k = start - 1;
}

/* Appends `n` bytes of text to out[*k], one space for any run of whitespace
 * or control bytes. When `cap` (NUL included) is reached the text is cut on
 * a character boundary and ends in "..."; returns 0 then. */
static int put_text(char *out, size_t cap, size_t *k, const char *p, size_t n)
{
	size_t i;
	unsigned char c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)p[i];
		if (c <= 0x20 || c == 0x7F)
			c = ' ';
		if (c == ' ' && (!*k || out[*k - 1] == ' '))
			continue;
		if (*k + 1 >= cap) {
			if (*k > cap - 4)
				*k = cap - 4;
			whole_chars(out, k);
			memcpy(out + *k, "...", 3);
			*k += 3;
			return 0;
		}
		out[(*k)++] = (char)c;
	}
	return 1;
}

static void finish_text(char *out, size_t k)
{
	while (k && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
}

/* HTML: the <title> text if there is one, else the text with tags removed. */
static void html_text(const char *b, size_t n, char *out, size_t cap)
{
	const char *t = NULL, *e = NULL, *end = b + n;
	size_t k = 0, i;
	int in_tag = 0;

	for (i = 0; i + 7 <= n && !t; i++)
		if (!strncasecmp(b + i, "<title>", 7))
			t = b + i + 7;
	for (i = t ? (size_t)(t - b) : 0; t && i + 8 <= n && !e; i++)
		if (!strncasecmp(b + i, "</title>", 8))
			e = b + i;
	if (t && e && e > t) {
		put_text(out, cap, &k, t, (size_t)(e - t));
		finish_text(out, k);
		if (k)
			return;
	}
	for (k = 0; b < end; b++) {
		if (*b == '<')
			in_tag = 1;
		else if (*b == '>' && in_tag) {
			in_tag = 0;
			put_text(out, cap, &k, " ", 1);
		} else if (!in_tag && !put_text(out, cap, &k, b, 1))
			break;
	}
	finish_text(out, k);
}

/* A JSON error body in any of the servers' shapes (docs/protocol.md "Error bodies"), or
 * FastAPI's {"detail": ...}. Returns 0 when `j` is none of them. */
static int json_error_text(const cJSON *j, char *out, size_t cap)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "detail");

	if (cJSON_IsString(e))
		snprintf(out, cap, "%s", e->valuestring);
	else if (cJSON_IsObject(e))
		error_text(e, out, cap);
	else if (cJSON_IsString(m))
		error_text(j, out, cap);
	else if (cJSON_IsString(dt))
		snprintf(out, cap, "%s", dt->valuestring);
	else
		return 0;
	return 1;
}

/* Has `msg` the lower-case-insensitive phrase `p`? */
static int has_phrase(const char *msg, size_t len, const char *p)
{
	size_t n = strlen(p), i;

	for (i = 0; i + n <= len; i++)
		if (!strncasecmp(msg + i, p, n))
			return 1;
	return 0;
}

int stream_is_context_error(const char *msg, size_t len)
{
	static const char *const phrases[] = {
		"maximum context length",            /* vLLM (all eras), SGLang */
		"context length is only",            /* vLLM renderer */
		"longer than the maximum model length", /* vLLM engine */
		"longer than the model's context length", /* SGLang input alone */
		"exceeds model's maximum context length", /* vLLM get_max_tokens */
	};
	size_t i;

	for (i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++)
		if (has_phrase(msg, len, phrases[i]))
			return 1;
	return 0;
}

void stream_body_message(const char *body, size_t len, char *out, size_t cap)
{
	cJSON *j;
	size_t k = 0;
	int done = 0;

	if (!cap)
		return;
	while (len && (unsigned char)*body <= 0x20) {
		body++;
		len--;
	}
	if (!len) {
		snprintf(out, cap, "empty body");
		return;
	}
	if (*body == '{') {
		j = cJSON_ParseWithLength(body, len);
		done = j && json_error_text(j, out, cap);
		cJSON_Delete(j);
		if (done)
			return;
	}
	if (*body == '<') {
		html_text(body, len, out, cap);
		if (out[0])
			return;
	}
	put_text(out, cap, &k, body, len);
	finish_text(out, k);
}

/* Transport failures before any usable response: connect, non-200, none. */
static int check_transport(const struct stream *s, const struct stream_transport *tr,
			   struct stream_checks *out)
{
	char body[STREAM_MSG_MAX - 32];
	const char *msg = tr->msg && tr->msg[0] ? tr->msg : "no detail";

	if (tr->fail == HTTP_FAIL_CONNECT) {
		add(out, STREAM_F_CONNECT, "%s", msg);
		return 1;
	}
	if (tr->status != 200 && tr->status != 0) {
		stream_body_message(s->head.data, s->head.len, body, sizeof(body));
		if (tr->status == 400 && stream_is_context_error(body, strlen(body)))
			add(out, STREAM_F_CONTEXT_OVERFLOW, "HTTP 400: %s", body);
		else
			add(out, STREAM_F_HTTP_STATUS, "HTTP %ld: %s", tr->status, body);
		return 1;
	}
	if (tr->fail == HTTP_FAIL_TIMEOUT)
		return 0;
	if (tr->status == 0) {
		add(out, STREAM_F_HTTP_STATUS, "no HTTP response: %s",
		    tr->fail == HTTP_FAIL_NONE ? "no status line" : msg);
		return 1;
	}
	return 0;
}

static void check_framing(const struct stream *s, struct stream_checks *out)
{
	if (s->malformed)
		add(out, STREAM_F_MALFORMED_SSE, "%s", s->malformed_msg);
	else if (!s->chunks && !s->done && s->sse.unknown)
		add(out, STREAM_F_MALFORMED_SSE,
		    "the body is not an event stream: line at byte %zu is not an SSE field",
		    s->sse.unknown_at);
	if (s->error_frames) /* a context-length refusal in a frame is what a 400 says */
		add(out, stream_is_context_error(s->error_msg, strlen(s->error_msg))
			 ? STREAM_F_CONTEXT_OVERFLOW : STREAM_F_SSE_ERROR_FRAME, "%s%s", s->error_msg,
		    s->error_frames > 1 ? " (and more error frames)" : "");
}

static void check_answer(const struct stream *s, struct stream_checks *out)
{
	const char *fr = s->finish_reason.len ? s->finish_reason.data : "none";

	if (s->content.len || s->ntools)
		return;
	if (s->reasoning.len)
		add(out, STREAM_F_REASONING_ONLY,
		    "no answer after %zu bytes of reasoning (finish_reason %s, "
		    "completion_tokens %lld)", s->reasoning.len, fr,
		    s->usage.completion_tokens);
	else
		add(out, STREAM_F_EMPTY_OUTPUT,
		    "no content, reasoning or tool call in %zu chunks (finish_reason %s, "
		    "completion_tokens %lld)", s->chunks, fr, s->usage.completion_tokens);
}

/* finish_reason length with fewer completion tokens than the `max` asked
 * for: the server ended the answer at its context limit. vLLM 0.32 serves a
 * prompt shorter than max_model_len with max_tokens cut to what is left
 * (vllm/entrypoints/serve/utils/api_utils.py get_max_tokens) where older
 * releases answered HTTP 400 (docs/protocol.md "Context-length refusals"). */
#define CONTEXT_CUT ": the server's context limit; vLLM shortens max_tokens to " \
		    "max_model_len - prompt_tokens instead of refusing"
static int context_cut(const struct stream *s, long long max)
{
	return s->finish_reason.len && !strcmp(s->finish_reason.data, "length") &&
	       s->usage.valid && max > 0 && s->usage.completion_tokens < max;
}

static void check_usage(const struct stream *s, const struct stream_expect *x,
			struct stream_checks *out)
{
	const struct stream_usage *u = &s->usage;

	if (!u->present) {
		if (x && x->usage_requested && s->done)
			add(out, STREAM_F_MISSING_USAGE,
			    "usage was requested but no chunk carried it");
		return;
	}
	if (!u->valid) {
		add(out, STREAM_F_BAD_USAGE, "%s", u->why);
		return;
	}
	if (x && x->fixed_length >= 0 && u->completion_tokens != x->fixed_length)
		add(out, STREAM_F_LENGTH_MISMATCH,
		    "completion_tokens %lld, expected %lld (finish_reason %s%s)",
		    u->completion_tokens, x->fixed_length,
		    s->finish_reason.len ? s->finish_reason.data : "none",
		    context_cut(s, x->fixed_length) ? CONTEXT_CUT : "");
}

/* finish_reason (docs/protocol.md "Finish reasons"): stop, tool_calls, function_call end an
 * answer; length only where the length was fixed; abort and anything else
 * fail. No finish_reason at all is not judged here. */
static void check_finish(const struct stream *s, const struct stream_expect *x,
			 struct stream_checks *out)
{
	const char *fr = s->finish_reason.data;
	long long max = x ? x->max_tokens : 0;

	if (!s->finish_reason.len || !strcmp(fr, "stop") || !strcmp(fr, "tool_calls") ||
	    !strcmp(fr, "function_call"))
		return;
	if (s->finish_reason.len != strlen(fr))
		add(out, STREAM_F_FINISH_REASON, "finish_reason holds a NUL byte");
	else if (!strcmp(fr, "abort"))
		add(out, STREAM_F_ABORTED, "the server aborted the request "
		    "(finish_reason abort) after %zu bytes of content", s->content.len);
	else if (!strcmp(fr, "length") && !(x && x->fixed_length >= 0) &&
		 (s->content.len || s->ntools)) /* else reasoning_only/empty_output */
		add(out, STREAM_F_TRUNCATED, "the answer was cut %s "
		    "(finish_reason length, max_tokens %lld, completion_tokens %lld%s)",
		    context_cut(s, max) ? "short of max_tokens" : "at max_tokens",
		    max, s->usage.completion_tokens, context_cut(s, max) ? CONTEXT_CUT : "");
	else if (strcmp(fr, "length"))
		add(out, STREAM_F_FINISH_REASON, "finish_reason '%.200s' is not a normal end", fr);
}

/* Lists the failures in enum order (insertion sort of at most a dozen). */
static void sort(struct stream_checks *c)
{
	struct stream_failure t;
	size_t i, j;

	for (i = 1; i < c->n; i++)
		for (j = i; j > 0 && c->f[j - 1].code > c->f[j].code; j--) {
			t = c->f[j];
			c->f[j] = c->f[j - 1];
			c->f[j - 1] = t;
		}
}

void stream_check(const struct stream *s, const struct stream_transport *tr,
		  const struct stream_expect *x, struct stream_checks *out)
{
	static const struct stream_transport ok = {200, HTTP_FAIL_NONE, NULL};

	memset(out, 0, sizeof(*out));
	if (!tr)
		tr = &ok;
	if (s->too_large[0] || tr->too_large) {
		add(out, STREAM_F_TOO_LARGE, "%s", s->too_large[0] ? s->too_large
			: tr->msg ? tr->msg : "the response exceeds needle's cap");
		return;
	}
	if (check_transport(s, tr, out))
		return;
	if (tr->fail == HTTP_FAIL_TIMEOUT) {
		add(out, STREAM_F_TIMEOUT, "%s", tr->msg && tr->msg[0] ? tr->msg : "timed out");
		check_framing(s, out);
		return;
	}
	check_framing(s, out);
	if (!s->done)
		add(out, STREAM_F_NO_DONE, "stream ended without data: [DONE] after %zu chunks%s%s",
		    s->chunks, tr->fail != HTTP_FAIL_NONE && tr->msg ? ": " : "",
		    tr->fail != HTTP_FAIL_NONE && tr->msg ? tr->msg : "");
	if (s->error_frames)
		return;
	if (s->done)
		check_finish(s, x, out);
	if (!stream_checks_has(out, STREAM_F_ABORTED))
		check_answer(s, out); /* an abort explains an empty answer */
	if (s->done)
		check_usage(s, x, out);
	else if (s->usage.present && !s->usage.valid)
		add(out, STREAM_F_BAD_USAGE, "%s", s->usage.why);
	sort(out);
}
