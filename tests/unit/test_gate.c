/* Unit tests of gates on load cells: the noise-aware statistics (loadci.h)
 * on known inputs, and gate_eval on cells built from load records: ratios
 * cell by cell, cell picking, invalid and missing cells, the cutover rule,
 * the verdicts written into the load entries. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "load/loadcells.h"
#include "load/loadci.h"
#include "report/diff.h"
#include "report/gate.h"
#include "t.h"
#include "tload.h"

/* A set of `rounds` rounds of n samples each: base + step * j, and the last
 * `stalls` samples of round 0 replaced by `stall`. */
static void fill(struct loadci_set *s, size_t rounds, size_t n, double base, double step,
		 size_t stalls, double stall)
{
	size_t r, j;

	loadci_set_reset(s);
	for (r = 0; r < rounds; r++) {
		for (j = 0; j < n; j++)
			CHECK(loadci_set_add(s, r == 0 && j >= n - stalls ? stall : base + step * (double)j));
		CHECK(loadci_set_end_round(s));
	}
}

/* Round r of `s` scaled by f[r]: n samples base * f[r] + step * j. */
static void fill_scaled(struct loadci_set *s, size_t rounds, size_t n, double base, double step,
			const double *f)
{
	size_t r, j;

	loadci_set_reset(s);
	for (r = 0; r < rounds; r++) {
		for (j = 0; j < n; j++)
			CHECK(loadci_set_add(s, (base + step * (double)j) * f[r]));
		CHECK(loadci_set_end_round(s));
	}
}

