/*
 * Unit tests of fungate: a case's p-value and the repeats that would settle
 * it on values worked out exactly (Python's fractions: integer Beta
 * parameters make every term rational), and gate_eval of no_new_failures,
 * pass_rate_delta and recall_delta on comparisons of 12 cases x 3 sampled
 * repeats built by hand: the same model twice passes, a model wrong half the
 * time fails, one task always wrong is underpowered with its advice, a hard
 * flip fails whatever the samples say, and without samples the point rule
 * stands.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "report/casetab.h"
#include "report/diff.h"
#include "report/fungate.h"
#include "report/gate.h"
#include "t.h"

#define NC 12

/* Prior Beta(9, 1); A 3 of 3, B 1 of 3: P(B <= 1) = 1/35 exactly; at the
 * same proportions 9 repeats (A 9/9, B 3/9) bring it below 0.005 / 12. */
static void test_case_p(void)
{
	CHECK(fabs(fungate_case_p(3, 1, 3, 9, 1) - 1.0 / 35) < 1e-12);
	CHECK_EQ_LONG(fungate_case_repeats(3, 1, 3, 9, 1, 12), 9);
	/* B no worse than A: nothing to settle */
	CHECK_EQ_LONG(fungate_case_repeats(2, 2, 3, 9, 1, 12), 0);
	/* a difference too small to settle within FUNGATE_REPEATS_MAX */
	CHECK_EQ_LONG(fungate_case_repeats(60, 59, 60, 9, 1, 12), 0);
}

/* A comparison of NC cases, A's and B's sampled passes of 3 each (`sampled`
 * 0: no temperature), with one pass->fail flip per case where B has fewer
 * passes, marked sampled unless `hard`. */
static void make(struct diff_result *res, const int *ka, const int *kb, int sampled, int hard)
{
	char id[16];
	cJSON *pf, *f;
	size_t i;
	int a = 0, b = 0;

	memset(res, 0, sizeof(*res));
	casetab_init(&res->a.cases);
	casetab_init(&res->b.cases);
	res->diff = cJSON_CreateObject();
	pf = cJSON_AddArrayToObject(cJSON_AddObjectToObject(res->diff, "flips"), "pass_to_fail");
	res->cases = calloc(NC, sizeof(*res->cases));
	res->ncases = res->capcases = NC;
	for (i = 0; i < NC; i++) {
		snprintf(id, sizeof(id), "c%zu", i);
		CHECK(casetab_of(&res->b.cases, id, "chat") != NULL);
		res->cases[i] = (struct diff_case){i, 3, (size_t)ka[i], (size_t)kb[i], sampled ? 3 : 0,
						   sampled ? (size_t)ka[i] : 0, sampled ? (size_t)kb[i] : 0};
		a += ka[i], b += kb[i];
		if (kb[i] < ka[i]) {
			f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "case", id);
			if (sampled && !hard)
				cJSON_AddTrueToObject(f, "sampled");
			cJSON_AddItemToArray(pf, f);
		}
	}
	f = cJSON_AddObjectToObject(res->diff, "overall");
	cJSON_AddNumberToObject(f, "only_b_failed", 0);
	cJSON_AddNumberToObject(f, "matched_delta", (b - a) / (3.0 * NC));
	cJSON_AddItemToObject(f, "recall_sampled", cJSON_CreateBool(sampled));
	cJSON_AddArrayToObject(res->diff, "gates");
}

/* gate_eval of `spec` on res: the verdict; *gate the gate's JSON. */
static enum gate_verdict judge(struct diff_result *res, const char *spec, const cJSON **gate)
{
	struct gate g;
	struct diag d;
	enum gate_verdict v = GATE_PASS;
	const cJSON *gates = cJSON_GetObjectItem(res->diff, "gates");

	diag_init(&d);
	CHECK(gate_parse(spec, &g, &d) == ERR_OK);
	CHECK(gate_eval(res, &g, GATE_ALLOW_INCOMPLETE | GATE_ALLOW_MISSING, &v, &d) == ERR_OK);
	*gate = cJSON_GetArrayItem(gates, cJSON_GetArraySize(gates) - 1);
	return v;
}

static void release(struct diff_result *res)
{
	cJSON_Delete(res->diff);
	casetab_release(&res->a.cases);
	casetab_release(&res->b.cases);
	free(res->cases);
}

static const int base[NC] = {3, 3, 2, 3, 3, 3, 3, 3, 2, 3, 3, 3};        /* 34/36 */
static const int same[NC] = {3, 2, 3, 3, 3, 3, 3, 3, 3, 2, 3, 3};        /* 34/36 */
static const int half[NC] = {2, 1, 2, 1, 2, 1, 2, 1, 2, 2, 1, 1};        /* 18/36 */
static const int one[NC] = {0, 3, 2, 3, 3, 3, 3, 3, 2, 3, 3, 3};         /* c0 always wrong */

