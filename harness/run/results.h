/*
 * results — the run folder (docs/runs.md "The files of a run folder"), written so that a crash loses
 * nothing that had finished:
 *
 *	RUN_DIR/manifest.json   what was run, against what (never the API key);
 *	                        replaced atomically (temp file + fsync + rename)
 *	RUN_DIR/results.jsonl   one JSON record per attempt, one line each
 *	RUN_DIR/raw/NAME.sse    the raw SSE bytes of each attempt
 *	RUN_DIR/.lock           held (flock, exclusive) by the one process
 *	                        writing the folder; the kernel drops it when
 *	                        that process ends, crash included
 *
 * What a record and the manifest hold is record.h's; this module keeps the
 * files. An attempt is keyed by (case id, repeat, seed), record_key; the seed
 * is the haystack seed of a recall case, the sampling seed of other cases, or
 * null. On --resume the journal is read back, attempts already recorded are
 * skipped (a failure is never rerun or overwritten), and a torn last line (a
 * crash mid-write) is cut off.
 *
 * Records and raw files are written by a writer thread in batches
 * (journal.h): results_queue and results_queue_raw hand them over and return,
 * results_collect hands back each record once it is durable (its raw bytes
 * synced before it, itself fsync'd), and only then is it recorded here. A
 * write that fails (full disk, file too large) is rolled back to the last
 * complete line and reported as ERR_IO naming the file; the records before it
 * stay intact, and every later call returns the same failure.
 */
#ifndef NEEDLE_RESULTS_H
#define NEEDLE_RESULTS_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "journal.h"
#include "base/keyset.h"
#include "base/redact.h"

struct record_view; /* record.h */

#define RESULTS_LINE_MAX ((size_t)512 << 20) /* one record */

struct results {
	char *dir;          /* owned copy of RUN_DIR */
	int fd;             /* results.jsonl, append-only */
	int lock_fd;        /* RUN_DIR/.lock, flock'd while open */
	struct journal *j;  /* the writer of results.jsonl and raw/ */
	struct keyset keys; /* keys of recorded attempts */
	const struct redact *redact; /* borrowed, or NULL: secrets taken out of
					every record, the manifest and raw/ */
	size_t torn_bytes;  /* bytes of a torn last line cut off at open */
	size_t appended;    /* records made durable by this process */
	size_t prior_pass;  /* records found at open with verdict "pass" */
	size_t prior_fail;  /* ... with any other verdict */
};

/*
 * Opens (creating) RUN_DIR, RUN_DIR/raw and RUN_DIR/results.jsonl, after
 * taking RUN_DIR/.lock: a folder another process holds is refused at once
 * (ERR_USAGE, "in use by another needle run"). Without
 * `resume`, a journal that already holds records is refused (ERR_USAGE: pass
 * --resume or another folder). With `resume`, recorded attempts are loaded and
 * a torn last line is discarded. ERR_IO names the folder when it cannot be
 * created or written. Returns a handle the caller frees with results_free.
 */
enum err results_open(const char *dir, int resume, struct results **out,
		      struct diag *d);
/* Writes what is still queued (without handing it back), closes the journal
 * and frees the handle. Accepts NULL. */
void results_free(struct results *r);

/* Whether an attempt with this key (record_key) is already recorded. */
int results_has(const struct results *r, const char *key);

/* Queues `rec` (borrowed; must hold "case", "repeat" and "seed") as one line,
 * with a note of `nlen` <= JOURNAL_NOTE_MAX bytes (copied) that
 * results_collect hands back once the line is durable. The journal is always
 * valid UTF-8 JSON: a byte of a string that is not part of a valid UTF-8
 * sequence (e.g. text cut mid-character) is replaced by '?' in `rec` itself,
 * in place (the raw bytes keep the original), and every secret (r->redact) is
 * replaced as redact.h says. ERR_NOMEM, or the writer's failure (ERR_IO). */
enum err results_queue(struct results *r, cJSON *rec, const void *note, size_t nlen,
		       struct diag *d);

/* Queues the bytes of `data` as RUN_DIR/raw/NAME, secrets (r->redact)
 * replaced; takes them (`data` is left empty). NAME is a file name made with
 * results_raw_name. The file is durable before any record queued after it. */
enum err results_queue_raw(struct results *r, const char *name, struct buf *data,
			   struct diag *d);

/* Called by results_collect with the note of each record made durable. */
typedef enum err (*results_done_fn)(void *ctx, const void *note, struct diag *d);

/* Records (keys) every record made durable since the last call and hands its
 * note to `fn` (may be NULL), in queue order; with `wait`, first waits until
 * all that is queued is durable. The writer's failure (ERR_IO, naming the
 * file) is returned once the records durable before it are handed over. */
enum err results_collect(struct results *r, int wait, results_done_fn fn, void *ctx,
			 struct diag *d);

/* results_queue and results_collect with `wait` (notes dropped): `rec` is
 * durable on success. For writers that queue nothing else (merge). */
enum err results_append(struct results *r, cJSON *rec, struct diag *d);

/* A file name for an attempt's raw bytes: the case id with characters outside
 * [A-Za-z0-9._-] replaced (plus a hash of the id when any were), then
 * "-rREPEAT[-sSEED].sse". ERR_LOADER, with `out` empty, when the hash cannot
 * be computed (io_sha256_hex: never once a digest has succeeded, as the
 * suite's has by the time a run names raw files). */
enum err results_raw_name(const char *id, long repeat, int has_seed, long seed,
			  char *out, size_t cap, struct diag *d);

/* Replaces RUN_DIR/manifest.json with `manifest` (borrowed; strings made
 * valid UTF-8 and secrets replaced in place as for results_append). */
enum err results_write_manifest(struct results *r, cJSON *manifest,
				struct diag *d);

/* Replaces, in place, every byte of `s` that is not part of a valid UTF-8
 * sequence (no overlongs, surrogates or values past U+10FFFF) by '?'.
 * Returns the number of bytes replaced. */
size_t results_fix_utf8(char *s);

/* Reads RUN_DIR/manifest.json if there is one (*out = NULL when not); the
 * caller owns *out. ERR_INPUT when it is not JSON, or not valid UTF-8 (a
 * hand edit: refused, not mended). */
enum err results_read_manifest(const char *dir, cJSON **out, struct diag *d);

/* Called by results_each with each record in file order, viewed
 * (record_view_of; the view and its record are borrowed, freed after the
 * call); an error stops the walk and is returned. */
typedef enum err (*results_fn)(void *ctx, const struct record_view *v, struct diag *d);

/* What a walk of the journal saw. */
struct results_scan {
	size_t lines;       /* lines that were records */
	size_t records;     /* records handed to the callback */
	size_t torn_bytes;  /* size of a torn last line skipped, or 0 */
	off_t torn_at;      /* its offset (= the bytes of the complete lines) */
};

/*
 * Walks RUN_DIR/results.jsonl one line at a time (memory bounded by the
 * longest line, RESULTS_LINE_MAX), calling `fn` with each record, so a
 * journal of any size can be read. Read-only: a torn last line (no newline,
 * or not a record, as --resume sees it) is skipped, not cut, and described in
 * *sc. Any other line that is not JSON, or not an object with record
 * (record_problem), is ERR_INPUT naming the file, line and reason; so is a
 * record that is not valid UTF-8 or that needle cannot have written
 * (record_view_edited): a hand-edited one, refused, not mended, and never
 * taken for a torn line. ERR_IO when the file cannot be read.
 */
enum err results_each(const char *dir, results_fn fn, void *ctx,
		      struct results_scan *sc, struct diag *d);

#endif