static void test_statistics(void)
{
	struct loadci_set a = {0}, b = {0};
	struct loadci_rule p50 = {50, 1.1, 1, 1.0}, p95 = {95, 1.15, 1, 1.0};
	struct loadci_rule tps = {0, 0.9, 0, 1.0};
	static const double fa[] = {1.0, 1.05, 0.95}, fb[] = {0.95 * 1.12, 1.05 * 1.12, 1.0 * 1.12};
	struct loadci_result q;

	/* identical samples pass, with an interval around 1 */
	fill(&a, 3, 64, 100, 0.5, 0, 0);
	fill(&b, 3, 64, 100, 0.5, 0, 0);
	CHECK(loadci_judge(&a, &b, &p50, &q) && q.verdict == LOADCI_PASS);
	CHECK(q.ratio == 1 && q.lo <= 1 && q.hi >= 1 && q.mde < 0.1);
	/* a clear 25% shift with tight samples fails: the interval is beyond T */
	fill(&b, 3, 64, 125, 0.625, 0, 0);
	CHECK(loadci_judge(&a, &b, &p50, &q) && q.verdict == LOADCI_FAIL);
	CHECK(fabs(q.ratio - 1.25) < 0.01 && q.lo > 1.1);
	/* 12% up with rounds 5% apart: beyond 1 and past T as a point, but the
	 * interval holds T: underpowered, not failed; more data would decide */
	fill_scaled(&a, 3, 64, 100, 0.5, fa);
	fill_scaled(&b, 3, 64, 100, 0.5, fb);
	CHECK(loadci_judge(&a, &b, &p50, &q) && q.ratio > 1.1 && q.lo > 1 && q.lo < 1.1 && q.hi > 1.1);
	CHECK(q.verdict == LOADCI_UNDERPOWERED && q.more > 1 && isfinite(q.more));
	CHECK(q.noise == LOADCI_NOISE_ROUNDS);
	/* two stalls in 32 requests, one round each: no spread to judge by */
	fill(&a, 1, 32, 100, 1, 0, 0);
	fill(&b, 1, 32, 100, 1, 2, 400);
	CHECK(loadci_judge(&a, &b, &p95, &q) && q.ratio > 1.5);
	CHECK(q.verdict == LOADCI_UNDERPOWERED && q.one_round && q.noise == LOADCI_NOISE_MODE);
	/* 6 -> 7 ms, every sample: +17% and certain, but within the 1 ms floor */
	fill(&a, 3, 16, 6, 0, 0, 0);
	fill(&b, 3, 16, 7, 0, 0, 0);
	CHECK(loadci_judge(&a, &b, &p50, &q) && q.verdict == LOADCI_PASS && q.floored);
	CHECK(fabs(q.ratio - 7.0 / 6.0) < 1e-9);
	/* ... and 6 -> 8 ms is beyond it */
	fill(&b, 3, 16, 8, 0, 0, 0);
	CHECK(loadci_judge(&a, &b, &p50, &q) && q.verdict == LOADCI_FAIL && !q.floored);
	/* per-round throughput: rounds that agree, 30% down, fail */
	fill(&a, 3, 1, 1000, 0, 0, 0);
	a.v[1] = 1010, b.n = 0;
	fill(&b, 3, 1, 700, 0, 0, 0);
	b.v[2] = 705;
	CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_FAIL && q.hi < 0.9);
	/* rounds that disagree (+-30%) at 5% down: underpowered, more rounds */
	b.v[0] = 650, b.v[1] = 950, b.v[2] = 1300;
	CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_UNDERPOWERED && q.more > 1);
	/* 30% down in two rounds, 5% in the third: the interval is lopsided
	 * about the shift (0.70, 0.69-0.95) and holds T; deciding it takes more
	 * data, measured on the arm towards T, not on the half-width */
	b.v[0] = 700, b.v[1] = 710, b.v[2] = 950;
	CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_UNDERPOWERED);
	CHECK(q.ratio < 0.75 && q.lo < 0.75 && q.hi > 0.9 && q.more > 1 && isfinite(q.more));
	/* one round in a run: no spread, underpowered whatever the point says */
	fill(&b, 1, 1, 500, 0, 0, 0);
	CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_UNDERPOWERED && q.one_round);
	/* a collapse to 0 fails */
	fill(&b, 3, 1, 0, 0, 0, 0);
	CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_FAIL);
	/* a slow phase that holds B's last 20 of 30 rounds: in a row, the rounds
	 * move together and count as a few independent ones, so the 20% drop
	 * is not shown beyond T (underpowered, the phases named); the same
	 * rounds alternating do not move together and fail as before */
	{
		size_t i;

		loadci_set_reset(&a);
		loadci_set_reset(&b);
		for (i = 0; i < 30; i++) {
			CHECK(loadci_set_add(&a, 1000 + (double)(i % 3)) && loadci_set_end_round(&a));
			CHECK(loadci_set_add(&b, (i < 10 ? 1000 : 800) + (double)(i % 3)) &&
			      loadci_set_end_round(&b));
		}
		CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_UNDERPOWERED);
		CHECK(q.noise == LOADCI_NOISE_PHASES && q.rounds_b == 30 && q.worth_b < 10 && q.worth_a == 30);
		CHECK(q.ratio < 0.81 && q.lo < 0.81 && q.hi > 0.9);
		loadci_set_reset(&b);
		for (i = 0; i < 30; i++)
			CHECK(loadci_set_add(&b, (i % 3 == 0 ? 1000 : 800) + (double)(i % 3)) &&
			      loadci_set_end_round(&b));
		CHECK(loadci_judge(&a, &b, &tps, &q) && q.verdict == LOADCI_FAIL);
		CHECK(q.noise != LOADCI_NOISE_PHASES && q.worth_b == 30 && q.hi < 0.9);
		/* rounds that move together a little (lag-1 autocorrelation 0.44:
		 * worth 23 of 30) count as fewer, but the phases are not what
		 * dominates the noise: that takes two thirds or fewer */
		loadci_set_reset(&b);
		for (i = 0; i < 30; i++)
			CHECK(loadci_set_add(&b, 1000 + 50 * sin(1.1 * (double)i)) && loadci_set_end_round(&b));
		CHECK(loadci_judge(&a, &b, &tps, &q) && q.worth_b == 23 && q.noise != LOADCI_NOISE_PHASES);
		fill(&a, 3, 1, 1000, 0, 0, 0);
	}
	/* no sample, or A at 0: no judgement */
	loadci_set_reset(&b);
	CHECK(!loadci_judge(&a, &b, &tps, &q));
	CHECK(!loadci_judge(&b, &a, &tps, &q));
	loadci_set_release(&a);
	loadci_set_release(&b);
}

