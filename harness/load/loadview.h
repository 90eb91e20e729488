/*
 * loadview — what the report puts beside a load cell's client-side figures
 * (loadcells.h): the server's own view of the level (--metrics, metrics.h)
 * and the client's own cost (loadclient.h), with a warning wherever the
 * client could have distorted the figures.
 *
 * Each cell of summary.json "load.cells" gets:
 *  - "server": the level's metrics_view from RUN_DIR/raw/metrics-CASE-c8.json
 *    ({"dialect", "requests", "prompt_tokens", "generation_tokens",
 *    "ttft_p50_s", "ttft_p95_s", "itl_mean_s", "itl_p95_s", "running",
 *    "waiting", "kv_usage", "prefix_hits", "prefix_queries", ...} as run
 *    stored it, or {"error"} when the scrape failed); absent without
 *    --metrics;
 *  - "client_cpu_share" (CPU over wall time of its counted rounds together)
 *    and "client_cpu_share_max" (its busiest round), from the manifest's
 *    "load_client"; absent when the manifest has none;
 *  - "client_probe_ms": the median of the machine's probe (loadclient.h)
 *    over the counted rounds of its case, all levels (they alternate in
 *    blocks); absent when the manifest has none.
 * "load.client" is the manifest's "client" (the whole run), and
 * "load.warnings" lists, per cell, why its figures may be the client's:
 *  - a counted round where needle used more than LOADVIEW_CPU_WARN of a core
 *    (throughput and TTFT may be bounded by the client);
 *  - a counted round whose scheduling lag P99 exceeds LOADVIEW_LAG_WARN_MS
 *    (the server did not get the planned arrivals).
 */
#ifndef NEEDLE_LOADVIEW_H
#define NEEDLE_LOADVIEW_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "loadcells.h"

#define LOADVIEW_CPU_WARN 0.5     /* cores */
#define LOADVIEW_LAG_WARN_MS 10.0

/* Adds the above to the cells of `lc` (loadcells_build's) from
 * `manifest` (may be NULL) and RUN_DIR `dir`. A metrics file that cannot be
 * read or parsed is named in that cell's "server" {"error"}, never a failed
 * report. ERR_NOMEM only. */
enum err loadview_attach(struct loadcells *lc, const cJSON *manifest, const char *dir,
			 struct diag *d);

/* Appends the Markdown of the server views, the client's CPU and the
 * warnings of `lc` (nothing without a cell), for report_markdown.
 * ERR_NOMEM or ERR_LIMIT. */
enum err loadview_markdown(const struct loadcells *lc, struct buf *out);

#endif
