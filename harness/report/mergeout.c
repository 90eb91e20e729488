#define _GNU_SOURCE /* syncfs */
/* mergeout — see mergeout.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "base/jget.h"
#include "base/json.h"
#include "mergeout.h"
#include "run/record.h"
#include "run/results.h"

#define TMP_NAME ".results.jsonl.merge"
#define CHUNK ((size_t)1 << 20)

enum err mergeout_check(const char *out, int force, struct diag *d)
{
	char path[4096];
	struct stat st;
	cJSON *man = NULL;
	enum err e;

	snprintf(path, sizeof(path), "%s/results.jsonl", out);
	if (stat(path, &st) != 0 || st.st_size == 0)
		return ERR_OK;
	if (!force)
		return diag_fail(d, ERR_USAGE,
				 "results folder '%s' already holds results; pass --force to merge into it again, or another OUT",
				 out);
	if ((e = results_read_manifest(out, &man, d)))
		return e;
	if (!cJSON_IsTrue(jget2(man, MK_SHARD, MK_MERGED)))
		e = diag_fail(d, ERR_USAGE,
			      "results folder '%s' holds a run that is not a merge: --force replaces only a merged run",
			      out);
	cJSON_Delete(man);
	return e;
}

static enum err fail_io(const char *what, const char *out, const char *name, struct diag *d)
{
	return diag_fail(d, ERR_IO, "cannot %s '%s/%s': %s", what, out, name, strerror(errno));
}

enum err mergeout_open(struct mergeout *w, const char *out, struct diag *d)
{
	enum err e;

	memset(w, 0, sizeof(*w));
	w->out = out;
	w->dirfd = w->rawfd = w->lockfd = w->tmpfd = -1;
	keyset_init(&w->raws);
	buf_init(&w->copy, CHUNK);
	if ((e = io_mkdirs(out, d)))
		return e;
	if ((w->dirfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return diag_fail(d, ERR_IO, "cannot write results folder '%s': %s", out, strerror(errno));
	w->lockfd = openat(w->dirfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (w->lockfd < 0)
		return fail_io("lock", out, ".lock", d);
	if (flock(w->lockfd, LOCK_EX | LOCK_NB) != 0)
		return errno == EWOULDBLOCK
			       ? diag_fail(d, ERR_USAGE, "results folder '%s' is in use by another needle (it holds '%s/.lock')",
					   out, out)
			       : fail_io("lock", out, ".lock", d);
	if (mkdirat(w->dirfd, "raw", 0777) != 0 && errno != EEXIST)
		return fail_io("create", out, "raw", d);
	if ((w->rawfd = openat(w->dirfd, "raw", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return fail_io("open", out, "raw", d);
	w->tmpfd = openat(w->dirfd, TMP_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			  0666);
	return w->tmpfd < 0 ? fail_io("write", out, TMP_NAME, d) : ERR_OK;
}

static enum err put(int fd, const char *data, size_t n, const char *out, const char *name,
		    struct diag *d)
{
	ssize_t k;

	while (n > 0) {
		k = write(fd, data, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return fail_io("write", out, name, d);
		data += k;
		n -= (size_t)k;
	}
	return ERR_OK;
}

/* Copies `len` bytes of `in` from `off` to the end of `to` (named `name`
 * under OUT in messages); `from` names `in`. */
static enum err copy_fd(struct mergeout *w, int in, off_t off, off_t len, const char *from,
			int to, const char *name, struct diag *d)
{
	ssize_t n;
	enum err e = buf_reserve(&w->copy, CHUNK);

	if (e)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	while (len > 0) {
		size_t want = (off_t)CHUNK < len ? CHUNK : (size_t)len;
		n = pread(in, w->copy.data, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return diag_fail(d, ERR_IO, "cannot read '%s': %s", from,
					 n < 0 ? strerror(errno) : "it was cut short during the merge");
		if ((e = put(to, w->copy.data, (size_t)n, w->out, name, d)))
			return e;
		off += n;
		len -= n;
	}
	return ERR_OK;
}

/* Links the open file `in` as OUT/raw/NAME, replacing an earlier one (the
 * descriptor's file, not a name that may have been swapped since its fstat);
 * 0 when it cannot be (another filesystem, no /proc, a file of another user
 * under protected_hardlinks) and it is to be copied. */
static int link_raw(struct mergeout *w, int in, const char *name)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", in);
	if (linkat(AT_FDCWD, proc, w->rawfd, name, AT_SYMLINK_FOLLOW) == 0)
		return 1;
	return errno == EEXIST && unlinkat(w->rawfd, name, 0) == 0 &&
	       linkat(AT_FDCWD, proc, w->rawfd, name, AT_SYMLINK_FOLLOW) == 0;
}

