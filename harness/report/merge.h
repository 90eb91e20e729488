/*
 * merge — joins the folders of a run split into shards (`needle run --shard`,
 * shard.h) into one run folder that report and diff read as if it had run on
 * one machine. Nothing is recomputed: the record lines and raw/ files are
 * copied byte for byte, so every percentile is taken over all attempts later, never
 * averaged.
 *
 * The shards must belong together: the same suite (SHA-256), tokenizer and
 * template (SHA-256), endpoint base URL, served model and server version as
 * the first one named; shard indexes 0..N-1 each exactly once, all of one
 * count N; each shard complete (its manifest ended and holds as many attempt
 * keys as its shard planned) unless partial ones are allowed. Each shard must
 * be its own, not a copy standing in for another: run ids all different,
 * plans disjoint, every record's key in its own shard's plan, the plan as
 * long as the shard says, and the whole split of the suite (shard
 * "split": the attempts but load requests, a SHA-256 of every unit's shard)
 * the same in every shard, the shards' parts of it adding up to it. A record
 * needle cannot have written (record_view_edited: a verdict beside a failed
 * check, a member of the wrong type, one needle always writes missing) is
 * refused. An attempt key recorded in two shards is a problem, unless the
 * two records are identical: then one is dropped and counted. With a
 * --start-at run (a common start) the
 * merge records each shard's start lag; concurrency across shards then only
 * adds up to a bound, as the shards never saw each other's requests. Shards
 * that ran load cases together must have started each round together and
 * kept to their schedules (mergeload.h).
 */
#ifndef NEEDLE_MERGE_H
#define NEEDLE_MERGE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "mergeload.h"

/* What a merge did. */
struct merge_stats {
	long shards;            /* N */
	size_t records;         /* written */
	size_t duplicates;      /* identical records dropped */
	size_t incomplete;      /* shards merged though incomplete (allowed) */
	double max_lag_ms;      /* largest start lag; -1 without --start-at */
	struct mergeload load;  /* the load shards' checks (mergeload.h) */
};

/* How to merge. */
struct merge_opts {
	int allow_partial;      /* merge incomplete shards too (counted) */
	int force;              /* OUT may hold a merged run: it is replaced */
	double max_skew_ms;     /* the load shards' tolerance (mergeload.h) */
};

/*
 * Checks the `n` shard folders `dirs` and writes the merged run to `out`
 * (created; it must not hold a journal yet, unless o->force and what it
 * holds is a merge: mergeout.h): manifest.json (the first shard's,
 * with "planned" the union of the shards' plans, so a merge of an incomplete
 * shard is an incomplete run; "shard" {merged, count, rule}, "shards" [{dir, index, from,
 * started_at, ended_at, start_lag_ms, attempts, records}], "attempts" summed
 * and "merge" {duplicates_dropped, concurrency, and for load shards load and
 * note: mergeload.h, with `max_skew_ms` its tolerance}), results.jsonl and raw/.
 *
 * The shards are untrusted (mergeread.h: nothing followed, every size
 * bounded) and read as a stream: each record is checked by its key and copied
 * as bytes, never held as a tree, so memory follows the number of attempt
 * keys (one set of them, with where each was first recorded), not the size
 * of the records; the output is made durable with one sync (mergeout.h).
 * Each shard's journal stays open (one descriptor per shard) until the end.
 *
 * When the shards do not belong together, `problems` gets one line per
 * problem, naming the folder or the missing index, and ERR_INPUT is returned
 * with the first of them; nothing is written then. ERR_IO/ERR_INPUT for a
 * folder that cannot be read or holds a symbolic link, FIFO or device where a
 * file should be; ERR_USAGE when `out` already holds records (and, with
 * force, when they are not a merge's).
 */
enum err merge_shards(const char *out, const char *const *dirs, size_t n,
		      const struct merge_opts *o, struct merge_stats *st,
		      struct buf *problems, struct diag *d);

#endif
