/*
 * mergeload — what `needle merge` checks of shards that ran load cases
 * together (each shard its part of the rate or concurrency, shard.h), and
 * the note the merged manifest carries about them.
 *
 * A sharded load record has "load": {"round_started_unix": the wall-clock
 * start of its round on its machine, "scheduled_ms", "sent_ms", ...}. Two
 * checks, each against one tolerance (needle merge --max-skew, 1 s):
 *  - for every (case, level, counted round) the shards ran (the pre-check and
 *    warm-up are left out, as from the cells), the latest shard's start
 *    and the earliest's differ by at most the tolerance: else their loads did
 *    not overlap as planned (a late pod, a slow case before the load case, or
 *    a machine's clock off: each start is on its own machine's clock, so keep
 *    them in sync);
 *  - every shard's scheduling lag (sent - scheduled) P99 over its counted
 *    rounds is at most the tolerance: else that machine could not send its
 *    part on time and the load the server saw was less than the target.
 * Nothing is averaged: the records stay as they are, and the report computes
 * the cells from all of them.
 */
#ifndef NEEDLE_MERGELOAD_H
#define NEEDLE_MERGELOAD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

#define MERGELOAD_SKEW_MS 1000.0 /* the default tolerance */

struct mergeload {
	double tolerance_ms;   /* in */
	size_t shards;         /* out: shards holding sharded load records */
	double skew_ms;        /* out: the largest spread of a round's start */
	double lag_p99_ms;     /* out: the largest shard's scheduling-lag P99 */
};

/*
 * Checks the load records of the `n` shards (records[i]: the borrowed array
 * of shard folder dirs[i]'s records). Each problem is one line appended to
 * `problems` and counted in *nproblems. ERR_NOMEM only.
 */
enum err mergeload_check(const cJSON *const *records, const char *const *dirs, size_t n,
			 struct mergeload *ml, struct buf *problems, size_t *nproblems,
			 struct diag *d);

/* Adds "load" {shards, start_skew_ms, lag_p99_ms, tolerance_ms} and "note"
 * (global concurrency is a bound) to the merged manifest's "merge" object
 * when ml->shards > 0. */
void mergeload_note(struct json_build *jb, cJSON *merge, const struct mergeload *ml);

#endif
