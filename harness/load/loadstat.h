/*
 * loadstat — the figures of a load test, exactly as the field reports define
 * them (docs/cutover.md "Where the rule comes from"; docs/runs.md "Load cells"),
 * as pure functions on plain structs: requests -> one round -> one cell
 * (case x level or rate). One reader, record_load_request (run/record.h),
 * turns a load record into a request, so that every consumer (the summary's
 * cells, the gates, the vllm-bench export) times a request the same way.
 *
 * Definitions:
 *  - a request succeeded when it passed every strict check (transport, exact
 *    lengths, audit): `ok`. A round is valid only when every request in it
 *    succeeded; an invalid round stays in the cell's request and success
 *    counts but not in its medians;
 *  - wall time of a round = latest `done` - earliest `scheduled`; output
 *    throughput = completion tokens of successful requests / wall time
 *    (failed requests still occupy the time);
 *  - TTFT = `first` - `sent`, `first` being the first non-empty generated
 *    fragment of any kind, reasoning included (docs/cutover.md "Where the rule comes
 *    from"; role-only or empty chunks never count). TTFC
 *    = `first_content` - `sent`, to the first content or tool-call fragment,
 *    is kept as its own figure: on a thinking stream it is TTFT plus the
 *    reasoning. TPOT of one request = (`last` - `first`) / (completion_tokens
 *    - 1), from the same first fragment to the last, defined for
 *    completion_tokens >= 2, so TTFT + (n - 1) x TPOT is the last fragment's
 *    time, at most E2E; E2E = `done` - `sent`. Latencies are over successful
 *    requests only;
 *  - percentiles are nearest-rank, as needle's report (stats.h): pP is the
 *    ceil(P/100 * n)-th smallest sample, so every value is a measured one
 *    (the median of an even count is the lower middle value);
 *  - per cell, each figure is the median over valid rounds with its min and
 *    max and n = valid rounds; a P95 over rounds is the median of per-round
 *    P95s, never a pooled percentile. SLO attainment and goodput are the
 *    median over all counted rounds, invalid ones included: a failed request
 *    already counts as not meeting the SLO, and the field reports give 88.5%
 *    as the median of three rounds that each had a failure (docs/cutover.md
 *    "Where the rule comes from"), which valid rounds alone could not give;
 *  - SLO attainment = share of a round's requests that succeeded and met every
 *    bound that is set (TPOT only where it is defined); goodput = those
 *    requests / wall time;
 *  - achieved rate = (n - 1) / (last send - first send) over the round's
 *    requests (the schedule puts the first arrival at its start); scheduling
 *    lag = `sent` - `scheduled`, per request, P50/P99/max.
 *
 * All times are milliseconds on one monotonic clock; a time < 0 means "never"
 * (no content arrived).
 */
#ifndef NEEDLE_LOADSTAT_H
#define NEEDLE_LOADSTAT_H

#include <stddef.h>

/* One request as the runner saw it. */
struct loadstat_req {
	int ok;                 /* passed every strict check */
	double scheduled;       /* ms: planned send (closed loop: = sent) */
	double sent;            /* ms: request written */
	double first;           /* ms: first non-empty fragment (reasoning, content
				 * or tool call), < 0 if none */
	double first_content;   /* ms: first content or tool-call fragment, < 0
				 * if none */
	double last;            /* ms: last fragment, < 0 if none */
	double done;            /* ms: response complete or failed */
	long completion_tokens; /* server usage */
};

/* Bounds; 0 = no bound. */
struct loadstat_slo {
	double ttft_ms;
	double tpot_ms;
	double e2e_ms;
};

