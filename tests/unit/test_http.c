/* Unit tests of the HTTP client against a real loopback server started inside
 * the test: a listening thread plus one thread per connection, each writing a
 * scripted response (whole, one byte at a time, slow, stalled, cut, HTML 500).
 * Every timeout is short, so the whole program runs in a few seconds. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "net/http.h"
#include "base/io.h"
#include "net/stream.h"
#include "t.h"

/* ---- the scripted loopback server ---------------------------------------- */

static int listen_fd = -1;
static int server_port;
static atomic_int server_stop;
static atomic_int handlers;
static pthread_t acceptor;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char seen_headers[16384]; /* the last /headers request, as received */
static atomic_size_t seen_body;  /* body bytes of the last request */

#define SSE_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
#define CHUNK(text) "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" text "\"}}]}\n\n"
#define USAGE "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n"
#define ANSWER_SSE \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" \
	CHUNK("{\\\"answer\\\"") CHUNK(": 437}") USAGE "data: [DONE]\n\n"

static int send_all(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n) {
		k = send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int send_str(int fd, const char *s)
{
	return send_all(fd, s, strlen(s));
}

/* Waits `ms`, or less if the client hangs up (then returns -1). */
static int pause_ms(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	char c;

	if (poll(&p, 1, ms) > 0 && recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
		return -1;
	return 0;
}

/* Reads the request head and a Content-Length body; returns the head. */
static int read_request(int fd, char *head, size_t cap)
{
	size_t n = 0, body = 0, want = 0;
	char *end = NULL, *cl;
	ssize_t k;

	while (!end && n + 1 < cap) {
		k = recv(fd, head + n, cap - 1 - n, 0);
		if (k <= 0)
			return -1;
		n += (size_t)k;
		head[n] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (!end)
		return -1;
	cl = strstr(head, "Content-Length:"); /* curl's spelling */
	if (cl)
		want = strtoul(cl + 15, NULL, 10);
	body = n - (size_t)(end + 4 - head);
	while (body < want) {
		char sink[65536];

		k = recv(fd, sink, sizeof(sink), 0);
		if (k <= 0)
			return -1;
		body += (size_t)k;
	}
	atomic_store(&seen_body, body);
	*end = '\0';
	return 0;
}

static void script(int fd, const char *head)
{
	char path[64] = "";
	size_t i;

	sscanf(head, "%*s %63s", path);
	if (!strcmp(path, "/ok")) {
		send_str(fd, SSE_HEAD ANSWER_SSE);
	} else if (!strcmp(path, "/bytewise")) {
		const char *all = SSE_HEAD ANSWER_SSE;

		for (i = 0; all[i]; i++)
			if (send_all(fd, all + i, 1) || pause_ms(fd, 1))
				return;
	} else if (!strcmp(path, "/slow")) {
		if (!pause_ms(fd, 300))
			send_str(fd, SSE_HEAD ANSWER_SSE);
	} else if (!strcmp(path, "/stall")) {
		if (!send_str(fd, SSE_HEAD CHUNK("partial")))
			pause_ms(fd, 3000);
	} else if (!strcmp(path, "/html500")) {
		send_str(fd, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\n"
			 "Content-Length: 93\r\nConnection: close\r\n\r\n"
			 "<html><head><title>500 Internal Server Error</title></head>"
			 "<body><h1>oops</h1></body></html>\n");
	} else if (!strcmp(path, "/cut")) {
		send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
			 "Transfer-Encoding: chunked\r\n\r\n"
			 "3c\r\n" CHUNK("half") "\r\n"
			 "40\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"con");
	} else if (!strcmp(path, "/chunked")) {
		send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
			 "Transfer-Encoding: chunked\r\n\r\n7\r\ndata: {\r\n");
		pause_ms(fd, 20);
		send_str(fd, "1\r\n\"\r\n18\r\nchoices\":[{\"delta\":{\"con\r\n"
			 "1e\r\ntent\":\"ok\"}}]}\n\ndata: [DONE]\n\n\r\n0\r\n\r\n");
	} else if (!strcmp(path, "/headers")) {
		pthread_mutex_lock(&seen_lock);
		snprintf(seen_headers, sizeof(seen_headers), "%s", head);
		pthread_mutex_unlock(&seen_lock);
		send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			 "Content-Length: 55\r\n\r\n"
			 "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"max_model_len\":8}]}");
	} else if (!strcmp(path, "/many")) {
		if (send_str(fd, SSE_HEAD))
			return;
		for (i = 0; i < 20; i++)
			if (send_str(fd, CHUNK("tok ")) || pause_ms(fd, 10))
				return;
		send_str(fd, USAGE "data: [DONE]\n\n");
	} else {
		send_str(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
	}
}

static void *handle(void *arg)
{
	int fd = (int)(long)arg, one = 1;
	char head[16384];

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (recv(fd, head, 1, MSG_PEEK) == 1 && head[0] == 0x16)
		send_str(fd, "HTTP/1.1 400 Bad Request\r\n\r\n"); /* a TLS ClientHello */
	else if (!read_request(fd, head, sizeof(head)))
		script(fd, head);
	shutdown(fd, SHUT_WR);
	pause_ms(fd, 200); /* let the client read everything before the close */
	close(fd);
	atomic_fetch_sub(&handlers, 1);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct pollfd p = {listen_fd, POLLIN, 0};
	pthread_t t;
	int fd;

	(void)arg;
	while (!atomic_load(&server_stop)) {
		if (poll(&p, 1, 20) <= 0)
			continue;
		fd = accept(listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		atomic_fetch_add(&handlers, 1);
		if (pthread_create(&t, NULL, handle, (void *)(long)fd)) {
			close(fd);
			atomic_fetch_sub(&handlers, 1);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

static int server_start(void)
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);
	int one = 1;

	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(listen_fd, 1024) ||
	    getsockname(listen_fd, (struct sockaddr *)&a, &len))
		return -1;
	server_port = ntohs(a.sin_port);
	return pthread_create(&acceptor, NULL, accept_loop, NULL) ? -1 : 0;
}

static void server_stop_all(void)
{
	int i;

	atomic_store(&server_stop, 1);
	pthread_join(acceptor, NULL);
	close(listen_fd);
	for (i = 0; i < 500 && atomic_load(&handlers) > 0; i++)
		usleep(10000);
}

/* A port with nothing listening: bound, then closed. */
static int closed_port(void)
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	getsockname(fd, (struct sockaddr *)&a, &len);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* ---- client side ----------------------------------------------------------- */

struct sink {
	struct stream s;
	size_t calls;
	double last_now;
	int out_of_order;
	char url[128];
};

static int on_data(void *ctx, const char *bytes, size_t n, double now_ms)
{
	struct sink *k = ctx;

	k->calls++;
	if (now_ms < k->last_now)
		k->out_of_order = 1;
	k->last_now = now_ms;
	return stream_feed(&k->s, bytes, n, now_ms, NULL) != ERR_OK;
}

static void sink_init(struct sink *k, const char *path, int port)
{
	memset(k, 0, sizeof(*k));
	stream_init(&k->s, STREAM_CHAT, io_now_ms());
	snprintf(k->url, sizeof(k->url), "http://127.0.0.1:%d%s", port, path);
}

/* Runs one request to completion and judges its stream. */
static void run_one(struct sink *k, struct http_req *r, struct http_done *done,
		    struct stream_checks *c)
{
	struct stream_transport tr = {0};
	struct stream_expect x = {1, -1};
	struct http_multi *m = NULL;
	struct diag d;
	int got = 0;

	diag_init(&d);
	r->url = k->url;
	r->on_data = on_data;
	r->ctx = k;
	if (!r->body) {
		r->body = "{\"model\":\"m\",\"stream\":true}";
		r->body_len = strlen(r->body);
	}
	CHECK(http_multi_new(&m, &d) == ERR_OK);
	CHECK(http_multi_add(m, r, &d) == ERR_OK);
	CHECK_EQ_LONG(http_multi_pending(m), 1);
	while (!got && http_multi_pending(m)) {
		CHECK(http_multi_poll(m, 5000, &d) == ERR_OK);
		got = http_multi_next(m, done);
	}
	CHECK(got);
	CHECK_EQ_LONG(http_multi_pending(m), 0);
	http_multi_free(m);
	stream_end(&k->s, done->end_ms);
	tr.status = done->status;
	tr.fail = done->fail;
	tr.msg = done->msg;
	stream_check(&k->s, &tr, &x, c);
}

static void test_ok(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/ok", server_port);
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.status, 200);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_NONE);
	CHECK_STR(done.msg, "");
	CHECK_STR(done.content_type, "text/event-stream");
	CHECK_EQ_LONG(c.n, 0);
	CHECK_STR(k.s.content.data, "{\"answer\": 437}");
	CHECK_EQ_LONG(done.bytes, k.s.bytes);
	CHECK(done.first_byte_ms >= done.start_ms && done.end_ms >= done.first_byte_ms);
	CHECK(!k.out_of_order);
	stream_release(&k.s);
}

static void test_bytewise(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct stream_timing t;
	struct sink k;

	sink_init(&k, "/bytewise", server_port);
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.status, 200);
	CHECK_EQ_LONG(c.n, 0);
	CHECK_STR(k.s.content.data, "{\"answer\": 437}");
	CHECK(k.calls > 50); /* really arrived in many small pieces */
	CHECK(!k.out_of_order);
	stream_timing(&k.s, &t);
	CHECK(t.ttfc_ms > t.first_byte_ms); /* the role chunk is not a token */
	CHECK(t.e2e_ms >= t.ttfc_ms);
	stream_release(&k.s);
}

