/*
 * tpl_ds — DeepSeek styles (see tpl_ds.h).
 */
#include <string.h>

#include "tpl_ds.h"
#include "tpl_py.h"

/* All system messages, wherever they are, joined by the separator. */
static enum err ds_system(const struct tpl_desc *t, const struct tpl_conv *c, struct buf *out)
{
	size_t i;
	int first = 1;
	enum err e = ERR_OK;

	for (i = 0; !e && i < c->n; i++) {
		if (!tpl_msg_is(&c->m[i], "system"))
			continue;
		if (!first)
			e = buf_puts(out, tpl_desc_str(t->root, "system_separator"));
		if (!e)
			e = buf_puts(out, c->m[i].content);
		first = 0;
	}
	return e;
}

/* The V3 Jinja renders tool calls only when content `is none`; vLLM and SGLang
 * turn a null content into "" first, so that branch is never taken and an
 * assistant turn is always ASSISTANT + content + EOS (or, after tool output,
 * TOOL_OUTPUTS_END + content + EOS). "is_output_first" is never reset: only
 * the first tool result of the whole conversation opens the outputs block. */
enum err tpl_dsv3_render(const struct tpl_desc *t, const struct tpl_conv *c,
			 int gen, struct buf *out)
{
	const cJSON *r = t->root;
	int is_tool = 0, output_first = 1;
	size_t i;
	enum err e = buf_puts(out, tpl_desc_str(r, "bos"));

	if (!e)
		e = ds_system(t, c, out);
	for (i = 0; !e && i < c->n; i++) {
		const struct tpl_msg *m = &c->m[i];

		if (tpl_msg_is(m, "user")) {
			is_tool = 0;
			e = buf_puts(out, tpl_desc_str(r, "user"));
			if (!e)
				e = buf_puts(out, m->content);
		} else if (tpl_msg_is(m, "assistant")) {
			e = buf_puts(out, tpl_desc_str(r, is_tool ? "tool_outputs_end" : "assistant"));
			is_tool = 0;
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, tpl_desc_str(r, "eos"));
		} else if (tpl_msg_is(m, "tool")) {
			is_tool = 1;
			e = buf_puts(out, tpl_desc_str(r, output_first ? "tool_outputs_begin" : "tool_output_separator"));
			output_first = 0;
			if (!e)
				e = buf_puts(out, tpl_desc_str(r, "tool_output_begin"));
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, tpl_desc_str(r, "tool_output_end"));
		}
	}
	if (!e && is_tool)
		e = buf_puts(out, tpl_desc_str(r, "tool_outputs_end"));
	if (!e && gen && !is_tool)
		e = buf_puts(out, tpl_desc_str(r, "generation_prompt"));
	return e;
}

/* ---- style "deepseek-v3.1" (HF Jinja; llama.cpp's copy) ----------------- */

/* A tool call's arguments as the V3.1 Jinja concatenates them: the request's
 * string verbatim. (vLLM parses them into a dict first, and the stock V3.1
 * template then fails on str + dict; this is what SGLang and llama.cpp see.) */
static enum err dsv31_args(const cJSON *call, struct buf *out)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(call, "function"), "arguments");

	if (cJSON_IsString(a))
		return buf_puts(out, a->valuestring);
	return a && !cJSON_IsNull(a) ? tpl_pyjson(a, out) : buf_puts(out, "{}");
}

static enum err dsv31_tool_calls(const struct tpl_desc *t, const struct tpl_msg *m, int last_user,
				 struct buf *out)
{
	const cJSON *r = t->root, *call;
	int first = 1;
	enum err e = ERR_OK;

