/*
 * The tokenizer cache (harness/tok/tok_cache.h): a load writes the cache file,
 * the next load of the same JSON reads it and gives the same ids, and every
 * kind of damage to the file (a flipped byte, truncation, an extra byte,
 * another version, an empty file) is noticed: the ids stay the same and the
 * file is rebuilt. The source index (a file's SHA-256 without hashing it):
 * a file is indexed only once settled, and a rewrite in place, of the same
 * size, is seen at once whether or not the file was indexed. Trust: an index
 * forged to name another cached tokenizer changes no count; the folder is
 * 0700, files 0600, and what others may write is not used. Run from the
 * repository root; also under ASan.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "tok/tok.h"
#include "tok/tok_cache.h"
#include "t.h"

static const char *const TEXTS[] = {
	"Hello world, it's 2024!\n  tabs\tand  spaces ",
	"\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c \xe3\x81\x93\xe3\x82\x93 123456",
	"ab cd ef <s> </s> [CLS] x",
	"abc", /* bpe_no_ignore_merges: in the vocab, yet 2 tokens (a bc) */
};

static char dir[] = "/tmp/needle-tok-cache-XXXXXX";

/* All ids of TEXTS under `fix`, as one string of numbers; NULL on failure. */
static char *ids_of(const char *fix)
{
	struct tok *t = NULL;
	struct diag d;
	struct buf out;
	size_t i, j;

	diag_init(&d);
	buf_init(&out, BUF_MAX_DEFAULT);
	if (tok_load(fix, &t, &d)) {
		fprintf(stderr, "  load '%s': %s\n", fix, d.msg);
		buf_release(&out);
		return NULL;
	}
	for (i = 0; i < sizeof(TEXTS) / sizeof(TEXTS[0]); i++) {
		uint32_t *ids = NULL;
		size_t n = 0, cap = 0;

		size_t c = 0;

		CHECK(tok_encode(t, TEXTS[i], strlen(TEXTS[i]), 1, &ids, &n, &cap, &d) == ERR_OK);
		CHECK(tok_count(t, TEXTS[i], strlen(TEXTS[i]), &c, &d) == ERR_OK);
		for (j = 0; j < n; j++)
			buf_printf(&out, "%u ", (unsigned)ids[j]);
		buf_printf(&out, "=%zu", c);
		buf_putc(&out, '|');
		mem_free(ids);
	}
	tok_free(t);
	return out.data; /* handed over: buf's bytes are mem-allocated */
}

/* The files of dir/needle whose names start with `prefix` and hold `part`
 * (".tmp" files left out); the last one's path into `path` when not NULL. */
static int files_like(const char *prefix, const char *part, char *path, size_t cap)
{
	char sub[256];
	DIR *dp;
	struct dirent *e;
	int n = 0;

	snprintf(sub, sizeof(sub), "%s/needle", dir);
	if (!(dp = opendir(sub)))
		return 0;
	while ((e = readdir(dp)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, part) &&
		    !strstr(e->d_name, ".tmp")) {
			n++;
			if (path)
				snprintf(path, cap, "%s/%s", sub, e->d_name);
		}
	closedir(dp);
	return n;
}

/* The one cache file in dir/needle into `path`; 0 if there is not exactly one. */
static int cache_file(char *path, size_t cap)
{
	return files_like("", ".tok", path, cap) == 1;
}

static ino_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

/* Rewrites the cache file with `how` done to it. */
static void damage(const char *path, int how)
{
	struct buf b;
	struct diag d;
	FILE *f;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	if (how == 0)
		b.data[b.len / 2] ^= 0x10;          /* a flipped bit in the tables */
	else if (how == 1)
		b.len /= 2;                          /* truncated */
	else if (how == 2)
		buf_putc(&b, 'x');                   /* one byte too many */
	else if (how == 3)
		b.data[8] ^= 1;                      /* another version */
	else
		b.len = 0;                           /* empty */
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		CHECK(fwrite(b.data, 1, b.len, f) == b.len || !b.len);
		fclose(f);
	}
	buf_release(&b);
}

