/* journal — see journal.h. */
#define _GNU_SOURCE /* syncfs, O_TMPFILE */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/mem.h"

#define JOURNAL_IOV 128 /* record lines per writev */
#define PATHBUF 4352    /* RUN_DIR (4096) + "/raw/" + a raw name */

/* One queued raw file or record line. */
struct jitem {
	struct jitem *next;
	char *data;   /* owned bytes, NULL once written */
	size_t len;
	int is_line;
	int durable;  /* set by the writer: written and synced */
	size_t nlen;
	unsigned char note[JOURNAL_NOTE_MAX];
	char name[];  /* a raw file's name, or a record's key */
};

struct journal {
	char *dir;                 /* owned copy of RUN_DIR */
	int fd;                    /* results.jsonl, borrowed */
	size_t records;            /* complete records in the file */
	off_t size;                /* its bytes of complete lines */
	pthread_mutex_t mu;        /* guards everything below */
	pthread_cond_t work;       /* the queue got an item, or stop */
	pthread_cond_t space;      /* a batch was written: room in the queue */
	pthread_cond_t settled;    /* ... and its records can be collected */
	struct jitem *q, **qtail;  /* queued, not yet taken by the writer */
	size_t qbytes, qitems;     /* queued or being written */
	int writing;               /* a batch is being written */
	struct jitem *dn, **dtail; /* durable records, not yet collected */
	int stop, threaded, failed;
	struct diag fail;          /* the writer's first failure */
	pthread_t th;
	struct iovec iov[JOURNAL_IOV];
};

static void item_free(struct jitem *it)
{
	if (it)
		mem_free(it->data);
	mem_free(it);
}

static void items_free(struct jitem *it)
{
	while (it) {
		struct jitem *next = it->next;
		item_free(it);
		it = next;
	}
}

/* Writes all `len` bytes at `p` to `fd`. Returns 0, or an errno. */
static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		p += n, len -= (size_t)n;
	}
	return 0;
}

/* Writes the raw file of `it` as an unnamed file in RUN_DIR/raw (O_TMPFILE)
 * and links it in as `path`: 0, -1 when that cannot be done here (no
 * O_TMPFILE on this file system, no /proc to link through, or `path` taken),
 * else an errno. */
static int write_linked(const struct journal *j, const struct jitem *it, const char *path)
{
#ifdef O_TMPFILE
	char raw[PATHBUF], proc[64];
	int fd, err;

	snprintf(raw, sizeof(raw), "%s/raw", j->dir);
	if ((fd = open(raw, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666)) < 0)
		return -1;
	err = write_all(fd, it->data, it->len);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!err && linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0)
		err = errno == EEXIST || errno == ENOENT ? -1 : errno;
	if (close(fd) != 0 && !err)
		err = errno;
	return err;
#else
	(void)j, (void)it, (void)path;
	return -1;
#endif
}

/* Writes the raw file of `it` as RUN_DIR/raw/NAME, which appears whole or not
 * at all: unnamed, then linked in (write_linked: one directory entry made,
 * where a temp file renamed into place makes two changes, which on the
 * bench's ext4 is a third of a raw file's cost), else through a temp file
 * renamed over it (which also replaces a file of that name left by an
 * attempt run again). */
static enum err write_raw(struct journal *j, const struct jitem *it, struct diag *d)
{
	char path[PATHBUF], tmp[PATHBUF + 32];
	int fd, n = snprintf(path, sizeof(path), "%s/raw/%s", j->dir, it->name), err = 0;

	if (n < 0 || (size_t)n >= sizeof(path))
		return diag_fail(d, ERR_USAGE, "path '%s/raw/%s' is too long", j->dir, it->name);
	if ((err = write_linked(j, it, path)) >= 0)
		return err ? diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(err))
			   : ERR_OK;
	err = 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	err = write_all(fd, it->data, it->len);
	if (close(fd) != 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) != 0)
		err = errno;
	if (!err)
		return ERR_OK;
	unlink(tmp);
	return diag_fail(d, ERR_IO, "cannot write '%s': %s", path, strerror(err));
}

/* Appends `n` lines (iovecs) in full. Returns 0, or an errno. */
static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		while (n > 0 && (size_t)w >= iov->iov_len)
			w -= (ssize_t)iov->iov_len, iov++, n--;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Cuts results.jsonl back to its complete lines after a failed append. */
