/*
 * format — the outputs of `needle report`, one table: each format's name,
 * how it gathers what it needs in the run's one pass over its journal, and
 * how it is written from the run so read and the files rendered from it
 * (report.h). The command line's --format, its --help, the manual page and
 * the shell completion name the formats from this table.
 *
 *  - md, json, csv: the files report writes (summary.md, summary.json,
 *    attempts.csv), printed as written;
 *  - jsonl: attempts.csv's rows as JSON Lines (rows.h);
 *  - junit: a JUnit XML report, one testcase per attempt (junit.h);
 *  - prom: Prometheus text exposition of the summary (prom.h);
 *  - vllm-bench: one line per load level in vllm bench serve's keys (vbench.h);
 *  - html: one self-contained page (html.h).
 */
#ifndef NEEDLE_FORMAT_H
#define NEEDLE_FORMAT_H

#include "base/buf.h"
#include "base/err.h"
#include "report.h"

struct report_format {
	const char *name;
	/* NULL, or sets `also` up (zeroed on entry) to gather what the format
	 * needs from each record in report_load's one pass, appending to `out`
	 * or keeping it in its ctx; the format's `write` then finds the ctx in
	 * the run's also.ctx */
	enum err (*fold)(struct buf *out, struct report_also *also, struct diag *d);
	/* appends the format to `out` from the run (loaded with the fold) and
	 * its rendered files */
	enum err (*write)(const struct report_run *r, const struct report_files *f, struct buf *out,
			  struct diag *d);
};

#define REPORT_NFORMATS 8
extern const struct report_format report_formats[REPORT_NFORMATS];

/* The format called `name`, or NULL. */
const struct report_format *report_format_named(const char *name);

#endif
