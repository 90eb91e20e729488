/*
 * needle run — the command line of the runner (run.h is the engine): the
 * option table, the endpoint and API key from the environment, the live
 * progress line and the summary on stderr, and the exit status.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "io.h"
#include "endpoint.h"
#include "probe.h"
#include "progress.h"
#include "report.h"
#include "run.h"
#include "suite.h"

struct cli_run {
	struct run_opts o;
	const char *wait_ready;   /* --wait-ready DURATION or NULL */
	char last_wait[256];      /* what the last readiness poll saw */
	const char *date;         /* --date: the clock of strftime_now (tpl_clock_pin) */
	double t0;
	int tty;
	struct progress pace;
};

static const char examples[] =
	"  needle run suites/smoke.json --base-url http://127.0.0.1:8000 --model my-model\n"
	"  OPENAI_BASE_URL=http://gpu:8000/v1 needle run suites/recall-128k.json \\\n"
	"      --tokenizer tokenizer.json --template deepseek-v3 --out results/r1\n"
	"  needle run suites/recall-1m.json --tokenizer tokenizer.json \\\n"
	"      --template deepseek-v3 --out results/r1 --resume\n"
	"  needle run suite.json --case 'json-*' --repeat 5 --concurrency 8\n"
	"\nResults: DIR/manifest.json, DIR/results.jsonl (one record per attempt),\n"
	"DIR/raw/*.sse (raw response bytes). The API key (OPENAI_API_KEY, or the\n"
	"variable named by --api-key-env) is sent as a bearer token and never written.\n"
	"Default timeouts scale with the prompt: first byte 60 s + 0.5 s per 1000\n"
	"prompt tokens; whole request that plus 0.1 s per max_tokens; idle 120 s.\n";

/* The progress line (run_progress_fn), on a terminal only. */
static void show_progress(void *ctx, const struct run *r, int force)
{
	struct cli_run *c = ctx;
	struct run_counts n = run_counts(r);
	struct progress_state st = {n.done, n.total, n.pass, n.fail, 0, NULL, 0, 0};
	double now = io_now_ms(), start;
	char line[256];

	if (!c->tty || !progress_due(&c->pace, now, force))
		return;
	st.elapsed_s = (now - c->t0) / 1000.0;
	if (run_slowest(r, &st.slow_id, &st.slow_repeat, &start))
		st.slow_s = (now - start) / 1000.0;
	progress_line(&st, line, sizeof(line));
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
}

static void summary(const struct cli_run *c, const struct run *r, int status)
{
	double el = (io_now_ms() - c->t0) / 1000.0;
	struct run_counts n = run_counts(r);
	size_t prior = n.prior_pass + n.prior_fail;

	if (c->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr,
		"needle run: %zu attempts, %zu passed, %zu failed (transport %zu, audit %zu, grade %zu)",
		n.done, n.pass, n.fail, n.fail_transport, n.fail_audit, n.fail_grade);
	if (prior)
		fprintf(stderr, "; %zu recorded before (%zu failed)", prior, n.prior_fail);
	fprintf(stderr, " in %.1f s; results in %s; exit %d\n", el, run_dir(r), status);
}

/* DESIGN.md §7: summary.json, summary.md and recall.png are written at the
 * end of every run (report.h). Failing to write them is a warning: the
 * journal is intact and the run's status stands. */
static void write_report(const char *dir)
{
	struct diag rd;

	diag_init(&rd);
	if (report_write(dir, NULL, &rd))
		fprintf(stderr, "warning: %s (results are intact; retry with 'needle report %s')\n",
			rd.msg, dir);
}

/* The endpoint and the API key from the options and the environment. */
static enum err from_env(struct run_opts *o, struct diag *d)
{
	o->api_key = getenv(o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	if (!o->base_url)
		o->base_url = getenv("OPENAI_BASE_URL");
	if (!o->base_url || !*o->base_url)
		return diag_fail(d, ERR_USAGE, "no endpoint: pass '--base-url URL' or set OPENAI_BASE_URL");
	if (o->api_key_env && !o->api_key)
		return diag_fail(d, ERR_USAGE, "environment variable '%s' (from --api-key-env) is not set",
				 o->api_key_env);
	return ERR_OK;
}

/* The readiness line (probe_progress_fn): on a terminal in place, else a
 * line whenever what the server answers changes. */
static void show_wait(void *ctx, double waited_s, const char *last)
{
	struct cli_run *c = ctx;

	if (c->tty)
		fprintf(stderr, "\r\033[Kwaiting for the server: %.0f s, %s", waited_s, last);
	else if (strcmp(last, c->last_wait))
		fprintf(stderr, "waiting for the server: %.0f s, %s\n", waited_s, last);
	snprintf(c->last_wait, sizeof(c->last_wait), "%s", last);
}

/* --wait-ready: polls until the endpoint is ready or the time is up. */
static enum err wait_ready(struct cli_run *c, struct diag *d)
{
	struct endpoint ep;
	double secs;
	enum err e = probe_parse_duration(c->wait_ready, &secs, d);