static void test_slow_first_byte(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/slow", server_port);
	r.first_byte_s = 0.1;
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_TIMEOUT);
	CHECK(strstr(done.msg, "first-byte timeout") != NULL);
	CHECK(done.end_ms - done.start_ms < 290);
	CHECK(stream_checks_has(&c, STREAM_F_TIMEOUT));
	CHECK_EQ_LONG(c.n, 1);
	stream_release(&k.s);

	sink_init(&k, "/slow", server_port);
	memset(&r, 0, sizeof(r));
	r.first_byte_s = 3;
	r.idle_s = 1;
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_NONE);
	CHECK_EQ_LONG(c.n, 0);
	CHECK(done.first_byte_ms - done.start_ms >= 290);
	stream_release(&k.s);
}

static void test_stall(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/stall", server_port);
	r.idle_s = 0.2;
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.status, 200);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_TIMEOUT);
	CHECK(strstr(done.msg, "idle timeout") != NULL);
	CHECK(done.end_ms - done.start_ms < 1500);
	CHECK(done.end_ms - done.first_byte_ms >= 190);
	CHECK_STR(k.s.content.data, "partial");
	CHECK(c.n == 1 && c.f[0].code == STREAM_F_TIMEOUT);
	stream_release(&k.s);

	/* the total timeout is curl's: reported as a timeout, not a connect */
	sink_init(&k, "/stall", server_port);
	memset(&r, 0, sizeof(r));
	r.timeout_s = 0.3;
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_TIMEOUT);
	CHECK(strstr(done.msg, "total timeout") != NULL);
	CHECK(done.end_ms - done.start_ms < 1500);
	stream_release(&k.s);
}

