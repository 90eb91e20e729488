/*
 * tpl_jinja — a model's Jinja template with the server's context (see
 * tpl_jinja.h).
 */
#include <string.h>
#include <time.h>

#include "jinja/jinja.h"
#include "base/json.h"
#include "base/mem.h"
#include "tpl_jinja.h"

struct tpl_jinja {
	struct jinja_tpl *t;
	char *text, *path;
	cJSON *specials;   /* owned copy, or NULL without a tokenizer_config.json */
	int openai;        /* the template loops over a message's content */
};

static const char *const special_names[] = {
	"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
	"mask_token", "additional_special_tokens"};

/* [[:space:]] in the C locale. */
static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* The end of a run of at least one space at `p`, or NULL. */
static const char *spaces_end(const char *p)
{
	if (!is_space(*p))
		return NULL;
	while (is_space(*p))
		p++;
	return p;
}

/* The end of a name at `p`, or NULL. */
static const char *name_end(const char *p)
{
	if (!is_name_start(*p))
		return NULL;
	while (is_name_char(*p))
		p++;
	return p;
}

/* Whether `p` (just after "for") continues as the POSIX extended regular
 * expression
 *   [[:space:]]+NAME[[:space:]]+in[[:space:]]+NAME
 *   (\.content([^A-Za-z0-9_]|$)|\[[[:space:]]*['"]content['"][[:space:]]*\])
 * does (NAME [A-Za-z_][A-Za-z0-9_]*): each part can match one way only, as
 * a name is followed by what no name holds. */
static int loop_over_content(const char *p)
{
	if (!(p = spaces_end(p)) || !(p = name_end(p)) || !(p = spaces_end(p)) || strncmp(p, "in", 2) ||
	    !(p = spaces_end(p + 2)) || !(p = name_end(p)))
		return 0;
	if (!strncmp(p, ".content", 8))
		return !is_name_char(p[8]);
	if (*p++ != '[')
		return 0;
	while (is_space(*p))
		p++;
	if ((*p != '\'' && *p != '"') || strncmp(p + 1, "content", 7) ||
	    (p[8] != '\'' && p[8] != '"'))
		return 0;
	for (p += 9; is_space(*p); p++)
		;
	return *p == ']';
}

/* vLLM's content-format detection, from the text: a for loop over X.content
 * or X['content'] means the template wants a list of parts. */
static int loops_over_content(const char *text)
{
	const char *p;

	for (p = text; (p = strstr(p, "for")); p++)
		if (loop_over_content(p + 3))
			return 1;
	return 0;
}

void tpl_jinja_free(struct tpl_jinja *j)
{
	if (!j)
		return;
	jinja_tpl_free(j->t);
	mem_free(j->text);
	mem_free(j->path);
	cJSON_Delete(j->specials);
	mem_free(j);
}

static enum err check_specials(const struct tpl_jinja *j, struct diag *d)
{
	size_t i;

	for (i = 0; !j->specials && i < sizeof special_names / sizeof special_names[0]; i++)
		if (jinja_tpl_reads(j->t, special_names[i]))
			return diag_fail(d, ERR_UNSUPPORTED, "template '%s' reads '%s', and without the "
					 "model's tokenizer_config.json its value is unknown: pass the model "
					 "folder as --tokenizer", j->path, special_names[i]);
	return ERR_OK;
}

enum err tpl_jinja_new(const struct tpl_text *x, const cJSON *specials,
		       struct tpl_jinja **out, struct diag *d)
{
	struct tpl_jinja *j = mem_calloc(1, sizeof *j);
	enum err e = ERR_OK;

	*out = NULL;
	if (!j)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	j->text = mem_strndup(x->text, x->len);
	j->path = mem_strndup(x->path, strlen(x->path));
	j->specials = specials ? cJSON_Duplicate(specials, 1) : NULL;
	if (!j->text || !j->path || (specials && !j->specials))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e && (e = jinja_tpl_new(x->text, x->len, &j->t, d)))
		diag_prefix(d, "template '%s'", x->path);
	if (!e)
		e = check_specials(j, d);
	j->openai = !e && loops_over_content(j->text);
	if (e)
		tpl_jinja_free(j);
	else
		*out = j;
	return e;
}

int tpl_jinja_reads(const struct tpl_jinja *j, const char *name)
{
	return jinja_tpl_reads(j->t, name);
}

const char *tpl_jinja_text(const struct tpl_jinja *j)
{
	return j->text;
}

/* ---- the context -------------------------------------------------------- */

/* The placeholder part an "openai"-format template gets for a media part
 * (vLLM's wrap_dicts, SGLang's process_content_for_template_format), or
 * NULL when `part` is not media. */
