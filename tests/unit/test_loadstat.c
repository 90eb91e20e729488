/* Unit tests of loadstat: rounds and cells from hand-computed requests. */
#include <math.h>
#include <stdlib.h>

#include "load/loadstat.h"
#include "base/stats.h"
#include "t.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

/* ok, scheduled, sent, first, first_content, last, done, completion_tokens */
static const struct loadstat_req closed[] = {
	{1, 0, 0, 100, 100, 190, 195, 10},
	{1, 0, 0, 200, 200, 380, 400, 10},
	{1, 0, 0, 300, 300, 570, 600, 10},
	{0, 0, 0, -1, -1, -1, 1000, 0}, /* an empty 200: failed, occupies the time */
};

/* The definition the figures rest on (stats.h): nearest rank, the lower
 * middle for an even count. */
static void test_percentile(void)
{
	double v[] = {1, 2, 3, 4, 5}, w[] = {10, 20};

	CHECK(NEAR(stats_nearest_rank(v, 5, 50), 3));
	CHECK(NEAR(stats_nearest_rank(v, 5, 95), 5));
	CHECK(NEAR(stats_nearest_rank(v, 5, 20), 1)); /* ceil(1.0) = 1st, not 2nd */
	CHECK(NEAR(stats_nearest_rank(w, 2, 50), 10));
	CHECK(NEAR(stats_nearest_rank(NULL, 0, 50), 0));
}

static void test_round_closed(void)
{
	struct loadstat_slo slo = {250, 25, 0};
	struct loadstat_round r;
	double scratch[4];

	loadstat_round(closed, 4, &slo, scratch, &r);
	CHECK_EQ_LONG(r.requests, 4);
	CHECK_EQ_LONG(r.succeeded, 3);
	CHECK(!r.valid);
	CHECK(NEAR(r.wall_ms, 1000));
	CHECK_EQ_LONG(r.output_tokens, 30);
	CHECK(NEAR(r.output_tps, 30)); /* 30 tokens / 1 s, the failure's time counted */
	CHECK_EQ_LONG(r.n_latency, 3);
	CHECK(NEAR(r.ttft_p50_ms, 200));
	CHECK(NEAR(r.ttft_p95_ms, 300));
	CHECK(NEAR(r.tpot_p50_ms, 20)); /* (380 - 200) / 9 */
	CHECK(NEAR(r.tpot_p95_ms, 30));
	CHECK(NEAR(r.e2e_p50_ms, 400));
	CHECK(NEAR(r.slo_attainment, 0.5)); /* two of four; the failure does not meet it */
	CHECK(NEAR(r.goodput_rps, 2));
	CHECK(NEAR(r.achieved_rate, 0)); /* all sent at once */
	loadstat_round(closed, 3, NULL, scratch, &r);
	CHECK(r.valid);
	CHECK(NEAR(r.wall_ms, 600));
	CHECK(NEAR(r.output_tps, 50));
	CHECK(NEAR(r.slo_attainment, 1));
}

static void test_round_open(void)
{
	struct loadstat_req q[4] = {
		{1, 0, 1, 51, 51, 51, 60, 1},
		{1, 1000, 1002, 1052, 1052, 1100, 1110, 3},
		{1, 2000, 2000, 2050, 2050, 2050, 2060, 1},
		{1, 3000, 3010, 3060, 3060, 3060, 3070, 1},
	};
	struct loadstat_slo slo = {0, 20, 0};
	struct loadstat_round r;
	double scratch[4];

	loadstat_round(q, 4, &slo, scratch, &r);
	CHECK(r.valid);
	CHECK(NEAR(r.lag_p50_ms, 1));
	CHECK(NEAR(r.lag_p99_ms, 10));
	CHECK(NEAR(r.lag_max_ms, 10));
	CHECK(NEAR(r.achieved_rate, 3 * 1000.0 / 3009));
	CHECK_EQ_LONG(r.n_tpot, 1); /* one token: TPOT undefined */
	CHECK(NEAR(r.tpot_p95_ms, 24));
	CHECK(NEAR(r.slo_attainment, 0.75)); /* 24 ms > 20; undefined TPOT meets */
	CHECK(NEAR(r.wall_ms, 3070));
}

/* A thinking stream (issue 21 item 5): the first fragment is reasoning at 301
 * ms, the first content at 801 ms, 8 tokens, the last at 1001 ms. TTFT is the
 * first fragment; TPOT runs from it, so TTFT + 7 x TPOT is the last fragment;
 * TTFC keeps the first content. */
