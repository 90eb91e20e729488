/*
 * needle report — summarise a run folder: writes RUN_DIR/summary.json,
 * summary.md, attempts.csv, recall.png for recall runs and load.png for load
 * runs, and prints one of them (or the attempts as JSON Lines).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "base/jget.h"
#include "base/json.h"
#include "report/format.h"
#include "report/keys.h"
#include "report/report.h"

static const char examples[] =
	"  needle report results/smoke-ref-good-20260101T120000.123Z\n"
	"  needle report results/recall-1m --format json | jq .recall.by_depth\n"
	"  needle report RUN_DIR --format csv > run.csv\n"
	"  needle report RUN_DIR --format junit > needle-junit.xml\n"
	"  needle report RUN_DIR --format prom > textfile-dir/needle.prom\n"
	"  needle report RUN_DIR --format vllm-bench | jq .output_throughput\n"
	"  needle report RUN_DIR --format html > report.html\n"
	"  needle report /read-only/run --out /tmp/report\n"
	"\n"
	"Pass rates count every recorded attempt (failures stay in the denominator)\n"
	"and carry 95% Wilson intervals; latency percentiles are nearest-rank with\n"
	"their sample counts. A run that recorded fewer attempts than its manifest\n"
	"planned is marked INCOMPLETE: done/planned (summary.md, stderr,\n"
	"summary.json's attempts). The Failures section names, for every transport code\n"
	"and every audit or grade reason, its count, its cases and one example with\n"
	"the model's answer and the raw stream's path. The CSV (RFC 4180, one row\n"
	"per attempt) loads as is into pandas or DuckDB; --format jsonl gives the\n"
	"same rows as JSON Lines. The other formats, for CI (junit), Prometheus\n"
	"and Grafana (prom), vllm bench serve's scripts (vllm-bench) and a browser\n"
	"(html), are described in docs/outputs.md. A torn last line of\n"
	"results.jsonl is skipped.\n"
	"When RUN_DIR cannot be written, the report is printed and a warning says\n"
	"so (--out DIR writes the files there). Exit 0 when the report was made\n"
	"(failed attempts are reported, not an error; use 'needle diff --gate' to\n"
	"fail a pipeline); 2 on a bad folder or a malformed results.jsonl (file,\n"
	"line and reason are named), or when --out cannot be written.\n";

/* Whether --out DIR is a folder the files can go into, asked before the
 * journal is read (a long read should not end in a mistyped path). */
static enum err out_usable(const char *out_dir, struct diag *d)
{
	struct stat st;

	if (stat(out_dir, &st) != 0)
		return diag_fail(d, ERR_IO, "--out '%s': %s (the folder must exist)", out_dir,
				 strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return diag_fail(d, ERR_IO, "--out '%s': not a folder", out_dir);
	if (access(out_dir, W_OK | X_OK) != 0)
		return diag_fail(d, ERR_IO, "--out '%s': cannot write into it: %s", out_dir,
				 strerror(errno));
	return ERR_OK;
}

/* Loads, renders and saves; prints the chosen format. A folder that cannot
 * be written (no --out) is a warning: the report still goes to stdout. */
static enum err report(const char *dir, const char *out_dir, const struct report_format *fmt,
		       struct diag *d)
{
	struct report_run *r = NULL;
	struct report_files f;
	struct report_also also = {0};
	struct buf shown;
	struct diag wd;
	enum err e;

	buf_init(&shown, BUF_MAX_DEFAULT);
	diag_init(&wd);
	if ((out_dir && (e = out_usable(out_dir, d))) ||
	    (fmt->fold && (e = fmt->fold(&shown, &also, d))) ||
	    (e = report_load(dir, fmt->fold ? &also : NULL, &r, d)) || (e = report_render(r, &f, d)))
		goto out;
	if (out_dir)
		e = report_save(&f, out_dir, d);
	else if (report_save(&f, dir, &wd))
		fprintf(stderr, "warning: %s; the report is printed only (--out DIR writes it elsewhere)\n",
			wd.msg);
	if (!e)
		e = fmt->write(r, &f, &shown, d);
	if (!e) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(f.summary.s, SK_ATTEMPTS);
		char note[160];

		fwrite(shown.data, 1, shown.len, stdout);
		if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a, SK_COMPLETE)))
			fprintf(stderr, "INCOMPLETE: %.0f/%.0f planned attempts recorded in '%s'%s\n",
				jget_num(a, SK_PLANNED_DONE), jget_num(a, SK_PLANNED), dir,
				report_plan_note(a, note, sizeof(note)));
	}
	report_files_release(&f);
out:
	buf_release(&shown);
	report_run_free(r);
	return e;
}

int cmd_report(int argc, char **argv)
{
	const char *format = "md", *out_dir = NULL, *names[REPORT_NFORMATS + 1];
	const struct cli_opt opts[] = {
		{"format", 'f', CLI_STR, NULL, "what to print on stdout (default md): the summary as Markdown or JSON, one row per attempt as CSV or JSON Lines, a JUnit XML report (one testcase per attempt, a failure with its reasons for each failed one), Prometheus metrics (text exposition: pass ratios, counts, latency, load figures per level; labelled run, run_id, suite, model), one line per load level in vllm bench serve's result keys, or one self-contained HTML page (tables, pictures inline); the files are written regardless", &format, names},
		{"out", 'o', CLI_STR, "DIR", "write the files into DIR (an existing folder) instead of RUN_DIR", &out_dir},
	};
	const struct cli_cmd cmd = {
		"report", "RUN_DIR [--format FORMAT] [--out DIR]",
		"Summarise the run in RUN_DIR: pass rates per case and overall, why attempts\n"
		"failed, the usage audit (usage_delta distribution, max |delta|), recall by\n"
		"depth and prompt length, latency percentiles (first byte, TTFT, TTFC, E2E,\n"
		"TPOT), finish reasons and the manifest's facts. Writes RUN_DIR/summary.json,\n"
		"summary.md, attempts.csv and, when the run has recall cases, recall.png (a\n"
		"depth x length heatmap), with load cases load.png (throughput and TTFT P95\n"
		"against concurrency), then prints the chosen format.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 1, 1,
		CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	size_t i;
	struct diag d;

	for (i = 0; i < REPORT_NFORMATS; i++)
		names[i] = report_formats[i].name;
	names[i] = NULL;
	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	if (!d.code)
		report(args[0], out_dir, report_format_named(format), &d);
	return d.code ? cli_report("report", &d) : EXIT_PASS;
}
