/* Unit tests of the record formats: the attempt key and what makes a line a
 * record, an attempt's record (verdict from transport, audit and grade; tool
 * calls; round summary), and the manifest (start, end, --resume check). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jscan.h"
#include "run/record.h"
#include "t.h"
#include "trec.h"

static const char sse[] =
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"}}]}\n\n"
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}\n\n"
	"data: [DONE]\n\n";

/* Whether `rec` is a record its readers take whole: a key and a verdict,
 * and every member they consult there and of the type needle writes it
 * with. */
static int sound(const cJSON *rec)
{
	struct record_view v;
	char msg[400];

	record_view_of(rec, &v);
	return record_view_problem(&v) == NULL && record_view_edited(&v, msg, sizeof(msg)) == NULL;
}

static void test_key(void)
{
	char key[64];
	cJSON *r;

	record_key("a", 2, 0, 0, key, sizeof(key));
	CHECK(!memcmp(key, "a\x1f" "2\x1fnull", 9));
	r = cJSON_Parse("{\"case\":\"a\",\"repeat\":2,\"seed\":null,\"verdict\":\"pass\"}");
	CHECK(record_problem(r) == NULL && record_passed(r));
	CHECK(record_key_of(r, key, sizeof(key)) && !strcmp(key, "a\x1f" "2\x1fnull"));
	cJSON_ReplaceItemInObject(r, "seed", cJSON_CreateNumber(1e300));
	CHECK(!record_key_of(r, key, sizeof(key))); /* no long holds it */
	CHECK(record_problem(r) != NULL);
	cJSON_ReplaceItemInObject(r, "seed", cJSON_CreateNumber(7));
	cJSON_ReplaceItemInObject(r, "verdict", cJSON_CreateNumber(1));
	CHECK_STR(record_problem(r), "no \"verdict\" string");
	CHECK(!record_passed(r));
	cJSON_Delete(r);
	CHECK_STR(record_problem(NULL), "not JSON");
}

/* The view of a record: every member a reader consults, the first of
 * duplicate names winning, an object's members only when the first of its
 * name is an object, nothing of a record that is not an object. */
static void test_view(void)
{
	struct record_view v;
	cJSON *r = cJSON_Parse("{\"x\":{\"case\":\"no\"},\"case\":\"a\",\"case\":\"b\","
			       "\"timing\":{\"ttft_ms\":1,\"ttft_ms\":2,\"e2e_ms\":\"s\"},"
			       "\"audit\":\"x\",\"audit\":{\"ok\":false},"
			       "\"load\":{\"rate\":2.5,\"round\":0},\"repeat\":3,"
			       "\"replica\":1,\"reasoning\":\"r\",\"raw\":\"w\",\"recall\":null,"
			       "\"started_unix_ms\":5,\"started_at\":\"t\",\"seed\":null,"
			       "\"verdict\":\"pass\",\"caseX\":1,\"c\":2,\"\":3,\"content\":\"x\","
			       "\"tool_calls\":[],\"r\":1,\"t\":2,\"ti\":3}");
	char key[64];

	record_view_of(r, &v);
	CHECK(v.rec == r);
	CHECK_STR(v.f[RF_CASE]->valuestring, "a");
	CHECK(v.f[RF_TI_TTFT_MS]->valuedouble == 1 && cJSON_IsString(v.f[RF_TI_E2E_MS]));
	CHECK(cJSON_IsString(v.f[RF_AUDIT]) && !v.f[RF_AU_OK]);
	CHECK(v.f[RF_LO_RATE]->valuedouble == 2.5 && v.f[RF_LO_ROUND]->valuedouble == 0);
	CHECK(v.f[RF_REPEAT]->valuedouble == 3 && v.f[RF_REPLICA]->valuedouble == 1);
	CHECK_STR(v.f[RF_RAW]->valuestring, "w");
	CHECK(cJSON_IsNull(v.f[RF_RECALL]) && !v.f[RF_RE_TOKENS]);
	CHECK(v.f[RF_STARTED_UNIX_MS]->valuedouble == 5 && cJSON_IsNull(v.f[RF_SEED]));
	CHECK_STR(v.f[RF_STARTED_AT]->valuestring, "t");
	CHECK(!v.f[RF_TRANSPORT] && !v.f[RF_TR_OK] && !v.f[RF_KIND] && !v.f[RF_PROBE]);
	CHECK(record_view_problem(&v) == NULL);
	CHECK(record_view_key(&v, key, sizeof(key)) && !strcmp(key, "a\x1f" "3\x1fnull"));
	cJSON_Delete(r);
	r = cJSON_Parse("[{\"case\":\"a\"}]");
	record_view_of(r, &v);
	CHECK(!v.f[RF_CASE]);
	CHECK_STR(record_view_problem(&v), "not a JSON object");
	cJSON_Delete(r);
	record_view_of(NULL, &v);
	CHECK_STR(record_view_problem(&v), "not JSON");
}

