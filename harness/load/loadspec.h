/*
 * loadspec — the "load" object of a load case in a suite file, validated and
 * typed (docs/suite-files.md "Load cases"):
 *
 *	"load": {"input_tokens": 1024, "output_tokens": 128,
 *	         "endpoint": "completions" | "chat",            [completions]
 *	         "concurrency": [1, 8, 32]   (closed loop)  or
 *	         "rate": [0.3, 0.48],        (open loop, requests/s)
 *	         "arrival": "poisson" | "constant",            [poisson; rates only]
 *	         "requests": 16 | [8, 16, 64],                 (per level, per round)
 *	         "rounds": 3, "warmup": N,        [3; one round's worth per level]
 *	         "max_rounds": 12, "budget_minutes": 20,       [rounds; none]
 *	         "detect": {"output_tps": 10, "ttft_p50": 10, "ttft_p95": 15},
 *	         "seed": 1, "filler": "prose",                 [1; prose]
 *	         "slo": {"ttft_ms": 3000, "tpot_ms": 50, "e2e_ms": 0}}
 *
 * Self-sizing: with "max_rounds" above "rounds", a level gets a further
 * round, one block at a time, until its own noise says a like run could
 * tell a change of each "detect" size (percent, the cutover rule's by
 * default) from none (loadci_settled), or it has "max_rounds" counted rounds,
 * or the case has run "budget_minutes" (see loadplan.h).
 *
 * Exactly one of concurrency and rate. Every number is checked where it is
 * written; a bad one fails with ERR_INPUT as "FILE: JSON.PATH: reason". The
 * context check (input + output within the server's max_model_len) needs the
 * server, so the runner makes it with loadspec_check_fit.
 */
#ifndef NEEDLE_LOADSPEC_H
#define NEEDLE_LOADSPEC_H

#include <cjson/cJSON.h>

#include "base/err.h"
#include "generators/loadgen.h"
#include "loadstat.h"
#include "arrival.h"

#define LOADSPEC_MAX_LEVELS 64
#define LOADSPEC_MAX_REQUESTS 1000000 /* per level and round */
#define LOADSPEC_MAX_CONCURRENCY 65536
#define LOADSPEC_MAX_ROUNDS 1000

struct loadspec {
	long input_tokens, output_tokens;
	enum loadgen_endpoint endpoint;
	int open_loop;                          /* rate given, not concurrency */
	long concurrency[LOADSPEC_MAX_LEVELS];
	double rate[LOADSPEC_MAX_LEVELS];       /* requests/s */
	int nlevels;
	long requests[LOADSPEC_MAX_LEVELS];     /* per level, one round */
	long rounds;                            /* counted rounds, at least */
	long max_rounds;                        /* at most (self-sizing); >= rounds */
	double budget_minutes;                  /* wall bound of the case; 0 = none */
	struct {
		double output_tps, ttft_p50, ttft_p95; /* percent */
	} detect;
	long warmup;                            /* per level; -1 = one round's worth */
	enum arrival_kind arrival;
	long seed;
	const char *filler;                     /* borrowed from the JSON */
	struct loadstat_slo slo;                /* 0 = unbounded */
};

/* Validates `v` (the value of "load" at JSON path `path` of `file`) and fills
 * `out` (which may be NULL to validate only). Borrows strings from `v`. */
enum err loadspec_parse(const cJSON *v, const char *file, const char *path,
			struct loadspec *out, struct diag *d);

/* Warm-up requests of level `i`: the given number, or one round's worth. */
long loadspec_warmup(const struct loadspec *s, int i);

/* ERR_INPUT naming `file` and `path` when input + output tokens exceed the
 * server's context (vLLM: prompt + max_tokens <= max_model_len). */
enum err loadspec_check_fit(const struct loadspec *s, long max_model_len,
			    const char *file, const char *path, struct diag *d);

#endif
