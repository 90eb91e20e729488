/*
 * tpl_dsv4 — DeepSeek V4 / V4.1 encoders and their server preparation (see
 * tpl_dsv4.h). The request is first turned into "units" (the encoder's
 * message list after tool messages are merged into user turns), then each
 * unit is written.
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/mem.h"
#include "tpl_ds.h"
#include "tpl_dsv4.h"
#include "tpl_py.h"

/* One part of a user turn: text, or a tool result answering call `id`. */
struct blk {
	const char *text;
	const char *id;
	int tool;
};

/* One message of the encoder's list. */
struct unit {
	const char *role;          /* system, developer, user or assistant */
	const struct tpl_msg *m;   /* its source message, NULL for an inserted system */
	const char *text;          /* system and developer content */
	const char *task;          /* the message's "task", or NULL */
	size_t b0, nb;             /* user: its blocks */
	int tools, no_reasoning;
};

struct enc {
	const struct tpl_desc *t;
	const struct tpl_dsv4_req *r;
	int v41, thinking, drop, max_effort;
	long budget;               /* V4.1: the effort budget, 1..100 */
	struct unit *u;
	size_t nu;
	struct blk *b;
	size_t nb;
	char **flat;               /* V4.1: each request message's content */
	long last_user;
};

static const char *str(const struct enc *e, const char *key)
{
	return tpl_desc_str(e->t->root, key);
}

static int role_is(const struct unit *u, const char *role)
{
	return !strcmp(u->role, role);
}

static enum err reject(struct diag *d, const char *what)
{
	return diag_fail(d, ERR_INPUT, "the server would reject this request: %s", what);
}

/* ---- thinking mode and reasoning effort --------------------------------- */

/* A kwarg read as a switch: -1 absent (or null), else 0/1. */
static enum err kw_switch(const cJSON *kw, const char *key, int *v, struct diag *d)
{
	const cJSON *x = kw ? cJSON_GetObjectItemCaseSensitive(kw, key) : NULL;

	*v = -1;
	if (!x || cJSON_IsNull(x))
		return ERR_OK;
	if (!cJSON_IsBool(x))
		return diag_fail(d, ERR_INPUT, "chat_template_kwargs.%s: expected true or false", key);
	*v = cJSON_IsTrue(x);
	return ERR_OK;
}

static enum err resolve_thinking(struct enc *e, struct diag *d)
{
	int th, en;
	enum err err = kw_switch(e->r->kwargs, "thinking", &th, d);

	if (!err)
		err = kw_switch(e->r->kwargs, "enable_thinking", &en, d);
	if (err)
		return err;
	if (e->r->server == TPL_SERVER_SGLANG)
		e->thinking = th == 1;
	else
		e->thinking = (th < 0 && en < 0) || th == 1 || en == 1;
	return ERR_OK;
}

static const cJSON *effort_value(const struct enc *e)
{
	const cJSON *kw = e->r->kwargs;

	if (e->r->effort && !cJSON_IsNull(e->r->effort))
		return e->r->effort;
	return kw ? cJSON_GetObjectItemCaseSensitive(kw, "reasoning_effort") : NULL;
}

static enum err v41_budget(struct enc *e, const cJSON *eff, struct diag *d)
{
	static const struct { const char *name; long budget; } tiers[] = {
		{"low", 25}, {"high", 50}, {"xhigh", 75}, {"max", 100}};
	size_t i;
	double x;

	e->budget = 50;
	if (!eff || cJSON_IsNull(eff) || (cJSON_IsString(eff) && !strcmp(eff->valuestring, "none"))) {
		if (eff && cJSON_IsString(eff) && e->r->server == TPL_SERVER_VLLM)
			e->thinking = 0;
		return ERR_OK;
	}
	if (tpl_py_number(eff, &x) && !(cJSON_IsRaw(eff) && strpbrk(eff->valuestring, ".eE")) &&
	    x >= 1 && x <= 100 && x == (double)(long)x) { /* a Python int */
		e->budget = (long)x;
		return ERR_OK;
	}
	for (i = 0; cJSON_IsString(eff) && i < sizeof tiers / sizeof tiers[0]; i++)
		if (!strcmp(eff->valuestring, tiers[i].name)) {
			e->budget = tiers[i].budget;
			return ERR_OK;
		}
	return reject(d, "DeepSeek V4.1 reasoning_effort must be low, high, xhigh, max or an integer 1..100");
}

