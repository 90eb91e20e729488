/*
 * run — the engine of `needle run` (docs/runs.md "The files of a run folder"): sends a suite's cases
 * to an OpenAI-compatible endpoint, judges every streamed response, and
 * journals one record per attempt. It prints nothing: the caller sees progress
 * through a callback and the outcome through run_counts and run_status.
 *
 * An attempt is (case, repeat, seed). Attempts are prepared only when a slot
 * is free (opts.concurrency), so a recall document (megabytes for 1M tokens)
 * is in memory only while its request is in flight; once its body is built the
 * document is dropped and only the needles are kept for grading. Each
 * attempt passes through the stages in order: request (req.h; recall documents
 * haystack.h), HTTP (http.h) into the stream (stream.h), the transport check,
 * the audit (audit.h), the grade (grade.h; a passing first round of a tool
 * case goes on to round 2, toolturn.h), the record (record.h) into the
 * folder (results.h). verdict = pass only if transport, audit (when enabled)
 * and grade all pass; a failure is recorded like a pass and stays in every
 * count.
 *
 * Several base URLs are replicas serving one model: each attempt goes to the
 * replica with the fewest requests in flight (ties in turn), both rounds of a
 * tool case to the same one, and its record names it ("replica", "base_url").
 * A shard (shard.h) runs only its own attempts; the manifest records the
 * shard, the rule and how many attempts it holds, so `needle merge` can tell a
 * complete shard from a partial one.
 */
#ifndef NEEDLE_RUN_H
#define NEEDLE_RUN_H

#include <signal.h>
#include <stddef.h>

#include "base/err.h"
#include "base/redact.h"
#include "net/probe.h"
#include "record.h"
#include "shard.h"
#include "tpl/tpl.h"

#define RUN_MAX_CONCURRENCY 1024
#define RUN_MAX_ENDPOINTS 32

struct run;

/* Called after every poll of the HTTP client (`force` = 1 once, before the
 * first): the place for a progress line. */
typedef void (*run_progress_fn)(void *ctx, const struct run *r, int force);

/* Called once before a wait of more than a second for the common start
 * (--start-at): until when and the time now, both Unix seconds. */
typedef void (*run_wait_fn)(void *ctx, double until_s, double now_s);

/* The options (strings borrowed; NULL when not given). */
struct run_opts {
	const char *base_urls[RUN_MAX_ENDPOINTS]; /* replicas of one deployment */
	int nbase_urls;                /* >= 1 */
	struct shard shard;            /* count 0: the whole suite */
	double start_at;               /* Unix seconds to begin at, or 0 */
	const char *api_key;           /* bearer token or NULL */
	const char *api_key_env;       /* where it came from, for messages */
	const char *model, *tokenizer, *template_name, *out;
	const char *const *case_globs; /* --case: run the cases matching any */
	int ncase_globs;
	volatile const sig_atomic_t *stop; /* when it becomes non-zero (a signal),
					* start nothing new, abandon what is in
					* flight, and mark the run interrupted */
	const char *server_name;       /* --server as given */
	int server_forced;             /* 1: `server` is --server's */
	enum tpl_server server;
	long concurrency;              /* 1 .. RUN_MAX_CONCURRENCY */
	long repeat;                   /* 0: each case's own */
	double timeout, idle_timeout;  /* <= 0: scaled defaults */
	int resume;
	int metrics;                   /* load cases: scrape /metrics around each level */
	long warmup;                   /* uncounted requests before the suite (0: none) */
	const char *cacert;            /* CA file to trust, or NULL: the system's */
	const char *cacert_from;       /* "--cacert", "CURL_CA_BUNDLE" or "SSL_CERT_FILE" */
	const char *capath;            /* $SSL_CERT_DIR: more CAs to trust, or NULL */
	int insecure;                  /* --insecure: no TLS verification */
	int poll_ms;                   /* longest wait between progress calls */
	const struct redact *redact;   /* secrets kept out of the folder, or NULL */
	struct record_origin origin;   /* config file, tokenizer source: for the manifest */
	run_progress_fn progress;      /* or NULL */
	run_wait_fn waiting;           /* or NULL; called with progress_ctx */
	double wait_ready_s;           /* > 0 (--wait-ready): first poll every
					* replica until it is ready, after the
					* suite, tokenizer and template are checked */
	probe_progress_fn ready_wait;  /* or NULL: hears of every such poll;
					* called with progress_ctx */
	void *progress_ctx;
};

/* The attempts of this process (prior_*: found recorded on --resume). */
struct run_counts {
	size_t total, done, pass, fail;
	size_t fail_transport, fail_audit, fail_grade;
	size_t refused;                /* connect failures and 401/403 */
	size_t prior_pass, prior_fail;
	/* the ETA's measure: an attempt weighs its prompt (recall tokens, else
	 * the case's bytes / 4) plus RUN_WEIGHT_BASE */
	double weight_total, weight_done;
	int interrupted;               /* the stop flag ended the run */
};

#define RUN_WEIGHT_BASE 64.0

/*
 * Prepares a run of the suite at `suite_path`: loads and checks the suite,
 * the tokenizer and template, discovers the endpoint (endpoint.h), opens the
 * results folder (o->out, else results/SUITE-MODEL-TIMESTAMP, the served
 * model's name made safe and a UTC time to the millisecond, "-2", "-3" ...
 * added while such a folder exists; on --resume it must
 * hold the same suite) and writes the manifest. With o->wait_ready_s it
 * waits for the replicas between the local checks and the discovery.
 * ERR_USAGE/ERR_INPUT/ERR_IO for bad input, ERR_ENDPOINT when the endpoint is
 * unusable, ERR_INTERRUPTED when o->stop ended the wait. The caller frees
 * *out with run_free, also on failure (it may be NULL then).
 */
enum err run_open(const struct run_opts *o, const char *suite_path,
		  struct run **out, struct diag *d);

/* Runs every attempt not yet recorded, then finishes the manifest. A failed
 * attempt is no error; ERR_* is for a case that cannot be built or a folder
 * that cannot be written (the run stops). */
enum err run_go(struct run *r, struct diag *d);

/* The counts so far (r may be NULL: all zero). */
struct run_counts run_counts(const struct run *r);
/* Warnings from loading a model folder as --tokenizer (tpl_model.h), "" when
 * none; the caller shows them after run_open, also when it failed. */
const char *run_warnings(const struct run *r);
/* The results folder (after run_open succeeded). */
const char *run_dir(const struct run *r);
/* The attempt in flight the longest: 0 when none, else its case id (borrowed),
 * repeat and start (io_now_ms). */
int run_slowest(const struct run *r, const char **id, long *repeat,
		double *start_ms);
/* The exit status of a finished run: EXIT_ENDPOINT when every attempt was
 * refused (connect failure, HTTP 401/403), EXIT_FAIL when any attempt failed
 * (this run's or recorded before), else EXIT_PASS. */
int run_status(const struct run *r);
/* Accepts NULL. */
void run_free(struct run *r);

#endif