/* What record_view_edited says of record `text` (NULL: nothing). */
static const char *edited(const char *text, char *msg, size_t cap)
{
	struct record_view v;
	cJSON *r = cJSON_Parse(text);
	const char *why;

	record_view_of(r, &v);
	why = record_view_edited(&v, msg, cap); /* `msg` or a fixed text: outlives `r` */
	cJSON_Delete(r);
	return why;
}

/* A record needle cannot have written is named: a verdict "pass" beside a
 * failed check; the first member a reader consults (in the record's order)
 * with a type needle never writes it with, named with the types it may
 * have; else the first member needle always writes (by kind: load and
 * recall records have their own) that is absent. Duplicates past the first
 * (which readers never see), the server's usage members and members no
 * reader consults are not judged. */
static void test_edited(void)
{
	static const struct {
		const char *members, *msg;
	} cases[] = {
		{"", NULL},
		{",\"usage\":{\"prompt_tokens\":\"5\"},\"extra\":[1]", NULL},
		{",\"timing\":{\"first_byte_ms\":null,\"ttft_ms\":null,\"ttfc_ms\":null,\"e2e_ms\":12.5,\"tpot_ms\":null},\"temperature\":null", NULL},
		{",\"timing\":{\"ttft_ms\":\"12\"}", "member \"timing\".\"ttft_ms\" is a string, not a number or null"},
		{",\"timing\":[1]", "member \"timing\" is an array, not an object"},
		{",\"kind\":7", "member \"kind\" is a number, not a string"},
		{",\"transport\":{\"ok\":1}", "member \"transport\".\"ok\" is a number, not true or false"},
		{",\"load\":{\"warmup\":null}", "member \"load\".\"warmup\" is null, not true or false"},
		{",\"audit\":{\"usage_delta\":true}", "member \"audit\".\"usage_delta\" is true or false, not a number or null"},
		{",\"usage\":\"none\"", NULL},
		{",\"load\":{\"level\":{}},\"kind\":1", "member \"load\".\"level\" is an object, not a number"},
		{",\"kind\":1,\"load\":{\"level\":{}}", "member \"kind\" is a number, not a string"},
		{",\"kind\":\"chat\",\"kind\":1", NULL},
		/* absent members */
		{",\"timing\":{\"ttft_ms\":null,\"e2e_ms\":12.5}", "member \"timing\".\"first_byte_ms\" is missing"},
		{",\"grade\":{\"reasons\":[]}", "member \"grade\".\"ok\" is missing"},
		{",\"transport\":{\"ok\":true,\"failures\":[]}", "member \"transport\".\"messages\" is missing"},
		{",\"kind\":\"load\"", "member \"load\" is missing"},
		{",\"kind\":\"load\",\"load\":{\"level\":0,\"round\":1}", "member \"load\".\"warmup\" is missing"},
		{",\"kind\":\"load\",\"load\":{\"level\":0,\"round\":1,\"warmup\":false}", NULL},
		{",\"kind\":\"recall\",\"recall\":{\"tokens\":5}", "member \"recall\".\"depths\" is missing"},
		{",\"kind\":\"recall\",\"recall\":{\"tokens\":5,\"depths\":[]}", NULL},
		{",\"kind\":\"chat\",\"load\":{}", NULL}, /* load members judged on load records only */
		/* a verdict that contradicts a check comes first */
		{",\"verdict\":\"pass\",\"grade\":{\"ok\":false},\"timing\":5", "verdict \"pass\" beside grade \"ok\": false"},
	};
	static const char *const whole[] = {"\"kind\":\"chat\",", "\"http_status\":200,", ",\"usage\":null"};
	static const char *const named[] = {"kind", "http_status", "usage"};
	char line[1024], msg[400], want[80];
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(line, sizeof(line), "{\"case\":\"a\",\"repeat\":1,\"seed\":null%s,\"verdict\":\"fail\",%s}",
			 cases[i].members, TREC_CHAT);
		why = edited(line, msg, sizeof(msg));
		if (cases[i].msg)
			CHECK_STR(why ? why : "(none)", cases[i].msg);
		else
			CHECK_STR(why ? why : "(none)", "(none)");
	}
	/* a top member taken out of the whole record */
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		char body[sizeof(TREC_CHAT)], *at;

		snprintf(body, sizeof(body), "%s", TREC_CHAT);
		at = strstr(body, whole[i]);
		memmove(at, at + strlen(whole[i]), strlen(at + strlen(whole[i])) + 1);
		snprintf(line, sizeof(line), "{\"case\":\"a\",\"repeat\":1,\"seed\":null,\"verdict\":\"fail\",%s}", body);
		snprintf(want, sizeof(want), "member \"%s\" is missing", named[i]);
		why = edited(line, msg, sizeof(msg));
		CHECK_STR(why ? why : "(none)", want);
	}
}

