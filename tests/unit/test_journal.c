/* Unit tests of the journal's writer thread: order kept through batches,
 * records handed back only once written, a bounded queue, sticky failures
 * that name the file and keep the records before them. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/io.h"
#include "run/journal.h"
#include "base/mem.h"
#include "t.h"

static char dir[256];

/* A new folder DIR/NAME with raw/ and an empty results.jsonl opened for
 * appending; the fd, or -1. */
static int folder(const char *base, const char *name, char *out, size_t cap)
{
	char path[600];
	struct diag d;

	diag_init(&d);
	snprintf(out, cap, "%s/%s", base, name);
	snprintf(path, sizeof(path), "%s/raw", out);
	CHECK(io_mkdirs(path, &d) == ERR_OK);
	snprintf(path, sizeof(path), "%s/results.jsonl", out);
	return open(path, O_RDWR | O_CREAT | O_APPEND | O_TRUNC, 0666);
}

static char *dup_text(const char *s)
{
	return mem_strndup(s, strlen(s));
}

/* Collect callback: checks the notes arrive in order and counts them. */
struct seen {
	long next;
	long bad;
};

static enum err in_order(void *ctx, const char *key, const void *note, struct diag *d)
{
	struct seen *s = ctx;
	long n;
	char want[32];

	(void)d;
	memcpy(&n, note, sizeof(n));
	snprintf(want, sizeof(want), "k%ld", n);
	s->bad += n != s->next || strcmp(key, want) != 0;
	s->next++;
	return ERR_OK;
}

static long raw_files(const char *path);

static void test_order(void)
{
	char sub[300], line[64], name[64], path[600];
	struct journal *j = NULL;
	struct seen s = {0, 0};
	struct diag d;
	struct buf b;
	long i, lines = 0;
	int fd = folder(dir, "order", sub, sizeof(sub));

	diag_init(&d);
	CHECK(fd >= 0 && journal_open(sub, fd, 0, &j, &d) == ERR_OK);
	if (!j)
		return;
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "k%ld.sse", i);
		snprintf(line, sizeof(line), "{\"n\":%ld}\n", i);
		CHECK(journal_raw(j, name, dup_text(line), strlen(line), &d) == ERR_OK);
		snprintf(name, sizeof(name), "k%ld", i);
		CHECK(journal_line(j, dup_text(line), strlen(line), name, &i, sizeof(i), &d) == ERR_OK);
		if (i % 200 == 0) /* collecting while the writer runs hands back a prefix */
			CHECK(journal_collect(j, 0, in_order, &s, &d) == ERR_OK);
	}
	CHECK(journal_collect(j, 1, in_order, &s, &d) == ERR_OK);
	CHECK_EQ_LONG(s.next, 1000);
	CHECK_EQ_LONG(s.bad, 0);
	journal_free(j);
	buf_init(&b, 1 << 24);
	snprintf(path, sizeof(path), "%s/results.jsonl", sub);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	for (i = 0; b.data && i < (long)b.len; i++)
		lines += b.data[i] == '\n';
	CHECK_EQ_LONG(lines, 1000);
	CHECK(strncmp(b.data, "{\"n\":0}\n{\"n\":1}\n", 16) == 0);
	buf_reset(&b);
	snprintf(path, sizeof(path), "%s/raw/k999.sse", sub);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	CHECK_STR(b.data, "{\"n\":999}\n");
	buf_release(&b);
	close(fd);
	snprintf(path, sizeof(path), "%s/raw", sub);
	CHECK_EQ_LONG(raw_files(path), 1000); /* the raw files and nothing else */
}

/* The entries of directory `path` but . and .., -1 if it cannot be read;
 * a temp file left behind counts too. */
