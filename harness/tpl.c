/*
 * tpl — chat-template descriptors (see tpl.h for the format). Loading
 * validates the descriptor completely, so rendering only meets bad messages.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "io.h"
#include "mem.h"
#include "tpl.h"

enum tpl_style { STYLE_TURNS, STYLE_DSV3, STYLE_DSV31, STYLE_DSV32 };

struct tpl {
	char *name;                /* owned copy of "name" */
	char *origin;              /* owned: the path or "templates/NAME.json" */
	char sha[IO_SHA256_HEX];
	cJSON *root;               /* owned descriptor */
	enum tpl_style style;
};

/* One message as vLLM's parse_chat_messages leaves it. */
struct msg {
	const char *role;          /* borrowed from the request */
	char *content;             /* owned, flattened text */
	const char *reasoning;     /* borrowed, or NULL */
	const cJSON *tool_calls;   /* borrowed non-empty array, or NULL */
	cJSON *args;               /* owned array: parsed arguments per call */
};

struct conv {
	struct msg *m;
	size_t n;
};

/* ---- descriptor schema ------------------------------------------------- */

enum ktype { K_STR, K_BOOL, K_OBJ, K_STRARR };

struct key {
	const char *name;
	enum ktype type;
	unsigned styles;  /* bit per enum tpl_style */
	unsigned required;
};

#define S_ALL 0xfu
#define S_T (1u << STYLE_TURNS)
#define S_3 (1u << STYLE_DSV3)
#define S_31 (1u << STYLE_DSV31)
#define S_32 (1u << STYLE_DSV32)

static const struct key top_keys[] = {
	{"name", K_STR, S_ALL, S_ALL},
	{"style", K_STR, S_ALL, S_ALL},
	{"description", K_STR, S_ALL, 0},
	{"bos", K_STR, S_ALL, 0},
	{"eos", K_STR, S_3 | S_31 | S_32, S_3 | S_31 | S_32},
	{"generation_prompt", K_STR, S_ALL, S_T | S_3 | S_31},
	{"thinking", K_OBJ, S_T | S_31 | S_32, S_31 | S_32},
	{"turn_prefix", K_STR, S_T, S_T},
	{"turn_suffix", K_STR, S_T, S_T},
	{"roles", K_STRARR, S_T, 0},
	{"trim_content", K_BOOL, S_T, 0},
	{"generation_prompt_always", K_BOOL, S_T, 0},
	{"tools", K_OBJ, S_T, 0},
	{"tool_calls", K_OBJ, S_T, 0},
	{"tool_results", K_OBJ, S_T, 0},
	{"reasoning", K_OBJ, S_T, 0},
	{"user", K_STR, S_3 | S_31 | S_32, S_3 | S_31 | S_32},
	{"assistant", K_STR, S_3 | S_31 | S_32, S_3 | S_31 | S_32},
	{"system_separator", K_STR, S_3 | S_31, S_3 | S_31},
	{"tool_outputs_begin", K_STR, S_3, S_3},
	{"tool_output_begin", K_STR, S_3 | S_31, S_3 | S_31},
	{"tool_output_end", K_STR, S_3 | S_31, S_3 | S_31},
	{"tool_outputs_end", K_STR, S_3, S_3},
	{"tool_output_separator", K_STR, S_3, S_3},
	{"think_open", K_STR, S_31 | S_32, S_31 | S_32},
	{"think_close", K_STR, S_31 | S_32, S_31 | S_32},
	{"tool_calls_begin", K_STR, S_31, S_31},
	{"tool_call_begin", K_STR, S_31, S_31},
	{"tool_sep", K_STR, S_31, S_31},
	{"tool_call_end", K_STR, S_31, S_31},
	{"tool_calls_end", K_STR, S_31, S_31},
	{"dsml", K_STR, S_32, S_32},
	{"developer_prefix", K_STR, S_32, S_32},
	{NULL, K_STR, 0, 0},
};

static const struct key thinking_keys[] = {
	{"kwargs", K_STRARR, S_ALL, S_ALL},
	{"combine", K_STR, S_ALL, S_ALL},
	{"default", K_BOOL, S_ALL, S_ALL},
	{"on", K_STR, S_ALL, 0},
	{"off", K_STR, S_ALL, 0},
	{NULL, K_STR, 0, 0},
};
static const struct key tools_keys[] = {
	{"prefix", K_STR, S_ALL, S_ALL},
	{"system_separator", K_STR, S_ALL, S_ALL},
	{"header", K_STR, S_ALL, S_ALL},
	{"item_prefix", K_STR, S_ALL, S_ALL},
	{"footer", K_STR, S_ALL, S_ALL},
	{NULL, K_STR, 0, 0},
};
static const struct key tool_calls_keys[] = {
	{"lead", K_STR, S_ALL, S_ALL},
	{"separator", K_STR, S_ALL, S_ALL},
	{"call", K_STR, S_ALL, S_ALL},
	{NULL, K_STR, 0, 0},
};
static const struct key tool_results_keys[] = {
	{"open", K_STR, S_ALL, S_ALL},
	{"item_prefix", K_STR, S_ALL, S_ALL},
	{"item_suffix", K_STR, S_ALL, S_ALL},
	{"close", K_STR, S_ALL, S_ALL},
	{NULL, K_STR, 0, 0},
};
static const struct key reasoning_keys[] = {
	{"open", K_STR, S_ALL, S_ALL},
	{"close", K_STR, S_ALL, S_ALL},
	{"start_tag", K_STR, S_ALL, S_ALL},
	{"end_tag", K_STR, S_ALL, S_ALL},
	{"query_skip_open", K_STR, S_ALL, S_ALL},
	{"query_skip_close", K_STR, S_ALL, S_ALL},
	{NULL, K_STR, 0, 0},
};

