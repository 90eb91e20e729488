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

/* What a derived column (one whose `a` is NULL) is made from. */
enum col_from {
	FROM_RECORD, /* not derived: record[a][b] */
	FROM_RUN, FROM_RUN_ID,
	FROM_LOAD,   /* the flag record.load[name] */
	FROM_CODES, FROM_DEPTHS, FROM_STAGE, FROM_REASON
};

/* Where a column's value comes from: the scalar at record[a][b] (b may be
 * NULL), or a derived value (a NULL, made as `from` says). */
struct col {
	const char *name, *a, *b;
	enum col_type t;
	enum col_from from;
};

static const struct col cols[] = {
	{"run", NULL, NULL, COL_TEXT, FROM_RUN}, {"model", "model", NULL, COL_TEXT},
	{"case", "case", NULL, COL_TEXT}, {"kind", "kind", NULL, COL_TEXT},
	{"repeat", "repeat", NULL, COL_INT}, {"seed", "seed", NULL, COL_INT},
	{"verdict", "verdict", NULL, COL_TEXT}, {"fail_stage", NULL, NULL, COL_TEXT, FROM_STAGE},
	{"failure_codes", NULL, NULL, COL_TEXT, FROM_CODES},
	{"first_reason", NULL, NULL, COL_TEXT, FROM_REASON},
	{"usage_delta", "audit", "usage_delta", COL_INT},
	{"local_prompt_tokens", "audit", "local_prompt_tokens", COL_INT},
	{"prompt_tokens", "usage", "prompt_tokens", COL_INT},
	{"completion_tokens", "usage", "completion_tokens", COL_INT},
	{"http_status", "http_status", NULL, COL_INT},
	{"finish_reason", "finish_reason", NULL, COL_TEXT},
	{"first_byte_ms", "timing", "first_byte_ms", COL_REAL},
	{"ttft_ms", "timing", "ttft_ms", COL_REAL}, {"ttfc_ms", "timing", "ttfc_ms", COL_REAL},
	{"e2e_ms", "timing", "e2e_ms", COL_REAL}, {"tpot_ms", "timing", "tpot_ms", COL_REAL},
	{"recall_tokens", "recall", "tokens", COL_INT},
	{"recall_depths", NULL, NULL, COL_TEXT, FROM_DEPTHS},
	{"started_at", "started_at", NULL, COL_TEXT}, {"raw", "raw", NULL, COL_TEXT},
	{"run_id", NULL, NULL, COL_TEXT, FROM_RUN_ID}, {"case_id", "case", NULL, COL_TEXT},
	{"level", "load", "level", COL_INT}, {"round", "load", "round", COL_INT},
	{"warmup", NULL, NULL, COL_BOOL, FROM_LOAD}, {"precheck", NULL, NULL, COL_BOOL, FROM_LOAD},
	{"concurrency", "load", "concurrency", COL_INT}, {"rate", "load", "rate", COL_REAL},
	{"started_unix_ms", "started_unix_ms", NULL, COL_INT}};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))
_Static_assert(NCOLS == ROWS_NCOLS, "rows.h counts the columns");

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

/* A row being written: its record, the scalars of the columns read from it
 * (cells) and its first reason (why_first, read once for fail_stage and
 * first_reason). */
struct row {
	const cJSON *rec;
	const cJSON *v[NCOLS];
	const char *stage; /* NULL until read */
	char reason[WHY_TEXT_MAX];
};

/* A derived column's text for row `r` (in text[cap], static, `r`'s or `w`'s),
 * or NULL for null. */
static const char *derived(const struct col *c, struct row *r, const struct rows_writer *w,
			   char *text, size_t cap)
{
	switch (c->from) {
	case FROM_RUN:
		return w->run;
	case FROM_RUN_ID:
		return w->run_id;
	case FROM_LOAD: /* warmup, precheck: false outside a load case */
		return cJSON_IsTrue(jget2(r->rec, "load", c->name)) ? "true" : "false";
	case FROM_CODES:
		join(jget2(r->rec, "transport", "failures"), text, cap);
		return text;
	case FROM_DEPTHS:
		join(jget2(r->rec, "recall", "depths"), text, cap);
		return jget(r->rec, "recall") ? text : NULL;
	default:
		break;
	}
	if (!r->stage)
		r->stage = why_first(r->rec, r->reason, sizeof(r->reason));
	return c->from == FROM_STAGE ? r->stage : r->reason;
}

/* Fills r->v[i] with column i's scalar in `rec` (record[a][b]), or NULL
 * (absent, an object or an array, or a derived column): one walk of the
 * record's members, each object a column reads from walked once, the first
 * of duplicate names winning as jget reads them. */
static void cells(const struct rows_writer *w, const cJSON *rec, struct row *r)
{
	const cJSON *m, *v;
	unsigned long long seen = 0;
	unsigned i, j;

	r->rec = rec;
	r->stage = NULL;
	memset(r->v, 0, sizeof(r->v));
	for (m = rec->child; m; m = m->next) {
		/* names of a chain share their first byte: the second compared
		 * inline first (a member's name has one, or its NUL) */
		for (i = m->string ? w->head[(unsigned char)m->string[0]] : 0; i; i = w->next[i])
			if (cols[i - 1].a[1] == m->string[1] && !strcmp(cols[i - 1].a, m->string))
				break;
		if (!i || (seen >> i & 1))
			continue;
		seen |= 1ull << i;
		for (j = i; j; j = w->same[j]) {
			v = cols[j - 1].b ? jget(m, cols[j - 1].b) : m;
			r->v[j - 1] = jget_type(v) == cJSON_Object || jget_type(v) == cJSON_Array
					      ? NULL : v;
		}
	}
}

