/*
 * tpl_msg — the servers' message preparation (see tpl_msg.h).
 */
#include <string.h>

#include "mem.h"
#include "tpl_msg.h"
#include "tpl_py.h"

const char *tpl_server_name(enum tpl_server s)
{
	return s == TPL_SERVER_SGLANG ? "sglang" : "vllm";
}

enum err tpl_server_parse(const char *name, enum tpl_server *out, struct diag *d)
{
	if (!strcmp(name, "vllm"))
		*out = TPL_SERVER_VLLM;
	else if (!strcmp(name, "sglang"))
		*out = TPL_SERVER_SGLANG;
	else
		return diag_fail(d, ERR_USAGE, "unknown server '%s': expected vllm or sglang", name);
	return ERR_OK;
}

enum err tpl_check_nul(const char *json, size_t len, const char *what,
		       struct diag *d)
{
	int in_str = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (json[i] == '"') {
			in_str = !in_str;
		} else if (in_str && json[i] == '\\' && i + 1 < len) {
			if (json[i + 1] == 'u' && i + 5 < len && !memcmp(json + i + 2, "0000", 4))
				return diag_fail(d, ERR_UNSUPPORTED,
						 "cannot use '%s': a string holds \\u0000 at byte %zu, "
						 "which needle's JSON parser would cut short", what, i);
			i++;
		}
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
 * the "text" of parts typed "text", nothing else (PROTOCOL.md §4). */
static const char *sglang_part_text(const cJSON *part)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");

	if (cJSON_IsString(type) && !strcmp(type->valuestring, "text") && cJSON_IsString(text))
		return text->valuestring;
	return NULL;
}

/* Content as the server hands it to a string-content template: vLLM joins
 * the text parts with "\n" and refuses media here, SGLang joins "text" parts
 * with " " and drops the rest. */
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
	if (cJSON_IsString(c))
		return buf_puts(b, c->valuestring);
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
 * an object or array is kept, anything else gives {}. */
static cJSON *parse_arguments(const cJSON *a)
{
	cJSON *v = NULL;

	if (cJSON_IsString(a))
		v = cJSON_Parse(a->valuestring);
	else if (cJSON_IsObject(a) || cJSON_IsArray(a))
		v = cJSON_Duplicate(a, 1);
	return v ? v : cJSON_CreateObject();
}

static enum err prepare_tool_calls(struct tpl_msg *m, const cJSON *calls, size_t mi,
				   struct diag *d)
{
	const cJSON *c;
	size_t ci = 0;

	if (!calls || cJSON_IsNull(calls))
		return ERR_OK;
	if (!cJSON_IsArray(calls))
		return diag_fail(d, ERR_INPUT, "message %zu: 'tool_calls' must be an array", mi);
	if (!cJSON_GetArraySize(calls))
		return ERR_OK;
	m->tool_calls = calls;
	m->args = cJSON_CreateArray();
	if (!m->args)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	cJSON_ArrayForEach(c, calls) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, "function");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
		cJSON *a;

		if (!cJSON_IsString(name))
			return diag_fail(d, ERR_INPUT, "message %zu: tool call %zu has no string 'function.name'", mi, ci);
		a = parse_arguments(cJSON_GetObjectItemCaseSensitive(f, "arguments"));
		if (!a)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		cJSON_AddItemToArray(m->args, a);
		ci++;
	}
	return ERR_OK;
}

static enum err prepare_msg(struct tpl_msg *m, const cJSON *j, size_t mi,
			    enum tpl_server server, struct diag *d)
{
	const cJSON *role = cJSON_GetObjectItemCaseSensitive(j, "role");
	const cJSON *r;
	struct buf b;
	enum err e;

	if (!cJSON_IsObject(j) || !cJSON_IsString(role))
		return diag_fail(d, ERR_INPUT, "message %zu: expected an object with a string 'role'", mi);
	m->role = role->valuestring;
	buf_init(&b, BUF_MAX_DEFAULT);
	e = flatten_content(cJSON_GetObjectItemCaseSensitive(j, "content"), mi, server, &b, d);
	if (!e) {
		m->content = buf_take(&b, NULL);
		if (!m->content)
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
		mem_free(c->m[i].content);
		cJSON_Delete(c->m[i].args);
	}
	mem_free(c->m);
	c->m = NULL;
	c->n = 0;
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

/* Adds `v` (a fresh copy, or NULL when out of memory) to `o` under `key`;
 * 0 when out of memory (then `v` is freed). */
static int put(cJSON *o, const char *key, cJSON *v)
{
	if (v && cJSON_AddItemToObject(o, key, v))
		return 1;
	cJSON_Delete(v);
	return 0;
}

static cJSON *copy_or_null(const cJSON *f, const char *key)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(f, key);

