/* Unit tests of load cases in suite files: the shipped load suites, the
 * defaults, and every refusal with its file and JSON path. Run from the
 * repository root. */
#include <string.h>

#include "load/loadspec.h"
#include "run/suite.h"
#include "t.h"

static void test_shipped(void)
{
	struct suite *s = NULL;
	struct diag d;
	const struct loadspec *l;

	diag_init(&d);
	CHECK(suite_load(t_fixture("suites/load-matrix.json"), &s, &d) == ERR_OK);
	if (d.code)
		fprintf(stderr, "%s\n", d.msg);
	CHECK(s && s->ncases == 4);
	if (s && s->ncases == 4) {
		l = &s->cases[3].load;
		CHECK(s->cases[3].kind == SUITE_LOAD);
		CHECK_EQ_LONG(l->input_tokens, 24576);
		CHECK_EQ_LONG(l->output_tokens, 128);
		CHECK(!l->open_loop && l->nlevels == 3 && l->concurrency[2] == 32);
		CHECK(l->requests[0] == 8 && l->requests[1] == 16 && l->requests[2] == 64);
		CHECK_EQ_LONG(l->rounds, 3);
		CHECK_EQ_LONG(loadspec_warmup(l, 2), 64); /* one round's worth */
		CHECK(l->endpoint == LOADGEN_COMPLETIONS);
		CHECK_STR(suite_kind_name(SUITE_LOAD), "load");
	}
	suite_free(s);
	s = NULL;
	CHECK(suite_load(t_fixture("suites/load-rate.json"), &s, &d) == ERR_OK);
	if (s && s->ncases == 1) {
		l = &s->cases[0].load;
		CHECK(l->open_loop && l->nlevels == 3 && l->rate[1] == 0.48);
		CHECK(l->arrival == ARRIVAL_POISSON);
		CHECK(l->requests[2] == 200);
		CHECK(l->slo.ttft_ms == 3000 && l->slo.tpot_ms == 50 && l->slo.e2e_ms == 0);
	}
	suite_free(s);
}

/* The cutover suite: the field reports' load matrix sized for a gate (32, 128
 * and 128 requests per round at C1, C8 and C32), after everything else, and
 * recall at the longest prompt the deployment takes. */
static void test_cutover(void)
{
	static const long shapes[4][2] = {{1024, 128}, {8192, 128}, {1024, 512}, {24576, 128}};
	struct suite *s = NULL;
	struct diag d;
	size_t i, nload = 0, first = 0;

	diag_init(&d);
	CHECK(suite_load("suites/cutover.json", &s, &d) == ERR_OK);
	if (d.code)
		fprintf(stderr, "%s\n", d.msg);
	for (i = 0; s && i < s->ncases; i++) {
		const struct loadspec *l = &s->cases[i].load;

		if (!strcmp(s->cases[i].id, "cutover-recall-max"))
			CHECK(s->cases[i].recall.tokens == SUITE_TOKENS_MAX);
		if (s->cases[i].kind != SUITE_LOAD)
			continue;
		if (nload++ == 0)
			first = i;
		if (nload > 4)
			continue;
		CHECK_EQ_LONG(l->input_tokens, shapes[nload - 1][0]);
		CHECK_EQ_LONG(l->output_tokens, shapes[nload - 1][1]);
		CHECK(!l->open_loop && l->nlevels == 3 && l->concurrency[0] == 1 &&
		      l->concurrency[1] == 8 && l->concurrency[2] == 32);
		CHECK(l->requests[0] == 32 && l->requests[1] == 128 && l->requests[2] == 128);
		CHECK_EQ_LONG(l->rounds, 3);
	}
	CHECK_EQ_LONG(nload, 4);
	CHECK(s && first == s->ncases - 4); /* the load matrix comes last */
	suite_free(s);
}

static void expect_bad(const char *load, const char *msg)
{
	char text[2048];
	struct suite *s = NULL;
	struct diag d;

	snprintf(text, sizeof(text),
		 "{\"suite\": \"t\", \"cases\": [{\"id\": \"a\", \"kind\": \"load\", \"load\": %s}]}", load);
	diag_init(&d);
	CHECK(suite_parse("t.json", text, strlen(text), &s, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, msg) != NULL);
	if (!strstr(d.msg, msg))
		fprintf(stderr, "  want '%s', got: %s\n", msg, d.msg);
	suite_free(s);
}

#define BASE "\"input_tokens\": 100, \"output_tokens\": 10, "

