/*
 * http — libcurl multi behind a small event-loop API. See http.h.
 *
 * Timers: libcurl enforces the total and the connect timeouts itself
 * (CURLOPT_TIMEOUT_MS, CURLOPT_CONNECTTIMEOUT_MS). The first-byte and idle
 * timeouts are ours, because curl's low-speed check averages over a window
 * and cannot tell "waiting for prefill" from "stalled mid-stream": the poll
 * loop keeps the earliest such deadline and aborts a transfer that passes it.
 */
#include "http.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "curlapi.h"
#include "base/io.h"
#include "base/mem.h"

#define CONNECT_S_DEFAULT 30.0

struct xfer {
	struct http_multi *m;        /* the owner, to register deadlines */
	CURL *easy;
	struct curl_slist *headers;  /* owned; the Authorization line is wiped */
	const char *url;             /* borrowed, for messages */
	http_data_fn on_data;
	void *ctx, *user;
	double timeout_s, first_byte_s, idle_s; /* 0 = none */
	double start, first_byte, last_byte, end; /* io_now_ms; -1 = not yet */
	size_t bytes;
	long status;
	enum http_fail fail;         /* set early when we abort it ourselves */
	char msg[HTTP_MSG_MAX];
	char ctype[HTTP_CTYPE_MAX];
	char errbuf[CURL_ERROR_SIZE];
	struct xfer *prev, *next;    /* in the running list or the done queue */
};

struct http_multi {
	CURLM *multi;
	struct xfer *running;        /* doubly linked */
	struct xfer *done, *done_tail; /* finished, not yet collected (FIFO) */
	size_t pending;
	double next_deadline;        /* earliest first-byte/idle deadline, or < 0 */
};

/* libcurl's functions, loaded by the first http_multi_new (curlapi.h):
 * every other function here runs on a transfer or a client it made. */
static const struct curlapi *cu;

const char *http_fail_name(enum http_fail f)
{
	static const char *const names[] = {"none", "connect", "timeout", "other"};

	return (unsigned)f < 4 ? names[f] : "unknown";
}

enum err http_multi_new(struct http_multi **out, struct diag *d)
{
	struct http_multi *m;

	*out = NULL;
	if (!cu) {
		enum err e = curlapi_get(&cu, d);

		if (e)
			return e;
	}
	m = mem_calloc(1, sizeof(*m));
	if (!m)
		return diag_fail(d, ERR_NOMEM, "out of memory creating an HTTP client");
	m->multi = cu->multi_init();
	if (!m->multi) {
		mem_free(m);
		return diag_fail(d, ERR_INTERNAL, "cannot create a libcurl multi handle");
	}
	m->next_deadline = -1;
	*out = m;
	return ERR_OK;
}

/* Frees the header list, wiping every line first: one holds the API key. */
static void free_headers(struct curl_slist *h)
{
	struct curl_slist *n;

	for (n = h; n; n = n->next)
		explicit_bzero(n->data, strlen(n->data));
	cu->slist_free_all(h);
}

/* Releases the curl side of a transfer (the record itself stays). */
static void xfer_cleanup(struct http_multi *m, struct xfer *x)
{
	if (x->easy) {
		cu->multi_remove_handle(m->multi, x->easy);
		cu->easy_cleanup(x->easy);
		x->easy = NULL;
	}
	free_headers(x->headers);
	x->headers = NULL;
}

static void list_free(struct http_multi *m, struct xfer *x)
{
	struct xfer *next;

	for (; x; x = next) {
		next = x->next;
		xfer_cleanup(m, x);
		mem_free(x);
	}
}

void http_multi_free(struct http_multi *m)
{
	if (!m)
		return;
	list_free(m, m->running);
	list_free(m, m->done);
	cu->multi_cleanup(m->multi);
	mem_free(m);
}