/* record_view_of_jtree finds what record_view_of finds, member for member,
 * in records a jtree parsed: every name a reader consults and near misses
 * (a name one byte longer or shorter, another of the same length),
 * duplicates, escaped names (an escaped NUL cuts one), a record that is no
 * object. */
static void test_view_jtree(void)
{
	static const char *const docs[] = {
		"{\"case\":\"c0\",\"kind\":\"chat\",\"repeat\":1,\"seed\":null,\"verdict\":\"pass\","
		"\"transport\":{\"ok\":true,\"failures\":[],\"messages\":[]},\"audit\":{\"ok\":true,"
		"\"enabled\":false,\"local_prompt_tokens\":null,\"server_prompt_tokens\":5,"
		"\"usage_delta\":null,\"tolerance\":0,\"hint\":\"h\"},\"grade\":{\"ok\":true,"
		"\"reasons\":[],\"needles\":[]},\"http_status\":200,\"timing\":{\"first_byte_ms\":2.1,"
		"\"ttft_ms\":2.1,\"ttfc_ms\":2.1,\"e2e_ms\":2.2,\"tpot_ms\":null},\"usage\":"
		"{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6},\"finish_reason\":"
		"\"stop\",\"content\":\"ok\",\"model\":\"m\",\"started_at\":\"t\",\"started_unix_ms\":1,"
		"\"raw\":\"raw/c0-r1.sse\",\"recall\":{\"tokens\":10,\"depths\":[50],\"prompt_sha256\":"
		"\"s\"},\"load\":{\"level\":1,\"round\":2,\"warmup\":false,\"precheck\":false,"
		"\"concurrency\":4,\"rate\":null},\"probe\":{},\"temperature\":0,\"replica\":0,"
		"\"base_url\":\"u\"}",
		"{\"cases\":1,\"cas\":2,\"kinds\":3,\"rawr\":4,\"ra\":5,\"repeats\":6,\"verdicts\":7,"
		"\"timing\":{\"ttft_m\":1,\"ttfx_ms\":2,\"e2e_msx\":3,\"tpot_ms\":4},\"audit\":{\"oks\":1,"
		"\"o\":2,\"hin\":3,\"tolerancE\":4},\"grade\":{\"reason\":1,\"needle\":2},\"usage\":"
		"{\"prompt_token\":1},\"load\":{\"levels\":1,\"rates\":2},\"recall\":{\"token\":1}}",
		"{\"case\":\"a\",\"case\":\"b\",\"timing\":\"x\",\"timing\":{\"e2e_ms\":1},"
		"\"audit\":{\"ok\":false},\"audit\":{\"ok\":true},\"ca\\u0073e\":\"c\",\"k\\u0000ind\":1,"
		"\"\\u006bind\":\"k\",\"\":1,\"usage\":{\"prompt_tokens\":1,\"prompt_tokens\":2}}",
		"[{\"case\":\"a\"}]", "7", "{}",
	};
	struct record_view a, b;
	struct jtree t;
	size_t i, k;

	jtree_init(&t);
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		char *copy = strdup(docs[i]);
		cJSON *rec = NULL;

		CHECK(copy && jtree_parse(&t, copy, strlen(copy), "a test", &rec, NULL) == ERR_OK);
		record_view_of(rec, &a);
		record_view_of_jtree(rec, &b);
		CHECK(a.rec == b.rec && !a.jtree && b.jtree);
		for (k = 0; k < RF_COUNT; k++)
			if (a.f[k] != b.f[k]) {
				fprintf(stderr, "doc %zu: field %zu differs\n", i, k);
				CHECK(a.f[k] == b.f[k]);
			}
		free(copy);
	}
	jtree_release(&t);
}

