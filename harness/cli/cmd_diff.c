/*
 * needle diff — compare two run folders like with like and gate on the result.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/io.h"
#include "cli.h"
#include "cmd.h"
#include "report/diff.h"
#include "report/diffplot.h"
#include "report/gate.h"
#include "report/html.h"
#include "report/junit.h"
#include "report/keys.h"
#include "report/report.h"

static const char examples[] =
	"  needle diff results/before results/after\n"
	"  needle diff OLD NEW --gate no_new_failures --gate 'pass_rate >= 0.95'\n"
	"  needle diff OLD NEW --gate 'recall@50>=1.0' --gate 'ttft_p50_ratio<=1.2'\n"
	"  needle diff OLD NEW --format json | jq '.flips.pass_to_fail'\n"
	"  needle diff BASELINE CANDIDATE --gate cutover\n"
	"  needle diff BASELINE CANDIDATE --gate cutover --format html > decision.html\n"
	"  needle diff BASELINE CANDIDATE --gate cutover --format junit > diff-junit.xml\n"
	"  needle diff BASELINE CANDIDATE --plot cutover.png\n"
	"  needle diff BASELINE CANDIDATE --case 'json-arith*' --gate no_new_failures\n"
	"\n"
	"Gates (quote them in the shell: '>' redirects):\n"
	"  GATE   := no_new_failures | METRIC OP NUMBER\n"
	"  METRIC := NAME | NAME@ARG      OP := >= <= > < ==\n"
	"  pass_rate            B's overall pass rate, 0..1 (all of B's attempts)\n"
	"  pass_rate@CASE       B's pass rate of case CASE\n"
	"  pass_rate_delta      B minus A over matched attempts (same case, repeat, seed)\n"
	"  flips                number of pass->fail flips\n"
	"  recall, recall@D     B's recall overall, or at depth D percent\n"
	"  recall_delta[@D]     B minus A at depth D (every needle without @D)\n"
	"  recall_residue@M:R   B's recall of jitter lengths = R mod M (M 2|4|8)\n"
	"  max_abs_usage_delta  B's largest |server prompt_tokens - local count|\n"
	"  T_pP, T_pP_ratio     B's percentile P (50|90|99) of timing T in ms, or B/A\n"
	"                       T: first_byte ttft ttfc e2e tpot\n"
	"  no_new_failures      no pass->fail flip and no failed attempt only B has\n"
	"Attempts sent at temperature > 0 are samples of a pass rate: no_new_failures,\n"
	"pass_rate_delta and recall_delta@D count a difference only beyond sampling\n"
	"(per case: empirical-Bayes beta-binomial, Holm-corrected; overall: pooled\n"
	"one-sided Fisher mid-p), FAIL or UNDERPOWERED (with the repeats that would\n"
	"settle it) or PASS, naming the cases. Transport and usage-audit failures,\n"
	"flips at temperature 0 or unset, and failed attempts only B has always fail\n"
	"(docs/statistics.md, \"The functional gates\").\n"
	"Load cells (load cases; @CASE/c32, @CASE/r0.3, @CASE, or every cell):\n"
	"  output_tps_ratio ttft_p50_ratio ttft_p95_ratio tpot_p95_ratio e2e_p50_ratio\n"
	"  goodput_ratio        B's median over valid rounds / A's, cell by cell,\n"
	"                       judged against both runs' noise (docs/statistics.md)\n"
	"  success_rate slo_attainment goodput_rps achieved_rate output_tps ttft_p50_ms\n"
	"  ttft_p95_ms tpot_p95_ms e2e_p50_ms lag_p99_ms   B's figure\n"
	"  spec_acceptance_ratio  B's speculative decoding acceptance rate / A's (the\n"
	"                       servers' counters, run --metrics); fails where\n"
	"                       either run has none (not measured)\n"
	"  (ttft_p50_ratio and e2e_p50_ratio mean the load cells when a run has any)\n"
	"  cutover              the whole cutover decision: on every load cell\n"
	"                       output_tps_ratio>=0.9 ttft_p50_ratio<=1.1\n"
	"                       ttft_p95_ratio<=1.15 success_rate>=1, and on cells\n"
	"                       with an SLO goodput_ratio>=0.9 slo_attainment>0;\n"
	"                       no_new_failures; recall_delta>=0. A part neither run\n"
	"                       has (no load case, no recall) passes and says so\n"
	"A ratio gate asks whether B is no worse than A by more than the threshold:\n"
	"a cell passes when the 90% interval of B/A is wholly within the threshold,\n"
	"fails when it is wholly beyond it and the difference is above its floor\n"
	"(1 ms TTFT/E2E, 0.1 ms TPOT, 1 tok/s, 0.01 req/s), and is UNDERPOWERED when\n"
	"the interval holds the threshold: the output says what dominates the noise\n"
	"and how many rounds or requests, in minutes, would settle it. A fail where\n"
	"the measuring machine ran more than 10% slower in B than in A, or a pass\n"
	"where it ran that much faster (a fixed piece of work timed before every\n"
	"round), is UNDERPOWERED too unless it holds with B corrected for the\n"
	"machine's change: the machine, not the server, may have made it.\n"
	"Blanks around OP are allowed ('pass_rate >= 0.95'). A gate without data (no\n"
	"samples, unknown case or depth) fails; a load cell with no valid round in\n"
	"either run fails its gates. A failed or underpowered gate is named on\n"
	"stderr with its cells.\n"
	"Every gate fails when either run is INCOMPLETE (fewer attempts recorded\n"
	"than its manifest planned) or no attempt matched, unless --allow-incomplete,\n"
	"and when B lacks attempts or load cells that A has, unless --allow-missing\n"
	"(or --case narrows both runs to the cases B was meant to run).\n"
	"A gate on a case that is in neither run is a usage error (exit 2).\n"
	"\n"
	"When either run used several replicas (--base-url repeated), a per-endpoint\n"
	"table gives each replica's pass rate in A and B and the flips it served in B.\n"
	"Warns when the runs differ in suite SHA-256, tokenizer or template hash, or\n"
	"served model. When attempts that passed the usage audit in A fail it in B,\n"
	"'what to do:' says whether the server changed (A matched with the same\n"
	"tokenizer and template) or B's --tokenizer/--template did.\n"
	"Exit 0 when every gate passes (or none is given), 1 when a gate fails, 4\n"
	"when none failed but one is underpowered, 2 on bad input (a malformed\n"
	"results.jsonl is named with its line; a torn last line is skipped as\n"
	"--resume does).\n";

struct diff_opts {
	const char *format;
	const char *plot;      /* --plot FILE, or NULL */
	struct cli_list gates; /* --gate SPEC, in order */
	struct cli_list cases; /* --case GLOB: compare only these cases */
	int allow_incomplete, allow_missing;
};

