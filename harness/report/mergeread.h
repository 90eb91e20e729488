/*
 * mergeread — reads one shard folder for merge.h as untrusted input from
 * another machine: nothing in it is followed or trusted for its size.
 *
 * manifest.json and results.jsonl are opened with O_NOFOLLOW and O_NONBLOCK
 * and checked with fstat on the open descriptor: a symbolic link, FIFO,
 * device or folder in their place is refused by name (never read, so a FIFO
 * cannot hang the merge nor /dev/zero fill memory); the manifest is read up
 * to MERGEREAD_MANIFEST_MAX bytes, a record line up to RESULTS_LINE_MAX.
 *
 * The journal is read once, in chunks: each line is checked as the report
 * reads it (valid UTF-8, one JSON object, record_problem's key and verdict,
 * record_view_edited's members), parsed as the report parses it, into an
 * arena tree (jscan.h's jtree) from a copy of the line, so the line merge
 * copies stays as it is; a load record ("load", mergeload.h) is parsed again
 * whole for the callback. A torn last line (no newline, or not a record, as
 * --resume sees it) is skipped and left out of `end`. The descriptor stays
 * open until mergeread_close, so the bytes merge copies later are those of
 * the file checked.
 */
#ifndef NEEDLE_MERGEREAD_H
#define NEEDLE_MERGEREAD_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"

#define MERGEREAD_MANIFEST_MAX ((size_t)256 << 20) /* a plan of ~5M keys */

/* One record line: a view into the reader's buffer, valid during the call. */
struct mergeread_rec {
	const char *line;  /* the line, its newline included */
	size_t len;
	off_t off;         /* where it begins in results.jsonl */
	size_t no;         /* its line number, from 1 */
	const char *key;   /* its attempt key (record_key) */
	int passed;        /* verdict "pass" */
	cJSON *load;       /* the whole record when it has "load" (the callback
			      may take it: set the member to NULL), else NULL */
};

/* Called with each record of the journal in file order. */
typedef enum err (*mergeread_fn)(void *ctx, struct mergeread_rec *r, struct diag *d);

struct mergeread {
	const char *dir;   /* the shard folder, borrowed */
	char path[4096];   /* DIR/results.jsonl */
	cJSON *manifest;   /* owned; NULL when the folder has none */
	int fd;            /* results.jsonl, read-only; -1 when closed */
	off_t end;         /* bytes of the lines that are records */
	size_t records;    /* record lines */
};

/* Opens shard folder `dir`: reads its manifest (absent: r->manifest NULL)
 * and opens its results.jsonl (required). ERR_IO "cannot read 'PATH':
 * REASON"; ERR_INPUT for a file that is not a regular file or a manifest
 * that is not a JSON object; ERR_LIMIT past MERGEREAD_MANIFEST_MAX. The
 * caller calls mergeread_close, failure or not. */
enum err mergeread_open(struct mergeread *r, const char *dir, struct diag *d);
/* Closes the journal and frees the manifest. Accepts a zeroed reader. */
void mergeread_close(struct mergeread *r);

/* Reads the journal from its start, handing `fn` each record; sets r->end and
 * r->records. ERR_INPUT "malformed results 'PATH' line N: REASON";
 * ERR_LIMIT for a longer line; ERR_IO; or what `fn` returns. */
enum err mergeread_scan(struct mergeread *r, mergeread_fn fn, void *ctx, struct diag *d);

/* Reads `len` bytes of the journal at `off` into `out` (reset first). */
enum err mergeread_pread(const struct mergeread *r, off_t off, size_t len,
			 struct buf *out, struct diag *d);

/* Opens `path` for reading only when it is a regular file, without following
 * a symbolic link in its last component and without blocking on a FIFO;
 * *st gets its fstat. Returns the descriptor, or -1 with `d` filled: ERR_IO
 * "cannot read 'PATH': REASON" when nothing is there (errno ENOENT: the
 * caller may test it), else ERR_INPUT with io_openat_regular's message
 * ("cannot read 'PATH': a symbolic link (not followed here)", "... not a
 * regular file (a FIFO)", or the open's reason). */
int mergeread_regular(int dirfd, const char *name, const char *path, struct stat *st,
		      struct diag *d);

#endif
