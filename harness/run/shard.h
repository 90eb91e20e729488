/*
 * shard — which attempts of a suite one machine runs when a run is split over
 * N machines (`needle run --shard I/N`, a Slurm array task or a Kubernetes
 * Indexed Job pod), and which one it is.
 *
 * The split is static and exact: every machine computes the same assignment
 * from the suite and the options alone (never from what is recorded, so a
 * resumed or replaced shard selects the same attempts), and the shards
 * together hold every attempt once. Attempts are grouped into units: a recall
 * case's repeats of one seed share one document and form one unit; every
 * other attempt is its own unit. Units are weighed by estimated prompt tokens
 * (a 1M-token document weighs 30 times a 32K one) and assigned greedily,
 * heaviest first (ties by key, byte order), each to the least loaded shard
 * (ties to the lowest index). Weights are integers, so the result is the same
 * on every machine. The rule's name, SHARD_RULE, is recorded in the manifest.
 */
#ifndef NEEDLE_SHARD_H
#define NEEDLE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/json.h"
#include "load/loadspec.h"

#define SHARD_RULE "greedy-prompt-tokens-v1"
#define SHARD_MAX 100000

/* Which shard this process is: count 0 when the run is not split. */
struct shard {
	long index, count;      /* 0 <= index < count */
	const char *from;       /* "option", "slurm", "kubernetes" (static) */
};

/* One unit to assign: its weight, its key (borrowed, unique) and, after
 * shard_assign, the shard it went to. */
struct shard_unit {
	uint64_t weight;
	const char *key;
	long shard;
};

/* Parses "I/N" (0 <= I < N <= SHARD_MAX) into `s`. ERR_USAGE says what is
 * wrong with it. */
enum err shard_parse(const char *spec, struct shard *s, struct diag *d);

/* A common start instant (--start-at): RFC 3339 in UTC
 * ("YYYY-MM-DDTHH:MM:SS[.fff](Z|+00:00)") or Unix seconds (finite, below
 * 1e11: the year 5138), into *unix_s. ERR_USAGE naming the accepted forms. */
enum err shard_parse_time(const char *s, double *unix_s, struct diag *d);

/* How far in the past a common start may lie: a later shard may begin that
 * late (its pod started slowly), no later. */
#define SHARD_START_PAST_S 5.0

/* How far ahead a common start may lie: a day. Shards are started for a
 * start minutes ahead; one further out is a typo (a year, 1e300) that would
 * wait silently for ever. */
#define SHARD_START_AHEAD_S 86400.0

/* ERR_USAGE when `start_at` lies more than SHARD_START_PAST_S before `now`
 * (both Unix seconds), unless `resuming` (a resumed shard began long ago),
 * or more than SHARD_START_AHEAD_S after it. */
enum err shard_check_start(double start_at, double now, int resuming, struct diag *d);

/* This shard's part of load case `id`'s plan `all` (validated) when the case
 * runs on every one of s->count shards at once: open loop rate/N per level;
 * closed loop concurrency C/N, the first (C mod N) shards one more; each
 * round's requests and an explicit warm-up split the same way; the seed is
 * shard_load_seed's. `out` is `all` when the run is whole. ERR_USAGE naming
 * the case and level when a concurrency or a round's requests are fewer than
 * N (a shard would get none). */
enum err shard_load_share(const struct loadspec *all, const struct shard *s, const char *id,
			  struct loadspec *out, struct diag *d);

/* The seed of shard s->index's load schedules and prompts, from the suite's
 * `seed`: in [0, 2^31), distinct for every index of one count (so the
 * shards' attempt keys differ) and unrelated to the others' streams. */
long shard_load_seed(long seed, const struct shard *s);

/* The shard from the orchestrator's environment: Slurm's
 * SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN and
 * SLURM_ARRAY_TASK_STEP (index = (ID - MIN) / STEP), or a Kubernetes Indexed
 * Job's JOB_COMPLETION_INDEX with the count from NEEDLE_SHARDS. s->count = 0
 * when neither is set. ERR_USAGE names the variable that is malformed or
 * missing, or says both are set. */
enum err shard_from_env(struct shard *s, struct diag *d);

/* Assigns each of the `n` units to one of `count` shards (the rule above),
 * setting u[i].shard; `u` keeps its order. ERR_NOMEM only. */
enum err shard_assign(struct shard_unit *u, size_t n, long count, struct diag *d);

/* Appends {case, seed, rate or concurrency [per level], requests [per
 * level], warmup} of this shard's `part` of load case `id` to the array
 * "load" of `shard` (the manifest's "shard"), making it when absent. */
void shard_load_json(struct json_build *jb, cJSON *shard, const char *id,
		     const struct loadspec *part);

#endif