static enum err v4_effort(struct enc *e, const cJSON *eff, struct diag *d)
{
	const char *s = cJSON_IsString(eff) ? eff->valuestring : NULL;

	e->max_effort = s && !strcmp(s, "max");
	if (e->r->server == TPL_SERVER_SGLANG || !s)
		return ERR_OK;
	if (!strcmp(s, "none"))
		e->thinking = 0;
	else if (!strcmp(s, "low") || !strcmp(s, "minimal") || !strcmp(s, "medium"))
		return reject(d, "the DeepSeek V4 encoder accepts reasoning effort high or max, and vLLM "
			      "maps low, minimal and medium to low");
	return ERR_OK;
}

/* ---- V4.1 content ------------------------------------------------------- */

static int is_image_part(const char *type)
{
	return !strcmp(type, "image_url") || !strcmp(type, "input_image") ||
	       !strcmp(type, "image_pil") || !strcmp(type, "image");
}

/* Text parts and image placeholders joined with "\n\n" (vLLM's
 * _normalize_messages for V4.1); the placeholder inside text is refused. */
static enum err v41_content(const struct enc *e, const cJSON *c, size_t mi,
			    struct buf *b, struct diag *d)
{
	const char *img = str(e, "image");
	const cJSON *p;
	int first = 1;
	enum err err = ERR_OK;

	if (cJSON_IsString(c))
		return strstr(c->valuestring, img) ? reject(d, "message content holds the image placeholder")
						   : buf_puts(b, c->valuestring);
	if (!cJSON_IsArray(c))
		return ERR_OK;
	cJSON_ArrayForEach(p, c) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(p, "text");
		const char *piece;

		if (!cJSON_IsString(type))
			return diag_fail(d, ERR_INPUT, "message %zu: a content part has no string 'type'", mi);
		if (is_image_part(type->valuestring))
			piece = img;
		else if (!strcmp(type->valuestring, "text"))
			piece = cJSON_IsString(text) ? text->valuestring : "";
		else
			return reject(d, "DeepSeek V4.1 supports text and image content parts only");
		if (piece != img && strstr(piece, img))
			return reject(d, "a text part holds the image placeholder");
		if (!first)
			err = buf_puts(b, "\n\n");
		first = 0;
		if (!err)
			err = buf_puts(b, piece);
		if (err)
			return err;
	}
	return ERR_OK;
}

static enum err flatten_all(struct enc *e, struct diag *d)
{
	const cJSON *m;
	size_t i = 0;
	struct buf b;
	enum err err = ERR_OK;

	e->flat = mem_calloc(e->r->conv->n, sizeof *e->flat);
	if (!e->flat)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	buf_init(&b, BUF_MAX_DEFAULT);
	cJSON_ArrayForEach(m, e->r->messages) {
		const cJSON *rc = cJSON_GetObjectItemCaseSensitive(m, "reasoning_content");

		if (i >= e->r->conv->n)
			break;
		buf_reset(&b);
		err = v41_content(e, cJSON_GetObjectItemCaseSensitive(m, "content"), i, &b, d);
		if (!err && cJSON_IsString(rc) && strstr(rc->valuestring, str(e, "image")))
			err = reject(d, "reasoning_content holds the image placeholder");
		if (!err && !(e->flat[i] = mem_strndup(b.len ? b.data : "", b.len)))
			err = diag_fail(d, ERR_NOMEM, "out of memory");
		if (err)
			break;
		i++;
	}
	buf_release(&b);
	return err;
}

/* ---- the encoder's message list ------------------------------------------ */

static const char *msg_text(const struct enc *e, size_t i)
{
	return e->v41 ? e->flat[i] : e->r->conv->m[i].content;
}