static const char *const style_names[] = {"turns", "deepseek-v3", "deepseek-v3.1",
					  "deepseek-v3.2"};

static int type_ok(const cJSON *v, enum ktype type)
{
	const cJSON *e;

	switch (type) {
	case K_STR:
		return cJSON_IsString(v);
	case K_BOOL:
		return cJSON_IsBool(v);
	case K_OBJ:
		return cJSON_IsObject(v);
	case K_STRARR:
		if (!cJSON_IsArray(v))
			return 0;
		cJSON_ArrayForEach(e, v)
			if (!cJSON_IsString(e))
				return 0;
		return 1;
	}
	return 0;
}

static const char *const type_names[] = {"a string", "a boolean", "an object",
					 "an array of strings"};

/* Checks the members of `obj` against `keys` for `style`; `path` is the JSON
 * path of `obj` for messages. */
static enum err check_keys(const struct tpl *t, const cJSON *obj,
			   const struct key *keys, const char *path,
			   enum tpl_style style, struct diag *d)
{
	unsigned bit = 1u << style;
	const struct key *k;
	const cJSON *m;

	cJSON_ArrayForEach(m, obj) {
		for (k = keys; k->name; k++)
			if (!strcmp(k->name, m->string))
				break;
		if (!k->name || !(k->styles & bit))
			return diag_fail(d, ERR_INPUT,
					 "cannot load template '%s': %s.%s: unknown key for style '%s'",
					 t->origin, path, m->string, style_names[style]);
		if (!type_ok(m, k->type))
			return diag_fail(d, ERR_INPUT,
					 "cannot load template '%s': %s.%s: expected %s",
					 t->origin, path, m->string, type_names[k->type]);
	}
	for (k = keys; k->name; k++)
		if ((k->required & bit) && !cJSON_GetObjectItemCaseSensitive(obj, k->name))
			return diag_fail(d, ERR_INPUT,
					 "cannot load template '%s': %s.%s: missing (required for style '%s')",
					 t->origin, path, k->name, style_names[style]);
	return ERR_OK;
}

/* Placeholders a "turns" string may hold, by key. */
static enum err check_placeholders(const struct tpl *t, const char *path,
				   const char *s, const char *allowed,
				   struct diag *d)
{
	const char *p = s;

	while ((p = strstr(p, "{{"))) {
		const char *end = strstr(p, "}}");
		size_t len = end ? (size_t)(end - p) + 2 : 0;
		const char *a = allowed;
		int ok = 0;

		while (end && a && *a) {
			size_t al = strcspn(a, " ");

			if (al == len && !strncmp(a, p, len))
				ok = 1;
			a += al + (a[al] == ' ');
		}
		if (!ok)
			return diag_fail(d, ERR_INPUT,
					 "cannot load template '%s': %s: unknown placeholder at '%.20s' (allowed: %s)",
					 t->origin, path, p, allowed[0] ? allowed : "none");
		p = end + 2;
	}
	return ERR_OK;
}

static const struct {
	const char *obj, *key, *allowed;
} placeholder_rules[] = {
	{NULL, "turn_prefix", "{{role}}"},
	{NULL, "turn_suffix", "{{role}}"},
	{"tool_calls", "call", "{{name}} {{arguments}}"},
};

static enum err check_descriptor(struct tpl *t, struct diag *d)
{
	const cJSON *style = cJSON_GetObjectItemCaseSensitive(t->root, "style");
	static const struct {
		const char *name;
		const struct key *keys;
	} subs[] = {{"thinking", thinking_keys}, {"tools", tools_keys},
		    {"tool_calls", tool_calls_keys}, {"tool_results", tool_results_keys},
		    {"reasoning", reasoning_keys}};
	const cJSON *v;
	size_t i;
	enum err e;

	if (!cJSON_IsObject(t->root))
		return diag_fail(d, ERR_INPUT, "cannot load template '%s': $: expected an object", t->origin);
	if (!cJSON_IsString(style))
		return diag_fail(d, ERR_INPUT, "cannot load template '%s': $.style: missing or not a string", t->origin);
	for (i = 0; i < 4 && strcmp(style_names[i], style->valuestring); i++)
		;
	if (i == 4)
		return diag_fail(d, ERR_INPUT,
				 "cannot load template '%s': $.style: unknown style '%s' (turns, deepseek-v3, deepseek-v3.1, deepseek-v3.2)",
				 t->origin, style->valuestring);
	t->style = (enum tpl_style)i;
	e = check_keys(t, t->root, top_keys, "$", t->style, d);
	for (i = 0; !e && i < sizeof subs / sizeof subs[0]; i++) {
		char path[64];

		v = cJSON_GetObjectItemCaseSensitive(t->root, subs[i].name);
		snprintf(path, sizeof path, "$.%s", subs[i].name);
		if (v)
			e = check_keys(t, v, subs[i].keys, path, t->style, d);
	}
	v = cJSON_GetObjectItemCaseSensitive(t->root, "thinking");
	if (!e && v) {
		const char *c = cJSON_GetObjectItemCaseSensitive(v, "combine")->valuestring;

		if (strcmp(c, "first") && strcmp(c, "any"))
			e = diag_fail(d, ERR_INPUT,
				      "cannot load template '%s': $.thinking.combine: expected \"first\" or \"any\"",
				      t->origin);
	}
	for (i = 0; !e && i < sizeof placeholder_rules / sizeof placeholder_rules[0]; i++) {
		const cJSON *o = placeholder_rules[i].obj
			? cJSON_GetObjectItemCaseSensitive(t->root, placeholder_rules[i].obj) : t->root;
		const cJSON *s = o ? cJSON_GetObjectItemCaseSensitive(o, placeholder_rules[i].key) : NULL;

		char path[64];

		snprintf(path, sizeof path, "$.%s%s%s", placeholder_rules[i].obj ? placeholder_rules[i].obj : "",
			 placeholder_rules[i].obj ? "." : "", placeholder_rules[i].key);
		if (cJSON_IsString(s) && t->style == STYLE_TURNS)
			e = check_placeholders(t, path, s->valuestring, placeholder_rules[i].allowed, d);
	}
	if (!e)
		e = (t->name = mem_strndup(cJSON_GetObjectItemCaseSensitive(t->root, "name")->valuestring,
					    strlen(cJSON_GetObjectItemCaseSensitive(t->root, "name")->valuestring)))
			? ERR_OK : diag_fail(d, ERR_NOMEM, "out of memory");
	return e;
}