static const char *media_kind(const cJSON *part)
{
	static const char *const kinds[][2] = {
		{"image_url", "image"}, {"input_audio", "audio"}, {"audio_url", "audio"},
		{"video_url", "video"}};
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
	size_t i;

	for (i = 0; cJSON_IsString(type) && i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(type->valuestring, kinds[i][0]))
			return kinds[i][1];
	return NULL;
}

/* Content as a list of parts ("openai" format): a string becomes one text
 * part, null none, a list keeps its text parts and gives each media part as
 * {"type": "image"} (audio, video); other parts are refused. */
static enum err parts_content(struct json_build *jb, cJSON *o, const cJSON *c, size_t mi,
			      struct diag *d)
{
	cJSON *a = json_add_arr(jb, o, "content"), *p;
	const cJSON *part;

	if (cJSON_IsString(c)) {
		p = json_add_obj(jb, a, NULL);
		json_add_str(jb, p, "type", "text");
		json_add_str(jb, p, "text", c->valuestring);
	}
	cJSON_ArrayForEach(part, (cJSON_IsArray(c) ? c : NULL)) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");

		p = json_add_obj(jb, a, NULL);
		if (media_kind(part)) {
			json_add_str(jb, p, "type", media_kind(part));
			continue;
		}
		if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") || !cJSON_IsString(text))
			return diag_fail(d, ERR_UNSUPPORTED, "message %zu: a content part that is neither text "
					 "nor media, with a template that reads content parts, is not reproduced", mi);
		json_add_str(jb, p, "type", "text");
		json_add_str(jb, p, "text", text->valuestring);
	}
	return ERR_OK;
}

/* The messages without their media parts, for tpl_conv_prepare (which
 * refuses media: a string-format prompt would need the model's placeholder)
 * when the template takes parts and gets them from parts_content. */
static cJSON *without_media(const cJSON *messages)
{
	cJSON *copy = cJSON_Duplicate(messages, 1), *m, *part, *next;

	cJSON_ArrayForEach(m, copy) {
		cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");

		for (part = cJSON_IsArray(c) ? c->child : NULL; part; part = next) {
			next = part->next;
			if (media_kind(part))
				cJSON_Delete(cJSON_DetachItemViaPointer(c, part));
		}
	}
	return copy;
}

/* tool_calls with each call's arguments replaced by the parsed value. */
static void calls_with_args(struct json_build *jb, cJSON *o, const struct tpl_msg *m)
{
	cJSON *a = json_add_arr(jb, o, "tool_calls");
	const cJSON *call, *args = m->args ? m->args->child : NULL;

	cJSON_ArrayForEach(call, m->tool_calls) {
		cJSON *c = json_add_obj(jb, a, NULL), *f;
		const cJSON *k, *fk;

		cJSON_ArrayForEach(k, call) {
			if (strcmp(k->string, "function")) {
				json_add_dup(jb, c, k->string, k);
				continue;
			}
			f = json_add_obj(jb, c, "function");
			cJSON_ArrayForEach(fk, k)
				if (strcmp(fk->string, "arguments"))
					json_add_dup(jb, f, fk->string, fk);
			json_add_dup(jb, f, "arguments", args); /* lexemes kept: tpl_py_parse */
		}
		args = args ? args->next : NULL;
	}
}

/* The static copy of a key every message has, else `key`. */
static const char *key_of(const char *key)
{
	return key[0] == 'r' && !strcmp(key, "role") ? "role" : key;
}

/* Message `mi` as the server prepares it, appended to the context's list
 * `all`: strings borrowed from the request and from `m`; what needs new
 * JSON (content parts, tool calls with parsed arguments) is built under
 * `keep`, which the caller deletes after the context. */