	if (last_user) {
		e = buf_puts(out, tpl_desc_str(r, "assistant"));
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "think_close"));
	}
	cJSON_ArrayForEach(call, m->tool_calls) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(call, "function");

		if (!e && first)
			e = buf_puts(out, m->content);
		if (!e && first)
			e = buf_puts(out, tpl_desc_str(r, "tool_calls_begin"));
		first = 0;
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "tool_call_begin"));
		if (!e)
			e = buf_puts(out, cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring);
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "tool_sep"));
		if (!e)
			e = dsv31_args(call, out);
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "tool_call_end"));
	}
	if (!e)
		e = buf_puts(out, tpl_desc_str(r, "tool_calls_end"));
	return e ? e : buf_puts(out, tpl_desc_str(r, "eos"));
}

static enum err dsv31_assistant(const struct tpl_desc *t, const struct tpl_msg *m, int last_user,
				int is_tool, struct buf *out)
{
	const cJSON *r = t->root;
	const char *content = m->content, *cut;
	enum err e = ERR_OK;

	if (last_user) {
		/* The Jinja writes think_open only for a "prefix" message while
		 * thinking; vLLM does not pass "prefix" through. */
		e = buf_puts(out, tpl_desc_str(r, "assistant"));
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "think_close"));
	}
	if (!is_tool && (cut = strstr(content, tpl_desc_str(r, "think_close"))) && *tpl_desc_str(r, "think_close"))
		content = cut + strlen(tpl_desc_str(r, "think_close"));
	if (!e)
		e = buf_puts(out, content);
	return e ? e : buf_puts(out, tpl_desc_str(r, "eos"));
}

enum err tpl_dsv31_render(const struct tpl_desc *t, const struct tpl_conv *c,
			  int gen, int thinking, struct buf *out)
{
	const cJSON *r = t->root;
	int is_tool = 0, last_user = 0;
	size_t i;
	enum err e = buf_puts(out, tpl_desc_str(r, "bos"));

	if (!e)
		e = ds_system(t, c, out);
	for (i = 0; !e && i < c->n; i++) {
		const struct tpl_msg *m = &c->m[i];

		if (tpl_msg_is(m, "user")) {
			is_tool = 0;
			last_user = 1;
			e = buf_puts(out, tpl_desc_str(r, "user"));
			if (!e)
				e = buf_puts(out, m->content);
		} else if (tpl_msg_is(m, "assistant") && m->tool_calls) {
			e = dsv31_tool_calls(t, m, last_user, out);
			last_user = 0;
			is_tool = 0;
		} else if (tpl_msg_is(m, "assistant")) {
			e = dsv31_assistant(t, m, last_user, is_tool, out);
			last_user = 0;
			is_tool = 0;
		} else if (tpl_msg_is(m, "tool")) {
			last_user = 0;
			is_tool = 1;
			e = buf_puts(out, tpl_desc_str(r, "tool_output_begin"));
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, tpl_desc_str(r, "tool_output_end"));
		}
	}
	if (!e && gen && last_user && !is_tool) {
		e = buf_puts(out, tpl_desc_str(r, "generation_prompt"));
		if (!e)
			e = buf_puts(out, tpl_desc_str(cJSON_GetObjectItemCaseSensitive(r, "thinking"),
					     thinking ? "on" : "off"));
	}
	return e;
}

/* ---- style "deepseek-v3.2" (encoding_dsv32.py as vLLM runs it) ---------- */

static enum err dsv32_params(const struct tpl_desc *t, const cJSON *args, size_t mi,
			     struct buf *out, struct diag *d)
{
	const char *dsml = tpl_desc_str(t->root, "dsml");
	const cJSON *kv;
	enum err e = ERR_OK;

	if (!cJSON_IsObject(args))
		return diag_fail(d, ERR_INPUT, "message %zu: tool call arguments must be a JSON object", mi);
	cJSON_ArrayForEach(kv, args) {
		if (!e && kv != args->child)
			e = buf_putc(out, '\n');
		if (!e)
			e = buf_printf(out, "<%sparameter name=\"%s\" string=\"%s\">", dsml, kv->string,
				       cJSON_IsString(kv) ? "true" : "false");
		if (!e)
			e = cJSON_IsString(kv) ? buf_puts(out, kv->valuestring) : tpl_pyjson(kv, out);
		if (!e)
			e = buf_printf(out, "</%sparameter>", dsml);
	}
	return e;
}