/* A run's estimate: the median of its rounds' logs and the half-width of its
 * interval against itself; the sizing rule; the Mann-Whitney ranks against
 * the tables (k - 1 is the one-sided 5% critical value of U). */
static void test_estimate(void)
{
	struct loadci_set s = {0};
	struct loadci_est e;
	static const double same[] = {1, 1, 1, 1}, apart[] = {1, 1.3, 0.8, 1.2};
	size_t i;

	CHECK_EQ_LONG((long)loadci_mw_rank(3, 3, 0.05), 1);
	CHECK_EQ_LONG((long)loadci_mw_rank(2, 2, 0.05), 0);
	CHECK_EQ_LONG((long)loadci_mw_rank(5, 5, 0.05), 5);
	CHECK_EQ_LONG((long)loadci_mw_rank(10, 10, 0.05), 28);
	CHECK_EQ_LONG((long)loadci_mw_rank(4, 7, 0.05), 5);
	CHECK_EQ_LONG((long)loadci_mw_rank(20, 30, 0.05), 217);
	/* the normal approximation past the exact counts lands near them */
	i = loadci_mw_rank(100, 101, 0.05);
	CHECK(i > 4300 && i < 4400);
	loadci_set_reset(&s);
	for (i = 1; i <= 3; i++) {
		CHECK(loadci_set_add(&s, exp(0.1 * (double)i)));
		CHECK(loadci_set_end_round(&s));
	}
	/* 3 rounds against themselves: the range of the differences, +-0.2 */
	CHECK(loadci_estimate(&s, 0, &e) && fabs(e.log - 0.2) < 1e-12);
	CHECK(fabs(e.half - 0.2) < 1e-12 && e.rounds == 3);
	/* the same 32 requests in every round: no spread, yet four rounds are
	 * too few to stop on (they may all have missed a slow phase); ten do */
	fill_scaled(&s, 4, 32, 10, 1, same);
	CHECK(loadci_estimate(&s, 50, &e) && e.half < 1e-12 && e.sd < 1e-12);
	CHECK(fabs(exp(e.log) - (10 + 15.5)) < 1e-9); /* linear median of 10..41 */
	CHECK(!loadci_settled(&e, 1.1));
	/* ten rounds, one of them 30% slow (a slow phase): the rounds' sd
	 * (0.083), bounded above at 80% from 9 degrees of freedom (x 1.29,
	 * 0.107), asks for 2 (3.97 x 0.107 / log 1.1)^2 = 40 rounds. One of
	 * them 15% slow: the sd (0.044) would ask for 7, its bound (0.057) for
	 * 11, so ten rounds do not settle it */
	{
		double ten[LOADCI_SETTLE_MIN], one_slow[LOADCI_SETTLE_MIN];

		for (i = 0; i < LOADCI_SETTLE_MIN; i++)
			ten[i] = 1, one_slow[i] = i == 4 ? 1.3 : 1;
		fill_scaled(&s, LOADCI_SETTLE_MIN, 32, 10, 1, ten);
		CHECK(loadci_estimate(&s, 50, &e) && loadci_settled(&e, 1.1));
		fill_scaled(&s, LOADCI_SETTLE_MIN, 32, 10, 1, one_slow);
		CHECK(loadci_estimate(&s, 50, &e) && fabs(e.sd - log(1.3) / sqrt(10)) < 1e-9);
		CHECK(!loadci_settled(&e, 1.1) && loadci_settled(&e, 1.3));
		one_slow[4] = 1.15;
		fill_scaled(&s, LOADCI_SETTLE_MIN, 32, 10, 1, one_slow);
		CHECK(loadci_estimate(&s, 50, &e) && fabs(e.sd - log(1.15) / sqrt(10)) < 1e-9);
		CHECK(e.worth == LOADCI_SETTLE_MIN && !loadci_settled(&e, 1.1));
		CHECK(loadci_settled(&e, 1.15));
	}
	/* 30 rounds, 10 of them 15% slow: their sd (0.067), bounded above
	 * (0.076 from 29 degrees of freedom), asks for 2 (3.97 x 0.076 /
	 * log 1.1)^2 = 20 independent rounds; the slow ones spread out settle,
	 * the same ones in a row (a slow phase) count as fewer and do not */
	{
		double spread[30], in_row[30];

		for (i = 0; i < 30; i++)
			spread[i] = i % 3 ? 1 : 1.15, in_row[i] = i < 10 ? 1.15 : 1;
		fill_scaled(&s, 30, 32, 10, 1, spread);
		CHECK(loadci_estimate(&s, 50, &e) && e.worth == 30 && loadci_settled(&e, 1.1));
		fill_scaled(&s, 30, 32, 10, 1, in_row);
		CHECK(loadci_estimate(&s, 50, &e) && e.worth < 16 && !loadci_settled(&e, 1.1));
		CHECK(loadci_settled(&e, 1.3));
	}
	/* rounds 20-30% apart: a spread no run of four can size itself past */
	fill_scaled(&s, 4, 32, 10, 1, apart);
	CHECK(loadci_estimate(&s, 50, &e) && e.half > 0.1 && !loadci_settled(&e, 1.1));
	CHECK(e.noise == LOADCI_NOISE_ROUNDS);
	/* one round: no interval, never settled */
	fill_scaled(&s, 1, 32, 10, 1, same);
	CHECK(loadci_estimate(&s, 95, &e) && isinf(e.half) && !loadci_settled(&e, 1.15));
	loadci_set_release(&s);
}

