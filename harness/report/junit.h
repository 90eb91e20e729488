/*
 * junit — a run, or a comparison's verdicts, as a JUnit XML report, the
 * test-report format CI systems render (GitLab's unit test reports, Jenkins' junit step, GitHub actions
 * that publish test results): one <testcase> per recorded attempt, a
 * <failure> for each attempt that failed, with its first reason as the
 * message, its stage as the type and every reason in the text.
 *
 * The shape is the common JUnit schema's (testsuites > testsuite >
 * properties, testcase > failure): <testsuites name="needle" tests failures
 * errors="0" time> holds one <testsuite name="SUITE" tests failures errors
 * skipped timestamp time> whose <properties> are run_id, model, base_url,
 * harness_commit and run_dir; a testcase's classname is "SUITE.CASE", its
 * name "CASE repeat R[ seed S]" and for a load request " level L pre-check",
 * " level L warm-up request I" or " level L round N request I" (unique in
 * the run: the attempt key, record.h), its time the attempt's E2E in seconds. A
 * pre-check or warm-up request of a load case is a testcase like any other
 * attempt: the run judged it. Times: the testsuite's is the sum of its
 * testcases' (attempts overlap, so it is not the wall time).
 *
 * A comparison's verdicts (junit_diff_write, `needle diff --format junit`):
 * <testsuites name="needle diff" tests failures errors="0" time="0"> holds
 * one <testsuite name="needle diff" tests failures errors="0" skipped
 * time="0"> whose <properties> are a_dir, b_dir, a_model, b_model, a_run_id
 * and b_run_id. Per gate (diff["gates"], in order; a spec given twice
 * counts once): one testcase per load cell it judged, classname the gate's
 * spec and name "CASE/LEVEL", from the cell's item (gate.h); and one
 * testcase classname "diff", name the spec, for the gate as a whole when it
 * judged no load cell (every gate that is not a load gate, and a load gate
 * that picked none) or when its verdict is worse than all its cells' (every
 * gate fails on an incomplete run or when B lacks what A has). A pass is an
 * empty testcase; a fail has a <failure type="fail"> whose message is the
 * advice (a cell) or the detail (a gate) and whose text adds the value, the
 * interval and the threshold; an underpowered verdict is a <skipped> with
 * the same message and text. Skipped, not failed: an underpowered cell is
 * one the runs could not judge either way, which is what a CI system's
 * "skipped" means, and it keeps apart from real regressions in every CI
 * view; `needle diff` still exits 4 for it, so a pipeline that must not let
 * it through fails the job on the exit status. Times are 0: a comparison
 * measures nothing itself.
 */
#ifndef NEEDLE_JUNIT_H
#define NEEDLE_JUNIT_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "diff.h"
#include "report.h"

/* A run's JUnit XML, made in report_load's one pass over its journal (a torn
 * last line skipped): junit_fold sets `also` up to gather each record's
 * testcase (its buffer capped as `out` is); junit_write then appends the
 * document to `out`, from the run so loaded (its manifest.json if there is
 * one) and what its `also` gathered. ERR_NOMEM, ERR_LIMIT; `out` may hold a
 * partial document on error. */
enum err junit_fold(const struct buf *out, struct report_also *also, struct diag *d);
enum err junit_write(const struct report_run *r, struct buf *out, struct diag *d);

/* Appends the JUnit XML of comparison `res` (borrowed, after the gates) to
 * `out`. ERR_NOMEM, ERR_LIMIT ("cannot write the JUnit
 * report of the comparison: ..."); `out` may hold a partial document on
 * error. */
enum err junit_diff_write(const struct diff_result *res, struct buf *out, struct diag *d);

#endif
