/*
 * tok_cache — a compact binary copy of a loaded tokenizer.json, so that the
 * next load of the same file takes milliseconds instead of parsing 8-11 MB of
 * JSON. One file per tokenizer and format version, named by the SHA-256 of
 * its tokenizer.json and TOK_CACHE_VERSION (so that builds of different
 * versions sharing a cache directory do not rebuild each other's files),
 * in the user's cache directory ($XDG_CACHE_HOME/needle, else
 * ~/.cache/needle). NEEDLE_NO_CACHE=1 turns the cache off.
 *
 * Trust: a count never depends on what another user can write. The folder
 * is created 0700 and files 0600; a folder not owned by the user or
 * writable by group or others is not used at all (tok_cache_distrust says
 * why, and tokenizers load from their files), a cache or index file that is
 * not the user's own and private, or is a link, FIFO or device, is ignored
 * and rebuilt. A cache file is named by its source's SHA-256 and holds it,
 * with the source's size and the checksum of blocks spread over it
 * (tok_cache.c): a source index entry (below) that names another source's
 * cache file is caught by those and the tokenizer is loaded from its file.
 *
 * The file is opaque sections (tok_hf decides what they hold) after a head:
 * a magic, TOK_CACHE_VERSION, the source's SHA-256, each section's length,
 * and a checksum of everything after the head. A file that is short, long,
 * of another version or machine, of another source, or whose checksum does
 * not match is not used (the caller rebuilds it from the JSON): damage costs
 * time, never a count. Files are written whole through a temporary file and
 * renamed (io_write_file), so a reader never sees half a file. Once a file
 * has passed the checksum and settled, the source index below records it,
 * and loads while it stays unchanged (same inode, size, mtime and ctime)
 * skip the checksum: it reads all 30-60 MB of the file, where a count
 * touches a fraction (a third of a small count's time).
 */
#ifndef NEEDLE_TOK_CACHE_H
#define NEEDLE_TOK_CACHE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"

#define TOK_CACHE_VERSION 10
#define TOK_CACHE_SECTIONS 8 /* at most */

/* An open cache file: sections are views into its read-only mapping, each
 * 8-byte aligned. */
struct tok_cache {
	const char *map;
	size_t map_len;
	const char *sect[TOK_CACHE_SECTIONS];
	size_t len[TOK_CACHE_SECTIONS];
	size_t n;
};

/* The cache file of the source with SHA-256 `sha` into `path` (reset
 * first); 0 when the cache is off or there is no cache directory. */
int tok_cache_path(const char sha[IO_SHA256_HEX], struct buf *path);

/* Maps `path` and checks it (see above) against `sha` and `n` expected
 * sections; 1 with `c` filled (release it with tok_cache_close), else 0 and
 * nothing to release. With `src` (a source file whose SHA-256 `sha` came
 * from the source index, not from its bytes), the file is used only when
 * `src` has the size and sampled checksum of the bytes it was built from. */
int tok_cache_open(const char *path, const char sha[IO_SHA256_HEX], size_t n,
		   const char *src, struct tok_cache *c);
/* The source index: the SHA-256 of a source file without reading it (of a
 * cache file: the SHA-256 of its source, once its checksum passed). An
 * entry holds the SHA-256 with the file's device, inode, size, mtime and
 * ctime (nanoseconds); it answers only while all five are unchanged, and
 * is written only for a file unchanged for 2 s, so that a rewrite within
 * one tick of the file system's clock cannot go unseen. One small file per
 * source (src-*.idx beside the cache files), written whole and renamed.
 *
 * 1 with `sha` filled when the index knows `src` as it is now, else 0. */
int tok_cache_known_sha(const char *src, char sha[IO_SHA256_HEX]);
/* Records that `src` (as it is now) has SHA-256 `sha`, if the cache is on
 * and the file has settled; failures are silent (the next load hashes). */
void tok_cache_remember_sha(const char *src, const char sha[IO_SHA256_HEX]);

/* Unmaps; accepts a zeroed `c`. */
void tok_cache_close(struct tok_cache *c);

/* Writes the `n` sections (sect[i], len[i] bytes) as the cache file `path`
 * (mode 0600) of source `sha`, whose bytes are `src` (`src_len`), creating
 * the folder (0700), then removes the files of `sha` that older cache
 * versions left beside it. ERR_IO names the file. */
enum err tok_cache_write(const char *path, const char sha[IO_SHA256_HEX],
			 const char *src, size_t src_len, const char *const sect[],
			 const size_t len[], size_t n, struct diag *d);

#endif
