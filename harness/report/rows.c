/*
 * rows — see rows.h.
 */
#include "rows.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/jscan.h"
#include "base/json.h"
#include "base/mem.h"
#include "report.h"
#include "run/record.h"
#include "why.h"

/* A column's type: how an absent value and a whole number are written. */
enum col_type {
	COL_TEXT, /* CSV: "-" when absent or empty (JSON Lines: "" or null) */
	COL_INT,  /* a whole number; an empty field / null when absent */
	COL_REAL, /* always with a decimal point ("12.0"), so its SQL type is a
		     float whatever the values */
	COL_BOOL  /* true / false */
};

/* What a column is made from. */
enum col_from {
	FROM_RECORD, /* the record's scalar at `field` */
	FROM_RUN, FROM_RUN_ID,
	FROM_LOAD,   /* the flag at `field` (record.load[name]) */
	FROM_CODES, FROM_DEPTHS, /* the array at `field`, joined */
	FROM_STAGE, FROM_REASON
};

/* Where a column's value comes from: the scalar of the record's `field`
 * (record.h; an object or an array reads as absent), or a derived value
 * (made as `from` says, of `field` where it names one). */
struct col {
	const char *name;
	short field;
	enum col_type t;
	enum col_from from;
};

/* A column that shows one member of a record is named as that member (its
 * RK_ name, record.h). */
static const struct col cols[] = {
	{"run", -1, COL_TEXT, FROM_RUN}, {RK_MODEL, RF_MODEL, COL_TEXT},
	{RK_CASE, RF_CASE, COL_TEXT}, {RK_KIND, RF_KIND, COL_TEXT},
	{RK_REPEAT, RF_REPEAT, COL_INT}, {RK_SEED, RF_SEED, COL_INT},
	{RK_VERDICT, RF_VERDICT, COL_TEXT}, {"fail_stage", -1, COL_TEXT, FROM_STAGE},
	{"failure_codes", RF_TR_FAILURES, COL_TEXT, FROM_CODES},
	{"first_reason", -1, COL_TEXT, FROM_REASON},
	{RK_USAGE_DELTA, RF_AU_USAGE_DELTA, COL_INT},
	{RK_LOCAL_PROMPT_TOKENS, RF_AU_LOCAL_PROMPT_TOKENS, COL_INT},
	{RK_PROMPT_TOKENS, RF_US_PROMPT_TOKENS, COL_INT},
	{RK_COMPLETION_TOKENS, RF_US_COMPLETION_TOKENS, COL_INT},
	{RK_HTTP_STATUS, RF_HTTP_STATUS, COL_INT},
	{RK_FINISH_REASON, RF_FINISH_REASON, COL_TEXT},
	{RK_FIRST_BYTE_MS, RF_TI_FIRST_BYTE_MS, COL_REAL}, {RK_TTFT_MS, RF_TI_TTFT_MS, COL_REAL},
	{RK_TTFC_MS, RF_TI_TTFC_MS, COL_REAL}, {RK_E2E_MS, RF_TI_E2E_MS, COL_REAL},
	{RK_TPOT_MS, RF_TI_TPOT_MS, COL_REAL},
	{"recall_tokens", RF_RE_TOKENS, COL_INT},
	{"recall_depths", RF_RE_DEPTHS, COL_TEXT, FROM_DEPTHS},
	{RK_STARTED_AT, RF_STARTED_AT, COL_TEXT}, {RK_RAW, RF_RAW, COL_TEXT},
	{"run_id", -1, COL_TEXT, FROM_RUN_ID}, {"case_id", RF_CASE, COL_TEXT},
	{RK_LEVEL, RF_LO_LEVEL, COL_INT}, {RK_ROUND, RF_LO_ROUND, COL_INT},
	{RK_WARMUP, RF_LO_WARMUP, COL_BOOL, FROM_LOAD},
	{RK_PRECHECK, RF_LO_PRECHECK, COL_BOOL, FROM_LOAD},
	{RK_CONCURRENCY, RF_LO_CONCURRENCY, COL_INT}, {RK_RATE, RF_LO_RATE, COL_REAL},
	{RK_STARTED_UNIX_MS, RF_STARTED_UNIX_MS, COL_INT}};
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

