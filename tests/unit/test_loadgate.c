/* Unit tests of load gates: ratios cell by cell, cell picking, invalid cells,
 * and the cutover rule. */
#include <math.h>
#include <string.h>

#include "report/diff.h"
#include "base/json.h"
#include "report/loadgate.h"
#include "t.h"

static const char run_a[] = "{\"cells\": ["
	"{\"case\":\"m\",\"concurrency\":1,\"rounds_valid\":3,\"output_tps\":100,\"ttft_p50_ms\":100,"
	"\"ttft_p95_ms\":200,\"success_rate\":1},"
	"{\"case\":\"m\",\"concurrency\":32,\"rounds_valid\":3,\"output_tps\":1000,\"ttft_p50_ms\":400,"
	"\"ttft_p95_ms\":800,\"success_rate\":1},"
	"{\"case\":\"r\",\"rate\":0.3,\"rounds_valid\":3,\"output_tps\":30,\"ttft_p50_ms\":50,"
	"\"ttft_p95_ms\":90,\"success_rate\":1,\"slo_attainment\":0.95}]}";
/* B: C32 throughput 30% down, r0.3 lost a round to an empty 200 */
static const char run_b[] = "{\"cells\": ["
	"{\"case\":\"m\",\"concurrency\":1,\"rounds_valid\":3,\"output_tps\":101,\"ttft_p50_ms\":100,"
	"\"ttft_p95_ms\":210,\"success_rate\":1},"
	"{\"case\":\"m\",\"concurrency\":32,\"rounds_valid\":3,\"output_tps\":700,\"ttft_p50_ms\":420,"
	"\"ttft_p95_ms\":900,\"success_rate\":1},"
	"{\"case\":\"r\",\"rate\":0.3,\"rounds_valid\":2,\"output_tps\":30,\"ttft_p50_ms\":50,"
	"\"ttft_p95_ms\":90,\"success_rate\":0.995,\"slo_attainment\":0.94}]}";

static int eval(const cJSON *a, const cJSON *b, const char *spec, double *v, char *why)
{
	struct diff_gate g;
	struct diag d;
	int ok = -1;

	diag_init(&d);
	CHECK(diff_gate_parse(spec, &g, &d) == ERR_OK);
	if (d.code)
		fprintf(stderr, "%s\n", d.msg);
	(void)loadgate_eval(a, b, &g, &ok, v, why, 512);
	return ok;
}

static void test_gates(void)
{
	cJSON *a = cJSON_Parse(run_a), *b = cJSON_Parse(run_b), *none;
	char why[512];
	double v = 0;
	int i, failed = 0;

	CHECK(eval(a, b, "output_tps_ratio@m/c1>=0.9", &v, why) == 1 && fabs(v - 1.01) < 1e-9);
	CHECK(eval(a, b, "output_tps_ratio@m/c32>=0.9", &v, why) == 0 && fabs(v - 0.7) < 1e-9);
	CHECK(strstr(why, "m/c32 0.7") != NULL);
	/* no @: every cell; the worst is reported, the failing cell named */
	CHECK(eval(a, b, "output_tps_ratio>=0.9", &v, why) == 0 && fabs(v - 0.7) < 1e-9);
	CHECK(strstr(why, "m/c32") && !strstr(why, "m/c1"));
	CHECK(eval(a, b, "ttft_p95_ratio@m<=1.15", &v, why) == 1 && fabs(v - 1.125) < 1e-9);
	CHECK(eval(a, b, "success_rate@r/r0.30>=1", &v, why) == 0); /* 0.30 is 0.3 */
	CHECK(eval(a, b, "slo_attainment@r/r0.3>=0.9", &v, why) == 1 && fabs(v - 0.94) < 1e-9);
	CHECK(eval(a, b, "output_tps@nope>=1", &v, why) == 0 && strstr(why, "no load cell matches 'nope'"));
	/* an invalid cell fails its gates, whatever the figures say */
	cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "cells"), 0),
				  "rounds_valid", cJSON_CreateNumber(0));
	CHECK(eval(a, b, "output_tps_ratio@m/c1>=0.9", &v, why) == 0 && strstr(why, "invalid in B"));
	/* the same run against itself passes the cutover rule */
	for (i = 0; loadgate_cutover[i]; i++)
		failed += !eval(a, a, loadgate_cutover[i], &v, why);
	CHECK(failed == 0);
	none = cJSON_Parse("{\"cells\": []}");
	CHECK(eval(a, none, "success_rate>=1", &v, why) == 0);
	cJSON_Delete(none);
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static void test_parse(void)
{
	struct diff_gate g;
	struct diag d;

	diag_init(&d);
	CHECK(diff_gate_parse("ttft_p95_ratio<=1.15", &g, &d) == ERR_OK);
	CHECK(diff_gate_parse("output_tps_ratio@load-1k-128/c32>=0.9", &g, &d) == ERR_OK &&
	      !strcmp(g.arg, "load-1k-128/c32"));
	CHECK(diff_gate_parse("ttft_p50_ratio<=1.2", &g, &d) == ERR_OK); /* also a latency gate */
	CHECK(loadgate_known("success_rate") && !loadgate_known("pass_rate"));
}

int main(void)
{
	json_init();
	T_RUN(test_gates);
	T_RUN(test_parse);
	return T_DONE();
}
