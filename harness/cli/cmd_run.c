/*
 * needle run — the command line of the runner (run.h is the engine): the
 * option table, the endpoint and API key from the environment, the live
 * progress line and the summary on stderr, and the exit status.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "config.h"
#include "base/io.h"
#include "base/mem.h"
#include "net/endpoint.h"
#include "net/probe.h"
#include "progress.h"
#include "report/report.h"
#include "run/run.h"
#include "shipped.h"
#include "tpl/tpl_hub.h"
#include "run/shard.h"
#include "run/suite.h"

struct cli_run {
	struct run_opts o;
	struct cli_list urls;      /* --base-url, repeatable */
	const char *urls_file;     /* --endpoints FILE */
	struct buf file;           /* its bytes, which o.base_urls point into */
	const char *shard_spec, *start_at;
	const char *wait_ready;   /* --wait-ready DURATION or NULL */
	char last_wait[256];      /* what the last readiness poll saw */
	struct cli_list cases;    /* --case GLOB, repeatable */
	const char *date;         /* --date: the clock of strftime_now (tpl_clock_pin) */
	const char *revision; char *hub_path; /* --revision; owned: its HF cache folder */
	double t0;
	int tty;
	struct progress pace;
	int argc;              /* the command line, for the resume hint */
	char **argv;
	struct redact secrets;  /* of o.api_key and o.base_url */
};

/* Set by the first SIGINT/SIGTERM; the runner stops at its next poll. A
 * second one ends the process at once (the handler restores the default). */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	stop_requested = 1;
	signal(sig, SIG_DFL);
}

static const char examples[] =
	"  needle run suites/smoke.json --base-url http://127.0.0.1:8000 --model my-model\n"
	"  OPENAI_BASE_URL=http://gpu:8000/v1 needle run suites/recall-128k.json \\\n"
	"      --tokenizer tokenizer.json --template deepseek-v3 --out results/r1\n"
	"  needle run suites/recall-1m.json --tokenizer tokenizer.json \\\n"
	"      --template deepseek-v3 --out results/r1 --resume\n"
	"  needle run suite.json --case 'json-*' --repeat 5 --concurrency 8\n"
	"  needle run suite.json --base-url http://gpu1:8000 --base-url http://gpu2:8000\n"
	"  needle run suites/recall-grid.json --shard 2/4 --tokenizer DIR --out r/s2\n"
	"  needle run suites/load-rate.json --shard 1/4 --start-at 2026-12-01T14:00:00Z \\\n"
	"      --tokenizer DIR --out r/load-1\n"
	"\nResults: DIR/manifest.json, DIR/results.jsonl (one record per attempt),\n"
	"DIR/raw/*.sse (raw response bytes). The API key (OPENAI_API_KEY, or the\n"
	"variable named by --api-key-env) is sent as a bearer token and never written:\n"
	"it and any user:password of the URL are replaced by *** wherever they would\n"
	"be stored or shown, also when the server echoes them back.\n"
		"Several --base-url (or --endpoints FILE, one URL a line) are replicas of one\n"
	"model: attempts go to the least busy, and each record names its replica.\n"
	"Without --shard, a Slurm array task (SLURM_ARRAY_TASK_ID, _COUNT, _MIN) or a\n"
	"Kubernetes Indexed Job pod (JOB_COMPLETION_INDEX, with NEEDLE_SHARDS) runs its\n"
	"own shard; 'needle merge' joins the shard folders. A load case runs on every\n"
	"shard with its part of the rate or concurrency (rate/N; C/N, the first shards\n"
	"one more) and a seed of its own; --start-at begins the shards together.\n"
	"Default timeouts scale with the prompt: first byte 60 s + 0.5 s per 1000\n"
	"prompt tokens; whole request that plus 0.1 s per max_tokens; idle 120 s.\n";

/* What a run waits for before its first request (run_wait_fn). */
static void show_start_wait(void *ctx, double until_s, double now_s)
{
	char at[32];

	progress_utc(until_s, at, sizeof(at));
	fprintf(stderr, "needle: waiting for the common start %s (--start-at '%s'), %.0f s from now, "
		"before the first request\n", at, ((struct cli_run *)ctx)->start_at, until_s - now_s);
}

/* The progress line (run_progress_fn): in place on a terminal; else whole
 * lines at the slower pace run() set (progress.h), none forced. */
