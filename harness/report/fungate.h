/*
 * fungate — the functional gates judged against sampling noise:
 * no_new_failures, pass_rate_delta and recall_delta@DEPTH (gate.h) on a
 * comparison (diff.h) whose attempts were sent at temperature > 0. Such an
 * attempt is a sample of its case's pass rate: a pass in A and a failure in
 * B is a regression only when more of them than sampling explains. Nothing
 * else is sampling, and stays judged as a point, the way gate.h always did:
 * a failure in transport or the usage audit, an attempt at temperature 0 or
 * one whose request left the temperature to the server (record.h's
 * "temperature" null, as in records written before it existed), a failed
 * attempt only B has, recall at temperature 0.
 *
 * no_new_failures:
 *  - hard: a pass->fail flip that is not marked "sampled" (diff.h), or a
 *    failed attempt only in B, fails the gate;
 *  - per case: A's sampled counts give each case's pass rate a posterior
 *    (the prior Beta fitted to A's per-case rates by moments,
 *    stats_beta_fit, at least FUNGATE_PRIOR_FLOOR attempts' worth), and B's
 *    count its p-value under the beta-binomial predictive of that rate
 *    (B's rate equal to A's); the p-values are Holm-corrected over the
 *    sampled cases (stats_holm);
 *  - overall: every sampled attempt pooled, B's passes against A's by the
 *    one-sided mid-p of Fisher's exact test (the pairs are matched, so both
 *    runs have the same attempts of each case and pooling adds no bias).
 * The gate FAILS when a hard failure is there, or a case's corrected p is
 * below FUNGATE_CASE_ALPHA, or the pooled p below FUNGATE_POOL_ALPHA; it is
 * UNDERPOWERED when it did not fail but a case's uncorrected p, or the
 * pooled p, is below FUNGATE_SUSPECT; else it passes. An underpowered case
 * says how many repeats would settle it: the smallest count of repeats at
 * which counts in the same proportions would fail it (at most
 * FUNGATE_REPEATS_MAX; beyond, that sampling cannot settle it).
 *
 * pass_rate_delta OP X and recall_delta@DEPTH OP X (OP >= or >), when some
 * of their attempts are samples: the observed delta D against X, with the
 * variance of the sampled part (Agresti-Caffo: one pass and one failure
 * added to each side) and none for the rest; p = P(a delta this low | the
 * true delta is X), normal. FAIL when p < FUNGATE_POOL_ALPHA, UNDERPOWERED
 * when p < FUNGATE_SUSPECT (with the repeats that would settle it), else
 * PASS. Any other operator is judged as a point.
 *
 * The levels were chosen by measurement (docs/statistics.md, "The
 * functional gates"; tests/bench/fungate_rates.sh).
 */
#ifndef NEEDLE_FUNGATE_H
#define NEEDLE_FUNGATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "diff.h"
#include "gate.h"

#define FUNGATE_CASE_ALPHA 0.005  /* per case, Holm-corrected */
#define FUNGATE_POOL_ALPHA 0.02   /* pooled; the delta gates */
#define FUNGATE_SUSPECT 0.05      /* uncorrected: underpowered below it */
#define FUNGATE_PRIOR_FLOOR 8.0   /* the prior is worth at least this many attempts */
#define FUNGATE_REPEATS_MAX 100   /* advice never asks for more repeats a case */

/* A functional gate's judgement. */
struct fungate_out {
	enum gate_verdict v;
	double value;      /* the gate's value: no_new_failures' count of
			      failures held against B (hard ones and cases
			      that failed), or the delta */
	char why[1400];    /* the detail: which cases were judged how, with
			      counts */
	cJSON *cases;      /* owned: the cases that did not pass, [{case,
			      verdict, n, a_pass, b_pass, p, p_holm, repeats}],
			      or NULL */
};

/* Whether gate `g` is one this module judges on `res` (no_new_failures
 * always; the delta gates when their attempts include samples). */
int fungate_judges(const struct diff_result *res, const struct gate *g);

/* Judges gate `g` (fungate_judges) on `res` into *out; the caller frees
 * out->cases (cJSON_Delete). ERR_NOMEM. */
enum err fungate_eval(const struct diff_result *res, const struct gate *g,
		      struct fungate_out *out, struct diag *d);

/* The p-value of one sampled case: B's kb passes of n against A's ka of n
 * under the beta-binomial predictive of the posterior Beta(a + ka, b + n -
 * ka) (P(B's count <= kb)). */
double fungate_case_p(long ka, long kb, long n, double a, double b);

/* The smallest repeats m (n < m <= FUNGATE_REPEATS_MAX) at which a case with
 * ka and kb passes of n, scaled to m in the same proportions, would fail
 * among `family` sampled cases (fungate_case_p * family <
 * FUNGATE_CASE_ALPHA); 0 when none would. */
long fungate_case_repeats(long ka, long kb, long n, double a, double b, size_t family);

#endif
