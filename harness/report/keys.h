/*
 * keys — the member names of the two documents report/ writes, each named
 * here only: a run's summary (summary.json, report.h) and the comparison of
 * two runs (needle diff --format json, diff.h). Their writers and every
 * reader — the Markdown, HTML, JUnit, Prometheus and picture renderers, the
 * gates, the command line — spell them through these.
 *
 * A member that holds a copy of another document's member keeps that
 * document's name: a record's case, repeat, seed, base_url, replica, raw,
 * failures and timing figures (RK_, run/record.h), a load cell's case,
 * concurrency or rate and figures (LC_, load/loadcells.h). A member of the
 * comparison that holds the same kind of thing as a summary's (a pass count,
 * a rate and its interval, a recall depth) keeps the summary's name.
 */
#ifndef NEEDLE_REPORT_KEYS_H
#define NEEDLE_REPORT_KEYS_H

/* summary.json: {needle_summary, run, attempts, fail_stages, cases,
 * endpoints, failure_codes, finish_reasons, failures, advice, audit, latency,
 * recall, load (loadcells.h), probes (probesum.h)} */
#define SK_NEEDLE_SUMMARY "needle_summary"
#define SK_RUN "run"
#define SK_ATTEMPTS "attempts"
#define SK_FAIL_STAGES "fail_stages"
#define SK_CASES "cases"
#define SK_ENDPOINTS "endpoints"
#define SK_FAILURE_CODES "failure_codes"
#define SK_FINISH_REASONS "finish_reasons"
#define SK_FAILURES "failures"
#define SK_ADVICE "advice"
#define SK_AUDIT "audit"
#define SK_LATENCY "latency"
#define SK_RECALL "recall"
#define SK_PROBES "probes"
/* run: the manifest's facts */
#define SK_DIR "dir"
#define SK_MODEL "model"
#define SK_MAX_MODEL_LEN "max_model_len"
#define SK_BASE_URL "base_url"
#define SK_SERVER_VERSION "server_version"
#define SK_SERVER_KIND "server_kind"
#define SK_SUITE "suite"
#define SK_SUITE_PATH "suite_path"
#define SK_SUITE_SHA256 "suite_sha256"
#define SK_TOKENIZER_KIND "tokenizer_kind"
#define SK_TOKENIZER_SHA256 "tokenizer_sha256"
#define SK_TEMPLATE "template"
#define SK_TEMPLATE_SHA256 "template_sha256"
#define SK_HARNESS_VERSION "harness_version"
#define SK_HARNESS_COMMIT "harness_commit"
#define SK_RUN_ID "run_id"
#define SK_STARTED_AT "started_at"
#define SK_ENDED_AT "ended_at"
#define SK_MERGE_NOTE "merge_note"
#define SK_HAS_MANIFEST "has_manifest"
/* attempts, and every count with a rate: cases[], endpoints[] */
#define SK_TOTAL "total"
#define SK_PASS "pass"
#define SK_FAIL "fail"
#define SK_RATE "rate"
#define SK_WILSON95 "wilson95"
#define SK_TORN_BYTES_SKIPPED "torn_bytes_skipped"
#define SK_INCOMPLETE "incomplete"
#define SK_PLANNED "planned"
#define SK_PLANNED_DONE "planned_done"
#define SK_PLANNED_NOTE "planned_note"
#define SK_COMPLETE "complete"
/* cases[] */
#define SK_ID "id"
#define SK_KIND "kind"
#define SK_REASONS "reasons"
#define SK_FIRST_REASON "first_reason"
/* failures[] (why.h) and their example */
#define SK_STAGE "stage"
#define SK_KEY "key"
#define SK_COUNT "count"
#define SK_EXAMPLE "example"
#define SK_REASON "reason"
#define SK_ANSWER "answer"
/* audit */
#define SK_ENABLED "enabled"
#define SK_FAILED "failed"
#define SK_SAMPLES "samples"
#define SK_DELTAS "deltas"
#define SK_DELTA "delta"
#define SK_MAX_ABS_DELTA "max_abs_delta"
/* latency: per timing figure (RK_*_MS) */
#define SK_N "n"
#define SK_P50 "p50"
#define SK_P90 "p90"
#define SK_P99 "p99"
/* recall */
#define SK_DEPTHS "depths"
#define SK_LENGTHS "lengths"
#define SK_CELLS "cells"
#define SK_BY_DEPTH "by_depth"
#define SK_BY_LENGTH "by_length"
#define SK_LATENCY_BY_LENGTH "latency_by_length"
#define SK_DEPTH "depth"
#define SK_FOUND "found"
#define SK_TRANSPORT_FAILED "transport_failed"
/* probes (probesum.h) */
#define SK_RESIDUE "residue"
#define SK_CACHE "cache"
#define SK_PASSED "passed"
#define SK_NEEDLES "needles"
#define SK_WRONG "wrong"