/* A row being written: its record and its first reason (why_first, read
 * once for fail_stage and first_reason). */
struct row {
	const struct record_view *v;
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
		return jget_type(r->v->f[c->field]) == cJSON_True ? "true" : "false";
	case FROM_CODES:
		join(r->v->f[c->field], text, cap);
		return text;
	case FROM_DEPTHS:
		join(r->v->f[c->field], text, cap);
		return r->v->f[RF_RECALL] ? text : NULL;
	default:
		break;
	}
	if (!r->stage)
		r->stage = why_first(r->v, r->reason, sizeof(r->reason));
	return c->from == FROM_STAGE ? r->stage : r->reason;
}

/* Column c's scalar in the row's record, or NULL (absent, an object or an
 * array). */
static const cJSON *cell(const struct col *c, const struct row *r)
{
	const cJSON *v = r->v->f[c->field];
	int t = jget_type(v);

	return t == cJSON_Object || t == cJSON_Array ? NULL : v;
}

/* Whether the `n` bytes of a number's text at `s` have a decimal point or
 * an exponent. */
static int has_point(const char *s, size_t n)
{
	while (n-- > 0)
		if (s[n] == '.' || s[n] == 'e')
			return 1;
	return 0;
}

/* A COL_REAL number's text with a decimal point or an exponent ("12.0",
 * "0.5", "1e+300"), so its SQL type is a float whatever the values; into
 * out[JSON_G15_MAX + 2]. */
