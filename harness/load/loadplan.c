/*
 * loadplan — order and timing of a load case's requests; see loadplan.h.
 */
#include "loadplan.h"

#include <string.h>

#include "generators/prng.h"

static long round_size(const struct loadplan *p)
{
	if (p->round == LOADPLAN_PRECHECK)
		return 1;
	return p->round == 0 ? loadspec_warmup(p->s, p->level) : p->s->requests[p->level];
}

/* Moves to round `round` of level `level` (skipping an empty warm-up). */
static void enter(struct loadplan *p, int level, long round)
{
	p->level = level;
	p->round = round;
	if (round == 0 && level < p->s->nlevels && loadspec_warmup(p->s, level) == 0)
		p->round = 1;
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
	enter(p, 0, LOADPLAN_PRECHECK);
}

long loadplan_total(const struct loadspec *s)
{
	long n = 0;
	int i;

	for (i = 0; i < s->nlevels; i++)
		n += loadspec_warmup(s, i) + s->rounds * s->requests[i];
	return n + 1;
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
			if (p->round == LOADPLAN_PRECHECK)
				enter(p, 0, 0);
			else if (p->round < p->s->rounds)
				enter(p, p->level, p->round + 1);
			else
				enter(p, p->level + 1, 0);
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
