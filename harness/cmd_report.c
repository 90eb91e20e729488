/*
 * needle report — summarise a run folder: writes RUN_DIR/summary.json,
 * summary.md and (for recall runs) recall.png, and prints one of them.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cli.h"
#include "cmd.h"
#include "jget.h"
#include "json.h"
#include "report.h"

static const char examples[] =
	"  needle report results/smoke-20260101T120000Z\n"
	"  needle report results/recall-1m --format json | jq .recall.by_depth\n"
	"  needle report RUN_DIR --format csv > run.csv\n"
	"\n"
	"Pass rates count every recorded attempt (failures stay in the denominator)\n"
	"and carry 95% Wilson intervals; latency percentiles are nearest-rank with\n"
	"their sample counts. A torn last line of results.jsonl is skipped. A run\n"
	"that recorded fewer attempts than its manifest planned is marked\n"
	"INCOMPLETE: done/planned (summary.md, stderr, summary.json's attempts). Exit 0\n"
	"when the report was written (failed attempts are reported, not an error;\n"
	"use 'needle diff --gate' to fail a pipeline); 2 on a bad folder or a\n"
	"malformed results.jsonl (file, line and reason are named).\n";

static enum err render(const cJSON *s, const char *format, struct buf *out,
		       struct diag *d)
{
	if (!strcmp(format, "md"))
		return report_markdown(s, out, d);
	if (!strcmp(format, "csv"))
		return report_csv(s, out, d);
	return json_print(s, JSON_PRETTY | JSON_NEWLINE, out, "the summary", d);
}

int cmd_report(int argc, char **argv)
{
	const char *format = "md";
	const struct cli_opt opts[] = {
		{"format", 'f', CLI_STR, "md|json|csv", "what to print on stdout (default md); all files are written regardless", &format},
	};
	const struct cli_cmd cmd = {
		"report", "RUN_DIR [--format md|json|csv]",
		"Summarise the run in RUN_DIR: pass rates per case and overall, failure\n"
		"codes, the usage audit (usage_delta distribution, max |delta|), recall by\n"
		"depth and prompt length, latency percentiles (first byte, TTFT, TTFC, E2E,\n"
		"TPOT), finish reasons and the manifest's facts. Writes RUN_DIR/summary.json,\n"
		"summary.md and, when the run has recall cases, recall.png (a depth x length\n"
		"heatmap), then prints the chosen format.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 1, 1};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	struct buf out;
	cJSON *s = NULL;
	struct diag d;
	int status = EXIT_PASS;

	diag_init(&d);
	buf_init(&out, BUF_MAX_DEFAULT);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN && strcmp(format, "md") &&
	    strcmp(format, "json") && strcmp(format, "csv"))
		diag_fail(&d, ERR_USAGE, "option '--format' wants md, json or csv, got '%s'", format);
	if (!d.code && outcome != CLI_HELP_SHOWN &&
	    !report_write(args[0], &s, &d) && !render(s, format, &out, &d)) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, "attempts");
		fwrite(out.data, 1, out.len, stdout);
		if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a, "complete")))
			fprintf(stderr, "INCOMPLETE: %.0f/%.0f planned attempts recorded in '%s'\n",
				jget_num(a, "planned_done"), jget_num(a, "planned"), args[0]);
	}
	if (d.code)
		status = cli_report("report", &d);
	cJSON_Delete(s);
	buf_release(&out);
	return status;
}