/* Puts SHARD/raw/NAME (at raw/ `dirfd`) in OUT/raw/NAME: a hard link, else a
 * copy. */
static enum err copy_raw(struct mergeout *w, int dirfd, const char *shard, const char *name,
			 struct diag *d)
{
	char from[4096], there[4096];
	struct stat st;
	int in, to;
	enum err e;

	snprintf(from, sizeof(from), "%s/raw/%s", shard, name);
	snprintf(there, sizeof(there), "raw/%s", name);
	if ((in = mergeread_regular(dirfd, name, from, &st, d)) < 0)
		return d->code;
	if (st.st_size > MERGEOUT_RAW_MAX) {
		close(in);
		return diag_fail(d, ERR_LIMIT, "'%s' is larger than %lld bytes", from,
				 (long long)MERGEOUT_RAW_MAX);
	}
	if (link_raw(w, in, name)) {
		close(in);
		return ERR_OK;
	}
	w->copied++;
	to = openat(w->rawfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (to < 0)
		e = fail_io("write", w->out, there, d);
	else
		e = copy_fd(w, in, 0, st.st_size, from, to, there, d);
	if (to >= 0 && close(to) != 0 && !e)
		e = fail_io("write", w->out, there, d);
	close(in);
	return e;
}

enum err mergeout_raw(struct mergeout *w, const char *shard, struct diag *d)
{
	char path[4096];
	struct dirent *de;
	int fd, added;
	DIR *dp;
	enum err e = ERR_OK;

	snprintf(path, sizeof(path), "%s/raw", shard);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return ERR_OK;
		if (errno == ELOOP || errno == ENOTDIR)
			return diag_fail(d, ERR_INPUT, "'%s' is not a folder (a symbolic link is never followed)",
					 path);
		return diag_fail(d, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	}
	if (!(dp = fdopendir(fd))) {
		close(fd);
		return diag_fail(d, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	}
	while (!e && (errno = 0, de = readdir(dp))) {
		if (de->d_name[0] == '.' || keyset_has(&w->raws, de->d_name))
			continue;
		if (!(e = keyset_add(&w->raws, de->d_name, &added, d)))
			e = copy_raw(w, fd, shard, de->d_name, d);
	}
	if (!e && errno)
		e = diag_fail(d, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	closedir(dp);
	return e;
}

enum err mergeout_span(struct mergeout *w, const struct mergeread *r, off_t from, off_t to,
		       struct diag *d)
{
	return copy_fd(w, r->fd, from, to - from, r->path, w->tmpfd, "results.jsonl", d);
}

enum err mergeout_commit(struct mergeout *w, const cJSON *manifest, struct diag *d)
{
	char path[4096];

	/* one sync for every raw file copied (as journal.h's batches); links
	 * wrote no data: syncing raw/ makes them durable without flushing what
	 * others have written to the filesystem */
	if ((w->copied ? syncfs(w->tmpfd) : fsync(w->rawfd)) != 0 || fdatasync(w->tmpfd) != 0)
		return fail_io("write", w->out, TMP_NAME, d);
	if (close(w->tmpfd) != 0) {
		w->tmpfd = -1;
		return fail_io("write", w->out, TMP_NAME, d);
	}
	w->tmpfd = -1;
	if (renameat(w->dirfd, TMP_NAME, w->dirfd, "results.jsonl") != 0)
		return fail_io("write", w->out, "results.jsonl", d);
	if (fsync(w->dirfd) != 0)
		return fail_io("sync", w->out, "", d);
	snprintf(path, sizeof(path), "%s/manifest.json", w->out);
	return json_write_file(path, manifest, JSON_PRETTY, d);
}

void mergeout_close(struct mergeout *w)
{
	if (w->tmpfd >= 0) {
		close(w->tmpfd);
		unlinkat(w->dirfd, TMP_NAME, 0);
	}
	if (w->rawfd >= 0)
		close(w->rawfd);
	if (w->lockfd >= 0)
		close(w->lockfd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	keyset_release(&w->raws);
	buf_release(&w->copy);
	w->dirfd = w->rawfd = w->lockfd = w->tmpfd = -1;
}