static void test_refused(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/ok", closed_port());
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_CONNECT);
	CHECK_EQ_LONG(done.status, 0);
	CHECK(strstr(done.msg, "refused") != NULL);
	CHECK(strstr(done.msg, "cannot connect to 'http://127.0.0.1:") != NULL);
	CHECK(c.n == 1 && c.f[0].code == STREAM_F_CONNECT);
	stream_release(&k.s);
}

/* A prompt of a million tokens is a body of several MB: sent without a copy
 * and without waiting for "100 Continue". */
static void test_big_body(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;
	size_t n = (size_t)8 << 20;
	char *body = malloc(n);

	CHECK(body != NULL);
	if (!body)
		return;
	memset(body, 'x', n);
	sink_init(&k, "/ok", server_port);
	r.body = body;
	r.body_len = n;
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.status, 200);
	CHECK_EQ_LONG(c.n, 0);
	CHECK_EQ_LONG(atomic_load(&seen_body), n);
	CHECK(done.end_ms - done.start_ms < 900); /* no 1 s Expect stall */
	stream_release(&k.s);
	free(body);
}

/* TLS verification is on and a failed handshake is a connect failure: the
 * loopback server answers a ClientHello with plain HTTP. */
static void test_tls_failure(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/ok", server_port);
	snprintf(k.url, sizeof(k.url), "https://127.0.0.1:%d/ok", server_port);
	r.timeout_s = 5;
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_CONNECT);
	if (!strstr(done.msg, "TLS with 'https://127.0.0.1:"))
		fprintf(stderr, "msg: %s\n", done.msg);
	CHECK(strstr(done.msg, "TLS with 'https://127.0.0.1:") != NULL);
	CHECK(c.n == 1 && c.f[0].code == STREAM_F_CONNECT);
	stream_release(&k.s);
}

