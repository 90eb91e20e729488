/* endpoint — see endpoint.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "endpoint.h"
#include "http.h"
#include "base/io.h"
#include "base/json.h"

void endpoint_init(struct endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->max_model_len = -1;
	ep->server = TPL_SERVER_VLLM;
}

void endpoint_release(struct endpoint *ep)
{
	if (!ep)
		return;
	cJSON_Delete(ep->json);
	endpoint_init(ep);
}

enum err endpoint_set_base(struct endpoint *ep, const char *in, struct diag *d)
{
	size_t n = strlen(in);
	char *out = ep->base;

	if (strncmp(in, "http://", 7) && strncmp(in, "https://", 8))
		return diag_fail(d, ERR_USAGE, "base URL '%s' must start with http:// or https://", in);
	if (n >= ENDPOINT_URL_MAX - 64)
		return diag_fail(d, ERR_USAGE, "base URL is too long");
	memcpy(out, in, n + 1);
	while (n && out[n - 1] == '/')
		out[--n] = '\0';
	if (n >= 3 && !strcmp(out + n - 3, "/v1"))
		out[n -= 3] = '\0';
	return ERR_OK;
}

void endpoint_redact(const char *base, char *out, size_t cap)
{
	const char *s = strstr(base, "://"), *at, *slash;

	snprintf(out, cap, "%s", base);
	if (!s)
		return;
	s += 3;
	at = strchr(s, '@');
	slash = strchr(s, '/');
	if (at && (!slash || at < slash))
		snprintf(out, cap, "%.*s%s", (int)(s - base), base, at + 1);
}

/* GET base+path as JSON; *out NULL when unavailable. Connection failure is
 * ERR_ENDPOINT. */
static enum err get_json(const struct endpoint *ep, const struct endpoint_opts *o,
			 const char *path, long *status, cJSON **out, struct diag *d)
{
	char url[ENDPOINT_URL_MAX];
	struct buf body;
	enum err e;

	*out = NULL;
	*status = 0;
	snprintf(url, sizeof(url), "%s%s", ep->base, path);
	buf_init(&body, (size_t)16 << 20);
	e = http_get(url, o->api_key, o->timeout > 0 ? o->timeout : 30, o->tls, &body,
		     status, NULL, d);
	if (!e && *status == 200)
		*out = cJSON_ParseWithLength(body.data, body.len);
	if (e == ERR_LIMIT) {
		e = ERR_OK; /* an oversized answer is just not usable */
		diag_init(d);
	}
	buf_release(&body);
	return e;
}

/* The only model of `data`, into ep->model; NULL on failure. */
static const cJSON *only_model(struct endpoint *ep, const cJSON *data, long status,
			       struct diag *d)
{
	const cJSON *id;
	int n = cJSON_GetArraySize(data);

	if (!cJSON_IsArray(data)) {
		diag_fail(d, ERR_ENDPOINT, "cannot list models at '%s/v1/models' (HTTP %ld); pass --model",
			  ep->base, status);
		return NULL;
	}
	if (n != 1) {
		diag_fail(d, ERR_USAGE, "endpoint serves %d models; choose one with --model", n);
		return NULL;
	}
	id = cJSON_GetObjectItemCaseSensitive(data->child, "id");
	if (!cJSON_IsString(id)) {
		diag_fail(d, ERR_ENDPOINT, "'/v1/models' lists a model without an id");
		return NULL;
	}
	if (strlen(id->valuestring) >= sizeof(ep->model)) {
		diag_fail(d, ERR_ENDPOINT, "'/v1/models' lists a model name of %zu bytes "
			  "(needle takes at most %d)", strlen(id->valuestring),
			  ENDPOINT_MODEL_MAX - 1);
		return NULL;
	}
	snprintf(ep->model, sizeof(ep->model), "%s", id->valuestring);
	return data->child;
}

