/*
 * rows — a run's attempts as a tidy table, one row per recorded attempt and
 * one column per fact, for pandas, DuckDB or a spreadsheet: CSV (RFC 4180:
 * comma-separated, CRLF line ends, a field quoted when it holds a comma,
 * quote or line break, quotes doubled; a header row; an absent value is an
 * empty field) or JSON Lines (one compact object per line, the same keys in
 * the same order, absent values null). Aggregates stay in summary.json
 * (report.h); these rows are what it was computed from.
 *
 * Columns, in order: run (the run folder's last path component), model,
 * case, kind, repeat, seed, verdict, fail_stage (transport, audit, grade or
 * empty), failure_codes (the transport codes, ';'-separated), first_reason
 * (why.h), usage_delta, local_prompt_tokens, prompt_tokens,
 * completion_tokens, http_status, finish_reason, first_byte_ms, ttft_ms,
 * ttfc_ms, e2e_ms, tpot_ms, recall_tokens, recall_depths (';'-separated),
 * started_at, raw (the raw stream's path inside the run folder), then
 * run_id (the manifest's: one run, whatever its folder is called; empty for
 * a run of a needle before it), case_id (case again, under a name that is
 * not an SQL keyword), level, round (-1 the pre-check, 0 a warm-up, 1... a
 * counted round), warmup, precheck (false outside a load case), concurrency
 * or rate (of the level), started_unix_ms (the start in ms since the Unix
 * epoch; empty for an older record).
 *
 * Types hold whatever the values, so pandas and DuckDB type a column the
 * same for every run: the timing columns and rate always have a decimal
 * point ("12.0"); warmup and precheck are true or false; in the CSV an
 * absent or empty text is "-" (a column empty in every row of a clean run
 * would load as float64), while JSON Lines keeps "" and null.
 */
#ifndef NEEDLE_ROWS_H
#define NEEDLE_ROWS_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

struct record_view; /* run/record.h */

/* The table for a reader that walks the journal itself (report.h reads it
 * once for the summary and the rows): rows_begin sets up `w` for run folder
 * `dir` with the manifest's `run_id` (may be NULL; borrowed, as `out`: both
 * must outlive `w`) and, for CSV, appends the header row to `out`; rows_take
 * appends the row of the record `v` views. ERR_NOMEM, ERR_LIMIT (the
 * buffer's cap); `out` may hold a partial table on error. rows_fold_jsonl
 * sets `also` up to append the JSON Lines rows of a run's records to `out`
 * in report_load's one pass over its journal. */
#define ROWS_NCOLS 34 /* the columns above */

struct rows_writer {
	struct json_build jb; /* a row's adds */
	char run[1024];       /* the run column: the folder's last component */
	const char *run_id;   /* borrowed, or NULL */
	int csv;              /* CSV, else JSON Lines */
	struct buf *out;      /* borrowed */
};
enum err rows_begin(struct rows_writer *w, const char *dir, const char *run_id, int csv,
		    struct buf *out);
enum err rows_take(struct rows_writer *w, const struct record_view *v, struct diag *d);
struct report_also; /* report.h */
enum err rows_fold_jsonl(struct buf *out, struct report_also *also, struct diag *d);

#endif