/* ---- loading ----------------------------------------------------------- */

static enum err unknown_template(const char *name, struct diag *d)
{
	struct buf names;
	size_t n, i;
	const struct embed_file *f = embed_all(&n);
	enum err e;

	buf_init(&names, 4096);
	for (i = 0; i < n; i++) {
		const char *s = f[i].name;
		size_t len = strlen(s);

		if (strncmp(s, "templates/", 10) || len < 15 || strcmp(s + len - 5, ".json"))
			continue;
		buf_printf(&names, "%s%.*s", names.len ? ", " : "", (int)(len - 15), s + 10);
	}
	e = diag_fail(d, ERR_USAGE,
		      "unknown template '%s': not a shipped name (%s) and no such file",
		      name, names.data);
	buf_release(&names);
	return e;
}

static enum err tpl_parse(struct tpl *t, const char *bytes, size_t len,
			  struct diag *d)
{
	const char *end = NULL;

	io_sha256_hex(bytes, len, t->sha);
	if (tpl_check_nul(bytes, len, t->origin, d))
		return d ? d->code : ERR_UNSUPPORTED;
	t->root = cJSON_ParseWithLengthOpts(bytes, len, &end, 0);
	if (!t->root) {
		size_t off = end && end >= bytes ? (size_t)(end - bytes) : 0;

		if (!end)
			off = (size_t)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - bytes : 0);
		return diag_fail(d, ERR_INPUT,
				 "cannot load template '%s': invalid JSON near byte %zu",
				 t->origin, off);
	}
	return check_descriptor(t, d);
}

enum err tpl_load(const char *name_or_path, struct tpl **out, struct diag *d)
{
	struct tpl *t = mem_calloc(1, sizeof *t);
	const struct embed_file *f = NULL;
	struct buf key, raw;
	enum err e = ERR_OK;

	*out = NULL;
	buf_init(&key, 4096);
	buf_init(&raw, (size_t)1 << 24);
	if (!t) {
		e = diag_fail(d, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!strchr(name_or_path, '/') && !buf_printf(&key, "templates/%s.json", name_or_path))
		f = embed_find(key.data);
	if (f) {
		t->origin = mem_strndup(key.data, key.len);
		e = t->origin ? tpl_parse(t, (const char *)f->data, f->len, d)
			      : diag_fail(d, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!strchr(name_or_path, '/') && !strstr(name_or_path, ".json")) {
		e = unknown_template(name_or_path, d);
		goto out;
	}
	t->origin = mem_strndup(name_or_path, strlen(name_or_path));
	if (!t->origin)
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e)
		e = io_read_file(name_or_path, &raw, d);
	if (!e)
		e = tpl_parse(t, raw.data, raw.len, d);
out:
	if (e)
		tpl_free(t);
	else
		*out = t;
	buf_release(&key);
	buf_release(&raw);
	return e;
}

void tpl_free(struct tpl *t)
{
	if (!t)
		return;
	cJSON_Delete(t->root);
	mem_free(t->name);
	mem_free(t->origin);
	mem_free(t);
}

const char *tpl_name(const struct tpl *t)
{
	return t->name;
}

const char *tpl_sha256(const struct tpl *t)
{
	return t->sha;
}

/* ---- Python json.dumps(ensure_ascii=False) ----------------------------- */

static enum err py_string(const char *s, struct buf *out)
{
	enum err e = buf_putc(out, '"');

	for (; !e && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"': e = buf_puts(out, "\\\""); break;
		case '\\': e = buf_puts(out, "\\\\"); break;
		case '\n': e = buf_puts(out, "\\n"); break;
		case '\r': e = buf_puts(out, "\\r"); break;
		case '\t': e = buf_puts(out, "\\t"); break;
		case '\b': e = buf_puts(out, "\\b"); break;
		case '\f': e = buf_puts(out, "\\f"); break;
		default:
			e = c < 0x20 ? buf_printf(out, "\\u%04x", c) : buf_putc(out, (char)c);
		}
	}
	return e ? e : buf_putc(out, '"');
}

/* Python's repr(float): the shortest digits that round-trip, fixed notation
 * for 1e-4 <= |x| < 1e16, else d.ddde+XX. */
static enum err py_float(double x, struct buf *out)
{
	char tmp[40], digits[24];
	int prec, exp10, nd = 0, i;
	const char *p;

