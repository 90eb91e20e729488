/* tpl_model — model folders and template files (see tpl_model.h). */
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "base/mem.h"
#include "tpl_model.h"

int tpl_model_is_dir(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Whether the folder has something under `path`: it is then read, and a
 * FIFO, device or folder there is refused with a message (io_open_regular),
 * not skipped as if absent nor waited on. */
static int present(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static char *join(const char *dir, const char *name)
{
	struct buf b;

	buf_init(&b, 1 << 16);
	if (buf_printf(&b, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name)) {
		buf_release(&b);
		return NULL;
	}
	return buf_take(&b, NULL);
}

void tpl_text_release(struct tpl_text *t)
{
	mem_free(t->path);
	mem_free(t->text);
	mem_free(t->why);
	memset(t, 0, sizeof *t);
}

static enum err set_text(struct tpl_text *t, const char *path, const char *text,
			 const char *why, struct diag *d)
{
	tpl_text_release(t);
	t->len = strlen(text);
	t->path = mem_strndup(path, strlen(path));
	t->text = mem_strndup(text, t->len);
	t->why = mem_strndup(why, strlen(why));
	if (!t->path || !t->text || !t->why) {
		tpl_text_release(t);
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	return io_sha256_hex(t->text, t->len, t->sha, d);
}

/* Parses the JSON object in file `path` into *root. */
static enum err read_object(const char *path, cJSON **root, struct diag *d)
{
	struct buf raw;
	enum err e;

	*root = NULL;
	buf_init(&raw, (size_t)1 << 28);
	e = io_read_file(path, &raw, d);
	if (!e)
		e = json_parse(raw.data, raw.len, root, path, d);
	if (!e && !cJSON_IsObject(*root))
		e = diag_fail(d, ERR_INPUT, "cannot read '%s': $: expected an object", path);
	if (e) {
		cJSON_Delete(*root);
		*root = NULL;
	}
	buf_release(&raw);
	return e;
}

/* tokenizer_config.json's chat_template for `tools` (tpl_model.h). */
static enum err config_template(const cJSON *cfg, const char *path, int tools,
				struct tpl_text *t, struct diag *d)
{
	const cJSON *ct = cJSON_GetObjectItemCaseSensitive(cfg, "chat_template"), *e;
	const char *want = tools ? "tool_use" : "default";
	const cJSON *pick = NULL, *dflt = NULL;

	if (!ct || cJSON_IsNull(ct))
		return ERR_OK;
	if (cJSON_IsString(ct))
		return set_text(t, path, ct->valuestring, "its chat_template string", d);
	if (!cJSON_IsArray(ct))
		return diag_fail(d, ERR_INPUT, "cannot read '%s': $.chat_template: expected a string or a list", path);
	cJSON_ArrayForEach(e, ct) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(e, "template");

		if (!cJSON_IsString(name) || !cJSON_IsString(text))
			return diag_fail(d, ERR_INPUT, "cannot read '%s': $.chat_template: each entry needs string "
					 "'name' and 'template'", path);
		if (!strcmp(name->valuestring, want))
			pick = text;
		if (!strcmp(name->valuestring, "default"))
			dflt = text;
	}
	if (!pick && !dflt)
		return diag_fail(d, ERR_INPUT, "cannot read '%s': $.chat_template: no template named 'default'%s",
				 path, tools ? " or 'tool_use'" : "");
	return set_text(t, path, (pick ? pick : dflt)->valuestring,
			pick && tools ? "its chat_template named 'tool_use' (the request has tools)"
				      : "its chat_template named 'default'", d);
}

static enum err file_text(const char *path, struct tpl_text *t, const char *why, struct diag *d)
{
	struct buf raw;
	enum err e;

	buf_init(&raw, (size_t)1 << 26);
	e = io_read_file(path, &raw, d);
	if (!e && memchr(raw.data, 0, raw.len))
		e = diag_fail(d, ERR_INPUT, "cannot read template '%s': it holds a NUL byte", path);
	if (!e)
		e = set_text(t, path, raw.len ? raw.data : "", why, d);
	buf_release(&raw);
	return e;
}

/* A processor's chat_template.json: {"chat_template": "..."}. */
static enum err processor_template(const char *path, struct tpl_text *t, struct diag *d)
{
	cJSON *root;
	const cJSON *ct;
	enum err e = read_object(path, &root, d);

	ct = e ? NULL : cJSON_GetObjectItemCaseSensitive(root, "chat_template");
	if (!e && !cJSON_IsString(ct))
		e = diag_fail(d, ERR_INPUT, "cannot read '%s': $.chat_template: expected a string", path);
	if (!e)
		e = set_text(t, path, ct->valuestring,
			     "the processor's template, which vLLM prefers for requests without tools", d);
	cJSON_Delete(root);
	return e;
}

static char *token_of(const cJSON *cfg, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);

	if (cJSON_IsObject(v))
		v = cJSON_GetObjectItemCaseSensitive(v, "content");
	return cJSON_IsString(v) ? mem_strndup(v->valuestring, strlen(v->valuestring)) : NULL;
}

/* The special tokens transformers puts in a template's context. */
static enum err read_specials(struct tpl_model *m, const cJSON *cfg, struct diag *d)
{
	struct json_build jb;
	const cJSON *v, *x;

	json_build_init(&jb);
	m->specials = json_new_obj(&jb);
	cJSON_ArrayForEach(v, cfg) {
		size_t n = strlen(v->string);

		x = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "content") : v;
		if (n > 6 && !strcmp(v->string + n - 6, "_token") && cJSON_IsString(x))
			json_add_str(&jb, m->specials, v->string, x->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(cfg, "additional_special_tokens");
	if (cJSON_IsArray(v)) {
		cJSON *a = json_add_arr(&jb, m->specials, "additional_special_tokens");

		cJSON_ArrayForEach(x, v) {
			const cJSON *c = cJSON_IsObject(x) ? cJSON_GetObjectItemCaseSensitive(x, "content") : x;

			if (cJSON_IsString(c))
				json_add_str(&jb, a, NULL, c->valuestring);
		}
	}
	return json_build_end(&jb, &m->specials, "the special tokens", d);
}

static enum err read_config(struct tpl_model *m, const char *path, struct diag *d)
{
	cJSON *cfg;
	const cJSON *ab;
	enum err e = read_object(path, &cfg, d);

	if (!e)
		e = read_specials(m, cfg, d);
	if (e) {
		cJSON_Delete(cfg);
		return e;
	}
	m->bos = token_of(cfg, "bos_token");
	m->eos = token_of(cfg, "eos_token");
	ab = cJSON_GetObjectItemCaseSensitive(cfg, "add_bos_token");
	m->add_bos = cJSON_IsBool(ab) ? cJSON_IsTrue(ab) : -1;
	if (!m->plain.text)
		e = config_template(cfg, path, 0, &m->plain, d);
	if (!e && !m->tools.text)
		e = config_template(cfg, path, 1, &m->tools, d);
	cJSON_Delete(cfg);
	return e;
}

static enum err find_tokenizer(struct tpl_model *m, struct diag *d)
{
	static const char *const names[] = {"tokenizer.json", "tokenizer.model"};
	size_t i;

	for (i = 0; i < 2; i++) {
		char *p = join(m->dir, names[i]);

		if (!p)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		if (present(p)) {
			m->tokenizer = p;
			return ERR_OK;
		}
		mem_free(p);
	}
	return diag_fail(d, ERR_INPUT, "model folder '%s' has neither tokenizer.json nor tokenizer.model",
			 m->dir);
}

/* The tokenizer's own template file, chat_template.jinja, for both kinds of
 * request; the processor's only for requests without tools. */
static enum err folder_templates(struct tpl_model *m, struct diag *d)
{
	char *jinja = join(m->dir, "chat_template.jinja"), *proc = join(m->dir, "chat_template.json");
	char *cfg = join(m->dir, "tokenizer_config.json");
	enum err e = jinja && proc && cfg ? ERR_OK : diag_fail(d, ERR_NOMEM, "out of memory");

	if (!e && present(jinja))
		e = file_text(jinja, &m->tools, "the tokenizer's template file (transformers prefers it to "
			      "tokenizer_config.json's chat_template)", d);
	if (!e && present(proc))
		e = processor_template(proc, &m->plain, d);
	if (!e && !m->plain.text && m->tools.text)
		e = set_text(&m->plain, m->tools.path, m->tools.text, m->tools.why, d);
	if (!e && present(cfg))
		e = read_config(m, cfg, d);
	mem_free(jinja);
	mem_free(proc);
	mem_free(cfg);
	return e;
}

enum err tpl_model_open(struct tpl_model *m, const char *dir, struct diag *d)
{
	enum err e;

	memset(m, 0, sizeof *m);
	m->add_bos = -1;
	m->dir = mem_strndup(dir, strlen(dir));
	if (!m->dir)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = find_tokenizer(m, d);
	return e ? e : folder_templates(m, d);
}

void tpl_model_release(struct tpl_model *m)
{
	mem_free(m->dir);
	mem_free(m->tokenizer);
	tpl_text_release(&m->plain);
	tpl_text_release(&m->tools);
	mem_free(m->bos);
	mem_free(m->eos);
	cJSON_Delete(m->specials);
	memset(m, 0, sizeof *m);
	m->add_bos = -1;
}

static int ends_with(const char *s, const char *tail)
{
	size_t ls = strlen(s), lt = strlen(tail);

	return ls >= lt && !strcmp(s + ls - lt, tail);
}

enum err tpl_model_template_file(struct tpl_text *t, const char *path, int tools,
				 struct diag *d)
{
	cJSON *cfg;
	enum err e;

	memset(t, 0, sizeof *t);
	if (!ends_with(path, "tokenizer_config.json"))
		return file_text(path, t, "the template file named by --template", d);
	e = read_object(path, &cfg, d);
	if (!e)
		e = config_template(cfg, path, tools, t, d);
	if (!e && !t->text)
		e = diag_fail(d, ERR_INPUT, "'%s' has no chat_template", path);
	cJSON_Delete(cfg);
	return e;
}
