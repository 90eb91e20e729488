/* mergeread — see mergeread.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "base/jscan.h"
#include "base/json.h"
#include "base/utf8.h"
#include "mergeread.h"
#include "run/record.h"
#include "run/results.h"

#define CHUNK ((size_t)1 << 20) /* bytes read at a time */

int mergeread_regular(int dirfd, const char *name, const char *path, struct stat *st,
		      struct diag *d)
{
	struct diag why;
	int fd, no;

	diag_init(&why);
	if ((fd = io_openat_regular(dirfd, name, path, IO_NOFOLLOW, st, &why)) >= 0)
		return fd;
	no = errno;
	diag_fail(d, no == ENOENT ? ERR_IO : ERR_INPUT, "%s", why.msg);
	errno = no;
	return -1;
}

/* Appends what `fd` holds, up to the cap of `b`. */
static enum err read_all(int fd, const char *path, struct buf *b, struct diag *d)
{
	ssize_t n;

	for (;;) {
		if (buf_reserve(b, CHUNK) && buf_reserve(b, 1))
			return diag_fail(d, ERR_LIMIT, "'%s' is larger than %zu bytes", path, b->max);
		n = read(fd, b->data + b->len, buf_avail(b));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return diag_fail(d, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
		if (n == 0)
			return ERR_OK;
		buf_commit(b, (size_t)n);
	}
}

static enum err read_manifest(struct mergeread *r, struct diag *d)
{
	char path[4096];
	struct stat st;
	struct buf b;
	enum err e;
	int fd;

	snprintf(path, sizeof(path), "%s/manifest.json", r->dir);
	if ((fd = mergeread_regular(AT_FDCWD, path, path, &st, d)) < 0) {
		if (errno != ENOENT)
			return d->code;
		diag_init(d);
		return ERR_OK;
	}
	buf_init(&b, MERGEREAD_MANIFEST_MAX);
	e = read_all(fd, path, &b, d);
	close(fd);
	if (!e && (e = utf8_check(b.data, b.len, d)))
		diag_prefix(d, "cannot read '%s'", path);
	else if (!e && json_parse(b.data, b.len, &r->manifest, "manifest", d) == ERR_NOMEM)
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	else if (!e && !cJSON_IsObject(r->manifest))
		e = diag_fail(d, ERR_INPUT, "cannot parse '%s': not a JSON object", path);
	buf_release(&b);
	return e;
}

enum err mergeread_open(struct mergeread *r, const char *dir, struct diag *d)
{
	struct stat st;
	enum err e;

	memset(r, 0, sizeof(*r));
	r->dir = dir;
	r->fd = -1;
	if ((size_t)snprintf(r->path, sizeof(r->path), "%s/results.jsonl", dir) >= sizeof(r->path))
		return diag_fail(d, ERR_USAGE, "path '%s' is too long", dir);
	if ((e = read_manifest(r, d)))
		return e;
	r->fd = mergeread_regular(AT_FDCWD, r->path, r->path, &st, d);
	return r->fd < 0 ? d->code : ERR_OK;
}

void mergeread_close(struct mergeread *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	cJSON_Delete(r->manifest);
	r->manifest = NULL;
}

/* Why the line of `len` bytes at `s` (its newline excluded) is not a record,
 * or NULL with *v its view (a tree of `t`, parsed from a copy of the line in
 * `copy`), and in *load the whole record as cJSON when it has "load"; *edited
 * when it is a whole record needle never writes (record_view_edited), which
 * no crash leaves: never a torn line. */
static const char *check_line(const char *s, size_t len, struct jtree *t, struct buf *copy,
			      struct record_view *v, cJSON **load, int *nomem, int *edited,
			      char *msg, size_t cap)
{
	cJSON *tree = NULL;
	const char *why;
	enum err e;

	*load = NULL;
	if (!utf8_valid(s, len))
		return "invalid UTF-8";
	buf_reset(copy);
	if (buf_append(copy, s, len)) {
		*nomem = 1;
		return "out of memory";
	}
	/* the tree ends its strings in place: the line itself stays as it is */
	if ((e = jtree_parse(t, copy->data, len, "a record", &tree, NULL)) == ERR_NOMEM) {
		*nomem = 1;
		return "out of memory";
	}
	record_view_of_jtree(tree, v);
	if (!tree || !cJSON_IsObject(tree))
		return "not a JSON object";
	if ((why = record_view_problem(v)))
		return why;
	why = record_view_edited(v, msg, cap);
	*edited = why != NULL;
	if (!why && v->f[RF_LOAD] && !(*load = cJSON_ParseWithLength(s, len))) {
		*nomem = 1;
		return "out of memory";
	}
	return why;
}

/* One line of `len` bytes at `line` (its newline included; `last`: nothing
 * follows): its record to `fn`; *torn when it is a torn last line. */
static enum err one_line(struct mergeread *r, struct mergeread_rec *rec, int last,
			 struct jtree *t, struct buf *copy, mergeread_fn fn, void *ctx, int *torn,
			 struct diag *d)
{
	char key[RECORD_KEY_MAX];
	struct record_view v;
	cJSON *load = NULL;
	int nomem = 0, edited = 0;
	char msg[400];
	const char *why = check_line(rec->line, rec->len - 1, t, copy, &v, &load, &nomem, &edited,
				     msg, sizeof(msg));
	enum err e = ERR_OK;

