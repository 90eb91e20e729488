#include "tok_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/mem.h"

#define MAGIC "needletc"

struct head {
	char magic[8];
	uint32_t version, nsect;
	char sha[64];
	uint64_t len;                      /* bytes after the head */
	uint64_t sum;                      /* checksum of those bytes */
	uint64_t src_len, src_sum;         /* the source's size and checksum */
	uint64_t sect[TOK_CACHE_SECTIONS]; /* each section's length, unpadded */
};

static size_t pad8(size_t n)
{
	return n + (8 - n % 8) % 8;
}

/* A 64-bit checksum of n bytes (n a multiple of 8): four multiply-rotate
 * lanes. Detects damage, not tampering. */
static uint64_t checksum_mul(const char *p, size_t n)
{
	const uint64_t k = 0x9E3779B97F4A7C15ULL;
	uint64_t h[4] = {1, 2, 3, 4}, v;
	size_t i, j;

	for (i = 0; i + 32 <= n; i += 32) {
		for (j = 0; j < 4; j++) {
			memcpy(&v, p + i + 8 * j, 8);
			h[j] = (h[j] ^ v) * k;
			h[j] ^= h[j] >> 29;
		}
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&v, p + i, 8);
		h[0] = (h[0] ^ v) * k;
		h[0] ^= h[0] >> 29;
	}
	return (h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7) ^ n) * k;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same with the CPU's CRC-32C over three thirds at once (SSE4.2): a
 * quarter of the instructions. */
__attribute__((target("sse4.2"))) static uint64_t checksum_crc(const char *p, size_t n)
{
	size_t third = n / 24 * 8, i;
	uint64_t a = 1, b = 2, c = 3, v, w, x;

	for (i = 0; i < third; i += 8) {
		memcpy(&v, p + i, 8);
		memcpy(&w, p + third + i, 8);
		memcpy(&x, p + 2 * third + i, 8);
		a = __builtin_ia32_crc32di(a, v);
		b = __builtin_ia32_crc32di(b, w);
		c = __builtin_ia32_crc32di(c, x);
	}
	for (i = 3 * third; i + 8 <= n; i += 8) {
		memcpy(&v, p + i, 8);
		a = __builtin_ia32_crc32di(a, v);
	}
	return (a | b << 32) ^ (c * 0x9E3779B97F4A7C15ULL) ^ n;
}
#endif

/* The checksum of the cache body; which one depends on the CPU, so a file
 * moved to a CPU without SSE4.2 is rebuilt, never misread. */
static uint64_t checksum(const char *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("sse4.2"))
		return checksum_crc(p, n);
#endif
	return checksum_mul(p, n);
}

/* Why this process does not use the cache folder, or "" (tok.h). */
static char distrust[DIAG_MSG_MAX];

const char *tok_cache_distrust(void)
{
	return distrust;
}

/* Whether a cache file or folder with status `st` is one only this user can
 * have written: owned by the effective user, not writable by group or others
 * (what ssh asks of ~/.ssh). */
static int private_to_me(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Whether the cache folder `dir` may be trusted: missing (it is created
 * 0700), or a folder private to this user; else the reason is kept for
 * tok_cache_distrust. */
static int dir_trusted(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return 1;
	if (S_ISDIR(st.st_mode) && private_to_me(&st))
		return 1;
	if (!distrust[0])
		snprintf(distrust, sizeof(distrust),
			 "the tokenizer cache folder '%s' %s: not used (tokenizers load from "
			 "their files; make it yours with mode 0700, or set NEEDLE_NO_CACHE=1)",
			 dir, !S_ISDIR(st.st_mode) ? "is not a folder"
			      : st.st_uid != geteuid() ? "belongs to another user"
						       : "is writable by group or others");
	return 0;
}

/* The cache directory into `path` (reset first); 0 when the cache is off,
 * there is no cache directory, or it cannot be trusted (dir_trusted). */
static int cache_dir(struct buf *path)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME"), *off;
	enum err e;

	off = getenv("NEEDLE_NO_CACHE");
	buf_reset(path);
	if (off && *off && strcmp(off, "0"))
		return 0;
	if (x && x[0] == '/')
		e = buf_printf(path, "%s/needle", x);
	else if (home && home[0] == '/')
		e = buf_printf(path, "%s/.cache/needle", home);
	else
		return 0;
	return !e && dir_trusted(path->data);
}