static enum err dsv32_tool_calls(const struct tpl_desc *t, const struct tpl_msg *m, size_t mi,
				 struct buf *out, struct diag *d)
{
	const char *dsml = tpl_desc_str(t->root, "dsml");
	const cJSON *call, *args = m->args->child;
	enum err e = buf_printf(out, "\n\n<%sfunction_calls>\n", dsml);

	cJSON_ArrayForEach(call, m->tool_calls) {
		const char *name = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(call, "function"), "name")->valuestring;

		if (!e && call != m->tool_calls->child)
			e = buf_putc(out, '\n');
		if (!e)
			e = buf_printf(out, "<%sinvoke name=\"%s\">\n", dsml, name);
		if (!e)
			e = dsv32_params(t, args, mi, out, d);
		if (!e)
			e = buf_printf(out, "\n</%sinvoke>", dsml);
		args = args->next;
	}
	return e ? e : buf_printf(out, "\n</%sfunction_calls>", dsml);
}

static enum err dsv32_tool(const struct tpl_desc *t, const struct tpl_conv *c, size_t i,
			   long last_user, int thinking, struct buf *out, struct diag *d)
{
	const cJSON *r = t->root;
	size_t prev = i, order, ncalls;
	enum err e = ERR_OK;

	while (prev > 0 && tpl_msg_is(&c->m[prev - 1], "tool"))
		prev--;
	if (prev == 0 || !tpl_msg_is(&c->m[prev - 1], "assistant"))
		return diag_fail(d, ERR_INPUT, "message %zu: a tool result must follow an assistant turn with tool_calls", i);
	order = i - prev + 1;
	ncalls = c->m[prev - 1].tool_calls ? (size_t)cJSON_GetArraySize(c->m[prev - 1].tool_calls) : 0;
	if (ncalls < order)
		return diag_fail(d, ERR_INPUT, "message %zu: more tool results than tool calls", i);
	if (order == 1)
		e = buf_puts(out, "\n\n<function_results>");
	if (!e)
		e = buf_printf(out, "\n<result>%s</result>", c->m[i].content);
	if (!e && order == ncalls) {
		e = buf_puts(out, "\n</function_results>\n\n");
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, thinking && (long)i >= last_user ? "think_open" : "think_close"));
	}
	return e;
}

static enum err dsv32_assistant(const struct tpl_desc *t, const struct tpl_msg *m, size_t i,
				long last_user, int thinking, int dropped,
				struct buf *out, struct diag *d)
{
	const cJSON *r = t->root;
	const char *reasoning = dropped ? NULL : m->reasoning;
	enum err e = ERR_OK;

	if (thinking && (long)i > last_user) {
		if (!(reasoning && *reasoning) && !m->tool_calls)
			return diag_fail(d, ERR_INPUT,
					 "message %zu: in thinking mode an assistant turn after the last user "
					 "message needs reasoning or tool_calls", i);
		e = buf_puts(out, reasoning ? reasoning : "");
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "think_close"));
	}
	if (!e)
		e = buf_puts(out, m->content);
	if (!e && m->tool_calls)
		e = dsv32_tool_calls(t, m, i, out, d);
	return e ? e : buf_puts(out, tpl_desc_str(r, "eos"));
}

enum err tpl_ds_tools_block(const struct tpl_desc *t, const cJSON *tools,
			    enum tpl_server server, struct buf *out, struct diag *d)
{
	const char *tt = tpl_desc_str(t->root, "tools_template");
	const char *at = strstr(tt, "{{tool_schemas}}");
	const cJSON *tool;
	size_t i = 0;
	enum err e = buf_puts(out, "\n\n");

