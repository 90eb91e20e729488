/*
 * results — see results.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "io.h"
#include "json.h"
#include "mem.h"
#include "record.h"
#include "results.h"

#define PATHBUF 4096

static enum err add_key(struct results *r, const char *key, struct diag *d)
{
	char *k;

	if (r->nkeys == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		char **nk = mem_realloc(r->keys, cap * sizeof(*nk));
		if (!nk)
			return diag_fail(d, ERR_NOMEM, "out of memory reading results");
		r->keys = nk;
		r->cap = cap;
	}
	k = mem_strndup(key, strlen(key));
	if (!k)
		return diag_fail(d, ERR_NOMEM, "out of memory reading results");
	r->keys[r->nkeys++] = k;
	return ERR_OK;
}

int results_has(const struct results *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->nkeys; i++)
		if (!strcmp(r->keys[i], key))
			return 1;
	return 0;
}

/* Parses one journal line into *rec; text that is no JSON leaves *rec NULL
 * (the caller judges the line). Only running out of memory is an error. */
static enum err parse_line(const char *text, size_t len, cJSON **rec,
			   const char *path, struct diag *d)
{
	struct diag scratch;

	diag_init(&scratch);
	if (json_parse(text, len, rec, "a results line", &scratch) != ERR_NOMEM)
		return ERR_OK;
	return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
}

/* Loads the keys of a journal; cuts off a torn last line. */
static enum err load(struct results *r, const char *path, struct diag *d)
{
	struct buf b;
	size_t pos = 0, line = 0;
	char key[1024];
	enum err e;

	buf_init(&b, BUF_MAX_DEFAULT);
	e = io_read_file(path, &b, d);
	while (!e && pos < b.len) {
		char *nl = memchr(b.data + pos, '\n', b.len - pos);
		size_t end = nl ? (size_t)(nl - b.data) : b.len;
		cJSON *rec = NULL;
		int ok, pass;

		/* Out of memory is no verdict on the line: never cut it for that. */
		if (nl && (e = parse_line(b.data + pos, end - pos, &rec, path, d)))
			break;
		ok = rec && record_key_of(rec, key, sizeof(key));
		pass = record_passed(rec);
		line++;
		cJSON_Delete(rec);
		if (!ok && end + 1 >= b.len) { /* torn or garbled last line */
			r->torn_bytes = b.len - pos;
			if (ftruncate(r->fd, (off_t)pos) != 0 || fsync(r->fd) != 0)
				e = diag_fail(d, ERR_IO, "cannot repair '%s': %s", path,
					      strerror(errno));
			break;
		}
		if (!ok)
			e = diag_fail(d, ERR_INPUT,
				      "cannot resume from '%s': line %zu is not a needle result record",
				      path, line);
		else if (!results_has(r, key)) {
			e = add_key(r, key, d);
			if (pass)
				r->prior_pass++;
			else
				r->prior_fail++;
		}
		pos = end + 1;
	}
	buf_release(&b);
	return e;
}

static enum err join_path(char *out, const char *dir, const char *name,
			  struct diag *d)
{
	int n = snprintf(out, PATHBUF, "%s/%s", dir, name);

	if (n < 0 || n >= PATHBUF)
		return diag_fail(d, ERR_USAGE, "path '%s/%s' is too long", dir, name);
	return ERR_OK;
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
	r->fd = -1;
	if ((e = io_mkdirs(dir, d)) || (e = join_path(path, dir, "raw", d)) ||
	    (e = io_mkdirs(path, d)) ||
	    (e = join_path(path, dir, "results.jsonl", d)))
		goto out;
	r->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (r->fd < 0) {
		e = diag_fail(d, ERR_IO, "cannot write results folder '%s': %s", dir,
			      strerror(errno));
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
out:
	if (e)
		results_free(r);
	else
		*out = r;
	return e;
}

void results_free(struct results *r)
{
	size_t i;

	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (i = 0; i < r->nkeys; i++)
		mem_free(r->keys[i]);
	mem_free(r->keys);
	mem_free(r->dir);
	mem_free(r);
}

/* Writes all of `p`; on failure cuts the file back to `keep` bytes. */
static enum err write_line(struct results *r, const char *p, size_t len,
			   off_t keep, struct diag *d)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(r->fd, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : ENOSPC;
			if (ftruncate(r->fd, keep) == 0)
				(void)fsync(r->fd);
			return diag_fail(d, ERR_IO,
					 "cannot write '%s/results.jsonl': %s (the %zu records before it are safe)",
					 r->dir, strerror(err), r->nkeys);
		}
		done += (size_t)n;
	}
	if (fsync(r->fd) != 0) {
		int err = errno;
		if (ftruncate(r->fd, keep) == 0)
			(void)fsync(r->fd);
		return diag_fail(d, ERR_IO, "cannot sync '%s/results.jsonl': %s",
				 r->dir, strerror(err));
	}
	return ERR_OK;
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

