/*
 * html — a run's report, or a comparison's decision, as one self-contained
 * HTML page, for a person rather than a pipeline. The page refers to nothing
 * outside itself: no script, no stylesheet, font or image from elsewhere, no
 * link out (its Content-Security-Policy, HTML_CSP, says so to the browser
 * too), so it can be mailed, attached to a CI job or opened offline as it
 * is. Text from the runs (case ids, reasons, answers, gate specs) is escaped
 * (xml.h); pictures are inline as data: URIs.
 *
 * The run's page (html_write): the run's facts, the attempts with their 95%
 * interval, one row per case, the failures with an example each, the load
 * levels, the latency percentiles and the pictures (recall.png, load.png).
 * Everything on it is the summary's (report.h), the same numbers as
 * summary.md.
 *
 * The comparison's page (html_diff_write), everything read from the diff's
 * JSON tree (diff.h, with the verdicts gate.h wrote): the verdict first (the
 * worst gate's, with how many passed, failed and were underpowered; "NO
 * GATE" without any), what breaks like for like (incomplete, missing), both
 * runs' facts, the warnings and what to do, the gates with their detail,
 * every load cell with both runs' figures and B/A, one row per cell and gate
 * with its verdict, value, 95% interval, threshold, smallest detectable
 * change and advice (members an item has beyond those are shown as they are,
 * in "more"), the decision picture (diffplot_decision_png), and the
 * attempts' pass rates with each pass->fail flip.
 */
#ifndef NEEDLE_HTML_H
#define NEEDLE_HTML_H

#include "base/buf.h"
#include "base/err.h"
#include "diff.h"
#include "report.h"

/* Appends the page of the rendered files `f` (borrowed: its summary and
 * pictures) to `out`. ERR_NOMEM, ERR_LIMIT ("cannot write the HTML
 * report: ..."); `out` may hold a partial page on error. */
enum err html_write(const struct report_files *f, struct buf *out, struct diag *d);

/* The pages' Content-Security-Policy: nothing loaded but inline pictures
 * and the inline style. */
#define HTML_CSP "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

/* Appends the page of comparison `res` (borrowed, after the gates) to
 * `out`. ERR_NOMEM, ERR_LIMIT ("cannot write the HTML page of
 * the comparison: ..."), diffplot's errors; `out` may hold a partial page on
 * error. */
enum err html_diff_write(const struct diff_result *res, struct buf *out, struct diag *d);

#endif
