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

static void add_derived(struct json_build *jb, cJSON *row, const struct col *c,
			const cJSON *rec, const char *run)
{
	char text[WHY_TEXT_MAX];
	const char *stage;

	if (!strcmp(c->name, "run"))
		json_add_str(jb, row, c->name, run);
	else if (!strcmp(c->name, "failure_codes")) {
		join(jget2(rec, "transport", "failures"), text, sizeof(text));
		json_add_str(jb, row, c->name, text);
	} else if (!strcmp(c->name, "recall_depths")) {
		join(jget2(rec, "recall", "depths"), text, sizeof(text));
		json_add_item(jb, row, c->name, jget(rec, "recall") ? cJSON_CreateString(text)
								    : cJSON_CreateNull());
	} else {
		stage = why_first(rec, text, sizeof(text));
		json_add_str(jb, row, c->name, !strcmp(c->name, "fail_stage") ? stage : text);
	}
}

/* The row of one record as a new object (NULL on ERR_NOMEM, in jb). */
static cJSON *row_of(struct json_build *jb, const cJSON *rec, const char *run)
{
	cJSON *row = json_new_obj(jb);
	size_t i;

	for (i = 0; row && i < NCOLS; i++) {
		const cJSON *v = cols[i].a ? jget(rec, cols[i].a) : NULL;
		if (!cols[i].a)
			add_derived(jb, row, &cols[i], rec, run);
		else if (cols[i].b)
			v = jget(v, cols[i].b);
		if (cols[i].a && v && !cJSON_IsObject(v) && !cJSON_IsArray(v))
			json_add_dup(jb, row, cols[i].name, v);
		else if (cols[i].a)
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
	if (cJSON_IsString(v))
		return csv_field(b, v->valuestring);
	if (cJSON_IsNumber(v))
		return buf_printf(b, "%.15g", v->valuedouble);
	if (cJSON_IsBool(v))
		return buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	return ERR_OK; /* null: an empty field */
}

static enum err csv_line(struct buf *b, const cJSON *row)
{
	const cJSON *v;
	enum err e = ERR_OK;
	int first = 1;

	cJSON_ArrayForEach(v, row) {
		if (!e && !first)
			e = buf_putc(b, ',');
		if (!e)
			e = csv_value(b, v);
		first = 0;
	}
	return e ? e : buf_puts(b, "\r\n");
}

/* results_each's callback state of rows_write. */
struct rows_out {
	struct json_build jb;
	const char *run;
	int csv;
	struct buf *out;
};

static enum err row_one(void *ctx, const cJSON *rec, struct diag *d)
{
	struct rows_out *o = ctx;
	cJSON *row = row_of(&o->jb, rec, o->run);
	enum err e;

	if (!row)
		return o->jb.code;
	e = o->csv ? csv_line(o->out, row) : json_print(row, JSON_NEWLINE, o->out, "a row", d);
	cJSON_Delete(row);
	return e;
}

static enum err rows_write(const char *dir, int csv, struct buf *out, struct diag *d)
{
	struct rows_out o;
	struct results_scan sc;
	char run[1024];
	enum err e = ERR_OK;
	size_t i;

	json_build_init(&o.jb);
	run_name(dir, run, sizeof(run));
	o.run = run;
	o.csv = csv;
	o.out = out;
	for (i = 0; csv && !e && i < NCOLS; i++)
		e = buf_printf(out, "%s%s", i ? "," : "", cols[i].name);
	if (csv && !e)
		e = buf_puts(out, "\r\n");
	if (!e)
		e = results_each(dir, row_one, &o, &sc, d);
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
