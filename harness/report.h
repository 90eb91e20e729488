/*
 * report — what a run folder says, in numbers a person can check: pass rates
 * with their denominators (every recorded attempt counts; a transport failure
 * is a failure, never dropped), failure codes, the usage audit, recall by depth
 * and prompt length, latency percentiles with sample counts, finish reasons
 * and the manifest's facts (model, max_model_len, server version, tokenizer and
 * template hashes).
 *
 * The summary is one cJSON object (written as RUN_DIR/summary.json); the
 * Markdown, CSV and the recall heatmap PNG are rendered from it alone, so the
 * three always agree. Records are read one at a time with results_each (a
 * torn last line is skipped, as --resume does), never all held: memory stays
 * bounded by the summary, the attempt keys and the timing samples.
 *
 * Conventions:
 *  - percentiles and pass-rate intervals are stats.h's (nearest-rank; 95%
 *    Wilson), null with n = 0;
 *  - a recall needle counts as found only when its attempt's transport was
 *    clean and the grade marked that needle ok; an attempt without per-needle
 *    detail counts as a miss at every depth its case lists.
 */
#ifndef NEEDLE_REPORT_H
#define NEEDLE_REPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "keyset.h"

/* A run folder read back. */
struct report_run {
	char *dir;         /* owned copy of RUN_DIR */
	cJSON *manifest;   /* owned; NULL when the folder has no manifest.json */
	struct keyset keys; /* the attempt keys recorded */
	size_t records;    /* records in results.jsonl */
	cJSON *load_records; /* owned array of the records with "load"
				(loadcells.h: a load case's rounds), or NULL */
	size_t torn_bytes; /* size of a torn last line that was skipped */
};

/* Reads RUN_DIR's manifest.json if present and checks results.jsonl
 * (required) line by line, keeping its attempt keys, into a new run the
 * caller frees with report_run_free. ERR_INPUT for a malformed line (file,
 * line, reason); ERR_IO when results.jsonl cannot be read. */
enum err report_load(const char *dir, struct report_run **out, struct diag *d);
/* Frees the run. Accepts NULL. */
void report_run_free(struct report_run *r);

/* Builds the summary of `r` (borrowed), reading its results.jsonl again as a
 * stream, as a new cJSON object the caller owns. ERR_NOMEM; as report_load
 * when the journal cannot be read again. */
enum err report_summary(const struct report_run *r, cJSON **out, struct diag *d);

/* Renders a summary (borrowed) as Markdown or CSV, appended to `out`. The CSV
 * has one row per scope: "overall", each "case", each recall "cell". */
enum err report_markdown(const cJSON *summary, struct buf *out, struct diag *d);
enum err report_csv(const cJSON *summary, struct buf *out, struct diag *d);

/* Appends the depth x length recall heatmap of a summary as PNG to `png`
 * (drawn by heatmap.h); appends nothing when the summary has no recall
 * cells. */
enum err report_heatmap(const cJSON *summary, struct buf *png, struct diag *d);

/* Loads RUN_DIR and writes RUN_DIR/summary.json, summary.md and (when the run
 * has recall cells) recall.png: all rendered in memory first, each staged in
 * a temporary file, then all renamed into place, so a failure while
 * rendering or staging (out of memory included) leaves the old files and no
 * new or partial one. On success the summary goes to *summary_out (caller
 * owns) when that is not NULL. */
enum err report_write(const char *dir, cJSON **summary_out, struct diag *d);

#endif
