/*
 * loadsize — a load case sizing itself as it runs; see loadsize.h.
 */
#include "loadsize.h"

#include <string.h>

void loadsize_init(struct loadsize *z, const struct loadspec *s, double now_ms)
{
	int i;

	loadsize_release(z);
	z->s = s;
	z->t0_ms = z->block_from = now_ms;
	for (i = 0; i < s->nlevels; i++)
		z->lv[i].stop = s->max_rounds > s->rounds ? LOADSIZE_RUNNING : LOADSIZE_FIXED;
}

void loadsize_release(struct loadsize *z)
{
	int i;

	for (i = 0; i < LOADSPEC_MAX_LEVELS; i++) {
		loadci_set_release(&z->lv[i].ttft);
		loadci_set_release(&z->lv[i].tps);
	}
	memset(z, 0, sizeof(*z));
}

void loadsize_preset(struct loadsize *z, int level, long rounds)
{
	if (z->s && level >= 0 && level < z->s->nlevels && z->lv[level].stop == LOADSIZE_RUNNING)
		z->lv[level].preset = rounds;
}

/* Closes the round level `l` is collecting: its TTFTs and its throughput
 * are kept when every request of it succeeded. */
static int close_round(struct loadsize_level *l)
{
	double wall = l->end_ms - l->start_ms;
	int ok = 1;

	if (!l->round)
		return 1;
	if (l->bad || !(wall > 0)) {
		loadci_set_drop_round(&l->ttft);
	} else {
		ok = loadci_set_end_round(&l->ttft) && loadci_set_add(&l->tps, (double)l->tokens * 1000.0 / wall) &&
		     loadci_set_end_round(&l->tps);
	}
	l->round = 0;
	return ok;
}

int loadsize_request(struct loadsize *z, int level, long round, double round_start_ms, int ok,
		     double ttft_ms, long tokens, double done_ms)
{
	struct loadsize_level *l;

	if (!z->s || level < 0 || level >= z->s->nlevels || round < 1)
		return 1;
	l = &z->lv[level];
	if (l->round != round) {
		if (!close_round(l))
			return 0;
		l->round = round;
		l->bad = 0;
		l->tokens = 0;
		l->start_ms = round_start_ms;
		l->end_ms = done_ms;
	}
	if (done_ms > l->end_ms)
		l->end_ms = done_ms;
	if (!ok || !(ttft_ms >= 0)) {
		l->bad = 1;
		return 1;
	}
	l->tokens += tokens;
	return loadci_set_add(&l->ttft, ttft_ms);
}

/* Whether level `l`'s figures are precise enough for the spec's sizes. */
static int settled(struct loadsize_level *l, const struct loadspec *s, int *ok)
{
	struct loadci_est p50, p95, tps;

	if (l->ttft.rounds < 2 || l->tps.rounds < 2)
		return 0;
	if (!loadci_estimate(&l->ttft, 50, &p50) || !loadci_estimate(&l->ttft, 95, &p95) ||
	    !loadci_estimate(&l->tps, 0, &tps)) {
		*ok = 0;
		return 0;
	}
	return loadci_settled(&p50, 1 + s->detect.ttft_p50 / 100) &&
	       loadci_settled(&p95, 1 + s->detect.ttft_p95 / 100) &&
	       loadci_settled(&tps, 1 - s->detect.output_tps / 100);
}

int loadsize_block(struct loadsize *z, struct loadplan *p, double now_ms)
{
	const struct loadspec *s = z->s;
	double budget = s->budget_minutes * 60000.0;
	int i, ok = 1;

	z->block_ms = now_ms - z->block_from;
	z->block_from = now_ms;
	for (i = 0; i < s->nlevels; i++) {
		struct loadsize_level *l = &z->lv[i];

		ok &= close_round(l);
		if (l->stop != LOADSIZE_RUNNING || p->ran[i] != p->round) {
			loadplan_more(p, i, 0);
			continue;
		}
		if (l->preset)
			l->stop = p->ran[i] >= l->preset ? LOADSIZE_PRESET : LOADSIZE_RUNNING;
		else if (settled(l, s, &ok))
			l->stop = LOADSIZE_SETTLED;
		else if (p->ran[i] >= s->max_rounds)
			l->stop = LOADSIZE_MAX_ROUNDS;
		else if (budget > 0 && now_ms - z->t0_ms + z->block_ms > budget)
			l->stop = LOADSIZE_BUDGET;
		loadplan_more(p, i, l->stop == LOADSIZE_RUNNING);
	}
	return ok;
}

void loadsize_end(struct loadsize *z, const struct loadplan *p)
{
	int i;

	for (i = 0; z->s && i < z->s->nlevels; i++) {
		struct loadsize_level *l = &z->lv[i];

		(void)close_round(l);
		if (p->precheck < 0)
			l->stop = LOADSIZE_STOPPED;
		else if (l->stop == LOADSIZE_RUNNING)
			l->stop = l->preset ? LOADSIZE_PRESET : LOADSIZE_MAX_ROUNDS;
	}
}

const char *loadsize_stop_name(enum loadsize_stop s)
{
	static const char *const names[] = {"running", "fixed", "settled", "max_rounds", "budget",
					    "preset", "stopped"};

	return names[s];
}
