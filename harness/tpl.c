/*
 * tpl — chat templates: loading and the render entry point (see tpl.h). The
 * descriptor itself is tpl_desc's, the message preparation tpl_msg's, the
 * renderers tpl_turns's and tpl_ds's.
 */
#include <string.h>

#include "mem.h"
#include "tpl.h"
#include "tpl_desc.h"
#include "tpl_ds.h"
#include "tpl_dsv4.h"
#include "tpl_turns.h"

struct tpl {
	struct tpl_desc desc;
};

enum err tpl_load(const char *name_or_path, struct tpl **out, struct diag *d)
{
	struct tpl *t = mem_calloc(1, sizeof *t);
	enum err e;

	*out = NULL;
	if (!t)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = tpl_desc_load(&t->desc, name_or_path, d);
	if (e)
		mem_free(t);
	else
		*out = t;
	return e;
}

void tpl_free(struct tpl *t)
{
	if (!t)
		return;
	tpl_desc_release(&t->desc);
	mem_free(t);
}

const char *tpl_name(const struct tpl *t)
{
	return t->desc.name;
}

const char *tpl_sha256(const struct tpl *t)
{
	return t->desc.sha;
}

/* Resolves the thinking switch from kwargs per the descriptor's "thinking".
 * SGLang's V3.2 encoder path reads kwargs "thinking" only (PROTOCOL.md §7). */
static enum err thinking_mode(const struct tpl_desc *t, const cJSON *kwargs,
			      enum tpl_server server, int *on, struct diag *d)
{
	const cJSON *th = cJSON_GetObjectItemCaseSensitive(t->root, "thinking");
	const cJSON *name;
	int any = 0, seen = 0;
	int only_thinking = server == TPL_SERVER_SGLANG && t->style == TPL_STYLE_DSV32;

	*on = 0;
	if (!th)
		return ERR_OK;
	any = !strcmp(tpl_desc_str(th, "combine"), "any");
	cJSON_ArrayForEach(name, cJSON_GetObjectItemCaseSensitive(th, "kwargs")) {
		const cJSON *v = kwargs ? cJSON_GetObjectItemCaseSensitive(kwargs, name->valuestring) : NULL;

		if (only_thinking && strcmp(name->valuestring, "thinking"))
			continue;

		if (!v || cJSON_IsNull(v))
			continue;
		if (!cJSON_IsBool(v))
			return diag_fail(d, ERR_INPUT, "chat_template_kwargs.%s: expected true or false",
					 name->valuestring);
		if (!seen || any)
			*on = *on || cJSON_IsTrue(v);
		seen = 1;
		if (!any)
			break;
	}
	if (!seen)
		*on = tpl_desc_true(th, "default");
	return ERR_OK;
}

/* Everything one render reads; borrowed. */
struct job {
	const struct tpl_desc *t;
	const struct tpl_conv *c;
	const cJSON *messages, *tools, *kwargs, *effort;
	int gen, thinking;
	enum tpl_server server;
};

static enum err render_style(const struct job *j, struct buf *out, struct diag *d)
{
	struct tpl_dsv4_req r = {j->c, j->messages, j->tools, j->kwargs, j->effort, j->server};

	switch (j->t->style) {
	case TPL_STYLE_TURNS:
		return tpl_turns_render(j->t, j->c, j->tools, j->gen, j->thinking, out, d);
	case TPL_STYLE_DSV3:
		return tpl_dsv3_render(j->t, j->c, j->gen, out);
	case TPL_STYLE_DSV31:
		return tpl_dsv31_render(j->t, j->c, j->gen, j->thinking, out);
	case TPL_STYLE_DSV32:
		return tpl_dsv32_render(j->t, j->c, j->tools, j->thinking, j->server, out, d);
	case TPL_STYLE_DSV4:
	case TPL_STYLE_DSV41:
		return tpl_dsv4_render(j->t, &r, out, d);
	}
	return diag_fail(d, ERR_INPUT, "template '%s': unknown style", j->t->name);
}

enum err tpl_render(const struct tpl *t, const cJSON *messages,
		    const cJSON *tools, const cJSON *kwargs,
		    int add_generation_prompt, struct buf *out, struct diag *d)
{
	return tpl_render_ex(t, messages, tools, kwargs, add_generation_prompt, NULL, out, d);
}

enum err tpl_render_ex(const struct tpl *t, const cJSON *messages,
		       const cJSON *tools, const cJSON *kwargs,
		       int add_generation_prompt, const struct tpl_render_opts *o,
		       struct buf *out, struct diag *d)
{
	struct tpl_conv c = {NULL, 0};
	enum tpl_server server = o ? o->server : TPL_SERVER_VLLM;
	cJSON *owned = NULL;
	struct job j;
	enum err e;

	if (kwargs && !cJSON_IsObject(kwargs))
		return diag_fail(d, ERR_INPUT, "chat_template_kwargs: expected an object");
	if (tools && !cJSON_IsArray(tools) && !cJSON_IsNull(tools))
		return diag_fail(d, ERR_INPUT, "tools: expected an array");
	memset(&j, 0, sizeof j);
	j.t = &t->desc;
	j.c = &c;
	j.messages = messages;
	j.tools = tools;
	j.effort = o ? o->reasoning_effort : NULL;
	j.gen = add_generation_prompt;
	j.server = server;
	e = tpl_msg_effort_kwargs(kwargs, server, j.effort, &owned, d);
	j.kwargs = owned ? owned : kwargs;
	if (!e)
		e = thinking_mode(&t->desc, j.kwargs, server, &j.thinking, d);
	/* V4.1 reads content parts itself (tpl_dsv4.h): SGLang's preparation
	 * keeps every message without refusing media. */
	if (!e)
		e = tpl_conv_prepare(&c, messages, t->desc.style == TPL_STYLE_DSV41 ? TPL_SERVER_SGLANG : server, d);
	if (!e)
		e = render_style(&j, out, d);
	if (e && d && !d->code)
		diag_fail(d, e, "cannot render the prompt: %s", err_name(e));
	cJSON_Delete(owned);
	tpl_conv_release(&c);
	return e;
}