static enum err one_message(const struct tpl_jinja *j, struct jinja_ctx *ctx,
			    struct jinja_list *all, struct json_build *jb, cJSON *keep,
			    const cJSON *raw, const struct tpl_msg *m, size_t mi, struct diag *d)
{
	struct jinja_dict *o;
	cJSON *held;
	const cJSON *k;
	size_t keys = 0;
	int has_content = 0;
	enum err e;

	/* room for each key, and for what is added below: the content when
	 * the message has none, the reasoning under its two names (a dict
	 * grows past it, but 4,000 messages with room for three keys more
	 * were 0.7 MB of arena the render touched for nothing) */
	for (k = raw->child; k; k = k->next) {
		keys++;
		has_content |= !strcmp(k->string, "content");
	}
	e = jinja_list_add_dict(ctx, all, keys + !has_content + (m->reasoning ? 2 : 0), &o, d);
	cJSON_ArrayForEach(k, (e ? NULL : raw)) {
		/* keys the context shares from one message to the next when they
		 * are one pointer (jinja_dict_set_str) */
		const char *key = key_of(k->string);
		int is_content = key[0] == 'c' && !strcmp(key, "content");
		int kept = !is_content && !(key[0] == 't' && !strcmp(key, "tool_calls")) &&
			   !(key[0] == 'r' && (!strcmp(key, "reasoning") ||
					       !strcmp(key, "reasoning_content")));

		if (is_content && j->openai) {
			held = json_add_obj(jb, keep, NULL);
			e = parts_content(jb, held, k, mi, d);
			if (!e && jb->code)
				e = json_build_end(jb, NULL, "the messages", d);
			if (!e)
				e = jinja_dict_set_cjson(ctx, o, "content", held->child, d);
		} else if (is_content) {
			e = jinja_dict_set_str(ctx, o, "content", m->content, strlen(m->content), d);
		} else if (!kept && key[0] == 't' && m->tool_calls) {
			held = json_add_obj(jb, keep, NULL);
			calls_with_args(jb, held, m);
			e = jb->code ? json_build_end(jb, NULL, "the messages", d)
				     : jinja_dict_set_cjson(ctx, o, "tool_calls", held->child, d);
		} else if (kept && (k->type & 0xFF) == cJSON_String) {
			e = jinja_dict_set_str(ctx, o, key, k->valuestring, strlen(k->valuestring), d);
		} else if (kept) {
			e = jinja_dict_set_cjson(ctx, o, key, k, d);
		}
		if (e)
			return e;
	}
	if (!e && !has_content) {
		if (j->openai) {
			held = json_add_obj(jb, keep, NULL);
			e = parts_content(jb, held, NULL, mi, d);
			if (!e && jb->code)
				e = json_build_end(jb, NULL, "the messages", d);
			if (!e)
				e = jinja_dict_set_cjson(ctx, o, "content", held->child, d);
		} else {
			e = jinja_dict_set_str(ctx, o, "content", "", 0, d);
		}
	}
	if (!e && m->reasoning) /* borrowed: `c`, which holds it, outlives the context */
		e = jinja_dict_set_str(ctx, o, "reasoning", m->reasoning, strlen(m->reasoning), d);
	if (!e && m->reasoning)
		e = jinja_dict_set_str(ctx, o, "reasoning_content", m->reasoning,
				       strlen(m->reasoning), d);
	return e;
}

/* Sets `messages` in the context to the messages as the server prepares
 * them, built in place (jinja_ctx_set_list): contents are `c`'s flattened
 * texts, other strings the request's; what needs new JSON goes under
 * *keep (owned, NULL on failure). `c` (the caller releases it), *keep and
 * the request must outlive the context. */
static enum err set_messages(const struct tpl_jinja *j, struct jinja_ctx *ctx,
			     const struct tpl_jinja_req *r, struct tpl_conv *c, cJSON **keep,
			     struct diag *d)
{
	struct json_build jb;
	struct jinja_list *all = NULL;
	cJSON *text_only = j->openai ? without_media(r->messages) : NULL;
	const cJSON *raw;
	size_t i = 0;
	enum err e = j->openai && !text_only ? diag_fail(d, ERR_NOMEM, "out of memory")
		: tpl_conv_prepare(c, text_only ? text_only : r->messages, r->server, d);

	json_build_init(&jb);
	*keep = e ? NULL : json_new_arr(&jb);
	if (!e && !*keep)
		e = json_build_end(&jb, keep, "the messages", d);
	if (!e)
		e = jinja_ctx_set_list(ctx, "messages", (size_t)cJSON_GetArraySize(r->messages),
				       &all, d);
	cJSON_ArrayForEach(raw, (e ? NULL : r->messages)) {
		e = one_message(j, ctx, all, &jb, *keep, raw, &c->m[i], i, d);
		if (e)
			break;
		i++;
	}
	c->source = text_only; /* the conversation borrows its strings */
	return e;
}

/* The tools as the server dumps them; `flat`: only each tool's function
 * (SGLang's second attempt, see tpl_jinja_render). */
static enum err tools_json(const struct tpl_jinja_req *r, int flat, struct buf *text, struct diag *d)
{
	const cJSON *tool;
	size_t i = 0;
	enum err e = buf_putc(text, '[');

	cJSON_ArrayForEach(tool, r->tools) {
		if (!e && i)
			e = buf_puts(text, ", ");
		if (!e)
			e = flat ? tpl_msg_dump_function(tool, i, r->server, text, d)
				 : tpl_msg_dump_tool(tool, i, r->server, text, d);
		i++;
	}
	return e ? e : buf_putc(text, ']');
}

/* Sets `name` to the JSON value `v`. */
static enum err set_value(struct jinja_ctx *c, const char *name, const cJSON *v, struct diag *d)
{
	struct buf b;
	enum err e;