static void show_progress(void *ctx, const struct run *r, int force)
{
	struct cli_run *c = ctx;
	struct run_counts n = run_counts(r);
	struct progress_state st = {n.done, n.total, n.pass, n.fail, 0, NULL, 0, 0,
				    n.weight_done, n.weight_total};
	double now = io_now_ms(), start;
	char line[256];

	if ((!c->tty && force) || !progress_due(&c->pace, now, force))
		return;
	st.elapsed_s = (now - c->t0) / 1000.0;
	if (run_slowest(r, &st.slow_id, &st.slow_repeat, &start))
		st.slow_s = (now - start) / 1000.0;
	progress_line(&st, line, sizeof(line));
	if (c->tty)
		progress_fit(line, progress_columns(STDERR_FILENO));
	fputs(c->tty ? "\r\033[K" : "needle run: ", stderr); /* unbuffered */
	cli_quote(stderr, line); /* a case id is the suite's text */
	fputs(c->tty ? "" : "\n", stderr);
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

/* docs/runs.md "The files of a run folder": summary.json, summary.md, attempts.csv and recall.png are
 * written at the end of every run (report.h). Failing to write them is a
 * warning: the journal is intact and the run's status stands. Fills *s (the
 * caller releases it; empty when the report failed). */
static void write_report(const char *dir, struct report_sum *s)
{
	struct diag rd;

	diag_init(&rd);
	if (report_write(dir, s, &rd))
		fprintf(stderr, "warning: %s (results are intact; retry with 'needle report %s')\n",
			rd.msg, dir);
}

/* The failing cases with their reasons and the advice (report_terminal),
 * after the summary line. */
static void why_lines(const struct report_sum *s)
{
	struct buf b;
	struct diag wd;

	buf_init(&b, BUF_MAX_DEFAULT);
	diag_init(&wd);
	if (s->s && !report_terminal(s, &b, &wd))
		fwrite(b.data, 1, b.len, stderr);
	buf_release(&b);
}

/* How to finish an interrupted run: the same command with --out and --resume. */
static void resume_hint(const struct cli_run *c, const struct run *r)
{
	struct run_counts n = run_counts(r);
	int i, has_out = c->o.out != NULL;

	fprintf(stderr, "interrupted: %zu of %zu attempts recorded; to finish the run:\n  needle run",
		n.done, n.total);
	for (i = 0; i < c->argc; i++)
		cli_shell_arg(c->argv[i]);
	if (!has_out) {
		fputs(" --out", stderr);
		cli_shell_arg(run_dir(r));
	}
	fprintf(stderr, "%s\n", c->o.resume ? "" : " --resume");
}

/* The endpoints, the API key and the shard from the options and the
 * environment. */
static enum err from_env(struct cli_run *c, struct diag *d)
{
	struct run_opts *o = &c->o;
	const char *env = getenv("OPENAI_BASE_URL");
	int i;
	enum err e = ERR_OK;

	o->api_key = getenv(o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	for (i = 0; i < c->urls.n; i++)
		o->base_urls[o->nbase_urls++] = c->urls.v[i];
	if (c->urls_file &&
	    (e = endpoint_read_list(c->urls_file, &c->file, o->base_urls, &o->nbase_urls,
				    RUN_MAX_ENDPOINTS, d)))
		return e;
	if (!o->nbase_urls && env && *env)
		o->base_urls[o->nbase_urls++] = env;
	if (!o->nbase_urls)
		return diag_fail(d, ERR_USAGE, "no endpoint: pass '--base-url URL' or set OPENAI_BASE_URL");
	if (!c->shard_spec && (e = shard_from_env(&o->shard, d)))
		return e;
	if (o->api_key_env && !o->api_key)
		return diag_fail(d, ERR_USAGE, "environment variable '%s' (from --api-key-env) is not set",
				 o->api_key_env);
	endpoint_ca_env(&o->cacert, &o->cacert_from, &o->capath);
	return ERR_OK;
}

/* The readiness line (probe_progress_fn): on a terminal in place, else a
 * line whenever what the server answers changes. */
static void show_wait(void *ctx, double waited_s, const char *last)
{
	struct cli_run *c = ctx;

	if (c->tty || strcmp(last, c->last_wait)) { /* what the server answers, quoted */
		fprintf(stderr, "%swaiting for the server: %.0f s, ", c->tty ? "\r\033[K" : "", waited_s);
		cli_quote(stderr, last);
		fputs(c->tty ? "" : "\n", stderr);
	}
	snprintf(c->last_wait, sizeof(c->last_wait), "%s", last);
}

static int run(struct cli_run *c, const char *suite_path, struct diag *d)
{
	struct run *r = NULL;
	enum err e;
	int status = EXIT_USAGE;

	c->t0 = io_now_ms();
	c->tty = isatty(STDERR_FILENO);
	c->o.poll_ms = c->tty ? 250 : 1000;
	progress_start(&c->pace, c->tty, c->t0);
	c->o.progress = show_progress;
	c->o.waiting = show_start_wait;
	c->o.ready_wait = show_wait;
	c->o.progress_ctx = c;
	e = from_env(c, d);
	redact_init(&c->secrets, c->o.api_key, c->o.nbase_urls ? c->o.base_urls[0] : NULL);
	c->o.redact = &c->secrets;
	if (!e)
		e = tpl_clock_pin(c->date, d);
	if (!e) {
		e = run_open(&c->o, suite_path, &r, d);
		if (c->wait_ready && c->tty)
			fprintf(stderr, "\r\033[K"); /* the last "waiting" line */
		fputs(run_warnings(r), stderr);
	}
	if (!e) {
		e = run_go(r, d);
		struct report_sum s = {NULL, {0}};
		status = e ? err_exit_status(e) : run_status(r);
		if (!e && run_counts(r).interrupted)
			status = EXIT_INTERRUPTED; /* not everything was checked: retry it */
		if (!e)
			write_report(run_dir(r), &s);
		summary(c, r, status);
		why_lines(&s);
		if (run_counts(r).interrupted)
			resume_hint(c, r);
		report_sum_release(&s);
	}
	if (e && c->tty)
		fprintf(stderr, "\r\033[K");
	if (e) {
		redact_str(&c->secrets, d->msg);
		status = cli_report("run", d);
	}
	run_free(r);
	buf_release(&c->file);
	return status;
}

static void check_opts(struct cli_run *c, struct diag *d)
{
	if (c->o.concurrency < 1 || c->o.concurrency > RUN_MAX_CONCURRENCY)
		diag_fail(d, ERR_USAGE, "option '--concurrency' wants 1 to %d", RUN_MAX_CONCURRENCY);
	else if (c->o.repeat != LONG_MIN && (c->o.repeat < 1 || c->o.repeat > SUITE_MAX_REPEAT))
		diag_fail(d, ERR_USAGE, "option '--repeat' wants 1 to %d, got %ld",
			  SUITE_MAX_REPEAT, c->o.repeat);
	else if (c->o.warmup < 0 || c->o.warmup > 100000)
		diag_fail(d, ERR_USAGE, "option '--warmup' wants 0 to 100000 requests");
	else if (c->o.timeout > HTTP_TIMEOUT_MAX_S || c->o.idle_timeout > HTTP_TIMEOUT_MAX_S)
		diag_fail(d, ERR_USAGE, "option '--%s' wants at most %.0f seconds (a week)",
			  c->o.timeout > HTTP_TIMEOUT_MAX_S ? "timeout" : "idle-timeout", HTTP_TIMEOUT_MAX_S);
	else if (c->wait_ready && probe_parse_duration(c->wait_ready, &c->o.wait_ready_s, d))
		diag_prefix(d, "option '--wait-ready'");
	else if (c->o.server_name && tpl_server_parse(c->o.server_name, &c->o.server, d))
		diag_prefix(d, "option '--server'");
	else if (c->shard_spec && shard_parse(c->shard_spec, &c->o.shard, d))
		diag_prefix(d, "option '--shard'");
	else if (c->start_at && (shard_parse_time(c->start_at, &c->o.start_at, d) ||
				 shard_check_start(c->o.start_at, (double)time(NULL), c->o.resume, d)))
		diag_prefix(d, "option '--start-at' '%s'", c->start_at);
	else if (!tpl_hub_resolve(c->o.tokenizer, c->revision, &c->hub_path, d) &&
		 (config_origin(&c->o.origin, c->o.tokenizer, c->hub_path), c->hub_path))
		c->o.tokenizer = c->hub_path;
}

int cmd_run(int argc, char **argv)
{
	struct cli_run c = {0};
	const struct cli_opt opts[] = {
		{"base-url", 0, CLI_LIST, "URL", "endpoint, e.g. http://127.0.0.1:8000 (default $OPENAI_BASE_URL); repeat for replicas", &c.urls},
		{"endpoints", 0, CLI_STR, "FILE", "replicas' base URLs, one a line (with or instead of --base-url)", &c.urls_file},
		{"shard", 0, CLI_STR, "I/N", "run only shard I of N (default: from Slurm or a Kubernetes Indexed Job)", &c.shard_spec},
		{"start-at", 0, CLI_STR, "TIME", "wait for this common instant before the first request (RFC 3339 UTC, e.g. 2026-12-01T14:00:00Z, or Unix seconds; at most a day ahead)", &c.start_at},
		{"model", 'm', CLI_STR, "NAME", "served model name (default: the only one /v1/models lists)", &c.o.model},
		{"tokenizer", 't', CLI_STR, "PATH|DIR|ORG/NAME", "tokenizer.json, .model, a model folder or a model id in the local Hugging Face cache: audit usage.prompt_tokens; needed for recall", &c.o.tokenizer},
		{"revision", 0, CLI_STR, "REV", "with --tokenizer ORG/NAME: the branch, tag or commit in the cache (default main)", &c.revision},
		{"template", 0, CLI_STR, "NAME|PATH", "chat template for the audit and recall documents (deepseek-v3, ..., a .jinja file; default: the model folder's)", &c.o.template_name},
		{"concurrency", 'c', CLI_LONG, "N", "requests in flight at once (default 1)", &c.o.concurrency},
		{"timeout", 0, CLI_DOUBLE, "SEC", "whole-request and first-byte timeout (default scales with the prompt; at most 604800, a week)", &c.o.timeout},
		{"idle-timeout", 0, CLI_DOUBLE, "SEC", "longest gap between response bytes (default 120; at most 604800)", &c.o.idle_timeout},
		{"out", 'o', CLI_STR, "DIR", "results folder (default results/SUITE-MODEL-TIMESTAMP, new)", &c.o.out},
		{"resume", 0, CLI_FLAG, NULL, "continue DIR: skip attempts already recorded", &c.o.resume},
		{"case", 0, CLI_LIST, "GLOB", "run only the cases whose id matches (shell glob; repeatable: any)", &c.cases},
		{"repeat", 0, CLI_LONG, "N", "run every case N times (overrides the suite's repeat)", &c.o.repeat},
		{"api-key-env", 0, CLI_STR, "NAME", "environment variable holding the API key (default OPENAI_API_KEY)", &c.o.api_key_env},
		{"cacert", 0, CLI_STR, "FILE", "trust the CAs in this PEM file for https (default $CURL_CA_BUNDLE, else $SSL_CERT_FILE, else the system's)", &c.o.cacert},
		{"insecure", 0, CLI_FLAG, NULL, "do not verify the server's TLS certificate (recorded in the manifest)", &c.o.insecure},
		{"date", 0, CLI_STR, "YYYY-MM-DD[THH:MM:SS]", "the server's local time for a template's strftime_now (default: now; in the manifest when the template reads it)", &c.date},
		{"server", 0, CLI_STR, "vllm|sglang", "render the audit as this server prepares messages (default: detected, else vllm)", &c.o.server_name},
		{"metrics", 0, CLI_FLAG, NULL, "load cases: scrape the server's /metrics before and after each level (DIR/raw/metrics-*)", &c.o.metrics},
		{"wait-ready", 0, CLI_STR, "DURATION", "once the suite, tokenizer and template are checked, poll /health and /v1/models until the server answers (e.g. 30m)", &c.wait_ready},
		{"warmup", 0, CLI_LONG, "N", "send N uncounted requests of the first case before the suite", &c.o.warmup},
	};
	const struct cli_cmd cmd = {
		"run", "SUITE.json [--base-url URL] [--model NAME] [--tokenizer PATH --template NAME] [--out DIR] [--resume]",
		"Send every case of SUITE.json to an OpenAI-compatible endpoint with streaming,\n"
		"judge each response strictly (HTTP 200 alone is never success), audit\n"
		"usage.prompt_tokens against the local tokenizer, grade the answer, and journal\n"
		"one record per attempt. A live progress line is shown on a terminal; a summary\n"
		"line always ends the run on stderr, followed by one line per failing case\n"
		"(its reasons and first reason) and what to do when the cause is plain.\n"
		"SUITE may be a shipped suite's name ('needle suites' lists them). Ctrl-C\n"
		"stops cleanly: what finished is kept, the report says INCOMPLETE, and the\n"
		"command to finish the run with --resume is printed (exit 5, whatever\n"
		"had failed: a scheduler retries it).",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 1, 1,
		CLI_EXIT_PASS | CLI_EXIT_FAIL | CLI_EXIT_USAGE | CLI_EXIT_ENDPOINT | CLI_EXIT_INTERRUPTED};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome, status;
	struct diag d;
	struct buf suite;

	diag_init(&d);
	buf_init(&suite, BUF_MAX_DEFAULT);
	c.o.concurrency = 1;
	c.o.repeat = LONG_MIN; /* not given */
	buf_init(&c.file, 1 << 20);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN)
		check_opts(&c, &d);
	if (!d.code && outcome != CLI_HELP_SHOWN)
		shipped_resolve(args[0], &suite, &d);
	if (d.code || outcome == CLI_HELP_SHOWN) {
		buf_release(&suite);
		return d.code ? cli_report("run", &d) : EXIT_PASS;
	}
	if (c.o.repeat == LONG_MIN)
		c.o.repeat = 0;
	c.o.case_globs = c.cases.v;
	c.o.ncase_globs = c.cases.n;
	c.o.stop = &stop_requested;
	c.argc = argc;
	c.argv = argv;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error, not death */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	c.o.server_forced = c.o.server_name != NULL;
	status = run(&c, suite.data, &d);
	buf_release(&suite);
	mem_free(c.hub_path);
	return status;
}