	if (isnan(x))
		return buf_puts(out, "NaN");
	if (isinf(x))
		return buf_puts(out, x < 0 ? "-Infinity" : "Infinity");
	for (prec = 0; prec < 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	p = tmp;
	if (*p == '-')
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	exp10 = (int)strtol(p + 1, NULL, 10);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (x < 0 && buf_putc(out, '-'))
		return ERR_NOMEM;
	if (exp10 >= -4 && exp10 < 16) {
		struct buf *b = out;
		enum err e = ERR_OK;

		if (exp10 < 0) {
			e = buf_puts(b, "0.");
			for (i = -1; !e && i > exp10; i--)
				e = buf_putc(b, '0');
			return e ? e : buf_append(b, digits, (size_t)nd);
		}
		for (i = 0; !e && i <= exp10; i++)
			e = buf_putc(b, i < nd ? digits[i] : '0');
		if (!e)
			e = buf_putc(b, '.');
		if (!e && nd > exp10 + 1)
			return buf_append(b, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
		return e ? e : buf_putc(b, '0');
	}
	if (buf_putc(out, digits[0]) || (nd > 1 && (buf_putc(out, '.') ||
						   buf_append(out, digits + 1, (size_t)(nd - 1)))))
		return ERR_NOMEM;
	return buf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
}

enum err tpl_pyjson(const cJSON *v, struct buf *out)
{
	const cJSON *c;
	enum err e = ERR_OK;

	if (cJSON_IsNull(v))
		return buf_puts(out, "null");
	if (cJSON_IsTrue(v))
		return buf_puts(out, "true");
	if (cJSON_IsFalse(v))
		return buf_puts(out, "false");
	if (cJSON_IsString(v))
		return py_string(v->valuestring, out);
	if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;

		if (x == floor(x) && fabs(x) < 9007199254740992.0)
			return buf_printf(out, "%lld", (long long)x);
		return py_float(x, out);
	}
	if (cJSON_IsArray(v)) {
		e = buf_putc(out, '[');
		cJSON_ArrayForEach(c, v) {
			if (!e && c != v->child)
				e = buf_puts(out, ", ");
			if (!e)
				e = tpl_pyjson(c, out);
		}
		return e ? e : buf_putc(out, ']');
	}
	e = buf_putc(out, '{');
	cJSON_ArrayForEach(c, v) {
		if (!e && c != v->child)
			e = buf_puts(out, ", ");
		if (!e)
			e = py_string(c->string, out);
		if (!e)
			e = buf_puts(out, ": ");
		if (!e)
			e = tpl_pyjson(c, out);
	}
	return e ? e : buf_putc(out, '}');
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

/* ---- message preparation (vLLM parse_chat_messages) --------------------- */

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

static enum err prepare_tool_calls(struct msg *m, const cJSON *calls, size_t mi,
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

static enum err prepare_msg(struct msg *m, const cJSON *j, size_t mi,
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

static void conv_release(struct conv *c)
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

static enum err conv_prepare(struct conv *c, const cJSON *messages,
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

/* ---- shared helpers ----------------------------------------------------- */

static const char *ds(const cJSON *o, const char *key)
{
	const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int db(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL);
}

static int role_is(const struct msg *m, const char *role)
{
	return !strcmp(m->role, role);
}

/* Resolves the thinking switch from kwargs per the descriptor's "thinking".
 * SGLang's V3.2 encoder path reads kwargs "thinking" only (PROTOCOL.md §7). */
static enum err thinking_mode(const struct tpl *t, const cJSON *kwargs,
			      enum tpl_server server, int *on, struct diag *d)
{
	const cJSON *th = cJSON_GetObjectItemCaseSensitive(t->root, "thinking");
	const cJSON *name;
	int any = 0, seen = 0;
	int only_thinking = server == TPL_SERVER_SGLANG && t->style == STYLE_DSV32;

	*on = 0;
	if (!th)
		return ERR_OK;
	any = !strcmp(ds(th, "combine"), "any");
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
		*on = db(th, "default");
	return ERR_OK;
}

/* Appends `s` with each "{{key}}" replaced by its value. */
static enum err put_sub(struct buf *out, const char *s, const char *const *kv, size_t nkv)
{
	while (*s) {
		const char *p = strstr(s, "{{");
		size_t i;

		if (!p)
			return buf_puts(out, s);
		if (buf_append(out, s, (size_t)(p - s)))
			return ERR_NOMEM;
		for (i = 0; i + 1 < nkv; i += 2) {
			size_t kl = strlen(kv[i]);

			if (!strncmp(p, kv[i], kl)) {
				if (buf_puts(out, kv[i + 1]))
					return ERR_NOMEM;
				s = p + kl;
				break;
			}
		}
		if (i + 1 >= nkv) { /* validated at load: cannot happen */
			if (buf_puts(out, "{{"))
				return ERR_NOMEM;
			s = p + 2;
		}
	}
	return ERR_OK;
}

static int is_py_space(unsigned cp)
{
	return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
	       cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Decodes the code point at s (valid UTF-8 assumed; bad bytes count as one). */
static unsigned utf8_at(const unsigned char *s, size_t len, size_t *n)
{
	if (s[0] < 0x80 || len < 2) {
		*n = 1;
		return s[0];
	}
	if ((s[0] & 0xe0) == 0xc0) {
		*n = 2;
		return ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
	}
	if ((s[0] & 0xf0) == 0xe0 && len >= 3) {
		*n = 3;
		return ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
	}
	*n = len >= 4 ? 4 : 1;
	return 0x10000; /* no 4-byte code point is whitespace */
}

/* Python str.strip(): the whitespace set of str.isspace(). */
static enum err put_py_strip(struct buf *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), a = 0, b, n, i, last_end = 0;

	while (a < len && is_py_space(utf8_at(u + a, len - a, &n)))
		a += n;
	for (i = a; i < len; i += n)
		if (!is_py_space(utf8_at(u + i, len - i, &n)))
			last_end = i + n;
	b = last_end > a ? last_end : a;
	return buf_append(out, s + a, b - a);
}

/* Length of `s` without trailing/leading '\n' (Python rstrip/lstrip('\n')). */
static const char *lstrip_nl(const char *s)
{
	while (*s == '\n')
		s++;
	return s;
}

static size_t rstrip_nl_len(const char *s, size_t len)
{
	while (len && s[len - 1] == '\n')
		len--;
	return len;
}

static const char *find_last(const char *hay, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	const char *last = NULL, *p = hay;

	while (nl && (size_t)(p - hay) + nl <= len && (p = strstr(p, needle)) &&
	       (size_t)(p - hay) + nl <= len) {
		last = p;
		p++;
	}
	return last;
}

static int starts_with(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int ends_with(const char *s, const char *p)
{
	size_t ls = strlen(s), lp = strlen(p);

	return ls >= lp && !memcmp(s + ls - lp, p, lp);
}

/* ---- style "turns" ------------------------------------------------------ */

static int role_rendered(const struct tpl *t, const char *role)
{
	const cJSON *roles = cJSON_GetObjectItemCaseSensitive(t->root, "roles");
	const cJSON *r;

	if (!roles)
		return 1;
	cJSON_ArrayForEach(r, roles)
		if (!strcmp(r->valuestring, role))
			return 1;
	return 0;
}

static enum err put_turn_edge(const struct tpl *t, const char *key, const char *role,
			      struct buf *out)
{
	const char *kv[] = {"{{role}}", role};

	return put_sub(out, ds(t->root, key), kv, 2);
}

/* vLLM's model_dump of a ChatCompletionToolsParam (see tpl.h). */
static enum err dump_tool(const cJSON *tool, size_t i, struct buf *out, struct diag *d)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(tool, "type");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(tool, "function");
	const cJSON *c;
	cJSON *o = cJSON_CreateObject(), *fo = cJSON_CreateObject();
	static const char *const declared[] = {"name", "description", "parameters"};
	size_t k;
	enum err e = ERR_OK;

	if (!o || !fo) {
		e = diag_fail(d, ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((type && !(cJSON_IsString(type) && !strcmp(type->valuestring, "function"))) ||
	    !cJSON_IsObject(f) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "name"))) {
		e = diag_fail(d, ERR_INPUT, "tools[%zu]: expected {\"type\": \"function\", \"function\": {\"name\": ...}}", i);
		goto out;
	}
	cJSON_AddStringToObject(o, "type", "function");
	for (k = 0; k < 3; k++) {
		c = cJSON_GetObjectItemCaseSensitive(f, declared[k]);
		cJSON_AddItemToObject(fo, declared[k], c ? cJSON_Duplicate(c, 1) : cJSON_CreateNull());
	}
	cJSON_ArrayForEach(c, f)
		if (strcmp(c->string, "name") && strcmp(c->string, "description") &&
		    strcmp(c->string, "parameters"))
			cJSON_AddItemToObject(fo, c->string, cJSON_Duplicate(c, 1));
	cJSON_AddItemToObject(o, "function", fo);
	fo = NULL;
	cJSON_ArrayForEach(c, tool)
		if (strcmp(c->string, "type") && strcmp(c->string, "function"))
			cJSON_AddItemToObject(o, c->string, cJSON_Duplicate(c, 1));
	e = tpl_pyjson(o, out);
out:
	cJSON_Delete(o);
	cJSON_Delete(fo);
	return e;
}

/* The tools block; sets *skip_first when it consumed a leading system turn. */
static enum err turns_tools(const struct tpl *t, const struct conv *c, const cJSON *tools,
			    int *skip_first, struct buf *out, struct diag *d)
{
	const cJSON *tb = cJSON_GetObjectItemCaseSensitive(t->root, "tools");
	const cJSON *tool;
	size_t i = 0;
	enum err e;

	*skip_first = 0;
	if (!tb || !cJSON_IsArray(tools) || !cJSON_GetArraySize(tools))
		return ERR_OK;
	e = buf_puts(out, ds(tb, "prefix"));
	if (!e && role_is(&c->m[0], "system")) {
		*skip_first = 1;
		e = buf_puts(out, c->m[0].content);
		if (!e)
			e = buf_puts(out, ds(tb, "system_separator"));
	}
	if (!e)
		e = buf_puts(out, ds(tb, "header"));
	cJSON_ArrayForEach(tool, tools) {
		if (!e)
			e = buf_puts(out, ds(tb, "item_prefix"));
		if (!e)
			e = dump_tool(tool, i++, out, d);
	}
	return e ? e : buf_puts(out, ds(tb, "footer"));
}

/* Qwen3's last_query_index: the last user message that is not a wrapped
 * tool response; the last index when there is none. */
static size_t last_query(const struct tpl *t, const struct conv *c)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(t->root, "reasoning");
	size_t i = c->n;

	while (i-- > 0)
		if (role_is(&c->m[i], "user") &&
		    !(starts_with(c->m[i].content, ds(r, "query_skip_open")) &&
		      ends_with(c->m[i].content, ds(r, "query_skip_close"))))
			return i;
	return c->n - 1;
}

static enum err turns_tool_calls(const struct tpl *t, const struct msg *m,
				 const char *content, struct buf *out, struct diag *d)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(t->root, "tool_calls");
	const cJSON *call, *args = m->args ? m->args->child : NULL;
	struct buf a;
	size_t i = 0;
	enum err e = ERR_OK;

	if (!tc || !m->tool_calls)
		return ERR_OK;
	buf_init(&a, BUF_MAX_DEFAULT);
	cJSON_ArrayForEach(call, m->tool_calls) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(call, "function");
		const char *kv[4];

		buf_reset(&a);
		if (i == 0 && *content)
			e = buf_puts(out, ds(tc, "lead"));
		else if (i > 0)
			e = buf_puts(out, ds(tc, "separator"));
		if (!e)
			e = tpl_pyjson(args, &a);
		kv[0] = "{{name}}";
		kv[1] = cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring;
		kv[2] = "{{arguments}}";
		kv[3] = a.data;
		if (!e)
			e = put_sub(out, ds(tc, "call"), kv, 4);
		args = args ? args->next : NULL;
		i++;
		if (e)
			break;
	}
	buf_release(&a);
	return e ? diag_fail(d, e, "out of memory") : ERR_OK;
}

/* An assistant turn under the "reasoning" rule (Qwen3 Jinja, verbatim logic). */
static enum err turns_assistant(const struct tpl *t, const struct conv *c, size_t i,
				size_t lq, struct buf *out, struct diag *d)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(t->root, "reasoning");
	const struct msg *m = &c->m[i];
	const char *content = m->content, *rc = "", *endt = ds(r, "end_tag");
	size_t rclen = 0;
	enum err e;

	if (r && m->reasoning) {
		rc = m->reasoning;
		rclen = strlen(rc);
	} else if (r && *endt && strstr(m->content, endt)) {
		const char *first = strstr(m->content, endt);
		size_t head = rstrip_nl_len(m->content, (size_t)(first - m->content));
		const char *st = find_last(m->content, head, ds(r, "start_tag"));

		content = lstrip_nl(find_last(m->content, strlen(m->content), endt) + strlen(endt));
		rc = st ? st + strlen(ds(r, "start_tag")) : m->content;
		rclen = head - (size_t)(rc - m->content);
		while (rclen && *rc == '\n')
			rc++, rclen--;
	}
	e = put_turn_edge(t, "turn_prefix", m->role, out);
	if (!e && r && i > lq && (i + 1 == c->n || rclen)) {
		const char *a = rc;
		size_t n = rclen;

		while (n && *a == '\n')
			a++, n--;
		n = rstrip_nl_len(a, n);
		e = buf_puts(out, ds(r, "open"));
		if (!e)
			e = buf_append(out, a, n);
		if (!e)
			e = buf_puts(out, ds(r, "close"));
		if (!e)
			e = buf_puts(out, lstrip_nl(content));
	} else if (!e) {
		e = buf_puts(out, content);
	}
	if (!e)
		e = turns_tool_calls(t, m, content, out, d);
	if (!e)
		e = put_turn_edge(t, "turn_suffix", m->role, out);
	return e;
}

static enum err turns_tool_result(const struct tpl *t, const struct conv *c, size_t i,
				  struct buf *out)
{
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(t->root, "tool_results");
	enum err e = ERR_OK;

