/*
 * io — whole-file reads, durable writes and SHA-256, with diagnostics that name
 * the file. "-" as a path means standard input.
 */
#ifndef NEEDLE_IO_H
#define NEEDLE_IO_H

#include <stddef.h>
#include <sys/stat.h>

#include "buf.h"
#include "err.h"

#define IO_SHA256_HEX 65 /* 64 hex digits + NUL */

/* Flags of io_open_regular and the reads built on it. IO_NOFOLLOW refuses a
 * symbolic link as the last component of the path: for files needle itself
 * wrote in a folder someone else may have written (a cache, a run folder),
 * where a link could point at anything. Inputs a user names (a suite, a
 * tokenizer in a hub's snapshot folder, whose files are links into blobs/)
 * follow links; what they reach must still be a regular file. */
#define IO_NOFOLLOW 1u
/* Opened read-write, created (0666 less the umask) when missing: a run
 * folder's journal and lock; messages then say "cannot open". */
#define IO_READWRITE 2u
/* With IO_READWRITE: every write appends. */
#define IO_APPEND 4u

/* Opens `path` read-only (O_CLOEXEC; or as the flags say) when it is a
 * regular file, without ever blocking on what is not: the open is
 * O_NONBLOCK (a FIFO waits for a writer, a terminal or modem line for a
 * carrier), the file is checked with fstat on the same descriptor (never
 * stat-then-open), then O_NONBLOCK is cleared. A
 * directory, FIFO, device or socket (a link to /dev/zero too) is refused
 * before a byte is read. Returns the descriptor, the caller's to close, with
 * `st` (may be NULL) filled; or -1 with ERR_IO "cannot read 'PATH': REASON"
 * ("not a regular file (a FIFO)" and the like, "a symbolic link (not
 * followed here)", strerror) in `d` (may be NULL), and `st` zeroed when the
 * open failed or holding the status of what was refused. */
int io_open_regular(const char *path, unsigned flags, struct stat *st,
		    struct diag *d);
/* io_open_regular of `name` relative to the folder open as `dirfd`
 * (AT_FDCWD: the working folder), with `path` the name messages give. On
 * failure errno is the open's (ENOENT: nothing there), or EINVAL for what was
 * opened but refused. */
int io_openat_regular(int dirfd, const char *name, const char *path, unsigned flags,
		      struct stat *st, struct diag *d);

/* The REASON of an io_open_regular message "cannot read 'PATH': REASON"
 * (borrowed from `msg`), for a caller that words its own message. */
const char *io_reason(const char *msg);

/* Appends the whole of the regular file `path` (io_open_regular, with
 * `flags`), or of stdin for "-", to `out`. ERR_IO names the file and the
 * reason; ERR_LIMIT when it exceeds the buffer's cap. */
enum err io_read_input(const char *path, unsigned flags, struct buf *out,
		       struct diag *d);

/* io_read_input with no flags: a link is followed to a regular file. */
enum err io_read_file(const char *path, struct buf *out, struct diag *d);

/* Maps the regular file `path` (io_open_regular, with `flags`) read-only
 * when it holds 1 to `max` bytes: returns 1 with *data and *len set (the
 * caller releases them with io_unmap_file), else 0 with nothing to release,
 * and the caller reads the file with io_read_input instead, which reports
 * what is wrong. Mapping spares the copy out of the page cache and the page
 * faults of a fresh buffer. Pages are mapped as they are first read (not all
 * at once: a tokenizer cache file is 20-60 MB, of which a short count reads
 * a few). The mapping has no NUL after the last byte. */
int io_map_file(const char *path, unsigned flags, size_t max, const char **data,
		size_t *len);
/* Releases a mapping from io_map_file. */
void io_unmap_file(const char *data, size_t len);

/* Writes `len` bytes to `path` through a temporary file in the same directory,
 * fsync'd and renamed into place, so a reader never sees a half-written file. */
enum err io_write_file(const char *path, const void *data, size_t len,
		       struct diag *d);
/* io_write_file creating the file with `mode` (less the umask) instead of
 * 0666: 0600 for what only its owner may read or write. */
enum err io_write_file_mode(const char *path, const void *data, size_t len,
			    unsigned mode, struct diag *d);

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

/* The address of the libcrypto function `name` (for a caller that casts it
 * to the function's type), loading the library as io_sha256_hex does; NULL
 * with ERR_LOADER in `d` when the library or the function is missing. */
void *io_crypto_sym(const char *name, struct diag *d);

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
