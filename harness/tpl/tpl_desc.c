/*
 * tpl_desc — descriptor schema and loading (see tpl_desc.h).
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <string.h>

#include "base/embed.h"
#include "base/json.h"
#include "base/buf.h"
#include "base/mem.h"
#include "tpl_desc.h"
#include "tpl_msg.h"

enum ktype { K_STR, K_BOOL, K_OBJ, K_STRARR };

struct key {
	const char *name;
	enum ktype type;
	unsigned styles;  /* bit per enum tpl_style */
	unsigned required;
};

#define S_ALL 0x3fu
#define S_T (1u << TPL_STYLE_TURNS)
#define S_3 (1u << TPL_STYLE_DSV3)
#define S_31 (1u << TPL_STYLE_DSV31)
#define S_32 (1u << TPL_STYLE_DSV32)
#define S_4 (1u << TPL_STYLE_DSV4)
#define S_41 (1u << TPL_STYLE_DSV41)
#define S_V4 (S_4 | S_41)

static const struct key top_keys[] = {
	{"name", K_STR, S_ALL, S_ALL},
	{"style", K_STR, S_ALL, S_ALL},
	{"description", K_STR, S_ALL, 0},
	{"bos", K_STR, S_ALL, 0},
	{"eos", K_STR, S_3 | S_31 | S_32 | S_V4, S_3 | S_31 | S_32 | S_V4},
	{"template_sha256", K_STRARR, S_ALL, 0},
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
	{"user", K_STR, S_3 | S_31 | S_32 | S_V4, S_3 | S_31 | S_32 | S_V4},
	{"assistant", K_STR, S_3 | S_31 | S_32 | S_V4, S_3 | S_31 | S_32 | S_V4},
	{"system_separator", K_STR, S_3 | S_31, S_3 | S_31},
	{"tool_outputs_begin", K_STR, S_3, S_3},
	{"tool_output_begin", K_STR, S_3 | S_31, S_3 | S_31},
	{"tool_output_end", K_STR, S_3 | S_31, S_3 | S_31},
	{"tool_outputs_end", K_STR, S_3, S_3},
	{"tool_output_separator", K_STR, S_3, S_3},
	{"think_open", K_STR, S_31 | S_32 | S_V4, S_31 | S_32 | S_V4},
	{"think_close", K_STR, S_31 | S_32 | S_V4, S_31 | S_32 | S_V4},
	{"tool_calls_begin", K_STR, S_31, S_31},
	{"tool_call_begin", K_STR, S_31, S_31},
	{"tool_sep", K_STR, S_31, S_31},
	{"tool_call_end", K_STR, S_31, S_31},
	{"tool_calls_end", K_STR, S_31, S_31},
	{"dsml", K_STR, S_32 | S_V4, S_32 | S_V4},
	{"developer_prefix", K_STR, S_32, S_32},
	{"tools_template", K_STR, S_32 | S_V4, S_32 | S_V4},
	{"system", K_STR, S_41, S_41},
	{"calls_tag", K_STR, S_V4, S_V4},
	{"invoke_tag", K_STR, S_V4, S_V4},
	{"parameter_tag", K_STR, S_V4, S_V4},
	{"tool_result_open", K_STR, S_V4, S_V4},
	{"tool_result_close", K_STR, S_V4, S_V4},
	{"image", K_STR, S_41, S_41},
	{"effort_template", K_STR, S_V4, S_V4},
	{"tasks", K_OBJ, S_V4, S_V4},
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
					  "deepseek-v3.2", "deepseek-v4", "deepseek-v4.1"};