/* Every field's name (record_field_name, the RK_ names) is the one both
 * views find it by, in its parent object; no two fields of one object share
 * a name. */
static void test_field_names(void)
{
	struct record_view a, b;
	struct jtree t;
	char doc[128];
	int k, j;

	jtree_init(&t);
	for (k = 0; k < RF_COUNT; k++) {
		const char *name = record_field_name((enum record_field)k);
		enum record_field up = record_field_parent((enum record_field)k);
		cJSON *rec = NULL;

		CHECK(name && *name);
		for (j = 0; j < k; j++)
			CHECK(record_field_parent((enum record_field)j) != up ||
			      strcmp(record_field_name((enum record_field)j), name));
		if (up == RF_COUNT)
			snprintf(doc, sizeof(doc), "{\"%s\":1}", name);
		else
			snprintf(doc, sizeof(doc), "{\"%s\":{\"%s\":1}}", record_field_name(up), name);
		CHECK(jtree_parse(&t, doc, strlen(doc), "a test", &rec, NULL) == ERR_OK);
		record_view_of(rec, &a);
		record_view_of_jtree(rec, &b);
		if (!a.f[k] || !b.f[k])
			fprintf(stderr, "field %d (%s) not found\n", k, name);
		CHECK(a.f[k] && b.f[k] && !strcmp(a.f[k]->string, name));
	}
	jtree_release(&t);
}

static struct suite *load(void)
{
	static const char txt[] = "{\"suite\":\"t\",\"cases\":[{\"id\":\"a\",\"messages\":"
		"[{\"role\":\"user\",\"content\":\"x\"}],\"expect\":{\"contains\":[\"hi\"]}}]}";
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	suite_parse("t.json", txt, strlen(txt), &s, &d);
	return s;
}

/* The parts record_new writes whole from their views: the replica, a load
 * request's place, a case run during a load case, a probing step; numbers,
 * members and their order as a journal's readers read them. */
static void test_record_parts(struct record_attempt *a)
{
	static const double gaps[] = {1.23456, 2.5};
	const char *want_load = "{\"concurrency\":4,\"level\":1,\"round\":2,\"index\":7,\"warmup\":false,"
				"\"precheck\":false,\"scheduled_ms\":0.5,\"sent_ms\":1.25,\"input_tokens\":64,"
				"\"output_tokens\":16,\"itl_ms\":[1.235,2.5],\"slo\":{\"ttft_ms\":300}}";
	struct record_load l = {0, 0, 4, 1, 2, 7, 0, 0, 0.5, 1.25, 64, 16, gaps, 2, 0, 0, 300, 0, 0};
	struct record_probe p = {1, "warm", "n.1", -1, 12.5, 0, 0};
	static const char *const order[] = {"replica", "base_url", "load", "during", "probe"};
	struct record_verdict v;
	cJSON *rec;
	char *txt;
	const cJSON *it;
	int i = 0;

	a->replica = 1, a->base_url = "http://b:8000/v1", a->load = &l;
	a->during = "hold", a->under_load = 1, a->probe = &p;
	rec = record_new(a, &v);
	CHECK(rec && sound(rec));
	txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "load"));
	CHECK_STR(txt, want_load);
	cJSON_free(txt);
	txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "probe"));
	CHECK_STR(txt, "{\"step\":\"warm\",\"nonce\":\"n.1\",\"cached_tokens\":null,\"ttft_ms\":12.5}");
	cJSON_free(txt);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "during"), "under_load")));
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "during"), "load_case")->valuestring, "hold");
	CHECK_EQ_LONG(cJSON_GetObjectItem(rec, "replica")->valueint, 1);
	cJSON_ArrayForEach(it, rec) /* after the rest, in this order */
		if (!strcmp(it->string, "replica"))
			i = 1;
		else if (i && i < 5)
			CHECK_STR(it->string, order[i++]);
	CHECK_EQ_LONG(i, 5);
	cJSON_Delete(rec);
	l.open_loop = 1, l.rate = 0.3, l.round = -1, l.precheck = 1, l.ngaps = 0, l.slo_ttft_ms = 0;
	l.has_round_wall = 1, l.round_started_unix = 1700000000.25;
	p = (struct record_probe){0, NULL, NULL, 0, 0, 4099, 3};
	rec = record_new(a, &v);
	CHECK(sound(rec));
	txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "load"));
	CHECK(txt && strstr(txt, "{\"rate\":0.3,\"level\":1,\"round\":-1,") == txt &&
	      strstr(txt, "\"precheck\":true") && !strstr(txt, "itl_ms") && !strstr(txt, "slo") &&
	      strstr(txt, "\"round_started_unix\":1700000000.25}"));
	cJSON_free(txt);
	txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "probe"));
	CHECK_STR(txt, "{\"tokens\":4099,\"offset\":3,\"mod2\":1,\"mod4\":3,\"mod8\":3}");
	cJSON_free(txt);
	cJSON_Delete(rec);
	a->base_url = NULL, a->load = NULL, a->during = NULL, a->probe = NULL;
}