int tok_cache_path(const char sha[IO_SHA256_HEX], struct buf *path)
{
	return cache_dir(path) && !buf_printf(path, "/%s-v%d.tok", sha, TOK_CACHE_VERSION);
}

/* Removes the files of source `sha` that older builds wrote in the folder
 * of `path`: "<sha>-vN.tok" for every N below this version, and the
 * unversioned "<sha>.tok" of the first ones. Newer versions' files stay, so
 * that two builds sharing the folder never delete each other's current
 * file (each writes only on a miss of its own). */
static void drop_older(const char *path, const char sha[IO_SHA256_HEX])
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) : 0, v;
	struct buf p;

	if (!slash)
		return;
	buf_init(&p, BUF_MAX_DEFAULT);
	for (v = 0; v <= TOK_CACHE_VERSION; v++) {
		buf_reset(&p);
		if (v < TOK_CACHE_VERSION ? buf_printf(&p, "%.*s/%s-v%d.tok", dir, path, sha, v)
					  : buf_printf(&p, "%.*s/%s.tok", dir, path, sha))
			break;
		unlink(p.data);
	}
	buf_release(&p);
}

static int known(const struct stat *st, char sha[IO_SHA256_HEX]);
static void remember(const struct stat *st, const char sha[IO_SHA256_HEX]);

/* The checksum of a source's bytes, padded with zeros to a multiple of 8. */
static uint64_t source_sum(const char *p, size_t n)
{
	char tail[8] = {0};
	size_t whole = n / 8 * 8;

	memcpy(tail, p + whole, n - whole);
	return checksum(p, whole) ^ (checksum(tail, 8) * 0xBF58476D1CE4E5B9ULL);
}

/* A source is recognised by its size and the checksum of SRC_BLOCKS blocks
 * of SRC_BLOCK bytes spread evenly over it, its first and last among them
 * (the whole file when it is no larger): 128 KiB read, where the whole of an
 * 11 MB tokenizer.json took a tenth of a 2 MB count (its pages mapped and
 * summed). Two tokenizer files agree in all of these only when made to, and
 * whoever can write the cache folder can write a cache file as well, which
 * no check of the source stops: the checksums find damage, not tampering. */
#define SRC_BLOCKS 32
#define SRC_BLOCK 4096
#define SRC_SAMPLE (SRC_BLOCKS * SRC_BLOCK)

/* How many blocks of a source of n bytes are sampled, each *len bytes long:
 * one, the whole source, up to SRC_SAMPLE bytes. */
static size_t sample_blocks(size_t n, size_t *len)
{
	*len = n <= SRC_SAMPLE ? n : SRC_BLOCK;
	return n <= SRC_SAMPLE ? 1 : SRC_BLOCKS;
}

/* The offset of sampled block i of a source of n bytes. */
static size_t sample_at(size_t i, size_t n)
{
	return n <= SRC_SAMPLE ? 0 : (size_t)((uint64_t)(n - SRC_BLOCK) * i / (SRC_BLOCKS - 1));
}

/* The sampled bytes of the source `src` (`n` bytes) into `out` (SRC_SAMPLE
 * bytes); returns how many. */
static size_t sample_bytes(const char *src, size_t n, char *out)
{
	size_t i, len, blocks = sample_blocks(n, &len);

	for (i = 0; i < blocks; i++)
		memcpy(out + i * SRC_BLOCK, src + sample_at(i, n), len);
	return blocks * len;
}

/* sample_bytes of the open file `fd` of `n` bytes into *got; 0 on a short
 * read. */
static int sample_file(int fd, size_t n, char *out, size_t *got)
{
	size_t i, len, blocks = sample_blocks(n, &len);

	for (i = 0; i < blocks; i++)
		if (pread(fd, out + i * SRC_BLOCK, len, (off_t)sample_at(i, n)) != (ssize_t)len)
			return 0;
	*got = blocks * len;
	return 1;
}

/* The checksum of the sampled bytes of `src` (`n` bytes) into *sum; 0 when
 * out of memory. */
static int sample_sum(const char *src, size_t n, uint64_t *sum)
{
	char *buf = mem_alloc(SRC_SAMPLE);

	if (!buf)
		return 0;
	*sum = source_sum(buf, sample_bytes(src, n, buf));
	mem_free(buf);
	return 1;
}