static long raw_files(const char *path)
{
	DIR *dp = opendir(path);
	struct dirent *de;
	long n = 0;

	if (!dp)
		return -1;
	while ((de = readdir(dp)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(dp);
	return n;
}

/* A raw file of a name already there (an attempt run again) replaces it. */
static void test_raw_replaced(void)
{
	char sub[300], path[600];
	struct journal *j = NULL;
	struct diag d;
	struct buf b;
	int fd = folder(dir, "again", sub, sizeof(sub)), old;

	diag_init(&d);
	snprintf(path, sizeof(path), "%s/raw/x.sse", sub);
	old = open(path, O_WRONLY | O_CREAT, 0600);
	CHECK(old >= 0 && write(old, "the first try, longer", 21) == 21);
	close(old);
	CHECK(fd >= 0 && journal_open(sub, fd, 0, &j, &d) == ERR_OK);
	if (!j)
		return;
	CHECK(journal_raw(j, "x.sse", dup_text("again"), 5, &d) == ERR_OK);
	CHECK(journal_collect(j, 1, NULL, NULL, &d) == ERR_OK);
	journal_free(j);
	buf_init(&b, 1 << 20);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	CHECK_STR(b.data, "again");
	buf_release(&b);
	snprintf(path, sizeof(path), "%s/raw", sub);
	CHECK_EQ_LONG(raw_files(path), 1);
	close(fd);
}

/* The writer stalled (its first raw file replaces one already there, so it
 * goes through a temp path, which is a FIFO nobody reads yet): puts wait
 * once JOURNAL_QUEUE_BYTES are queued, and go on when it drains. */
struct stall {
	char fifo[600];
	_Atomic long puts;   /* puts returned so far */
	long at_release;     /* ... when the FIFO was opened */
};

static void *release(void *arg)
{
	struct stall *st = arg;
	char buf[4096];
	int fd;
	long prev = -1, i;

	for (i = 0; i < 100 && (st->puts != prev || prev <= 0); i++) { /* until the puts stop */
		prev = st->puts;
		usleep(200 * 1000);
	}
	st->at_release = st->puts;
	fd = open(st->fifo, O_RDONLY);
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void test_bounded(void)
{
	char sub[300], name[64];
	struct journal *j = NULL;
	struct stall st;
	struct diag d;
	size_t mb = (size_t)1 << 20;
	pthread_t th;
	long i, n = (long)(JOURNAL_QUEUE_BYTES / mb) + 40;
	int fd = folder(dir, "bound", sub, sizeof(sub));

	memset(&st, 0, sizeof(st));
	snprintf(st.fifo, sizeof(st.fifo), "%s/raw/stall.sse", sub);
	close(open(st.fifo, O_WRONLY | O_CREAT, 0600));
	snprintf(st.fifo, sizeof(st.fifo), "%s/raw/stall.sse.tmp.%ld", sub, (long)getpid());
	CHECK(mkfifo(st.fifo, 0600) == 0);
	diag_init(&d);
	CHECK(fd >= 0 && journal_open(sub, fd, 0, &j, &d) == ERR_OK);
	if (!j || pthread_create(&th, NULL, release, &st) != 0)
		return;
	CHECK(journal_raw(j, "stall.sse", dup_text("x"), 1, &d) == ERR_OK);
	for (i = 0; i < n; i++) {
		char *p = mem_alloc(mb);
		if (p)
			memset(p, 'x', mb);
		snprintf(name, sizeof(name), "big%ld.sse", i);
		CHECK(p && journal_raw(j, name, p, mb, &d) == ERR_OK);
		st.puts++;
	}
	pthread_join(th, NULL);
	CHECK(journal_collect(j, 1, NULL, NULL, &d) == ERR_OK);
	CHECK(st.at_release <= (long)(JOURNAL_QUEUE_BYTES / mb));
	CHECK(st.at_release >= (long)(JOURNAL_QUEUE_BYTES / mb) - 2);
	CHECK_EQ_LONG(st.puts, n);
	journal_free(j);
	close(fd);
}

/* A line that cannot be written (file size limit, like a full disk): the
 * failure names results.jsonl, is returned by every later call, and the file
 * keeps exactly the records before it. */
static void test_line_fails(void)
{
	char sub[300], path[600];
	struct journal *j = NULL;
	struct rlimit old, lim;
	struct seen s = {0, 0};
	struct diag d;
	struct stat st;
	char *big;
	long i;
	int fd = folder(dir, "full", sub, sizeof(sub));

	diag_init(&d);
	CHECK(fd >= 0 && journal_open(sub, fd, 0, &j, &d) == ERR_OK);
	if (!j)
		return;
	for (i = 0; i < 2; i++)
		CHECK(journal_line(j, dup_text("{\"a\":1}\n"), 8, i ? "k1" : "k0", &i, sizeof(i), &d) == ERR_OK);
	CHECK(journal_collect(j, 1, in_order, &s, &d) == ERR_OK);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 4096;
	setrlimit(RLIMIT_FSIZE, &lim);
	big = mem_alloc(8192);
	memset(big, 'x', 8191);
	big[8191] = '\n';
	CHECK(journal_line(j, big, 8192, "k2", &i, sizeof(i), &d) == ERR_OK);
	CHECK(journal_collect(j, 1, in_order, &s, &d) == ERR_IO);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(strstr(d.msg, "/full/results.jsonl") != NULL);
	CHECK(strstr(d.msg, "the 2 records before it are safe") != NULL);
	diag_init(&d);
	CHECK(journal_line(j, dup_text("{\"a\":1}\n"), 8, "k3", &i, sizeof(i), &d) == ERR_IO);
	CHECK(strstr(d.msg, "results.jsonl") != NULL);
	CHECK_EQ_LONG(s.next, 2);
	journal_free(j);
	snprintf(path, sizeof(path), "%s/results.jsonl", sub);
	CHECK(stat(path, &st) == 0 && st.st_size == 16);
	close(fd);
}

/* A raw file that cannot be written: named in the failure, and the record
 * queued after it is never written (it would point at nothing). */
static void test_raw_fails(void)
{
	char sub[300], path[600];
	struct journal *j = NULL;
	struct seen s = {0, 0};
	struct diag d;
	struct stat st;
	long i = 0;
	int fd = folder(dir, "noraw", sub, sizeof(sub));

	diag_init(&d);
	snprintf(path, sizeof(path), "%s/raw", sub);
	CHECK(rmdir(path) == 0);
	CHECK(fd >= 0 && journal_open(sub, fd, 0, &j, &d) == ERR_OK);
	if (!j)
		return;
	CHECK(journal_line(j, dup_text("{\"a\":1}\n"), 8, "k0", &i, sizeof(i), &d) == ERR_OK);
	CHECK(journal_raw(j, "x.sse", dup_text("data"), 4, &d) == ERR_OK);
	i = 1;
	CHECK(journal_line(j, dup_text("{\"a\":2}\n"), 8, "k1", &i, sizeof(i), &d) == ERR_OK);
	CHECK(journal_collect(j, 1, in_order, &s, &d) == ERR_IO);
	CHECK(strstr(d.msg, "/noraw/raw/x.sse") != NULL);
	CHECK_EQ_LONG(s.next, 1); /* the record before the raw file was written */
	CHECK_EQ_LONG(s.bad, 0);
	journal_free(j);
	snprintf(path, sizeof(path), "%s/results.jsonl", sub);
	CHECK(stat(path, &st) == 0 && st.st_size == 8);
	close(fd);
}

int main(void)
{
	char cmd[300];
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/needle-test-journal-%d", (int)getpid());
	T_RUN(test_order);
	T_RUN(test_raw_replaced);
	T_RUN(test_bounded);
	T_RUN(test_line_fails);
	T_RUN(test_raw_fails);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	rc = system(cmd);
	(void)rc;
	return T_DONE();
}
