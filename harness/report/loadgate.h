/*
 * loadgate — diff gates on load cells (loadcells.h), the cutover decision of
 * the field reports (seed 000: at the target concurrency, output throughput
 * down at most 10%, TTFT P50 up at most 10% and P95 at most 15%, and 100%
 * success).
 *
 *	output_tps_ratio, ttft_p50_ratio, ttft_p95_ratio, tpot_p95_ratio,
 *	e2e_p50_ratio          B's figure over A's, cell by cell
 *	success_rate, slo_attainment, goodput_rps, achieved_rate, output_tps,
 *	ttft_p50_ms, ttft_p95_ms, tpot_p95_ms, e2e_p50_ms, lag_p99_ms
 *	                       B's figure
 *
 * "@CASE/c32" or "@CASE/r0.3" picks one cell, "@CASE" every level of a case,
 * no "@" every load cell of B. A gate holds when it holds for every cell it
 * picks; it fails when it picks none, and for a cell that is missing from A
 * (ratios), or invalid (no valid round) in either run. The failing cells are
 * named in the detail.
 */
#ifndef NEEDLE_LOADGATE_H
#define NEEDLE_LOADGATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "diff.h"

/* The gates `--gate cutover` stands for, NULL-terminated. */
extern const char *const loadgate_cutover[];

/* Whether `name` (without @ARG) is a load metric. */
int loadgate_known(const char *name);

/* Evaluates `g` on the "load" objects of runs A and B (borrowed; either may
 * be NULL): *ok, *value (the worst cell's value, when any cell had one) and a
 * detail text in `why`. Returns 0 when no value could be had for any picked
 * cell. */
int loadgate_eval(const cJSON *load_a, const cJSON *load_b, const struct diff_gate *g,
		  int *ok, double *value, char *why, size_t cap);

#endif