static void test_record(void)
{
	struct suite *s = load();
	struct stream st;
	struct stream_transport tr = {200, HTTP_FAIL_NONE, ""};
	struct stream_checks ck;
	struct audit_result au = {1, 0, 0, 4, 5, 1, 1, 0};
	struct grade g;
	struct record_attempt a = {0};
	struct record_verdict v;
	struct diag d;
	cJSON *rec, *round;
	int bad = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	diag_init(&d);
	stream_init(&st, STREAM_CHAT, 0);
	CHECK(stream_feed(&st, sse, strlen(sse), 3, &d) == ERR_OK);
	stream_end(&st, 9);
	stream_check(&st, &tr, NULL, &ck);
	grade_init(&g);
	a.c = &s->cases[0], a.repeat = 1, a.st = &st, a.ck = &ck, a.http_status = 200;
	a.audit = &au, a.g = &g, a.request_sha256 = "abc", a.endpoint = "/v1/chat/completions";
	a.model = "m", a.started_at = "2026-01-01T00:00:00Z", a.raw_name = "a-r1.sse";
	rec = record_new(&a, &v);
	CHECK(sound(rec));
	CHECK_STR(cJSON_GetObjectItem(rec, "verdict")->valuestring, "fail"); /* the audit failed */
	CHECK(v.transport_ok && !v.audit_ok && v.grade_ok);
	CHECK_STR(cJSON_GetObjectItem(rec, "raw")->valuestring, "raw/a-r1.sse");
	CHECK_STR(cJSON_GetObjectItem(rec, "content")->valuestring, "hi");
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "audit"), "usage_delta")->valueint, 1);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(rec, "seed")));
	CHECK(cJSON_GetObjectItem(rec, "rounds") == NULL);
	CHECK(!cJSON_GetObjectItem(rec, "replica") && !cJSON_GetObjectItem(rec, "load") &&
	      !cJSON_GetObjectItem(rec, "during") && !cJSON_GetObjectItem(rec, "probe"));
	cJSON_Delete(rec);
	test_record_parts(&a);
	au.ok = 1;
	round = record_round(&a);
	CHECK(cJSON_GetObjectItem(round, "grade") == NULL && cJSON_GetObjectItem(round, "raw"));
	a.round1 = round;
	rec = record_new(&a, &v);
	CHECK_STR(cJSON_GetObjectItem(rec, "verdict")->valuestring, "pass");
	CHECK_EQ_LONG(cJSON_GetArraySize(cJSON_GetObjectItem(rec, "rounds")), 1);
	CHECK(cJSON_GetObjectItem(rec, "content_cut") == NULL);
	cJSON_Delete(rec);
	/* an answer past RECORD_TEXT_MAX is cut at a character boundary, and says so */
	buf_reset(&st.content);
	CHECK(buf_append(&st.content, "a", 1) == ERR_OK);
	while (!bad && st.content.len <= RECORD_TEXT_MAX + 20)
		bad = buf_append(&st.content, "\xc3\xa9", 2) != ERR_OK;
	CHECK(!bad);
	rec = record_new(&a, &v);
	CHECK_EQ_LONG(strlen(cJSON_GetObjectItem(rec, "content")->valuestring), RECORD_TEXT_MAX - 1);
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "content_cut"), "bytes")->valuedouble,
		      st.content.len);
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "content_cut"), "kept")->valuedouble,
		      RECORD_TEXT_MAX - 1);
	CHECK(cJSON_GetObjectItem(rec, "reasoning_cut") == NULL);
	cJSON_Delete(rec);
	cJSON_Delete(round);
	stream_release(&st);
	suite_free(s);
}

