/* Unit tests of the results journal: append, resume, torn last line, a failed
 * write that loses no finished record. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/io.h"
#include "run/record.h"
#include "run/results.h"
#include "t.h"
#include "trec.h"

static char dir[256];

static cJSON *record(const char *id, long repeat, long seed)
{
	cJSON *r = cJSON_Parse("{\"case\":\"\",\"repeat\":0,\"seed\":null,\"verdict\":\"pass\"," TREC_CHAT "}");

	cJSON_SetValuestring(cJSON_GetObjectItem(r, "case"), id);
	cJSON_SetNumberValue(cJSON_GetObjectItem(r, "repeat"), (double)repeat);
	if (seed >= 0)
		cJSON_ReplaceItemInObject(r, "seed", cJSON_CreateNumber((double)seed));
	return r;
}

static void append(struct results *r, const char *id, long repeat, long seed)
{
	struct diag d;
	cJSON *rec = record(id, repeat, seed);

	diag_init(&d);
	CHECK(results_append(r, rec, &d) == ERR_OK);
	cJSON_Delete(rec);
}

static size_t count_lines(const char *path)
{
	struct buf b;
	struct diag d;
	size_t n = 0, i;

	buf_init(&b, 1 << 24);
	diag_init(&d);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	for (i = 0; i < b.len; i++)
		n += b.data[i] == '\n';
	CHECK(b.len == 0 || b.data[b.len - 1] == '\n');
	buf_release(&b);
	return n;
}

static void test_append_and_resume(void)
{
	struct results *r = NULL;
	struct diag d;
	char path[512], key[256];
	int fd;

	diag_init(&d);
	CHECK(results_open(dir, 0, &r, &d) == ERR_OK);
	if (!r)
		return;
	append(r, "a", 1, -1);
	append(r, "a", 2, -1);
	append(r, "rec", 1, 7);
	results_free(r);

	/* without --resume, a journal with records is refused */
	r = NULL;
	CHECK(results_open(dir, 0, &r, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "--resume") != NULL);

	/* simulate a crash mid-write: a torn last line */
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK(write(fd, "{\"case\":\"b\",\"rep", 16) == 16);
	close(fd);

	diag_init(&d);
	CHECK(results_open(dir, 1, &r, &d) == ERR_OK);
	if (!r)
		return;
	CHECK_EQ_LONG(r->torn_bytes, 16);
	CHECK_EQ_LONG(r->keys.n, 3);
	record_key("a", 2, 0, 0, key, sizeof(key));
	CHECK(results_has(r, key));
	record_key("rec", 1, 1, 7, key, sizeof(key));
	CHECK(results_has(r, key));
	record_key("rec", 1, 1, 8, key, sizeof(key));
	CHECK(!results_has(r, key));
	record_key("b", 1, 0, 0, key, sizeof(key));
	CHECK(!results_has(r, key));
	append(r, "b", 1, -1);
	results_free(r);
	CHECK_EQ_LONG(count_lines(path), 4);
}

static void test_garbled_middle_line(void)
{
	char sub[300], path[600];
	struct results *r = NULL;
	struct diag d;
	int fd;

	snprintf(sub, sizeof(sub), "%s/garbled", dir);
	diag_init(&d);
	CHECK(results_open(sub, 0, &r, &d) == ERR_OK);
	results_free(r);
	snprintf(path, sizeof(path), "%s/results.jsonl", sub);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, "not json\n{\"case\":\"a\",\"repeat\":1,\"seed\":null}\n", 46) == 46);
	close(fd);
	r = NULL;
	CHECK(results_open(sub, 1, &r, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "line 1: not JSON: column 1 (byte 0): ") != NULL);
}

/* A repeat or seed that no long can hold is not a needle record (converting
 * it was undefined; found by fuzzing); the largest suite seed still is. */
static void test_huge_numbers(void)
{
	static const char body[] =
		"{\"case\":\"a\",\"repeat\":1,\"seed\":9007199254740991,\"verdict\":\"pass\"," TREC_CHAT "}\n"
		"{\"case\":\"b\",\"repeat\":1e300,\"seed\":null,\"verdict\":\"pass\"," TREC_CHAT "}\n"
		"{\"case\":\"c\",\"repeat\":1,\"seed\":-1e300,\"verdict\":\"pass\"," TREC_CHAT "}\n";
	char sub[300], path[600], key[256];
	struct results *r = NULL;
	struct diag d;
	int fd;

	snprintf(sub, sizeof(sub), "%s/huge", dir);
	diag_init(&d);
	CHECK(results_open(sub, 0, &r, &d) == ERR_OK);
	results_free(r);
	snprintf(path, sizeof(path), "%s/results.jsonl", sub);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, body, sizeof(body) - 1) == (ssize_t)(sizeof(body) - 1));
	close(fd);
	r = NULL;
	CHECK(results_open(sub, 1, &r, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "line 2") != NULL);
	results_free(r);
	/* Without the bad lines the big seed is a key like any other. */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, body, (size_t)(strchr(body, '\n') + 1 - body)) == strchr(body, '\n') + 1 - body);
	close(fd);
	r = NULL;
	diag_init(&d);
	CHECK(results_open(sub, 1, &r, &d) == ERR_OK);
	record_key("a", 1, 1, 9007199254740991L, key, sizeof(key));
	CHECK(r && results_has(r, key));
	results_free(r);
}

