/* Unit tests of the run engine against a tiny sequential loopback server (one
 * connection at a time, Connection: close): a passing and a failing attempt
 * journalled with counts, status and the progress callback; --resume skipping
 * what is recorded; an unreachable endpoint refused at run_open. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/io.h"
#include "run/record.h"
#include "run/results.h"
#include "run/run.h"
#include "t.h"

static int lfd = -1, port;
static atomic_int stopping;
static pthread_t server;

static const char models[] = "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"max_model_len\":8192}]}";
static const char sse[] =
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"blue sky\"}}]}\n\n"
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n"
	"data: [DONE]\n\n";

/* Reads one request (head and Content-Length body); 0 on failure. */
static int take_request(int fd, char *line, size_t cap)
{
	char b[65536];
	size_t n = 0, len = 0;
	char *end = NULL, *cl;

	while (!end && n + 1 < sizeof(b)) {
		ssize_t k = recv(fd, b + n, sizeof(b) - 1 - n, 0);
		if (k <= 0)
			return 0;
		b[n += (size_t)k] = '\0';
		end = strstr(b, "\r\n\r\n");
	}
	if ((cl = strstr(b, "Content-Length:")))
		len = strtoul(cl + 15, NULL, 10);
	for (n -= (size_t)(end + 4 - b); end && n < len;) {
		ssize_t k = recv(fd, b, sizeof(b), 0);
		if (k <= 0)
			return 0;
		n += (size_t)k;
	}
	snprintf(line, cap, "%.*s", (int)strcspn(b, "\r"), b);
	return end != NULL;
}

static void answer(int fd, const char *line)
{
	char out[4096];
	const char *body = "{}", *type = "application/json";
	int code = 404;

	if (strstr(line, "GET /v1/models"))
		body = models, code = 200;
	else if (strstr(line, "GET /get_server_info")) /* an SGLang before /server_info */
		body = "{\"version\":\"0.4.6\"}", code = 200;
	else if (strstr(line, "POST /v1/chat/completions"))
		body = sse, code = 200, type = "text/event-stream";
	snprintf(out, sizeof(out), "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n%s", code, type, strlen(body), body);
	if (send(fd, out, strlen(out), MSG_NOSIGNAL) < 0)
		perror("send");
}

static void *serve(void *arg)
{
	struct pollfd p = {0};
	char line[512];

	(void)arg;
	p.fd = lfd;
	p.events = POLLIN;
	while (!atomic_load(&stopping)) {
		int fd;
		if (poll(&p, 1, 20) <= 0 || (fd = accept(lfd, NULL, NULL)) < 0)
			continue;
		if (take_request(fd, line, sizeof(line)))
			answer(fd, line);
		close(fd);
	}
	return NULL;
}

static int start(void)
{
	struct sockaddr_in a = {0};
	socklen_t n = sizeof(a);

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &n))
		return -1;
	port = ntohs(a.sin_port);
	return pthread_create(&server, NULL, serve, NULL);
}

static int calls, forced;

static void on_progress(void *ctx, const struct run *r, int force)
{
	(void)ctx;
	(void)r;
	calls++;
	forced += force;
}

static char dir[] = "/tmp/needle-run-XXXXXX";
static char suite_path[300], out[300], base[64];

