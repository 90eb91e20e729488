/*
 * loadplan — order and timing of a load case's requests; see loadplan.h.
 */
#include "loadplan.h"

#include <string.h>

#include "generators/prng.h"

/* The last round a level may run (a spec built without max_rounds: rounds). */
static long last_round(const struct loadspec *s)
{
	return s->max_rounds > s->rounds ? s->max_rounds : s->rounds;
}

static long round_size(const struct loadplan *p)
{
	if (p->round == LOADPLAN_PRECHECK)
		return 1;
	return p->round == 0 ? loadspec_warmup(p->s, p->level) : p->s->requests[p->level];
}

/* Whether level `level` runs in round `round`: every level warms up (when
 * it has a warm-up) and runs the first `rounds` rounds; a later round only
 * for a level the runner asked more of. */
static int runs(const struct loadplan *p, int level, long round)
{
	if (round == 0)
		return loadspec_warmup(p->s, level) > 0;
	return round <= p->s->rounds || p->want[level];
}

/* Moves to round `round` of level `level`, or to the next pair after it that
 * runs (levels within a round, then the next round); past the last round,
 * level = nlevels. */
static void enter(struct loadplan *p, int level, long round)
{
	if (p->level_major) {
		while (level < p->s->nlevels) {
			if (round > last_round(p->s) || (round > p->s->rounds && !p->want[level])) {
				level++;
				round = 0;
			} else if (runs(p, level, round)) {
				break;
			} else {
				round++;
			}
		}
	} else {
		while (round <= last_round(p->s)) {
			while (level < p->s->nlevels && !runs(p, level, round))
				level++;
			if (level < p->s->nlevels)
				break;
			level = 0;
			round++;
		}
		if (round > last_round(p->s))
			level = p->s->nlevels;
	}
	p->asked = 0;
	p->level = level;
	p->round = round;
	if (level < p->s->nlevels && round > 0)
		p->ran[level] = round;
	p->next = 0;
	p->inflight = 0;
	p->prepared = 0;
	p->started = 0;
	p->total = level < p->s->nlevels ? round_size(p) : 0;
}

void loadplan_init(struct loadplan *p, const struct loadspec *s, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->seed = seed;
	p->level = 0;
	p->round = LOADPLAN_PRECHECK;
	p->total = 1;
}

long loadplan_total(const struct loadspec *s)
{
	long n = 0;
	int i;

	for (i = 0; i < s->nlevels; i++)
		n += loadspec_warmup(s, i) + last_round(s) * s->requests[i];
	return n + 1;
}

long loadplan_seq(const struct loadspec *s, int level, long round, long index)
{
	long n = 1, w = 0, per = 0, before = 0;
	int i;

	if (round == LOADPLAN_PRECHECK)
		return 1;
	for (i = 0; i < s->nlevels; i++) {
		if (i < level)
			before += round == 0 ? loadspec_warmup(s, i) : s->requests[i];
		w += loadspec_warmup(s, i);
		per += s->requests[i];
	}
	if (round > 0)
		n += w + (round - 1) * per;
	return n + before + index + 1;
}

void loadplan_level_major(struct loadplan *p)
{
	p->level_major = 1;
}

void loadplan_more(struct loadplan *p, int level, int more)
{
	if (level >= 0 && level < p->s->nlevels)
		p->want[level] = more;
}

void loadplan_interleave(struct loadplan *p, double fraction)
{
	p->shift = fraction;
}

/* The next due time of the round's schedule, shifted (loadplan_interleave). */
static double next_due(struct loadplan *p)
{
	double at = arrival_next_ms(&p->arr);

	if (p->s->arrival == ARRIVAL_CONSTANT)
		at += p->shift * 1000.0 / p->s->rate[p->level];
	return at;
}

/* Whether a level from `level` on runs in round `round`. */
static int more_level(const struct loadplan *p, int level, long round)
{
	for (; level < p->s->nlevels; level++)
		if (runs(p, level, round))
			return 1;
	return 0;
}

static void begin_round(struct loadplan *p, double now_ms)
{
	uint64_t x = p->seed ^ ((uint64_t)p->level << 32 | (uint64_t)p->round);
	struct diag ignored;

	p->started = 1;
	p->t0_ms = now_ms;
	p->due_ms = 0;
	if (p->s->open_loop && p->round != LOADPLAN_PRECHECK) {
		(void)arrival_init(&p->arr, p->s->arrival, p->s->rate[p->level],
				 prng_splitmix64(&x), (size_t)p->total, &ignored);
		p->due_ms = next_due(p);
	}
}

static enum loadplan_step start(struct loadplan *p, double due, struct loadplan_item *it)
{
	it->level = p->level;
	it->round = p->round;
	it->index = p->next++;
	it->scheduled_ms = due;
	it->round_start_ms = p->t0_ms;
	p->inflight++;
	if (p->s->open_loop && p->round != LOADPLAN_PRECHECK)
		p->due_ms = next_due(p);
	return LOADPLAN_START;
}

/* The pre-check failed: the next request, not to be sent. */
static enum loadplan_step skip(struct loadplan *p, double now_ms, struct loadplan_item *it)
{
	it->level = p->level;
	it->round = p->round;
	it->index = p->next++;
	it->scheduled_ms = it->round_start_ms = now_ms;
	return LOADPLAN_SKIP;
}

enum loadplan_step loadplan_next(struct loadplan *p, double now_ms,
				 struct loadplan_item *item, double *until_ms)
{
	while (p->level < p->s->nlevels) {
		if (p->next == p->total) {
			if (p->inflight > 0)
				return LOADPLAN_DRAIN;
			if (p->round >= p->s->rounds && p->round < last_round(p->s) && p->precheck >= 0 &&
			    !p->asked && (p->level_major || !more_level(p, p->level + 1, p->round))) {
				/* the end of a block (level-major: of a round) that
				 * may be followed by another: the runner says which
				 * levels want more */
				p->asked = 1;
				return LOADPLAN_BLOCK;
			}
			if (p->round == LOADPLAN_PRECHECK)
				enter(p, 0, 0);
			else if (p->level_major)
				enter(p, p->level, p->round + 1);
			else
				enter(p, p->level + 1, p->round);
			continue;
		}
		if (p->precheck < 0)
			return skip(p, now_ms, item);
		if (!p->prepared) {
			p->prepared = 1;
			item->level = p->level;
			item->round = p->round;
			item->index = p->total;
			item->scheduled_ms = item->round_start_ms = now_ms;
			return LOADPLAN_PREPARE;
		}
		if (!p->started)
			begin_round(p, now_ms);
		if (!p->s->open_loop || p->round == LOADPLAN_PRECHECK) {
			if (p->inflight >= (p->round == LOADPLAN_PRECHECK ? 1 : p->s->concurrency[p->level]))
				return LOADPLAN_DRAIN;
			return start(p, now_ms, item);
		}
		if (now_ms >= p->t0_ms + p->due_ms)
			return start(p, p->t0_ms + p->due_ms, item);
		*until_ms = p->t0_ms + p->due_ms;
		return LOADPLAN_WAIT;
	}
	return LOADPLAN_DONE;
}

void loadplan_precheck(struct loadplan *p, int ok)
{
	p->precheck = ok ? 1 : -1;
}

void loadplan_finished(struct loadplan *p)
{
	if (p->inflight > 0)
		p->inflight--;
}