#define N_STYLES (sizeof style_names / sizeof style_names[0])

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
static enum err check_keys(const struct tpl_desc *t, const cJSON *obj,
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
static enum err check_placeholders(const struct tpl_desc *t, const char *path,
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

static enum err check_all_placeholders(const struct tpl_desc *t, struct diag *d)
{
	size_t i;
	enum err e = ERR_OK;

	for (i = 0; !e && i < sizeof placeholder_rules / sizeof placeholder_rules[0]; i++) {
		const char *obj = placeholder_rules[i].obj;
		const cJSON *o = obj ? tpl_desc_obj(t->root, obj) : t->root;
		const cJSON *s = o ? cJSON_GetObjectItemCaseSensitive(o, placeholder_rules[i].key) : NULL;
		char path[64];

		snprintf(path, sizeof path, "$.%s%s%s", obj ? obj : "", obj ? "." : "",
			 placeholder_rules[i].key);
		if (cJSON_IsString(s))
			e = check_placeholders(t, path, s->valuestring, placeholder_rules[i].allowed, d);
	}
	return e;
}

static enum err check_descriptor(struct tpl_desc *t, struct diag *d)
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
	for (i = 0; i < N_STYLES && strcmp(style_names[i], style->valuestring); i++)
		;
	if (i == N_STYLES)
		return diag_fail(d, ERR_INPUT,
				 "cannot load template '%s': $.style: unknown style '%s' (turns, deepseek-v3, deepseek-v3.1, "
				 "deepseek-v3.2, deepseek-v4, deepseek-v4.1)",
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
	if (!e && t->style == TPL_STYLE_TURNS)
		e = check_all_placeholders(t, d);
	if (!e) {
		const char *name = tpl_desc_str(t->root, "name");

		t->name = mem_strndup(name, strlen(name));
		if (!t->name)
			e = diag_fail(d, ERR_NOMEM, "out of memory");
	}
	return e;
}

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

static enum err desc_parse(struct tpl_desc *t, const char *bytes, size_t len,
			   struct diag *d)
{
	struct diag scratch;
	enum err e;

	if ((e = io_sha256_hex(bytes, len, t->sha, d)))
		return e;
	if (tpl_check_nul(bytes, len, t->origin, d))
		return d ? d->code : ERR_UNSUPPORTED;
	diag_init(&scratch);
	e = json_parse(bytes, len, &t->root, "template", &scratch);
	if (e == ERR_NOMEM)
		return diag_fail(d, e, "cannot load template '%s': out of memory", t->origin);
	if (e) /* scratch: "cannot parse template: invalid JSON at byte N" */
		return diag_fail(d, e, "cannot load template '%s': %s", t->origin,
				 strstr(scratch.msg, "invalid JSON") ?
				 strstr(scratch.msg, "invalid JSON") : scratch.msg);
	return check_descriptor(t, d);
}

/* The embedded file of shipped descriptor `name`, or NULL. */
static const struct embed_file *shipped_file(const char *name, struct buf *key)
{
	buf_reset(key);
	if (strchr(name, '/') || buf_printf(key, "templates/%s.json", name))
		return NULL;
	return embed_find(key->data);
}

enum err tpl_desc_find_sha(struct tpl_desc *t, const char *sha, int *found, struct diag *d)
{
	size_t n, i, len;
	const struct embed_file *f = embed_all(&n);
	struct buf name;
	enum err e = ERR_OK;

	*found = 0;
	buf_init(&name, 4096);
	for (i = 0; !e && !*found && i < n; i++) {
		const cJSON *s, *shas;

		len = strlen(f[i].name);
		if (strncmp(f[i].name, "templates/", 10) || len < 15 || strcmp(f[i].name + len - 5, ".json"))
			continue;
		/* the shipped descriptors write their hashes plainly (test_tpl_desc):
		 * one without the 64 digits is not parsed */
		if (!memmem(f[i].data, f[i].len, sha, IO_SHA256_HEX - 1))
			continue;
		buf_reset(&name);
		e = buf_append(&name, f[i].name + 10, len - 15);
		if (!e)
			e = tpl_desc_load(t, name.data, d);
		shas = e ? NULL : cJSON_GetObjectItemCaseSensitive(t->root, "template_sha256");
		cJSON_ArrayForEach(s, shas)
			if (!strcmp(s->valuestring, sha))
				*found = 1;
		if (!e && !*found)
			tpl_desc_release(t);
	}
	buf_release(&name);
	return e;
}

int tpl_desc_shipped(const char *name)
{
	struct buf key;
	int found;

	buf_init(&key, 4096);
	found = shipped_file(name, &key) != NULL;
	buf_release(&key);
	return found;
}

enum err tpl_desc_load(struct tpl_desc *t, const char *name_or_path, struct diag *d)
{
	const struct embed_file *f;
	struct buf key, raw;
	enum err e = ERR_OK;

	memset(t, 0, sizeof *t);
	buf_init(&key, 4096);
	buf_init(&raw, (size_t)1 << 24);
	f = shipped_file(name_or_path, &key);
	if (f) {
		t->origin = mem_strndup(key.data, key.len);
		e = t->origin ? desc_parse(t, (const char *)f->data, f->len, d)
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
		e = desc_parse(t, raw.data, raw.len, d);
out:
	if (e)
		tpl_desc_release(t);
	buf_release(&key);
	buf_release(&raw);
	return e;
}

void tpl_desc_release(struct tpl_desc *t)
{
	cJSON_Delete(t->root);
	mem_free(t->name);
	mem_free(t->origin);
	memset(t, 0, sizeof *t);
}

const char *tpl_desc_str(const cJSON *o, const char *key)
{
	const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;

	return cJSON_IsString(v) ? v->valuestring : "";
}

int tpl_desc_true(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL);
}

const cJSON *tpl_desc_obj(const cJSON *o, const char *key)
{
	const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;

	return cJSON_IsObject(v) ? v : NULL;
}
