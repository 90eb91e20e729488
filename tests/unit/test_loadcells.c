/* Unit tests of loadcells: summary cells from hand-made load records. */
#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "base/jget.h"
#include "base/json.h"
#include "load/loadcells.h"
#include "load/loadstat.h"
#include "t.h"
#include "tload.h"

/* A load record; without reasoning its first fragment is its first content */
#define REC(verdict, round, index, sent, ttfc, tpot, e2e, n)                          \
	RECR(verdict, round, index, sent, ttfc, ttfc, tpot, e2e, n)
#define RECR(verdict, round, index, sent, ttft, ttfc, tpot, e2e, n)                   \
	"{\"case\":\"m\",\"verdict\":\"" verdict "\",\"load\":{\"concurrency\":2,"      \
	"\"level\":1,\"round\":" #round ",\"index\":" #index ",\"scheduled_ms\":" #sent \
	",\"sent_ms\":" #sent "},\"timing\":{\"ttft_ms\":" #ttft ",\"ttfc_ms\":" #ttfc   \
	",\"tpot_ms\":" #tpot ",\"e2e_ms\":" #e2e "},\"usage\":{\"completion_tokens\":" #n "}}"

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
	struct loadcells_reqs reqs;
	struct loadcells lc;
	const cJSON *c, *r;
	struct diag d;
	struct buf md;

	diag_init(&d);
	CHECK(recs != NULL);
	tload_reqs(recs, &reqs);
	CHECK(reqs.n == 4 && reqs.nids == 1); /* the warm-up and the chat record left out */
	CHECK(loadcells_build(&reqs, &lc, &d) == ERR_OK && lc.n == 1);
	CHECK(!strcmp(lc.c[0].case_id, "m") && !lc.c[0].open_loop && NEAR(lc.c[0].level_value, 2));
	CHECK(lc.c[0].nrounds == 2 && lc.c[0].rounds[1].round == 2 && !lc.c[0].rounds[1].s.valid);
	CHECK(loadcells_fig(&lc.c[0], LCF_OUTPUT_TPS)->n == 1 && !loadcells_fig(&lc.c[0], LCF_ACHIEVED_RATE));
	CHECK(loadcells_fig_named("ttft_p95_ms") == LCF_TTFT_P95_MS && loadcells_fig_named("x") < 0);
	CHECK(loadcells_json(&lc, &load, &d) == ERR_OK);
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
	CHECK(loadcells_markdown(&lc, &md) == ERR_OK);
	/* no inter-token latencies in these records: ITL P95 is "-" */
	CHECK(strstr(md.data, "| m | c2 | 1/2 | 3/4 | 50.0 | 100 | 200 | 20.0 | - | 200 | 100 |") != NULL);
	if (!strstr(md.data, "| m | c2 |"))
		fprintf(stderr, "%s\n", md.data);
	buf_release(&md);
	cJSON_Delete(load);
	loadcells_free(&lc);
	cJSON_Delete(recs);
	loadcells_reqs_free(&reqs);
}

/* A thinking stream (issue 21 item 5): reasoning from 301 ms, content from
 * 801 ms, 8 tokens 100 ms apart from the first fragment. The cell's TTFT is
 * the first fragment, TTFT + 7 x TPOT = E2E, TTFC the first content; the
 * reader skips the pre-check and keeps each request's own clock. */
static void test_reasoning(void)
{
	static const char recs_text[] = "["
		RECR("pass", -1, 0, 0, 5, 9, 1, 20, 8) ","
		RECR("pass", 1, 0, 50, 301, 801, 100, 1001, 8) "]";
	cJSON *recs = cJSON_Parse(recs_text), *load = NULL;
	struct loadcells_reqs reqs;
	struct loadcells lc;
	struct loadcells_req lq;
	struct record_view v;
	const struct loadstat_req *q = &lq.q;
	const cJSON *c;
	struct diag d;

	diag_init(&d);
	CHECK(recs != NULL);
	record_view_of(cJSON_GetArrayItem(recs, 0), &v);
	CHECK(!record_load_request(&v, &lq));
	record_view_of(cJSON_GetArrayItem(recs, 1), &v);
	CHECK(record_load_request(&v, &lq));
	CHECK(!strcmp(lq.case_id, "m") && lq.level == 1 && lq.round == 1 && !lq.open_loop &&
	      NEAR(lq.level_value, 2) && !lq.has_slo && !lq.itl_ms);
	CHECK(q->ok && NEAR(q->sent, 50) && NEAR(q->first, 351) && NEAR(q->first_content, 851));
	CHECK(NEAR(q->last, 1051) && NEAR(q->done, 1051) && q->completion_tokens == 8);
	tload_reqs(recs, &reqs);
	CHECK(loadcells_build(&reqs, &lc, &d) == ERR_OK && loadcells_json(&lc, &load, &d) == ERR_OK);
	c = cJSON_GetArrayItem(jget(load, "cells"), 0);
	CHECK(NEAR(jget_num(c, "ttft_p50_ms"), 301));
	CHECK(NEAR(jget_num(c, "ttfc_p50_ms"), 801));
	CHECK(NEAR(jget_num(c, "ttft_p50_ms") + 7 * jget_num(c, "tpot_p50_ms"), jget_num(c, "e2e_p50_ms")));
	CHECK(NEAR(jget_num(cJSON_GetArrayItem(jget(c, "rounds"), 0), "ttfc_p50_ms"), 801));
	cJSON_Delete(load);
	loadcells_free(&lc);
	cJSON_Delete(recs);
	loadcells_reqs_free(&reqs);
}

static void test_none(void)
{
	cJSON *recs = cJSON_Parse("[{\"case\":\"a\",\"verdict\":\"pass\"}]");
	struct loadcells_reqs reqs;
	struct loadcells lc;
	struct diag d;

	diag_init(&d);
	tload_reqs(recs, &reqs);
	memset(&lc, 1, sizeof(lc));
	CHECK(reqs.n == 0 && loadcells_build(&reqs, &lc, &d) == ERR_OK && lc.n == 0 && !lc.c);
	memset(&lc, 1, sizeof(lc));
	CHECK(loadcells_build(NULL, &lc, &d) == ERR_OK && lc.n == 0 && !lc.c);
	cJSON_Delete(recs);
}

int main(void)
{
	json_init();
	T_RUN(test_cells);
	T_RUN(test_reasoning);
	T_RUN(test_none);
	return T_DONE();
}