static void write_suite(void)
{
	static const char s[] =
		"{\"suite\":\"t\",\"cases\":["
		"{\"id\":\"good\",\"messages\":[{\"role\":\"user\",\"content\":\"sky?\"}],\"expect\":{\"contains\":[\"blue\"]}},"
		"{\"id\":\"bad\",\"repeat\":2,\"messages\":[{\"role\":\"user\",\"content\":\"sea?\"}],\"expect\":{\"contains\":[\"green\"]}}]}";
	struct diag d;

	diag_init(&d);
	snprintf(suite_path, sizeof(suite_path), "%s/s.json", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	CHECK(io_write_file(suite_path, s, strlen(s), &d) == ERR_OK);
}

static void opts(struct run_opts *o, const char *glob, int resume)
{
	static const char *globs[1];

	memset(o, 0, sizeof(*o));
	o->base_urls[0] = base;
	o->nbase_urls = 1;
	o->out = out;
	globs[0] = glob;
	o->case_globs = globs;
	o->ncase_globs = glob != NULL;
	o->concurrency = 2;
	o->timeout = 10;
	o->resume = resume;
	o->poll_ms = 50;
	o->progress = on_progress;
}

/* results_each's callback: a copy of each record into the array `ctx`. */
static enum err collect(void *ctx, const struct record_view *v, struct diag *d)
{
	const cJSON *rec = v->rec;
	(void)d;
	cJSON_AddItemToArray(ctx, cJSON_Duplicate(rec, 1));
	return ERR_OK;
}

static void test_run(void)
{
	struct run_opts o;
	struct run *r = NULL;
	struct run_counts n;
	struct diag d;
	struct results_scan sc;
	cJSON *recs = NULL;

	diag_init(&d);
	opts(&o, "good", 0);
	CHECK(run_open(&o, suite_path, &r, &d) == ERR_OK);
	if (d.code)
		fprintf(stderr, "  %s\n", d.msg);
	CHECK_EQ_LONG(run_counts(r).total, 1);
	CHECK(run_go(r, &d) == ERR_OK);
	n = run_counts(r);
	CHECK_EQ_LONG(n.done, 1);
	CHECK_EQ_LONG(n.pass, 1);
	CHECK(run_status(r) == EXIT_PASS);
	CHECK(calls >= 2 && forced == 1);
	run_free(r);
	CHECK(results_read_manifest(out, &recs, &d) == ERR_OK);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(recs, "endpoint"),
		  "server"), "version_from")->valuestring, "/get_server_info");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(recs, "endpoint"),
		  "server"), "kind_guess")->valuestring, "sglang");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(recs, "template"))); /* no --template */
	cJSON_Delete(recs);
	recs = NULL;
	/* --resume: the recorded attempt is skipped, the two failing ones run */
	opts(&o, NULL, 1);
	CHECK(run_open(&o, suite_path, &r, &d) == ERR_OK);
	CHECK_EQ_LONG(run_counts(r).total, 2);
	CHECK_EQ_LONG(run_counts(r).prior_pass, 1);
	CHECK(run_go(r, &d) == ERR_OK);
	n = run_counts(r);
	CHECK_EQ_LONG(n.fail, 2);
	CHECK_EQ_LONG(n.fail_grade, 2);
	CHECK(run_status(r) == EXIT_FAIL);
	run_free(r);
	recs = cJSON_CreateArray();
	CHECK(results_each(out, collect, recs, &sc, &d) == ERR_OK);
	CHECK_EQ_LONG(cJSON_GetArraySize(recs), 3);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(recs, 2), "verdict")->valuestring, "fail");
	CHECK_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(recs, 2),
		  "grade"), "reasons"), 0)->valuestring, "answer does not contain \"green\"");
	cJSON_Delete(recs);
	/* without --resume a folder with results is refused */
	opts(&o, NULL, 0);
	diag_init(&d);
	CHECK(run_open(&o, suite_path, &r, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "already holds results") != NULL);
	run_free(r);
}

static void test_unreachable(void)
{
	struct run_opts o;
	struct run *r = NULL;
	struct diag d;

	opts(&o, NULL, 0);
	o.base_urls[0] = "http://127.0.0.1:1";
	diag_init(&d);
	CHECK(run_open(&o, suite_path, &r, &d) == ERR_ENDPOINT);
	CHECK(!strncmp(d.msg, "endpoint unusable: ", 19));
	run_free(r);
	o.base_urls[0] = "ftp://x";
	diag_init(&d);
	CHECK(run_open(&o, suite_path, &r, &d) == ERR_USAGE);
	run_free(r);
}

int main(void)
{
	char cmd[400];

	if (!mkdtemp(dir) || start()) {
		perror("test_run set-up");
		return 1;
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1", port);
	write_suite();
	T_RUN(test_run);
	T_RUN(test_unreachable);
	atomic_store(&stopping, 1);
	pthread_join(server, NULL);
	close(lfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return T_DONE();
}