static double deadline(const struct xfer *x)
{
	if (x->first_byte < 0)
		return x->first_byte_s > 0 ? x->start + x->first_byte_s * 1000 : -1;
	return x->idle_s > 0 ? x->last_byte + x->idle_s * 1000 : -1;
}

static void note_deadline(struct http_multi *m, double t)
{
	if (t >= 0 && (m->next_deadline < 0 || t < m->next_deadline))
		m->next_deadline = t;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	double now = io_now_ms();

	if (x->first_byte < 0) {
		x->first_byte = now;
		x->last_byte = now;
		note_deadline(x->m, deadline(x)); /* the idle clock starts */
	}
	x->last_byte = now;
	x->bytes += len;
	if (x->on_data && x->on_data(x->ctx, p, len, now)) {
		x->fail = HTTP_FAIL_OTHER;
		snprintf(x->msg, sizeof(x->msg), "aborted by the caller after %zu bytes",
			 x->bytes);
		return 0; /* CURLE_WRITE_ERROR */
	}
	return len;
}

/* Builds the header list. The key goes through a stack buffer that is wiped;
 * curl_slist_append copies it into the list, which free_headers wipes. */
static enum err headers(struct xfer *x, const struct http_req *r, struct diag *d)
{
	static const char *const fixed_post[] = {"Content-Type: application/json",
						 "Expect:"};
	char auth[4096];
	struct curl_slist *h;
	size_t i;
	int n;

	for (i = 0; r->body && i < 2; i++) {
		h = cu->slist_append(x->headers, fixed_post[i]);
		if (!h)
			return diag_fail(d, ERR_NOMEM, "out of memory building headers");
		x->headers = h;
	}
	if (!r->api_key || !r->api_key[0])
		return ERR_OK;
	if (strpbrk(r->api_key, "\r\n"))
		return diag_fail(d, ERR_INPUT, "the API key contains a line break");
	n = snprintf(auth, sizeof(auth), "Authorization: Bearer %s", r->api_key);
	if (n < 0 || (size_t)n >= sizeof(auth)) {
		explicit_bzero(auth, sizeof(auth));
		return diag_fail(d, ERR_INPUT, "the API key is longer than %zu bytes",
				 sizeof(auth) - 32);
	}
	h = cu->slist_append(x->headers, auth);
	explicit_bzero(auth, sizeof(auth));
	if (!h)
		return diag_fail(d, ERR_NOMEM, "out of memory building headers");
	x->headers = h;
	return ERR_OK;
}

static long ms(double s)
{
	if (!(s > 0)) /* NaN too */
		return 0;
	return (long)((s < HTTP_TIMEOUT_MAX_S ? s : HTTP_TIMEOUT_MAX_S) * 1000 + 0.5);
}

static enum err options(struct xfer *x, const struct http_req *r)
{
	CURL *e = x->easy;
	double connect_s = r->connect_s > 0 ? r->connect_s : CONNECT_S_DEFAULT;
	CURLcode rc = CURLE_OK;

	if (r->timeout_s > 0 && connect_s > r->timeout_s)
		connect_s = r->timeout_s;
#define SET(opt, val) \
	do { if (rc == CURLE_OK) rc = cu->easy_setopt(e, opt, val); } while (0)
	SET(CURLOPT_URL, r->url);
	SET(CURLOPT_PRIVATE, (void *)x);
	SET(CURLOPT_ERRORBUFFER, x->errbuf);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, (void *)x);
	SET(CURLOPT_HTTPHEADER, x->headers);
	SET(CURLOPT_USERAGENT, "needle/" NEEDLE_VERSION);
	SET(CURLOPT_SSL_VERIFYPEER, r->tls && r->tls->insecure ? 0L : 1L);
	SET(CURLOPT_SSL_VERIFYHOST, r->tls && r->tls->insecure ? 0L : 2L);
	if (r->tls && r->tls->cacert)
		SET(CURLOPT_CAINFO, r->tls->cacert);
	if (r->tls && r->tls->capath)
		SET(CURLOPT_CAPATH, r->tls->capath);
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L); /* minutes of prefill send no bytes */
	SET(CURLOPT_TIMEOUT_MS, ms(r->timeout_s));
	SET(CURLOPT_CONNECTTIMEOUT_MS, ms(connect_s));
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	if (r->body) {
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDS, r->body); /* borrowed, not copied */
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	} else {
		SET(CURLOPT_HTTPGET, 1L);
	}
