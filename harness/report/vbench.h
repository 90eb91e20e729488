/*
 * vbench — a run's load levels in the result keys of `vllm bench serve`
 * (vLLM's vllm/benchmarks/serve.py), for the scripts and dashboards built on
 * its result JSON: one JSON object per line per load level (case x
 * concurrency or rate), as `vllm bench serve --append-result` appends them.
 *
 * A level's requests are those of its counted rounds (the pre-check and the
 * warm-ups left out, as vllm bench leaves its warm-up requests out); a
 * request "completed" when it passed every check (verdict pass), else it
 * "failed". Definitions, as serve.py's calculate_metrics (times in ms):
 *  - duration (s): the sum over the level's rounds of the round's wall time
 *    (latest done - earliest scheduled; one vllm bench run is one round);
 *  - request_throughput = completed / duration; output_throughput =
 *    total_output_tokens / duration; total_token_throughput =
 *    (total_input_tokens + total_output_tokens) / duration, the tokens
 *    being the server's usage of the completed requests;
 *  - ttft: first token of any kind - sent; e2el: done - sent; tpot: (e2el -
 *    ttft) / (output tokens - 1) for completed requests with more than one
 *    output token (vLLM's definition: unlike needle's own TPOT it counts the
 *    wait after the last token, loadstat.h);
 *  - for each: mean_, median_, std_ (population, numpy's np.std) and
 *    p50_, p90_, p95_, p99_ with numpy's linear interpolation (stats.h);
 *    over no sample they are 0, as serve.py's np.mean(x or 0) gives;
 *  - itl: the gaps between a completed request's successive token chunks
 *    (the record's "load" "itl_ms"), pooled over the level as serve.py pools
 *    its itls; null when the records have none (kept before needle kept
 *    them);
 *  - request_goodput: requests that met every bound of the case's "slo"
 *    over duration, null without one (serve.py's --goodput);
 *  - request_rate is the level's rate or "inf" for a closed loop (serve.py
 *    writes "inf" when no rate was set), max_concurrency the level's
 *    concurrency or null; num_prompts the level's requests.
 * Every object also has date (the run's start), endpoint_type ("openai" for
 * /v1/completions, "openai-chat" for chat), label "needle", model_id,
 * tokenizer_id (the tokenizer's path) and needle's own keys: needle_case,
 * needle_level, needle_rounds, needle_run_id.
 */
#ifndef NEEDLE_VBENCH_H
#define NEEDLE_VBENCH_H

#include "base/buf.h"
#include "base/err.h"
#include "report.h"

/* A run's load levels, gathered in report_load's one pass over its journal
 * (a torn last line skipped): vbench_fold sets `also` up to gather each load
 * request; vbench_write then appends one JSON line per load level to `out`,
 * from the run so loaded (its manifest if present) and what its `also`
 * gathered; nothing when the run has no load case. ERR_NOMEM, ERR_LIMIT.
 * Memory grows with the load requests. */
enum err vbench_fold(struct report_also *also, struct diag *d);
enum err vbench_write(const struct report_run *r, struct buf *out, struct diag *d);

#endif