	if (i == 0 || !role_is(&c->m[i - 1], "tool"))
		e = buf_puts(out, ds(tr, "open"));
	if (!e)
		e = buf_puts(out, ds(tr, "item_prefix"));
	if (!e)
		e = buf_puts(out, c->m[i].content);
	if (!e)
		e = buf_puts(out, ds(tr, "item_suffix"));
	if (!e && (i + 1 == c->n || !role_is(&c->m[i + 1], "tool")))
		e = buf_puts(out, ds(tr, "close"));
	return e;
}

static enum err render_turns(const struct tpl *t, const struct conv *c,
			     const cJSON *tools, int gen, int thinking,
			     struct buf *out, struct diag *d)
{
	const cJSON *root = t->root;
	int skip_first = 0;
	size_t i, lq = last_query(t, c);
	enum err e = buf_puts(out, ds(root, "bos"));

	if (!e)
		e = turns_tools(t, c, tools, &skip_first, out, d);
	for (i = skip_first ? 1 : 0; !e && i < c->n; i++) {
		const struct msg *m = &c->m[i];

		if (!role_rendered(t, m->role))
			continue;
		if (role_is(m, "tool") && cJSON_GetObjectItemCaseSensitive(root, "tool_results")) {
			e = turns_tool_result(t, c, i, out);
		} else if (role_is(m, "assistant") &&
			   (cJSON_GetObjectItemCaseSensitive(root, "reasoning") ||
			    cJSON_GetObjectItemCaseSensitive(root, "tool_calls"))) {
			e = turns_assistant(t, c, i, lq, out, d);
		} else {
			e = put_turn_edge(t, "turn_prefix", m->role, out);
			if (!e)
				e = db(root, "trim_content") ? put_py_strip(out, m->content)
							     : buf_puts(out, m->content);
			if (!e)
				e = put_turn_edge(t, "turn_suffix", m->role, out);
		}
	}
	if (!e && (gen || db(root, "generation_prompt_always"))) {
		const cJSON *th = cJSON_GetObjectItemCaseSensitive(root, "thinking");

		e = buf_puts(out, ds(root, "generation_prompt"));
		if (!e && th)
			e = buf_puts(out, ds(th, thinking ? "on" : "off"));
	}
	return e;
}

/* ---- style "deepseek-v3" (HF tokenizer_config.json chat_template) -------- */

/* All system messages, wherever they are, joined by the separator. */
static enum err ds_system(const struct tpl *t, const struct conv *c, struct buf *out)
{
	size_t i;
	int first = 1;
	enum err e = ERR_OK;