/* A level of a load run: `rounds` rounds of `n` requests at concurrency c
 * (rate r when r > 0), TTFT ttft + jit ms * j, 40 tokens at `tpot` ms, sent
 * `gap` ms apart; request `bad` (over the whole level, -1 = none) fails;
 * round k's TTFT and TPOT times slow[k - 1] (none: 1). */
struct level { const char *id; int c; double r; int rounds, n; double ttft, jit, tpot, gap; int bad; const double *slow; };

static void add_level(cJSON *recs, const struct level *l, int level)
{
	int k, j, i = 0;
	char buf[512];

	for (k = 1; k <= l->rounds; k++)
		for (j = 0; j < l->n; j++, i++) {
			double f = l->slow ? l->slow[k - 1] : 1;
			double t = (l->ttft + l->jit * j) * f, sent = l->gap * j, tpot = l->tpot * f;
			double e2e = t + tpot * 39;
			snprintf(buf, sizeof(buf),
				 "{\"case\":\"%s\",\"repeat\":%d,\"seed\":null,\"verdict\":\"%s\",\"load\":{%s%g,"
				 "\"level\":%d,\"round\":%d,\"index\":%d,\"sent_ms\":%g,\"scheduled_ms\":%g},"
				 "\"timing\":{\"ttft_ms\":%g,\"ttfc_ms\":%g,\"tpot_ms\":%g,\"e2e_ms\":%g},"
				 "\"usage\":{\"completion_tokens\":40}}",
				 l->id, i, i == l->bad ? "fail" : "pass", l->r > 0 ? "\"rate\":" : "\"concurrency\":",
				 l->r > 0 ? l->r : l->c, level, k, j, sent, sent, t, t, tpot, e2e);
			cJSON_AddItemToArray(recs, cJSON_Parse(buf));
		}
}

/* A comparison of A and B as gate_eval reads it: the runs' load cells, the
 * records, and one entry per cell of B in "load". */
struct cmp {
	struct diff_result res;
	cJSON *ra, *rb;
	struct loadcells_reqs qa, qb;
};