	return c ? cJSON_Duplicate(c, 1) : cJSON_CreateNull();
}

/* Copies every member of `from` not named in `skip` (NULL-terminated). */
static int put_rest(cJSON *o, const cJSON *from, const char *const *skip)
{
	const cJSON *c;
	size_t k;

	cJSON_ArrayForEach(c, from) {
		for (k = 0; skip[k] && strcmp(c->string, skip[k]); k++)
			;
		if (!skip[k] && !put(o, c->string, cJSON_Duplicate(c, 1)))
			return 0;
	}
	return 1;
}

/* vLLM's FunctionDefinition.model_dump: name, description, parameters
 * (null when absent), then the other keys. */
static cJSON *vllm_function(const cJSON *f)
{
	static const char *const declared[] = {"name", "description", "parameters", NULL};
	cJSON *o = cJSON_CreateObject();
	size_t k;
	int ok = o != NULL;

	for (k = 0; ok && declared[k]; k++)
		ok = put(o, declared[k], copy_or_null(f, declared[k]));
	if (ok && put_rest(o, f, declared))
		return o;
	cJSON_Delete(o);
	return NULL;
}

/* SGLang's Function.model_dump: description, name, parameters (null when
 * absent), strict (false when absent); other keys are dropped. */
static cJSON *sglang_function(const cJSON *f)
{
	const cJSON *strict = cJSON_GetObjectItemCaseSensitive(f, "strict");
	cJSON *o = cJSON_CreateObject();

	if (o && put(o, "description", copy_or_null(f, "description")) &&
	    put(o, "name", copy_or_null(f, "name")) &&
	    put(o, "parameters", copy_or_null(f, "parameters")) &&
	    put(o, "strict", strict ? cJSON_Duplicate(strict, 1) : cJSON_CreateFalse()))
		return o;
	cJSON_Delete(o);
	return NULL;
}

enum err tpl_msg_dump_tool(const cJSON *tool, size_t i, struct buf *out,
			   struct diag *d)
{
	static const char *const declared[] = {"type", "function", NULL};
	cJSON *o = NULL;
	enum err e = check_tool(tool, i, d);

	if (e)
		return e;
	o = cJSON_CreateObject();
	if (!o || !put(o, "type", cJSON_CreateString("function")) ||
	    !put(o, "function", vllm_function(cJSON_GetObjectItemCaseSensitive(tool, "function"))) ||
	    !put_rest(o, tool, declared))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e)
		e = tpl_pyjson(o, out);
	cJSON_Delete(o);
	return e;
}

enum err tpl_msg_dump_function(const cJSON *tool, size_t i, enum tpl_server server,
			       struct buf *out, struct diag *d)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(tool, "function");
	cJSON *o;
	enum err e = check_tool(tool, i, d);

	if (e)
		return e;
	o = server == TPL_SERVER_SGLANG ? sglang_function(f) : vllm_function(f);
	e = o ? tpl_pyjson(o, out) : diag_fail(d, ERR_NOMEM, "out of memory");
	cJSON_Delete(o);
	return e;
}

static enum err set_default(cJSON *kw, const char *key, int on)
{
	if (cJSON_GetObjectItemCaseSensitive(kw, key))
		return ERR_OK; /* explicit kwargs win */
	return cJSON_AddBoolToObject(kw, key, on) ? ERR_OK : ERR_NOMEM;
}

enum err tpl_msg_effort_kwargs(const cJSON *kwargs, enum tpl_server server,
			       const cJSON *eff, cJSON **owned, struct diag *d)
{
	int on;
	enum err e;

	*owned = NULL;
	if (!eff || cJSON_IsNull(eff))
		return ERR_OK;
	on = !(cJSON_IsString(eff) && !strcmp(eff->valuestring, "none"));
	*owned = kwargs ? cJSON_Duplicate(kwargs, 1) : cJSON_CreateObject();
	if (!*owned)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = server == TPL_SERVER_SGLANG ? set_default(*owned, "thinking", on) : ERR_OK;
	if (!e)
		e = set_default(*owned, "enable_thinking", on);
	return e ? diag_fail(d, e, "out of memory") : ERR_OK;
}