#undef SET
	return rc == CURLE_OK ? ERR_OK : ERR_INTERNAL;
}

enum err http_multi_add(struct http_multi *m, const struct http_req *r,
			struct diag *d)
{
	struct xfer *x;
	enum err e;

	if (!r->url || !r->url[0])
		return diag_fail(d, ERR_INPUT, "request without a URL");
	x = mem_calloc(1, sizeof(*x));
	if (!x)
		return diag_fail(d, ERR_NOMEM, "out of memory adding a request");
	x->m = m;
	x->url = r->url;
	x->on_data = r->on_data;
	x->ctx = r->ctx;
	x->user = r->user;
	x->timeout_s = r->timeout_s;
	x->first_byte_s = r->first_byte_s;
	x->idle_s = r->idle_s;
	x->first_byte = x->last_byte = x->end = -1;
	x->easy = cu->easy_init();
	e = x->easy ? headers(x, r, d) :
		diag_fail(d, ERR_INTERNAL, "cannot create a libcurl handle");
	if (!e && options(x, r))
		e = diag_fail(d, ERR_INTERNAL, "libcurl refused the options for '%s'", r->url);
	x->start = io_now_ms();
	if (!e && cu->multi_add_handle(m->multi, x->easy) != CURLM_OK)
		e = diag_fail(d, ERR_INTERNAL, "libcurl refused the request to '%s'", r->url);
	if (e) {
		xfer_cleanup(m, x);
		mem_free(x);
		return e;
	}
	x->next = m->running;
	if (m->running)
		m->running->prev = x;
	m->running = x;
	m->pending++;
	note_deadline(m, deadline(x));
	return ERR_OK;
}

