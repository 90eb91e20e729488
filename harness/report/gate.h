/*
 * gate — conditions that turn a comparison (diff.h) into a verdict: the gate
 * grammar, its metrics, and the noise-aware judgement of load cells. diff.c
 * makes the comparison; gates read it and write their results into it
 * ("gates", and each load cell's judgements and verdict, struct diff_cell),
 * never the other way round.
 *
 * Grammar:
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
 *	recall_delta@DEPTH   B minus A at DEPTH; without @DEPTH, over every needle
 *	recall_residue@M:R   B's recall at prompt lengths = R mod M (M 2, 4 or
 *	                     8; jitter cases, probesum.h)
 *	max_abs_usage_delta  B's largest |usage_delta| (tokens)
 *	T_pP                 B's percentile P (50, 90, 99) of timing T (ms)
 *	T_pP_ratio           B's over A's
 *	(T: first_byte, ttft, ttfc, e2e, tpot)
 *	no_new_failures      no pass->fail flip and no failed attempt that only
 *	                     B has
 * no_new_failures, and pass_rate_delta and recall_delta@DEPTH when their
 * attempts were sent at temperature > 0, are judged against sampling noise
 * (fungate.h): pass, fail or underpowered, the cases that did not pass in the
 * gate's "cases"; what is not sampling (transport, usage audit, temperature
 * 0 or unset, failures only B has) stays a hard fail.
 *
 * Load cells (loadcells.h), the cutover decision (docs/cutover.md "The cutover";
 * at each level, output throughput down at most 10%, TTFT P50 up at most
 * 10% and P95 at most 15%, and 100% success):
 *	output_tps_ratio, ttft_p50_ratio, ttft_p95_ratio, tpot_p95_ratio,
 *	e2e_p50_ratio, goodput_ratio
 *	                     B's figure over A's, cell by cell, judged against
 *	                     the runs' noise (loadci.h)
 *	success_rate, slo_attainment, goodput_rps, achieved_rate, output_tps,
 *	ttft_p50_ms, ttft_p95_ms, tpot_p95_ms, e2e_p50_ms, lag_p99_ms
 *	                     B's figure, judged as a point
 *	spec_acceptance_ratio
 *	                     B's over A's acceptance rate of speculative
 *	                     decoding (accepted / drafted tokens, the server's
 *	                     counters with --metrics), a point per cell; a cell
 *	                     where either run lacks them fails as not measured
 * "@CASE/c32" or "@CASE/r0.3" picks one cell, "@CASE" every level of a case,
 * no "@" every load cell of B. Ratio gates ask whether B is no worse than A
 * by more than the threshold (loadci.h): a cell passes when the 90%
 * interval of the ratio lies wholly on the good side of the threshold,
 * fails when it lies wholly beyond it and the difference is above the
 * absolute floor (1 ms for TTFT and E2E, 0.1 ms for TPOT, 1 tok/s, 0.01
 * req/s), and is underpowered when it holds the threshold — with advice in
 * rounds or requests and minutes at the cells' measured pace, and what
 * dominates the noise. A gate fails when any cell it picks fails, or it
 * picks none, or a picked cell is missing from A (ratios) or has no valid
 * round in either run; else it is underpowered when any cell is; else it
 * passes. The failing cells are named in the detail.
 *
 * `cutover` (gate_expand) stands for output_tps_ratio>=0.9,
 * ttft_p50_ratio<=1.1, ttft_p95_ratio<=1.15, success_rate>=1 on every cell,
 * and, on the cells that have an SLO attainment figure (rate levels, or an
 * SLO set), goodput_ratio>=0.9 and slo_attainment>0: a candidate whose
 * goodput collapses where the baseline met its SLO fails, and a cell where
 * no request met the SLO cannot vouch for anything; then no_new_failures and
 * recall_delta>=0 (fungate.h: beyond sampling when sampled). A part that
 * neither run has (no load case, no recall) passes and says so, so that runs
 * without load cases are judged on the rest.
 *
 * Like for like: every gate fails, with the reason, when either run is
 * incomplete or no attempt matched (diff["incomplete"]), unless
 * GATE_ALLOW_INCOMPLETE, and when B lacks attempts, cases or load levels
 * that A has (diff["missing"]), unless GATE_ALLOW_MISSING. A gate whose
 * metric has no data fails, and says so. A gate on a case that is in
 * neither run is a usage error (gate_check).
 */
#ifndef NEEDLE_GATE_H
#define NEEDLE_GATE_H

#include <stddef.h>

#include "base/err.h"
#include "diff.h"

#define GATE_ARG_MAX 256 /* bytes of a gate's @ARG */
#define GATE_CUTOVER_N 8 /* gates `cutover` stands for */

enum gate_op { GATE_GE, GATE_LE, GATE_GT, GATE_LT, GATE_EQ };

/* Flags of gate_eval. */
enum {
	GATE_ALLOW_INCOMPLETE = 1 << 0, /* gate although a run is incomplete */
	GATE_ALLOW_MISSING = 1 << 1     /* gate although B lacks what A has */
};

/* A parsed gate; `spec` is borrowed from the caller (or static). */
struct gate {
	const char *spec;              /* as given */
	char name[32];                 /* metric name without @ARG */
	char arg[GATE_ARG_MAX];        /* "" when none */
	enum gate_op op;
	double value;
	int cutover;                   /* one of `cutover`'s: with nothing to judge
					  in either run (no load case, no recall), it
					  passes and says so */
	int slo_only;                  /* cutover's SLO gates: only the cells with
					  an SLO attainment figure; none is fine */
};

/* Parses `spec` into `g` (borrowing spec). ERR_USAGE names the gate and what
 * is wrong: unknown metric, missing or unexpected @ARG, bad operator or
 * number. */
enum err gate_parse(const char *spec, struct gate *g, struct diag *d);

/* Parses one --gate value into out[0..*n): "cutover" gives its
 * GATE_CUTOVER_N gates, anything else one (gate_parse). ERR_LIMIT when
 * `cap` is too small; gate_parse's errors. */
enum err gate_expand(const char *spec, struct gate *out, size_t cap, size_t *n,
		     struct diag *d);

/* Whether `name` (without @ARG) is a load metric. */
int gate_is_load(const char *name);

/* ERR_USAGE when gate `g` names a case (pass_rate@CASE) that neither run of
 * the comparison has. */
enum err gate_check(const struct diff_result *res, const struct gate *g, struct diag *d);

/* Judges gate `g` on a comparison (GATE_ALLOW_* `flags`) into *v, appends
 * {"gate", "ok", "verdict", "value", "detail"} (and "cases" for a functional
 * gate with cases that did not pass, fungate.h) to its "gates" array and, for
 * a load gate, one struct diff_judgement to each load cell it judged (the
 * entry's {"gate", "verdict", "value", "threshold", "ci_low", "ci_high"
 * (the 90% interval), "mde" (its half-width, relative), "advice"} in
 * diff["load"]), whose verdict becomes the worst so far. ERR_NOMEM only. */
enum err gate_eval(struct diff_result *res, const struct gate *g, unsigned flags,
		   enum gate_verdict *v, struct diag *d);

#endif