/* Whether the source file `src` is the one the cache file of head `h` was
 * built from: a source index entry is a claim about a file (another
 * process may have written it), so the file's size and sampled blocks are
 * checked against the cache file's record of its source before it is used. */
static int same_source(const struct head *h, const char *src)
{
	struct stat st;
	char *buf = NULL;
	size_t got;
	int fd = io_open_regular(src, 0, &st, NULL), same;

	if (fd < 0)
		return 0;
	same = (uint64_t)st.st_size == h->src_len && (buf = mem_alloc(SRC_SAMPLE)) &&
	       sample_file(fd, (size_t)st.st_size, buf, &got) && source_sum(buf, got) == h->src_sum;
	mem_free(buf);
	close(fd);
	return same;
}

/* Whether the mapped file is a cache file of `sha` with n sections; fills
 * the section views. `st` is the file's status, taken before it was mapped
 * and unchanged after. */
static int check(struct tok_cache *c, const struct stat *st, const char sha[IO_SHA256_HEX],
		 size_t n, const char *src)
{
	char seen[IO_SHA256_HEX];
	struct head h;
	size_t i, at = sizeof(h), total = 0;

	if (c->map_len < sizeof(h) || n > TOK_CACHE_SECTIONS)
		return 0;
	memcpy(&h, c->map, sizeof(h));
	if (memcmp(h.magic, MAGIC, 8) || h.version != TOK_CACHE_VERSION || h.nsect != n ||
	    memcmp(h.sha, sha, 64) || h.len != c->map_len - sizeof(h))
		return 0;
	for (i = 0; i < n; i++) {
		if (h.sect[i] > h.len || (total += pad8((size_t)h.sect[i])) > h.len)
			return 0;
		c->sect[i] = c->map + at;
		c->len[i] = (size_t)h.sect[i];
		at += pad8((size_t)h.sect[i]);
	}
	c->n = n;
	if (total != h.len || (src && !same_source(&h, src)))
		return 0;
	/* checked whole once and unchanged since (the source index knows it):
	 * not read whole again, so that a load touches only the pages it uses */
	if (known(st, seen) && !memcmp(seen, sha, 64))
		return 1;
	if (checksum(c->map + sizeof(h), (size_t)h.len) != h.sum)
		return 0;
	remember(st, sha);
	return 1;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int tok_cache_open(const char *path, const char sha[IO_SHA256_HEX], size_t n,
		   const char *src, struct tok_cache *c)
{
	struct stat before, after;

	memset(c, 0, sizeof(*c));
	if (lstat(path, &before) || !private_to_me(&before) ||
	    !io_map_file(path, IO_NOFOLLOW, BUF_MAX_DEFAULT, &c->map, &c->map_len))
		return 0;
	if (!lstat(path, &after) && same_file(&before, &after) && check(c, &after, sha, n, src))
		return 1;
	tok_cache_close(c);
	return 0;
}

void tok_cache_close(struct tok_cache *c)
{
	if (c->map)
		io_unmap_file(c->map, c->map_len);
	memset(c, 0, sizeof(*c));
}

/* The directory part of `path` created, the cache folder itself 0700 (its
 * parents as io_mkdirs makes them). */
static enum err make_dir(const char *path, struct diag *d)
{
	const char *slash = strrchr(path, '/'), *up;
	char *dir;
	enum err e = ERR_OK;

	if (!slash || slash == path)
		return ERR_OK;
	if (!(dir = mem_strndup(path, (size_t)(slash - path))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	up = strrchr(dir, '/');
	if (up && up != dir) {
		dir[up - dir] = '\0';
		e = io_mkdirs(dir, d);
		dir[up - dir] = '/';
	}
	if (!e && mkdir(dir, 0700) != 0 && errno != EEXIST)
		e = diag_fail(d, ERR_IO, "cannot create directory '%s': %s", dir, strerror(errno));
	mem_free(dir);
	return e;
}

enum err tok_cache_write(const char *path, const char sha[IO_SHA256_HEX],
			 const char *src, size_t src_len, const char *const sect[],
			 const size_t len[], size_t n, struct diag *d)
{
	static const char zero[8];
	struct head h;
	struct buf b;
	size_t i;
	enum err e = ERR_OK;

	if (n > TOK_CACHE_SECTIONS)
		return diag_fail(d, ERR_INTERNAL, "too many cache sections");
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, 8);
	h.version = TOK_CACHE_VERSION;
	h.nsect = (uint32_t)n;
	memcpy(h.sha, sha, 64);
	h.src_len = src_len;
	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; i < n; i++)
		h.len += pad8(len[i]), h.sect[i] = len[i];
	if (!sample_sum(src, src_len, &h.src_sum) || buf_reserve(&b, sizeof(h) + (size_t)h.len) ||
	    buf_append(&b, &h, sizeof(h)))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; !e && i < n; i++)
		if ((len[i] && buf_append(&b, sect[i], len[i])) ||
		    buf_append(&b, zero, pad8(len[i]) - len[i]))
			e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e) {
		h.sum = checksum(b.data + sizeof(h), (size_t)h.len);
		memcpy(b.data, &h, sizeof(h));
		if (!(e = make_dir(path, d)) &&
		    !(e = io_write_file_mode(path, b.data, b.len, 0600, d)))
			drop_older(path, sha);
	}
	buf_release(&b);
	return e;
}

