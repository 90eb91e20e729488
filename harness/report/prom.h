/*
 * prom — a run's summary as Prometheus metrics, in the text exposition
 * format (version 0.0.4) that node_exporter's textfile collector reads and
 * the Pushgateway accepts, so runs land on the Grafana boards next to the
 * servers' own metrics (dashboards/needle.json reads these names).
 *
 * Every sample carries the run's labels: run (the folder's name), run_id
 * (the manifest's), suite and model; the values are the summary's (report.h),
 * in base units (seconds, ratios 0..1). All are gauges: they describe one
 * finished run, not a counter that grows.
 *
 *   needle_info{..., needle_commit, server_version, server_kind} 1
 *   needle_run_start_timestamp_seconds, needle_run_end_timestamp_seconds
 *   needle_attempts{verdict="pass"|"fail"}, needle_pass_ratio and its 95%
 *     Wilson bounds needle_pass_ratio_lower, needle_pass_ratio_upper
 *   needle_failed_attempts{stage="transport"|"audit"|"grade"}
 *   needle_case_attempts{case, kind}, needle_case_pass_ratio{case, kind}
 *   needle_latency_seconds{figure="ttft"|"ttfc"|"e2e"|"tpot"|"first_byte",
 *     percentile="50"|"90"|"99"} over the attempts that are not load
 *     requests (nearest-rank, stats.h; "quantile" is the label of the
 *     summary type only, so promtool would reject it on a gauge)
 *   per load level, labelled case and concurrency or rate:
 *     needle_load_requests, needle_load_success_ratio,
 *     needle_load_output_throughput_tokens_per_second,
 *     needle_load_ttft_seconds{percentile="50"|"95"|"99"},
 *     needle_load_tpot_seconds{percentile="50"|"95"},
 *     needle_load_e2e_seconds{percentile="50"|"95"} (each the median over
 *     the level's valid rounds, loadstat.h)
 *
 * A figure the summary does not have (no samples) is left out, never 0.
 */
#ifndef NEEDLE_PROM_H
#define NEEDLE_PROM_H

#include "base/buf.h"
#include "base/err.h"
#include "report.h"

/* Appends the metrics of summary `m` (borrowed) to `out`. ERR_NOMEM,
 * ERR_LIMIT ("cannot write the Prometheus metrics: ..."); `out` may hold a
 * partial text on error. */
enum err prom_write(const struct report_sum *m, struct buf *out, struct diag *d);

#endif