static void test_bad(void)
{
	expect_bad("{" BASE "\"concurrency\": [1], \"requests\": 0}",
		   "t.json: cases[0].load.requests: 0 is out of range");
	expect_bad("{" BASE "\"rate\": [0.5, 0], \"requests\": 5}",
		   "t.json: cases[0].load.rate[1]: 0 must be positive");
	expect_bad("{" BASE "\"concurrency\": [1], \"rate\": [1], \"requests\": 5}",
		   "cases[0].load: give exactly one of 'concurrency'");
	expect_bad("{" BASE "\"concurrency\": [1, 8], \"requests\": [1, 2, 3]}",
		   "cases[0].load.requests: expected a number or one per level (2)");
	expect_bad("{\"output_tokens\": 10, \"concurrency\": [1], \"requests\": 5}",
		   "cases[0].load: missing 'input_tokens'");
	expect_bad("{" BASE "\"concurrency\": [1], \"requests\": 5, \"arrival\": \"poisson\"}",
		   "'arrival' is for open-loop");
	expect_bad("{" BASE "\"rate\": [1], \"requests\": 5, \"arrival\": \"burst\"}",
		   "cases[0].load.arrival: expected 'poisson' or 'constant'");
	expect_bad("{" BASE "\"rate\": [1], \"requests\": 5, \"slo\": {\"ttft\": 3}}",
		   "t.json: cases[0].load.slo.ttft: unknown slo key 'ttft'");
	expect_bad("{" BASE "\"rate\": [1], \"requests\": 5, \"slo\": {\"tpot_m\": 3}}",
		   "cases[0].load.slo.tpot_m: unknown slo key 'tpot_m' (did you mean 'tpot_ms'?)");
	expect_bad("{" BASE "\"concurrency\": [1], \"requests\": 5, \"rounds\": 2, \"rounds\": 3}",
		   "t.json: cases[0].load.rounds: key 'rounds' appears twice");
	expect_bad("{" BASE "\"concurrency\": [1], \"requests\": \"8\"}",
		   "t.json: cases[0].load.requests: expected a number or one per level (1), got string");
	expect_bad("{" BASE "\"rate\": [\"fast\"], \"requests\": 5}",
		   "t.json: cases[0].load.rate[0]: expected a number, got string");
	expect_bad("{" BASE "\"rate\": [1], \"requests\": 5, \"slo\": {\"tpot_ms\": -1}}",
		   "cases[0].load.slo.tpot_ms: -1 must be positive");
	expect_bad("{" BASE "\"concurrency\": [1.5], \"requests\": 5}",
		   "cases[0].load.concurrency[0]: expected an integer");
	expect_bad("{" BASE "\"concurrency\": [1], \"requests\": 5, \"endpoint\": \"x\"}",
		   "load.endpoint: expected 'completions' or 'chat'");
	expect_bad("{" BASE "\"concurrency\": [1], \"requests\": 5, \"bogus\": 1}",
		   "t.json: cases[0].load.bogus: unknown load key 'bogus'");
	expect_bad("[]", "cases[0].load: expected an object");
}

static void test_case_rules(void)
{
	static const char both[] = "{\"suite\": \"t\", \"cases\": [{\"id\": \"a\", \"kind\": \"load\", "
		"\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"load\": {" BASE "\"concurrency\": [1], \"requests\": 1}}]}";
	static const char none[] = "{\"suite\": \"t\", \"cases\": [{\"id\": \"a\", \"kind\": \"load\"}]}";
	static const char chat[] = "{\"suite\": \"t\", \"cases\": [{\"id\": \"a\", \"prompt\": \"x\", "
		"\"load\": {" BASE "\"concurrency\": [1], \"requests\": 1}}]}";
	struct loadspec l;
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(suite_parse("t.json", both, strlen(both), &s, &d) == ERR_INPUT &&
	      strstr(d.msg, "remove 'messages'/'prompt'/'expect'"));
	suite_free(s);
	s = NULL;
	diag_init(&d);
	CHECK(suite_parse("t.json", none, strlen(none), &s, &d) == ERR_INPUT &&
	      strstr(d.msg, "a load case needs 'load'"));
	suite_free(s);
	s = NULL;
	diag_init(&d);
	CHECK(suite_parse("t.json", chat, strlen(chat), &s, &d) == ERR_INPUT &&
	      strstr(d.msg, "'load' is only for load cases"));
	suite_free(s);
	memset(&l, 0, sizeof(l));
	l.input_tokens = 32700;
	l.output_tokens = 128;
	diag_init(&d);
	CHECK(loadspec_check_fit(&l, 32768, "t.json", "cases[0].load", &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "t.json: cases[0].load.input_tokens: 32700 input + 128 output") != NULL);
	CHECK(!loadspec_check_fit(&l, 32828, "t.json", "cases[0].load", &d));
}

int main(void)
{
	T_RUN(test_shipped);
	T_RUN(test_cutover);
	T_RUN(test_bad);
	T_RUN(test_case_rules);
	return T_DONE();
}