#define GATES_MAX (CLI_LIST_MAX * GATE_CUTOVER_N)

/* The gates as given, with "cutover" expanded (gate.h); *n of them. */
static enum err parse_gates(const struct cli_list *specs, struct gate *g, size_t *n,
			    struct diag *d)
{
	size_t k;
	int i;
	enum err e = ERR_OK;

	*n = 0;
	for (i = 0; !e && i < specs->n; i++) {
		e = gate_expand(specs->v[i], g + *n, GATES_MAX - *n, &k, d);
		*n += k;
	}
	return e;
}

/* The detail of the gate evaluated last. */
static const char *last_detail(const cJSON *diff)
{
	const cJSON *gates = cJSON_GetObjectItemCaseSensitive(diff, DK_GATES);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(gates, cJSON_GetArraySize(gates) - 1), DK_DETAIL);

	return cJSON_IsString(d) ? d->valuestring : "";
}

/* "DIR (model M)" of one side of the comparison, into out[cap]. */
static const char *run_name(const cJSON *side, char *out, size_t cap)
{
	const cJSON *dir = cJSON_GetObjectItemCaseSensitive(side, SK_DIR);
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(side, SK_MODEL);

	snprintf(out, cap, "%s%s%s%s", cJSON_IsString(dir) ? dir->valuestring : "-",
		 cJSON_IsString(model) ? " (model " : "", cJSON_IsString(model) ? model->valuestring : "",
		 cJSON_IsString(model) ? ")" : "");
	return out;
}

