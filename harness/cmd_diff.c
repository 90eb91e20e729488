/*
 * needle diff — compare two run folders like with like and gate on the result.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cli.h"
#include "cmd.h"
#include "diff.h"
#include "json.h"
#include "report.h"

static const char examples[] =
	"  needle diff results/before results/after\n"
	"  needle diff OLD NEW --gate no_new_failures --gate 'pass_rate>=0.95'\n"
	"  needle diff OLD NEW --gate 'recall@50>=1.0' --gate 'ttft_p50_ratio<=1.2'\n"
	"  needle diff OLD NEW --format json | jq '.flips.pass_to_fail'\n"
	"\n"
	"Gates (quote them in the shell: '>' redirects):\n"
	"  GATE   := no_new_failures | METRIC OP NUMBER\n"
	"  METRIC := NAME | NAME@ARG      OP := >= <= > < ==\n"
	"  pass_rate            B's overall pass rate, 0..1 (all of B's attempts)\n"
	"  pass_rate@CASE       B's pass rate of case CASE\n"
	"  pass_rate_delta      B minus A over matched attempts (same case, repeat, seed)\n"
	"  flips                number of pass->fail flips\n"
	"  recall, recall@D     B's recall overall, or at depth D percent\n"
	"  recall_delta@D       B minus A at depth D\n"
	"  max_abs_usage_delta  B's largest |server prompt_tokens - local count|\n"
	"  T_pP, T_pP_ratio     B's percentile P (50|90|99) of timing T in ms, or B/A\n"
	"                       T: first_byte ttft ttfc e2e tpot\n"
	"  no_new_failures      no pass->fail flip and no failed attempt only B has\n"
	"A gate without data (no samples, unknown depth) fails. Every gate fails\n"
	"when either run is INCOMPLETE (fewer attempts recorded than its manifest\n"
	"planned) or no attempt matched, unless --allow-incomplete. A gate on a case\n"
	"that is in neither run is a usage error (exit 2).\n"
	"\n"
	"Warns when the runs differ in suite SHA-256, tokenizer or template hash, or\n"
	"served model. Exit 0 when every gate holds (or none is given), 1 when a gate\n"
	"fails, 2 on bad input (a malformed results.jsonl is named with its line; a\n"
	"torn last line is skipped as --resume does).\n";

struct diff_opts {
	const char *format;
	struct cli_list gates; /* --gate SPEC, in order */
	int allow_incomplete;
};

static enum err compare(const char *da, const char *db, const struct diff_opts *o,
			int *all_ok, struct buf *out, struct diag *d)
{
	struct diff_gate g[CLI_LIST_MAX];
	struct report_run *a = NULL, *b = NULL;
	cJSON *diff = NULL;
	int i, ok;
	enum err e = ERR_OK;

	*all_ok = 1;
	for (i = 0; !e && i < o->gates.n; i++)
		e = diff_gate_parse(o->gates.v[i], &g[i], d);
	if (!e && !(e = report_load(da, &a, d)) && !(e = report_load(db, &b, d)))
		e = diff_runs(a, b, &diff, d);
	for (i = 0; !e && i < o->gates.n; i++)
		e = diff_gate_check(diff, &g[i], d);
	if (!e && o->gates.n && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(diff, "incomplete")))
		fprintf(stderr, "%s: %s\n", o->allow_incomplete ? "warning" : "every gate fails",
			cJSON_GetObjectItemCaseSensitive(diff, "incomplete")->valuestring);
	for (i = 0; !e && i < o->gates.n; i++) {
		e = diff_gate_eval(diff, &g[i], o->allow_incomplete, &ok, d);
		*all_ok &= ok;
		if (!e && !ok)
			fprintf(stderr, "gate failed: %s\n", o->gates.v[i]);
	}
	if (!e) {
		const cJSON *w;
		cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(diff, "warnings"))
			fprintf(stderr, "warning: %s\n", w->valuestring);
	}
	if (!e)
		e = !strcmp(o->format, "json") ? json_print(diff, JSON_PRETTY | JSON_NEWLINE, out, "the comparison", d)
					       : diff_markdown(diff, out, d);
	cJSON_Delete(diff);
	report_run_free(a);
	report_run_free(b);
	return e;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = {"md", {{0}, 0}, 0};
	const struct cli_opt opts[] = {
		{"gate", 'g', CLI_LIST, "SPEC", "a condition run B must meet; repeatable (see Gates below)", &o.gates},
		{"format", 'f', CLI_STR, "md|json", "output format (default md)", &o.format},
		{"allow-incomplete", 0, CLI_FLAG, NULL, "gate even when a run is incomplete or no attempt matched", &o.allow_incomplete},
	};
	const struct cli_cmd cmd = {
		"diff", "RUN_A RUN_B [--gate SPEC]... [--format md|json] [--allow-incomplete]",
		"Compare run B (new) with run A (old), attempt by attempt (same case id,\n"
		"repeat and seed): pass->fail and fail->pass flips, pass-rate change per case\n"
		"and overall, recall by depth, usage-delta changes and latency percentiles\n"
		"with their sample counts.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 2, 2};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome, all_ok = 1, status = EXIT_PASS;
	struct buf out;
	struct diag d;

	diag_init(&d);
	buf_init(&out, BUF_MAX_DEFAULT);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN && strcmp(o.format, "md") &&
	    strcmp(o.format, "json"))
		diag_fail(&d, ERR_USAGE, "option '--format' wants md or json, got '%s'", o.format);
	if (!d.code && outcome != CLI_HELP_SHOWN &&
	    !compare(args[0], args[1], &o, &all_ok, &out, &d)) {
		fwrite(out.data, 1, out.len, stdout);
		status = all_ok ? EXIT_PASS : EXIT_FAIL;
	}
	if (d.code)
		status = cli_report("diff", &d);
	buf_release(&out);
	return status;
}
