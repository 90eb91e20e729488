/*
 * rows — see rows.h.
 */
#include "rows.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "run/results.h"
#include "why.h"

/* A column's type: how an absent value and a whole number are written. */
enum col_type {
	COL_TEXT, /* CSV: "-" when absent or empty (JSON Lines: "" or null) */
	COL_INT,  /* a whole number; an empty field / null when absent */
	COL_REAL, /* always with a decimal point ("12.0"), so its SQL type is a
		     float whatever the values */
	COL_BOOL  /* true / false */
};

/* Where a column's value comes from: the scalar at record[a][b] (b may be
 * NULL), or a derived value (a NULL). */
struct col {
	const char *name, *a, *b;
	enum col_type t;
};

static const struct col cols[] = {
	{"run", NULL, NULL, COL_TEXT}, {"model", "model", NULL, COL_TEXT},
	{"case", "case", NULL, COL_TEXT}, {"kind", "kind", NULL, COL_TEXT},
	{"repeat", "repeat", NULL, COL_INT}, {"seed", "seed", NULL, COL_INT},
	{"verdict", "verdict", NULL, COL_TEXT}, {"fail_stage", NULL, NULL, COL_TEXT},
	{"failure_codes", NULL, NULL, COL_TEXT}, {"first_reason", NULL, NULL, COL_TEXT},
	{"usage_delta", "audit", "usage_delta", COL_INT},
	{"local_prompt_tokens", "audit", "local_prompt_tokens", COL_INT},
	{"prompt_tokens", "usage", "prompt_tokens", COL_INT},
	{"completion_tokens", "usage", "completion_tokens", COL_INT},
	{"http_status", "http_status", NULL, COL_INT},
	{"finish_reason", "finish_reason", NULL, COL_TEXT},
	{"first_byte_ms", "timing", "first_byte_ms", COL_REAL},
	{"ttft_ms", "timing", "ttft_ms", COL_REAL}, {"ttfc_ms", "timing", "ttfc_ms", COL_REAL},
	{"e2e_ms", "timing", "e2e_ms", COL_REAL}, {"tpot_ms", "timing", "tpot_ms", COL_REAL},
	{"recall_tokens", "recall", "tokens", COL_INT}, {"recall_depths", NULL, NULL, COL_TEXT},
	{"started_at", "started_at", NULL, COL_TEXT}, {"raw", "raw", NULL, COL_TEXT},
	{"run_id", NULL, NULL, COL_TEXT}, {"case_id", "case", NULL, COL_TEXT},
	{"level", "load", "level", COL_INT}, {"round", "load", "round", COL_INT},
	{"warmup", NULL, NULL, COL_BOOL}, {"precheck", NULL, NULL, COL_BOOL},
	{"concurrency", "load", "concurrency", COL_INT}, {"rate", "load", "rate", COL_REAL},
	{"started_unix_ms", "started_unix_ms", NULL, COL_INT}};
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

/* What every row of one run shares. */
struct rows_run {
	char name[1024];   /* the folder's last path component */
	const char *id;    /* the manifest's run_id, or NULL */
};

static void add_derived(struct json_build *jb, cJSON *row, const struct col *c,
			const cJSON *rec, const struct rows_run *run)
{
	char text[WHY_TEXT_MAX];
	const char *stage;

	if (!strcmp(c->name, "run"))
		json_add_str(jb, row, c->name, run->name);
	else if (!strcmp(c->name, "run_id"))
		json_add_item(jb, row, c->name, run->id ? cJSON_CreateString(run->id)
							: cJSON_CreateNull());
	else if (c->t == COL_BOOL) /* warmup, precheck: false outside a load case */
		json_add_bool(jb, row, c->name, cJSON_IsTrue(jget2(rec, "load", c->name)));
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

/* A number with a decimal point or an exponent ("12.0", "0.5", "1e+300"):
 * cJSON would print a whole value as "12". */
static void add_real(struct json_build *jb, cJSON *row, const char *name, double v)
{
	char text[40];

	if (!isfinite(v)) {
		json_add_null(jb, row, name);
		return;
	}
	snprintf(text, sizeof(text), "%.15g", v);
	if (!strpbrk(text, ".e"))
		snprintf(text + strlen(text), sizeof(text) - strlen(text), ".0");
	json_add_item(jb, row, name, cJSON_CreateRaw(text));
}

/* The row of one record as a new object (NULL on ERR_NOMEM, in jb). */
static cJSON *row_of(struct json_build *jb, const cJSON *rec, const struct rows_run *run)
{
	cJSON *row = json_new_obj(jb);
	size_t i;

	for (i = 0; row && i < NCOLS; i++) {
		const cJSON *v = cols[i].a ? jget(rec, cols[i].a) : NULL;
		if (!cols[i].a)
			add_derived(jb, row, &cols[i], rec, run);
		else if (cols[i].b)
			v = jget(v, cols[i].b);
		if (cols[i].a && v && cols[i].t == COL_REAL && cJSON_IsNumber(v))
			add_real(jb, row, cols[i].name, v->valuedouble);
		else if (cols[i].a && v && !cJSON_IsObject(v) && !cJSON_IsArray(v))
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

/* Column c's value v: an absent or empty text is "-" (an empty field in
 * every row would make pandas read the column as float64). */
static enum err csv_value(struct buf *b, const struct col *c, const cJSON *v)
{
	if (cJSON_IsString(v) && v->valuestring[0])
		return csv_field(b, v->valuestring);
	if (c->t == COL_TEXT)
		return buf_putc(b, '-');
	if (cJSON_IsRaw(v) || cJSON_IsNumber(v))
		return cJSON_IsRaw(v) ? buf_puts(b, v->valuestring)
				      : buf_printf(b, "%.15g", v->valuedouble);
	if (cJSON_IsBool(v))
		return buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	return ERR_OK; /* null: an empty field */
}

static enum err csv_line(struct buf *b, const cJSON *row)
{
	const cJSON *v;
	enum err e = ERR_OK;
	size_t i = 0;

	cJSON_ArrayForEach(v, row) {
		if (!e && i)
			e = buf_putc(b, ',');
		if (!e)
			e = csv_value(b, &cols[i], v);
		i++;
	}
	return e ? e : buf_puts(b, "\r\n");
}

/* results_each's callback state of rows_write. */
struct rows_out {
	struct json_build jb;
	const struct rows_run *run;
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
	struct rows_run run;
	cJSON *manifest = NULL;
	enum err e;
	size_t i;

	json_build_init(&o.jb);
	run_name(dir, run.name, sizeof(run.name));
	e = results_read_manifest(dir, &manifest, d);
	run.id = cJSON_GetStringValue(jget(manifest, "run_id"));
	o.run = &run;
	o.csv = csv;
	o.out = out;
	for (i = 0; csv && !e && i < NCOLS; i++)
		e = buf_printf(out, "%s%s", i ? "," : "", cols[i].name);
	if (csv && !e)
		e = buf_puts(out, "\r\n");
	if (!e)
		e = results_each(dir, row_one, &o, &sc, d);
	cJSON_Delete(manifest);
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
