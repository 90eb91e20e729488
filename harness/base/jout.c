/*
 * jout — see json.h, the printer in pieces.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json.h"

/* The text is cJSON 1.7.15's cJSON_Print, byte for byte (unit/test_jout
 * compares them): against another cJSON, compare again before changing
 * this check. */
#if CJSON_VERSION_MAJOR != 1 || CJSON_VERSION_MINOR != 7 || CJSON_VERSION_PATCH != 15
#error "jout reproduces cJSON 1.7.15's cJSON_Print; run unit/test_jout against this cJSON, then update the check"
#endif

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

/* cJSON's text of a string (print_string_ptr): quote, backslash and the
 * control bytes escaped (\b \f \n \r \t by name, others as \u00xx), every
 * other byte as it is; NULL as "". Plain runs are put whole. */
static void put_string(struct jw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run;
	char esc[6] = {'\\', 'u', '0', '0'};

	put(w, "\"", 1);
	for (run = s; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *name;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(w, run, (size_t)(s - run));
		run = s + 1;
		name = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
		     : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
		if (name) {
			put(w, name, 2);
			continue;
		}
		esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
		put(w, esc, 6);
	}
	if (s)
		put(w, run, (size_t)(s - run));
	put(w, "\"", 1);
}

/* cJSON's text of a number (print_number): null when not finite, else
 * "%1.15g" when it reads back within cJSON's tolerance (DBL_EPSILON
 * relative), else "%1.17g" (cJSON 1.7.15 has no "%d" case: -0 prints -0). */
static void put_number(struct jw *w, const cJSON *v)
{
	char txt[JSON_G15_MAX];
	double d = v->valuedouble, back, big;
	size_t n;
	int len;

	if (isnan(d) || isinf(d)) {
		put(w, "null", 4);
		return;
	}
	n = json_g15(d, txt);
	back = strtod(txt, NULL);
	big = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
	if (fabs(back - d) <= big * DBL_EPSILON) {
		put(w, txt, n);
		return;
	}
	len = snprintf(txt, sizeof(txt), "%1.17g", d);
	put(w, txt, len > 0 ? (size_t)len : 0);
}

static const struct jout_list *list_of(const struct jw *w, const cJSON *v)
{
	size_t i;

	for (i = 0; i < w->nlists; i++)
		if (w->lists[i].at == v)
			return &w->lists[i];
	return NULL;
}

static void put_value(struct jw *w, const cJSON *v, int depth);

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
		put_value(w, it, depth + 1);
		cJSON_Delete(it);
	}
	put(w, "]", 1);
}

/* An array at `depth`: its items on one line, at depth + 1 (print_array). */
static void put_array(struct jw *w, const cJSON *v, int depth)
{
	const cJSON *c;

	put(w, "[", 1);
	for (c = v->child; c && !w->e; c = c->next) {
		put_value(w, c, depth + 1);
		if (c->next)
			put(w, ", ", 2);
	}
	put(w, "]", 1);
}

/* An object at `depth`: a member a line at depth + 1, closed at `depth`. */
static void put_object(struct jw *w, const cJSON *v, int depth)
{
	const cJSON *c;

	put(w, "{\n", 2);
	for (c = v->child; c && !w->e; c = c->next) {
		tabs(w, depth + 1);
		put_string(w, c->string);
		put(w, ":\t", 2);
		put_value(w, c, depth + 1);
		put(w, c->next ? ",\n" : "\n", c->next ? 2 : 1);
	}
	tabs(w, depth);
	put(w, "}", 1);
}

/* `v` at `depth` as cJSON_Print's print_value; a raw value without text or
 * an invalid type fails as cJSON's print does (ERR_NOMEM). */
static void put_value(struct jw *w, const cJSON *v, int depth)
{
	const struct jout_list *l;

	if (w->e)
		return;
	switch (v->type & 0xFF) {
	case cJSON_NULL:
		put(w, "null", 4);
		break;
	case cJSON_False:
		put(w, "false", 5);
		break;
	case cJSON_True:
		put(w, "true", 4);
		break;
	case cJSON_Number:
		put_number(w, v);
		break;
	case cJSON_String:
		put_string(w, v->valuestring);
		break;
	case cJSON_Raw:
		if (v->valuestring)
			put(w, v->valuestring, strlen(v->valuestring));
		else
			w->e = ERR_NOMEM;
		break;
	case cJSON_Array:
		if ((l = list_of(w, v)))
			put_list(w, l, depth);
		else
			put_array(w, v, depth);
		break;
	case cJSON_Object:
		put_object(w, v, depth);
		break;
	default:
		w->e = ERR_NOMEM;
	}
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