static const char *raw_str(const cJSON *messages, size_t i, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(messages, (int)i), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static struct unit *add_unit(struct enc *e, const char *role, const struct tpl_msg *m,
			     const char *text)
{
	struct unit *u = &e->u[e->nu++];

	memset(u, 0, sizeof *u);
	u->role = role;
	u->m = m;
	u->text = text;
	u->b0 = e->nb;
	return u;
}

/* A user or tool message joins the previous user turn when there is one
 * (for a user message: one without a task), else starts a new turn. */
static void add_block(struct enc *e, size_t i, int tool)
{
	const struct tpl_msg *m = &e->r->conv->m[i];
	struct unit *last = e->nu ? &e->u[e->nu - 1] : NULL;
	struct blk *b;

	if (!last || !role_is(last, "user") || (!tool && last->task)) {
		last = add_unit(e, "user", m, NULL);
		if (!tool)
			last->task = raw_str(e->r->messages, i, "task");
	}
	b = &e->b[e->nb++];
	b->text = msg_text(e, i);
	b->tool = tool;
	b->id = tool ? raw_str(e->r->messages, i, "tool_call_id") : NULL;
	last->nb++;
}

/* Where the request's tools go (tpl_dsv4.h, "The servers"); inserts the
 * system message a server adds first. */
static void place_tools(struct enc *e)
{
	int has = cJSON_IsArray(e->r->tools) && cJSON_GetArraySize(e->r->tools) > 0;
	int sglang = e->r->server == TPL_SERVER_SGLANG;
	struct unit *head = NULL;
	size_t i;

	if (!has)
		return;
	if (role_is(&e->u[0], "system") || (!e->v41 && !sglang && role_is(&e->u[0], "developer")))
		head = &e->u[0];
	for (i = 0; e->v41 && !sglang && !head && i < e->nu; i++)
		if (role_is(&e->u[i], "system"))
			head = &e->u[i];
	if (!head) {
		memmove(e->u + 1, e->u, e->nu * sizeof *e->u);
		e->nu++;
		memset(&e->u[0], 0, sizeof e->u[0]);
		e->u[0].role = "system";
		e->u[0].text = "";
		head = &e->u[0];
	}
	head->tools = 1;
}

static enum err build_units(struct enc *e, struct diag *d)
{
	const struct tpl_conv *c = e->r->conv;
	size_t i;

	e->u = mem_calloc(c->n + 2, sizeof *e->u);
	e->b = mem_calloc(c->n + 1, sizeof *e->b);
	if (!e->u || !e->b)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e->v41 && e->r->server == TPL_SERVER_SGLANG && !tpl_msg_is(&c->m[0], "system"))
		add_unit(e, "system", NULL, "");
	for (i = 0; i < c->n; i++) {
		const struct tpl_msg *m = &c->m[i];

		if (tpl_msg_is(m, "tool") || tpl_msg_is(m, "user")) {
			add_block(e, i, tpl_msg_is(m, "tool"));
		} else if (tpl_msg_is(m, "system") || tpl_msg_is(m, "developer") ||
			   tpl_msg_is(m, "assistant")) {
			add_unit(e, m->role, m, msg_text(e, i))->task = raw_str(e->r->messages, i, "task");
		} else {
			return diag_fail(d, ERR_INPUT, "the server would reject this request: message %zu: "
					 "role '%s' is not known to the DeepSeek encoder", i, m->role);
		}
	}
	place_tools(e);
	return ERR_OK;
}

/* The index of call `id` in the last assistant turn with calls before unit
 * `ui`, 0 when unknown. */
static size_t call_order(const struct enc *e, size_t ui, const char *id)
{
	size_t i = ui, k = 0;
	const cJSON *call;

	while (i-- > 0) {
		const struct unit *u = &e->u[i];

		if (!role_is(u, "assistant") || !u->m || !u->m->tool_calls)
			continue;
		cJSON_ArrayForEach(call, u->m->tool_calls) {
			const cJSON *cid = cJSON_GetObjectItemCaseSensitive(call, "id");

			if (!cJSON_IsString(cid) || !*cid->valuestring)
				cid = cJSON_GetObjectItemCaseSensitive(
					cJSON_GetObjectItemCaseSensitive(call, "function"), "id");
			if (id && cJSON_IsString(cid) && !strcmp(cid->valuestring, id))
				return k;
			k++;
		}
		return 0;
	}
	return 0;
}

/* sort_tool_results_by_call_order: each user turn's tool results, stably
 * sorted by the position of the call they answer; text blocks stay put.
 * Sorting tool results only, by insertion, keeps the slots of text blocks. */