static void test_html500(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/html500", server_port);
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.status, 500);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_NONE);
	CHECK_EQ_LONG(done.bytes, 93);
	CHECK_STR(done.content_type, "text/html");
	CHECK(c.n == 1 && c.f[0].code == STREAM_F_HTTP_STATUS);
	CHECK_STR(c.f[0].msg, "HTTP 500: 500 Internal Server Error");
	stream_release(&k.s);
}

static void test_chunked_and_cut(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/chunked", server_port);
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_NONE);
	CHECK_STR(k.s.content.data, "ok");
	CHECK(k.s.done);
	stream_release(&k.s);

	sink_init(&k, "/cut", server_port);
	run_one(&k, &r, &done, &c);
	CHECK_EQ_LONG(done.status, 200);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_OTHER);
	CHECK_STR(k.s.content.data, "half");
	CHECK(stream_checks_has(&c, STREAM_F_NO_DONE));
	CHECK(stream_checks_has(&c, STREAM_F_MALFORMED_SSE));
	stream_release(&k.s);
}

static void test_headers_and_key(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct stream_checks c;
	struct sink k;

	sink_init(&k, "/headers", server_port);
	r.api_key = "sk-test-0123";
	run_one(&k, &r, &done, &c);
	pthread_mutex_lock(&seen_lock);
	CHECK(strstr(seen_headers, "POST /headers HTTP/1.1") != NULL);
	CHECK(strstr(seen_headers, "\r\nAuthorization: Bearer sk-test-0123") != NULL);
	CHECK(strstr(seen_headers, "\r\nContent-Type: application/json") != NULL);
	CHECK(strstr(seen_headers, "Expect:") == NULL);
	pthread_mutex_unlock(&seen_lock);
	CHECK(strstr(done.msg, "sk-test") == NULL);
	stream_release(&k.s);

	sink_init(&k, "/headers", server_port);
	memset(&r, 0, sizeof(r));
	r.api_key = "";
	run_one(&k, &r, &done, &c);
	pthread_mutex_lock(&seen_lock);
	CHECK(strstr(seen_headers, "Authorization") == NULL);
	pthread_mutex_unlock(&seen_lock);
	stream_release(&k.s);
}

static int refuse_data(void *ctx, const char *bytes, size_t n, double now_ms)
{
	(void)bytes;
	(void)n;
	(void)now_ms;
	++*(int *)ctx;
	return 1;
}

/* The data callback can stop a transfer: it ends as "other", once. */
static void test_abort_by_callback(void)
{
	struct http_req r = {0};
	struct http_done done;
	struct http_multi *m = NULL;
	struct diag d;
	char url[128];
	int calls = 0, got = 0;

	diag_init(&d);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/stall", server_port);
	r.url = url;
	r.body = "{}";
	r.body_len = 2;
	r.on_data = refuse_data;
	r.ctx = &calls;
	r.timeout_s = 5;
	CHECK(http_multi_new(&m, &d) == ERR_OK);
	CHECK(http_multi_add(m, &r, &d) == ERR_OK);
	while (!got && http_multi_pending(m)) {
		CHECK(http_multi_poll(m, 5000, &d) == ERR_OK);
		got = http_multi_next(m, &done);
	}
	CHECK(got);
	CHECK_EQ_LONG(calls, 1);
	CHECK_EQ_LONG(done.fail, HTTP_FAIL_OTHER);
	CHECK(strstr(done.msg, "aborted by the caller") != NULL);
	CHECK(done.end_ms - done.start_ms < 2000);
	http_multi_free(m);
	http_multi_free(NULL);
}