static void check_fixture(const char *fix)
{
	char path[512], *want, *got;
	ino_t ino;
	int how;

	setenv("NEEDLE_NO_CACHE", "1", 1);
	want = ids_of(fix);
	unsetenv("NEEDLE_NO_CACHE");
	CHECK(want != NULL);
	CHECK(!cache_file(path, sizeof(path))); /* nothing written while off */
	got = ids_of(fix);                      /* miss: builds the file */
	CHECK(got && want && !strcmp(got, want));
	mem_free(got);
	CHECK(cache_file(path, sizeof(path)));
	ino = inode_of(path);
	got = ids_of(fix);                      /* hit: the file stays as it is */
	CHECK(got && want && !strcmp(got, want));
	CHECK(inode_of(path) == ino);
	mem_free(got);
	for (how = 0; how < 5; how++) {
		damage(path, how);
		got = ids_of(fix);
		CHECK(got && want && !strcmp(got, want));
		CHECK(inode_of(path) != ino);   /* noticed and rebuilt */
		ino = inode_of(path);
		mem_free(got);
	}
	remove(path);
	mem_free(want);
}

/* The number of source index files (src-*.idx) in dir/needle. */
static int index_files(void)
{
	return files_like("src-", ".idx", NULL, 0);
}

/* Removes every file in dir/needle. */
static void clear_dir(void)
{
	char sub[256], p[512];
	DIR *dp;
	struct dirent *e;

	snprintf(sub, sizeof(sub), "%s/needle", dir);
	if (!(dp = opendir(sub)))
		return;
	while ((e = readdir(dp)))
		if (e->d_name[0] != '.')
			snprintf(p, sizeof(p), "%s/%s", sub, e->d_name), remove(p);
	closedir(dp);
}

/* Writes `len` bytes to `path` in place (same inode). */
static void rewrite(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "r+b");

	CHECK(f != NULL);
	if (f) {
		CHECK(fwrite(data, 1, len, f) == len);
		fclose(f);
	}
}

static void test_index(void)
{
	const char *fix = t_fixture("tokenizers/bytelevel_gpt2.json");
	char src[512], sha[IO_SHA256_HEX], *a, *b, *got, *at;
	struct buf cpath;
	ino_t ino;
	struct buf ja, jb;
	struct diag d;

	diag_init(&d);
	buf_init(&ja, BUF_MAX_DEFAULT);
	buf_init(&jb, BUF_MAX_DEFAULT);
	buf_init(&cpath, BUF_MAX_DEFAULT);
	clear_dir();
	CHECK(io_read_file(fix, &ja, &d) == ERR_OK);
	/* B: the same size, "<s>" no longer an added token */
	CHECK(buf_append(&jb, ja.data, ja.len) == 0);
	at = strstr(jb.data, "\"content\": \"<s>\"");
	CHECK(at != NULL);
	if (!at)
		goto out;
	at[strlen("\"content\": \"<")] = 'q';
	snprintf(src, sizeof(src), "%s/src.json", dir);
	CHECK(io_write_file(src, ja.data, ja.len, &d) == ERR_OK);
	a = ids_of(src);
	CHECK(index_files() == 0); /* just written: not settled */
	rewrite(src, jb.data, jb.len);
	b = ids_of(src);           /* at once, same size: B's ids */
	CHECK(a && b && strcmp(a, b) != 0);
	rewrite(src, ja.data, ja.len);
	sleep(3);
	got = ids_of(src);         /* settled: indexed, and so is its cache file */
	CHECK(got && a && !strcmp(got, a));
	CHECK(index_files() == 2);
	mem_free(got);
	got = ids_of(src);         /* through the index, the cache file not summed */
	CHECK(got && a && !strcmp(got, a));
	mem_free(got);
	/* a cache file known good, then damaged in place: no longer known, so
	 * summed again, refused and rebuilt */
	CHECK(!io_sha256_hex(ja.data, ja.len, sha, NULL));
	CHECK(tok_cache_path(sha, &cpath));
	ino = inode_of(cpath.data);
	damage(cpath.data, 0);
	got = ids_of(src);
	CHECK(got && a && !strcmp(got, a));
	CHECK(ino && inode_of(cpath.data) != ino);
	mem_free(got);
	rewrite(src, jb.data, jb.len);
	got = ids_of(src);         /* rewritten: the index no longer answers */
	CHECK(got && b && !strcmp(got, b));
	mem_free(got);
	mem_free(a);
	mem_free(b);
	remove(src);
out:
	clear_dir();
	buf_release(&ja);
	buf_release(&jb);
	buf_release(&cpath);
}

