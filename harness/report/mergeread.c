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

/* Adds member `k` of a record, parsed from its `n` bytes at `v`, to `obj`
 * when merge reads it and `obj` has none yet. ERR_NOMEM only. */
static enum err keep_member(cJSON *obj, const char *k, size_t kn, const char *v, size_t n)
{
	static const char *const wanted[] = {"case", "repeat", "seed", "verdict", "transport",
					     "audit", "grade"};
	size_t i;
	cJSON *item;

	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (strlen(wanted[i]) == kn && !memcmp(wanted[i], k, kn))
			break;
	if (i == sizeof(wanted) / sizeof(wanted[0]) || cJSON_GetObjectItemCaseSensitive(obj, wanted[i]))
		return ERR_OK;
	if (!(item = cJSON_ParseWithLength(v, n)))
		return ERR_NOMEM; /* jscan validated it: only memory can fail */
	cJSON_AddItemToObject(obj, wanted[i], item);
	return ERR_OK;
}

/* Scans the object of `len` bytes at `s` into `obj` (the members merge
 * reads); *load = 1 when it has "load". Returns 1 when it is one JSON object,
 * 0 when not, -1 out of memory. */
static int scan_object(const char *s, size_t len, struct buf *scratch, cJSON *obj, int *load)
{
	struct jscan j;
	struct diag d;
	const char *k;
	size_t kn, start;
	int more;

	diag_init(&d);
	jscan_init(&j, s, len, "a record");
	if ((more = jscan_open(&j, '{', &d)) < 0)
		return 0;
	while (more > 0) {
		if (jscan_peek(&j) != '"' || jscan_string(&j, scratch, &k, &kn, &d) ||
		    jscan_expect(&j, ':', &d))
			return 0;
		*load |= kn == 4 && !memcmp(k, "load", 4);
		/* skipping leaves `scratch`, where the key may be, as it is */
		if (jscan_skip(&j, &start, &d))
			return 0;
		if (keep_member(obj, k, kn, s + start, j.pos - start))
			return -1;
		more = jscan_next(&j, '}', &d);
	}
	return more == 0 && jscan_peek(&j) == -1;
}

/* Why the line of `len` bytes at `s` (its newline excluded) is not a record,
 * or NULL with *obj its members (the whole record when *load); *edited when
 * it is a whole record needle never writes (a lie or a mistyped member,
 * record.h), which no crash leaves: never a torn line. */
static const char *check_line(const char *s, size_t len, struct buf *scratch, cJSON **obj,
			      int *load, int *nomem, int *edited, char *msg, size_t cap)
{
	struct record_view v;
	const char *why;
	int ok;

	*load = 0;
	if (!utf8_valid(s, len))
		return "invalid UTF-8";
	if (!(*obj = cJSON_CreateObject())) {
		*nomem = 1;
		return "out of memory";
	}
	if ((ok = scan_object(s, len, scratch, *obj, load)) <= 0) {
		*nomem = ok < 0;
		return "not a JSON object";
	}
	if (*load) {
		cJSON_Delete(*obj);
		if (!(*obj = cJSON_ParseWithLength(s, len))) {
			*nomem = 1;
			return "out of memory";
		}
	}
	if ((why = record_problem(*obj)))
		return why;
	record_view_of(*obj, &v);
	why = record_view_lie(&v);
	why = why ? why : record_view_mistyped(&v, msg, cap);
	*edited = why != NULL;
	return why;
}

/* One line of `len` bytes at `line` (its newline included; `last`: nothing
 * follows): its record to `fn`; *torn when it is a torn last line. */
static enum err one_line(struct mergeread *r, struct mergeread_rec *rec, int last,
			 struct buf *scratch, mergeread_fn fn, void *ctx, int *torn,
			 struct diag *d)
{
	char key[RECORD_KEY_MAX];
	cJSON *obj = NULL;
	int load, nomem = 0, edited = 0;
	char msg[400];
	const char *why = check_line(rec->line, rec->len - 1, scratch, &obj, &load, &nomem, &edited, msg,
				     sizeof(msg));
	enum err e = ERR_OK;

	if (nomem)
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", r->path);
	else if (why && last && !edited)
		*torn = 1;
	else if (why)
		e = diag_fail(d, ERR_INPUT, "malformed results '%s' line %zu: %s", r->path, rec->no, why);
	else {
		record_key_of(obj, key, sizeof(key));
		rec->key = key;
		rec->passed = record_passed(obj);
		rec->load = load ? obj : NULL;
		r->records++;
		r->end = rec->off + (off_t)rec->len;
		e = fn(ctx, rec, d);
		if (load)
			obj = rec->load;
	}
	cJSON_Delete(obj);
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
	struct buf b, scratch;
	struct mergeread_rec rec;
	size_t start = 0;
	off_t base = 0;
	int eof = 0, torn = 0;
	enum err e = ERR_OK;
	const char *nl;

	buf_init(&b, RESULTS_LINE_MAX + CHUNK + 1);
	buf_init(&scratch, RESULTS_LINE_MAX);
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
		e = one_line(r, &rec, eof && nl + 1 == b.data + b.len, &scratch, fn, ctx, &torn, d);
		start += rec.len;
	}
	buf_release(&b);
	buf_release(&scratch);
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