	if (!e)
		e = buf_append(out, tt, at ? (size_t)(at - tt) : strlen(tt));
	cJSON_ArrayForEach(tool, tools) {
		if (!e && i)
			e = buf_putc(out, '\n');
		if (!e)
			e = tpl_msg_dump_function(tool, i, server, out, d);
		i++;
	}
	if (!e && at)
		e = buf_puts(out, at + strlen("{{tool_schemas}}"));
	return e;
}

static enum err dsv32_user(const struct tpl_desc *t, const struct tpl_msg *m, size_t i,
			   long last_user, int thinking, struct buf *out, struct diag *d)
{
	const cJSON *r = t->root;
	int dev = tpl_msg_is(m, "developer");
	enum err e;

	if (dev && !*m->content)
		return diag_fail(d, ERR_INPUT, "message %zu: a developer message needs content", i);
	e = buf_puts(out, tpl_desc_str(r, "user"));
	if (!e && dev)
		e = buf_puts(out, tpl_desc_str(r, "developer_prefix"));
	if (!e)
		e = buf_puts(out, m->content);
	if (!e)
		e = buf_puts(out, tpl_desc_str(r, "assistant"));
	if (!e)
		e = buf_puts(out, tpl_desc_str(r, thinking && (long)i == last_user ? "think_open" : "think_close"));
	return e;
}

/* The tools block as each server places it: vLLM inserts a new first system
 * message holding only the tools; SGLang attaches them to the first message,
 * a system message (its own empty one when the conversation has none).
 * *skip is set when the first message has been written here. */
static enum err dsv32_tools(const struct tpl_desc *t, const struct tpl_conv *c,
			    const cJSON *tools, enum tpl_server server, int *skip,
			    struct buf *out, struct diag *d)
{
	enum err e = ERR_OK;

	*skip = 0;
	if (!cJSON_IsArray(tools) || !cJSON_GetArraySize(tools))
		return ERR_OK;
	if (server == TPL_SERVER_SGLANG && tpl_msg_is(&c->m[0], "system")) {
		e = buf_puts(out, c->m[0].content);
		*skip = 1;
	}
	return e ? e : tpl_ds_tools_block(t, tools, server, out, d);
}

/* drop_thinking (vLLM: the last message is a user turn; SGLang: always) in
 * thinking mode drops reasoning before the last user turn and, as
 * drop_thinking_messages does, every message there whose role is not user,
 * system, tool or assistant. */
enum err tpl_dsv32_render(const struct tpl_desc *t, const struct tpl_conv *c,
			  const cJSON *tools, int thinking, enum tpl_server server,
			  struct buf *out, struct diag *d)
{
	const cJSON *r = t->root;
	long last_user = -1;
	int drop = thinking && (server == TPL_SERVER_SGLANG || tpl_msg_is(&c->m[c->n - 1], "user"));
	int skip = 0;
	size_t i;
	enum err e;

	for (i = 0; i < c->n; i++)
		if (tpl_msg_is(&c->m[i], "user") || tpl_msg_is(&c->m[i], "developer"))
			last_user = (long)i;
	e = buf_puts(out, tpl_desc_str(r, "bos"));
	if (!e)
		e = dsv32_tools(t, c, tools, server, &skip, out, d);
	for (i = skip ? 1 : 0; !e && i < c->n; i++) {
		const struct tpl_msg *m = &c->m[i];
		int before = drop && (long)i < last_user;

		if (tpl_msg_is(m, "system")) {
			e = buf_puts(out, m->content);
		} else if (tpl_msg_is(m, "user") || (tpl_msg_is(m, "developer") && !before)) {
			e = dsv32_user(t, m, i, last_user, thinking, out, d);
		} else if (tpl_msg_is(m, "tool")) {
			e = dsv32_tool(t, c, i, last_user, thinking, out, d);
		} else if (tpl_msg_is(m, "assistant")) {
			e = dsv32_assistant(t, m, i, last_user, thinking, before, out, d);
		} else if (!before) {
			return diag_fail(d, ERR_INPUT, "message %zu: role '%s' is not known to template '%s'",
					 i, m->role, t->name);
		}
	}
	return e;
}