static void cmp_make(struct cmp *c, const struct level *a, size_t na, const struct level *b,
		     size_t nb)
{
	struct diag d;
	size_t i;

	diag_init(&d);
	memset(c, 0, sizeof(*c));
	c->ra = cJSON_CreateArray();
	c->rb = cJSON_CreateArray();
	for (i = 0; i < na; i++)
		add_level(c->ra, &a[i], (int)i);
	for (i = 0; i < nb; i++)
		add_level(c->rb, &b[i], (int)i);
	tload_reqs(c->ra, &c->qa);
	tload_reqs(c->rb, &c->qb);
	CHECK(loadcells_build(&c->qa, &c->res.a.load, &d) == ERR_OK && c->res.a.load.n);
	CHECK(loadcells_build(&c->qb, &c->res.b.load, &d) == ERR_OK && c->res.b.load.n);
	c->res.diff = cJSON_CreateObject();
	c->res.cells = calloc(nb, sizeof(*c->res.cells));
	CHECK(c->res.cells != NULL);
	for (i = 0; c->res.cells && i < c->res.b.load.n; i++) {
		char name[320];
		struct diff_cell *dc = &c->res.cells[c->res.ncells++];
		loadcells_name(&c->res.b.load.c[i], name, sizeof(name));
		dc->a = loadcells_find(&c->res.a.load, name);
		dc->b = dc->named = &c->res.b.load.c[i];
	}
	cJSON_AddArrayToObject(c->res.diff, "gates");
	cJSON_AddArrayToObject(c->res.diff, "load"); /* stands for the cells, as in diff_runs */
	c->res.reqs_a = &c->qa;
	c->res.reqs_b = &c->qb;
}

static void cmp_free(struct cmp *c)
{
	cJSON_Delete(c->res.diff);
	for (size_t i = 0; i < c->res.ncells; i++)
		free(c->res.cells[i].gates);
	free(c->res.cells);
	loadcells_free(&c->res.a.load);
	loadcells_free(&c->res.b.load);
	loadcells_reqs_free(&c->qa);
	loadcells_reqs_free(&c->qb);
	cJSON_Delete(c->ra);
	cJSON_Delete(c->rb);
}

/* The verdict of `spec` on the comparison, its value and detail. */
static enum gate_verdict eval(struct cmp *c, const char *spec, double *v, const char **why)
{
	struct gate g[GATE_CUTOVER_N];
	enum gate_verdict out = GATE_PASS, one;
	const cJSON *last;
	struct diag d;
	size_t i, n = 0;

	diag_init(&d);
	CHECK(gate_expand(spec, g, GATE_CUTOVER_N, &n, &d) == ERR_OK && n >= 1);
	for (i = 0; i < n; i++) {
		CHECK(gate_eval(&c->res, &g[i], 0, &one, &d) == ERR_OK);
		out = one > out ? one : out;
	}
	last = cJSON_GetArrayItem(cJSON_GetObjectItem(c->res.diff, "gates"), -1 + cJSON_GetArraySize(cJSON_GetObjectItem(c->res.diff, "gates")));
	*v = cJSON_IsNumber(cJSON_GetObjectItem(last, "value")) ? cJSON_GetObjectItem(last, "value")->valuedouble : NAN;
	*why = cJSON_GetObjectItem(last, "detail")->valuestring;
	return out;
}

/* diff["load"] as the comparison's JSON prints it; the caller deletes the
 * document *doc. */
static const cJSON *printed_load(struct cmp *c, cJSON **doc)
{
	struct buf out;
	struct diag d;

	diag_init(&d);
	buf_init(&out, 1 << 24);
	CHECK(diff_print_json(&c->res, &out, NULL, &d) == ERR_OK);
	*doc = cJSON_ParseWithLength(out.data, out.len);
	CHECK(*doc != NULL);
	buf_release(&out);
	return cJSON_GetObjectItem(*doc, "load");
}

/* The verdict of cell `name` ("" when no gate judged it), as its entry of
 * diff["load"] states it too. */
