/* Unit tests of loadplan: the pre-check first (alone; a failed one stops the
 * case), closed-loop levels with warm-up and round barriers, and open-loop
 * due times that never drift. */
#include <string.h>

#include "load/loadplan.h"
#include "t.h"

/* loadplan_next, answering PREPARE steps (checked for a sane size). */
static enum loadplan_step next(struct loadplan *p, double now, struct loadplan_item *it,
			       double *until)
{
	enum loadplan_step st;

	while ((st = loadplan_next(p, now, it, until)) == LOADPLAN_PREPARE)
		CHECK(it->index > 0 && it->index == p->total);
	return st;
}

/* The pre-check: one request alone, prepared, then nothing until it ends;
 * `ok` is its verdict. */
static void precheck(struct loadplan *p, double now, int ok)
{
	struct loadplan_item it;
	double until;

	CHECK(loadplan_next(p, now, &it, &until) == LOADPLAN_PREPARE && it.index == 1 &&
	      it.level == 0 && it.round == LOADPLAN_PRECHECK);
	CHECK(loadplan_next(p, now, &it, &until) == LOADPLAN_START && it.round == LOADPLAN_PRECHECK &&
	      it.index == 0 && it.scheduled_ms == now);
	CHECK(loadplan_next(p, now, &it, &until) == LOADPLAN_DRAIN);
	loadplan_precheck(p, ok);
	loadplan_finished(p);
}

static struct loadspec closed_spec(void)
{
	struct loadspec s;

	memset(&s, 0, sizeof(s));
	s.nlevels = 2;
	s.concurrency[0] = 1;
	s.concurrency[1] = 2;
	s.requests[0] = 2;
	s.requests[1] = 3;
	s.rounds = 2;
	s.warmup = -1;
	return s;
}

static void test_closed(void)
{
	struct loadspec s = closed_spec();
	struct loadplan p;
	struct loadplan_item it;
	double until;
	long started = 0, level1_round1 = 0, maxflight = 0, flight = 0;
	int guard = 0;
	enum loadplan_step st;

	CHECK_EQ_LONG(loadplan_total(&s), 1 + 2 + 2 * 2 + 3 + 2 * 3);
	loadplan_init(&p, &s, 1);
	precheck(&p, 0, 1);
	/* level 0 (C1): warm-up request 0, then it must drain before index 1 */
	CHECK(next(&p, 0, &it, &until) == LOADPLAN_START);
	CHECK(it.level == 0 && it.round == 0 && it.index == 0);
	CHECK(next(&p, 1, &it, &until) == LOADPLAN_DRAIN);
	loadplan_finished(&p);
	CHECK(next(&p, 2, &it, &until) == LOADPLAN_START);
	CHECK(it.round == 0 && it.index == 1);
	loadplan_finished(&p);
	/* then level 1's warm-up: every warm-up before the first block */
	CHECK(next(&p, 3, &it, &until) == LOADPLAN_START);
	CHECK(it.level == 1 && it.round == 0 && it.index == 0 && it.round_start_ms == 3);
	loadplan_finished(&p);
	/* finish everything, finishing the oldest whenever told to drain */
	started = 4; /* the pre-check and the three above */
	while ((st = next(&p, 10, &it, &until)) != LOADPLAN_DONE && guard++ < 100) {
		if (st == LOADPLAN_START) {
			started++;
			flight++;
			if (it.level == 1) {
				maxflight = flight > maxflight ? flight : maxflight;
				level1_round1 += it.round == 1;
			}
		} else {
			CHECK(st == LOADPLAN_DRAIN);
			loadplan_finished(&p);
			flight--;
		}
	}
	CHECK(st == LOADPLAN_DONE);
	CHECK_EQ_LONG(started, loadplan_total(&s));
	CHECK_EQ_LONG(maxflight, 2);    /* C2 held, never more */
	CHECK_EQ_LONG(level1_round1, 3);
}

/* Blocks: round k of every level before round k + 1 of any; past `rounds`,
 * BLOCK asks which levels go on, and only those run; a request's place
 * (loadplan_seq) is unique and within loadplan_total whatever ran. */