static void test_round_reasoning(void)
{
	const struct loadstat_req q[] = {
		{1, 0, 0, 301, 801, 1001, 1005, 8},
		{1, 0, 0, 320, -1, 1020, 1030, 8}, /* fragments but no content: no TTFC sample */
	};
	struct loadstat_round r;
	double scratch[2];

	loadstat_round(q, 1, NULL, scratch, &r);
	CHECK(NEAR(r.ttft_p50_ms, 301));
	CHECK(NEAR(r.ttfc_p50_ms, 801));
	CHECK(NEAR(r.tpot_p50_ms, 100));
	CHECK(r.ttft_p50_ms + 7 * r.tpot_p50_ms <= r.e2e_p50_ms);
	loadstat_round(q, 2, NULL, scratch, &r);
	CHECK_EQ_LONG(r.n_latency, 2);
	CHECK_EQ_LONG(r.n_ttfc, 1); /* no content fragment: no TTFC sample */
	CHECK(NEAR(r.ttfc_p95_ms, 801));
	CHECK(NEAR(r.ttft_p95_ms, 320));
}

static void test_meets(void)
{
	struct loadstat_req q = {1, 0, 10, 110, 110, 200, 210, 10};
	struct loadstat_slo ttft = {100, 0, 0}, tight = {99.9, 0, 0}, e2e = {0, 0, 199};

	CHECK(loadstat_meets(&q, &ttft));
	CHECK(!loadstat_meets(&q, &tight));
	CHECK(!loadstat_meets(&q, &e2e));
	CHECK(loadstat_meets(&q, NULL));
	q.ok = 0;
	CHECK(!loadstat_meets(&q, NULL));
}

static struct loadstat_round mk(int valid, double tps, double p95, double slo)
{
	struct loadstat_round r = {0};

	r.requests = 8;
	r.succeeded = valid ? 8 : 7;
	r.valid = valid;
	r.output_tps = tps;
	r.ttft_p95_ms = p95;
	r.slo_attainment = slo;
	r.lag_max_ms = tps / 100;
	return r;
}

static void test_cell(void)
{
	struct loadstat_round r[4];
	struct loadstat_cell c;
	double scratch[4];

	r[0] = mk(1, 100, 300, 1);
	r[1] = mk(0, 50, 9000, 0.5);
	r[2] = mk(1, 120, 200, 0.875);
	r[3] = mk(1, 110, 250, 0.75);
	loadstat_cell(r, 4, scratch, &c);
	CHECK_EQ_LONG(c.rounds_total, 4);
	CHECK_EQ_LONG(c.rounds_valid, 3);
	CHECK_EQ_LONG(c.requests, 32);
	CHECK_EQ_LONG(c.succeeded, 31); /* the invalid round's failure stays counted */
	CHECK(NEAR(c.success_rate, 31.0 / 32));
	CHECK_EQ_LONG(c.output_tps.n, 3);
	CHECK(NEAR(c.output_tps.median, 110)); /* the invalid round's 50 is left out */
	CHECK(NEAR(c.output_tps.min, 100));
	CHECK(NEAR(c.output_tps.max, 120));
	CHECK(NEAR(c.ttft_p95_ms.median, 250)); /* median of per-round P95s */
	CHECK_EQ_LONG(c.slo_attainment.n, 4); /* over all rounds */
	CHECK(NEAR(c.slo_attainment.median, 0.75));
	CHECK(NEAR(c.slo_attainment.min, 0.5));
	CHECK(NEAR(c.lag_max_ms, 1.2));
	loadstat_cell(r, 2, scratch, &c); /* one valid round */
	CHECK_EQ_LONG(c.output_tps.n, 1);
	CHECK(NEAR(c.output_tps.median, 100));
	r[0].valid = 0;
	loadstat_cell(r, 2, scratch, &c);
	CHECK_EQ_LONG(c.rounds_valid, 0);
	CHECK_EQ_LONG(c.output_tps.n, 0);
}

int main(void)
{
	T_RUN(test_percentile);
	T_RUN(test_round_closed);
	T_RUN(test_round_open);
	T_RUN(test_round_reasoning);
	T_RUN(test_meets);
	T_RUN(test_cell);
	return T_DONE();
}
