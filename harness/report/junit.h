/*
 * junit — a run as a JUnit XML report, the test-report format CI systems
 * render (GitLab's unit test reports, Jenkins' junit step, GitHub actions
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
 */
#ifndef NEEDLE_JUNIT_H
#define NEEDLE_JUNIT_H

#include "base/buf.h"
#include "base/err.h"

/* Appends the JUnit XML of run folder `dir` (its manifest.json if there is
 * one, its journal read as a stream, results_each: a torn last line skipped)
 * to `out`. ERR_NOMEM, ERR_LIMIT; results_each's and the manifest's
 * errors. `out` may hold a partial document on error. */
enum err junit_write(const char *dir, struct buf *out, struct diag *d);

#endif