static void fix_tree(cJSON *v)
{
	cJSON *it;

	for (it = v; it; it = it->next) {
		if (it->string)
			results_fix_utf8(it->string);
		if (cJSON_IsString(it))
			results_fix_utf8(it->valuestring);
		if (it->child)
			fix_tree(it->child);
	}
}

enum err results_append(struct results *r, cJSON *rec, struct diag *d)
{
	char key[1024];
	char *txt;
	size_t len;
	off_t keep;
	enum err e;

	fix_tree(rec->child);
	if (!record_key_of(rec, key, sizeof(key)))
		return diag_fail(d, ERR_INTERNAL, "result record without case, repeat or seed");
	txt = cJSON_PrintUnformatted(rec);
	if (!txt)
		return diag_fail(d, ERR_NOMEM, "out of memory writing a result");
	len = strlen(txt);
	txt[len] = '\n'; /* replaces the NUL: the line is written in one piece */
	keep = lseek(r->fd, 0, SEEK_END);
	if (keep < 0)
		e = diag_fail(d, ERR_IO, "cannot write '%s/results.jsonl': %s", r->dir,
			      strerror(errno));
	else
		e = write_line(r, txt, len + 1, keep, d);
	cJSON_free(txt);
	if (!e && !results_has(r, key))
		e = add_key(r, key, d);
	if (!e)
		r->appended++;
	return e;
}

void results_raw_name(const char *id, long repeat, int has_seed, long seed,
		      char *out, size_t cap)
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
	io_sha256_hex(id, strlen(id), hex);
	hex[8] = '\0';
	if (has_seed)
		snprintf(out, cap, "%s%s%s-r%ld-s%ld.sse", safe, changed ? "-" : "",
			 changed ? hex : "", repeat, seed);
	else
		snprintf(out, cap, "%s%s%s-r%ld.sse", safe, changed ? "-" : "",
			 changed ? hex : "", repeat);
}

enum err results_write_raw(struct results *r, const char *name,
			   const void *data, size_t len, struct diag *d)
{
	char path[PATHBUF];
	int n = snprintf(path, sizeof(path), "%s/raw/%s", r->dir, name);

	if (n < 0 || n >= (int)sizeof(path))
		return diag_fail(d, ERR_USAGE, "path '%s/raw/%s' is too long", r->dir,
				 name);
	return io_write_file(path, data, len, d);
}

enum err results_write_manifest(struct results *r, cJSON *manifest,
				struct diag *d)
{
	char path[PATHBUF];
	char *txt;
	enum err e;

	fix_tree(manifest->child);
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
	e = io_read_file(path, &b, d);
	if (!e && json_parse(b.data, b.len, out, "manifest", d) == ERR_NOMEM)
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	else if (!e && !*out)
		e = diag_fail(d, ERR_INPUT, "cannot parse '%s'", path);
	buf_release(&b);
	return e;
}

enum err results_read_all(const char *dir, cJSON **out, size_t *torn_bytes,
			  struct diag *d)
{
	char path[PATHBUF];
	struct buf b;
	size_t pos = 0, line = 0;
	cJSON *arr = NULL;
	enum err e;

	*out = NULL;
	*torn_bytes = 0;
	if ((e = join_path(path, dir, "results.jsonl", d)))
		return e;
	buf_init(&b, BUF_MAX_DEFAULT);
	e = io_read_file(path, &b, d);
	if (!e && !(arr = cJSON_CreateArray()))
		e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	while (!e && pos < b.len) {
		char *nl = memchr(b.data + pos, '\n', b.len - pos);
		size_t end = nl ? (size_t)(nl - b.data) : b.len;
		cJSON *rec = NULL;
		const char *why;

		if (nl && (e = parse_line(b.data + pos, end - pos, &rec, path, d)))
			break;
		why = nl ? record_problem(rec) : "no newline";
		line++;
		if (why && end + 1 >= b.len) { /* torn last line: as --resume */
			*torn_bytes = b.len - pos;
			cJSON_Delete(rec);
			break;
		}
		if (why) {
			cJSON_Delete(rec);
			e = diag_fail(d, ERR_INPUT, "malformed results '%s' line %zu: %s",
				      path, line, why);
		} else if (!cJSON_AddItemToArray(arr, rec)) {
			cJSON_Delete(rec);
			e = diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
		}
		pos = end + 1;
	}
	buf_release(&b);
	if (e)
		cJSON_Delete(arr);
	else
		*out = arr;
	return e;
}
