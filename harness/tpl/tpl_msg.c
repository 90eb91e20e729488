/*
 * tpl_msg — the servers' message preparation (see tpl_msg.h).
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

#include "base/json.h"
#include "base/mem.h"
#include "tpl_msg.h"
#include "tpl_py.h"

/* The first '"' or '\\' at or after `i`, or `len`: eight bytes at a time on
 * a little-endian machine (a byte equal to either is a zero byte of the word
 * xor'ed with it; the lowest flag found is exact). A messages file is mostly
 * string bytes. */
static size_t quote_or_backslash(const char *s, size_t i, size_t len)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t w, q, b, hit;

	for (; __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		hit = ((q - ones) & ~q & high) | ((b - ones) & ~b & high);
		if (hit)
			return i + (size_t)__builtin_ctzll(hit) / 8;
	}
	while (i < len && s[i] != '"' && s[i] != '\\')
		i++;
	return i;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Whether the six bytes \u0000 occur in s[0..len): sixteen positions a
 * step find each backslash followed by 'u' (SSE2, every x86-64), rare in
 * JSON text, then the four zeros are compared. */
static int has_u0000(const char *s, size_t len)
{
	const __m128i b = _mm_set1_epi8('\\'), u = _mm_set1_epi8('u');
	size_t i = 0;

	for (; i + 17 <= len; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 1));
		unsigned bits = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, b),
									   _mm_cmpeq_epi8(y, u)));

		for (; bits; bits &= bits - 1) {
			size_t at = i + (size_t)__builtin_ctz(bits);

			if (at + 6 <= len && !memcmp(s + at + 2, "0000", 4))
				return 1;
		}
	}
	return i < len && memmem(s + i, len - i, "\\u0000", 6) != NULL;
}
#else
static int has_u0000(const char *s, size_t len)
{
	return memmem(s, len, "\\u0000", 6) != NULL;
}
#endif

enum err tpl_check_nul(const char *json, size_t len, const char *what,
		       struct diag *d)
{
	int in_str = 0;
	size_t i = 0;

	/* without the six bytes anywhere there is nothing to find, and that
	 * is read many times faster than the walk below, which stops at every
	 * escape (every newline of the text) */
	if (!has_u0000(json, len))
		return ERR_OK;
	while ((i = quote_or_backslash(json, i, len)) < len) {
		if (json[i] == '"') {
			in_str = !in_str;
		} else if (in_str && i + 1 < len) {
			if (json[i + 1] == 'u' && i + 5 < len && !memcmp(json + i + 2, "0000", 4))
				return diag_fail(d, ERR_UNSUPPORTED,
						 "cannot use '%s': a string holds \\u0000 at byte %zu, "
						 "which needle's JSON parser would cut short", what, i);
			i++;
		}
		i++;
	}
	return ERR_OK;
}

/* The text of one content part, or NULL to skip it; ERR_UNSUPPORTED for media. */
static enum err part_text(const cJSON *part, size_t mi, size_t pi,
			  const char **text, struct diag *d)
{
	static const char *const text_types[][2] = {
		{"text", "text"}, {"input_text", "text"}, {"output_text", "text"},
		{"refusal", "refusal"}, {"thinking", "thinking"}};
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
	size_t i;

	*text = NULL;
	if (cJSON_IsString(part)) {
		*text = part->valuestring;
		return ERR_OK;
	}
	if (!cJSON_IsObject(part) || !cJSON_IsString(type))
		return diag_fail(d, ERR_INPUT, "message %zu: content part %zu has no string 'type'", mi, pi);
	for (i = 0; i < sizeof text_types / sizeof text_types[0]; i++) {
		if (!strcmp(type->valuestring, text_types[i][0])) {
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(part, text_types[i][1]);

			if (s && !cJSON_IsString(s) && !cJSON_IsNull(s))
				return diag_fail(d, ERR_INPUT, "message %zu: content part %zu: '%s' is not a string",
						 mi, pi, text_types[i][1]);
			*text = cJSON_IsString(s) ? s->valuestring : NULL;
			return ERR_OK;
		}
	}
	return diag_fail(d, ERR_UNSUPPORTED,
			 "message %zu: content part %zu of type '%s' cannot be rendered into a text prompt "
			 "(a multimodal processor decides its tokens)", mi, pi, type->valuestring);
}

