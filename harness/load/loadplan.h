/*
 * loadplan — the order and timing of one load case's requests (loadspec.h), as
 * a state machine the runner asks "what now?": first the fixed-length
 * pre-check (round LOADPLAN_PRECHECK of level 0: one request alone, the
 * field reports' "first request: input and output exactly on target",
 * docs/cutover.md "Where the rule comes from"), then every level's uncounted
 * warm-up round (round 0, when warmup > 0), levels in order, then the counted
 * rounds in blocks: block k is round k of every level, levels in order. A
 * cell's rounds are thus spread over the whole case, so that their
 * disagreement shows what drifts with time and what a second run would see
 * (loadci.h). A round starts only when the one before it has drained, so
 * rounds never overlap and each has its own wall time.
 *
 * Self-sizing (loadsize.h): after each block from `rounds` on, while blocks
 * up to `max_rounds` remain, the plan stops at LOADPLAN_BLOCK; the runner then
 * says with loadplan_more which levels get round k + 1 (none: the case ends).
 * After a failed pre-check no block is offered: `rounds` rounds are skipped.
 *
 * Level-major order (loadplan_level_major, for --metrics, whose /metrics
 * window is one level): the pre-check, then per level its warm-up and its
 * rounds back to back; BLOCK then follows each of its rounds from `rounds` on.
 *
 * The runner says how the pre-check went (loadplan_precheck). When it
 * failed, the case stops: every other request comes back as SKIP, at once
 * and in order, to be recorded as not sent (the success counts keep them).
 *
 * Closed loop (concurrency C): up to C requests of the round in flight; the
 * next starts as soon as one finishes. Open loop (rate R): request i is due at
 * the round's start + the i-th arrival of a schedule (arrival.h, seeded per
 * level and round), with no cap on requests in flight; a request started late
 * keeps its due time as `scheduled_ms`, so the lag is measured, never hidden.
 *
 * Allocates nothing; all times are io_now_ms milliseconds.
 */
#ifndef NEEDLE_LOADPLAN_H
#define NEEDLE_LOADPLAN_H

#include <stdint.h>

#include "loadspec.h"
#include "arrival.h"

enum loadplan_step {
	LOADPLAN_PREPARE, /* a round is next: `item` has its level and round, and
			   * its size in `index`; build its requests now, before
			   * its clock starts */
	LOADPLAN_START, /* start the request in `item` now */
	LOADPLAN_WAIT,  /* open loop: nothing is due before `until_ms` */
	LOADPLAN_DRAIN, /* wait for a request in flight to finish */
	LOADPLAN_SKIP,  /* the pre-check failed: record `item` as not sent */
	LOADPLAN_BLOCK, /* a block of rounds has ended and another may follow:
			 * call loadplan_more for each level that wants one */
	LOADPLAN_DONE   /* every round of every level has finished */
};

#define LOADPLAN_PRECHECK (-1L) /* the pre-check's round */

struct loadplan_item {
	int level;             /* index into the spec's levels */
	long round;            /* LOADPLAN_PRECHECK, 0 = warm-up, counted 1..rounds */
	long index;            /* 0-based within the round */
	double scheduled_ms;   /* when it was due (closed loop: now) */
	double round_start_ms; /* the round's start */
};

struct loadplan {
	const struct loadspec *s; /* borrowed */
	uint64_t seed;
	int level;
	long round, next, inflight, total;
	int prepared;          /* PREPARE was returned for the current round */
	int started;           /* the current round has started */
	int precheck;          /* 0 = not judged yet, 1 = passed, -1 = failed */
	double t0_ms;          /* its start */
	struct arrival arr;      /* open loop, this round */
	double due_ms;         /* open loop: offset of request `next` */
	double shift;          /* constant arrivals: fraction of a gap (loadplan_interleave) */
	int asked;             /* BLOCK was returned for the current round */
	int level_major;       /* levels one after another (loadplan_level_major) */
	unsigned char want[LOADSPEC_MAX_LEVELS]; /* levels that get rounds past `rounds` */
	long ran[LOADSPEC_MAX_LEVELS]; /* the last counted round each level began */
};

/* Plans `s` (borrowed; validated) with `seed` for the arrival schedules. */
void loadplan_init(struct loadplan *p, const struct loadspec *s, uint64_t seed);

/* The next step at `now_ms`; fills `item` for START and `until_ms` for WAIT.
 * After START the caller starts the request and calls loadplan_finished when
 * it ends (whatever the outcome). */
enum loadplan_step loadplan_next(struct loadplan *p, double now_ms,
				 struct loadplan_item *item, double *until_ms);

/* Open loop with constant arrivals: every due time `fraction` (0 <= f < 1)
 * of a gap later, so that N shards each sending rate/N at fractions i/N
 * interleave into one even schedule (shard.h). No effect otherwise. */
void loadplan_interleave(struct loadplan *p, double fraction);

/* One request of the current round has ended. */
void loadplan_finished(struct loadplan *p);

/* The pre-check request passed every strict check (`ok`) or not; call it
 * before loadplan_finished for that request. */
void loadplan_precheck(struct loadplan *p, int ok);

/* Levels one after another instead of blocks; call before the first step. */
void loadplan_level_major(struct loadplan *p);

/* Whether level `level` gets the next block's round (after BLOCK; levels
 * not named get none). */
void loadplan_more(struct loadplan *p, int level, int more);

/* Requests the whole case may send, the pre-check, warm-up and every round up
 * to max_rounds included. */
long loadplan_total(const struct loadspec *s);

/* The 1-based place of request `index` of round `round` of level `level` in
 * its case, as if every level ran every round: the pre-check, the warm-ups,
 * then block after block. It never depends on how many rounds ran. */
long loadplan_seq(const struct loadspec *s, int level, long round, long index);

#endif
