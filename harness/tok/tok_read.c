/* tok_read — what the readers of tokenizer.json's parts share (tok_int.h). */
#include "tok_int.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

enum err tok_read_unsupported(struct tok_load *l, const char *what, const char *name)
{
	return diag_fail(l->d, ERR_UNSUPPORTED,
			 "cannot load tokenizer '%s': unsupported %s '%s'", l->path, what, name);
}

enum err tok_read_bad(struct tok_load *l, const char *what)
{
	return diag_fail(l->d, ERR_INPUT, "cannot load tokenizer '%s': %s", l->path, what);
}

enum err tok_read_keys(struct tok_load *l, const cJSON *o, const char *known,
		       const char *what)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, o) {
		const char *k = strstr(known, c->string);
		size_t n = strlen(c->string);

		while (k && !((k == known || k[-1] == ' ') && (k[n] == ' ' || !k[n])))
			k = strstr(k + 1, c->string);
		if (!k) {
			char name[300];

			snprintf(name, sizeof(name), "%s' option '%s", what, c->string);
			return tok_read_unsupported(l, "component", name);
		}
	}
	return ERR_OK;
}

int tok_read_bool(const cJSON *o, const char *key, int dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

const char *tok_read_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *tok_read_type(const cJSON *o)
{
	const char *t = tok_read_str(o, "type");

	return t ? t : "";
}

enum err tok_read_compile(struct tok_load *l, const char *pat, size_t n, int literal,
			  struct tok_pat *out)
{
	enum err e = tok_pat_compile(out, pat, n, literal, &l->h->tab, l->d);

	if (e && e != ERR_NOMEM)
		diag_prefix(l->d, "cannot load tokenizer '%s'", l->path);
	return e;
}

enum err tok_read_pattern(struct tok_load *l, const cJSON *p, struct tok_pat *out)
{
	const char *s = tok_read_str(p, "String"), *re = tok_read_str(p, "Regex");

	if (s)
		return tok_read_compile(l, s, strlen(s), 1, out);
	if (re)
		return tok_read_compile(l, re, strlen(re), 0, out);
	return tok_read_bad(l, "pattern must be {\"String\": ...} or {\"Regex\": ...}");
}