static size_t real_text(double v, char *out)
{
	size_t n = json_g15(v, out);

	if (isfinite(v) && !has_point(out, n)) {
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
		int rec = cols[i].from == FROM_RECORD;

		if (!rec && (t = derived(&cols[i], r, w, text, sizeof(text))))
			json_add_item(jb, row, name, cols[i].t == COL_BOOL ? cJSON_CreateBool(*t == 't')
									 : cJSON_CreateString(t));
		else if (rec && (v = cell(&cols[i], r)) && cols[i].t == COL_REAL &&
			 cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
			real_text(v->valuedouble, num);
			json_add_item(jb, row, name, cJSON_CreateRaw(num));
		} else if (rec && v)
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

/* A CSV line written in place after the output's last byte (buf_reserve's
 * room) and counted once at its end: an append a field, or a byte, cost
 * more than the fields (a line is some 150 bytes of 34 fields). */
struct line {
	struct buf *b;
	char *w;    /* where the next byte goes, past b->data + b->len */
	char *end;  /* the end of the room reserved */
	enum err e; /* the first failed reserve: the line is dropped */
	int jtree;  /* the record is a jtree's: a number's text is at hand */
};

#define LINE_ROOM 256 /* bytes reserved at a time */

/* room's slow path: reserves `n` more bytes (and some slack) past the line
 * written. */
static char *grow(struct line *l, size_t n)
{
	size_t at = (size_t)(l->w - (l->b->data + l->b->len)), want = at + n + LINE_ROOM;

	if (want > l->b->max - l->b->len) /* no slack past the cap */
		want = at + n;
	if (l->e || (l->e = buf_reserve(l->b, want)))
		return NULL;
	l->w = l->b->data + l->b->len + at;
	l->end = l->w - at + buf_avail(l->b);
	return l->w;
}

/* Where `n` more bytes of the line go (l->w), or NULL when the room cannot
 * grow (l->e set). */
static inline char *room(struct line *l, size_t n)
{
	return (size_t)(l->end - l->w) >= n ? l->w : grow(l, n);
}

/* One byte. */
static inline void put_byte(struct line *l, char c)
{
	if (room(l, 1))
		*l->w++ = c;
}

/* The bytes that end a run of a CSV field's text: its NUL, and those it is
 * quoted for. */
static const unsigned char csv_stop[256] = {[0] = 1, [','] = 1, ['"'] = 1, ['\r'] = 1,
					    ['\n'] = 1};

/* Field `s` quoted, its quotes doubled. */
static void put_quoted(struct line *l, const char *s)
{
	char *w = room(l, 2 * strlen(s) + 2);

	if (!w)
		return;
	*w++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*w++ = '"';
		*w++ = *s;
	}
	*w++ = '"';
	l->w = w;
}

/* Field `s`: quoted when it holds a comma, quote or line break. Copied a
 * run at a time while it needs no quotes (most fields are a few bytes). */
static inline void put_text(struct line *l, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = (size_t)(l->w - l->b->data), k;
	char *w;

	do {
		if (!(w = room(l, LINE_ROOM)))
			return;
		for (k = 0; k < LINE_ROOM && !csv_stop[p[k]]; k++)
			w[k] = (char)p[k];
		l->w += k;
		p += k;
	} while (k == LINE_ROOM);
	if (*p) {
		l->w = l->b->data + start;
		put_quoted(l, s);
	}
}

/* `n` bytes at `s`. */
static void put(struct line *l, const char *s, size_t n)
{
	char *w = room(l, n);

	if (w) {
		memcpy(w, s, n);
		l->w += n;
	}
}

/* The 1 to 17 bytes at `s` (a plain number's text) to `w`, by overlapping
 * words rather than a call to memcpy of a length it does not know. */
static inline void copy_short(char *w, const char *s, size_t n)
{
	uint64_t a, b, c;
	uint32_t x, y;

	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		if (n > 16) { /* 17: a sign, 15 digits and a point */
			memcpy(&c, s + 8, 8);
			memcpy(w + 8, &c, 8);
		}
		memcpy(w, &a, 8);
		memcpy(w + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(w, &x, 4);
		memcpy(w + n - 4, &y, 4);
	} else {
		w[0] = s[0];
		w[n / 2] = s[n / 2];
		w[n - 1] = s[n - 1];
	}
}

/* Number v of column c into w[JSON_G15_MAX + 2]: its text in the journal
 * when that is what json_g15 writes (copied, not formatted again), "12.0"
 * of a whole COL_REAL as real_text writes it. Returns its length. */
static size_t number(const struct line *l, const struct col *c, const cJSON *v, char *w)
{
	const char *t;
	size_t n;
	int is, frac;

	if (!l->jtree || !(t = jtree_number_text(v, &n, &frac)) || frac < 0 ||
	    !(is = json_g15_is_plain(t, n, frac)))
		return c->t == COL_REAL ? real_text(v->valuedouble, w) : json_g15(v->valuedouble, w);
	copy_short(w, t, n);
	if (c->t == COL_REAL && is == 1) {
		memcpy(w + n, ".0", 2);
		n += 2;
	}
	return n;
}

/* A verbatim string of jtree (no '"', line break or NUL in it) of `n` > 0
 * bytes at `s` as it is, unless it holds a comma: 0 then, nothing written.
 * Eight bytes a step: a comma is a zero byte of the word XOR commas. */
static inline int put_verbatim(struct line *l, const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7, commas = ones * ',';
	char *w = room(l, n);
	uint64_t x, y;
	size_t k;

	if (!w)
		return 1; /* the line is dropped */
	if (n < 8) {
		for (k = 0; k < n; k++)
			if ((w[k] = s[k]) == ',')
				return 0;
		l->w += n;
		return 1;
	}
	for (k = 0;; k += 8) {
		if (k + 8 > n)
			k = n - 8; /* the last word overlaps the one before */
		memcpy(&x, s + k, 8);
		y = x ^ commas;
		if ((y - ones) & ~y & high)
			return 0;
		memcpy(w + k, &x, 8);
		if (k + 8 == n)
			break;
	}
	l->w += n;
	return 1;
}

/* Column c's value v: an absent or empty text is "-" (an empty field in
 * every row would make pandas read the column as float64). */
static void put_value(struct line *l, const struct col *c, const cJSON *v)
{
	int type = jget_type(v);
	size_t n;
	char *w;

	if (type == cJSON_String && l->jtree && jtree_verbatim(v, &n) && n && put_verbatim(l, v->valuestring, n))
		return;
	if (type == cJSON_String && v->valuestring[0])
		put_text(l, v->valuestring);
	else if (c->t == COL_TEXT)
		put_byte(l, '-');
	else if (type == cJSON_Number && (w = room(l, JSON_G15_MAX + 2)))
		l->w += number(l, c, v, w);
	else if (type == cJSON_True || type == cJSON_False)
		put(l, type == cJSON_True ? "true" : "false", type == cJSON_True ? 4 : 5);
	/* null: an empty field */
}

/* The CSV line of one record, written from it cell by cell. */
static enum err csv_line(struct buf *b, struct row *r, const struct rows_writer *w)
{
	struct line l = {b, b->data + b->len, b->data + b->len + buf_avail(b), ERR_OK, r->v->jtree};
	char text[WHY_TEXT_MAX];
	const char *t;
	size_t i;

	/* after a failed reserve the line is dropped: what is written is not
	 * counted */
	for (i = 0; i < NCOLS; i++) {
		if (i)
			put_byte(&l, ',');
		if (cols[i].from == FROM_RECORD)
			put_value(&l, &cols[i], cell(&cols[i], r));
		else if ((t = derived(&cols[i], r, w, text, sizeof(text))) && *t)
			put_text(&l, t);
		else if (cols[i].t == COL_TEXT)
			put_byte(&l, '-');
	}
	put(&l, "\r\n", 2);
	if (!l.e)
		buf_commit(b, (size_t)(l.w - (b->data + b->len)));
	return l.e;
}

enum err rows_begin(struct rows_writer *w, const char *dir, const char *run_id, int csv,
		    struct buf *out)
{
	enum err e = ERR_OK;
	size_t i;

	json_build_init(&w->jb);
	run_name(dir, w->run, sizeof(w->run));
	w->run_id = run_id;
	w->csv = csv;
	w->out = out;
	for (i = 0; csv && !e && i < NCOLS; i++)
		e = buf_printf(out, "%s%s", i ? "," : "", cols[i].name);
	return csv && !e ? buf_puts(out, "\r\n") : e;
}

enum err rows_take(struct rows_writer *w, const struct record_view *v, struct diag *d)
{
	struct row r;
	cJSON *row;
	enum err e;

	r.v = v;
	r.stage = NULL; /* r.reason is written with it */
	if (w->csv)
		return csv_line(w->out, &r, w);
	if (!(row = row_of(&w->jb, &r, w)))
		return w->jb.code;
	e = json_print(row, JSON_NEWLINE, w->out, "a row", d);
	cJSON_Delete(row);
	return e;
}

/* The JSON Lines rows folded into a run's one pass (rows_fold_jsonl). */
struct rows_fold {
	struct rows_writer w;
	struct buf *out; /* borrowed */
};

static enum err fold_start(void *ctx, const struct report_run *r, struct diag *d)
{
	struct rows_fold *f = ctx;

	(void)d;
	return rows_begin(&f->w, r->dir, cJSON_GetStringValue(jget(r->manifest, MK_RUN_ID)), 0, f->out);
}

static enum err fold_row(void *ctx, const struct record_view *v, struct diag *d)
{
	struct rows_fold *f = ctx;
	enum err e = rows_take(&f->w, v, d);

	if (e && (!d || !d->code))
		diag_fail(d, e, "cannot write the attempts: %s", err_name(e));
	return e;
}

enum err rows_fold_jsonl(struct buf *out, struct report_also *also, struct diag *d)
{
	struct rows_fold *f = mem_calloc(1, sizeof(*f));

	if (!f)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	f->out = out;
	also->start = fold_start;
	also->take = fold_row;
	also->ctx = f;
	also->drop = mem_free;
	return ERR_OK;
}
