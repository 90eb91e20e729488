/*
 * endpoint — what needle learns about the server before the first attempt
 * (docs/protocol.md "Readiness and detection"): the base URL, the served model and its max_model_len from
 * GET /v1/models, the server's version from GET /version (vLLM) or GET
 * /server_info (SGLang), and from that the server whose message preparation
 * the token audit renders (tpl.h, tpl_render_ex).
 *
 * The server's answers are input: a field missing, of the wrong type or out of
 * range is "unknown", never a crash. What was learned is kept as the JSON the
 * manifest records under "endpoint" (record.h). The version probes, in order:
 * /version (vLLM), /server_info and /get_server_info (SGLang, new and old
 * name). /health is not asked: /v1/models already shows the server answers,
 * and SGLang's /health runs a generation.
 */
#ifndef NEEDLE_ENDPOINT_H
#define NEEDLE_ENDPOINT_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "http.h"
#include "tpl/tpl_server.h"

#define ENDPOINT_URL_MAX 2048
#define ENDPOINT_MODEL_MAX 1024 /* a longer model name is refused, never cut */

/* The members of struct endpoint's json (the manifest's "endpoint") that are
 * read back, spelled here only. */
#define EP_SERVED_MODEL "served_model"
#define EP_MAX_MODEL_LEN "max_model_len"
#define EP_MODELS "models"
#define EP_SERVER "server"          /* {version, version_from, kind_guess} */
#define EP_VERSION "version"
#define EP_KIND_GUESS "kind_guess"
#define EP_BASE_URL "base_url"      /* added by record_manifest_new */

/* What discovery needs from the command line. Strings are borrowed. */
struct endpoint_opts {
	const char *model;       /* --model, or NULL: the only one listed */
	const char *api_key;     /* bearer token or NULL */
	const char *api_key_env; /* named in a 401/403 message; NULL = OPENAI_API_KEY */
	double timeout;          /* seconds for each GET; <= 0 = 30 */
	int server_forced;       /* 1: --server chose `server` */
	enum tpl_server server;  /* the --server value when forced */
	const struct http_tls *tls; /* NULL: the system's CAs */
	const char *cacert_from; /* where tls->cacert came from ("--cacert",
				  * "CURL_CA_BUNDLE", "SSL_CERT_FILE"), for the
				  * manifest and messages */
};

struct endpoint {
	char base[ENDPOINT_URL_MAX]; /* normalised: no trailing "/" or "/v1" */
	char model[ENDPOINT_MODEL_MAX]; /* the served model requests name */
	long long max_model_len;     /* -1 when unknown */
	enum tpl_server server;      /* whose message preparation the audit renders */
	const char *server_source;   /* "option", "detected" or "default" (static) */
	cJSON *json;                 /* owned: models_status, models, served_model,
					max_model_len, server {version, version_from,
					kind_guess} */
};

/* Empties `ep`. Allocates nothing. */
void endpoint_init(struct endpoint *ep);
/* Frees ep->json and re-initialises. Accepts NULL. */
void endpoint_release(struct endpoint *ep);

/* Copies `in` to ep->base without trailing "/" and "/v1" (OPENAI_BASE_URL
 * usually ends in /v1; needle adds the paths itself). ERR_USAGE when it is not
 * an http:// or https:// URL or is too long. */
enum err endpoint_set_base(struct endpoint *ep, const char *in, struct diag *d);

/* `base` with any user:password@ removed, into `out` (`cap` bytes): the form
 * the manifest records. */
void endpoint_redact(const char *base, char *out, size_t cap);

/* Chooses the model from a /v1/models answer (`models` may be NULL, `status`
 * its HTTP status): o->model when given (max_model_len from its entry when
 * listed), else the only model listed. ERR_ENDPOINT on 401/403 or an unusable
 * list, ERR_USAGE when several models are served and none was chosen. */
enum err endpoint_pick_model(struct endpoint *ep, const struct endpoint_opts *o,
			     const cJSON *models, long status, struct diag *d);

/* Sets ep->server and ep->server_source from o (forced) or from ep->json's
 * server.kind_guess (detected), else vLLM (default). */
void endpoint_choose_server(struct endpoint *ep, const struct endpoint_opts *o);

/* Discovers everything above over HTTP (ep->base set first). ERR_USAGE when
 * o->tls names a CA file that cannot be read; ERR_ENDPOINT when the server
 * cannot be reached ("endpoint unusable: ..."), else as endpoint_pick_model;
 * the version probes are best-effort. ep->json gets "tls" {cacert,
 * cacert_from, insecure} so the manifest says how the server was trusted. */
enum err endpoint_discover(struct endpoint *ep, const struct endpoint_opts *o,
			   struct diag *d);

/* The CAs to trust from the environment, as curl's tool reads it: when
 * *cacert is NULL or "" (no --cacert), $CURL_CA_BUNDLE, else $SSL_CERT_FILE,
 * else NULL, with *from naming the variable ("--cacert" when *cacert was
 * given); *capath from $SSL_CERT_DIR, else NULL. A variable set empty counts
 * as unset. The strings are the environment's. */
void endpoint_ca_env(const char **cacert, const char **from, const char **capath);

/* Reads a list of base URLs (--endpoints FILE: one a line, blanks around
 * them and '#' comments ignored) into `file` and appends them to urls[*n]
 * (pointers into `file`, which must outlive them). ERR_USAGE past `max` URLs
 * or when the file lists none; ERR_IO when it cannot be read. */
enum err endpoint_read_list(const char *path, struct buf *file, const char **urls,
			    int *n, int max, struct diag *d);

#endif