/* SGLang process_content_for_template_format (string-content templates):
 * the "text" of parts typed "text", nothing else (docs/protocol.md "Message content"). */
static const char *sglang_part_text(const cJSON *part)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");

	if (cJSON_IsString(type) && !strcmp(type->valuestring, "text") && cJSON_IsString(text))
		return text->valuestring;
	return NULL;
}

/* Content that is not one string as the server hands it to a string-content
 * template: vLLM joins the text parts with "\n" and refuses media here,
 * SGLang joins "text" parts with " " and drops the rest; null is "". */
static enum err flatten_content(const cJSON *c, size_t mi, enum tpl_server server,
				struct buf *b, struct diag *d)
{
	const cJSON *part;
	size_t pi = 0;
	int first = 1;
	char sep = server == TPL_SERVER_SGLANG ? ' ' : '\n';
	enum err e = ERR_OK;

	if (!c || cJSON_IsNull(c))
		return ERR_OK;
	if (cJSON_IsRaw(c) && c->valuestring[0] == '"') /* json_add_strn: a NUL inside */
		return diag_fail(d, ERR_UNSUPPORTED, "message %zu: 'content' holds a NUL character, which "
				 "needle does not render", mi);
	if (!cJSON_IsArray(c))
		return diag_fail(d, ERR_INPUT, "message %zu: 'content' must be a string, an array of parts or null", mi);
	cJSON_ArrayForEach(part, c) {
		const char *text;

		if (server == TPL_SERVER_SGLANG)
			text = sglang_part_text(part);
		else if ((e = part_text(part, mi, pi++, &text, d)))
			return e;
		if (!text)
			continue;
		if (!first && buf_putc(b, sep))
			return ERR_NOMEM;
		first = 0;
		if (buf_puts(b, text))
			return ERR_NOMEM;
	}
	return e;
}

/* vLLM _postprocess_messages: a string is parsed (invalid JSON gives {}),
 * an object or array is kept, anything else gives {}. Added to `to`. */
static void parse_arguments(struct json_build *jb, cJSON *to, const cJSON *a)
{
	cJSON *v = NULL;

	if (cJSON_IsString(a) &&
	    tpl_py_parse(a->valuestring, strlen(a->valuestring), &v, "tool-call arguments", NULL) == ERR_NOMEM) {
		json_add_item(jb, to, NULL, NULL); /* records the failure */
		return;
	}
	if (v)
		json_add_item(jb, to, NULL, v);
	else if (cJSON_IsObject(a) || cJSON_IsArray(a))
		json_add_dup(jb, to, NULL, a);
	else
		json_add_item(jb, to, NULL, json_new_obj(jb));
}

static enum err prepare_tool_calls(struct tpl_msg *m, const cJSON *calls, size_t mi,
				   struct diag *d)
{
	struct json_build jb;
	const cJSON *c;
	size_t ci = 0;

	if (!calls || cJSON_IsNull(calls))
		return ERR_OK;
	if (!cJSON_IsArray(calls))
		return diag_fail(d, ERR_INPUT, "message %zu: 'tool_calls' must be an array", mi);
	if (!cJSON_GetArraySize(calls))
		return ERR_OK;
	m->tool_calls = calls;
	json_build_init(&jb);
	m->args = json_new_arr(&jb);
	cJSON_ArrayForEach(c, calls) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, "function");

		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "name")))
			return diag_fail(d, ERR_INPUT, "message %zu: tool call %zu has no string 'function.name'", mi, ci);
		parse_arguments(&jb, m->args, cJSON_GetObjectItemCaseSensitive(f, "arguments"));
		ci++;
	}
	return json_build_end(&jb, &m->args, "the tool-call arguments", d);
}

static enum err prepare_msg(struct tpl_msg *m, const cJSON *j, size_t mi,
			    enum tpl_server server, struct diag *d)
{
	const cJSON *role = cJSON_GetObjectItemCaseSensitive(j, "role");
	const cJSON *r, *c;
	struct buf b;
	enum err e = ERR_OK;

