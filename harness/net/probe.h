/*
 * probe — what the cutover helpers ask a server outside the suite: whether it
 * is ready yet (a first start can take half an hour: docs/cutover.md
 * "Where the rule comes from"), and its
 * Prometheus /metrics (metrics.h) before and after each load level.
 *
 * Ready means GET /health answers 200 and GET /v1/models answers 200 with at
 * least one model: vLLM serves neither before its engine is up; SGLang
 * answers 503 while starting (docs/protocol.md "Readiness and detection").
 */
#ifndef NEEDLE_PROBE_H
#define NEEDLE_PROBE_H

#include "base/buf.h"
#include <signal.h>

#include "http.h"
#include "base/err.h"
#include "metrics.h"

#define PROBE_METRICS_MAX ((size_t)64 << 20) /* bytes of /metrics kept */

/* Called after each readiness poll: seconds waited so far and what the last
 * poll saw ("connection refused", "/health answered 503", ...; borrowed). */
typedef void (*probe_progress_fn)(void *ctx, double waited_s, const char *last);

/* Parses a duration: seconds ("90", "90s"), minutes ("30m"), hours ("1h"),
 * or a run of them ("1h30m"); > 0. ERR_USAGE naming the text otherwise. */
enum err probe_parse_duration(const char *s, double *seconds, struct diag *d);

/* Polls `base` (no trailing "/v1") every `interval_s` until it is ready or
 * `timeout_s` has passed (TLS as `tls` says; NULL: the system's CAs); `fn` (may be NULL) hears of every poll.
 * ERR_ENDPOINT when it never became ready, with what the last poll saw;
 * ERR_INTERRUPTED as soon as `*stop` (may be NULL) is non-zero between polls
 * (the sleep between them is cut short; a poll in flight ends first). */
enum err probe_wait_ready(const char *base, const char *api_key,
			  const struct http_tls *tls, double timeout_s, double interval_s,
			  volatile const sig_atomic_t *stop, probe_progress_fn fn, void *ctx,
			  struct diag *d);

/* GET base/metrics into `text` (reset first) and parsed into `out` (empty).
 * ERR_ENDPOINT when there is no answer or it is not 200 (SGLang serves
 * /metrics only with --enable-metrics), ERR_INPUT when it does not parse. */
enum err probe_metrics(const char *base, const char *api_key,
		       const struct http_tls *tls, double timeout_s, struct buf *text, struct metrics *out, struct diag *d);

#endif