/* An empty file dir/needle/NAME. */
static void touch_file(const char *name)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/needle/%s", dir, name);
	f = fopen(p, "wb");
	CHECK(f != NULL);
	if (f)
		fclose(f);
}

/* Writing a cache file removes its source's files of older cache versions,
 * and only those. */
static void test_older_versions(void)
{
	const char *fix = t_fixture("tokenizers/bytelevel_gpt2.json");
	const char *other = "0000000000000000000000000000000000000000000000000000000000000000";
	char sha[IO_SHA256_HEX], name[128], *got;
	struct buf json;
	struct diag d;

	diag_init(&d);
	buf_init(&json, BUF_MAX_DEFAULT);
	clear_dir();
	CHECK(io_read_file(fix, &json, &d) == ERR_OK);
	CHECK(!io_sha256_hex(json.data, json.len, sha, NULL));
	got = ids_of(fix); /* makes the folder */
	mem_free(got);
	clear_dir();
	snprintf(name, sizeof(name), "%s.tok", sha);
	touch_file(name);
	snprintf(name, sizeof(name), "%s-v1.tok", sha);
	touch_file(name);
	snprintf(name, sizeof(name), "%s-v%d.tok", sha, TOK_CACHE_VERSION + 1);
	touch_file(name);
	snprintf(name, sizeof(name), "%s-v1.tok", other);
	touch_file(name);
	CHECK(files_like(sha, ".tok", NULL, 0) == 3);
	got = ids_of(fix); /* a miss: writes the current file */
	CHECK(got != NULL);
	mem_free(got);
	snprintf(name, sizeof(name), "-v%d.tok", TOK_CACHE_VERSION);
	CHECK(files_like(sha, name, NULL, 0) == 1);
	snprintf(name, sizeof(name), "-v%d.tok", TOK_CACHE_VERSION + 1);
	CHECK(files_like(sha, name, NULL, 0) == 1);
	CHECK(files_like(sha, ".tok", NULL, 0) == 2);     /* v1 and unversioned gone */
	CHECK(files_like(other, "-v1.tok", NULL, 0) == 1); /* another source's stays */
	clear_dir();
	buf_release(&json);
}

/* Copies fixture `fix` to dir/NAME; its SHA-256 into `sha`. */
/* Copies fixture `fix` into the test folder as `name`, padded with
 * newlines (still the same JSON) to `size` bytes when it is shorter. */
static void copy_fixture(const char *fix, const char *name, size_t size, char *path, size_t cap,
			 char sha[IO_SHA256_HEX])
{
	struct buf b;
	struct diag d;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	snprintf(path, cap, "%s/%s", dir, name);
	CHECK(io_read_file(t_fixture(fix), &b, &d) == ERR_OK);
	while (b.len < size)
		CHECK(buf_putc(&b, '\n') == ERR_OK);
	CHECK(io_write_file(path, b.data, b.len, &d) == ERR_OK);
	CHECK(!io_sha256_hex(b.data, b.len, sha, NULL));
	buf_release(&b);
}

/* Rewrites, in place, the source index file that names `from` to name `to`;
 * returns how many it rewrote. */
static int forge_index(const char from[IO_SHA256_HEX], const char to[IO_SHA256_HEX])
{
	char sub[256], p[512];
	struct buf b;
	struct diag d;
	struct dirent *e;
	DIR *dp;
	char *at;
	int n = 0;

	snprintf(sub, sizeof(sub), "%s/needle", dir);
	if (!(dp = opendir(sub)))
		return 0;
	buf_init(&b, BUF_MAX_DEFAULT);
	while ((e = readdir(dp))) {
		if (strncmp(e->d_name, "src-", 4))
			continue;
		snprintf(p, sizeof(p), "%s/%s", sub, e->d_name);
		diag_init(&d);
		buf_reset(&b);
		if (!io_read_file(p, &b, &d) && (at = strstr(b.data, from))) {
			memcpy(at, to, 64);
			rewrite(p, b.data, b.len);
			n++;
		}
	}
	closedir(dp);
	buf_release(&b);
	return n;
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_mode & 07777;
}