	if (!cJSON_IsObject(j) || !cJSON_IsString(role))
		return diag_fail(d, ERR_INPUT, "message %zu: expected an object with a string 'role'", mi);
	m->role = role->valuestring;
	c = cJSON_GetObjectItemCaseSensitive(j, "content");
	buf_init(&b, BUF_MAX_DEFAULT);
	if (cJSON_IsString(c)) { /* the common case, not copied */
		m->content = c->valuestring;
	} else if (!(e = flatten_content(c, mi, server, &b, d))) {
		m->content = m->owned = buf_take(&b, NULL);
		if (!m->owned)
			e = diag_fail(d, ERR_NOMEM, "out of memory");
	}
	buf_release(&b);
	r = cJSON_GetObjectItemCaseSensitive(j, "reasoning");
	if (!cJSON_IsString(r))
		r = cJSON_GetObjectItemCaseSensitive(j, "reasoning_content");
	m->reasoning = cJSON_IsString(r) ? r->valuestring : NULL;
	if (!e && !strcmp(m->role, "assistant"))
		e = prepare_tool_calls(m, cJSON_GetObjectItemCaseSensitive(j, "tool_calls"), mi, d);
	return e;
}

void tpl_conv_release(struct tpl_conv *c)
{
	size_t i;

	for (i = 0; c->m && i < c->n; i++) {
		mem_free(c->m[i].owned);
		cJSON_Delete(c->m[i].args);
	}
	mem_free(c->m);
	cJSON_Delete(c->source);
	c->m = NULL;
	c->n = 0;
	c->source = NULL;
}

enum err tpl_conv_prepare(struct tpl_conv *c, const cJSON *messages,
			  enum tpl_server server, struct diag *d)
{
	const cJSON *j;
	size_t n = (size_t)cJSON_GetArraySize(messages), i = 0;
	enum err e = ERR_OK;

	c->n = 0;
	if (!cJSON_IsArray(messages) || n == 0)
		return diag_fail(d, ERR_INPUT, "messages: expected a non-empty array");
	c->m = mem_calloc(n, sizeof *c->m);
	if (!c->m)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	c->n = n;
	cJSON_ArrayForEach(j, messages) {
		e = prepare_msg(&c->m[i], j, i, server, d);
		if (e)
			break;
		i++;
	}
	return e;
}

int tpl_msg_is(const struct tpl_msg *m, const char *role)
{
	return !strcmp(m->role, role);
}

static enum err check_tool(const cJSON *tool, size_t i, struct diag *d)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(tool, "type");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(tool, "function");

	if ((type && !(cJSON_IsString(type) && !strcmp(type->valuestring, "function"))) ||
	    !cJSON_IsObject(f) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "name")))
		return diag_fail(d, ERR_INPUT,
				 "tools[%zu]: expected {\"type\": \"function\", \"function\": {\"name\": ...}}", i);
	return ERR_OK;
}

/* Copies every member of `from` not named in `skip` (NULL-terminated). */
static void put_rest(struct json_build *jb, cJSON *o, const cJSON *from, const char *const *skip)
{
	const cJSON *c;
	size_t k;

	cJSON_ArrayForEach(c, from) {
		for (k = 0; skip[k] && strcmp(c->string, skip[k]); k++)
			;
		if (!skip[k])
			json_add_dup(jb, o, c->string, c);
	}
}

/* f[key] copied, or null when absent. */
static void put_or_null(struct json_build *jb, cJSON *o, const cJSON *f, const char *key)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(f, key);

	if (c)
		json_add_dup(jb, o, key, c);
	else
		json_add_null(jb, o, key);
}

/* vLLM's FunctionDefinition.model_dump: name, description, parameters
 * (null when absent), then the other keys. */
static void vllm_function(struct json_build *jb, cJSON *to, const cJSON *f)
{
	static const char *const declared[] = {"name", "description", "parameters", NULL};
	cJSON *o = json_add_obj(jb, to, "function");
	size_t k;

	for (k = 0; declared[k]; k++)
		put_or_null(jb, o, f, declared[k]);
	put_rest(jb, o, f, declared);
}

