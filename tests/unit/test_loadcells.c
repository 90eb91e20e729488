/* Unit tests of loadcells: summary cells from hand-made load records. */
#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "base/jget.h"
#include "base/json.h"
#include "load/loadcells.h"
#include "t.h"

#define REC(verdict, round, index, sent, ttfc, tpot, e2e, n)                          \
	"{\"case\":\"m\",\"verdict\":\"" verdict "\",\"load\":{\"concurrency\":2,"      \
	"\"level\":1,\"round\":" #round ",\"index\":" #index ",\"scheduled_ms\":" #sent \
	",\"sent_ms\":" #sent "},\"timing\":{\"ttfc_ms\":" #ttfc ",\"tpot_ms\":" #tpot  \
	",\"e2e_ms\":" #e2e "},\"usage\":{\"completion_tokens\":" #n "}}"

static const char records[] = "["
	REC("pass", 0, 0, 0, 5000, 10, 9000, 10) ","  /* warm-up: left out */
	REC("pass", 1, 0, 0, 100, 10, 200, 10) ","
	REC("pass", 1, 1, 0, 200, 20, 400, 10) ","
	REC("pass", 2, 0, 0, 100, 10, 200, 10) ","
	REC("fail", 2, 1, 0, null, null, 300, 0) ","  /* an empty 200 */
	"{\"case\":\"chat\",\"verdict\":\"pass\"}"     /* not a load record */
	"]";

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void test_cells(void)
{
	cJSON *recs = cJSON_Parse(records), *load = NULL;
	const cJSON *c, *r;
	struct diag d;
	struct buf md;

	diag_init(&d);
	CHECK(recs != NULL);
	CHECK(loadcells_build(recs, &load, &d) == ERR_OK);
	c = cJSON_GetArrayItem(jget(load, "cells"), 0);
	CHECK(cJSON_GetArraySize(jget(load, "cells")) == 1);
	CHECK(!strcmp(jget(c, "case")->valuestring, "m"));
	CHECK(NEAR(jget_num(c, "concurrency"), 2));
	CHECK(NEAR(jget_num(c, "rounds_total"), 2));
	CHECK(NEAR(jget_num(c, "rounds_valid"), 1));
	CHECK(NEAR(jget_num(c, "requests"), 4));
	CHECK(NEAR(jget_num(c, "succeeded"), 3)); /* the failure stays counted */
	CHECK(NEAR(jget_num(c, "output_tps"), 50)); /* round 1 only: 20 tokens / 0.4 s */
	CHECK(NEAR(jget_num(c, "ttft_p50_ms"), 100));
	CHECK(NEAR(jget_num(c, "ttft_p95_ms"), 200));
	CHECK(NEAR(jget_num(c, "tpot_p95_ms"), 20));
	CHECK(NEAR(jget_num(c, "e2e_p50_ms"), 200));
	CHECK(!jget(c, "achieved_rate")); /* closed loop */
	r = cJSON_GetArrayItem(jget(c, "rounds"), 1);
	CHECK(r && cJSON_IsFalse(jget(r, "valid")) && NEAR(jget_num(r, "output_tps"), 10 / 0.3));
	buf_init(&md, 1 << 20);
	{
		cJSON *summary = cJSON_CreateObject();

		cJSON_AddItemReferenceToObject(summary, "load", load);
		CHECK(loadcells_markdown(summary, &md) == ERR_OK);
		cJSON_Delete(summary);
	}
	CHECK(strstr(md.data, "| m | c2 | 1/2 | 3/4 | 50.0 | 100 | 200 | 20.0 | 200 |") != NULL);
	if (!strstr(md.data, "| m | c2 |"))
		fprintf(stderr, "%s\n", md.data);
	buf_release(&md);
	cJSON_Delete(load);
	cJSON_Delete(recs);
}

static void test_none(void)
{
	cJSON *recs = cJSON_Parse("[{\"case\":\"a\",\"verdict\":\"pass\"}]"), *load = (cJSON *)1;
	struct diag d;

	diag_init(&d);
	CHECK(loadcells_build(recs, &load, &d) == ERR_OK && load == NULL);
	cJSON_Delete(recs);
}

int main(void)
{
	json_init();
	T_RUN(test_cells);
	T_RUN(test_none);
	return T_DONE();
}