enum err endpoint_pick_model(struct endpoint *ep, const struct endpoint_opts *o,
			     const cJSON *models, long status, struct diag *d)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(models, "data"), *m;
	const cJSON *chosen = NULL;

	if (status == 401 || status == 403)
		return diag_fail(d, ERR_ENDPOINT,
				 "endpoint '%s' refused the request for /v1/models with HTTP %ld (check the API key in $%s)",
				 ep->base, status, o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	if (o->model) {
		if (strlen(o->model) >= sizeof(ep->model))
			return diag_fail(d, ERR_USAGE, "--model name of %zu bytes is longer "
					 "than needle takes (%d)", strlen(o->model),
					 ENDPOINT_MODEL_MAX - 1);
		snprintf(ep->model, sizeof(ep->model), "%s", o->model);
		cJSON_ArrayForEach(m, data) {
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
			if (cJSON_IsString(id) && !strcmp(id->valuestring, o->model))
				chosen = m;
		}
	} else if (!(chosen = only_model(ep, data, status, d))) {
		return d->code;
	}
	m = cJSON_GetObjectItemCaseSensitive(chosen, "max_model_len");
	/* The server's word is input: a value out of range is "unknown". */
	ep->max_model_len = cJSON_IsNumber(m) && m->valuedouble >= 0 &&
				    m->valuedouble <= 9e15
			    ? (long long)m->valuedouble : -1;
	return ERR_OK;
}

/* vLLM: GET /version {"version"}; SGLang: GET /server_info {"version"}, or
 * on builds before about December 2025 only its older name /get_server_info
 * (docs/protocol.md "Readiness and detection"). The first that answers with a version wins. */
static void server_version(const struct endpoint *ep, const struct endpoint_opts *o,
			   struct json_build *jb, cJSON *server)
{
	static const char *const paths[][2] = {{"/version", "vllm"},
					      {"/server_info", "sglang"},
					      {"/get_server_info", "sglang"}};
	struct diag d;
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		cJSON *v = NULL;
		long status;
		const cJSON *ver;
		diag_init(&d);
		if (get_json(ep, o, paths[i][0], &status, &v, &d))
			return;
		ver = cJSON_GetObjectItemCaseSensitive(v, "version");
		if (cJSON_IsString(ver)) {
			json_add_str(jb, server, EP_VERSION, ver->valuestring);
			json_add_str(jb, server, "version_from", paths[i][0]);
			json_add_str(jb, server, EP_KIND_GUESS, paths[i][1]);
			cJSON_Delete(v);
			return;
		}
		cJSON_Delete(v);
	}
}

void endpoint_choose_server(struct endpoint *ep, const struct endpoint_opts *o)
{
	const cJSON *server = cJSON_GetObjectItemCaseSensitive(ep->json, EP_SERVER);
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(server, EP_KIND_GUESS);

	if (o->server_forced) {
		ep->server = o->server;
		ep->server_source = "option";
		return;
	}
	ep->server_source = "default";
	ep->server = TPL_SERVER_VLLM;
	if (cJSON_IsString(kind) && !tpl_server_parse(kind->valuestring, &ep->server, NULL))
		ep->server_source = "detected";
}

/* Records the listed model ids and the status in ep->json. */
static void list_models(struct endpoint *ep, struct json_build *jb,
			const cJSON *models, long status)
{
	cJSON *ids;
	const cJSON *m;

	json_add_int(jb, ep->json, "models_status", status);
	ids = json_add_arr(jb, ep->json, EP_MODELS);
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(models, "data")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		if (cJSON_IsString(id))
			json_add_str(jb, ids, NULL, id->valuestring);
	}
}

/* The CA file must be a readable regular file (io_open_regular: a FIFO or
 * device is refused, not read) and the CA folder a folder, checked before
 * any request so that a typo is a usage error, not an unreachable endpoint. */
static enum err check_cacert(const struct endpoint_opts *o, struct diag *d)
{
	const char *f = o->tls ? o->tls->cacert : NULL;
	const char *from = o->cacert_from ? o->cacert_from : "--cacert";
	struct diag q;
	struct stat st;
	int fd;