/* SGLang's Function.model_dump: description, name, parameters (null when
 * absent), strict (false when absent); other keys are dropped. */
static void sglang_function(struct json_build *jb, cJSON *to, const cJSON *f)
{
	const cJSON *strict = cJSON_GetObjectItemCaseSensitive(f, "strict");
	cJSON *o = json_add_obj(jb, to, "function");

	put_or_null(jb, o, f, "description");
	put_or_null(jb, o, f, "name");
	put_or_null(jb, o, f, "parameters");
	if (strict)
		json_add_dup(jb, o, "strict", strict);
	else
		json_add_bool(jb, o, "strict", 0);
}

/* Prints `root` with json.dumps, or its member "function" when `inner`. */
static enum err dump(struct json_build *jb, cJSON *root, int inner, struct buf *out,
		     struct diag *d)
{
	enum err e = json_build_end(jb, &root, "a tool", d);

	if (!e)
		e = tpl_pyjson(inner ? cJSON_GetObjectItemCaseSensitive(root, "function") : root, out);
	cJSON_Delete(root);
	return e;
}

enum err tpl_msg_dump_tool(const cJSON *tool, size_t i, enum tpl_server server,
			   struct buf *out, struct diag *d)
{
	static const char *const declared[] = {"type", "function", NULL};
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(tool, "function");
	struct json_build jb;
	cJSON *o;
	enum err e = check_tool(tool, i, d);

	if (e)
		return e;
	if (server == TPL_SERVER_SGLANG && (cJSON_GetObjectItemCaseSensitive(tool, "defer_loading") ||
					    cJSON_GetObjectItemCaseSensitive(f, "defer_loading")))
		return diag_fail(d, ERR_UNSUPPORTED, "tools[%zu]: 'defer_loading' on SGLang is not reproduced", i);
	json_build_init(&jb);
	o = json_new_obj(&jb);
	json_add_str(&jb, o, "type", "function");
	if (server == TPL_SERVER_SGLANG) {
		sglang_function(&jb, o, f);
		json_add_null(&jb, o, "defer_loading");
	} else {
		vllm_function(&jb, o, f);
		put_rest(&jb, o, tool, declared);
	}
	return dump(&jb, o, 0, out, d);
}

enum err tpl_msg_dump_function(const cJSON *tool, size_t i, enum tpl_server server,
			       struct buf *out, struct diag *d)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(tool, "function");
	struct json_build jb;
	cJSON *o;
	enum err e = check_tool(tool, i, d);

	if (e)
		return e;
	json_build_init(&jb);
	o = json_new_obj(&jb);
	if (server == TPL_SERVER_SGLANG)
		sglang_function(&jb, o, f);
	else
		vllm_function(&jb, o, f);
	return dump(&jb, o, 1, out, d);
}

static void set_default(struct json_build *jb, cJSON *kw, const char *key, int on)
{
	if (!cJSON_GetObjectItemCaseSensitive(kw, key)) /* explicit kwargs win */
		json_add_bool(jb, kw, key, on);
}

enum err tpl_msg_effort_kwargs(const cJSON *kwargs, enum tpl_server server,
			       const cJSON *eff, cJSON **owned, struct diag *d)
{
	struct json_build jb;
	int on;

	*owned = NULL;
	if (!eff || cJSON_IsNull(eff))
		return ERR_OK;
	on = !(cJSON_IsString(eff) && !strcmp(eff->valuestring, "none"));
	json_build_init(&jb);
	*owned = kwargs ? cJSON_Duplicate(kwargs, 1) : json_new_obj(&jb);
	if (!*owned)
		json_add_item(&jb, NULL, NULL, NULL); /* records the failed copy */
	if (server == TPL_SERVER_SGLANG)
		set_default(&jb, *owned, "thinking", on);
	set_default(&jb, *owned, "enable_thinking", on);
	return json_build_end(&jb, owned, "chat_template_kwargs", d);
}