	for (i = 0; !e && i < c->n; i++) {
		if (!role_is(&c->m[i], "system"))
			continue;
		if (!first)
			e = buf_puts(out, ds(t->root, "system_separator"));
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
static enum err render_dsv3(const struct tpl *t, const struct conv *c, int gen,
			    struct buf *out)
{
	const cJSON *r = t->root;
	int is_tool = 0, output_first = 1;
	size_t i;
	enum err e = buf_puts(out, ds(r, "bos"));

	if (!e)
		e = ds_system(t, c, out);
	for (i = 0; !e && i < c->n; i++) {
		const struct msg *m = &c->m[i];

		if (role_is(m, "user")) {
			is_tool = 0;
			e = buf_puts(out, ds(r, "user"));
			if (!e)
				e = buf_puts(out, m->content);
		} else if (role_is(m, "assistant")) {
			e = buf_puts(out, ds(r, is_tool ? "tool_outputs_end" : "assistant"));
			is_tool = 0;
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, ds(r, "eos"));
		} else if (role_is(m, "tool")) {
			is_tool = 1;
			e = buf_puts(out, ds(r, output_first ? "tool_outputs_begin" : "tool_output_separator"));
			output_first = 0;
			if (!e)
				e = buf_puts(out, ds(r, "tool_output_begin"));
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, ds(r, "tool_output_end"));
		}
	}
	if (!e && is_tool)
		e = buf_puts(out, ds(r, "tool_outputs_end"));
	if (!e && gen && !is_tool)
		e = buf_puts(out, ds(r, "generation_prompt"));
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

static enum err dsv31_tool_calls(const struct tpl *t, const struct msg *m, int last_user,
				 struct buf *out)
{
	const cJSON *r = t->root, *call;
	int first = 1;
	enum err e = ERR_OK;

