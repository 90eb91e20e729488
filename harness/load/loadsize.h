/*
 * loadsize — a load case sizing itself as it runs (loadspec.h "max_rounds"):
 * the runner hands it every counted request as it ends; after each block of
 * rounds from the spec's `rounds` on (loadplan.h LOADPLAN_BLOCK) it tells
 * the plan which levels get another round.
 *
 * A level goes on while its own figures (TTFT P50 and P95, output
 * throughput, as loadci.h estimates them from its valid rounds) are too
 * noisy for a like run to tell a change of the spec's "detect" sizes from
 * none at LOADCI_POWER (loadci_settled); it stops when they are not
 * ("settled"), at max_rounds ("max_rounds"), or when another block would
 * pass the case's budget_minutes at the pace of its last block ("budget").
 * A level whose round failed a request has that round left out, as the
 * verdict does; a level with no valid round yet goes on.
 *
 * The decision reads this run's data only, never a baseline's: stopping
 * when the noise is small enough does not look at the difference a verdict
 * will judge. It may still steer it where the spread tells of the level
 * (a few rounds that all missed a slow phase look quiet and fast at once),
 * which is why no level stops before LOADCI_SETTLE_MIN rounds and the
 * spread is the upper confidence bound of the rounds' standard deviation,
 * which a slow round moves and a few agreeing rounds do not shrink
 * (docs/statistics.md, "Runs that size themselves").
 *
 * A level may be preset (loadsize_preset: the decision of an earlier process
 * of the same run, --resume) to the rounds it ran then.
 */
#ifndef NEEDLE_LOADSIZE_H
#define NEEDLE_LOADSIZE_H

#include "loadci.h"
#include "loadplan.h"
#include "loadspec.h"

enum loadsize_stop {
	LOADSIZE_RUNNING,
	LOADSIZE_FIXED,       /* max_rounds = rounds: no sizing */
	LOADSIZE_SETTLED,     /* precise enough for the detect sizes */
	LOADSIZE_MAX_ROUNDS,  /* max_rounds reached first */
	LOADSIZE_BUDGET,      /* budget_minutes would be passed */
	LOADSIZE_PRESET,      /* an earlier process of the run decided */
	LOADSIZE_STOPPED      /* the case stopped at its pre-check */
};

struct loadsize_level {
	struct loadci_set ttft, tps; /* valid rounds' TTFTs, per-round tok/s */
	long round;                  /* the round being collected, 0 = none */
	int bad;                     /* a request of it failed */
	double start_ms, end_ms;     /* its start, its last request's end */
	long tokens;                 /* completion tokens of its requests */
	long preset;                 /* rounds to run, from an earlier process; 0 */
	enum loadsize_stop stop;
};

struct loadsize {
	const struct loadspec *s;    /* borrowed */
	double t0_ms;                /* the case's start */
	double block_ms;             /* the last block's length */
	double block_from;           /* its start */
	struct loadsize_level lv[LOADSPEC_MAX_LEVELS];
};

/* Starts sizing the case `s` (borrowed) at `now_ms`. */
void loadsize_init(struct loadsize *z, const struct loadspec *s, double now_ms);
/* Frees what `z` holds; accepts a zeroed one. */
void loadsize_release(struct loadsize *z);
/* Level `level` runs `rounds` counted rounds, decided before. */
void loadsize_preset(struct loadsize *z, int level, long rounds);
/* A counted request ended: of round `round` (started at round_start_ms) of
 * level `level`, `ok` when it passed every strict check, its TTFT, its
 * completion tokens, its end. 0 when out of memory. */
int loadsize_request(struct loadsize *z, int level, long round, double round_start_ms, int ok,
		     double ttft_ms, long tokens, double done_ms);
/* A block ended at `now_ms` (LOADPLAN_BLOCK): closes its rounds and says
 * with loadplan_more which levels go on. 0 when out of memory. */
int loadsize_block(struct loadsize *z, struct loadplan *p, double now_ms);
/* The case ended: every level's final reason (the plan says how far each
 * got). */
void loadsize_end(struct loadsize *z, const struct loadplan *p);
/* "settled", "max_rounds", ... */
const char *loadsize_stop_name(enum loadsize_stop s);

#endif