/* The comparison: {needle_diff, a, b (each run's SK_RUN), warnings,
 * endpoints, usage, overall, flips, cases, usage_changes, only_b_failed,
 * by_endpoint, recall_by_depth, latency, load, advice, incomplete, missing,
 * summary_a, summary_b, gates} */
#define DK_NEEDLE_DIFF "needle_diff"
#define DK_A "a"
#define DK_B "b"
#define DK_WARNINGS "warnings"
#define DK_ENDPOINTS "endpoints"
#define DK_USAGE "usage"
#define DK_OVERALL "overall"
#define DK_FLIPS "flips"
#define DK_CASES "cases"
#define DK_USAGE_CHANGES "usage_changes"
#define DK_ONLY_B_FAILED "only_b_failed"
#define DK_BY_ENDPOINT "by_endpoint"
#define DK_RECALL_BY_DEPTH "recall_by_depth"
#define DK_LATENCY "latency"
#define DK_LOAD "load"
#define DK_ADVICE "advice"
#define DK_INCOMPLETE "incomplete"
#define DK_MISSING "missing"
#define DK_SUMMARY_A "summary_a"
#define DK_SUMMARY_B "summary_b"
#define DK_GATES "gates"
/* overall */
#define DK_DELTA "delta"
#define DK_MATCHED "matched"
#define DK_MATCHED_A "matched_a"
#define DK_MATCHED_B "matched_b"
#define DK_MATCHED_DELTA "matched_delta"
#define DK_ONLY_A "only_a"
#define DK_ONLY_B "only_b"
#define DK_RECALL_PROMPT_DIFFERS "recall_prompt_differs"
#define DK_RECALL_SAMPLED "recall_sampled"
/* flips, by_endpoint */
#define DK_PASS_TO_FAIL "pass_to_fail"
#define DK_FAIL_TO_PASS "fail_to_pass"
#define DK_SAMPLED "sampled"
/* cases[] and a functional gate's cases[] (fungate.h) */
#define DK_A_PASS "a_pass"
#define DK_B_PASS "b_pass"
#define DK_P "p"
#define DK_P_HOLM "p_holm"
#define DK_REPEATS "repeats"
/* usage */
#define DK_A_MAX_ABS_DELTA "a_max_abs_delta"
#define DK_B_MAX_ABS_DELTA "b_max_abs_delta"
#define DK_A_SAMPLES "a_samples"
#define DK_B_SAMPLES "b_samples"
/* load[]: a cell of either run, and latency's ratios */
#define DK_LEVEL "level"
#define DK_RATIO "ratio"
#define DK_VERDICT "verdict"
/* gates[] and a load cell's gates[] */
#define DK_GATE "gate"
#define DK_OK "ok"
#define DK_VALUE "value"
#define DK_DETAIL "detail"
#define DK_THRESHOLD "threshold"
#define DK_CI_LOW "ci_low"
#define DK_CI_HIGH "ci_high"
#define DK_MDE "mde"

#endif