	if (last_user) {
		e = buf_puts(out, ds(r, "assistant"));
		if (!e)
			e = buf_puts(out, ds(r, "think_close"));
	}
	cJSON_ArrayForEach(call, m->tool_calls) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(call, "function");

		if (!e && first)
			e = buf_puts(out, m->content);
		if (!e && first)
			e = buf_puts(out, ds(r, "tool_calls_begin"));
		first = 0;
		if (!e)
			e = buf_puts(out, ds(r, "tool_call_begin"));
		if (!e)
			e = buf_puts(out, cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring);
		if (!e)
			e = buf_puts(out, ds(r, "tool_sep"));
		if (!e)
			e = dsv31_args(call, out);
		if (!e)
			e = buf_puts(out, ds(r, "tool_call_end"));
	}
	if (!e)
		e = buf_puts(out, ds(r, "tool_calls_end"));
	return e ? e : buf_puts(out, ds(r, "eos"));
}

static enum err dsv31_assistant(const struct tpl *t, const struct msg *m, int last_user,
				int is_tool, struct buf *out)
{
	const cJSON *r = t->root;
	const char *content = m->content, *cut;
	enum err e = ERR_OK;

	if (last_user) {
		/* The Jinja writes think_open only for a "prefix" message while
		 * thinking; vLLM does not pass "prefix" through. */
		e = buf_puts(out, ds(r, "assistant"));
		if (!e)
			e = buf_puts(out, ds(r, "think_close"));
	}
	if (!is_tool && (cut = strstr(content, ds(r, "think_close"))) && *ds(r, "think_close"))
		content = cut + strlen(ds(r, "think_close"));
	if (!e)
		e = buf_puts(out, content);
	return e ? e : buf_puts(out, ds(r, "eos"));
}

static enum err render_dsv31(const struct tpl *t, const struct conv *c, int gen,
			     int thinking, struct buf *out)
{
	const cJSON *r = t->root;
	int is_tool = 0, last_user = 0;
	size_t i;
	enum err e = buf_puts(out, ds(r, "bos"));

	if (!e)
		e = ds_system(t, c, out);
	for (i = 0; !e && i < c->n; i++) {
		const struct msg *m = &c->m[i];

		if (role_is(m, "user")) {
			is_tool = 0;
			last_user = 1;
			e = buf_puts(out, ds(r, "user"));
			if (!e)
				e = buf_puts(out, m->content);
		} else if (role_is(m, "assistant") && m->tool_calls) {
			e = dsv31_tool_calls(t, m, last_user, out);
			last_user = 0;
			is_tool = 0;
		} else if (role_is(m, "assistant")) {
			e = dsv31_assistant(t, m, last_user, is_tool, out);
			last_user = 0;
			is_tool = 0;
		} else if (role_is(m, "tool")) {
			last_user = 0;
			is_tool = 1;
			e = buf_puts(out, ds(r, "tool_output_begin"));
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, ds(r, "tool_output_end"));
		}
	}
	if (!e && gen && last_user && !is_tool) {
		e = buf_puts(out, ds(r, "generation_prompt"));
		if (!e)
			e = buf_puts(out, ds(cJSON_GetObjectItemCaseSensitive(r, "thinking"),
					     thinking ? "on" : "off"));
	}
	return e;
}

/* ---- style "deepseek-v3.2" (encoding_dsv32.py as vLLM runs it) ---------- */

static enum err dsv32_params(const struct tpl *t, const cJSON *args, size_t mi,
			     struct buf *out, struct diag *d)
{
	const char *dsml = ds(t->root, "dsml");
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

static enum err dsv32_tool_calls(const struct tpl *t, const struct msg *m, size_t mi,
				 struct buf *out, struct diag *d)
{
	const char *dsml = ds(t->root, "dsml");
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

static enum err dsv32_tool(const struct tpl *t, const struct conv *c, size_t i,
			   long last_user, int thinking, struct buf *out, struct diag *d)
{
	const cJSON *r = t->root;
	size_t prev = i, order, ncalls;
	enum err e = ERR_OK;

	while (prev > 0 && role_is(&c->m[prev - 1], "tool"))
		prev--;
	if (prev == 0 || !role_is(&c->m[prev - 1], "assistant"))
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
			e = buf_puts(out, ds(r, thinking && (long)i >= last_user ? "think_open" : "think_close"));
	}
	return e;
}

static enum err dsv32_assistant(const struct tpl *t, const struct msg *m, size_t i,
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
			e = buf_puts(out, ds(r, "think_close"));
	}
	if (!e)
		e = buf_puts(out, m->content);
	if (!e && m->tool_calls)
		e = dsv32_tool_calls(t, m, i, out, d);
	return e ? e : buf_puts(out, ds(r, "eos"));
}