static enum err lines_failed(struct journal *j, const char *what, int err, struct diag *d)
{
	if (ftruncate(j->fd, j->size) == 0)
		(void)fsync(j->fd);
	return diag_fail(d, ERR_IO, "cannot %s '%s/results.jsonl': %s (the %zu records before it are safe)",
			 what, j->dir, strerror(err), j->records);
}

/* Appends the record lines of items `from` up to `stop` and syncs them once;
 * marks them durable. */
static enum err write_lines(struct journal *j, struct jitem *from, const struct jitem *stop,
			    struct diag *d)
{
	struct jitem *it;
	size_t n = 0, bytes = 0, lines = 0;
	int err = 0;

	for (it = from; it != stop && !err; it = it->next) {
		if (!it->is_line)
			continue;
		j->iov[n].iov_base = it->data, j->iov[n++].iov_len = it->len;
		bytes += it->len, lines++;
		if (n == JOURNAL_IOV)
			err = writev_all(j->fd, j->iov, (int)n), n = 0;
	}
	if (!err && n)
		err = writev_all(j->fd, j->iov, (int)n);
	if (err)
		return lines_failed(j, "write", err, d);
	if (lines && fdatasync(j->fd) != 0)
		return lines_failed(j, "sync", errno, d);
	j->size += (off_t)bytes, j->records += lines;
	for (it = from; it != stop; it = it->next)
		it->durable = it->is_line;
	return ERR_OK;
}

/* Writes one batch (the list at `b`): its raw files, one syncfs, its lines,
 * one fdatasync. A raw file that fails stops the batch, but the records
 * queued before it are still written. */
static enum err write_batch(struct journal *j, struct jitem *b, struct diag *d)
{
	struct jitem *it;
	int raws = 0;
	enum err e = ERR_OK, le;

	for (it = b; it; it = it->next) {
		if (it->is_line)
			continue;
		if ((e = write_raw(j, it, d)))
			break;
		raws++;
	}
	if (raws && syncfs(j->fd) != 0)
		return diag_fail(d, ERR_IO, "cannot sync '%s/raw': %s", j->dir, strerror(errno));
	le = it != b ? write_lines(j, b, it, d) : ERR_OK;
	return e ? e : le;
}

/* Takes the queue, writes it (the lock released meanwhile), and settles it:
 * durable records to the collect list, the rest freed. Called locked. */
static void batch_once(struct journal *j)
{
	struct jitem *b = j->q, *it, *next, *gone = NULL;
	struct diag d;
	size_t bytes = 0, items = 0;
	enum err e = ERR_OK;

	j->q = NULL, j->qtail = &j->q, j->writing = 1;
	diag_init(&d);
	pthread_mutex_unlock(&j->mu);
	if (!j->failed) /* only this thread sets it */
		e = write_batch(j, b, &d);
	for (it = b; it; it = it->next) {
		bytes += it->len, items++;
		mem_free(it->data);
		it->data = NULL;
	}
	pthread_mutex_lock(&j->mu);
	if (e && !j->failed)
		j->failed = 1, j->fail = d;
	for (it = b; it; it = next) {
		next = it->next;
		it->next = NULL;
		if (it->durable)
			*j->dtail = it, j->dtail = &it->next;
		else
			it->next = gone, gone = it;
	}
	j->qbytes -= bytes, j->qitems -= items, j->writing = 0;
	pthread_cond_broadcast(&j->space);
	pthread_cond_broadcast(&j->settled);
	pthread_mutex_unlock(&j->mu);
	items_free(gone);
	pthread_mutex_lock(&j->mu);
}

