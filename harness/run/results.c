/*
 * results — see results.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/utf8.h"
#include "base/buf.h"
#include "base/io.h"
#include "journal.h"
#include "base/json.h"
#include "base/jscan.h"
#include "base/mem.h"
#include "record.h"
#include "results.h"

#define PATHBUF 4096

int results_has(const struct results *r, const char *key)
{
	return keyset_has(&r->keys, key);
}

/* results_each's callback on --resume: keeps the key, counts the verdict. */
static enum err load_one(void *ctx, const struct record_view *v, struct diag *d)
{
	struct results *r = ctx;
	char key[RECORD_KEY_MAX];
	int added;
	enum err e;

	record_view_key(v, key, sizeof(key));
	if ((e = keyset_add(&r->keys, key, &added, d)) || !added)
		return e;
	if (record_passed(v->rec))
		r->prior_pass++;
	else
		r->prior_fail++;
	return ERR_OK;
}

/* Parses one journal line into *rec (owned by `t`); text that is no JSON
 * leaves *rec NULL (the caller judges the line). Only running out of memory
 * is an error. */
#define LINE_NAME "a results line"

/* Parses a journal line into *rec (NULL when it is not JSON, its position and
 * reason then in `bad`, e.g. "column 17 (byte 16): expected ':'"). Only out of
 * memory is an error: a line that is not JSON may be a torn last line. */
static enum err parse_line(struct jtree *t, char *text, size_t len, cJSON **rec,
			   char *bad, size_t cap, const char *path, struct diag *d)
{
	/* the scanner's message, less its name and line: a line is one line */
	static const char lead[] = "cannot parse '" LINE_NAME "': line 1, ";
	struct diag pd;
	enum err e;

	diag_init(&pd);
	e = jtree_parse(t, text, len, LINE_NAME, rec, &pd);
	if (e == ERR_NOMEM)
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	if (e)
		snprintf(bad, cap, "not JSON: %s",
			 strncmp(pd.msg, lead, sizeof(lead) - 1) ? pd.msg : pd.msg + sizeof(lead) - 1);
	return ERR_OK;
}

/* Loads the keys of a journal; cuts off a torn last line. */
static enum err load(struct results *r, const char *path, struct diag *d)
{
	struct results_scan sc;
	enum err e = results_each(r->dir, load_one, r, &sc, d);

	if (e) {
		diag_prefix(d, "cannot resume");
		return e;
	}
	r->torn_bytes = sc.torn_bytes;
	if (sc.torn_bytes && (ftruncate(r->fd, sc.torn_at) != 0 || fsync(r->fd) != 0))
		return diag_fail(d, ERR_IO, "cannot repair '%s': %s", path, strerror(errno));
	return ERR_OK;
}

static enum err join_path(char *out, const char *dir, const char *name,
			  struct diag *d)
{
	int n = snprintf(out, PATHBUF, "%s/%s", dir, name);

	if (n < 0 || n >= PATHBUF)
		return diag_fail(d, ERR_USAGE, "path '%s/%s' is too long", dir, name);
	return ERR_OK;
}

/* Takes RUN_DIR/.lock for this process (flock: released by the kernel when
 * the process ends, however it ends). */
static enum err lock(struct results *r, struct diag *d)
{
	char path[PATHBUF];
	enum err e = join_path(path, r->dir, ".lock", d);

