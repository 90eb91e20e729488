/*
 * report — what a run folder says, in numbers a person can check: pass rates
 * with their denominators (every recorded attempt counts; a transport failure
 * is a failure, never dropped), failure codes, the usage audit, recall by depth
 * and prompt length, latency percentiles with sample counts (of the attempts
 * that are not load requests: those count in their load cell), finish reasons
 * and the manifest's facts (model, max_model_len, server version, tokenizer and
 * template hashes).
 *
 * The summary is one cJSON object (written as RUN_DIR/summary.json); the
 * Markdown and the recall heatmap PNG are rendered from it alone, so they
 * always agree; the per-attempt CSV (rows.h) is the records it was computed
 * from. Records are read one at a time with results_each (a torn last line
 * is skipped, as --resume does) and folded into per-case, per-cell and
 * per-reason aggregates, never kept: memory grows with the distinct cases,
 * cells and reasons, not with the records (the load rounds of load cases
 * excepted, loadcells.h).
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

#include "base/buf.h"
#include "casetab.h"
#include "base/err.h"
#include "base/json.h"
#include "base/keyset.h"
#include "load/loadcells.h"
#include "run/results.h"

/* A run folder read back. */
struct report_fold;
struct report_run;
struct rows_writer;

/* Another reader folded into a load's one pass over the journal (diff.h's
 * index, a report format's, format.h): `start` (may be NULL) is called once
 * the manifest is read, before the first record; `take` is handed each record
 * the run keeps; `ctx` belongs to the run from the load on, and `drop` (may be
 * NULL) frees it with the run. */
struct report_also {
	enum err (*start)(void *ctx, const struct report_run *r, struct diag *d);
	results_fn take;
	void *ctx;
	void (*drop)(void *ctx);
};

struct report_run {
	char *dir;         /* owned copy of RUN_DIR */
	cJSON *manifest;   /* owned; NULL when the folder has no manifest.json */
	int has_plan;      /* the manifest lists its planned attempt keys */
	struct keyset keys; /* the attempt keys recorded (only with a plan:
			       they are counted against it, record_plan_done) */
	size_t records;    /* records in results.jsonl */
	int has_load;      /* a record has "load" (a load case's request) */
	struct loadcells_reqs load_reqs; /* owned: the counted requests of its
				load cases (loadcells.h), in journal order */
	size_t torn_bytes; /* size of a torn last line that was skipped */
	const char *const *globs; /* borrowed: the case ids kept (shell globs,
				     report_load_cases; nglobs = 0: every case) */
	size_t nglobs;
	struct report_fold *fold; /* owned: the summary folded while loading
				     (report_load, report_load_cases) until
				     report_summary takes it; NULL after */
	struct rows_writer *rows; /* owned: the CSV rows' writer while loading
				     (report_load only), else NULL */
	struct buf csv;    /* the CSV rows (rows.h) folded while loading,
			      until report_render takes them */
	struct report_also also; /* report_load_cases's other reader, or zeroed;
				    its reader may take `ctx` (then NULL) */
};

/* Reads RUN_DIR's manifest.json if present and checks results.jsonl
 * (required) line by line, keeping its attempt keys, into a new run the
 * caller frees with report_run_free; `also` (copied; may be NULL) is folded
 * into the same pass, its ctx dropped with the run, also when the load
 * fails. ERR_INPUT for a malformed line (file, line, reason); ERR_IO when
 * results.jsonl cannot be read. */
enum err report_load(const char *dir, const struct report_also *also, struct report_run **out,
		     struct diag *d);
/* As report_load without the rows, keeping only the records of the cases
 * `globs` selects (record_case_selected; borrowed, they must outlive the
 * run; nglobs 0: every case) and counting the manifest's plan over those
 * cases only: a narrower comparison on purpose (needle diff --case). Every
 * reader of the run (report_summary, diff) sees only those records. `also`
 * (copied; may be NULL) is folded into the same pass; its ctx is dropped
 * with the run, also when the load fails. */
enum err report_load_cases(const char *dir, const char *const *globs, size_t nglobs,
			   const struct report_also *also, struct report_run **out,
			   struct diag *d);
/* Whether run `r` keeps the record `v` views (its case is selected). */
int report_keeps(const struct report_run *r, const struct record_view *v);
/* Frees the run. Accepts NULL. */
void report_run_free(struct report_run *r);

/* A run's summary: one cJSON object but for its cases, which are kept
 * compact (casetab.h) and made objects one at a time when printed or
 * rendered, so its size follows the distinct cases at a few words each. */