static const char *entry_verdict(struct cmp *c, const char *name)
{
	const cJSON *en, *v = NULL, *load;
	cJSON *doc = NULL;
	char n[320];
	size_t i;

	load = printed_load(c, &doc);
	for (i = 0; i < c->res.ncells; i++) {
		loadcells_name(c->res.cells[i].named, n, sizeof(n));
		if (!strcmp(n, name))
			break;
	}
	CHECK(i < c->res.ncells);
	en = cJSON_GetArrayItem(load, (int)i);
	v = cJSON_GetObjectItem(en, "verdict");
	CHECK(en && !strcmp(cJSON_GetObjectItem(en, "level")->valuestring, strrchr(name, '/') + 1));
	CHECK(i < c->res.ncells && c->res.cells[i].judged == cJSON_IsString(v));
	cJSON_Delete(doc);
	if (i == c->res.ncells || !c->res.cells[i].judged)
		return "";
	return gate_verdict_name(c->res.cells[i].verdict);
}

static void test_gates(void)
{
	/* A: m at C1 and C32, r at 0.3 req/s; B: C32 30% slower tokens (fewer
	 * tokens/s), r lost a round to a failed request */
	const struct level a[] = {{"m", 1, 0, 3, 32, 100, 0.5, 10, 20, -1}, {"m", 32, 0, 3, 32, 400, 0.5, 20, 5, -1},
				  {"r", 0, 0.3, 3, 16, 50, 0.5, 5, 3000, -1}};
	const struct level b[] = {{"m", 1, 0, 3, 32, 100, 0.5, 10, 20, -1}, {"m", 32, 0, 3, 32, 400, 0.5, 29, 5, -1},
				  {"r", 0, 0.3, 3, 16, 50, 0.5, 5, 3000, 20}};
	struct cmp c;
	const char *why;
	double v = 0;

	cmp_make(&c, a, 3, b, 3);
	CHECK(eval(&c, "output_tps_ratio@m/c1>=0.9", &v, &why) == GATE_PASS && fabs(v - 1) < 1e-9);
	CHECK(eval(&c, "output_tps_ratio@m/c32>=0.9", &v, &why) == GATE_FAIL && v < 0.85);
	CHECK(strstr(why, "m/c32 0.") != NULL);
	/* no @: every cell; the worst is reported, the failing cell named */
	CHECK(eval(&c, "output_tps_ratio>=0.9", &v, &why) == GATE_FAIL && v < 0.85);
	CHECK(strstr(why, "m/c32") && !strstr(why, "m/c1"));
	CHECK(!strcmp(entry_verdict(&c, "m/c32"), "fail") && !strcmp(entry_verdict(&c, "m/c1"), "pass"));
	CHECK(eval(&c, "ttft_p95_ratio@m<=1.15", &v, &why) == GATE_PASS && fabs(v - 1) < 1e-9);
	CHECK(eval(&c, "success_rate@r/r0.30>=1", &v, &why) == GATE_FAIL); /* 0.30 is 0.3 */
	CHECK(eval(&c, "slo_attainment@r/r0.3>=0.9", &v, &why) == GATE_PASS && v > 0.9);
	CHECK(eval(&c, "output_tps@nope>=1", &v, &why) == GATE_FAIL && strstr(why, "no load cell matches 'nope'"));
	cmp_free(&c);
	/* the same run against itself passes the cutover rule, SLO gates included */
	cmp_make(&c, a, 3, a, 3);
	CHECK(eval(&c, "cutover", &v, &why) == GATE_PASS);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(c.res.diff, "gates")) == GATE_CUTOVER_N);
	cmp_free(&c);
	/* a cell with no valid round fails its gates, whatever the figures say */
	{
		const struct level bad[] = {{"m", 1, 0, 1, 8, 100, 0.5, 10, 20, 3}};
		cmp_make(&c, a, 1, bad, 1);
		CHECK(eval(&c, "output_tps_ratio@m/c1>=0.9", &v, &why) == GATE_FAIL && strstr(why, "invalid in B"));
		cmp_free(&c);
	}
	/* a cell of B that A lacks fails ratio gates */
	cmp_make(&c, a, 1, a, 2);
	CHECK(eval(&c, "output_tps_ratio>=0.9", &v, &why) == GATE_FAIL && strstr(why, "m/c32 not in A"));
	cmp_free(&c);
}