/* A write that cannot complete (file size limit, like a full disk) is rolled
 * back; every record before it stays. */
static void test_failed_write(void)
{
	char sub[300], path[600];
	struct results *r = NULL;
	struct rlimit old, lim;
	struct diag d;
	cJSON *big;
	char *pad;

	snprintf(sub, sizeof(sub), "%s/full", dir);
	diag_init(&d);
	CHECK(results_open(sub, 0, &r, &d) == ERR_OK);
	if (!r)
		return;
	append(r, "a", 1, -1);
	append(r, "b", 1, -1);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 4096;
	setrlimit(RLIMIT_FSIZE, &lim);
	big = record("c", 1, -1);
	pad = malloc(8192);
	memset(pad, 'x', 8191);
	pad[8191] = '\0';
	cJSON_AddStringToObject(big, "content", pad);
	CHECK(results_append(r, big, &d) == ERR_IO);
	CHECK(strstr(d.msg, "results.jsonl") != NULL);
	setrlimit(RLIMIT_FSIZE, &old);
	cJSON_Delete(big);
	free(pad);
	results_free(r);
	snprintf(path, sizeof(path), "%s/results.jsonl", sub);
	CHECK_EQ_LONG(count_lines(path), 2);
}

static void test_unwritable(void)
{
	struct results *r = NULL;
	struct diag d;

	diag_init(&d);
	/* a regular file where a folder must go: fails even for root */
	CHECK(results_open("/dev/null/run", 0, &r, &d) == ERR_IO);
	CHECK(strstr(d.msg, "/dev/null") != NULL);
	CHECK(r == NULL);
}

static void test_raw_name(void)
{
	char a[256], b[256];

	CHECK(!results_raw_name("arith", 2, 0, 0, a, sizeof(a), NULL));
	CHECK_STR(a, "arith-r2.sse");
	CHECK(!results_raw_name("x/../y", 1, 1, 3, b, sizeof(b), NULL));
	CHECK(strchr(b, '/') == NULL);
	CHECK(strstr(b, "-r1-s3.sse") != NULL);
}

static void test_fix_utf8(void)
{
	char ok[] = "ascii \xe4\xbb\x8e \xf0\x9f\x98\x80";
	char cut[] = "You said: \xe4\xbb\x8e\xe8";       /* cut mid-character */
	char bad[] = "\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xff"; /* overlong, surrogate, > U+10FFFF */

	CHECK_EQ_LONG(results_fix_utf8(ok), 0);
	CHECK_STR(ok, "ascii \xe4\xbb\x8e \xf0\x9f\x98\x80");
	CHECK_EQ_LONG(results_fix_utf8(cut), 1);
	CHECK_STR(cut, "You said: \xe4\xbb\x8e?");
	CHECK_EQ_LONG(results_fix_utf8(bad), 10);
	CHECK_STR(bad, "?? ??? ???? ?");
}

/* A second open of a folder held by another handle is refused at once; the
 * lock goes with the handle. */
static void test_lock(void)
{
	char sub[300];
	struct results *a = NULL, *b = NULL;
	struct diag d;

	snprintf(sub, sizeof(sub), "%s/locked", dir);
	diag_init(&d);
	CHECK(results_open(sub, 0, &a, &d) == ERR_OK);
	diag_init(&d);
	CHECK(results_open(sub, 1, &b, &d) == ERR_USAGE);
	CHECK(b == NULL);
	CHECK(strstr(d.msg, "in use by another needle run") != NULL);
	results_free(a);
	diag_init(&d);
	CHECK(results_open(sub, 1, &b, &d) == ERR_OK);
	results_free(b);
}

/* The key set holds many keys, each once, and finds exactly those. */
static void test_keyset(void)
{
	struct keyset s;
	struct diag d;
	char k[64];
	int i, added, bad = 0;

	keyset_init(&s);
	diag_init(&d);
	for (i = 0; i < 20000; i++) {
		snprintf(k, sizeof(k), "case-%d\x1f" "1\x1f" "null", i % 10000);
		CHECK(keyset_add(&s, k, &added, &d) == ERR_OK);
		bad += added != (i < 10000);
	}
	CHECK_EQ_LONG(bad, 0);
	CHECK_EQ_LONG(s.n, 10000);
	CHECK(keyset_has(&s, "case-9999\x1f" "1\x1f" "null"));
	CHECK(!keyset_has(&s, "case-10000\x1f" "1\x1f" "null"));
	CHECK(!keyset_has(&s, ""));
	keyset_release(&s);
	CHECK(!keyset_has(&s, "case-1\x1f" "1\x1f" "null"));
	keyset_release(NULL);
}

int main(void)
{
	char cmd[300];
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/needle-test-results-%d", (int)getpid());
	T_RUN(test_append_and_resume);
	T_RUN(test_garbled_middle_line);
	T_RUN(test_huge_numbers);
	T_RUN(test_failed_write);
	T_RUN(test_unwritable);
	T_RUN(test_raw_name);
	T_RUN(test_fix_utf8);
	T_RUN(test_lock);
	T_RUN(test_keyset);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	rc = system(cmd);
	(void)rc;
	return T_DONE();
}
