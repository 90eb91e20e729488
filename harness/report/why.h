/*
 * why — the reasons attempts failed, in words a person can act on: each
 * failed result record (results.h) is read into its reasons, like reasons of
 * many attempts are grouped under one key, and a run whose failures share an
 * obvious cause (every request got HTTP 404, every prompt was too long for
 * the server, the token counts are all off by the same amount) gets one
 * sentence of advice. report.c builds the summary's "failures" and "advice"
 * from these; the CSV's first_reason column and run's end-of-run lines are
 * the same text.
 *
 * Conventions:
 *  - an attempt that failed at transport has only its transport reasons (its
 *    empty answer failing the grade is a consequence, not a cause); one whose
 *    transport was clean has its audit reason, if any, then its grade reasons;
 *  - keys: a transport failure code ("http_status 404" with its status), an
 *    audit check ("usage_delta outside tolerance", "no usage reported"), a
 *    grade reason cut before its per-attempt detail (the first " (" or, when
 *    at least 8 characters precede it, the first ": "), so "needle at depth
 *    50%: ..." groups by depth and "answer is not JSON (parse error ...)"
 *    groups as one.
 */
#ifndef NEEDLE_WHY_H
#define NEEDLE_WHY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "base/json.h"
#include "run/record.h"

#define WHY_TEXT_MAX 512   /* bytes of a key or reason text, NUL included */
#define WHY_REASONS_MAX 8  /* reasons kept per attempt */
#define WHY_ANSWER_MAX 160 /* bytes of an answer quoted as an example */

/* One reason an attempt failed. */
struct why_reason {
	const char *stage;      /* "transport", "audit" or "grade" (static) */
	char key[WHY_TEXT_MAX]; /* what groups like reasons across attempts */
	char text[WHY_TEXT_MAX];/* this attempt's full reason */
};

/* Fills out[0..max) with the reasons the record `v` views (borrowed) failed
 * and returns how many; 0 for a pass. A failed attempt with no stated reason
 * gets one ("verdict 'X' with no reason recorded"). */
size_t why_reasons(const struct record_view *v, struct why_reason *out, size_t max);
/* The stage of the first reason of the record `v` views ("transport",
 * "audit", "grade") and its text into out[0..cap); "" both for a pass.
 * Returns the stage. */
const char *why_first(const struct record_view *v, char *out, size_t cap);

/* The failures of a run, folded one record at a time: per reason group its
 * count, the distinct case ids (first-seen order) and the first attempt as
 * an example; and what the advice needs. Memory grows with the distinct
 * (reason, case) pairs, never with the records. */
struct why_fold;

/* A new empty fold for run folder `dir` (copied; raw paths are DIR/raw);
 * NULL when out of memory. */
struct why_fold *why_fold_new(const char *dir);
/* Frees the fold. Accepts NULL. */
void why_fold_free(struct why_fold *w);
/* Folds the record `v` views (borrowed, not kept) in. ERR_NOMEM, after
 * which the fold stays failed. */
enum err why_fold_take(struct why_fold *w, const struct record_view *v);
/* Adds to `summary` (a summary under construction in `jb`): "failures", an
 * array of {stage, key, count, cases: [ids, first-seen order], example:
 * {case, repeat, seed, reason, answer, raw}} sorted by count, most first
 * (raw is DIR/ the record's raw path, or null); and "advice", an array of
 * sentences for the causes the records make obvious (empty when none).
 * `manifest` (may be NULL) is borrowed. Sorts the fold's groups. Errors,
 * a failed take's included, stay in `jb` (ERR_NOMEM). */
void why_fold_summarise(struct why_fold *w, const cJSON *manifest, struct json_build *jb,
			cJSON *summary);

/* What a comparison of two runs says about a usage audit that broke: `n`
 * matched attempts passed the audit in the baseline A and fail it in the
 * candidate B (`delta` the first one's usage_delta, `same_delta` whether
 * all n were off by it). With `same_files` (A and B used the same tokenizer
 * and template: equal SHA-256 in both manifests) the local files cannot be
 * the cause, and the advice says the server changed (its tokenizer, chat
 * template or usage counting); else it points at B's --tokenizer and
 * --template. Into out[cap]; "" when n is 0. */
void why_audit_diff(size_t n, double delta, int same_delta, int same_files,
		    char *out, size_t cap);

#endif