/* ---- the source index --------------------------------------------------- */

#define SRC_MAGIC "needle-src 1 "
#define SETTLED_S 2 /* a source is indexed once unchanged for this long */

/* The index file of the source whose status is `st` into `path`, and the
 * line it holds when it names `st` (up to the SHA-256) into `line`. */
static int src_names(const struct stat *st, struct buf *path, char *line, size_t cap)
{
	uint64_t key = ((uint64_t)st->st_dev * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)st->st_ino;
	int n;

	key = (key ^ key >> 31) * 0xBF58476D1CE4E5B9ULL;
	n = snprintf(line, cap, SRC_MAGIC "%llu %llu %lld %lld.%09ld %lld.%09ld ",
		     (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
		     (long long)st->st_size, (long long)st->st_mtim.tv_sec,
		     (long)st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
		     (long)st->st_ctim.tv_nsec);
	return n > 0 && (size_t)n < cap && cache_dir(path) &&
	       !buf_printf(path, "/src-%016llx.idx", (unsigned long long)(key ^ key >> 29));
}

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* tok_cache_known_sha of the file whose status is `st`. */
static int known(const struct stat *st, char sha[IO_SHA256_HEX])
{
	char want[256], got[256 + 66];
	struct buf path;
	struct stat ist;
	size_t w;
	ssize_t n = -1;
	int fd;

	buf_init(&path, BUF_MAX_DEFAULT);
	if (!S_ISREG(st->st_mode) || !src_names(st, &path, want, sizeof(want))) {
		buf_release(&path);
		return 0;
	}
	if ((fd = io_open_regular(path.data, IO_NOFOLLOW, &ist, NULL)) >= 0) {
		if (private_to_me(&ist))
			n = read(fd, got, sizeof(got));
		close(fd);
	}
	buf_release(&path);
	w = strlen(want);
	if (n != (ssize_t)(w + 65) || memcmp(got, want, w) || !is_hex64(got + w) ||
	    got[w + 64] != '\n')
		return 0;
	memcpy(sha, got + w, 64);
	sha[64] = '\0';
	return 1;
}

int tok_cache_known_sha(const char *src, char sha[IO_SHA256_HEX])
{
	struct stat st;

	return !stat(src, &st) && known(&st, sha);
}

/* tok_cache_remember_sha of the file whose status is `st`. */
static void remember(const struct stat *st, const char sha[IO_SHA256_HEX])
{
	char line[256 + 66];
	struct buf path;
	struct diag quiet;
	time_t now = time(NULL), last;
	size_t w;

	if (!S_ISREG(st->st_mode))
		return;
	last = st->st_mtim.tv_sec > st->st_ctim.tv_sec ? st->st_mtim.tv_sec : st->st_ctim.tv_sec;
	if (now - last < SETTLED_S)
		return;
	buf_init(&path, BUF_MAX_DEFAULT);
	diag_init(&quiet);
	if (src_names(st, &path, line, sizeof(line) - 66)) {
		w = strlen(line);
		memcpy(line + w, sha, 64);
		line[w + 64] = '\n';
		if (!make_dir(path.data, &quiet))
			io_write_file_mode(path.data, line, w + 65, 0600, &quiet);
	}
	buf_release(&path);
}

void tok_cache_remember_sha(const char *src, const char sha[IO_SHA256_HEX])
{
	struct stat st;

	if (!stat(src, &st))
		remember(&st, sha);
}
