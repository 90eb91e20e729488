/*
 * diff — two run folders compared like with like. Attempts are matched by
 * their key (case id, repeat, seed: record_key), each journal read as a
 * stream into a compact entry per record; only matched attempts are
 * compared for flips, per-case pass rates and usage-delta changes, and the
 * attempts found in one run only are counted. Recall by depth and latency
 * percentiles come from each run's report summary (all of its attempts), with
 * their sample counts. When either run used several replicas, "by_endpoint"
 * gives per base URL each run's pass rate over all its attempts there and
 * the flips of the matched attempts that replica served in B. A difference
 * in suite SHA-256, tokenizer or template
 * hash, or served model, is a warning: the runs may not be comparable.
 * "advice" says what to do about what broke between them: matched attempts
 * that passed the usage audit in A and fail it in B point at the server when
 * both runs used the same tokenizer and template (why_audit_diff).
 *
 * Gates turn the comparison into an exit status. Grammar:
 *
 *	GATE   := "no_new_failures" | METRIC OP NUMBER
 *	METRIC := NAME | NAME "@" ARG
 *	OP     := ">=" | "<=" | ">" | "<" | "=="
 *
 * Metrics (absolute ones are read from run B, the new run):
 *	pass_rate            B's overall pass rate (0..1, all attempts)
 *	pass_rate@CASE       B's pass rate of one case id
 *	pass_rate_delta      B minus A over the matched attempts
 *	flips                number of pass->fail flips
 *	recall               B's recall over all needles (0..1)
 *	recall@DEPTH         B's recall at DEPTH percent
 *	recall_delta@DEPTH   B minus A at DEPTH
 *	recall_residue@M:R   B's recall at prompt lengths = R mod M (M 2, 4 or
 *	                     8; jitter cases, probesum.h)
 *	max_abs_usage_delta  B's largest |usage_delta| (tokens)
 *	T_pP                 B's percentile P (50, 90, 99) of timing T (ms)
 *	T_pP_ratio           B's over A's
 *	(T: first_byte, ttft, ttfc, e2e, tpot)
 *	no_new_failures      no pass->fail flip and no failed attempt that only
 *	                     B has
 *
 * A gate whose metric has no data (no samples, a case or depth absent, a
 * ratio over 0) fails, and says so. Every gate fails, with the reason, when
 * either run is incomplete (fewer attempts recorded than its manifest
 * planned: record_plan_done) or no attempt matched, unless the caller allows
 * incomplete runs; a run whose manifest has no plan counts as complete. A
 * gate on a case that is in neither run is a usage error (diff_gate_check).
 */
#ifndef NEEDLE_DIFF_H
#define NEEDLE_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "report.h"

#define DIFF_GATE_ARG_MAX 256 /* bytes of a gate's @ARG */

enum diff_op { DIFF_GE, DIFF_LE, DIFF_GT, DIFF_LT, DIFF_EQ };

/* A parsed gate; `spec` is borrowed from the caller. */
struct diff_gate {
	const char *spec;              /* as given */
	char name[32];                 /* metric name without @ARG */
	char arg[DIFF_GATE_ARG_MAX];   /* "" when none */
	enum diff_op op;
	double value;
};

/* Whether `v` OP `want` holds. */
int diff_holds(double v, enum diff_op op, double want);

/* Parses `spec` into `g` (borrowing spec). ERR_USAGE names the gate and what
 * is wrong: unknown metric, missing or unexpected @ARG, bad operator or
 * number. */
enum err diff_gate_parse(const char *spec, struct diff_gate *g, struct diag *d);

/* One case of the comparison: its matched attempts and their passes. */
struct diff_case {
	size_t b_case;               /* the case: b.cases.c[b_case] */
	size_t total, a_pass, b_pass;
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
	size_t ncases, capcases;
};

/* Compares runs `a` and `b` (borrowed) into *out (released with
 * diff_result_release; on failure nothing is left to free); its diff's
 * "incomplete" is why no gate may pass (a run incomplete, no attempt
 * matched) or null. ERR_NOMEM; report_summary's errors. */
enum err diff_runs(const struct report_run *a, const struct report_run *b,
		   struct diff_result *out, struct diag *d);
/* Frees what `res` holds. */
void diff_result_release(struct diff_result *res);

/* ERR_USAGE when gate `g` names a case (pass_rate@CASE) that neither run of
 * the comparison has. */
enum err diff_gate_check(const struct diff_result *res, const struct diff_gate *g,
			 struct diag *d);

/* Evaluates gate `g` on a comparison and appends {"gate", "ok", "value",
 * "detail"} to its "gates" array; *ok = 1 when it holds (never when
 * diff["incomplete"] says why not, unless `allow_incomplete`). ERR_NOMEM
 * only. */
enum err diff_gate_eval(struct diff_result *res, const struct diff_gate *g,
			int allow_incomplete, int *ok, struct diag *d);

/* Renders a comparison (gates included) as Markdown, appended to `out`. */
enum err diff_markdown(const struct diff_result *res, struct buf *out, struct diag *d);

/* Appends the comparison as indented JSON (json.h's JSON_PRETTY, a final
 * newline) to `out`, or, when `f` is not NULL, writes it to f as it is made
 * (jout.h). ERR_NOMEM, ERR_LIMIT, ERR_IO. */
enum err diff_print_json(const struct diff_result *res, struct buf *out, FILE *f,
			 struct diag *d);

#endif
