/*
 * http — many concurrent HTTP requests over libcurl's multi interface.
 *
 * This is the only module that sees libcurl: CURLcode and CURLMcode are
 * translated here into `enum http_fail` plus a readable message. Each request
 * is a POST with a JSON body (or a GET); response body bytes are handed to a
 * per-request callback as they arrive, stamped with the monotonic clock
 * (io_now_ms), so the caller can time tokens by arrival and keep raw bytes.
 *
 * The runner drives an event loop and bounds concurrency itself:
 *
 *	struct http_multi *m;
 *	struct http_done done;
 *	http_multi_new(&m, &d);
 *	http_multi_add(m, &req, &d);              // as many as the caller allows
 *	while (http_multi_pending(m)) {
 *		http_multi_poll(m, 1000, &d);     // waits until something finishes
 *		while (http_multi_next(m, &done)) // collect finished requests
 *			...;                      // maybe add more
 *	}
 *	http_multi_free(m);
 *
 * Security: TLS peer and host verification stay on. An API key is sent as
 * "Authorization: Bearer KEY" only when one is given; it is copied into the
 * request's header list (wiped before it is freed) and never written to a
 * message, log or file. Verbose output is never enabled.
 *
 * Timeouts (each 0 = none): `timeout_s` bounds the whole request;
 * `first_byte_s` bounds the wait from the start to the first response byte
 * (prefill of a long prompt takes minutes, so the caller scales it with the
 * prompt); `idle_s` bounds the gap between two response bytes after the first
 * one (a stalled stream; vLLM's ": keep-alive" comments count as bytes). All of
 * them yield HTTP_FAIL_TIMEOUT with a message that says which one fired.
 *
 * Cost: one curl easy handle, one header list and one small record per
 * request; body bytes go straight from curl's buffer to the callback (no copy,
 * no allocation per chunk). Not thread-safe: one thread drives a multi.
 */
#ifndef NEEDLE_HTTP_H
#define NEEDLE_HTTP_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

#define HTTP_MSG_MAX 256
#define HTTP_CTYPE_MAX 128
/* The longest timeout a request takes (a week): a longer one (1e300 s) is
 * taken as this, so that its milliseconds fit curl's long. */
#define HTTP_TIMEOUT_MAX_S 604800.0

/* Why a request did not produce a complete HTTP response. */
enum http_fail {
	HTTP_FAIL_NONE = 0, /* a complete response (any status) */
	HTTP_FAIL_CONNECT,  /* no connection: refused, unreachable, DNS, TLS
			     * handshake or certificate, connect timed out */
	HTTP_FAIL_TIMEOUT,  /* connected, then the total, first-byte or idle
			     * timeout fired */
	HTTP_FAIL_OTHER     /* anything else: reset, closed mid-body, nothing
			     * received, a reply that is no HTTP response
			     * (HTTP/0.9, a malformed status line: the server
			     * answered, so not CONNECT), aborted by the data
			     * callback */
};

/* Receives `n` response-body bytes (borrowed for the call) that arrived at
 * `now_ms` (io_now_ms clock). Return 0 to go on, non-zero to abort the request
 * (it then finishes with HTTP_FAIL_OTHER, "aborted by the caller"). Called for
 * every status, so an error body reaches the caller too. */
typedef int (*http_data_fn)(void *ctx, const char *bytes, size_t n,
			    double now_ms);

/* One request. Everything is borrowed: the strings and `body` must stay valid
 * until the request has been collected by http_multi_next (or the multi is
 * freed); the struct itself may be reused right after http_multi_add. */
/* How the server's certificate is checked (https only). Borrowed. */
struct http_tls {
	const char *cacert;    /* PEM file of the CAs to trust, or NULL: the system's */
	int insecure;          /* 1: no peer or host name verification at all */
	const char *capath;    /* a folder of CA files named by their hashes
				* (c_rehash, $SSL_CERT_DIR) trusted as well, or NULL */
};