	if (e)
		return e;
	r->lock_fd = io_open_regular(path, IO_READWRITE | IO_NOFOLLOW, NULL, d);
	if (r->lock_fd < 0)
		return ERR_IO;
	if (flock(r->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return ERR_OK;
	if (errno == EWOULDBLOCK)
		return diag_fail(d, ERR_USAGE,
				 "results folder '%s' is in use by another needle run (it holds '%s'); wait for it or pass another --out",
				 r->dir, path);
	return diag_fail(d, ERR_IO, "cannot lock '%s': %s", path, strerror(errno));
}

enum err results_open(const char *dir, int resume, struct results **out,
		      struct diag *d)
{
	char path[PATHBUF];
	struct results *r;
	struct stat st;
	enum err e;

	*out = NULL;
	r = mem_calloc(1, sizeof(*r));
	if (!r || !(r->dir = mem_strndup(dir, strlen(dir)))) {
		mem_free(r);
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	r->fd = r->lock_fd = -1;
	keyset_init(&r->keys);
	if ((e = io_mkdirs(dir, d)) || (e = lock(r, d)) ||
	    (e = join_path(path, dir, "raw", d)) ||
	    (e = io_mkdirs(path, d)) ||
	    (e = join_path(path, dir, "results.jsonl", d)))
		goto out;
	r->fd = io_open_regular(path, IO_READWRITE | IO_APPEND | IO_NOFOLLOW, NULL, d);
	if (r->fd < 0) {
		e = ERR_IO;
		goto out;
	}
	if (!resume && fstat(r->fd, &st) == 0 && st.st_size > 0) {
		e = diag_fail(d, ERR_USAGE,
			      "results folder '%s' already holds results; pass --resume to continue it, or another --out",
			      dir);
		goto out;
	}
	if (resume)
		e = load(r, path, d);
	if (!e)
		e = journal_open(dir, r->fd, r->keys.n, &r->j, d);
out:
	if (e)
		results_free(r);
	else
		*out = r;
	return e;
}

void results_free(struct results *r)
{
	if (!r)
		return;
	journal_free(r->j); /* writes what is queued */
	if (r->fd >= 0)
		close(r->fd);
	if (r->lock_fd >= 0)
		close(r->lock_fd); /* releases the lock */
	keyset_release(&r->keys);
	mem_free(r->dir);
	mem_free(r);
}

/* Length of the valid UTF-8 sequence at `p`, or 0. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n, i;
	unsigned long v;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, v = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, v = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, v = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) /* also stops at the NUL */
			return 0;
		v = v << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
	    (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	return n;
}

size_t results_fix_utf8(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t fixed = 0;

	while (p && *p) {
		size_t n = utf8_len(p);
		if (!n) {
			*p++ = '?';
			fixed++;
		} else {
			p += n;
		}
	}
	return fixed;
}

static void fix_tree(const struct results *r, cJSON *v)
{
	cJSON *it;

	for (it = v; it; it = it->next) {
		if (it->string) {
			results_fix_utf8(it->string);
			redact_str(r->redact, it->string);
		}
		if (cJSON_IsString(it)) {
			results_fix_utf8(it->valuestring);
			redact_str(r->redact, it->valuestring);
		}
		if (it->child)
			fix_tree(r, it->child);
	}
}

enum err results_queue(struct results *r, cJSON *rec, const void *note, size_t nlen,
		       struct diag *d)
{
	char key[RECORD_KEY_MAX];
	char *txt;
	size_t len;

	fix_tree(r, rec->child);
	if (!record_key_of(rec, key, sizeof(key)))
		return diag_fail(d, ERR_INTERNAL, "result record without case, repeat or seed");
	txt = cJSON_PrintUnformatted(rec);
	if (!txt)
		return diag_fail(d, ERR_NOMEM, "out of memory writing a result");
	len = strlen(txt);
	txt[len] = '\n'; /* replaces the NUL: the line is written in one piece */
	return journal_line(r->j, txt, len + 1, key, note, nlen, d);
}

/* results_collect's step for each durable record: its key joins the set. */
struct collect {
	struct results *r;
	results_done_fn fn;
	void *ctx;
};

static enum err collect_one(void *ctx, const char *key, const void *note, struct diag *d)
{
	struct collect *c = ctx;
	enum err e = keyset_add(&c->r->keys, key, NULL, d);

	if (e)
		return e;
	c->r->appended++;
	return c->fn ? c->fn(c->ctx, note, d) : ERR_OK;
}

enum err results_collect(struct results *r, int wait, results_done_fn fn, void *ctx,
			 struct diag *d)
{
	struct collect c = {r, fn, ctx};

	return journal_collect(r->j, wait, collect_one, &c, d);
}

enum err results_append(struct results *r, cJSON *rec, struct diag *d)
{
	enum err e = results_queue(r, rec, NULL, 0, d);

	return e ? e : results_collect(r, 1, NULL, NULL, d);
}

enum err results_raw_name(const char *id, long repeat, int has_seed, long seed,
			  char *out, size_t cap, struct diag *d)
{
	char safe[128], hex[IO_SHA256_HEX];
	size_t i, n = 0;
	int changed = 0;

	for (i = 0; id[i] && n + 1 < sizeof(safe); i++) {
		char c = id[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_' ||
			 (c == '.' && i > 0);
		safe[n++] = ok ? c : '_';
		changed |= !ok;
	}
	changed |= id[i] != '\0';
	safe[n] = '\0';
	if (io_sha256_hex(id, strlen(id), hex, d)) {
		out[0] = '\0';
		return ERR_LOADER;
	}
	hex[8] = '\0';
	if (has_seed)
		snprintf(out, cap, "%s%s%s-r%ld-s%ld.sse", safe, changed ? "-" : "",
			 changed ? hex : "", repeat, seed);
	else
		snprintf(out, cap, "%s%s%s-r%ld.sse", safe, changed ? "-" : "",
			 changed ? hex : "", repeat);
	return ERR_OK;
}

enum err results_queue_raw(struct results *r, const char *name, struct buf *data,
			   struct diag *d)
{
	size_t len = data->len;
	char *p = buf_take(data, NULL);

	if (!p)
		return diag_fail(d, ERR_NOMEM, "out of memory writing '%s/raw/%s'", r->dir, name);
	if (redact_found(r->redact, p, len))
		len = redact_bytes(r->redact, p, len);
	return journal_raw(r->j, name, p, len, d);
}

enum err results_write_manifest(struct results *r, cJSON *manifest,
				struct diag *d)
{
	char path[PATHBUF];
	char *txt;
	enum err e;

	fix_tree(r, manifest->child);
	if ((e = join_path(path, r->dir, "manifest.json", d)))
		return e;
	txt = cJSON_Print(manifest);
	if (!txt)
		return diag_fail(d, ERR_NOMEM, "out of memory writing the manifest");
	e = io_write_file(path, txt, strlen(txt), d);
	cJSON_free(txt);
	return e;
}

enum err results_read_manifest(const char *dir, cJSON **out, struct diag *d)
{
	char path[PATHBUF];
	struct buf b;
	enum err e;

	*out = NULL;
	if ((e = join_path(path, dir, "manifest.json", d)))
		return e;
	if (access(path, F_OK) != 0)
		return ERR_OK;
	buf_init(&b, (size_t)64 << 20);
	e = io_read_input(path, IO_NOFOLLOW, &b, d);
	if (!e && !utf8_valid(b.data, b.len)) /* a hand edit: refused, as a journal line is */
		e = diag_fail(d, ERR_INPUT, "cannot read '%s': invalid UTF-8 at byte %zu (needle writes only UTF-8)",
			      path, utf8_first_bad(b.data, b.len) + 1);
	else if (!e && json_parse(b.data, b.len, out, "manifest", d) == ERR_NOMEM)
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	else if (!e && !*out)
		e = diag_fail(d, ERR_INPUT, "cannot parse '%s'", path);
	buf_release(&b);
	return e;
}

/* The lines of a journal, read a large block at a time into one buffer and
 * handed out in place (no copy of a line, and some 350 reads of 256 KB for a
 * journal of 85 MB where stdio made 20,000 of 4 KB): the buffer holds the
 * lines not yet handed out, grown only for a line longer than it. */
#define LINES_READ ((size_t)256 << 10)

struct lines {
	int fd;
	char *buf;
	size_t cap;
	size_t start;   /* the first byte not handed out */
	size_t scanned; /* buf[start..scanned) holds no newline */
	size_t end;     /* the end of the bytes read */
	int eof;        /* a read returned 0 */
};

/* Reads more after the bytes pending, first moved to the front, the buffer
 * doubled when they fill it. ERR_NOMEM, ERR_IO (errno set). */
static enum err fill(struct lines *L)
{
	size_t pending = L->end - L->start;
	ssize_t n;
	char *b;

	if (L->start) {
		memmove(L->buf, L->buf + L->start, pending);
		L->scanned -= L->start;
		L->end = pending;
		L->start = 0;
	}
	if (L->end == L->cap) {
		if (!(b = mem_realloc(L->buf, 2 * L->cap)))
			return ERR_NOMEM;
		L->buf = b;
		L->cap *= 2;
	}
	do
		n = read(L->fd, L->buf + L->end, L->cap - L->end);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ERR_IO;
	L->eof = n == 0;
	L->end += (size_t)n;
	return ERR_OK;
}

/* The next line, its newline included when it has one (the last may not):
 * 1 with *line and *n set, 0 at the end, -1 with *e set: ERR_NOMEM, ERR_IO
 * (errno set), or ERR_LIMIT when the line is longer than `max` bytes. */
static int next_line(struct lines *L, size_t max, char **line, size_t *n, enum err *e)
{
	char *nl;

	for (;;) {
		nl = memchr(L->buf + L->scanned, '\n', L->end - L->scanned);
		if (nl || (L->eof && L->end > L->start)) {
			*line = L->buf + L->start;
			*n = nl ? (size_t)(nl + 1 - *line) : L->end - L->start;
			if (*n > max) {
				*e = ERR_LIMIT;
				return -1;
			}
			L->start = L->scanned = L->start + *n;
			return 1;
		}
		L->scanned = L->end;
		if (L->eof)
			return 0;
		if (L->end - L->start > max) {
			*e = ERR_LIMIT;
			return -1;
		}
		if ((*e = fill(L)))
			return -1;
	}
}

/* Whether the journal has nothing after the lines handed out (reads on
 * when nothing is pending; the buffer's bytes may move). */
static int at_eof(struct lines *L)
{
	while (L->start == L->end && !L->eof)
		if (fill(L))
			return 0; /* cannot tell: not the end */
	return L->start == L->end;
}

/* One line of the journal (`n` bytes at `line`, handed out by `L`, which is
 * asked whether it is the last only of a line that is no record): its
 * record to `fn`, or torn (1 returned) or malformed. */
static enum err each_line(struct jtree *t, const char *path, char *line, size_t n,
			  size_t no, struct lines *L, results_fn fn, void *ctx, int *torn,
			  struct diag *d)
{
	int nl = n > 0 && line[n - 1] == '\n';
	cJSON *rec = NULL;
	char bad[DIAG_MSG_MAX + 16]; /* "not JSON: " and the scanner's message */
	struct record_view v;
	const char *why;
	enum err e = ERR_OK;

	*torn = 0;
	/* Out of memory is no verdict on the line: never cut it for that. */
	if (nl && (e = parse_line(t, line, n - 1, &rec, bad, sizeof(bad), path, d)))
		return e;
	record_view_of_jtree(rec, &v);
	why = !nl ? "no newline" : rec ? record_view_problem(&v) : bad;
	if (!why && !jtree_ascii(t) && !utf8_valid(line, n - 1)) /* a hand-edited record: never torn, never cut */
		return diag_fail(d, ERR_INPUT, "malformed results '%s' line %zu: invalid UTF-8 at byte %zu of the line (needle writes only UTF-8: fix the line, or remove it and --resume)",
				 path, no, utf8_first_bad(line, n - 1) + 1);
	if (!why && (why = record_view_edited(&v, bad, sizeof(bad))))
		return diag_fail(d, ERR_INPUT, "malformed results '%s' line %zu: %s (needle never writes that: the record was edited)",
				 path, no, why);
	if (why && (!nl || at_eof(L)))
		*torn = 1; /* a torn last line, as a crash mid-write leaves it */
	else if (why)
		e = diag_fail(d, ERR_INPUT, "malformed results '%s' line %zu: %s", path, no, why);
	else
		e = fn(ctx, &v, d);
	return e;
}

enum err results_each(const char *dir, results_fn fn, void *ctx,
		      struct results_scan *sc, struct diag *d)
{
	char path[PATHBUF];
	struct lines L = {0};
	char *line;
	size_t n;
	int torn = 0;
	struct jtree t;
	enum err e, re = ERR_OK;

	memset(sc, 0, sizeof(*sc));
	if ((e = join_path(path, dir, "results.jsonl", d)))
		return e;
	if ((L.fd = io_open_regular(path, IO_NOFOLLOW, NULL, d)) < 0)
		return ERR_IO;
	if (!(L.buf = mem_alloc(LINES_READ))) {
		close(L.fd);
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	}
	L.cap = LINES_READ;
	jtree_init(&t);
	while (!e && !torn && (next_line(&L, RESULTS_LINE_MAX, &line, &n, &re)) > 0) {
		e = each_line(&t, path, line, n, ++sc->lines, &L, fn, ctx, &torn, d);
		if (torn) {
			sc->torn_bytes = n;
			sc->lines--;
		} else if (!e) {
			sc->records++;
			sc->torn_at += (off_t)n;
		}
	}
	if (!e && re == ERR_LIMIT)
		e = diag_fail(d, ERR_LIMIT, "malformed results '%s' line %zu: longer than %zu bytes",
			      path, sc->lines + 1, RESULTS_LINE_MAX);
	else if (!e && re == ERR_NOMEM)
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	else if (!e && re)
		e = diag_fail(d, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	mem_free(L.buf);
	close(L.fd);
	jtree_release(&t);
	return e;
}