/* Moves a transfer from the running list to the tail of the done queue. */
static void finish(struct http_multi *m, struct xfer *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		m->running = x->next;
	if (x->next)
		x->next->prev = x->prev;
	x->prev = x->next = NULL;
	x->end = io_now_ms();
	if (x->easy) {
		char *ct = NULL;

		cu->easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
		if (cu->easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
			snprintf(x->ctype, sizeof(x->ctype), "%s", ct);
	}
	xfer_cleanup(m, x);
	if (m->done_tail)
		m->done_tail->next = x;
	else
		m->done = x;
	m->done_tail = x;
}

static void xmsg(struct xfer *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void xmsg(struct xfer *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->msg, sizeof(x->msg), fmt, ap);
	va_end(ap);
}

/* curl's own words for the failure: the error buffer, else its strerror. */
static const char *reason(const struct xfer *x, CURLcode rc)
{
	return x->errbuf[0] ? x->errbuf : cu->easy_strerror(rc);
}

/* Whether the request went out: a server then answered, whatever it said. */
static int sent_request(const struct xfer *x)
{
	long sent = 0;

	return cu->easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK && sent > 0;
}

/* Translates a CURLcode (the only place that does). A connect failure is one
 * that happened before a connection existed: refused, unreachable, DNS,
 * proxy, TLS handshake or certificate, or a timeout while connecting. */
static void classify(struct xfer *x, CURLcode rc)
{
	curl_off_t connected = 0;
	long os_errno = 0;

	if (x->fail != HTTP_FAIL_NONE || rc == CURLE_OK)
		return;
	/* for https the connection exists once the TLS handshake is done */
	cu->easy_getinfo(x->easy, strncasecmp(x->url, "https:", 6) ?
			  CURLINFO_CONNECT_TIME_T : CURLINFO_APPCONNECT_TIME_T, &connected);
	cu->easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno);
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		x->fail = HTTP_FAIL_CONNECT;
		xmsg(x, "cannot resolve the host of '%s': %s", x->url, reason(x, rc));
		return;
	case CURLE_COULDNT_CONNECT:
		x->fail = HTTP_FAIL_CONNECT;
		if (os_errno) {
			char why[128];

			snprintf(why, sizeof(why), "%s", strerror((int)os_errno));
			why[0] = (char)tolower((unsigned char)why[0]);
			xmsg(x, "cannot connect to '%s': %s", x->url, why);
		} else {
			xmsg(x, "cannot connect to '%s': %s", x->url, reason(x, rc));
		}
		return;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_USE_SSL_FAILED:
		x->fail = HTTP_FAIL_CONNECT;
		xmsg(x, "TLS with '%s' failed: %s", x->url, reason(x, rc));
		return;
	case CURLE_UNSUPPORTED_PROTOCOL: /* also an HTTP/0.9 or "HTTP/1.1 abc" reply */
	case CURLE_WEIRD_SERVER_REPLY:
		if (sent_request(x)) {
			x->fail = HTTP_FAIL_OTHER;
			xmsg(x, "'%s' answered with no HTTP response: %s", x->url, reason(x, rc));
			return;
		}
		/* fall through - the URL's scheme, refused before any connection */
	case CURLE_URL_MALFORMAT:
		x->fail = HTTP_FAIL_CONNECT;
		xmsg(x, "cannot use URL '%s': %s", x->url, reason(x, rc));
		return;
	case CURLE_OPERATION_TIMEDOUT:
		if (!connected) {
			x->fail = HTTP_FAIL_CONNECT;
			xmsg(x, "cannot connect to '%s': %s", x->url, reason(x, rc));
		} else {
			x->fail = HTTP_FAIL_TIMEOUT;
			xmsg(x, "no complete response within %g s (total timeout) after "
			     "%zu bytes", x->timeout_s, x->bytes);
		}
		return;
	default:
		x->fail = HTTP_FAIL_OTHER;
		xmsg(x, "transfer from '%s' failed after %zu bytes: %s", x->url, x->bytes,
		     reason(x, rc));
		return;
	}
}