struct http_req {
	const char *url;       /* full URL, e.g. "http://127.0.0.1:8000/v1/chat/completions" */
	const char *body;      /* JSON body for a POST; NULL makes a GET */
	size_t body_len;       /* bytes of `body` */
	const char *api_key;   /* NULL or "" sends no Authorization header */
	double timeout_s;      /* whole request; 0 = none */
	double first_byte_s;   /* start to first body byte; 0 = none */
	double idle_s;         /* gap between body bytes after the first; 0 = none */
	double connect_s;      /* TCP+TLS connect; 0 = 30 s (capped by timeout_s) */
	http_data_fn on_data;  /* may be NULL: the body is then discarded */
	void *ctx;             /* passed to on_data */
	void *user;            /* returned in http_done, for the caller's bookkeeping */
	const struct http_tls *tls; /* NULL: verify against the system's CAs */
};

/* A finished request, filled by http_multi_next. */
struct http_done {
	void *user;                   /* http_req.user */
	long status;                  /* HTTP status, 0 when no response line arrived */
	enum http_fail fail;          /* HTTP_FAIL_NONE for a complete response */
	char msg[HTTP_MSG_MAX];       /* why it failed ("" when fail is NONE), e.g.
				       * "cannot connect to '127.0.0.1:9': connection refused" */
	char content_type[HTTP_CTYPE_MAX]; /* response Content-Type, "" when none */
	double start_ms;              /* io_now_ms when the request was added */
	double first_byte_ms;         /* io_now_ms of the first body byte, -1 when none */
	double end_ms;                /* io_now_ms when it finished */
	size_t bytes;                 /* body bytes delivered to on_data */
};

struct http_multi;

/* Creates a multi handle the caller owns and frees with http_multi_free
 * (initialising libcurl on first use). ERR_NOMEM or ERR_INTERNAL. */
enum err http_multi_new(struct http_multi **out, struct diag *d);

/* Aborts every unfinished request (without calling back) and frees the multi.
 * Accepts NULL. */
void http_multi_free(struct http_multi *m);

/* Starts a request (see struct http_req for what stays borrowed). The request
 * makes progress only inside http_multi_poll. ERR_INPUT for a missing URL,
 * ERR_NOMEM, ERR_INTERNAL when libcurl refuses the options. */
enum err http_multi_add(struct http_multi *m, const struct http_req *req,
			struct diag *d);

/* Drives all transfers: waits for socket activity and returns when at least
 * one request has finished (collect it with http_multi_next), when
 * `timeout_ms` has passed, or when nothing is pending. Enforces first-byte and
 * idle timeouts. ERR_INTERNAL only for a libcurl failure of the multi itself. */
enum err http_multi_poll(struct http_multi *m, int timeout_ms, struct diag *d);

/* Pops one finished request into `out` and returns 1, or returns 0 when none
 * is waiting. The request's borrowed memory may be freed after this. */
int http_multi_next(struct http_multi *m, struct http_done *out);

/* Requests added and not yet collected by http_multi_next. */
size_t http_multi_pending(const struct http_multi *m);

/* Blocking GET of `url` (for /v1/models, /version), body appended to `body`
 * (its cap bounds the size). Returns ERR_OK when a complete response arrived,
 * whatever its status (`*status`); ERR_ENDPOINT when there was none (`*fail`
 * says why, `d` names the URL and the reason); ERR_LIMIT when the body
 * exceeded the buffer's cap; ERR_NOMEM. `api_key` as in struct http_req.
 * `fail` may be NULL; `tls` as in struct http_req. */
enum err http_get(const char *url, const char *api_key, double timeout_s,
		  const struct http_tls *tls, struct buf *body, long *status,
		  enum http_fail *fail, struct diag *d);

/* The same for a blocking POST of the `len` bytes of JSON at `json`. */
enum err http_post(const char *url, const char *json, size_t len, const char *api_key,
		   double timeout_s, const struct http_tls *tls, struct buf *body, long *status,
		   enum http_fail *fail, struct diag *d);

/* Short stable name of a failure kind: "none", "connect", "timeout", "other". */
const char *http_fail_name(enum http_fail f);

#endif
