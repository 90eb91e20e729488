/*
 * tpl — chat templates: loading and the render entry point (see tpl.h). The
 * descriptor itself is tpl_desc's, the message preparation tpl_msg's, the
 * renderers tpl_turns's, tpl_ds's and tpl_dsv4's, the model folder tpl_model's.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/mem.h"
#include "tpl.h"
#include "tpl_desc.h"
#include "tpl_ds.h"
#include "tpl_dsv4.h"
#include "tpl_jinja.h"
#include "tpl_model.h"
#include "tpl_py.h"
#include "tpl_turns.h"

/* One template: a descriptor, or a model's Jinja text (jinja set). */
struct variant {
	struct tpl_desc desc;
	struct tpl_jinja *jinja;
};

struct tpl {
	struct variant plain;        /* requests without tools (and with, unless `split`) */
	struct variant tools;        /* requests with tools, when the model has another text */
	int split;
	char *tools_refusal;         /* why requests with tools cannot be rendered, or NULL */
	char *source;                /* the template text's file, else the descriptor's origin */
	char source_sha[IO_SHA256_HEX];
	struct buf explain;
	unsigned notes;              /* TPL_NOTE_* */
};

static struct tpl *tpl_new(void)
{
	struct tpl *t = mem_calloc(1, sizeof *t);

	if (t)
		buf_init(&t->explain, 1 << 16);
	return t;
}

void tpl_free(struct tpl *t)
{
	if (!t)
		return;
	tpl_desc_release(&t->plain.desc);
	tpl_desc_release(&t->tools.desc);
	tpl_jinja_free(t->plain.jinja);
	tpl_jinja_free(t->tools.jinja);
	mem_free(t->tools_refusal);
	mem_free(t->source);
	buf_release(&t->explain);
	mem_free(t);
}

static enum err set_source(struct tpl *t, const char *path, const char *sha, struct diag *d)
{
	mem_free(t->source);
	t->source = mem_strndup(path, strlen(path));
	memcpy(t->source_sha, sha, IO_SHA256_HEX);
	return t->source ? ERR_OK : diag_fail(d, ERR_NOMEM, "out of memory");
}

/* Loads into `v` the descriptor validated against text `x`, else the text
 * itself for the Jinja interpreter (`specials`: the folder's tokens). */
static enum err open_text(struct tpl *t, struct variant *v, const struct tpl_text *x,
			  const cJSON *specials, const char *what, struct diag *d)
{
	int found = 0;
	enum err e = tpl_desc_find_sha(&v->desc, x->sha, &found, d);

	if (!e)
		e = buf_printf(&t->explain, "%s: %s, %s\n", what, x->path, x->why);
	if (!e && found)
		return buf_printf(&t->explain, "%s: its text (sha256 %s) is the one built-in template '%s' "
				  "was checked against\n", what, x->sha, v->desc.name);
	if (!e)
		e = tpl_jinja_new(x, specials, &v->jinja, d);
	if (!e)
		e = buf_printf(&t->explain, "%s: no built-in template was checked against its text "
			       "(sha256 %s), so needle's Jinja interpreter renders it\n", what, x->sha);
	return e;
}

/* The template of a model folder, or of a .jinja / tokenizer_config.json
 * file; a second text for requests with tools when the model has one. A
 * tools text that cannot be parsed is refused only for requests with tools. */
