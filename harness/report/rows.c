/*
 * rows — see rows.h.
 */
#include "rows.h"

#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "run/results.h"
#include "why.h"

/* Where a column's value comes from: the scalar at record[a][b] (b may be
 * NULL), or a derived value (a NULL). */
struct col {
	const char *name, *a, *b;
};

static const struct col cols[] = {
	{"run", NULL, NULL}, {"model", "model", NULL}, {"case", "case", NULL},
	{"kind", "kind", NULL}, {"repeat", "repeat", NULL}, {"seed", "seed", NULL},
	{"verdict", "verdict", NULL}, {"fail_stage", NULL, NULL},
	{"failure_codes", NULL, NULL}, {"first_reason", NULL, NULL},
	{"usage_delta", "audit", "usage_delta"},
	{"local_prompt_tokens", "audit", "local_prompt_tokens"},
	{"prompt_tokens", "usage", "prompt_tokens"},
	{"completion_tokens", "usage", "completion_tokens"},
	{"http_status", "http_status", NULL}, {"finish_reason", "finish_reason", NULL},
	{"first_byte_ms", "timing", "first_byte_ms"}, {"ttft_ms", "timing", "ttft_ms"},
	{"ttfc_ms", "timing", "ttfc_ms"}, {"e2e_ms", "timing", "e2e_ms"},
	{"tpot_ms", "timing", "tpot_ms"}, {"recall_tokens", "recall", "tokens"},
	{"recall_depths", NULL, NULL}, {"started_at", "started_at", NULL},
	{"raw", "raw", NULL}};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

/* The strings of array `arr` joined with ';' (numbers as integers). */
static void join(const cJSON *arr, char *out, size_t cap)
{
	const cJSON *it;
	size_t n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(it, arr) {
		int k = cJSON_IsString(it)
			? snprintf(out + n, cap - n, "%s%s", n ? ";" : "", it->valuestring)
			: snprintf(out + n, cap - n, "%s%.0f", n ? ";" : "", it->valuedouble);
		if (k < 0 || (size_t)k >= cap - n)
			break;
		n += (size_t)k;
	}
}

/* The folder's last path component ("." for "", trailing '/' ignored). */
static void run_name(const char *dir, char *out, size_t cap)
{
	size_t n = strlen(dir);
	const char *s;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (s = dir + n; s > dir && s[-1] != '/'; s--)
		;
	snprintf(out, cap, "%.*s", (int)(dir + n - s), s);
}

/* A derived column's text for `rec` (in text[cap] or static), or NULL for
 * null. */
static const char *derived(const struct col *c, const cJSON *rec, const char *run,
			   char *text, size_t cap)
{
	const char *stage;

	if (!strcmp(c->name, "run"))
		return run;
	if (!strcmp(c->name, "failure_codes")) {
		join(jget2(rec, "transport", "failures"), text, cap);
		return text;
	}
	if (!strcmp(c->name, "recall_depths")) {
		join(jget2(rec, "recall", "depths"), text, cap);
		return jget(rec, "recall") ? text : NULL;
	}
	stage = why_first(rec, text, cap);
	return !strcmp(c->name, "fail_stage") ? stage : text;
}

/* Column `c`'s scalar in `rec`, or NULL (absent, or an object or array). */
static const cJSON *scalar(const struct col *c, const cJSON *rec)
{
	const cJSON *v = jget(rec, c->a);

	if (c->b)
		v = jget(v, c->b);
	return v && !cJSON_IsObject(v) && !cJSON_IsArray(v) ? v : NULL;
}

/* The row of one record as a new object (NULL on ERR_NOMEM, in jb). */
static cJSON *row_of(struct json_build *jb, const cJSON *rec, const char *run)
{
	cJSON *row = json_new_obj(jb);
	char text[WHY_TEXT_MAX];
	const char *t;
	const cJSON *v;
	size_t i;

	for (i = 0; row && i < NCOLS; i++) {
		if (!cols[i].a && (t = derived(&cols[i], rec, run, text, sizeof(text))))
			json_add_str(jb, row, cols[i].name, t);
		else if (cols[i].a && (v = scalar(&cols[i], rec)))
			json_add_dup(jb, row, cols[i].name, v);
		else
			json_add_null(jb, row, cols[i].name);
	}
	if (jb->code) {
		cJSON_Delete(row);
		return NULL;
	}
	return row;
}

/* A CSV field: quoted when it holds a comma, quote or line break. */
static enum err csv_field(struct buf *b, const char *s)
{
	enum err e;

	if (!strpbrk(s, ",\"\r\n"))
		return buf_puts(b, s);
	e = buf_putc(b, '"');
	for (; !e && *s; s++)
		e = *s == '"' ? buf_puts(b, "\"\"") : buf_putc(b, *s);
	return e ? e : buf_putc(b, '"');
}

static enum err csv_value(struct buf *b, const cJSON *v)
{
	char num[JSON_G15_MAX];

	if (cJSON_IsString(v))
		return csv_field(b, v->valuestring);
	if (cJSON_IsNumber(v))
		return buf_append(b, num, json_g15(v->valuedouble, num));
	if (cJSON_IsBool(v))
		return buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	return ERR_OK; /* null: an empty field */
}

/* The CSV line of one record, written from it cell by cell. */
static enum err csv_line(struct buf *b, const cJSON *rec, const char *run)
{
	char text[WHY_TEXT_MAX];
	const char *t;
	enum err e = ERR_OK;
	size_t i;

	for (i = 0; !e && i < NCOLS; i++) {
		if (i)
			e = buf_putc(b, ',');
		if (!e && !cols[i].a && (t = derived(&cols[i], rec, run, text, sizeof(text))))
			e = csv_field(b, t);
		else if (!e && cols[i].a)
			e = csv_value(b, scalar(&cols[i], rec));
	}
	return e ? e : buf_puts(b, "\r\n");
}

enum err rows_begin(struct rows_writer *w, const char *dir, int csv, struct buf *out)
{
	enum err e = ERR_OK;
	size_t i;

	json_build_init(&w->jb);
	run_name(dir, w->run, sizeof(w->run));
	w->csv = csv;
	w->out = out;
	for (i = 0; csv && !e && i < NCOLS; i++)
		e = buf_printf(out, "%s%s", i ? "," : "", cols[i].name);
	return csv && !e ? buf_puts(out, "\r\n") : e;
}

enum err rows_take(struct rows_writer *w, const cJSON *rec, struct diag *d)
{
	cJSON *row;
	enum err e;

	if (w->csv)
		return csv_line(w->out, rec, w->run);
	if (!(row = row_of(&w->jb, rec, w->run)))
		return w->jb.code;
	e = json_print(row, JSON_NEWLINE, w->out, "a row", d);
	cJSON_Delete(row);
	return e;
}

/* results_each's callback of rows_write. */
static enum err row_one(void *ctx, const cJSON *rec, struct diag *d)
{
	return rows_take(ctx, rec, d);
}

static enum err rows_write(const char *dir, int csv, struct buf *out, struct diag *d)
{
	struct rows_writer w;
	struct results_scan sc;
	enum err e = rows_begin(&w, dir, csv, out);

	if (!e)
		e = results_each(dir, row_one, &w, &sc, d);
	if (e && (!d || !d->code))
		return diag_fail(d, e, "cannot write the attempts of '%s': %s", dir, err_name(e));
	return e;
}

enum err rows_csv(const char *dir, struct buf *out, struct diag *d)
{
	return rows_write(dir, 1, out, d);
}

enum err rows_jsonl(const char *dir, struct buf *out, struct diag *d)
{
	return rows_write(dir, 0, out, d);
}
