/*
 * fuzz_tokcache — the tokenizer cache reader (harness/tok/tok_cache.h and
 * tok_load_cached): what a load reads back from a cache file that another
 * process wrote. An input whose first byte is odd is the whole cache file
 * (the head: magic, version, sizes, checksum); else it is five section
 * lengths (16-bit little-endian) and the sections' bytes, written as a
 * checksummed cache file (tok_cache_write) of a small fixed tokenizer.json, so
 * that the section readers (the normalizer, pre-tokenizer and post-processor
 * JSON, the added tokens, the BPE blob) see the bytes. The load must succeed
 * either way (from the cache or, refusing it, from the JSON), and the counts
 * of a text must agree with its ids.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "base/mem.h"
#include "tok/tok.h"
#include "tok/tok_cache.h"

#define NSECT 5 /* tok_int.h: TOK_MEMBERS + 1 */

static const char source[] =
	"{\"version\":\"1.0\",\"added_tokens\":[{\"id\":3,\"content\":\"<s>\",\"special\":true,"
	"\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false}],"
	"\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
	"\"trim_offsets\":true,\"use_regex\":true},\"post_processor\":null,\"decoder\":null,"
	"\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"fuse_unk\":false,"
	"\"byte_fallback\":false,\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\"]}}";
static const char text[] = "ab ba <s> abab caf\xc3\xa9 12";

static char dir[4096], src[4200];
static char sha[IO_SHA256_HEX];

static void cleanup(void)
{
	char p[4300];

	unlink(src);
	snprintf(p, sizeof(p), "%s/needle/%s-v%d.tok", dir, sha, TOK_CACHE_VERSION);
	unlink(p);
	snprintf(p, sizeof(p), "%s/needle", dir);
	rmdir(p);
	rmdir(dir);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;
	struct diag d;

	if (!t || !*t)
		t = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/needle-fuzz-tokcache-%ld", t, (long)getpid());
	snprintf(src, sizeof(src), "%s/tokenizer.json", dir);
	mkdir(dir, 0700);
	diag_init(&d);
	if (io_write_file(src, source, sizeof(source) - 1, &d) ||
	    io_sha256_hex(source, sizeof(source) - 1, sha, &d))
		abort();
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("NEEDLE_NO_CACHE");
	atexit(cleanup);
}

/* The cache file: the input itself, or its sections written whole. */
static void write_cache(const char *cpath, const uint8_t *data, size_t size)
{
	const char *sect[NSECT];
	size_t len[NSECT], at = 1 + 2 * NSECT, i;
	struct diag d;

	diag_init(&d);
	if (size && (data[0] & 1)) {
		(void)io_write_file_mode(cpath, data + 1, size - 1, 0600, &d);
		return;
	}
	for (i = 0; i < NSECT; i++) {
		size_t want = 1 + 2 * i + 2 < size ? (size_t)(data[1 + 2 * i] | data[2 + 2 * i] << 8) : 0;

		sect[i] = at < size ? (const char *)data + at : "";
		len[i] = at < size ? (want < size - at ? want : size - at) : 0;
		at += len[i];
	}
	(void)tok_cache_write(cpath, sha, source, sizeof(source) - 1, sect, len, NSECT, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tok *t = NULL;
	struct buf cpath;
	struct diag d;
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, count = 0;

	if (!dir[0])
		setup();
	buf_init(&cpath, BUF_MAX_DEFAULT);
	if (!tok_cache_path(sha, &cpath))
		abort();
	write_cache(cpath.data, data, size);
	diag_init(&d);
	if (tok_load(src, &t, &d)) /* the JSON loads: the cache may only be refused */
		abort();
	diag_init(&d);
	if (!tok_count(t, text, sizeof(text) - 1, &count, &d) &&
	    !tok_encode(t, text, sizeof(text) - 1, 0, &ids, &n, &cap, &d) && n != count)
		abort();
	mem_free(ids);
	tok_free(t);
	unlink(cpath.data);
	buf_release(&cpath);
	return 0;
}