struct loadstat_round {
	size_t requests, succeeded;
	int valid;              /* every request succeeded (and there was one) */
	double wall_ms;
	long output_tokens;     /* of successful requests */
	double output_tps;      /* tokens/s */
	size_t n_latency;       /* successful requests (TTFT, E2E samples) */
	size_t n_tpot;          /* of them with completion_tokens >= 2 */
	double ttft_p50_ms, ttft_p95_ms, ttft_p99_ms;
	size_t n_ttfc;          /* of them with a content or tool-call fragment */
	double ttfc_p50_ms, ttfc_p95_ms;
	double tpot_p50_ms, tpot_p95_ms;
	double e2e_p50_ms, e2e_p95_ms;
	double achieved_rate;   /* requests/s; 0 with fewer than two requests */
	double lag_p50_ms, lag_p99_ms, lag_max_ms;
	double slo_attainment;  /* 0..1; 1 when no bound is set and all succeeded */
	double goodput_rps;
	size_t n_itl;           /* inter-token latencies of its successful
				 * requests, pooled (loadstat_round_itl) */
	double itl_p50_ms, itl_p95_ms, itl_p99_ms;
};

/* A figure over a cell's rounds. */
struct loadstat_fig {
	size_t n;               /* rounds it is taken over; 0 = no value */
	double median, min, max;
};

struct loadstat_cell {
	size_t rounds_total, rounds_valid;
	size_t requests, succeeded; /* summed over all counted rounds */
	double success_rate;    /* succeeded / requests; 0 when none */
	struct loadstat_fig output_tps, ttft_p50_ms, ttft_p95_ms, ttft_p99_ms;
	struct loadstat_fig ttfc_p50_ms, ttfc_p95_ms;
	struct loadstat_fig tpot_p50_ms, tpot_p95_ms, e2e_p50_ms, e2e_p95_ms;
	struct loadstat_fig achieved_rate, lag_p99_ms;  /* valid rounds */
	struct loadstat_fig slo_attainment, goodput_rps; /* all rounds */
	struct loadstat_fig itl_p50_ms, itl_p95_ms, itl_p99_ms; /* valid rounds
				 * that have inter-token latencies */
	double lag_max_ms;      /* over all rounds */
};

/* Sets the round's inter-token latency percentiles from the `n` gaps (ms)
 * between consecutive token chunks of its successful requests, pooled as
 * the peers' clients pool them (the record's "load"."itl_ms"); it sorts
 * them. No gaps (requests of one token, or records from before needle kept
 * them): n_itl 0, and the cell leaves the round out of its ITL figures. */
void loadstat_round_itl(struct loadstat_round *r, double *gaps, size_t n);

/* The per-request figures, as defined above. */
enum loadstat_kind {
	LOADSTAT_TTFT,          /* first - sent, of a successful request with a fragment */
	LOADSTAT_TTFC,          /* first_content - sent, of a successful request with content */
	LOADSTAT_TPOT,          /* (last - first) / (tokens - 1), tokens >= 2 */
	LOADSTAT_E2E,           /* done - sent, of a successful request */
	LOADSTAT_LAG            /* sent - scheduled, of every request */
};

/* Request `q`'s figure of kind `k` into *v; 0 when it has none (a failed
 * request has no latency; TPOT wants two tokens). The one place a figure is
 * taken from a request: cells and gates (loadci.h) read it here. */
int loadstat_sample(const struct loadstat_req *q, enum loadstat_kind k, double *v);

/* Whether one request met every set bound of `slo` (and succeeded). */
int loadstat_meets(const struct loadstat_req *q, const struct loadstat_slo *slo);

/* Figures of one round of `n` requests (borrowed). `slo` may be NULL (no
 * bounds). Allocates nothing: the samples are sorted in `scratch`, which must
 * hold n doubles (borrowed). */
void loadstat_round(const struct loadstat_req *q, size_t n,
		    const struct loadstat_slo *slo, double *scratch,
		    struct loadstat_round *out);

/* Figures of a cell from its `n` counted rounds (warm-up excluded); `scratch`
 * must hold n doubles (borrowed). */
void loadstat_cell(const struct loadstat_round *r, size_t n, double *scratch,
		   struct loadstat_cell *out);

#endif