static void sort_results(struct enc *e)
{
	size_t ui, i, j;

	for (ui = 0; ui < e->nu; ui++) {
		struct blk *b = e->b + e->u[ui].b0;
		size_t n = role_is(&e->u[ui], "user") ? e->u[ui].nb : 0;

		for (i = 1; i < n; i++) {
			size_t cur = i, key;

			if (!b[i].tool)
				continue;
			key = call_order(e, ui, b[i].id);
			for (j = i; j-- > 0;) {
				struct blk x;

				if (!b[j].tool)
					continue;
				if (call_order(e, ui, b[j].id) <= key)
					break;
				x = b[j];
				b[j] = b[cur];
				b[cur] = x;
				cur = j;
			}
		}
	}
}

static int counts_as_user(const struct enc *e, size_t i)
{
	const struct unit *u = &e->u[i];

	return role_is(u, "user") || role_is(u, "developer") ||
	       (e->v41 && role_is(u, "system") && i > 0);
}

static long find_last_user(const struct enc *e)
{
	size_t i = e->nu;

	while (i-- > 0)
		if (counts_as_user(e, i))
			return (long)i;
	return -1;
}

/* _drop_thinking_messages: before the last user turn, assistant turns lose
 * their reasoning and developer messages are removed. */
static void drop_reasoning(struct enc *e)
{
	long last = find_last_user(e);
	size_t i, k = 0;

	for (i = 0; i < e->nu; i++) {
		struct unit u = e->u[i];

		if ((long)i < last && role_is(&u, "developer"))
			continue;
		if ((long)i < last && role_is(&u, "assistant"))
			u.no_reasoning = 1;
		e->u[k++] = u;
	}
	e->nu = k;
}

/* ---- writing ------------------------------------------------------------ */

static enum err put_tag(const struct enc *e, struct buf *out, int close, const char *tag)
{
	return buf_printf(out, close ? "</%s%s>" : "<%s%s", str(e, "dsml"), str(e, tag));
}

static enum err put_params(const struct enc *e, const cJSON *args, struct buf *out)
{
	const cJSON *kv;
	enum err err = ERR_OK;

	cJSON_ArrayForEach(kv, args) {
		if (!err && kv != args->child)
			err = buf_putc(out, '\n');
		if (!err)
			err = put_tag(e, out, 0, "parameter_tag");
		if (!err)
			err = buf_printf(out, " name=\"%s\" string=\"%s\">", kv->string,
					 cJSON_IsString(kv) ? "true" : "false");
		if (!err)
			err = cJSON_IsString(kv) ? buf_puts(out, kv->valuestring) : tpl_pyjson(kv, out);
		if (!err)
			err = put_tag(e, out, 1, "parameter_tag");
	}
	return err;
}

/* A call's arguments as V4.1's encode_arguments_to_dsml reads them: a JSON
 * string is parsed, an object taken as is; anything else is rejected. */
static enum err call_args(const cJSON *call, cJSON **owned, const cJSON **args, struct diag *d)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(call, "function"), "arguments");

	*owned = NULL;
	*args = a;
	if (cJSON_IsString(a) &&
	    tpl_py_parse(a->valuestring, strlen(a->valuestring), owned, "tool-call arguments", NULL) == ERR_NOMEM)
		return diag_fail(d, ERR_NOMEM, "out of memory parsing tool-call arguments");
	if (cJSON_IsString(a))
		*args = *owned;
	if (!cJSON_IsObject(*args))
		return reject(d, "assistant tool call function.arguments must be a JSON object");
	return ERR_OK;
}

/* A call's arguments as vLLM's copy of the V4 encoder reads them: what
 * vLLM's message preparation parsed (tpl_msg), printed as parameters when it
 * is an object; anything else fails in the encoder (.items()). SGLang's
 * releases differ (an older encoder wraps parsed arguments into one
 * "arguments" parameter), so SGLang's V4 history is refused. */
static enum err v4_args(const struct enc *e, const cJSON *parsed, const cJSON **args, struct diag *d)
{
	if (e->r->server == TPL_SERVER_SGLANG)
		return diag_fail(d, ERR_UNSUPPORTED, "template 'deepseek-v4' cannot render tool-call history "
				 "for SGLang: its releases differ in how the V4 encoder prints parsed arguments "
				 "(one wrapped 'arguments' parameter, or the parameters)");
	*args = parsed;
	if (!cJSON_IsObject(parsed))
		return reject(d, "the DeepSeek V4 encoder needs tool-call arguments that are a JSON object");
	return ERR_OK;
}