	if (o->tls && o->tls->capath && stat(o->tls->capath, &st))
		return diag_fail(d, ERR_USAGE, "CA folder '%s' (SSL_CERT_DIR): %s", o->tls->capath,
				 strerror(errno));
	if (o->tls && o->tls->capath && !S_ISDIR(st.st_mode))
		return diag_fail(d, ERR_USAGE, "CA folder '%s' (SSL_CERT_DIR): not a folder",
				 o->tls->capath);
	if (!f)
		return ERR_OK;
	diag_init(&q);
	if ((fd = io_open_regular(f, 0, NULL, &q)) >= 0) {
		close(fd);
		return ERR_OK;
	}
	return diag_fail(d, ERR_USAGE, "CA file '%s' (%s): %s", f, from, io_reason(q.msg));
}

static void describe_tls(const struct endpoint_opts *o, struct json_build *jb,
			 cJSON *t)
{
	if (o->tls && o->tls->cacert) {
		json_add_str(jb, t, "cacert", o->tls->cacert);
		json_add_str(jb, t, "cacert_from", o->cacert_from ? o->cacert_from : "--cacert");
	} else {
		json_add_null(jb, t, "cacert");
		json_add_null(jb, t, "cacert_from");
	}
	json_add_bool(jb, t, "insecure", o->tls && o->tls->insecure);
	if (o->tls && o->tls->capath)
		json_add_str(jb, t, "capath", o->tls->capath);
	else
		json_add_null(jb, t, "capath");
}

enum err endpoint_discover(struct endpoint *ep, const struct endpoint_opts *o,
			   struct diag *d)
{
	struct json_build jb;
	cJSON *models = NULL;
	long status = 0;
	enum err e;

	cJSON_Delete(ep->json);
	ep->json = NULL;
	if ((e = check_cacert(o, d)))
		return e;
	json_build_init(&jb);
	ep->json = json_new_obj(&jb);
	if (!ep->json)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	describe_tls(o, &jb, json_add_obj(&jb, ep->json, "tls"));
	if (get_json(ep, o, "/v1/models", &status, &models, d)) {
		diag_prefix(d, "endpoint unusable");
		return ERR_ENDPOINT;
	}
	e = endpoint_pick_model(ep, o, models, status, d);
	list_models(ep, &jb, models, status);
	cJSON_Delete(models);
	if (e)
		return e;
	json_add_str(&jb, ep->json, EP_SERVED_MODEL, ep->model);
	if (ep->max_model_len >= 0)
		json_add_int(&jb, ep->json, EP_MAX_MODEL_LEN, ep->max_model_len);
	else
		json_add_null(&jb, ep->json, EP_MAX_MODEL_LEN);
	server_version(ep, o, &jb, json_add_obj(&jb, ep->json, EP_SERVER));
	endpoint_choose_server(ep, o);
	return json_build_end(&jb, &ep->json, "the endpoint's description", d);
}

static const char *env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

void endpoint_ca_env(const char **cacert, const char **from, const char **capath)
{
	if (*cacert && !**cacert)
		*cacert = NULL;
	*from = "--cacert";
	if (!*cacert && (*cacert = env_set("CURL_CA_BUNDLE")))
		*from = "CURL_CA_BUNDLE";
	else if (!*cacert && (*cacert = env_set("SSL_CERT_FILE")))
		*from = "SSL_CERT_FILE";
	*capath = env_set("SSL_CERT_DIR");
}

enum err endpoint_read_list(const char *path, struct buf *file, const char **urls,
			    int *n, int max, struct diag *d)
{
	char *p, *line, *end;
	int before = *n;
	enum err e = io_read_file(path, file, d);

	for (p = file->data; !e && p && *p; p = end) {
		end = p + strcspn(p, "\n");
		if (*end)
			*end++ = '\0';
		line = p + strspn(p, " \t\r");
		line[strcspn(line, " \t\r#")] = '\0';
		if (!*line)
			continue;
		if (*n == max)
			return diag_fail(d, ERR_USAGE, "'%s': more than %d endpoints", path, max);
		urls[(*n)++] = line;
	}
	if (!e && *n == before)
		e = diag_fail(d, ERR_USAGE, "'%s' lists no endpoint", path);
	return e;
}