/* --plot FILE: the picture of the comparison's load cells (diffplot.h);
 * without any, a warning and no file. */
static enum err write_plot(const struct diff_result *res, const char *path, struct diag *d)
{
	char na[512], nb[512];
	struct buf png;
	enum err e;

	buf_init(&png, BUF_MAX_DEFAULT);
	e = diffplot_png(res->cells, res->ncells,
			 run_name(cJSON_GetObjectItemCaseSensitive(res->diff, DK_A), na, sizeof(na)),
			 run_name(cJSON_GetObjectItemCaseSensitive(res->diff, DK_B), nb, sizeof(nb)), &png, d);
	if (!e && png.len)
		e = io_write_file(path, png.data, png.len, d);
	else if (!e)
		fprintf(stderr, "warning: no load cell in either run: '%s' not written\n", path);
	buf_release(&png);
	return e;
}

/* Why every gate fails (diff[key]) on stderr, or a warning when allowed. */
static void say_like_for_like(const cJSON *diff, const char *key, int allowed)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(diff, key);

	if (cJSON_IsString(s)) {
		fprintf(stderr, "%s: ", allowed ? "warning" : "every gate fails");
		cli_quote(stderr, s->valuestring);
		fputc('\n', stderr);
	}
}

/* Judges the gates on the comparison; *worst is the worst verdict. */
static enum err judge(struct diff_result *res, const struct gate *g, size_t n,
		      const struct diff_opts *o, enum gate_verdict *worst, struct diag *d)
{
	unsigned flags = (o->allow_incomplete ? GATE_ALLOW_INCOMPLETE : 0u) |
			 (o->allow_missing ? GATE_ALLOW_MISSING : 0u);
	enum gate_verdict v;
	size_t i;
	enum err e = ERR_OK;

	*worst = GATE_PASS;
	for (i = 0; !e && i < n; i++)
		e = gate_check(res, &g[i], d);
	if (!e && n) {
		say_like_for_like(res->diff, DK_INCOMPLETE, o->allow_incomplete);
		say_like_for_like(res->diff, DK_MISSING, o->allow_missing ||
				  (o->allow_incomplete && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(res->diff, DK_INCOMPLETE))));
	}
	for (i = 0; !e && i < n; i++) {
		e = gate_eval(res, &g[i], flags, &v, d);
		*worst = v > *worst ? v : *worst;
		if (!e && v != GATE_PASS) {
			fprintf(stderr, "gate %s: %s: ", v == GATE_FAIL ? "failed" : "underpowered", g[i].spec);
			cli_quote(stderr, last_detail(res->diff));
			fputc('\n', stderr);
		}
	}
	return e;
}

static enum err compare(const char *da, const char *db, const struct diff_opts *o,
			enum gate_verdict *worst, struct buf *out, struct diag *d)
{
	static struct gate g[GATES_MAX];
	struct report_run *a = NULL, *b = NULL;
	struct diff_result res;
	size_t n = 0;
	enum err e;