static const cJSON *call_fn(const cJSON *calls)
{
	return cJSON_GetObjectItem(cJSON_GetArrayItem(calls, 0), "function");
}

/* Tool-call arguments past RECORD_TEXT_MAX are cut in a record like content
 * (arguments_cut), whether the record takes them from the stream or from the
 * round-1 calls; record_tool_calls, which round 2 sends, keeps them whole. */
static void test_arguments_cap(void)
{
	static const char call[] =
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\","
		"\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"q\\\": \\\"\"}}]}}]}\n\n"
		"data: [DONE]\n\n";
	struct suite *s = load();
	struct stream st;
	struct stream_checks ck = {0};
	struct audit_result au = {0};
	struct grade g;
	struct record_attempt a = {0};
	struct record_verdict v;
	struct diag d;
	cJSON *rec, *whole;
	size_t len;
	int bad = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	diag_init(&d);
	stream_init(&st, STREAM_CHAT, 0);
	CHECK(stream_feed(&st, call, strlen(call), 1, &d) == ERR_OK);
	stream_end(&st, 2);
	CHECK_EQ_LONG((long)st.ntools, 1);
	while (!bad && st.ntools && st.tools[0].arguments.len <= RECORD_TEXT_MAX + 20)
		bad = buf_append(&st.tools[0].arguments, "\xc3\xa9", 2) != ERR_OK;
	CHECK(!bad);
	len = st.ntools ? st.tools[0].arguments.len : 0;
	grade_init(&g);
	a.c = &s->cases[0], a.repeat = 1, a.st = &st, a.ck = &ck, a.http_status = 200;
	a.audit = &au, a.g = &g, a.request_sha256 = "abc", a.endpoint = "/v1/chat/completions";
	a.model = "m", a.started_at = "2026-01-01T00:00:00Z", a.raw_name = "a-r1.sse";
	whole = record_tool_calls(&st);
	CHECK_EQ_LONG((long)strlen(cJSON_GetObjectItem(call_fn(whole), "arguments")->valuestring), (long)len);
	rec = record_new(&a, &v);
	CHECK(strlen(cJSON_GetObjectItem(call_fn(cJSON_GetObjectItem(rec, "tool_calls")), "arguments")->valuestring)
	      <= RECORD_TEXT_MAX);
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(call_fn(cJSON_GetObjectItem(rec, "tool_calls")),
							      "arguments_cut"), "bytes")->valuedouble, len);
	cJSON_Delete(rec);
	a.tool_calls = whole; /* as run.c passes round 1's calls */
	rec = record_new(&a, &v);
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(call_fn(cJSON_GetObjectItem(rec, "tool_calls")),
							      "arguments_cut"), "bytes")->valuedouble, len);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(rec, "tool_calls"), 0), "id")->valuestring,
		  "c");
	cJSON_Delete(rec);
	cJSON_Delete(whole);
	grade_release(&g);
	stream_release(&st);
	suite_free(s);
}