/* The forgery: the source index of tokenizer A rewritten to name
 * the cached tokenizer B. The index then claims B's SHA-256 for A, and the
 * cache file of B is whole and checksummed, yet A's ids come out: the cache
 * file's record of its source's size and checksum does not match A. With
 * `size`, both files are padded to that size, so that only the checksum
 * tells them apart: of the whole file up to 128 KiB, of blocks spread over
 * it above. */
static void test_forged_index(size_t size)
{
	char a[512], b[512], sha_a[IO_SHA256_HEX], sha_b[IO_SHA256_HEX], seen[IO_SHA256_HEX];
	char *want_a, *want_b, *got;

	clear_dir();
	copy_fixture("tokenizers/bytelevel_gpt2.json", "a.json", size, a, sizeof(a), sha_a);
	copy_fixture("tokenizers/added_tokens.json", "b.json", size, b, sizeof(b), sha_b);
	CHECK(!size || (size_of(a) == (off_t)size && size_of(b) == (off_t)size));
	sleep(3); /* settled: both get indexed */
	want_a = ids_of(a);
	want_b = ids_of(b);
	CHECK(want_a && want_b && strcmp(want_a, want_b) != 0);
	CHECK(tok_cache_known_sha(a, seen) && !strcmp(seen, sha_a));
	CHECK(forge_index(sha_a, sha_b) == 1);
	CHECK(tok_cache_known_sha(a, seen) && !strcmp(seen, sha_b)); /* the forgery took */
	got = ids_of(a);
	CHECK(got && want_a && !strcmp(got, want_a));
	mem_free(got);
	got = ids_of(b);
	CHECK(got && want_b && !strcmp(got, want_b));
	mem_free(got);
	mem_free(want_a);
	mem_free(want_b);
	remove(a);
	remove(b);
	clear_dir();
}

/* The folder is made 0700 and files 0600; a cache file others may write is
 * not read but rebuilt; a folder others may write is not used at all, with
 * the reason for a warning, and the ids stay right. Last: the reason is
 * kept for the rest of the process. */
static void test_modes(void)
{
	const char *fix = t_fixture("tokenizers/bytelevel_gpt2.json");
	char sub[256], path[512], *want, *got;
	ino_t ino;

	clear_dir();
	snprintf(sub, sizeof(sub), "%s/needle", dir);
	rmdir(sub);
	setenv("NEEDLE_NO_CACHE", "1", 1);
	want = ids_of(fix);
	unsetenv("NEEDLE_NO_CACHE");
	got = ids_of(fix);
	CHECK(got && want && !strcmp(got, want));
	mem_free(got);
	CHECK(mode_of(sub) == 0700);
	CHECK(cache_file(path, sizeof(path)) && mode_of(path) == 0600);
	ino = inode_of(path);
	CHECK(chmod(path, 0666) == 0);
	got = ids_of(fix);
	CHECK(got && want && !strcmp(got, want));
	CHECK(inode_of(path) != ino && mode_of(path) == 0600); /* not trusted: rebuilt */
	mem_free(got);
	clear_dir();
	CHECK(*tok_cache_distrust() == '\0');
	CHECK(chmod(sub, 0777) == 0);
	got = ids_of(fix);
	CHECK(got && want && !strcmp(got, want));
	CHECK(!cache_file(path, sizeof(path))); /* not used: nothing written */
	CHECK(strstr(tok_cache_distrust(), "is writable by group or others") != NULL);
	CHECK(strstr(tok_cache_distrust(), sub) != NULL);
	CHECK(chmod(sub, 0700) == 0);
	mem_free(got);
	mem_free(want);
}

static void test_cache(void)
{
	char sub[256];

	CHECK(mkdtemp(dir) != NULL);
	setenv("XDG_CACHE_HOME", dir, 1);
	check_fixture(t_fixture("tokenizers/bytelevel_gpt2.json"));
	check_fixture(t_fixture("tokenizers/prepend_replace.json"));
	check_fixture(t_fixture("tokenizers/added_tokens.json"));
	check_fixture(t_fixture("tokenizers/bert_post.json"));
	check_fixture(t_fixture("tokenizers/bpe_no_ignore_merges.json"));
	test_index();
	test_older_versions();
	test_forged_index(0);
	test_forged_index(100000);
	test_forged_index(1000000);
	test_modes();
	snprintf(sub, sizeof(sub), "%s/needle", dir);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	T_RUN(test_cache);
	return T_DONE();
}