static void *writer(void *arg)
{
	struct journal *j = arg;

	pthread_mutex_lock(&j->mu);
	for (;;) {
		while (!j->q && !j->stop)
			pthread_cond_wait(&j->work, &j->mu);
		if (!j->q)
			break;
		batch_once(j);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Starts the writer with every signal blocked in it (they stay the
 * caller's). Without a thread, puts write at once. */
static void start(struct journal *j)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	j->threaded = pthread_create(&j->th, NULL, writer, j) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

enum err journal_open(const char *dir, int fd, size_t base, struct journal **out,
		      struct diag *d)
{
	struct journal *j;
	off_t end = lseek(fd, 0, SEEK_END);

	*out = NULL;
	if (end < 0)
		return diag_fail(d, ERR_IO, "cannot write '%s/results.jsonl': %s", dir, strerror(errno));
	j = mem_calloc(1, sizeof(*j));
	if (!j || !(j->dir = mem_strndup(dir, strlen(dir)))) {
		mem_free(j);
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	j->fd = fd, j->records = base, j->size = end;
	j->qtail = &j->q, j->dtail = &j->dn;
	diag_init(&j->fail);
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->work, NULL);
	pthread_cond_init(&j->space, NULL);
	pthread_cond_init(&j->settled, NULL);
	start(j);
	*out = j;
	return ERR_OK;
}

void journal_free(struct journal *j)
{
	if (!j)
		return;
	if (j->threaded) {
		pthread_mutex_lock(&j->mu);
		j->stop = 1;
		pthread_cond_signal(&j->work);
		pthread_mutex_unlock(&j->mu);
		pthread_join(j->th, NULL);
	}
	items_free(j->q);
	items_free(j->dn);
	pthread_cond_destroy(&j->work);
	pthread_cond_destroy(&j->space);
	pthread_cond_destroy(&j->settled);
	pthread_mutex_destroy(&j->mu);
	mem_free(j->dir);
	mem_free(j);
}

/* Queues `it` (taken), waiting for room first. */
static enum err put(struct journal *j, struct jitem *it, struct diag *d)
{
	enum err e = ERR_OK;

	pthread_mutex_lock(&j->mu);
	while (j->threaded && !j->failed && j->qitems > 0 &&
	       (j->qitems >= JOURNAL_QUEUE_ITEMS || j->qbytes + it->len > JOURNAL_QUEUE_BYTES))
		pthread_cond_wait(&j->space, &j->mu);
	if (j->failed) {
		e = diag_fail(d, j->fail.code, "%s", j->fail.msg);
		item_free(it);
	} else {
		*j->qtail = it, j->qtail = &it->next;
		j->qbytes += it->len, j->qitems++;
		if (j->threaded)
			pthread_cond_signal(&j->work);
		else
			batch_once(j);
	}
	pthread_mutex_unlock(&j->mu);
	return e;
}

/* A new item for `data` (taken) named `name`. */
static enum err item_new(char *data, size_t len, const char *name, struct jitem **out,
			 struct diag *d)
{
	size_t n = strlen(name);
	struct jitem *it = mem_calloc(1, sizeof(*it) + n + 1);

	*out = it;
	if (!it) {
		mem_free(data);
		return diag_fail(d, ERR_NOMEM, "out of memory writing '%s'", name);
	}
	it->data = data, it->len = len;
	memcpy(it->name, name, n + 1);
	return ERR_OK;
}

enum err journal_raw(struct journal *j, const char *name, char *data, size_t len,
		     struct diag *d)
{
	struct jitem *it;
	enum err e = item_new(data, len, name, &it, d);

	return e ? e : put(j, it, d);
}

enum err journal_line(struct journal *j, char *line, size_t len, const char *key,
		      const void *note, size_t nlen, struct diag *d)
{
	struct jitem *it;
	enum err e = item_new(line, len, key, &it, d);

	if (e)
		return e;
	it->is_line = 1;
	it->nlen = nlen < JOURNAL_NOTE_MAX ? nlen : JOURNAL_NOTE_MAX;
	if (note)
		memcpy(it->note, note, it->nlen);
	return put(j, it, d);
}

enum err journal_collect(struct journal *j, int wait, journal_fn fn, void *ctx,
			 struct diag *d)
{
	struct jitem *got, *it;
	struct diag fail;
	enum err e = ERR_OK;

	pthread_mutex_lock(&j->mu);
	while (wait && (j->q || j->writing))
		pthread_cond_wait(&j->settled, &j->mu);
	got = j->dn;
	j->dn = NULL, j->dtail = &j->dn;
	fail = j->fail;
	pthread_mutex_unlock(&j->mu);
	for (it = got; it && !e; it = it->next)
		e = fn(ctx, it->name, it->note, d);
	items_free(got);
	if (!e && fail.code)
		e = diag_fail(d, fail.code, "%s", fail.msg);
	return e;
}
