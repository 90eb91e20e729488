/*
 * journal — the writer thread of a run folder (results.h): takes finished
 * records and raw files from a bounded queue, off the thread that runs the
 * requests, and makes them durable in batches (group commit):
 *
 *	1. every raw file queued so far is written, appearing whole or not at
 *	   all as RUN_DIR/raw/NAME (an unnamed O_TMPFILE file linked in, else a
 *	   temp file renamed into place), and one syncfs(2) makes them all
 *	   durable;
 *	2. then every record line queued so far is appended to results.jsonl
 *	   (writev) and one fdatasync(2) makes them all durable;
 *	3. only then are those records handed back (journal_collect): the
 *	   caller counts an attempt as done once it is, so a crash loses
 *	   nothing that was reported done, and a record never points at raw
 *	   bytes that a crash could lose.
 *
 * Order is kept: items are written in the order they were queued. The queue
 * is bounded (JOURNAL_QUEUE_BYTES, JOURNAL_QUEUE_ITEMS): a put that would pass
 * the bound waits for the writer (back-pressure), so memory stays flat however
 * fast attempts finish. The first failure (full disk, EIO) is sticky: it names
 * the file, cuts results.jsonl back to its last complete line, drops what is
 * still queued (never reported done), and every later put and collect returns
 * it. When no thread can be started, each put writes at once instead (the same
 * durability, without the batching).
 *
 * The writer allocates nothing: items are allocated by the putting thread and
 * freed by whichever thread is done with them (mem_free is free()).
 */
#ifndef NEEDLE_JOURNAL_H
#define NEEDLE_JOURNAL_H

#include <stddef.h>

#include "base/err.h"

#define JOURNAL_QUEUE_BYTES ((size_t)64 << 20) /* bytes queued, not yet written */
#define JOURNAL_QUEUE_ITEMS 4096               /* items queued, not yet written */
#define JOURNAL_NOTE_MAX 64                    /* bytes of a record's note */

struct journal;

/* Called by journal_collect with each record made durable, in queue order:
 * its key and its note (the bytes given to journal_line). */
typedef enum err (*journal_fn)(void *ctx, const char *key, const void *note,
			       struct diag *d);

/* Starts the writer of folder `dir` (copied) whose journal is `fd` (borrowed:
 * results.jsonl opened for appending, `base` records in it already). The
 * caller frees the handle with journal_free. ERR_NOMEM. */
enum err journal_open(const char *dir, int fd, size_t base, struct journal **out,
		      struct diag *d);
/* Writes what is still queued, stops the writer and frees the handle;
 * records it writes are not handed back. Accepts NULL. */
void journal_free(struct journal *j);

/* Queues `len` bytes at `data` as RUN_DIR/raw/NAME. Takes `data` (allocated
 * with mem_alloc) whatever the outcome. ERR_NOMEM, or the writer's failure. */
enum err journal_raw(struct journal *j, const char *name, char *data, size_t len,
		     struct diag *d);
/* Queues one record: `len` bytes at `line` (ending in '\n'; taken as for
 * journal_raw), its key (copied) and a note of `nlen` <= JOURNAL_NOTE_MAX
 * bytes (copied) that journal_collect hands back. */
enum err journal_line(struct journal *j, char *line, size_t len, const char *key,
		      const void *note, size_t nlen, struct diag *d);
/* Hands each record made durable since the last call to `fn`, in order;
 * with `wait`, first waits until everything queued is durable (or failed).
 * Returns fn's first error, else the writer's failure once the records
 * durable before it have been handed over. */
enum err journal_collect(struct journal *j, int wait, journal_fn fn, void *ctx,
			 struct diag *d);

#endif