static enum err open_texts(struct tpl *t, const struct tpl_text *plain, const struct tpl_text *tools,
			   const cJSON *specials, struct diag *d)
{
	struct diag td;
	enum err e = open_text(t, &t->plain, plain, specials, "template", d);

	if (!e)
		e = set_source(t, plain->path, plain->sha, d);
	if (e || !tools->text || !strcmp(tools->sha, plain->sha))
		return e;
	t->split = 1;
	diag_init(&td);
	if (open_text(t, &t->tools, tools, specials, "template with tools", &td)) {
		if (td.code == ERR_NOMEM)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		t->tools_refusal = mem_strndup(td.msg, strlen(td.msg));
		if (!t->tools_refusal)
			return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	return ERR_OK;
}

/* A descriptor named by --template; with a model folder, a warning when the
 * folder's own template is not the text the descriptor was checked against. */
static enum err open_named(struct tpl *t, const char *name, const struct tpl_model *m,
			   struct buf *warn, struct diag *d)
{
	const cJSON *s;
	int same = 0;
	enum err e = tpl_desc_load(&t->plain.desc, name, d);

	if (!e)
		e = set_source(t, t->plain.desc.origin, t->plain.desc.sha, d);
	if (!e)
		e = buf_printf(&t->explain, "template: built-in '%s' (%s), named by --template\n",
			       t->plain.desc.name, t->plain.desc.origin);
	if (e || !m || !m->plain.text)
		return e;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(t->plain.desc.root, "template_sha256"))
		same |= !strcmp(s->valuestring, m->plain.sha);
	if (!same)
		t->notes |= TPL_NOTE_SHA_DIFFERS;
	if (!same && buf_printf(warn, "warning: the deployment's template ('%s', sha256 %.12s...) is not "
				"the text template '%s' was checked against; counts may differ from the "
				"server's\n", m->plain.path, m->plain.sha, t->plain.desc.name))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

static int is_template_file(const char *arg)
{
	size_t n = strlen(arg);

	return (n >= 6 && !strcmp(arg + n - 6, ".jinja")) ||
	       (n >= 21 && !strcmp(arg + n - 21, "tokenizer_config.json"));
}

static enum err open_any(struct tpl *t, const char *arg, const struct tpl_model *m,
			 struct buf *warn, struct diag *d)
{
	struct tpl_text plain, tools;
	enum err e;

	if (arg && !is_template_file(arg))
		return open_named(t, arg, m, warn, d);
	if (!arg && !m->plain.text)
		return diag_fail(d, ERR_INPUT, "model folder '%s' has no chat template (no chat_template in "
				 "tokenizer_config.json, no chat_template.jinja); DeepSeek V3.2, V4 and V4.1 "
				 "are served with an encoder: pass --template deepseek-v3.2, deepseek-v4 or "
				 "deepseek-v4.1", m->dir);
	if (!arg)
		return open_texts(t, &m->plain, &m->tools, m->specials, d);
	e = tpl_model_template_file(&plain, arg, 0, d);
	memset(&tools, 0, sizeof tools);
	if (!e)
		e = tpl_model_template_file(&tools, arg, 1, d);
	if (!e)
		e = open_texts(t, &plain, &tools, m ? m->specials : NULL, d);
	tpl_text_release(&plain);
	tpl_text_release(&tools);
	return e;
}

enum err tpl_open(const char *template_arg, const struct tpl_model *m, struct tpl **out,
		  struct buf *warn, struct diag *d)
{
	struct tpl *t = tpl_new();
	enum err e;

	*out = NULL;
	if (!t)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = open_any(t, template_arg, m, warn, d);
	if (e)
		tpl_free(t);
	else
		*out = t;
	return e;
}

enum err tpl_load(const char *name_or_path, struct tpl **out, struct diag *d)
{
	return tpl_open(name_or_path, NULL, out, NULL, d);
}

const char *tpl_name(const struct tpl *t)
{
	return t->plain.jinja ? "jinja" : t->plain.desc.name;
}

const char *tpl_sha256(const struct tpl *t)
{
	return t->plain.jinja ? t->source_sha : t->plain.desc.sha;
}

const char *tpl_source(const struct tpl *t)
{
	return t->source;
}

void tpl_note(struct tpl *t, unsigned note)
{
	t->notes |= note;
}

unsigned tpl_notes(const struct tpl *t)
{
	return t->notes;
}

const char *tpl_source_sha256(const struct tpl *t)
{
	return t->source_sha;
}

int tpl_reads_clock(const struct tpl *t)
{
	return (t->plain.jinja && tpl_jinja_reads(t->plain.jinja, "strftime_now")) ||
	       (t->tools.jinja && tpl_jinja_reads(t->tools.jinja, "strftime_now"));
}

const char *tpl_explain(const struct tpl *t)
{
	return t->explain.len ? t->explain.data : "";
}

/* Appends each marker of `s` written <|...|> or <｜...｜> once to `out`. */
static enum err add_markers(const char *s, struct buf *out)
{
	static const char *const pairs[][2] = {{"<|", "|>"}, {"<\xef\xbd\x9c", "\xef\xbd\x9c>"}};
	size_t k;
	enum err e = ERR_OK;

	for (k = 0; !e && k < 2; k++) {
		const char *p = s, *q;

		while (!e && (p = strstr(p, pairs[k][0])) && (q = strstr(p + strlen(pairs[k][0]), pairs[k][1]))) {
			size_t n = (size_t)(q - p) + strlen(pairs[k][1]), at;
			int seen = 0;

			for (at = 0; at < out->len; at += strlen(out->data + at) + 1)
				seen |= strlen(out->data + at) == n && !memcmp(out->data + at, p, n);
			if (!seen && !memchr(p, '\n', n))
				e = buf_append(out, p, n) ? ERR_NOMEM : buf_putc(out, '\0');
			p = q + strlen(pairs[k][1]);
		}
	}
	return e;
}

static enum err walk_markers(const cJSON *v, struct buf *out)
{
	const cJSON *c;
	enum err e = ERR_OK;

	if (cJSON_IsString(v))
		return add_markers(v->valuestring, out);
	cJSON_ArrayForEach(c, v)
		if (!e && !(c->string && !strcmp(c->string, "template_sha256")))
			e = walk_markers(c, out);
	return e;
}

static enum err variant_markers(const struct variant *v, struct buf *out)
{
	return v->jinja ? add_markers(tpl_jinja_text(v->jinja), out) : walk_markers(v->desc.root, out);
}

enum err tpl_special_tokens(const struct tpl *t, struct buf *out)
{
	enum err e = variant_markers(&t->plain, out);

	return e || !t->split ? e : variant_markers(&t->tools, out);
}

/* Resolves the thinking switch from kwargs per the descriptor's "thinking".
 * SGLang's V3.2 encoder path reads kwargs "thinking" only (docs/protocol.md "DeepSeek encoders"). */
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
	struct tpl_dsv4_req r = {j->c, j->messages, j->tools, j->kwargs, j->effort, j->server,
				 j->gen};

	switch (j->t->style) {
	case TPL_STYLE_TURNS:
		return tpl_turns_render(j->t, j->c, j->tools, j->server, j->gen, j->thinking, out, d);
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

/* A descriptor's render: server preparation, then the style's renderer. */
static enum err render_desc(const struct tpl_desc *desc, const cJSON *messages,
			    const cJSON *tools, const cJSON *kwargs, int gen,
			    const struct tpl_render_opts *o, struct buf *out, struct diag *d)
{
	struct tpl_conv c = {NULL, 0};
	cJSON *owned = NULL;
	struct job j;
	enum err e;

	memset(&j, 0, sizeof j);
	j.t = desc;
	j.c = &c;
	j.messages = messages;
	j.tools = tools;
	j.effort = o ? o->reasoning_effort : NULL;
	j.gen = gen;
	j.server = o ? o->server : TPL_SERVER_VLLM;
	e = tpl_msg_effort_kwargs(kwargs, j.server, j.effort, &owned, d);
	j.kwargs = owned ? owned : kwargs;
	if (!e)
		e = thinking_mode(j.t, j.kwargs, j.server, &j.thinking, d);
	/* V4.1 reads content parts itself (tpl_dsv4.h): SGLang's preparation
	 * keeps every message without refusing media. */
	if (!e)
		e = tpl_conv_prepare(&c, messages, j.t->style == TPL_STYLE_DSV41 ? TPL_SERVER_SGLANG : j.server, d);
	if (!e)
		e = render_style(&j, out, d);
	cJSON_Delete(owned);
	tpl_conv_release(&c);
	return e;
}

/* ---- the clock (tpl_clock_pin) ----------------------------------------- */

static struct tm pinned_tm;
static int pinned;
static char clock_iso[24];

static enum err parse_date(const char *s, struct tm *tm, struct diag *d)
{
	int n = 0, len = (int)strlen(s);

	memset(tm, 0, sizeof *tm);
	if ((sscanf(s, "%4d-%2d-%2d%n", &tm->tm_year, &tm->tm_mon, &tm->tm_mday, &n) != 3 || n != 10) ||
	    (len != 10 && (sscanf(s + 10, "T%2d:%2d:%2d%n", &tm->tm_hour, &tm->tm_min, &tm->tm_sec, &n) != 3 ||
			   n != 9 || len != 19)) ||
	    tm->tm_mon < 1 || tm->tm_mon > 12 || tm->tm_mday < 1 || tm->tm_mday > 31 ||
	    tm->tm_hour > 23 || tm->tm_min > 59 || tm->tm_sec > 60)
		return diag_fail(d, ERR_USAGE, "option '--date' wants YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, got '%s'", s);
	tm->tm_year -= 1900;
	tm->tm_mon -= 1;
	tm->tm_isdst = -1;
	mktime(tm); /* fills in the weekday and the day of the year */
	return ERR_OK;
}

enum err tpl_clock_pin(const char *date, struct diag *d)
{
	struct tm tm;
	time_t now = time(NULL);
	enum err e = ERR_OK;

	if (date)
		e = parse_date(date, &tm, d);
	else
		localtime_r(&now, &tm);
	if (e)
		return e;
	pinned_tm = tm;
	pinned = 1;
	strftime(clock_iso, sizeof clock_iso, "%Y-%m-%dT%H:%M:%S", &pinned_tm);
	return ERR_OK;
}

const char *tpl_clock_text(void)
{
	return pinned ? clock_iso : NULL;
}

/* One variant's render of request values the server reads as they are. */
static enum err render_variant(const struct variant *v, const cJSON *messages,
			       const cJSON *tools, const cJSON *kwargs, int gen,
			       const struct tpl_render_opts *o, struct buf *out, struct diag *d)
{
	struct tpl_jinja_req r = {messages, tools, kwargs, o ? o->reasoning_effort : NULL,
				  gen, o ? o->server : TPL_SERVER_VLLM, pinned ? &pinned_tm : NULL};

	if (v->jinja)
		return tpl_jinja_render(v->jinja, &r, out, d);
	return render_desc(&v->desc, messages, tools, kwargs, gen, o, out, d);
}

enum err tpl_render_ex(const struct tpl *t, const cJSON *messages,
		       const cJSON *tools, const cJSON *kwargs,
		       int add_generation_prompt, const struct tpl_render_opts *o,
		       struct buf *out, struct diag *d)
{
	int with_tools = cJSON_GetArraySize(tools) > 0;
	const struct variant *v = with_tools && t->split ? &t->tools : &t->plain;
	cJSON *sent[3] = {NULL, NULL, NULL};
	enum err e;

	if (kwargs && !cJSON_IsObject(kwargs))
		return diag_fail(d, ERR_INPUT, "chat_template_kwargs: expected an object");
	if (tools && !cJSON_IsArray(tools) && !cJSON_IsNull(tools))
		return diag_fail(d, ERR_INPUT, "tools: expected an array");
	if (with_tools && t->tools_refusal)
		return diag_fail(d, ERR_UNSUPPORTED, "%s", t->tools_refusal);
	/* the template sees json.loads of the body: numbers as printed, keys deduped */
	e = tpl_py_as_sent(messages, &sent[0], "the messages", d);
	if (!e)
		e = tpl_py_as_sent(tools, &sent[1], "the tools", d);
	if (!e)
		e = tpl_py_as_sent(kwargs, &sent[2], "chat_template_kwargs", d);
	if (!e)
		e = render_variant(v, sent[0] ? sent[0] : messages, sent[1] ? sent[1] : tools,
				   sent[2] ? sent[2] : kwargs, add_generation_prompt, o, out, d);
	cJSON_Delete(sent[0]);
	cJSON_Delete(sent[1]);
	cJSON_Delete(sent[2]);
	if (e == ERR_NOMEM && d && !d->code)
		diag_fail(d, e, "cannot render the prompt: out of memory");
	else if (e && d && !d->code)
		diag_fail(d, e, "cannot render the prompt: %s", err_name(e));
	return e;
}