	memset(&res, 0, sizeof(res));
	*worst = GATE_PASS;
	e = parse_gates(&o->gates, g, &n, d);
	if (!e && !(e = diff_load(da, (const char *const *)o->cases.v, (size_t)o->cases.n, &a, d)) &&
	    !(e = diff_load(db, (const char *const *)o->cases.v, (size_t)o->cases.n, &b, d)))
		e = diff_runs(a, b, &res, d);
	if (!e)
		e = judge(&res, g, n, o, worst, d);
	if (!e) {
		const cJSON *w;
		cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(res.diff, DK_WARNINGS)) {
			fputs("warning: ", stderr);
			cli_quote(stderr, w->valuestring);
			fputc('\n', stderr);
		}
		cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(res.diff, DK_ADVICE)) {
			fputs("what to do: ", stderr);
			cli_quote(stderr, w->valuestring);
			fputc('\n', stderr);
		}
	}
	if (!e && o->plot)
		e = write_plot(&res, o->plot, d);
	if (!e) /* JSON goes out as it is made: a comparison of many cases is large */
		e = !strcmp(o->format, "json")    ? diff_print_json(&res, out, stdout, d)
		    : !strcmp(o->format, "html")  ? html_diff_write(&res, out, d)
		    : !strcmp(o->format, "junit") ? junit_diff_write(&res, out, d)
						  : diff_markdown(&res, out, d);
	diff_result_release(&res);
	report_run_free(a);
	report_run_free(b);
	return e;
}

int cmd_diff(int argc, char **argv)
{
	static const char *const formats[] = {"md", "json", "html", "junit", NULL};
	struct diff_opts o = {"md", NULL, {{0}, 0}, {{0}, 0}, 0, 0};
	const struct cli_opt opts[] = {
		{"gate", 'g', CLI_LIST, "SPEC", "a condition run B must meet; repeatable (see Gates below)", &o.gates},
		{"format", 'f', CLI_STR, NULL, "output format (default md): the comparison as Markdown or JSON, one self-contained HTML page of the decision (the verdict, the cells with both runs, each cell's interval against its threshold, a picture of it), or JUnit XML for CI (a testcase per load cell and gate, per gate for the others; fail a failure, underpowered skipped)", &o.format, formats},
		{"plot", 0, CLI_STR, "FILE", "draw both runs' load cells into FILE (PNG): throughput, TTFT P50 and P95 per level, min-max over rounds, one scale", &o.plot},
		{"allow-incomplete", 0, CLI_FLAG, NULL, "gate even when a run is incomplete or no attempt matched", &o.allow_incomplete},
		{"case", 0, CLI_LIST, "GLOB", "compare only the cases whose id matches, in both runs (shell glob; repeatable: any)", &o.cases},
		{"allow-missing", 0, CLI_FLAG, NULL, "gate even when B lacks attempts or load cells A has (a narrower run on purpose)", &o.allow_missing},
	};
	const struct cli_cmd cmd = {
		"diff", "RUN_A RUN_B [--gate SPEC]... [--format FORMAT] [--plot FILE] [--case GLOB]... [--allow-incomplete] [--allow-missing]",
		"Compare run B (new) with run A (old), attempt by attempt (same case id,\n"
		"repeat and seed): pass->fail and fail->pass flips, pass-rate change per case\n"
		"and overall, recall by depth, usage-delta changes, latency percentiles\n"
		"with their sample counts, and each load cell of both runs side by side.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 2, 2,
		CLI_EXIT_PASS | CLI_EXIT_FAIL | CLI_EXIT_USAGE | CLI_EXIT_UNDERPOWERED};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome, status = EXIT_PASS;
	enum gate_verdict worst = GATE_PASS;
	struct buf out;
	struct diag d;

	diag_init(&d);
	buf_init(&out, BUF_MAX_DEFAULT);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN &&
	    !compare(args[0], args[1], &o, &worst, &out, &d)) {
		fwrite(out.data, 1, out.len, stdout);
		status = worst == GATE_FAIL ? EXIT_FAIL : worst == GATE_UNDERPOWERED ? EXIT_UNDERPOWERED
										 : EXIT_PASS;
	}
	if (d.code)
		status = cli_report("diff", &d);
	buf_release(&out);
	return status;
}
