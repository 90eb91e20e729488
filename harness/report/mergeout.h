/*
 * mergeout — writes the merged run folder for merge.h, durable with one sync:
 * the records are copied as bytes (never parsed again) into a temporary
 * OUT/.results.jsonl.merge, each shard's raw/ files put in OUT/raw/ (a name
 * already written by an earlier shard of this merge is kept) as hard links
 * when the shard is on the same filesystem (a raw file is never written
 * again once its record is journaled; a link writes no data), else as
 * copies, then one sync makes them all durable (syncfs(2) when a file was
 * copied, else raw/ itself), the temporary journal is renamed to
 * OUT/results.jsonl, the folder synced, and the manifest replaced (temp file,
 * fsync, rename). A merge cut short leaves the folder as it was but for raw/
 * files and the temporary journal, and is re-run with --force.
 *
 * OUT is held with OUT/.lock (flock) as a run holds its folder, so a merge
 * and a run never write one folder at once. A shard's raw/ is read without
 * following anything (mergeread_regular; raw/ itself must not be a symbolic
 * link); the file linked is the one opened and checked, and a copy stops at
 * the size fstat gave when it was opened.
 */
#ifndef NEEDLE_MERGEOUT_H
#define NEEDLE_MERGEOUT_H

#include <sys/types.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/keyset.h"
#include "mergeread.h"

#define MERGEOUT_RAW_MAX ((off_t)1 << 30) /* bytes of one raw/ file */

struct mergeout {
	const char *out;    /* borrowed */
	int dirfd;          /* OUT */
	int rawfd;          /* OUT/raw */
	int lockfd;         /* OUT/.lock, flock'd */
	int tmpfd;          /* OUT/.results.jsonl.merge; -1 once renamed */
	struct keyset raws; /* raw/ names written by this merge */
	size_t copied;      /* of them, copied rather than linked */
	struct buf copy;    /* bytes in flight */
};

/* Whether OUT may receive a merge, checked before the shards are read:
 * ERR_USAGE when it holds records already ("pass --force ...") or, with
 * `force`, when what it holds is not a merged run (its manifest has no
 * "shard" {"merged": true}): --force replaces a merge, never a run. */
enum err mergeout_check(const char *out, int force, struct diag *d);

/* Creates OUT and OUT/raw, takes OUT/.lock (ERR_USAGE when another needle
 * holds it) and opens the temporary journal. The caller calls
 * mergeout_close, failure or not. */
enum err mergeout_open(struct mergeout *w, const char *out, struct diag *d);
/* Links or copies every regular file of SHARD/raw/ not yet written (names
 * beginning with '.' are left out); ERR_INPUT names a symbolic link, FIFO or
 * device there; ERR_LIMIT past MERGEOUT_RAW_MAX. A shard without raw/ has
 * none. */
enum err mergeout_raw(struct mergeout *w, const char *shard, struct diag *d);
/* Appends bytes [from, to) of shard `r`'s journal to the merged one. */
enum err mergeout_span(struct mergeout *w, const struct mergeread *r, off_t from, off_t to,
		       struct diag *d);
/* Makes everything durable and puts the journal and `manifest` (borrowed)
 * in place, as above. */
enum err mergeout_commit(struct mergeout *w, const cJSON *manifest, struct diag *d);
/* Removes the temporary journal unless committed, releases the lock and
 * what `w` holds. Accepts a zeroed writer whose descriptors are -1. */
void mergeout_close(struct mergeout *w);

#endif