	buf_init(&b, BUF_MAX_DEFAULT);
	e = json_print(v, 0, &b, name, d);
	if (!e)
		e = jinja_ctx_set_json(c, name, b.data, b.len, d);
	buf_release(&b);
	return e;
}

/* chat_template_kwargs as the server passes them (tpl_jinja.h). */
static enum err set_kwargs(const struct tpl_jinja *j, struct jinja_ctx *c,
			   const struct tpl_jinja_req *r, struct diag *d)
{
	cJSON *owned = NULL;
	const cJSON *kw, *k;
	enum err e = tpl_msg_effort_kwargs(r->kwargs, r->server, r->effort, &owned, d);

	kw = owned ? owned : r->kwargs;
	if (!e && (cJSON_GetObjectItemCaseSensitive(kw, "chat_template") ||
		   cJSON_GetObjectItemCaseSensitive(kw, "tokenize")))
		e = diag_fail(d, ERR_INPUT, "the server would reject this request: chat_template_kwargs "
			      "may not set 'chat_template' or 'tokenize'");
	if (!e && r->effort && !cJSON_IsNull(r->effort) && !cJSON_GetObjectItemCaseSensitive(kw, "reasoning_effort") &&
	    (r->server == TPL_SERVER_SGLANG || jinja_tpl_reads(j->t, "reasoning_effort")))
		e = set_value(c, "reasoning_effort", r->effort, d);
	cJSON_ArrayForEach(k, (e ? NULL : kw))
		if (!e && (r->server == TPL_SERVER_SGLANG || jinja_tpl_reads(j->t, k->string)))
			e = set_value(c, k->string, k, d);
	cJSON_Delete(owned);
	return e;
}

/* The context; *keep (owned, NULL on failure) and `conv` (the caller
 * releases it) hold the messages' strings, which the context borrows. */
static enum err fill(const struct tpl_jinja *j, struct jinja_ctx *c, const struct tpl_jinja_req *r,
		     int flat, struct tpl_conv *conv, cJSON **keep, struct diag *d)
{
	const cJSON *s;
	struct buf text;
	enum err e = set_messages(j, c, r, conv, keep, d);

	buf_init(&text, BUF_MAX_DEFAULT);
	if (!e && cJSON_GetArraySize(r->tools) > 0)
		e = tools_json(r, flat, &text, d);
	if (!e)
		e = text.len ? jinja_ctx_set_json(c, "tools", text.data, text.len, d)
			     : jinja_ctx_set_none(c, "tools", d);
	if (!e)
		e = jinja_ctx_set_none(c, "documents", d);
	if (!e)
		e = jinja_ctx_set_bool(c, "add_generation_prompt", r->gen, d);
	cJSON_ArrayForEach(s, (e ? NULL : j->specials))
		if (!e)
			e = set_value(c, s->string, s, d);
	if (!e)
		e = set_kwargs(j, c, r, d);
	buf_release(&text);
	return e;
}

/* One render; *rendering is set once the context is built (a failure after
 * that is the template's). */
static enum err render_once(const struct tpl_jinja *j, const struct tpl_jinja_req *r, int flat,
			    int *rendering, struct buf *out, struct diag *d)
{
	struct jinja_ctx *c = jinja_ctx_new();
	cJSON *keep = NULL;
	struct tpl_conv conv = {NULL, 0};
	struct tm now;
	time_t t = time(NULL);
	enum err e;

	*rendering = 0;
	if (!c)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (!r->clock)
		localtime_r(&t, &now);
	jinja_ctx_clock(c, r->clock ? r->clock : &now);
	e = fill(j, c, r, flat, &conv, &keep, d);
	*rendering = !e;
	if (!e)
		e = jinja_tpl_render(j->t, c, out, d);
	jinja_ctx_free(c);
	cJSON_Delete(keep);
	tpl_conv_release(&conv);
	return e;
}

enum err tpl_jinja_render(const struct tpl_jinja *j, const struct tpl_jinja_req *r,
			  struct buf *out, struct diag *d)
{
	size_t keep = out->len;
	int rendering;
	enum err e = render_once(j, r, 0, &rendering, out, d);

	/* SGLang's _apply_jinja_template: when the template raises with the
	 * tools as dumped, it renders again with each tool's function only */
	if (e == ERR_INPUT && rendering && r->server == TPL_SERVER_SGLANG &&
	    cJSON_GetArraySize(r->tools) > 0) {
		buf_truncate(out, keep);
		if (d)
			diag_init(d);
		e = render_once(j, r, 1, &rendering, out, d);
	}
	if (e && e != ERR_NOMEM)
		diag_prefix(d, "template '%s'", j->path);
	return e;
}