/* drop_thinking (vLLM: the last message is a user turn; SGLang: always) in
 * thinking mode drops reasoning before the last user turn and, as
 * drop_thinking_messages does, every message there whose role is not user,
 * system, tool or assistant. */
static enum err render_dsv32(const struct tpl *t, const struct conv *c, const cJSON *tools,
			     int thinking, enum tpl_server server, struct buf *out,
			     struct diag *d)
{
	const cJSON *r = t->root;
	long last_user = -1;
	int drop = thinking && (server == TPL_SERVER_SGLANG || role_is(&c->m[c->n - 1], "user"));
	size_t i;
	enum err e;

	if (cJSON_IsArray(tools) && cJSON_GetArraySize(tools))
		return diag_fail(d, ERR_UNSUPPORTED,
				 "template '%s' cannot render tools: the V3.2 tools system text is not "
				 "pinned down, and a guessed one would give a wrong count", t->name);
	for (i = 0; i < c->n; i++)
		if (role_is(&c->m[i], "user") || role_is(&c->m[i], "developer"))
			last_user = (long)i;
	e = buf_puts(out, ds(r, "bos"));
	for (i = 0; !e && i < c->n; i++) {
		const struct msg *m = &c->m[i];
		int before = drop && (long)i < last_user;

		if (role_is(m, "system")) {
			e = buf_puts(out, m->content);
		} else if (role_is(m, "user") || (role_is(m, "developer") && !before)) {
			if (role_is(m, "developer") && !*m->content)
				return diag_fail(d, ERR_INPUT, "message %zu: a developer message needs content", i);
			e = buf_puts(out, ds(r, "user"));
			if (!e && role_is(m, "developer"))
				e = buf_puts(out, ds(r, "developer_prefix"));
			if (!e)
				e = buf_puts(out, m->content);
			if (!e)
				e = buf_puts(out, ds(r, "assistant"));
			if (!e)
				e = buf_puts(out, ds(r, thinking && (long)i == last_user ? "think_open" : "think_close"));
		} else if (role_is(m, "tool")) {
			e = dsv32_tool(t, c, i, last_user, thinking, out, d);
		} else if (role_is(m, "assistant")) {
			e = dsv32_assistant(t, m, i, last_user, thinking, before, out, d);
		} else if (!before) {
			return diag_fail(d, ERR_INPUT, "message %zu: role '%s' is not known to template '%s'",
					 i, m->role, t->name);
		}
	}
	return e;
}

/* ---- entry point -------------------------------------------------------- */

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

static enum err set_default(cJSON *kw, const char *key, int on)
{
	if (cJSON_GetObjectItemCaseSensitive(kw, key))
		return ERR_OK; /* explicit kwargs win */
	return cJSON_AddBoolToObject(kw, key, on) ? ERR_OK : ERR_NOMEM;
}

/* The kwargs the template sees once the server has applied reasoning_effort
 * (tpl.h, struct tpl_render_opts). *owned is NULL when `kwargs` is used as is. */
static enum err effort_kwargs(const cJSON *kwargs, const struct tpl_render_opts *o,
			      cJSON **owned, struct diag *d)
{
	const cJSON *eff = o ? o->reasoning_effort : NULL;
	int on;
	enum err e;

	*owned = NULL;
	if (!eff || cJSON_IsNull(eff))
		return ERR_OK;
	on = !(cJSON_IsString(eff) && !strcmp(eff->valuestring, "none"));
	*owned = kwargs ? cJSON_Duplicate(kwargs, 1) : cJSON_CreateObject();
	if (!*owned)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	/* SGLang normalize_reasoning_inputs sets both; vLLM main sets
	 * enable_thinking only (older vLLM neither: PROTOCOL.md §3, §8). */
	e = o->server == TPL_SERVER_SGLANG ? set_default(*owned, "thinking", on) : ERR_OK;
	if (!e)
		e = set_default(*owned, "enable_thinking", on);
	return e ? diag_fail(d, e, "out of memory") : ERR_OK;
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
	struct conv c = {NULL, 0};
	enum tpl_server server = o ? o->server : TPL_SERVER_VLLM;
	cJSON *owned = NULL;
	int thinking = 0;
	enum err e;

	if (kwargs && !cJSON_IsObject(kwargs))
		return diag_fail(d, ERR_INPUT, "chat_template_kwargs: expected an object");
	if (tools && !cJSON_IsArray(tools) && !cJSON_IsNull(tools))
		return diag_fail(d, ERR_INPUT, "tools: expected an array");
	e = effort_kwargs(kwargs, o, &owned, d);
	if (!e)
		e = thinking_mode(t, owned ? owned : kwargs, server, &thinking, d);
	if (!e)
		e = conv_prepare(&c, messages, server, d);
	if (!e) {
		switch (t->style) {
		case STYLE_TURNS:
			e = render_turns(t, &c, tools, add_generation_prompt, thinking, out, d);
			break;
		case STYLE_DSV3:
			e = render_dsv3(t, &c, add_generation_prompt, out);
			break;
		case STYLE_DSV31:
			e = render_dsv31(t, &c, add_generation_prompt, thinking, out);
			break;
		case STYLE_DSV32:
			e = render_dsv32(t, &c, tools, thinking, server, out, d);
			break;
		}
	}
	if (e == ERR_NOMEM && d && !d->code)
		diag_fail(d, e, "cannot render the prompt: out of memory");
	else if (e && d && !d->code)
		diag_fail(d, e, "cannot render the prompt: %s", err_name(e));
	cJSON_Delete(owned);
	conv_release(&c);
	return e;
}
