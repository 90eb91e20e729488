/* Unit tests of probe: durations, and a server that never becomes ready (a
 * port with nothing listening). The ready and /metrics paths against the
 * reference server are in tests/cli/load_*.sh. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/io.h"
#include "net/probe.h"
#include "t.h"

static void test_duration(void)
{
	struct diag d;
	double s = 0;

	diag_init(&d);
	CHECK(!probe_parse_duration("90", &s, &d) && s == 90);
	CHECK(!probe_parse_duration("90s", &s, &d) && s == 90);
	CHECK(!probe_parse_duration("30m", &s, &d) && s == 1800);
	CHECK(!probe_parse_duration("1h30m", &s, &d) && s == 5400);
	CHECK(!probe_parse_duration("0.5s", &s, &d) && s == 0.5);
	CHECK(probe_parse_duration("0", &s, &d) == ERR_USAGE);
	diag_init(&d);
	CHECK(probe_parse_duration("ten", &s, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "duration 'ten'") != NULL);
	CHECK(probe_parse_duration("5x", &s, &d) == ERR_USAGE);
}

static int closed_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &len))
		return 9;
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int polls;
static void count(void *ctx, double waited, const char *last)
{
	(void)ctx;
	(void)waited;
	polls += strstr(last, "127.0.0.1") != NULL || strstr(last, "connect") != NULL;
}

static void test_never_ready(void)
{
	char base[64];
	struct diag d;
	struct buf text;
	struct metrics m;
	double t0 = io_now_ms();

	snprintf(base, sizeof(base), "http://127.0.0.1:%d", closed_port());
	diag_init(&d);
	CHECK(probe_wait_ready(base, NULL, NULL, 0.3, 0.1, NULL, count, NULL, &d) == ERR_ENDPOINT);
	CHECK(strstr(d.msg, "was not ready after") != NULL);
	CHECK(polls >= 2);
	CHECK(io_now_ms() - t0 >= 300);
	diag_init(&d);
	buf_init(&text, PROBE_METRICS_MAX);
	metrics_init(&m);
	CHECK(probe_metrics(base, NULL, NULL, 2, &text, &m, &d) == ERR_ENDPOINT);
	CHECK(strstr(d.msg, "cannot scrape") != NULL);
	metrics_release(&m);
	buf_release(&text);
}

/* A stop between polls ends a long wait at once, not at its next poll. */
static volatile sig_atomic_t stop_flag;
static void stop_after_first(void *ctx, double waited, const char *last)
{
	(void)ctx;
	(void)waited;
	(void)last;
	stop_flag = 1;
}

static void test_stop(void)
{
	char base[64];
	struct diag d;
	double t0 = io_now_ms();

	snprintf(base, sizeof(base), "http://127.0.0.1:%d", closed_port());
	diag_init(&d);
	CHECK(probe_wait_ready(base, NULL, NULL, 600, 30, &stop_flag, stop_after_first, NULL, &d) ==
	      ERR_INTERRUPTED);
	CHECK(strstr(d.msg, "stopped by a signal") != NULL);
	CHECK(io_now_ms() - t0 < 5000);
}

int main(void)
{
	T_RUN(test_duration);
	T_RUN(test_never_ready);
	T_RUN(test_stop);
	return T_DONE();
}