static enum err put_calls(const struct enc *e, const struct tpl_msg *m, struct buf *out,
			  struct diag *d)
{
	const cJSON *call, *parsed = m->args ? m->args->child : NULL;
	enum err err;

	err = buf_puts(out, "\n\n");
	if (!err)
		err = put_tag(e, out, 0, "calls_tag");
	if (!err)
		err = buf_puts(out, ">\n");
	cJSON_ArrayForEach(call, m->tool_calls) {
		const char *name = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(call, "function"), "name")->valuestring;
		const cJSON *args = NULL;
		cJSON *owned = NULL;

		if (!err && call != m->tool_calls->child)
			err = buf_putc(out, '\n');
		if (!err)
			err = e->v41 ? call_args(call, &owned, &args, d) : v4_args(e, parsed, &args, d);
		parsed = parsed ? parsed->next : NULL;
		if (!err)
			err = put_tag(e, out, 0, "invoke_tag");
		if (!err)
			err = buf_printf(out, " name=\"%s\">\n", name);
		if (!err)
			err = put_params(e, args, out);
		if (!err)
			err = buf_putc(out, '\n');
		if (!err)
			err = put_tag(e, out, 1, "invoke_tag");
		cJSON_Delete(owned);
	}
	if (!err)
		err = buf_putc(out, '\n');
	return err ? err : put_tag(e, out, 1, "calls_tag");
}

static int prev_has_task(const struct enc *e, size_t i)
{
	return i > 0 && e->u[i - 1].task != NULL;
}

static enum err put_assistant(const struct enc *e, size_t i, struct buf *out, struct diag *d)
{
	const struct unit *u = &e->u[i];
	const char *reasoning = u->no_reasoning || !u->m->reasoning ? "" : u->m->reasoning;
	enum err err = ERR_OK;

	if (e->thinking && !prev_has_task(e, i) && (!e->drop || (long)i > e->last_user)) {
		err = buf_puts(out, reasoning);
		if (!err)
			err = buf_puts(out, str(e, "think_close"));
	}
	if (!err)
		err = buf_puts(out, u->text);
	if (!err && u->m->tool_calls)
		err = put_calls(e, u->m, out, d);
	return err ? err : buf_puts(out, str(e, "eos"));
}

static enum err put_user(const struct enc *e, const struct unit *u, struct buf *out)
{
	size_t k;
	enum err err = buf_puts(out, str(e, "user"));

	for (k = 0; !err && k < u->nb; k++) {
		const struct blk *b = &e->b[u->b0 + k];

		if (k)
			err = buf_puts(out, "\n\n");
		if (!err && b->tool)
			err = buf_puts(out, str(e, "tool_result_open"));
		if (!err)
			err = buf_puts(out, b->text);
		if (!err && b->tool)
			err = buf_puts(out, str(e, "tool_result_close"));
	}
	return err;
}

/* The effort text (and V4.1's system token) at the start of the prompt. */
static enum err put_head(const struct enc *e, size_t i, struct buf *out)
{
	const char *tpl = str(e, "effort_template");
	const char *at = strstr(tpl, "{{budget}}");
	int effort = i == 0 && e->thinking && (e->v41 || e->max_effort);
	enum err err = ERR_OK;

	if (e->v41 && ((i == 0 && (effort || role_is(&e->u[0], "system"))) ||
		       (i > 0 && role_is(&e->u[i], "system"))))
		err = buf_puts(out, str(e, "system"));
	if (err || !effort)
		return err;
	if (!at)
		return buf_puts(out, tpl);
	err = buf_append(out, tpl, (size_t)(at - tpl));
	if (!err)
		err = buf_printf(out, "%ld", e->budget);
	return err ? err : buf_puts(out, at + strlen("{{budget}}"));
}

/* What follows a message that ends the conversation or precedes an
 * assistant turn: a task token, or the assistant token and a think tag. */
static enum err put_transition(const struct enc *e, size_t i, struct buf *out, struct diag *d)
{
	const struct unit *u = &e->u[i];
	int open;
	enum err err;