static void test_blocks(void)
{
	struct loadspec s = closed_spec();
	struct loadplan p;
	struct loadplan_item it;
	double until;
	char seen[64] = {0};
	long order[16][2], n = 0, seq, blocks = 0;
	int guard = 0;
	enum loadplan_step st;

	s.warmup = 0;
	s.max_rounds = 4;
	CHECK_EQ_LONG(loadplan_total(&s), 1 + 4 * (2 + 3));
	loadplan_init(&p, &s, 1);
	precheck(&p, 0, 1);
	while ((st = loadplan_next(&p, 10, &it, &until)) != LOADPLAN_DONE && guard++ < 200) {
		if (st == LOADPLAN_PREPARE) {
			if (n < 16) {
				order[n][0] = it.level;
				order[n][1] = it.round;
			}
			n++;
		} else if (st == LOADPLAN_START) {
			seq = loadplan_seq(&s, it.level, it.round, it.index);
			CHECK(seq > 1 && seq <= loadplan_total(&s) && !seen[seq]);
			if (seq > 1 && seq < 64)
				seen[seq] = 1;
		} else if (st == LOADPLAN_DRAIN) {
			loadplan_finished(&p);
		} else {
			CHECK(st == LOADPLAN_BLOCK);
			blocks++;
			/* after round 2 level 1 wants one more; after round 3 none */
			loadplan_more(&p, 1, blocks == 1);
			loadplan_more(&p, 0, 0);
		}
	}
	CHECK(st == LOADPLAN_DONE);
	CHECK_EQ_LONG(blocks, 2);
	/* L0R1 L1R1 L0R2 L1R2 L1R3 */
	CHECK_EQ_LONG(n, 5);
	CHECK(order[0][0] == 0 && order[0][1] == 1 && order[1][0] == 1 && order[1][1] == 1);
	CHECK(order[2][0] == 0 && order[2][1] == 2 && order[3][0] == 1 && order[3][1] == 2);
	CHECK(order[4][0] == 1 && order[4][1] == 3);
	CHECK_EQ_LONG(p.ran[0], 2);
	CHECK_EQ_LONG(p.ran[1], 3);
	/* the place of round 3 of level 1 does not depend on level 0 stopping */
	CHECK_EQ_LONG(loadplan_seq(&s, 1, 3, 0), 1 + 2 * 5 + 2 + 1);
}

/* Level-major (--metrics): each level's rounds back to back, BLOCK after
 * each of its rounds from `rounds` on. */
static void test_level_major(void)
{
	struct loadspec s = closed_spec();
	struct loadplan p;
	struct loadplan_item it;
	double until;
	long order[16][2], n = 0, blocks = 0;
	int guard = 0;
	enum loadplan_step st;

	s.warmup = 0;
	s.max_rounds = 3;
	loadplan_init(&p, &s, 1);
	loadplan_level_major(&p);
	precheck(&p, 0, 1);
	while ((st = loadplan_next(&p, 10, &it, &until)) != LOADPLAN_DONE && guard++ < 200) {
		if (st == LOADPLAN_PREPARE) {
			if (n < 16) {
				order[n][0] = it.level;
				order[n][1] = it.round;
			}
			n++;
		} else if (st == LOADPLAN_DRAIN) {
			loadplan_finished(&p);
		} else if (st == LOADPLAN_BLOCK) {
			blocks++;
			/* level 0 goes on to 3, level 1 stops at 2 */
			loadplan_more(&p, p.level, p.level == 0);
		}
	}
	CHECK(st == LOADPLAN_DONE);
	/* L0R1 L0R2 L0R3 L1R1 L1R2; BLOCK after L0R2 and L1R2 */
	CHECK_EQ_LONG(n, 5);
	CHECK_EQ_LONG(blocks, 2);
	CHECK(order[0][0] == 0 && order[0][1] == 1 && order[1][0] == 0 && order[1][1] == 2);
	CHECK(order[2][0] == 0 && order[2][1] == 3 && order[3][0] == 1 && order[3][1] == 1);
	CHECK(order[4][0] == 1 && order[4][1] == 2);
}