/* A COL_REAL number's text with a decimal point or an exponent ("12.0",
 * "0.5", "1e+300"), so its SQL type is a float whatever the values; into
 * out[JSON_G15_MAX + 2]. */
static size_t real_text(double v, char *out)
{
	size_t n = json_g15(v, out);

	if (isfinite(v) && !strpbrk(out, ".e")) {
		memcpy(out + n, ".0", 3);
		n += 2;
	}
	return n;
}

/* The row of one record as a new object (NULL on ERR_NOMEM, in jb). */
static cJSON *row_of(struct json_build *jb, struct row *r, const struct rows_writer *w)
{
	cJSON *row = json_new_obj(jb);
	char text[WHY_TEXT_MAX], num[JSON_G15_MAX + 2];
	const char *t;
	const cJSON *v;
	size_t i;

	for (i = 0; row && i < NCOLS; i++) {
		const char *name = cols[i].name;

		if (!cols[i].a && (t = derived(&cols[i], r, w, text, sizeof(text))))
			json_add_item(jb, row, name, cols[i].t == COL_BOOL ? cJSON_CreateBool(*t == 't')
									 : cJSON_CreateString(t));
		else if (cols[i].a && (v = r->v[i]) && cols[i].t == COL_REAL &&
			 cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
			real_text(v->valuedouble, num);
			json_add_item(jb, row, name, cJSON_CreateRaw(num));
		} else if (cols[i].a && v)
			json_add_dup(jb, row, name, v);
		else
			json_add_null(jb, row, name);
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
	size_t n = strcspn(s, ",\"\r\n");
	enum err e;

	if (!s[n])
		return buf_append(b, s, n);
	e = buf_putc(b, '"');
	for (; !e && *s; s++)
		e = *s == '"' ? buf_puts(b, "\"\"") : buf_putc(b, *s);
	return e ? e : buf_putc(b, '"');
}

/* Column c's value v: an absent or empty text is "-" (an empty field in
 * every row would make pandas read the column as float64). */
static enum err csv_value(struct buf *b, const struct col *c, const cJSON *v)
{
	char num[JSON_G15_MAX + 2];
	int type = jget_type(v);

	if (type == cJSON_String && v->valuestring[0])
		return csv_field(b, v->valuestring);
	if (c->t == COL_TEXT)
		return buf_putc(b, '-');
	if (type == cJSON_Number)
		return buf_append(b, num, c->t == COL_REAL ? real_text(v->valuedouble, num)
							   : json_g15(v->valuedouble, num));
	if (type == cJSON_True || type == cJSON_False)
		return buf_puts(b, type == cJSON_True ? "true" : "false");
	return ERR_OK; /* null: an empty field */
}

/* The CSV line of one record, written from it cell by cell. */
static enum err csv_line(struct buf *b, struct row *r, const struct rows_writer *w)
{
	char text[WHY_TEXT_MAX];
	const char *t;
	enum err e = ERR_OK;
	size_t i;

	for (i = 0; !e && i < NCOLS; i++) {
		if (i)
			e = buf_putc(b, ',');
		if (!e && !cols[i].a && (t = derived(&cols[i], r, w, text, sizeof(text))) && *t)
			e = csv_field(b, t);
		else if (!e && !cols[i].a)
			e = cols[i].t == COL_TEXT ? buf_putc(b, '-') : ERR_OK;
		else if (!e)
			e = csv_value(b, &cols[i], r->v[i]);
	}
	return e ? e : buf_puts(b, "\r\n");
}

/* The column chains of cells (column i as i + 1, 0 ending a chain): the
 * first column of each parent name a chained from head[] by the name's first
 * byte, and every column to the next one of the same name (same[]). */
static void chain(struct rows_writer *w)
{
	size_t i, k;

	memset(w->head, 0, sizeof(w->head));
	for (i = NCOLS; i-- > 0;) {
		w->same[i + 1] = 0;
		for (k = i + 1; cols[i].a && k < NCOLS; k++)
			if (cols[k].a && !strcmp(cols[k].a, cols[i].a)) {
				w->same[i + 1] = (unsigned char)(k + 1);
				break;
			}
		for (k = 0; cols[i].a && k < i && (!cols[k].a || strcmp(cols[k].a, cols[i].a)); k++)
			;
		if (!cols[i].a || k < i)
			continue;
		w->next[i + 1] = w->head[(unsigned char)cols[i].a[0]];
		w->head[(unsigned char)cols[i].a[0]] = (unsigned char)(i + 1);
	}
}

enum err rows_begin(struct rows_writer *w, const char *dir, const char *run_id, int csv,
		    struct buf *out)
{
	enum err e = ERR_OK;
	size_t i;

	json_build_init(&w->jb);
	chain(w);
	run_name(dir, w->run, sizeof(w->run));
	w->run_id = run_id;
	w->csv = csv;
	w->out = out;
	for (i = 0; csv && !e && i < NCOLS; i++)
		e = buf_printf(out, "%s%s", i ? "," : "", cols[i].name);
	return csv && !e ? buf_puts(out, "\r\n") : e;
}

enum err rows_take(struct rows_writer *w, const cJSON *rec, struct diag *d)
{
	struct row r;
	cJSON *row;
	enum err e;

	cells(w, rec, &r);
	if (w->csv)
		return csv_line(w->out, &r, w);
	if (!(row = row_of(&w->jb, &r, w)))
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
	cJSON *manifest = NULL;
	enum err e = results_read_manifest(dir, &manifest, d);

	if (!e)
		e = rows_begin(&w, dir, cJSON_GetStringValue(jget(manifest, "run_id")), csv, out);
	if (!e)
		e = results_each(dir, row_one, &w, &sc, d);
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