	if (nomem)
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", r->path);
	else if (why && last && !edited)
		*torn = 1;
	else if (why)
		e = diag_fail(d, ERR_INPUT, "malformed results '%s' line %zu: %s", r->path, rec->no, why);
	else {
		record_view_key(&v, key, sizeof(key));
		rec->key = key;
		rec->passed = record_view_passed(&v);
		rec->load = load;
		r->records++;
		r->end = rec->off + (off_t)rec->len;
		e = fn(ctx, rec, d);
		load = rec->load;
	}
	cJSON_Delete(load);
	return e;
}

/* Reads more of the journal at the end of `b` (whose first byte is at file
 * offset `base`); *eof at its end. */
static enum err more(struct mergeread *r, struct buf *b, off_t base, int *eof, struct diag *d)
{
	ssize_t n;

	if (b->len > RESULTS_LINE_MAX)
		return diag_fail(d, ERR_LIMIT, "malformed results '%s' line %zu: longer than %zu bytes",
				 r->path, r->records + 1, RESULTS_LINE_MAX);
	if (buf_reserve(b, CHUNK))
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", r->path);
	do
		n = pread(r->fd, b->data + b->len, CHUNK, base + (off_t)b->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return diag_fail(d, ERR_IO, "cannot read '%s': %s", r->path, strerror(errno));
	*eof = n == 0;
	buf_commit(b, (size_t)n);
	return ERR_OK;
}

enum err mergeread_scan(struct mergeread *r, mergeread_fn fn, void *ctx, struct diag *d)
{
	struct buf b, copy;
	struct jtree t;
	struct mergeread_rec rec;
	size_t start = 0;
	off_t base = 0;
	int eof = 0, torn = 0;
	enum err e = ERR_OK;
	const char *nl;

	buf_init(&b, RESULTS_LINE_MAX + CHUNK + 1);
	buf_init(&copy, RESULTS_LINE_MAX);
	jtree_init(&t);
	r->records = 0;
	r->end = 0;
	memset(&rec, 0, sizeof(rec));
	while (!e && !torn) {
		nl = memchr(b.data + start, '\n', b.len - start);
		if (!eof && (!nl || nl + 1 == b.data + b.len)) {
			memmove(b.data, b.data + start, b.len - start);
			buf_truncate(&b, b.len - start);
			base += (off_t)start;
			start = 0;
			e = more(r, &b, base, &eof, d);
			continue;
		}
		if (!nl)
			break; /* a torn last line without its newline */
		rec.line = b.data + start;
		rec.len = (size_t)(nl + 1 - rec.line);
		rec.off = base + (off_t)start;
		rec.no++;
		e = one_line(r, &rec, eof && nl + 1 == b.data + b.len, &t, &copy, fn, ctx, &torn, d);
		start += rec.len;
	}
	buf_release(&b);
	buf_release(&copy);
	jtree_release(&t);
	return e;
}

enum err mergeread_pread(const struct mergeread *r, off_t off, size_t len,
			 struct buf *out, struct diag *d)
{
	ssize_t n;

	buf_reset(out);
	if (buf_reserve(out, len))
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", r->path);
	while (out->len < len) {
		n = pread(r->fd, out->data + out->len, len - out->len, off + (off_t)out->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return diag_fail(d, ERR_IO, "cannot read '%s' again: %s", r->path,
					 n < 0 ? strerror(errno) : "it was cut short during the merge");
		buf_commit(out, (size_t)n);
	}
	return ERR_OK;
}