static void test_manifest(void)
{
	struct suite *s = load();
	struct record_manifest m = {0};
	struct diag d;
	cJSON *man, *old;

	CHECK(s != NULL);
	if (!s)
		return;
	m.suite = s;
	m.base_url = "http://h";
	m.endpoint = cJSON_CreateObject();
	m.bos_id = -1;
	m.opts.concurrency = 2;
	diag_init(&d);
	man = record_manifest_new(&m);
	CHECK(man && m.endpoint == NULL);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(man, "endpoint"), "base_url")->valuestring, "http://h");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(man, "tokenizer")));
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(man, "ended_at")));
	CHECK(record_manifest_end(man, 3, 2, 1, 1, 0, &d) == ERR_OK);
	CHECK(cJSON_IsString(cJSON_GetObjectItem(man, "ended_at")));
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(man, "attempts"), "fail")->valueint, 1);
	old = cJSON_Parse("{\"suite\":{\"sha256\":\"0123456789abcdef\"},\"started_at\":\"then\"}");
	diag_init(&d);
	CHECK(record_manifest_resume(man, old, "dir", &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "cannot resume 'dir': the suite (SHA-256) changed") != NULL);
	CHECK(strstr(d.msg, "was \"0123456789abcdef\"") != NULL);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(old, "suite"), "sha256", cJSON_CreateString(s->sha256));
	/* another served model is another experiment */
	cJSON_AddItemToObject(old, "endpoint", cJSON_Parse("{\"base_url\":\"http://h\",\"served_model\":\"m-old\"}"));
	cJSON_AddStringToObject(cJSON_GetObjectItem(man, "endpoint"), "served_model", "m-new");
	diag_init(&d);
	CHECK(record_manifest_resume(man, old, "dir", &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "the served model changed since the run started (was \"m-old\", now \"m-new\")") != NULL);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(old, "endpoint"), "served_model", cJSON_CreateString("m-new"));
	/* a field the old manifest does not have at all is no change */
	diag_init(&d);
	CHECK(record_manifest_resume(man, old, "dir", &d) == ERR_OK);
	CHECK_STR(cJSON_GetObjectItem(man, "started_at")->valuestring, "then");
	cJSON_Delete(old);
	cJSON_Delete(man);
	suite_free(s);
}

/* A plan counts its keys against the recorded ones; one without "version"
 * (written before every load request had a key) says it counts load cases
 * once. */
static void test_plan(void)
{
	struct keyset rec;
	struct record_plan_count pc;
	struct diag d;
	cJSON *man = cJSON_CreateObject(), *keys = cJSON_CreateArray();
	char k[RECORD_KEY_MAX];
	long i;

	keyset_init(&rec);
	diag_init(&d);
	record_plan_done(man, &rec, NULL, 0, &pc);
	CHECK(pc.planned == -1 && pc.done == 0 && !pc.per_case);
	for (i = 1; i <= 5; i++) {
		record_key("ld", i, 0, 0, k, sizeof(k));
		cJSON_AddItemToArray(keys, cJSON_CreateString(k));
		if (i <= 3)
			CHECK(keyset_add(&rec, k, NULL, &d) == ERR_OK);
	}
	CHECK(record_manifest_plan(man, keys, &d) == ERR_OK);
	CHECK_EQ_LONG(cJSON_GetObjectItem(cJSON_GetObjectItem(man, "planned"), "version")->valueint,
		      RECORD_PLAN_VERSION);
	record_plan_done(man, &rec, NULL, 0, &pc);
	CHECK(pc.planned == 5 && pc.done == 3 && !pc.per_case);
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(man, "planned"), "version");
	record_plan_done(man, &rec, NULL, 0, &pc);
	CHECK(pc.planned == 5 && pc.done == 3 && pc.per_case);
	keyset_release(&rec);
	cJSON_Delete(man);
}

/* record_key writes what "%s\x1f%ld\x1f%ld" (or "null") writes, for
 * negative, large and capped keys alike. */
static void test_key_like_printf(void)
{
	static const long nums[] = {0, 1, -1, 9, 10, 99, 123456789, -987654321, 999999999999999L,
				    1000000000000000L, -1000000000000000L, 9007199254740991L};
	char got[RECORD_KEY_MAX], want[RECORD_KEY_MAX];
	size_t i, j, cap;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		for (j = 0; j < sizeof(nums) / sizeof(nums[0]); j++)
			for (cap = 8; cap <= sizeof(got); cap += sizeof(got) - 8) {
				record_key("case-7", nums[i], 1, nums[j], got, cap);
				snprintf(want, cap, "%s\x1f%ld\x1f%ld", "case-7", nums[i], nums[j]);
				CHECK(!strcmp(got, want));
				record_key("case-7", nums[i], 0, nums[j], got, cap);
				snprintf(want, cap, "%s\x1f%ld\x1fnull", "case-7", nums[i]);
				CHECK(!strcmp(got, want));
			}
}

int main(void)
{
	T_RUN(test_key);
	T_RUN(test_key_like_printf);
	T_RUN(test_view);
	T_RUN(test_edited);
	T_RUN(test_view_jtree);
	T_RUN(test_field_names);
	T_RUN(test_record);
	T_RUN(test_arguments_cap);
	T_RUN(test_manifest);
	T_RUN(test_plan);
	return T_DONE();
}