static void test_noise(void)
{
	/* TTFT 6 -> 7 ms: within the floor, the cutover's TTFT gates pass and say so */
	const struct level a[] = {{"m", 1, 0, 3, 32, 6, 0, 10, 20, -1}};
	const struct level b[] = {{"m", 1, 0, 3, 32, 7, 0, 10, 20, -1}};
	/* 8 requests a round: the P95 is a round's maximum */
	const struct level a8[] = {{"m", 4, 0, 1, 8, 100, 0.5, 10, 20, -1}};
	const struct level b8[] = {{"m", 4, 0, 1, 8, 110, 0.5, 10, 20, -1}};
	const cJSON *g, *load;
	cJSON *doc = NULL;
	struct diag d;
	struct cmp c;
	const char *why;
	double v = 0;

	diag_init(&d);
	cmp_make(&c, a, 1, b, 1);
	CHECK(eval(&c, "ttft_p50_ratio<=1.1", &v, &why) == GATE_PASS && v > 1.1);
	CHECK(strstr(why, "floor") != NULL);
	CHECK(c.res.cells[0].ngates == 1 && strstr(c.res.cells[0].gates[0].advice, "floor"));
	cmp_free(&c);
	/* one round of 8: throughput cannot be judged, underpowered with advice */
	cmp_make(&c, a8, 1, b8, 1);
	CHECK(eval(&c, "output_tps_ratio>=0.9", &v, &why) == GATE_UNDERPOWERED);
	CHECK(strstr(why, "underpowered") && strstr(why, "rounds"));
	CHECK(!strcmp(entry_verdict(&c, "m/c4"), "underpowered"));
	load = printed_load(&c, &doc);
	g = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(load, 0), "gates"), 0);
	CHECK(g && !strcmp(cJSON_GetObjectItem(g, "verdict")->valuestring, "underpowered") &&
	      cJSON_IsNull(cJSON_GetObjectItem(g, "mde")));
	cJSON_Delete(doc);
	cmp_free(&c);
}

/* The rounds count an underpowered cell's advice asks for ("about N valid
 * rounds in each run"), or -1. */
static int asked_rounds(const char *why)
{
	const char *p = strstr(why, "about ");
	int n, end;

	for (; p; p = strstr(p + 1, "about ")) {
		end = 0;
		if (sscanf(p, "about %d valid rounds%n", &n, &end) == 1 && end > 0)
			return n;
	}
	return -1;
}

/* The output throughput gate on one C1 level of `rounds` rounds a run,
 * round k of A slowed by fa[k - 1] and of B by fb[k - 1]: underpowered, and
 * the cell's advice (valid until cmp_free). */
static const char *underpowered(struct cmp *c, int rounds, const double *fa, const double *fb)
{
	const struct level a[] = {{"m", 1, 0, rounds, 32, 20, 0.2, 10, 0, -1, fa}};
	const struct level b[] = {{"m", 1, 0, rounds, 32, 20, 0.2, 10, 0, -1, fb}};
	const char *why = "";
	double v = 0;

	cmp_make(c, a, 1, b, 1);
	CHECK(eval(c, "output_tps_ratio>=0.9", &v, &why) == GATE_UNDERPOWERED);
	return why;
}

/* What an underpowered cell says: what dominates its noise and what would
 * settle it, in rounds and in time at the measured pace, never more rounds
 * than a run can spend. */
