/*
 * metrics — the Prometheus text exposition format (0.0.4) that vLLM and SGLang
 * serve on GET /metrics, parsed into a small table, and the delta between two
 * snapshots (what the server did during one load level).
 *
 * The format: one sample per line, `name{label="value",...} value [timestamp]`;
 * `# HELP name text` and `# TYPE name counter|gauge|histogram|summary|untyped`
 * lines; any other `#` line is a comment; blank lines are ignored. Label
 * values escape `\\`, `\"` and `\n`; a value is a float (NaN, +Inf, -Inf
 * allowed); a timestamp is integer milliseconds. A histogram family F has
 * samples F_bucket{le="..."} (cumulative), F_sum and F_count; prometheus_client
 * (which both servers use) names a counter F and exposes F_total, plus
 * F_created gauges.
 *
 * The table is sorted by each sample's canonical key, `name{a="x",b="y"}` with
 * labels in byte order of their names and values escaped as in the format,
 * so two snapshots of one server line up key for key. A malformed line, a
 * repeated key or more than METRICS_MAX_SAMPLES samples is refused with its
 * line and column (ERR_INPUT); nothing is ever read past `len`.
 */
#ifndef NEEDLE_METRICS_H
#define NEEDLE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define METRICS_MAX_SAMPLES 200000
#define METRICS_MAX_LINE ((size_t)1 << 20) /* longest line accepted, bytes */
#define METRICS_SPEC_POS_MAX 16 /* draft positions kept of a speculative decoder */

enum metrics_type {
	METRICS_UNTYPED,
	METRICS_COUNTER,
	METRICS_GAUGE,
	METRICS_HISTOGRAM,
	METRICS_SUMMARY
};

struct metrics_sample {
	char *key;           /* owned: canonical `name{...}` (see above) */
	size_t name_len;     /* the metric name is key[0..name_len) */
	double value;
	int has_timestamp;
	int64_t timestamp_ms;
};

struct metrics_family {
	char *name;          /* owned */
	enum metrics_type type;
};

struct metrics {
	struct metrics_sample *s; /* owned, sorted by key */
	size_t n, cap;
	struct metrics_family *f; /* owned, from # TYPE lines, in text order */
	size_t nf, capf;
};

/* An empty table. Allocates nothing. */
void metrics_init(struct metrics *m);
/* Frees everything and re-initialises. Accepts NULL. */
void metrics_release(struct metrics *m);

/* Parses `len` bytes of exposition text (not NUL-terminated) into `m`, which
 * must be empty. On failure `m` holds what was parsed before the bad line;
 * the caller releases it either way. */
enum err metrics_parse(struct metrics *m, const char *text, size_t len,
		       struct diag *d);

/* The declared type of the family a sample name belongs to (F for F,
 * F_total, F_created, F_bucket, F_sum, F_count), METRICS_UNTYPED if none. */
enum metrics_type metrics_type_of(const struct metrics *m, const char *name,
				  size_t name_len);

/* The sample with this canonical key, or NULL. Borrowed. */
const struct metrics_sample *metrics_find(const struct metrics *m, const char *key);

/* The unescaped value of label `label` of sample `s` into `out` (cap bytes,
 * NUL-terminated, truncated to fit); 0 if the sample has no such label. */
int metrics_label(const struct metrics_sample *s, const char *label, char *out,
		  size_t cap);

/* The sum of `name` over all its label sets; `*count` (may be NULL) is how
 * many samples there were. 0 when none. */
double metrics_sum(const struct metrics *m, const char *name, size_t *count);

/* The largest value of `name` over its label sets; `*count` (may be NULL)
 * as for metrics_sum. NaN when none. */
double metrics_max(const struct metrics *m, const char *name, size_t *count);

/* `out` (empty) = what happened between `before` and `after`: counters,
 * histogram and summary samples become after - before (after alone when the
 * key is new or the value went down: the server restarted), gauges and
 * untyped samples keep their value in `after`. Types come from `after`. */
enum err metrics_delta(const struct metrics *before, const struct metrics *after,
		       struct metrics *out, struct diag *d);

/* The q-quantile (0..1) of histogram family `family`, its buckets summed over
 * all other labels, by linear interpolation inside the bucket that holds it
 * (Prometheus' histogram_quantile); the highest finite bound when it falls in
 * +Inf; NaN when the histogram is absent or empty. */
double metrics_quantile(const struct metrics *m, const char *family, double q);