	if (i + 1 < e->nu && !role_is(&e->u[i + 1], "assistant"))
		return ERR_OK;
	if (u->task) {
		const char *tok = tpl_desc_str(tpl_desc_obj(e->t->root, "tasks"), u->task);

		if (!*tok)
			return reject(d, "unknown task (valid: action, query, authority, domain, title, read_url)");
		if (strcmp(u->task, "action"))
			return buf_puts(out, tok);
		err = buf_puts(out, str(e, "assistant"));
		if (!err)
			err = buf_puts(out, str(e, e->thinking ? "think_open" : "think_close"));
		return err ? err : buf_puts(out, tok);
	}
	if (!counts_as_user(e, i))
		return ERR_OK;
	open = e->thinking && (!e->drop || (long)i >= e->last_user);
	err = buf_puts(out, str(e, "assistant"));
	return err ? err : buf_puts(out, str(e, open ? "think_open" : "think_close"));
}

/* vLLM's V4.1 encoders before and after PR 57882 (tpl_dsv4.h): refused
 * where they end this prompt differently (after the messages are written,
 * so that what both releases reject is rejected). */
static enum err v41_vllm_releases(const struct enc *e, struct diag *d)
{
	const struct unit *u = &e->u[e->nu - 1];
	int before = u->task || counts_as_user(e, e->nu - 1);
	int after = e->r->gen && (before || role_is(u, "assistant") || role_is(u, "system"));

	if (!e->v41 || e->r->server != TPL_SERVER_VLLM || before == after)
		return ERR_OK;
	if (e->r->gen)
		return diag_fail(d, ERR_UNSUPPORTED, "a DeepSeek V4.1 conversation that ends with "
				 "%s %s message on vLLM: its encoder adds no generation prompt after "
				 "it up to main at 8ec00ec2, and the assistant token and a think tag "
				 "from PR 57882 on (main at 21f4c25c); the server's release is not "
				 "known here", role_is(u, "assistant") ? "an" : "a lone", u->role);
	return diag_fail(d, ERR_UNSUPPORTED, "a DeepSeek V4.1 request without a generation "
			 "prompt on vLLM: its encoder ignores add_generation_prompt up to main at "
			 "8ec00ec2 and leaves the final assistant token and think tag out from PR "
			 "57882 on (main at 21f4c25c); the server's release is not known here");
}

static enum err put_unit(const struct enc *e, size_t i, struct buf *out, struct diag *d)
{
	const struct unit *u = &e->u[i];
	enum err err = put_head(e, i, out);

	if (err)
		return err;
	if (role_is(u, "system") || role_is(u, "developer")) {
		if (role_is(u, "developer") && !*u->text)
			return reject(d, "a developer message needs content");
		if (role_is(u, "developer"))
			err = buf_puts(out, str(e, "user"));
		if (!err)
			err = buf_puts(out, u->text);
		if (!err && u->tools)
			err = tpl_ds_tools_block(e->t, e->r->tools, e->r->server, out, d);
	} else if (role_is(u, "user")) {
		err = put_user(e, u, out);
	} else {
		err = put_assistant(e, i, out, d);
	}
	return err ? err : put_transition(e, i, out, d);
}

static enum err resolve(struct enc *e, struct diag *d)
{
	enum err err = resolve_thinking(e, d);

	if (!err)
		err = e->v41 ? v41_budget(e, effort_value(e), d) : v4_effort(e, effort_value(e), d);
	if (!err && e->v41)
		err = flatten_all(e, d);
	return err;
}

enum err tpl_dsv4_render(const struct tpl_desc *t, const struct tpl_dsv4_req *r,
			 struct buf *out, struct diag *d)
{
	struct enc e;
	size_t i;
	enum err err;

	memset(&e, 0, sizeof e);
	e.t = t;
	e.r = r;
	e.v41 = t->style == TPL_STYLE_DSV41;
	err = resolve(&e, d);
	if (!err)
		err = build_units(&e, d);
	if (!err) {
		sort_results(&e);
		e.drop = 1;
		for (i = 0; i < e.nu; i++)
			e.drop = e.drop && !e.u[i].tools;
		if (e.thinking && e.drop)
			drop_reasoning(&e);
		e.last_user = find_last_user(&e);
		err = buf_puts(out, str(&e, "bos"));
	}
	for (i = 0; !err && i < e.nu; i++)
		err = put_unit(&e, i, out, d);
	if (!err && e.nu)
		err = v41_vllm_releases(&e, d);
	for (i = 0; e.flat && i < r->conv->n; i++)
		mem_free(e.flat[i]);
	mem_free(e.flat);
	mem_free(e.u);
	mem_free(e.b);
	return err;
}