static void test_get(void)
{
	char url[128];
	struct buf body;
	struct diag d;
	enum http_fail fail;
	long status;

	buf_init(&body, 1 << 20);
	diag_init(&d);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/headers", server_port);
	CHECK(http_get(url, NULL, 5, NULL, &body, &status, &fail, &d) == ERR_OK);
	CHECK_EQ_LONG(status, 200);
	CHECK_EQ_LONG(fail, HTTP_FAIL_NONE);
	CHECK(strstr(body.data, "\"max_model_len\":8") != NULL);
	pthread_mutex_lock(&seen_lock);
	CHECK(strstr(seen_headers, "GET /headers HTTP/1.1") != NULL);
	pthread_mutex_unlock(&seen_lock);
	buf_release(&body);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/nothing", server_port);
	CHECK(http_get(url, NULL, 5, NULL, &body, &status, &fail, &d) == ERR_OK);
	CHECK_EQ_LONG(status, 404);

	buf_init(&body, 10); /* too small for the answer */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/headers", server_port);
	CHECK(http_get(url, NULL, 5, NULL, &body, &status, &fail, &d) == ERR_LIMIT);
	buf_release(&body);

	diag_init(&d);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/models", closed_port());
	CHECK(http_get(url, NULL, 5, NULL, &body, &status, &fail, &d) == ERR_ENDPOINT);
	CHECK_EQ_LONG(fail, HTTP_FAIL_CONNECT);
	CHECK(strstr(d.msg, "refused") != NULL);
	buf_release(&body);
	CHECK_STR(http_fail_name(HTTP_FAIL_TIMEOUT), "timeout");
}

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

/* Hundreds of concurrent streams through one multi, driven by this thread
 * while the server threads write 20 chunks 10 ms apart on each. */
#define MANY 200
static void test_many(void)
{
	static struct sink k[MANY];
	struct http_req r = {0};
	struct http_done done;
	struct http_multi *m = NULL;
	struct stream_transport tr = {0};
	struct stream_expect x = {1, -1};
	struct stream_checks c;
	struct diag d;
	double t0, cpu0, wall, cpu;
	size_t i, ok = 0, finished = 0, bytes = 0;
	struct rusage ru;

	diag_init(&d);
	CHECK(http_multi_new(&m, &d) == ERR_OK);
	t0 = io_now_ms();
	cpu0 = thread_cpu_ms();
	for (i = 0; i < MANY; i++) {
		sink_init(&k[i], "/many", server_port);
		r.url = k[i].url;
		r.body = "{\"stream\":true}";
		r.body_len = 15;
		r.on_data = on_data;
		r.ctx = &k[i];
		r.user = &k[i];
		r.timeout_s = 20;
		r.idle_s = 5;
		CHECK(http_multi_add(m, &r, &d) == ERR_OK);
	}
	while (http_multi_pending(m)) {
		CHECK(http_multi_poll(m, 5000, &d) == ERR_OK);
		while (http_multi_next(m, &done)) {
			struct sink *s = done.user;

			finished++;
			stream_end(&s->s, done.end_ms);
			tr.status = done.status;
			tr.fail = done.fail;
			tr.msg = done.msg;
			stream_check(&s->s, &tr, &x, &c);
			if (!c.n && s->s.content.len == 80)
				ok++;
			else if (c.n)
				fprintf(stderr, "stream failed: %s: %s\n",
					stream_fail_name(c.f[0].code), c.f[0].msg);
			bytes += s->s.bytes;
		}
		if (io_now_ms() - t0 > 30000)
			break;
	}
	wall = io_now_ms() - t0;
	cpu = thread_cpu_ms() - cpu0;
	CHECK_EQ_LONG(finished, MANY);
	CHECK_EQ_LONG(ok, MANY);
	getrusage(RUSAGE_SELF, &ru);
	printf("%d concurrent streams: wall %.0f ms, client thread CPU %.0f ms, %zu body bytes, "
	       "process max RSS %ld KiB\n", MANY, wall, cpu, bytes, ru.ru_maxrss);
	http_multi_free(m);
	for (i = 0; i < MANY; i++)
		stream_release(&k[i].s);
}

int main(void)
{
	setenv("NO_PROXY", "*", 1); /* loopback only, whatever the environment says */
	if (server_start()) {
		fprintf(stderr, "cannot start the loopback server\n");
		return 1;
	}
	T_RUN(test_ok);
	T_RUN(test_bytewise);
	T_RUN(test_slow_first_byte);
	T_RUN(test_stall);
	T_RUN(test_refused);
	T_RUN(test_big_body);
	T_RUN(test_tls_failure);
	T_RUN(test_html500);
	T_RUN(test_chunked_and_cut);
	T_RUN(test_headers_and_key);
	T_RUN(test_abort_by_callback);
	T_RUN(test_get);
	T_RUN(test_many);
	server_stop_all();
	return T_DONE();
}