/* The server's own view of a load level, in the names of its dialect (vLLM
 * `vllm:*` or SGLang `sglang:*`, found from the samples); a figure the server
 * does not expose is NaN. Counters and histograms come from a delta, gauges
 * from the snapshot after. A server with several engines (vLLM data parallel:
 * label `engine`; SGLang DP attention: `dp_rank`) exposes one sample per
 * engine: counters, histograms and the running and waiting counts are summed
 * over them (the server's totals); a gauge that is a share of one engine's
 * capacity (KV cache usage, SGLang's cache hit rate) is averaged over them,
 * its largest kept beside it (4 engines at 0.5 KV usage are 0.5, max 0.5;
 * never 2). */
struct metrics_view {
	const char *dialect;           /* "vllm", "sglang" or NULL; static */
	double prompt_tokens, generation_tokens;     /* counter deltas */
	double requests;               /* TTFT histogram count delta */
	double ttft_mean_s, ttft_p50_s, ttft_p95_s;  /* from the TTFT histogram */
	double itl_mean_s, itl_p95_s;  /* inter-token latency histogram */
	double prefix_hits, prefix_queries;          /* tokens (vLLM) */
	double cache_hit_rate;         /* SGLang gauge (mean over engines); vLLM
					  hits / queries */
	double cache_hit_rate_max;     /* its largest engine's (vLLM: the same) */
	double running, waiting;       /* gauges after, summed over engines */
	double kv_usage;               /* 0..1, gauge after, mean over engines */
	double kv_usage_max;           /* 0..1, its largest engine's */
	double engines;                /* label sets of the KV usage gauge */
	/* speculative decoding; NaN when the server exports none (no draft
	 * model configured, or an older server) */
	double spec_drafts, spec_draft_tokens, spec_accepted; /* vLLM counter deltas */
	double spec_accept_rate;       /* accepted / drafted tokens: vLLM from the
					  deltas, SGLang its gauge after (mean over
					  engines) */
	double spec_accept_length;     /* tokens a verification step yields, the
					  bonus token included: vLLM 1 + accepted
					  / drafts, SGLang its gauge after */
	double spec_pos[METRICS_SPEC_POS_MAX]; /* vLLM: the share of drafts whose
					  token at draft position i was accepted */
	int spec_npos;                 /* positions in spec_pos */
};

void metrics_view(const struct metrics *delta, const struct metrics *after,
		  struct metrics_view *out);

/* The view's members as run writes it (RUN_DIR/raw/metrics-*.json, and a
 * load cell's "server" in summary.json) and the report and diff read it;
 * "error" says why a level has no view. */
#define MV_DIALECT "dialect"
#define MV_PROMPT_TOKENS "prompt_tokens"
#define MV_GENERATION_TOKENS "generation_tokens"
#define MV_REQUESTS "requests"
#define MV_TTFT_MEAN_S "ttft_mean_s"
#define MV_TTFT_P50_S "ttft_p50_s"
#define MV_TTFT_P95_S "ttft_p95_s"
#define MV_ITL_MEAN_S "itl_mean_s"
#define MV_ITL_P95_S "itl_p95_s"
#define MV_PREFIX_HITS "prefix_hits"
#define MV_PREFIX_QUERIES "prefix_queries"
#define MV_CACHE_HIT_RATE "cache_hit_rate"
#define MV_CACHE_HIT_RATE_MAX "cache_hit_rate_max"
#define MV_RUNNING "running"
#define MV_WAITING "waiting"
#define MV_KV_USAGE "kv_usage"
#define MV_KV_USAGE_MAX "kv_usage_max"
#define MV_ENGINES "engines"
#define MV_SPEC_ACCEPT_RATE "spec_accept_rate"
#define MV_SPEC_ACCEPT_LENGTH "spec_accept_length"
#define MV_SPEC_DRAFTS "spec_drafts"
#define MV_SPEC_DRAFT_TOKENS "spec_draft_tokens"
#define MV_SPEC_ACCEPTED "spec_accepted"
#define MV_SPEC_ACCEPT_BY_POS "spec_accept_by_pos"
#define MV_ERROR "error"

/* The name of a load level's files in RUN_DIR/raw: "metrics-CASE-c8" or
 * "metrics-CASE-r0.3" (level: a concurrency, or a rate when `open_loop`)
 * followed by `suffix` (".json", "-before.prom", "-after.prom"). */
void metrics_file_name(const char *case_id, int open_loop, double level, const char *suffix,
		       char *out, size_t cap);

#endif