struct report_sum {
	cJSON *s;             /* owned; its "cases" is an empty array standing
				 for `cases` (report_cases) */
	struct casetab cases; /* owned */
	struct loadcells load; /* owned: the load cells, written as its "load"
				  (n 0: none) */
};

/* Hands over the summary of `r` (borrowed) folded while report_load or
 * report_load_cases read its journal (one pass for the keys, the summary
 * and the rows), into *out (the caller releases it with report_sum_release;
 * on failure nothing is left to free). Once per run: ERR_INTERNAL when it
 * was taken already. ERR_NOMEM. */
enum err report_summary(struct report_run *r, struct report_sum *out, struct diag *d);
/* Frees what `m` holds; it is empty after. */
void report_sum_release(struct report_sum *m);
/* The jout list (json.h: jout_print) printing m's cases in place of the array `at`
 * (m->s's "cases", or the same array where m->s was moved); it borrows `m`. */
struct jout_list report_cases(const struct report_sum *m, const cJSON *at);

/* Renders a summary (borrowed) as Markdown, appended to `out`: the run's
 * facts (INCOMPLETE when the manifest says the run stopped early), pass
 * rates with each case's reasons, a Failures section (why.h: advice, then
 * per reason its count, cases, one example with the answer and the raw
 * stream's path; "No attempt failed." when none), the audit, recall and
 * latency. */
enum err report_markdown(const struct report_sum *summary, struct buf *out, struct diag *d);

/* 1 when a summary's "latency" (borrowed) has a timing of at least one
 * attempt; a run of load cases only has none (its latency is in the cells),
 * and its Latency sections say so in a line instead of a table of "-". */
int report_timed(const cJSON *latency);
#define REPORT_UNTIMED "No attempt outside the load cases was timed: the load requests' latency is in the load cells.\n"

/* What follows "DONE/PLANNED planned attempts recorded" for a summary's
 * "attempts" `a` (borrowed): " (NOTE)" when it has a "planned_note" (an
 * older plan counts a load case as one attempt), else "", in out[cap];
 * returns out. */
const char *report_plan_note(const cJSON *a, char *out, size_t cap);

/* Appends the end-of-run lines a terminal shows for a summary (borrowed):
 * "INCOMPLETE: ..." when the run stopped early; "failing cases:" then one
 * line per failing case ("  ID: F of N failed (STAGE: KEY xCOUNT; ...): its
 * first failed attempt's first reason", the reason cut to 160 bytes); then
 * "what to do: ADVICE" per advice sentence; then "warning: ..." per load
 * warning (loadview.h: the client may have shaped the figures). Nothing when
 * every case passed and there is no warning. */
enum err report_terminal(const struct report_sum *summary, struct buf *out, struct diag *d);

/* Appends the depth x length recall heatmap of a summary as PNG to `png`
 * (drawn by heatmap.h); appends nothing when the summary has no recall
 * cells. */
enum err report_heatmap(const cJSON *summary, struct buf *png, struct diag *d);

#define REPORT_CSV_NAME "attempts.csv" /* the per-attempt table (rows.h) */

/* Everything report writes for a run, rendered in memory. */
struct report_files {
	struct report_sum summary;     /* owned */
	struct buf json, md, png, csv; /* summary.json, summary.md, recall.png
					* (empty without recall cells), the CSV */
	struct buf load_png;           /* load.png (loadplot.h; empty without
					* closed-loop load cells) */
};

/* Renders `r` (borrowed; loaded by report_load, whose summary and rows it
 * takes) into `f` (set up here; the caller releases it with
 * report_files_release on success; on failure nothing is left to free). */
enum err report_render(struct report_run *r, struct report_files *f, struct diag *d);
/* Frees what `f` holds. */
void report_files_release(struct report_files *f);
/* Writes f's files into `dir` as a set: each staged in a temporary file,
 * then all renamed into place, so a failure while staging (a full disk, a
 * read-only folder) leaves the old files and no new or partial one. ERR_IO
 * names the file and the reason. */
enum err report_save(const struct report_files *f, const char *dir, struct diag *d);

/* Loads RUN_DIR, renders it and saves it into RUN_DIR (summary.json,
 * summary.md, attempts.csv and, when the run has recall cells, recall.png;
 * with closed-loop load cells, load.png);
 * a failure (out of memory included) leaves the old files. On success the
 * summary moves to *summary_out (released with report_sum_release) when that
 * is not NULL; it is left empty otherwise. */
enum err report_write(const char *dir, struct report_sum *summary_out, struct diag *d);

#endif
