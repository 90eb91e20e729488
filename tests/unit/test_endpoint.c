/* Unit tests of endpoint discovery's pure parts: base URL normalisation and
 * redaction, choosing the model from a /v1/models answer, and which server's
 * message preparation the audit renders. */
#include <string.h>

#include "net/endpoint.h"
#include "t.h"

static void test_base(void)
{
	struct endpoint ep;
	struct diag d;
	char big[ENDPOINT_URL_MAX];

	endpoint_init(&ep);
	diag_init(&d);
	CHECK(endpoint_set_base(&ep, "http://h:8000/v1/", &d) == ERR_OK);
	CHECK_STR(ep.base, "http://h:8000");
	CHECK(endpoint_set_base(&ep, "https://h//", &d) == ERR_OK);
	CHECK_STR(ep.base, "https://h");
	CHECK(endpoint_set_base(&ep, "ftp://h", &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "'ftp://h' must start with http://") != NULL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "http://", 7);
	diag_init(&d);
	CHECK(endpoint_set_base(&ep, big, &d) == ERR_USAGE);
	CHECK_STR(d.msg, "base URL is too long");
}

static void test_redact(void)
{
	char out[256];

	endpoint_redact("http://u:pw@h:1/x", out, sizeof(out));
	CHECK_STR(out, "http://h:1/x");
	endpoint_redact("http://h:1/a@b", out, sizeof(out));
	CHECK_STR(out, "http://h:1/a@b"); /* an @ in the path is not a password */
}

static enum err pick(const char *json, long status, const char *model,
		     struct endpoint *ep, struct diag *d)
{
	struct endpoint_opts o = {0};
	cJSON *m = json ? cJSON_Parse(json) : NULL;
	enum err e;

	o.model = model;
	endpoint_init(ep);
	diag_init(d);
	e = endpoint_pick_model(ep, &o, m, status, d);
	cJSON_Delete(m);
	return e;
}

static void test_pick_model(void)
{
	struct endpoint ep;
	struct diag d;

	CHECK(pick("{\"data\":[{\"id\":\"m\",\"max_model_len\":4096}]}", 200, NULL, &ep, &d) == ERR_OK);
	CHECK_STR(ep.model, "m");
	CHECK_EQ_LONG(ep.max_model_len, 4096);
	CHECK(pick("{\"data\":[{\"id\":\"a\"},{\"id\":\"b\",\"max_model_len\":1e30}]}", 200, "b", &ep, &d) == ERR_OK);
	CHECK_STR(ep.model, "b");
	CHECK_EQ_LONG(ep.max_model_len, -1); /* out of range: unknown */
	CHECK(pick("{\"data\":[{\"id\":\"a\"},{\"id\":\"b\"}]}", 200, NULL, &ep, &d) == ERR_USAGE);
	CHECK_STR(d.msg, "endpoint serves 2 models; choose one with --model");
	CHECK(pick(NULL, 404, NULL, &ep, &d) == ERR_ENDPOINT);
	CHECK(strstr(d.msg, "(HTTP 404); pass --model") != NULL);
	CHECK(pick("{\"data\":[{\"name\":\"x\"}]}", 200, NULL, &ep, &d) == ERR_ENDPOINT);
	CHECK(pick(NULL, 401, "m", &ep, &d) == ERR_ENDPOINT);
	CHECK(strstr(d.msg, "HTTP 401 (check the API key in $OPENAI_API_KEY)") != NULL);
	/* --model need not be listed */
	CHECK(pick(NULL, 404, "m", &ep, &d) == ERR_OK);
	CHECK_STR(ep.model, "m");
}

static void test_choose_server(void)
{
	struct endpoint ep;
	struct endpoint_opts o = {0};

	endpoint_init(&ep);
	ep.json = cJSON_Parse("{\"server\":{\"kind_guess\":\"sglang\"}}");
	endpoint_choose_server(&ep, &o);
	CHECK(ep.server == TPL_SERVER_SGLANG);
	CHECK_STR(ep.server_source, "detected");
	o.server_forced = 1;
	o.server = TPL_SERVER_VLLM;
	endpoint_choose_server(&ep, &o);
	CHECK(ep.server == TPL_SERVER_VLLM);
	CHECK_STR(ep.server_source, "option");
	endpoint_release(&ep);
	endpoint_choose_server(&ep, &(struct endpoint_opts){0});
	CHECK(ep.server == TPL_SERVER_VLLM);
	CHECK_STR(ep.server_source, "default");
}

int main(void)
{
	T_RUN(test_base);
	T_RUN(test_redact);
	T_RUN(test_pick_model);
	T_RUN(test_choose_server);
	return T_DONE();
}
