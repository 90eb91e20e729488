/*
 * io — whole-file reads, durable writes and SHA-256, with diagnostics that name
 * the file. "-" as a path means standard input.
 */
#ifndef NEEDLE_IO_H
#define NEEDLE_IO_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

#define IO_SHA256_HEX 65 /* 64 hex digits + NUL */

/* Appends the whole of `path` (or stdin for "-") to `out`. ERR_IO names the
 * file and the reason; ERR_LIMIT when it exceeds the buffer's cap. */
enum err io_read_file(const char *path, struct buf *out, struct diag *d);

/* Maps the regular file `path` read-only when it holds 1 to `max` bytes:
 * returns 1 with *data and *len set (the caller releases them with
 * io_unmap_file), else 0 with nothing to release, and the caller reads the
 * file with io_read_file instead, which reports what is wrong. Mapping spares
 * the copy out of the page cache and the page faults of a fresh buffer. Pages
 * are mapped as they are first read (not all at once: a tokenizer cache file
 * is 20-60 MB, of which a short count reads a few). The mapping has no NUL
 * after the last byte. */
int io_map_file(const char *path, size_t max, const char **data, size_t *len);
/* Releases a mapping from io_map_file. */
void io_unmap_file(const char *data, size_t len);

/* Writes `len` bytes to `path` through a temporary file in the same directory,
 * fsync'd and renamed into place, so a reader never sees a half-written file. */
enum err io_write_file(const char *path, const void *data, size_t len,
		       struct diag *d);

/* Creates directory `path` and its parents (mode 0777 & ~umask); an existing
 * directory is fine. */
enum err io_mkdirs(const char *path, struct diag *d);

/* Lower-case hex SHA-256 of `len` bytes into `hex` (IO_SHA256_HEX bytes).
 * libcrypto is loaded by the first call, not at start (mapping it is about
 * 0.7 ms of every process, and a count whose tokenizer is cached never
 * hashes). If it cannot be, this and every later call return ERR_LOADER
 * ("cannot load libcrypto.so.3: REASON (Debian's package is libssl3)", the
 * tool ends with status 127 as the dynamic loader ends a process that misses
 * a library it was linked with) and leave `hex` empty; once one call has
 * succeeded, none fails. */
enum err io_sha256_hex(const void *data, size_t len, char hex[IO_SHA256_HEX],
		       struct diag *d);

/* SHA-256 of a file's contents; ERR_IO names the file, ERR_LOADER as
 * io_sha256_hex. */
enum err io_sha256_file(const char *path, char hex[IO_SHA256_HEX],
			struct diag *d);

/* Monotonic clock in milliseconds, for timings. */
double io_now_ms(void);

/* Sleeps until CLOCK_MONOTONIC reaches `at_ms` (the clock of io_now_ms),
 * with an absolute-time sleep, so that a schedule of wake-ups does not
 * drift; returns at once if it has passed. */
void io_sleep_until_ms(double at_ms);

#endif