	endpoint_init(&ep);
	if (!e)
		e = endpoint_set_base(&ep, c->o.base_url, d);
	if (!e)
		e = probe_wait_ready(ep.base, c->o.api_key, secs, 5, show_wait, c, d);
	if (c->tty)
		fprintf(stderr, "\r\033[K");
	endpoint_release(&ep);
	return e;
}

static int run(struct cli_run *c, const char *suite_path, struct diag *d)
{
	struct run *r = NULL;
	enum err e;
	int status = EXIT_USAGE;

	c->t0 = io_now_ms();
	c->tty = isatty(STDERR_FILENO);
	c->o.poll_ms = c->tty ? 250 : 1000;
	c->o.progress = show_progress;
	c->o.progress_ctx = c;
	e = from_env(&c->o, d);
	if (!e)
		e = tpl_clock_pin(c->date, d);
	if (!e && c->wait_ready)
		e = wait_ready(c, d);
	if (!e) {
		e = run_open(&c->o, suite_path, &r, d);
		fputs(run_warnings(r), stderr);
	}
	if (!e) {
		e = run_go(r, d);
		status = e ? err_exit_status(e) : run_status(r);
		if (!e)
			write_report(run_dir(r));
		summary(c, r, status);
	}
	if (e && c->tty)
		fprintf(stderr, "\r\033[K");
	if (e)
		status = cli_report("run", d);
	run_free(r);
	return status;
}

int cmd_run(int argc, char **argv)
{
	struct cli_run c = {0};
	const struct cli_opt opts[] = {
		{"base-url", 0, CLI_STR, "URL", "endpoint, e.g. http://127.0.0.1:8000 (default $OPENAI_BASE_URL)", &c.o.base_url},
		{"model", 'm', CLI_STR, "NAME", "served model name (default: the only one /v1/models lists)", &c.o.model},
		{"tokenizer", 't', CLI_STR, "PATH|DIR", "tokenizer.json, .model or a model folder: audit usage.prompt_tokens; needed for recall", &c.o.tokenizer},
		{"template", 0, CLI_STR, "NAME|PATH", "chat template for the audit and recall documents (deepseek-v3, ..., a .jinja file; default: the model folder's)", &c.o.template_name},
		{"concurrency", 'c', CLI_LONG, "N", "requests in flight at once (default 1)", &c.o.concurrency},
		{"timeout", 0, CLI_DOUBLE, "SEC", "whole-request and first-byte timeout (default scales with the prompt)", &c.o.timeout},
		{"idle-timeout", 0, CLI_DOUBLE, "SEC", "longest gap between response bytes (default 120)", &c.o.idle_timeout},
		{"out", 'o', CLI_STR, "DIR", "results folder (default results/SUITE-TIMESTAMP)", &c.o.out},
		{"resume", 0, CLI_FLAG, NULL, "continue DIR: skip attempts already recorded", &c.o.resume},
		{"case", 0, CLI_STR, "GLOB", "run only the cases whose id matches (shell glob)", &c.o.case_glob},
		{"repeat", 0, CLI_LONG, "N", "run every case N times (overrides the suite's repeat)", &c.o.repeat},
		{"api-key-env", 0, CLI_STR, "NAME", "environment variable holding the API key (default OPENAI_API_KEY)", &c.o.api_key_env},
		{"date", 0, CLI_STR, "YYYY-MM-DD[THH:MM:SS]", "the server's local time for a template's strftime_now (default: now; in the manifest when the template reads it)", &c.date},
		{"server", 0, CLI_STR, "vllm|sglang", "render the audit as this server prepares messages (default: detected, else vllm)", &c.o.server_name},
		{"metrics", 0, CLI_FLAG, NULL, "load cases: scrape the server's /metrics before and after each level (DIR/raw/metrics-*)", &c.o.metrics},
		{"wait-ready", 0, CLI_STR, "DURATION", "first poll /health and /v1/models until the server answers (e.g. 30m)", &c.wait_ready},
		{"warmup", 0, CLI_LONG, "N", "send N uncounted requests of the first case before the suite", &c.o.warmup},
	};
	const struct cli_cmd cmd = {
		"run", "SUITE.json [--base-url URL] [--model NAME] [--tokenizer PATH --template NAME] [--out DIR] [--resume]",
		"Send every case of SUITE.json to an OpenAI-compatible endpoint with streaming,\n"
		"judge each response strictly (HTTP 200 alone is never success), audit\n"
		"usage.prompt_tokens against the local tokenizer, grade the answer, and journal\n"
		"one record per attempt. A live progress line is shown on a terminal; a summary\n"
		"line always ends the run on stderr.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 1, 1};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	double wait_s;
	struct diag d;

	diag_init(&d);
	c.o.concurrency = 1;
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN) {
		if (c.o.concurrency < 1 || c.o.concurrency > RUN_MAX_CONCURRENCY)
			diag_fail(&d, ERR_USAGE, "option '--concurrency' wants 1 to %d", RUN_MAX_CONCURRENCY);
		else if (c.o.repeat < 0 || c.o.repeat > SUITE_MAX_REPEAT)
			diag_fail(&d, ERR_USAGE, "option '--repeat' wants 1 to %d", SUITE_MAX_REPEAT);
		else if (c.o.warmup < 0 || c.o.warmup > 100000)
			diag_fail(&d, ERR_USAGE, "option '--warmup' wants 0 to 100000 requests");
		else if (c.wait_ready && probe_parse_duration(c.wait_ready, &wait_s, &d))
			diag_prefix(&d, "option '--wait-ready'");
		else if (c.o.server_name && tpl_server_parse(c.o.server_name, &c.o.server, &d))
			diag_prefix(&d, "option '--server'");
	}
	if (d.code)
		return cli_report("run", &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error, not death */
	c.o.server_forced = c.o.server_name != NULL;
	return run(&c, args[0], &d);
}