static void test_advice(void)
{
	static const double quiet[30] = {1, 1.01, 0.99, 1, 1.01, 0.99, 1, 1.01, 0.99, 1, 1.01, 0.99, 1, 1.01, 0.99,
					 1, 1.01, 0.99, 1, 1.01, 0.99, 1, 1.01, 0.99, 1, 1.01, 0.99, 1, 1.01, 0.99};
	static const double apart_a[] = {1, 1.15, 0.88, 1.1, 0.92}, apart_b[] = {1.08, 0.9, 1.12, 0.94, 1.03};
	static const double wild_a[] = {1, 1.6, 0.6}, wild_b[] = {1.5, 0.65, 1.1};
	double phase[30], slower[30];
	struct cmp c;
	const char *why;
	int i, n;

	for (i = 0; i < 30; i++)
		phase[i] = quiet[i] * (i < 10 ? 1 : 1.25), slower[i] = 1.11 * (1 + 0.02 * sin(1.3 * i));
	/* rounds 8-15% apart, five a run: the rounds' spread decides; the advice
	 * asks for more rounds, fewer than a run can spend, with their time */
	why = underpowered(&c, 5, apart_a, apart_b);
	CHECK(strstr(why, "the rounds disagree (drift or slow phases)") != NULL);
	n = asked_rounds(why);
	CHECK(n > 5 && n <= 30 && strstr(why, "(now 5; about ") && strstr(why, " more a run at "));
	cmp_free(&c);
	/* rounds 40-60% apart, three a run: more than 30 rounds would be
	 * needed; it says it cannot be settled on this server, and why */
	why = underpowered(&c, 3, wild_a, wild_b);
	CHECK(strstr(why, "cannot be settled within 30 rounds a run on this server: the rounds disagree") != NULL);
	CHECK(asked_rounds(why) == -1);
	cmp_free(&c);
	/* B's last 20 of 30 rounds in one slow phase: the rounds move together,
	 * the advice says how few independent rounds they are worth, and that
	 * more rounds of this run would not settle it */
	why = underpowered(&c, 30, quiet, phase);
	CHECK(strstr(why, "cannot be settled within 30 rounds a run on this server: the rounds move together "
			  "in slow phases") && strstr(why, "(30 and 30 rounds count as about 30 and "));
	CHECK(asked_rounds(why) == -1);
	cmp_free(&c);
	/* two runs steady to within 2%, 10% apart: each is precise, their
	 * difference is the threshold's size; the advice says the runs disagree */
	why = underpowered(&c, 30, quiet, slower);
	CHECK(strstr(why, "the runs disagree by -10%, about the threshold's size (each is precise to about ") != NULL);
	cmp_free(&c);
}

static void test_parse(void)
{
	struct gate g[GATE_CUTOVER_N];
	struct diag d;
	size_t n;

	diag_init(&d);
	CHECK(gate_parse("ttft_p95_ratio<=1.15", &g[0], &d) == ERR_OK);
	CHECK(gate_parse("output_tps_ratio@load-1k-128/c32>=0.9", &g[0], &d) == ERR_OK &&
	      !strcmp(g[0].arg, "load-1k-128/c32"));
	CHECK(gate_parse("ttft_p50_ratio<=1.2", &g[0], &d) == ERR_OK); /* also a latency gate */
	CHECK(gate_is_load("success_rate") && gate_is_load("goodput_ratio") && !gate_is_load("pass_rate"));
	CHECK(gate_expand("cutover", g, GATE_CUTOVER_N, &n, &d) == ERR_OK && n == GATE_CUTOVER_N);
	CHECK(!g[0].slo_only && g[5].slo_only && g[0].cutover && g[7].cutover);
	CHECK(!strcmp(g[6].name, "no_new_failures") && !strcmp(g[7].name, "recall_delta") && !g[7].arg[0]);
	CHECK(gate_parse("recall_delta>=0", &g[0], &d) == ERR_OK && !g[0].cutover);
	CHECK(gate_expand("cutover", g, 2, &n, &d) == ERR_LIMIT);
}

int main(void)
{
	json_init();
	T_RUN(test_statistics);
	T_RUN(test_estimate);
	T_RUN(test_gates);
	T_RUN(test_noise);
	T_RUN(test_advice);
	T_RUN(test_parse);
	return T_DONE();
}
