/*
 * html — a run's report as one self-contained HTML page, for a person
 * rather than a pipeline: the run's facts, the attempts with their 95%
 * interval, one row per case, the failures with an example each, the load
 * levels, the latency percentiles and the pictures (recall.png, load.png)
 * inline as data: URIs. The page refers to nothing outside itself: no
 * script, no stylesheet, font or image from elsewhere, no link out, so it
 * can be mailed, attached to a CI job or opened offline as it is.
 *
 * Everything on it is the summary's (report.h), the same numbers as
 * summary.md; text from the run (case ids, reasons, answers) is escaped
 * (xml.h).
 */
#ifndef NEEDLE_HTML_H
#define NEEDLE_HTML_H

#include "base/buf.h"
#include "base/err.h"
#include "report.h"

/* Appends the page of the rendered files `f` (borrowed: its summary and
 * pictures) to `out`. ERR_NOMEM, ERR_LIMIT ("cannot write the HTML
 * report: ..."); `out` may hold a partial page on error. */
enum err html_write(const struct report_files *f, struct buf *out, struct diag *d);

#endif
