/*
 * diff — two run folders compared like with like. Attempts are matched by
 * their key (case id, repeat, seed: record_key), each journal read as a
 * stream into a compact entry per record; only matched attempts are
 * compared for flips, per-case pass rates and usage-delta changes, and the
 * attempts found in one run only are counted. Recall by depth and latency
 * percentiles come from each run's report summary (all of its attempts but
 * load requests), with their sample counts. When either run used several replicas, "by_endpoint"
 * gives per base URL each run's pass rate over all its attempts there and
 * the flips of the matched attempts that replica served in B. A difference
 * in suite SHA-256, tokenizer or template
 * hash, or served model, is a warning: the runs may not be comparable.
 * "advice" says what to do about what broke between them: matched attempts
 * that passed the usage audit in A and fail it in B point at the server when
 * both runs used the same tokenizer and template (why_audit_diff).
 *
 * Load cases are compared per cell (case x level, matched by the level's
 * concurrency or rate, whatever the shard or level index): "load" holds one
 * entry per cell of either run, {case, level ("c32", "r0.3"), concurrency or
 * rate, a, b (each run's rounds_valid, requests, success_rate and output_tps,
 * ttft_p50_ms, ttft_p95_ms, tpot_p95_ms with _min and _max over rounds, and
 * client_probe_ms where the run recorded the machine's probe, loadclient.h;
 * null for a run without the cell), ratio (B/A of those four, and of
 * client_probe_ms where both have it), gates (gate.h's
 * judgements, empty until then), verdict (null until a gate judges the
 * cell)}, made from the typed cells (struct diff_cell) when printed.
 * The latency table is over the attempts that are not load requests: those
 * belong to their cell.
 *
 * Samples (record.h's "temperature"): a pass->fail flip whose attempts were
 * both sent at temperature > 0 and whose failure in B is the grade's (not
 * transport, not the usage audit) is marked "sampled": true; each case
 * (diff_case, "sampled" {total, a_pass, b_pass} in its JSON) counts those
 * pairs, and overall.recall_sampled says whether every recall attempt of
 * both runs was sent at temperature > 0. The functional gates judge them
 * against sampling noise (fungate.h).
 *
 * Like for like: diff["incomplete"] says why no gate may pass (a run
 * incomplete: fewer attempts recorded than its manifest planned,
 * record_plan_done; or no attempt matched) and diff["missing"] what A has
 * that B lacks (attempts other than load requests, load cells), each a
 * string or null. Gates (gate.h) read the comparison and write their
 * verdicts into it.
 */
#ifndef NEEDLE_DIFF_H
#define NEEDLE_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "report.h"

/* One case of the comparison: its matched attempts and their passes; of
 * them, the samples: pairs sent at temperature > 0 in both runs where
 * neither failed in transport or the usage audit (fungate.h). */
struct diff_case {
	size_t b_case;               /* the case: b.cases.c[b_case] */
	size_t total, a_pass, b_pass;
	size_t s_total, s_a_pass, s_b_pass;
};

/* The verdict of a gate (gate.h), and of a load cell of the comparison:
 * the worst of the verdicts of the gates that judged it. Worst last: a
 * gate's verdict is the worst of its cells'. */
enum gate_verdict { GATE_PASS, GATE_UNDERPOWERED, GATE_FAIL };

/* "pass", "fail" or "underpowered". */
static inline const char *gate_verdict_name(enum gate_verdict v)
{
	return v == GATE_FAIL ? "fail" : v == GATE_UNDERPOWERED ? "underpowered" : "pass";
}

/* The figures a load cell of the comparison sets side by side: output
 * throughput, TTFT P50 and P95, TPOT P95 (loadcells.h). */
#define DIFF_FIGS 4
extern const enum loadcells_fig diff_figs[DIFF_FIGS];

/* One gate's judgement of a load cell (gate.h). */
struct diff_judgement {
	const char *gate;          /* the gate's spec, borrowed from the gate */
	enum gate_verdict v;
	int have;                  /* `value` is set */
	double value, threshold;   /* B/A for a ratio gate, else B's figure */
	double lo, hi, mde;        /* the 90% interval and the smallest change
				      detectable; NAN for a point judgement */
	char advice[640];
};

/* A load cell of the comparison: both runs' cells, B over A of the figures
 * and the gates' judgements, the worst of them its verdict. diff["load"]
 * is made of them when the comparison is printed. */
struct diff_cell {
	const struct loadcells_cell *a, *b; /* the runs' cells (borrowed from
				      a.load and b.load), NULL where a run
				      lacks it */
	const struct loadcells_cell *named; /* a, else b: its case and level */
	int has_ratio[DIFF_FIGS];  /* B/A of diff_figs[i] is known */
	double ratio[DIFF_FIGS];
	int has_spec_ratio;        /* B/A of the servers' draft acceptance */
	double spec_ratio;
	struct diff_judgement *gates; /* owned, in the order the gates ran */
	size_t ngates, capgates;
	int judged;                /* a gate judged it: `verdict` is set */
	enum gate_verdict verdict;
};

/* A comparison. Its per-case parts are kept compact and made JSON objects
 * one at a time when printed or rendered (diff_print_json, diff_markdown). */
struct diff_result {
	cJSON *diff;             /* owned; its "cases", and the "cases" of its
				    "summary_a" and "summary_b", stand for the
				    tables below */
	struct report_sum a, b;  /* owned: each run's cases (a.s and b.s were
				    moved into diff) */
	struct diff_case *cases; /* owned: per case over matched attempts, in
				    order of first match */
	const struct loadcells_reqs *reqs_a, *reqs_b; /* borrowed from the
				    runs (report_run.load_reqs): their load
				    requests, for gates on per-request figures */
	size_t ncases, capcases;
	struct diff_cell *cells; /* owned: A's load cells, then B's that A
				    lacks; diff["load"] stands for them */
	size_t ncells;
};

/* Loads run folder `dir` for a comparison: report_load_cases (`globs` as
 * there) with the index of its records diff_runs compares built in the same
 * pass, so each journal is read once. The caller frees the run with
 * report_run_free. Errors as report_load_cases. */
enum err diff_load(const char *dir, const char *const *globs, size_t nglobs,
		   struct report_run **out, struct diag *d);

/* Compares runs `a` and `b` (borrowed, and kept borrowed by *out: they must
 * outlive it; loaded by diff_load, else their journals are read again for
 * the index) into *out (released with diff_result_release; on failure
 * nothing is left to free). ERR_NOMEM; report_summary's errors. */
enum err diff_runs(struct report_run *a, struct report_run *b,
		   struct diff_result *out, struct diag *d);
/* Frees what `res` holds. */
void diff_result_release(struct diff_result *res);

/* Renders a comparison (gates included) as Markdown, appended to `out`. */
enum err diff_markdown(const struct diff_result *res, struct buf *out, struct diag *d);

/* Appends the comparison as indented JSON (json.h's JSON_PRETTY, a final
 * newline) to `out`, or, when `f` is not NULL, writes it to f as it is made
 * (json.h: jout_print). ERR_NOMEM, ERR_LIMIT, ERR_IO. */
enum err diff_print_json(const struct diff_result *res, struct buf *out, FILE *f,
			 struct diag *d);

#endif
