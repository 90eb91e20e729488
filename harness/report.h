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
 * three always agree. Records are read with results_read_all (a torn last line
 * is skipped, as --resume does).
 *
 * Conventions, stated once:
 *  - percentiles are nearest-rank: pP is the smallest sample with at least P%
 *    of the samples at or below it (ceil(P/100 * n)-th smallest), so every
 *    reported value is a measured one; null with n = 0;
 *  - pass-rate intervals are Wilson score intervals at 95% (z = 1.96);
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

/* A run folder read back. */
struct report_run {
	char *dir;         /* owned copy of RUN_DIR */
	cJSON *manifest;   /* owned; NULL when the folder has no manifest.json */
	cJSON *records;    /* owned array of result records, file order */
	size_t torn_bytes; /* size of a torn last line that was skipped */
};

/* Percentiles of one timing, in its unit (ms). */
struct report_pct {
	size_t n;             /* samples */
	double p50, p90, p99; /* meaningful only when n > 0 */
};

/* Heatmap layout (pixels): the top left of the cell interior of (row, col)
 * is report_heat_cell; rows are depths ascending, columns lengths ascending. */
#define REPORT_HEAT_LEFT 88
#define REPORT_HEAT_TOP 64
#define REPORT_HEAT_CELL_W 96
#define REPORT_HEAT_CELL_H 48

/* Reads RUN_DIR (manifest.json if present, results.jsonl required) into a
 * new run the caller frees with report_run_free. ERR_INPUT for a malformed
 * line (file, line, reason); ERR_IO when results.jsonl cannot be read. */
enum err report_load(const char *dir, struct report_run **out, struct diag *d);
/* Frees the run. Accepts NULL. */
void report_run_free(struct report_run *r);

/* Sorts v[0..n) in place and fills `out` with its nearest-rank p50/p90/p99. */
void report_percentiles(double *v, size_t n, struct report_pct *out);
/* The 95% Wilson score interval of pass/n; [0, 1] when n = 0. */
void report_wilson(size_t pass, size_t n, double *lo, double *hi);

/* Builds the summary of `r` (borrowed) as a new cJSON object the caller
 * owns. ERR_NOMEM only. */
enum err report_summary(const struct report_run *r, cJSON **out, struct diag *d);

/* Renders a summary (borrowed) as Markdown or CSV, appended to `out`. The CSV
 * has one row per scope: "overall", each "case", each recall "cell". */
enum err report_markdown(const cJSON *summary, struct buf *out, struct diag *d);
enum err report_csv(const cJSON *summary, struct buf *out, struct diag *d);

/* Appends `s` for a Markdown table cell: '|' escaped, line breaks as spaces. */
enum err report_md_cell(struct buf *out, const char *s);

/* The heatmap colour of a recall fraction in [0, 1]: red at 0, yellow at
 * 0.5, green at 1, linear in between. */
void report_recall_rgb(double fraction, unsigned char rgb[3]);
/* Pixel position of the top left of cell (row, col)'s coloured interior. */
void report_heat_cell(int row, int col, int *x, int *y);
/* Appends the depth x length recall heatmap of a summary as PNG to `png`;
 * appends nothing when the summary has no recall cells. */
enum err report_heatmap(const cJSON *summary, struct buf *png, struct diag *d);

/* Loads RUN_DIR, writes RUN_DIR/summary.json, summary.md and (when the run
 * has recall cells) recall.png, each replaced atomically. On success the
 * summary goes to *summary_out (caller owns) when that is not NULL. */
enum err report_write(const char *dir, cJSON **summary_out, struct diag *d);

#endif
