/*
 * probe — readiness and /metrics of a server; see probe.h.
 */
#include "probe.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "base/io.h"

enum err probe_parse_duration(const char *s, double *seconds, struct diag *d)
{
	const char *p = s;
	double total = 0;

	while (*p) {
		char *end;
		double v = strtod(p, &end);
		double unit = 1;

		if (end == p || !isfinite(v) || v < 0)
			break;
		if (*end == 'h')
			unit = 3600;
		else if (*end == 'm')
			unit = 60;
		if (*end == 'h' || *end == 'm' || *end == 's')
			end++;
		else if (*end)
			break;
		total += v * unit;
		p = end;
	}
	if (*p || !(total > 0))
		return diag_fail(d, ERR_USAGE,
				 "duration '%s' is not a positive time such as 90s, 30m or 1h30m", s);
	*seconds = total;
	return ERR_OK;
}

/* One GET; the status, or 0 with `last` saying why there was none. */
static long get(const char *base, const char *path, const char *api_key,
		const struct http_tls *tls, double timeout_s, struct buf *body,
		char *last, size_t cap)
{
	char url[4096];
	struct diag d;
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	diag_init(&d);
	buf_reset(body);
	if (http_get(url, api_key, timeout_s, tls, body, &status, NULL, &d)) {
		snprintf(last, cap, "%s", d.msg);
		return 0;
	}
	if (status != 200)
		snprintf(last, cap, "%s answered %ld", path, status);
	return status;
}

/* Ready: /health 200 and /v1/models 200 listing a model. */
static int ready_once(const char *base, const char *api_key,
		      const struct http_tls *tls, double timeout_s,
		      struct buf *body, char *last, size_t cap)
{
	cJSON *j;
	int ok;

	if (get(base, "/health", api_key, tls, timeout_s, body, last, cap) != 200 ||
	    get(base, "/v1/models", api_key, tls, timeout_s, body, last, cap) != 200)
		return 0;
	j = cJSON_ParseWithLength(body->data, body->len);
	ok = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "data")) > 0;
	cJSON_Delete(j);
	if (!ok)
		snprintf(last, cap, "/v1/models lists no model yet");
	return ok;
}

/* Sleeps until `at_ms` (io_now_ms's clock) in steps short enough that a stop
 * is heard at once; 1 when it was. */
#define PROBE_STOP_STEP_MS 100.0
static int sleep_unless_stopped(double at_ms, volatile const sig_atomic_t *stop)
{
	double now;

	while (!(stop && *stop) && (now = io_now_ms()) < at_ms)
		io_sleep_until_ms(at_ms - now > PROBE_STOP_STEP_MS ? now + PROBE_STOP_STEP_MS : at_ms);
	return stop && *stop;
}

enum err probe_wait_ready(const char *base, const char *api_key,
			  const struct http_tls *tls, double timeout_s, double interval_s,
			  volatile const sig_atomic_t *stop, probe_progress_fn fn, void *ctx,
			  struct diag *d)
{
	double t0 = io_now_ms(), next = t0, deadline = t0 + timeout_s * 1000.0, waited;
	char last[DIAG_MSG_MAX] = "no answer yet";
	struct buf body;
	int ok, stopped = 0;

	buf_init(&body, (size_t)16 << 20);
	for (;;) {
		ok = ready_once(base, api_key, tls, 10, &body, last, sizeof(last));
		waited = (io_now_ms() - t0) / 1000.0;
		if (fn)
			fn(ctx, waited, ok ? "ready" : last);
		if (ok || io_now_ms() >= deadline)
			break;
		next += interval_s * 1000.0;
		if ((stopped = sleep_unless_stopped(next < deadline ? next : deadline, stop)))
			break;
	}
	buf_release(&body);
	if (stopped)
		return diag_fail(d, ERR_INTERRUPTED, "stopped by a signal while waiting %.0f s for '%s' to be ready: %s",
				 (io_now_ms() - t0) / 1000.0, base, last);
	if (!ok)
		return diag_fail(d, ERR_ENDPOINT, "endpoint '%s' was not ready after %.0f s: %s", base,
				 waited, last);
	return ERR_OK;
}

enum err probe_metrics(const char *base, const char *api_key,
		       const struct http_tls *tls, double timeout_s, struct buf *text, struct metrics *out, struct diag *d)
{
	char last[DIAG_MSG_MAX] = "";
	long status = get(base, "/metrics", api_key, tls, timeout_s, text, last,
			   sizeof(last));
	enum err e;

	if (status != 200)
		return diag_fail(d, ERR_ENDPOINT, "cannot scrape '%s/metrics': %s%s", base, last,
				 status == 404 ? " (SGLang serves it only with --enable-metrics)" : "");
	e = metrics_parse(out, text->data, text->len, d);
	if (e)
		diag_prefix(d, "'%s/metrics'", base);
	return e;
}