static void test_round_barrier(void)
{
	struct loadspec s = closed_spec();
	struct loadplan p;
	struct loadplan_item it;
	double until;

	s.nlevels = 1;
	s.concurrency[0] = 4;
	s.requests[0] = 2;
	s.warmup = 0; /* no warm-up: round 1 first */
	loadplan_init(&p, &s, 1);
	precheck(&p, 0, 1);
	CHECK(next(&p, 0, &it, &until) == LOADPLAN_START && it.round == 1);
	CHECK(next(&p, 0, &it, &until) == LOADPLAN_START && it.index == 1);
	/* round 1 is fully sent; round 2 waits for it although C4 has room */
	CHECK(next(&p, 0, &it, &until) == LOADPLAN_DRAIN);
	loadplan_finished(&p);
	CHECK(next(&p, 0, &it, &until) == LOADPLAN_DRAIN);
	loadplan_finished(&p);
	CHECK(next(&p, 50, &it, &until) == LOADPLAN_START);
	CHECK(it.round == 2 && it.index == 0 && it.round_start_ms == 50);
}

static void test_open(void)
{
	struct loadspec s;
	struct loadplan p;
	struct loadplan_item it;
	double until = 0;

	memset(&s, 0, sizeof(s));
	s.open_loop = 1;
	s.arrival = ARRIVAL_CONSTANT;
	s.nlevels = 1;
	s.rate[0] = 10; /* one every 100 ms */
	s.requests[0] = 3;
	s.rounds = 1;
	s.warmup = 0;
	loadplan_init(&p, &s, 7);
	precheck(&p, 900, 1); /* alone, at once: not on the arrival schedule */
	CHECK(loadplan_next(&p, 990, &it, &until) == LOADPLAN_PREPARE && it.index == 3 && it.round == 1);
	CHECK(next(&p, 1000, &it, &until) == LOADPLAN_START);
	CHECK(it.scheduled_ms == 1000 && it.index == 0);
	CHECK(next(&p, 1040, &it, &until) == LOADPLAN_WAIT && until == 1100);
	/* late by 30 ms: started now, but due (and recorded) at 1100 */
	CHECK(next(&p, 1130, &it, &until) == LOADPLAN_START && it.scheduled_ms == 1100);
	/* the next is still due at 1200: no drift from the late start */
	CHECK(next(&p, 1131, &it, &until) == LOADPLAN_WAIT && until == 1200);
	CHECK(next(&p, 1200, &it, &until) == LOADPLAN_START && it.index == 2);
	/* no cap: three in flight, then drain and done */
	CHECK(next(&p, 1201, &it, &until) == LOADPLAN_DRAIN);
	loadplan_finished(&p);
	loadplan_finished(&p);
	loadplan_finished(&p);
	CHECK(next(&p, 1500, &it, &until) == LOADPLAN_DONE);
}

/* A failed pre-check: every other request of the case is skipped, in order,
 * nothing is prepared or started, then the case is done. */
static void test_precheck_failed(void)
{
	struct loadspec s = closed_spec();
	struct loadplan p;
	struct loadplan_item it;
	double until;
	long skipped = 0, last_round = -5;
	int ordered = 1, guard = 0;
	enum loadplan_step st;

	loadplan_init(&p, &s, 1);
	precheck(&p, 0, 0);
	while ((st = loadplan_next(&p, 5, &it, &until)) == LOADPLAN_SKIP && guard++ < 100) {
		ordered &= it.round >= last_round || it.level > 0;
		last_round = it.round;
		skipped++;
	}
	CHECK(st == LOADPLAN_DONE);
	CHECK(ordered);
	CHECK_EQ_LONG(skipped, loadplan_total(&s) - 1);
}

int main(void)
{
	T_RUN(test_closed);
	T_RUN(test_blocks);
	T_RUN(test_level_major);
	T_RUN(test_round_barrier);
	T_RUN(test_open);
	T_RUN(test_precheck_failed);
	return T_DONE();
}
