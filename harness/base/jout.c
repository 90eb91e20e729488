/*
 * jout — see jout.h.
 */
#include <errno.h>
#include <string.h>

#include "jout.h"

#define JOUT_CHUNK ((size_t)64 << 10)

struct jw {
	const struct jout_list *lists;
	size_t nlists;
	struct buf *b;
	FILE *f;
	enum err e;
};

static void flush(struct jw *w)
{
	if (w->e || !w->f || !w->b->len)
		return;
	if (fwrite(w->b->data, 1, w->b->len, w->f) != w->b->len)
		w->e = ERR_IO;
	buf_reset(w->b);
}

static void put(struct jw *w, const char *s, size_t n)
{
	if (!w->e)
		w->e = buf_append(w->b, s, n);
	if (w->f && w->b->len >= JOUT_CHUNK)
		flush(w);
}

static void tabs(struct jw *w, int depth)
{
	static const char t[] = "\t\t\t\t\t\t\t\t";

	for (; depth > 0; depth -= 8)
		put(w, t, depth < 8 ? (size_t)depth : 8);
}

/* cJSON's text `s` of a value at depth 0, indented to `depth`. */
static void put_indented(struct jw *w, const char *s, int depth)
{
	const char *nl;

	while ((nl = strchr(s, '\n'))) {
		put(w, s, (size_t)(nl - s) + 1);
		tabs(w, depth);
		s = nl + 1;
	}
	put(w, s, strlen(s));
}

/* cJSON's text of `v`, indented to `depth`. */
static void put_cjson(struct jw *w, const cJSON *v, int depth)
{
	char *txt;

	if (w->e)
		return;
	if (!(txt = cJSON_Print(v))) {
		w->e = ERR_NOMEM;
		return;
	}
	put_indented(w, txt, depth);
	cJSON_free(txt);
}

static const struct jout_list *list_of(const struct jw *w, const cJSON *v)
{
	size_t i;

	for (i = 0; i < w->nlists; i++)
		if (w->lists[i].at == v)
			return &w->lists[i];
	return NULL;
}

static void put_list(struct jw *w, const struct jout_list *l, int depth)
{
	size_t i;

	put(w, "[", 1);
	for (i = 0; !w->e && i < l->n; i++) {
		cJSON *it = l->item(l->ctx, i);
		if (!it) {
			w->e = ERR_NOMEM;
			break;
		}
		if (i)
			put(w, ", ", 2);
		put_cjson(w, it, depth + 1);
		cJSON_Delete(it);
	}
	put(w, "]", 1);
}

/* An object member's key, escaped as cJSON escapes a string. */
static void put_key(struct jw *w, const char *key)
{
	cJSON *s = cJSON_CreateString(key);
	char *txt = s ? cJSON_PrintUnformatted(s) : NULL;

	if (!txt && !w->e)
		w->e = ERR_NOMEM;
	if (txt)
		put(w, txt, strlen(txt));
	cJSON_free(txt);
	cJSON_Delete(s);
}

static void put_value(struct jw *w, const cJSON *v, int depth)
{
	const struct jout_list *l = list_of(w, v);
	const cJSON *c;

	if (l) {
		put_list(w, l, depth);
		return;
	}
	if (!cJSON_IsObject(v)) {
		put_cjson(w, v, depth);
		return;
	}
	put(w, "{\n", 2);
	for (c = v->child; c && !w->e; c = c->next) {
		tabs(w, depth + 1);
		put_key(w, c->string ? c->string : "");
		put(w, ":\t", 2);
		put_value(w, c, depth + 1);
		put(w, c->next ? ",\n" : "\n", c->next ? 2 : 1);
	}
	tabs(w, depth);
	put(w, "}", 1);
}

enum err jout_print(const cJSON *v, const struct jout_list *lists, size_t nlists,
		    int newline, struct buf *out, FILE *f, const char *what, struct diag *d)
{
	struct jw w = {lists, nlists, out, f, ERR_OK};

	put_value(&w, v, 0);
	if (newline)
		put(&w, "\n", 1);
	flush(&w);
	if (w.e == ERR_IO)
		return diag_fail(d, ERR_IO, "cannot write %s: %s", what, strerror(errno));
	if (w.e == ERR_LIMIT)
		return diag_fail(d, ERR_LIMIT, "%s is too large to print", what);
	if (w.e)
		return diag_fail(d, w.e, "out of memory printing %s", what);
	return ERR_OK;
}