static void collect_curl(struct http_multi *m)
{
	CURLMsg *msg;
	struct xfer *x;
	char *priv;
	int left;

	while ((msg = cu->multi_info_read(m->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		priv = NULL;
		cu->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
		x = (struct xfer *)(void *)priv;
		if (!x)
			continue;
		classify(x, msg->data.result);
		finish(m, x);
	}
}

/* Aborts transfers past their first-byte or idle deadline and recomputes
 * the earliest remaining one. */
static void enforce_deadlines(struct http_multi *m, double now)
{
	struct xfer *x, *next;
	double t;

	if (m->next_deadline < 0 || now < m->next_deadline)
		return;
	m->next_deadline = -1;
	for (x = m->running; x; x = next) {
		next = x->next;
		t = deadline(x);
		if (t < 0 || now < t) {
			note_deadline(m, t);
			continue;
		}
		x->fail = HTTP_FAIL_TIMEOUT;
		if (x->first_byte < 0)
			xmsg(x, "no response bytes within %g s (first-byte timeout)",
			     x->first_byte_s);
		else
			xmsg(x, "no bytes for %g s after %zu bytes (idle timeout)",
			     x->idle_s, x->bytes);
		finish(m, x);
	}
}

enum err http_multi_poll(struct http_multi *m, int timeout_ms, struct diag *d)
{
	double until = io_now_ms() + (timeout_ms > 0 ? timeout_ms : 0), now;
	int running, wait;
	CURLMcode mc;

	for (;;) {
		mc = cu->multi_perform(m->multi, &running);
		if (mc != CURLM_OK)
			return diag_fail(d, ERR_INTERNAL, "libcurl multi failed: %s",
					 cu->multi_strerror(mc));
		collect_curl(m);
		now = io_now_ms();
		enforce_deadlines(m, now);
		if (m->done || !m->running || now >= until)
			return ERR_OK;
		wait = (int)(until - now) + 1;
		if (m->next_deadline >= 0 && m->next_deadline - now + 1 < wait)
			wait = (int)(m->next_deadline - now) + 1;
		mc = cu->multi_poll(m->multi, NULL, 0, wait, NULL);
		if (mc != CURLM_OK)
			return diag_fail(d, ERR_INTERNAL, "libcurl multi failed: %s",
					 cu->multi_strerror(mc));
	}
}

int http_multi_next(struct http_multi *m, struct http_done *out)
{
	struct xfer *x = m->done;

	if (!x)
		return 0;
	m->done = x->next;
	if (!m->done)
		m->done_tail = NULL;
	memset(out, 0, sizeof(*out));
	out->user = x->user;
	out->status = x->status;
	out->fail = x->fail;
	memcpy(out->msg, x->msg, sizeof(out->msg));
	memcpy(out->content_type, x->ctype, sizeof(out->content_type));
	out->start_ms = x->start;
	out->first_byte_ms = x->first_byte;
	out->end_ms = x->end;
	out->bytes = x->bytes;
	mem_free(x);
	m->pending--;
	return 1;
}

size_t http_multi_pending(const struct http_multi *m)
{
	return m->pending;
}

struct get_ctx {
	struct buf *body;
	enum err e;
};

static int get_data(void *ctx, const char *bytes, size_t n, double now_ms)
{
	struct get_ctx *g = ctx;

	(void)now_ms;
	g->e = buf_append(g->body, bytes, n);
	return g->e != ERR_OK;
}

/* http_get and http_post: one request on a multi handle of its own. */
static enum err fetch(const char *url, const char *post, size_t post_len, const char *api_key,
		      double timeout_s, const struct http_tls *tls, struct buf *body, long *status,
		      enum http_fail *fail, struct diag *d)
{
	struct http_req r = {0};
	struct get_ctx g = {body, ERR_OK};
	struct http_multi *m = NULL;
	struct http_done done;
	enum err e;

	*status = 0;
	if (fail)
		*fail = HTTP_FAIL_NONE;
	r.url = url;
	r.body = post;
	r.body_len = post_len;
	r.api_key = api_key;
	r.timeout_s = timeout_s;
	r.tls = tls;
	r.on_data = get_data;
	r.ctx = &g;
	e = http_multi_new(&m, d);
	if (!e)
		e = http_multi_add(m, &r, d);
	while (!e && !http_multi_next(m, &done))
		e = http_multi_poll(m, 1000, d);
	if (e)
		goto out;
	*status = done.status;
	if (fail)
		*fail = done.fail;
	if (g.e == ERR_LIMIT)
		e = diag_fail(d, ERR_LIMIT, "response from '%s' is larger than %zu bytes",
			      url, body->max);
	else if (g.e)
		e = diag_fail(d, g.e, "out of memory reading '%s'", url);
	else if (done.fail != HTTP_FAIL_NONE)
		e = diag_fail(d, ERR_ENDPOINT, "%s", done.msg);
out:
	http_multi_free(m);
	return e;
}

enum err http_get(const char *url, const char *api_key, double timeout_s,
		  const struct http_tls *tls, struct buf *body, long *status,
		  enum http_fail *fail, struct diag *d)
{
	return fetch(url, NULL, 0, api_key, timeout_s, tls, body, status, fail, d);
}

enum err http_post(const char *url, const char *json, size_t len, const char *api_key,
		   double timeout_s, const struct http_tls *tls, struct buf *body, long *status,
		   enum http_fail *fail, struct diag *d)
{
	return fetch(url, json, len, api_key, timeout_s, tls, body, status, fail, d);
}