static void test_no_new_failures(void)
{
	struct diff_result res;
	const cJSON *g, *c;

	make(&res, base, same, 1, 0);
	CHECK(judge(&res, "no_new_failures", &g) == GATE_PASS);
	CHECK(jget_num(g, "value") == 0 && !jget(g, "cases"));
	CHECK(strstr(jget(g, "detail")->valuestring, "12 cases, 36 matched attempts, A 34/36, B 34/36"));
	CHECK(strstr(jget(g, "detail")->valuestring, "12 within sampling"));
	release(&res);

	make(&res, base, half, 1, 0);
	CHECK(judge(&res, "no_new_failures", &g) == GATE_FAIL);
	CHECK(jget_num(g, "value") == 10); /* the 10 cases B does worse on flipped once */
	release(&res);

	make(&res, base, one, 1, 0);
	CHECK(judge(&res, "no_new_failures", &g) == GATE_UNDERPOWERED);
	c = cJSON_GetArrayItem(jget(g, "cases"), 0);
	CHECK(cJSON_GetArraySize(jget(g, "cases")) == 1);
	CHECK(!strcmp(jget(c, "case")->valuestring, "c0") && !strcmp(jget(c, "verdict")->valuestring, "underpowered"));
	CHECK(jget_num(c, "a_pass") == 3 && jget_num(c, "b_pass") == 0 && jget_num(c, "n") == 3);
	CHECK(jget_num(c, "p") < FUNGATE_SUSPECT && jget_num(c, "p_holm") >= FUNGATE_CASE_ALPHA);
	CHECK(jget_num(c, "repeats") > 3 && jget_num(c, "repeats") <= FUNGATE_REPEATS_MAX);
	CHECK(strstr(jget(g, "detail")->valuestring, "underpowered c0: A 3/3, B 0/3"));
	CHECK(strstr(jget(g, "detail")->valuestring, "repeats of it in each run would settle it (now 3)"));
	release(&res);

	/* the same counts with the flip a transport failure: a hard fail */
	make(&res, base, same, 1, 1);
	CHECK(judge(&res, "no_new_failures", &g) == GATE_FAIL);
	CHECK(jget_num(g, "value") == 2);
	release(&res);

	/* no temperature: every flip counts, as it always did */
	make(&res, base, same, 0, 0);
	CHECK(judge(&res, "no_new_failures", &g) == GATE_FAIL);
	CHECK(strstr(jget(g, "detail")->valuestring, "no sampled attempt"));
	release(&res);
	make(&res, base, base, 0, 0);
	CHECK(judge(&res, "no_new_failures", &g) == GATE_PASS);
	release(&res);
}

static void test_deltas(void)
{
	struct diff_result res;
	const cJSON *g;
	cJSON *row;

	make(&res, base, same, 1, 0);
	CHECK(judge(&res, "pass_rate_delta>=0", &g) == GATE_PASS);
	release(&res);
	make(&res, base, half, 1, 0);
	CHECK(judge(&res, "pass_rate_delta>=-0.05", &g) == GATE_FAIL);
	CHECK(fabs(jget_num(g, "value") - (18 - 34) / 36.0) < 1e-12);
	release(&res);
	/* A 34/36, B 30/36 against >= 0: D -0.111, standard error about 0.08:
	 * p about 0.09: passes; 29/36 (p about 0.049): underpowered, with the
	 * repeats that would settle it */
	{
		int b30[NC] = {3, 2, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3}, b29[NC] = {3, 2, 2, 2, 2, 3, 2, 3, 2, 3, 2, 3};
		make(&res, base, b30, 1, 0);
		CHECK(judge(&res, "pass_rate_delta>=0", &g) == GATE_PASS);
		release(&res);
		make(&res, base, b29, 1, 0);
		CHECK(judge(&res, "pass_rate_delta>=0", &g) == GATE_UNDERPOWERED);
		CHECK(strstr(jget(g, "detail")->valuestring, "repeats a case would settle it (now 3)"));
		release(&res);
	}
	/* no samples: the point rule (a delta of -0.111 fails >= 0) */
	make(&res, base, same, 0, 0);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(res.diff, "overall"), "matched_delta", cJSON_CreateNumber(-0.111));
	CHECK(judge(&res, "pass_rate_delta>=0", &g) == GATE_FAIL);
	CHECK(!strcmp(jget(g, "detail")->valuestring, "value -0.111"));
	release(&res);

	/* recall at one depth, every recall attempt sampled: 45/50 against 44/50
	 * passes, 25/50 fails; not sampled, 44/50 fails recall_delta@50>=0 */
	make(&res, base, base, 1, 0);
	row = cJSON_CreateObject();
	cJSON_AddNumberToObject(row, "depth", 50);
	cJSON_AddItemToObject(row, "a", cJSON_Parse("{\"pass\": 45, \"total\": 50, \"rate\": 0.9}"));
	cJSON_AddItemToObject(row, "b", cJSON_Parse("{\"pass\": 44, \"total\": 50, \"rate\": 0.88}"));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(res.diff, "recall_by_depth"), row);
	CHECK(judge(&res, "recall_delta@50>=0", &g) == GATE_PASS);
	cJSON_ReplaceItemInObject(row, "b", cJSON_Parse("{\"pass\": 25, \"total\": 50, \"rate\": 0.5}"));
	CHECK(judge(&res, "recall_delta@50>=0", &g) == GATE_FAIL);
	cJSON_ReplaceItemInObject(row, "b", cJSON_Parse("{\"pass\": 44, \"total\": 50, \"rate\": 0.88}"));
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(res.diff, "overall"), "recall_sampled", cJSON_CreateFalse());
	CHECK(judge(&res, "recall_delta@50>=0", &g) == GATE_FAIL);
	release(&res);
}

int main(void)
{
	T_RUN(test_case_p);
	T_RUN(test_no_new_failures);
	T_RUN(test_deltas);
	return T_DONE();
}
