/*
 * Unit tests of report and diff over the hand-written run folders in
 * fixtures/results/: a (10 attempts), b (11 attempts and a torn last line),
 * bad (a record without a verdict on line 2), garbled (line 2 not JSON).
 * The expected numbers are worked out by hand in the comments.
 */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "report/diff.h"
#include "report/gate.h"
#include "report/heatmap.h"
#include "base/io.h"
#include "report/report.h"
#include "run/results.h"
#include "report/format.h"
#include "report/why.h"
#include "t.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

static const cJSON *find_by(const cJSON *arr, const char *k, double v)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (num(it, k) == v)
			return it;
	return NULL;
}

/* The summary of `dir` into *m (released by the caller). */
static void sum_of(const char *dir, struct report_sum *m, struct report_run **keep)
{
	struct report_run *r = NULL;
	struct diag d;

	diag_init(&d);
	m->s = NULL;
	casetab_init(&m->cases);
	CHECK(report_load(dir, NULL, &r, &d) == ERR_OK);
	if (r)
		CHECK(report_summary(r, m, &d) == ERR_OK);
	if (keep)
		*keep = r;
	else
		report_run_free(r);
}

/* The summary of `dir` as summary.json has it (its text parsed back). */
static cJSON *summary_of(const char *dir, struct report_run **keep)
{
	struct report_sum m;
	struct jout_list l;
	struct buf b;
	struct diag d;
	cJSON *s = NULL;

	sum_of(dir, &m, keep);
	buf_init(&b, 1 << 20);
	diag_init(&d);
	l = report_cases(&m, get(m.s, "cases"));
	if (m.s && jout_print(m.s, &l, 1, 1, &b, NULL, "the summary", &d) == ERR_OK)
		s = cJSON_ParseWithLength(b.data, b.len);
	CHECK(s != NULL);
	buf_release(&b);
	report_sum_release(&m);
	return s;
}

static void test_summary_a(void)
{
	cJSON *s = summary_of(t_fixture("results/a"), NULL);
	const cJSON *a = get(s, "attempts"), *rc = get(s, "recall"), *c, *lat;

	CHECK(s != NULL);
	/* 5 of 10 pass; the connect failure stays in the denominator */
	CHECK(num(a, "pass") == 5 && num(a, "total") == 10);
	CHECK(num(get(s, "fail_stages"), "transport") == 2);
	CHECK(num(get(s, "fail_stages"), "grade") == 3);
	CHECK(num(get(s, "failure_codes"), "connect") == 1);
	CHECK(num(get(s, "failure_codes"), "no_done") == 1);
	CHECK(num(get(s, "finish_reasons"), "length") == 1);
	CHECK(num(get(s, "finish_reasons"), "stop") == 7);
	c = cJSON_GetArrayItem(get(s, "cases"), 0);
	CHECK_STR(get(c, "id")->valuestring, "chat-1");
	CHECK(num(c, "pass") == 3 && num(c, "total") == 4);
	/* recall: 128K seed 2 never connected -> a miss at every depth */
	c = find_by(get(rc, "cells"), "tokens", 128000);
	CHECK(c && num(c, "depth") == 10 && num(c, "found") == 1 && num(c, "total") == 2);
	c = find_by(get(rc, "by_depth"), "depth", 50);
	CHECK(c && num(c, "found") == 2 && num(c, "total") == 4);
	c = find_by(get(rc, "by_length"), "tokens", 32000);
	CHECK(c && num(c, "found") == 5 && num(c, "total") == 6);
	/* TTFT by length: 32K has 700 and 800; 128K 900 and one that never connected */
	c = find_by(get(rc, "latency_by_length"), "tokens", 32000);
	CHECK(c && num(get(c, "ttft_ms"), "n") == 2 && num(get(c, "ttft_ms"), "p50") == 700 &&
	      num(get(c, "ttft_ms"), "p90") == 800);
	c = find_by(get(rc, "latency_by_length"), "tokens", 128000);
	CHECK(c && num(get(c, "ttft_ms"), "n") == 1 && num(get(c, "e2e_ms"), "p99") == 1800);
	/* ttft 100..900 (one null): p50 = 5th = 500, p90 = p99 = 9th = 900 */
	lat = get(get(s, "latency"), "ttft_ms");
	CHECK(num(lat, "n") == 9 && num(lat, "p50") == 500 && num(lat, "p90") == 900 &&
	      num(lat, "p99") == 900);
	CHECK(num(get(get(s, "latency"), "e2e_ms"), "p50") == 1000);
	CHECK(num(get(s, "audit"), "samples") == 9 && num(get(s, "audit"), "max_abs_delta") == 0);
	CHECK_STR(get(get(s, "run"), "server_version")->valuestring, "0.11.0");
	CHECK(num(get(s, "run"), "max_model_len") == 131072);
	cJSON_Delete(s);
}

/* b ends with a torn line: skipped, counted, not an error. */
static void test_torn_and_bad(void)
{
	struct report_run *r = NULL;
	cJSON *s = summary_of(t_fixture("results/b"), &r);
	char none_such[T_FIXTURE_PATH_MAX + 16];
	struct diag d;

	snprintf(none_such, sizeof(none_such), "%s/none-such", t_fixture("results"));
	CHECK(r && r->torn_bytes > 10);
	CHECK(num(get(s, "attempts"), "total") == 11);
	CHECK(num(get(s, "audit"), "max_abs_delta") == 2);
	report_run_free(r);
	cJSON_Delete(s);
	r = NULL;
	diag_init(&d);
	CHECK(report_load(t_fixture("results/bad"), NULL, &r, &d) == ERR_INPUT);
	CHECK(r == NULL && strstr(d.msg, "line 2") && strstr(d.msg, "verdict"));
	diag_init(&d);
	CHECK(report_load(t_fixture("results/garbled"), NULL, &r, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "results.jsonl' line 2: not JSON: column 20 (byte 19): "
			    "expected a member name") != NULL);
	diag_init(&d);
	CHECK(report_load(none_such, NULL, &r, &d) == ERR_IO);
}

static void diff_ab(struct diff_result *res)
{
	struct report_run *a = NULL, *b = NULL;
	struct diag d;

	diag_init(&d);
	memset(res, 0, sizeof(*res));
	CHECK(report_load(t_fixture("results/a"), NULL, &a, &d) == ERR_OK);
	CHECK(report_load(t_fixture("results/b"), NULL, &b, &d) == ERR_OK);
	if (a && b)
		CHECK(diff_runs(a, b, res, &d) == ERR_OK);
	report_run_free(a);
	report_run_free(b);
}

/* The comparison of a and b as `needle diff --format json` prints it. */
static cJSON *diff_json(void)
{
	struct diff_result res;
	struct buf b;
	struct diag d;
	cJSON *df = NULL;

	diff_ab(&res);
	buf_init(&b, 1 << 20);
	diag_init(&d);
	if (res.diff && diff_print_json(&res, &b, NULL, &d) == ERR_OK)
		df = cJSON_ParseWithLength(b.data, b.len);
	CHECK(df != NULL);
	buf_release(&b);
	diff_result_release(&res);
	return df;
}

static int has_flip(const cJSON *arr, const char *id, double repeat)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (!strcmp(get(it, "case")->valuestring, id) && num(it, "repeat") == repeat)
			return 1;
	return 0;
}

static void test_diff(void)
{
	cJSON *df = diff_json();
	const cJSON *pf = get(get(df, "flips"), "pass_to_fail");
	const cJSON *fp = get(get(df, "flips"), "fail_to_pass");
	const cJSON *o = get(df, "overall"), *it;

	CHECK(df != NULL);
	CHECK_EQ_LONG(cJSON_GetArraySize(pf), 2);
	CHECK(has_flip(pf, "chat-1", 0) && has_flip(pf, "chat-1", 1));
	CHECK_EQ_LONG(cJSON_GetArraySize(fp), 4);
	CHECK(has_flip(fp, "chat-1", 3) && has_flip(fp, "json-1", 1) &&
	      has_flip(fp, "recall-32k", 0) && has_flip(fp, "recall-128k", 0));
	CHECK(num(o, "matched") == 10 && num(o, "only_b") == 1 && num(o, "only_b_failed") == 1);
	CHECK(NEAR(num(o, "matched_delta"), 0.2));
	it = find_by(get(df, "recall_by_depth"), "depth", 50);
	CHECK(it && NEAR(num(it, "delta"), 0.25));
	CHECK_EQ_LONG(cJSON_GetArraySize(get(df, "usage_changes")), 1);
	it = get(get(get(df, "latency"), "ttft_ms"), "ratio");
	CHECK(NEAR(num(it, "p50"), 2.0));
	/* the template hash differs; recall-32k seed 1 got another document */
	CHECK_EQ_LONG(cJSON_GetArraySize(get(df, "warnings")), 2);
	CHECK(strstr(cJSON_GetArrayItem(get(df, "warnings"), 0)->valuestring, "template") != NULL);
	CHECK(num(o, "recall_prompt_differs") == 1);
	CHECK(strstr(cJSON_GetArrayItem(get(df, "warnings"), 1)->valuestring, "1 matched recall") != NULL);
	cJSON_Delete(df);
}

static int gate(struct diff_result *df, const char *spec)
{
	struct gate g;
	struct diag d;
	enum gate_verdict v = GATE_UNDERPOWERED;

	diag_init(&d);
	if (gate_parse(spec, &g, &d))
		return -2;
	CHECK(gate_eval(df, &g, 0, &v, &d) == ERR_OK);
	CHECK(v != GATE_UNDERPOWERED); /* not a load gate: pass or fail */
	return v == GATE_PASS;
}

static void test_gates(void)
{
	struct diff_result res, *df = &res;

	diff_ab(&res);
	CHECK(gate(df, "no_new_failures") == 0);
	CHECK(gate(df, "pass_rate>=0.6") == 1);     /* 7/11 = 0.636 */
	CHECK(gate(df, "pass_rate>=0.7") == 0);
	CHECK(gate(df, "pass_rate@json-1==1") == 1);
	CHECK(gate(df, "pass_rate_delta>0.19") == 1);
	CHECK(gate(df, "flips<=1") == 0);
	CHECK(gate(df, "flips<3") == 1);
	CHECK(gate(df, "recall@50>=1.0") == 0);     /* 3/4 */
	CHECK(gate(df, "recall@50>=0.75") == 1);
	CHECK(gate(df, "recall>0.74") == 1);        /* 9/12 */
	CHECK(gate(df, "recall_delta@90>=0.25") == 1);
	CHECK(gate(df, "ttft_p50_ratio<=1.2") == 0); /* 2.0 */
	CHECK(gate(df, "ttft_p50_ratio<=2") == 1);
	CHECK(gate(df, "e2e_p90<=3600") == 1);
	CHECK(gate(df, "max_abs_usage_delta<=1") == 0);
	CHECK(gate(df, "recall@70>=0") == 0);       /* no such depth: fails */
	CHECK(gate(df, "pass_rate@nope>=0") == 0);
	/* blanks around the parts, as a person types them */
	CHECK(gate(df, "pass_rate >= 0.6") == 1);
	CHECK(gate(df, " recall@50 >= 1.0 ") == 0);
	CHECK(gate(df, "\tflips < 3") == 1);
	CHECK(gate(df, " no_new_failures ") == 0);
	CHECK_EQ_LONG(cJSON_GetArraySize(get(df->diff, "gates")), 21);
	/* bad specs are usage errors */
	CHECK(gate(df, "pass_rate") == -2);
	CHECK(gate(df, "pass_rate=>1") == -2);
	CHECK(gate(df, "speed>=1") == -2);
	CHECK(gate(df, "recall_delta@abc>=0") == -2); /* recall_delta without @ is every needle */
	CHECK(gate(df, "recall@abc>=1") == -2);
	CHECK(gate(df, "flips@x<1") == -2);
	CHECK(gate(df, "ttft_p95<=1") == -2);
	CHECK(gate(df, "pass_rate>=x") == -2);
	CHECK(gate(df, "pass_rate>=") == -2);
	CHECK(gate(df, "pass_rate >= ") == -2);
	CHECK(gate(df, "pass_rate >= 1 2") == -2);
	CHECK(gate(df, "pass rate >= 1") == -2);
	CHECK(gate(df, " >= 1") == -2);
	diff_result_release(&res);
}

/* Decodes the heatmap and reads cell colours: rows depth 10/50/90, columns
 * 32000/125K. (50%, 125K) found 0 of 1 answered -> red; (10%, 32000) 2/2
 * -> green; (90%, 125K) 1 of 1 answered, 1 failed at transport -> green
 * with a hatched strip. */
static void pixel(const unsigned char *px, int w, int x, int y, unsigned char out[3])
{
	memcpy(out, px + ((size_t)y * (size_t)w + (size_t)x) * 3, 3);
}

/* Lengths are labelled 128K / 1M when whole multiples of 1024, else in full. */
static void test_length_labels(void)
{
	char t[32];

	heatmap_length_label(131072, t, sizeof(t));
	CHECK_STR(t, "128K");
	heatmap_length_label(1048576, t, sizeof(t));
	CHECK_STR(t, "1M");
	heatmap_length_label(128000, t, sizeof(t)); /* 125 x 1024: exact */
	CHECK_STR(t, "125K");
	heatmap_length_label(100000, t, sizeof(t));
	CHECK_STR(t, "100000");
	heatmap_length_label(1536, t, sizeof(t));
	CHECK_STR(t, "1536");
	heatmap_length_label(3 * 1048576 / 2, t, sizeof(t));
	CHECK_STR(t, "1536K");
}

static void test_heatmap(void)
{
	cJSON *s = summary_of(t_fixture("results/a"), NULL);
	png_image img;
	struct buf png;
	struct diag d;
	unsigned char *px = NULL, got[3], want[3];
	int x, y;

	buf_init(&png, 1 << 24);
	diag_init(&d);
	CHECK(report_heatmap(s, &png, &d) == ERR_OK && png.len > 100);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	CHECK(png_image_begin_read_from_memory(&img, png.data, png.len));
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	CHECK(px && png_image_finish_read(&img, NULL, px, 0, NULL));
	CHECK((int)img.width >= HEATMAP_LEFT + 2 * HEATMAP_CELL_W);
	CHECK((int)img.height >= HEATMAP_TOP + 3 * HEATMAP_CELL_H);
	heatmap_cell(1, 1, &x, &y);
	pixel(px, (int)img.width, x + 3, y + 3, got);
	heatmap_rgb(0.0, want);
	CHECK(!memcmp(got, want, 3) && got[0] > 150 && got[1] < 100); /* red */
	heatmap_cell(0, 0, &x, &y);
	pixel(px, (int)img.width, x + 3, y + 3, got);
	heatmap_rgb(1.0, want);
	CHECK(!memcmp(got, want, 3) && got[1] > got[0] + 50); /* green */
	/* 90% at 128K: seed 1 found it, seed 2 never connected: 1/1 found
	 * (green, not the yellow of 1/2) with a hatched strip at the right */
	heatmap_cell(2, 1, &x, &y);
	pixel(px, (int)img.width, x + 3, y + 3, got);
	heatmap_rgb(1.0, want);
	CHECK(!memcmp(got, want, 3));
	{
		int i, j, dark = 0;
		for (j = 0; j < HEATMAP_CELL_H - 2; j++)
			for (i = HEATMAP_CELL_W - 14; i < HEATMAP_CELL_W - 2; i++) {
				pixel(px, (int)img.width, x + i, y + j, got);
				dark += got[0] == 90 && got[1] == 90 && got[2] == 90;
			}
		CHECK(dark > 20);
	}
	/* the label "0%" is drawn in the red cell: some pixel is not red */
	heatmap_cell(1, 1, &x, &y);
	{
		int i, j, other = 0;
		heatmap_rgb(0.0, want);
		for (j = 0; j < HEATMAP_CELL_H - 2; j++)
			for (i = 0; i < HEATMAP_CELL_W - 2; i++) {
				pixel(px, (int)img.width, x + i, y + j, got);
				other += memcmp(got, want, 3) != 0;
			}
		CHECK(other > 20);
	}
	free(px);
	buf_release(&png);
	cJSON_Delete(s);
}

/* A run without recall draws nothing; Markdown and CSV carry denominators. */
static void test_render(void)
{
	struct report_sum m;
	cJSON *s;
	struct buf b;
	struct diag d;

	sum_of(t_fixture("results/a"), &m, NULL);
	s = m.s;
	buf_init(&b, 1 << 20);
	diag_init(&d);
	CHECK(report_markdown(&m, &b, &d) == ERR_OK);
	CHECK(strstr(b.data, "5/10 (0.500, 95% CI 0.237-0.763)") != NULL);
	CHECK(strstr(b.data, "| 50% | 2/2 | 0/2 (1 no answer) |") != NULL);
	CHECK(strstr(b.data, "| ttft_ms | 9 | 500 | 900 | 900 |") != NULL);
	/* grade failures are reasons, not "none" */
	CHECK(strstr(b.data, "| chat-1 | chat | 3/4 (0.750, 95% CI 0.301-0.954) | grade: expected 437, got 438 (1) |") != NULL);
	CHECK(strstr(b.data, "\n## Failures\n") != NULL);
	CHECK(strstr(b.data, "### grade: needle at depth 50% (1 attempts, 1 case)") != NULL);
	CHECK(strstr(b.data, "INCOMPLETE") == NULL);
	cJSON_ReplaceItemInObjectCaseSensitive(s, "recall", cJSON_CreateNull());
	buf_reset(&b);
	CHECK(report_heatmap(s, &b, &d) == ERR_OK && b.len == 0);
	buf_release(&b);
	report_sum_release(&m);
}

/* Every failed attempt of a is under its reasons: 5 groups of 1, each with
 * its case and an example; a transport failure is not also a grade one. */
static void test_failures(void)
{
	cJSON *s = summary_of(t_fixture("results/a"), NULL);
	const cJSON *f = get(s, "failures"), *g, *c;
	int n = 0, seen = 0;

	CHECK(cJSON_GetArraySize(f) == 5);
	cJSON_ArrayForEach(g, f) {
		n += (int)num(g, "count");
		CHECK(cJSON_GetArraySize(get(g, "cases")) == 1);
		CHECK(cJSON_IsString(get(get(g, "example"), "reason")));
		if (!strcmp(get(g, "key")->valuestring, "connect")) {
			CHECK_STR(get(g, "stage")->valuestring, "transport");
			CHECK_STR(cJSON_GetArrayItem(get(g, "cases"), 0)->valuestring, "recall-128k");
			seen++;
		}
		if (!strcmp(get(g, "key")->valuestring, "needle at depth 90%")) {
			CHECK_STR(get(get(g, "example"), "reason")->valuestring,
				  "needle at depth 90%: missing key 'P90'");
			seen++;
		}
	}
	CHECK(n == 5 && seen == 2);
	CHECK(cJSON_GetArraySize(get(s, "advice")) == 0);
	c = cJSON_GetArrayItem(get(s, "cases"), 0);
	CHECK(num(get(c, "reasons"), "grade: expected 437, got 438") == 1);
	CHECK_STR(get(c, "first_reason")->valuestring, "grade: expected 437, got 438");
	cJSON_Delete(s);
}

/* A record failed with HTTP STATUS and MESSAGE for model "x". */
static cJSON *failed_record(int status, const char *message)
{
	char text[512];
	cJSON *r;

	snprintf(text, sizeof(text),
		 "{\"case\":\"c\",\"repeat\":1,\"seed\":null,\"verdict\":\"fail\",\"model\":\"x\","
		 "\"http_status\":%d,\"transport\":{\"ok\":false,\"failures\":[\"http_status\"],"
		 "\"messages\":[\"%s\"]},\"grade\":{\"ok\":false,\"reasons\":[\"answer is empty\"]}}",
		 status, message);
	r = cJSON_Parse(text);
	CHECK(r != NULL);
	return r;
}

/* The failures and advice of the records of array `recs` (borrowed), folded
 * one at a time, into a new summary object. */
static cJSON *why_of(const cJSON *recs, const cJSON *man)
{
	struct why_fold *w = why_fold_new("D");
	struct json_build jb;
	const cJSON *rec;
	struct record_view v;
	cJSON *s;

	CHECK(w != NULL);
	json_build_init(&jb);
	s = json_new_obj(&jb);
	cJSON_ArrayForEach(rec, recs) {
		record_view_of(rec, &v);
		CHECK(why_fold_take(w, &v) == ERR_OK);
	}
	why_fold_summarise(w, man, &jb, s);
	CHECK(jb.code == ERR_OK);
	why_fold_free(w);
	return s;
}

/* The advice for the obvious causes: a wrong model, a too-long prompt. */
static void test_advice(void)
{
	const char *m = "{\"endpoint\":{\"models\":[\"served-1\"],\"max_model_len\":4096}}";
	cJSON *man = cJSON_Parse(m), *recs = cJSON_CreateArray(), *s;
	const cJSON *adv;
	struct why_reason r[WHY_REASONS_MAX];
	struct record_view v;

	cJSON_AddItemToArray(recs, failed_record(404, "HTTP 404: no model x"));
	cJSON_AddItemToArray(recs, failed_record(404, "HTTP 404: no model x"));
	record_view_of(cJSON_GetArrayItem(recs, 0), &v);
	CHECK(why_reasons(&v, r, WHY_REASONS_MAX) == 1);
	CHECK_STR(r[0].key, "http_status 404");
	s = why_of(recs, man);
	adv = cJSON_GetArrayItem(get(s, "advice"), 0);
	CHECK(cJSON_IsString(adv) &&
	      strstr(adv->valuestring, "every request got HTTP 404: the server serves 'served-1', not 'x'"));
	CHECK(num(cJSON_GetArrayItem(get(s, "failures"), 0), "count") == 2);
	cJSON_Delete(s);
	cJSON_DeleteItemFromArray(recs, 0);
	cJSON_AddItemToArray(recs, failed_record(400, "HTTP 400: maximum context length is 4096 tokens"));
	s = why_of(recs, man);
	adv = cJSON_GetArrayItem(get(s, "advice"), 0);
	CHECK(cJSON_IsString(adv) &&
	      strstr(adv->valuestring, "1 of 2 requests got HTTP 400 context length") &&
	      strstr(adv->valuestring, "max_model_len 4096") && strstr(adv->valuestring, "--max-model-len"));
	cJSON_Delete(s);
	cJSON_Delete(recs);
	cJSON_Delete(man);
}

/* A new folder under /tmp holding fixtures/results/a's journal, its fourth
 * record's first grade reason replaced by `reason` when not NULL. */
static void copy_run_a(char *dir, const char *reason)
{
	struct buf b, out;
	struct diag d;
	char p[512];
	size_t at = 0, line = 0;

	CHECK(mkdtemp(dir) != NULL);
	buf_init(&b, 1 << 20);
	buf_init(&out, 1 << 20);
	diag_init(&d);
	CHECK(io_read_file(t_fixture("results/a/results.jsonl"), &b, &d) == ERR_OK);
	while (at < b.len) {
		size_t n = strcspn(b.data + at, "\n");
		cJSON *rec = cJSON_ParseWithLength(b.data + at, n);
		char *txt;
		CHECK(rec != NULL);
		if (reason && ++line == 4)
			cJSON_ReplaceItemInArray(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(rec, "grade"), "reasons"), 0,
				cJSON_CreateString(reason));
		txt = cJSON_PrintUnformatted(rec);
		CHECK(buf_printf(&out, "%s\n", txt) == ERR_OK);
		cJSON_free(txt);
		cJSON_Delete(rec);
		at += n + 1;
	}
	snprintf(p, sizeof(p), "%s/results.jsonl", dir);
	CHECK(io_write_file(p, out.data, out.len, &d) == ERR_OK);
	buf_release(&b);
	buf_release(&out);
}

static void remove_dir(const char *dir)
{
	char p[512];

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(system(p) == 0);
}

/* What `needle report DIR --format NAME` prints, through the format table:
 * the format's fold in the one pass, then its writer. */
static enum err format_out(const char *dir, const char *name, struct buf *b, struct diag *d)
{
	const struct report_format *fmt = report_format_named(name);
	struct report_also also = {0};
	struct report_run *r = NULL;
	struct report_files f;
	enum err e;

	CHECK(fmt != NULL);
	if ((fmt->fold && (e = fmt->fold(b, &also, d))) ||
	    (e = report_load(dir, fmt->fold ? &also : NULL, &r, d)))
		return e;
	if (!(e = report_render(r, &f, d))) {
		e = fmt->write(r, &f, b, d);
		report_files_release(&f);
	}
	report_run_free(r);
	return e;
}

/* The CSV has a header and one CRLF row per attempt; a field with a comma or
 * quote is quoted with its quotes doubled; JSON Lines has the same rows. The
 * run column is the folder's last component, a trailing '/' ignored. */
static void test_rows(void)
{
	char dir[] = "/tmp/needle-test-rows-XXXXXX", slash[600], a_slash[T_FIXTURE_PATH_MAX + 1];
	struct buf b;
	struct diag d;
	size_t lines = 0, i;

	snprintf(a_slash, sizeof(a_slash), "%s/", t_fixture("results/a"));
	buf_init(&b, 1 << 20);
	diag_init(&d);
	CHECK(format_out(a_slash, "csv", &b, &d) == ERR_OK);
	for (i = 0; i < b.len; i++)
		lines += b.data[i] == '\n' && i && b.data[i - 1] == '\r';
	CHECK(lines == 11);
	CHECK(strstr(b.data, "run,model,case,kind,repeat,seed,verdict,fail_stage,failure_codes,first_reason,") == b.data);
	CHECK(strstr(b.data, "\r\na,") != NULL);
	CHECK(strstr(b.data, ",recall-128k,recall,0,2,fail,transport,connect,connect,") != NULL);
	CHECK(strstr(b.data, ",\"expected 437, got 438\",") != NULL);
	copy_run_a(dir, "say \"hi\", then");
	snprintf(slash, sizeof(slash), "%s/", dir);
	buf_reset(&b);
	CHECK(format_out(slash, "csv", &b, &d) == ERR_OK);
	CHECK(strstr(b.data, ",\"say \"\"hi\"\", then\",") != NULL);
	CHECK(strstr(b.data, "\r\n") && !strncmp(strstr(b.data, "\r\n") + 2, strrchr(dir, '/') + 1,
						      strlen(strrchr(dir, '/') + 1)));
	buf_reset(&b);
	CHECK(format_out(dir, "jsonl", &b, &d) == ERR_OK);
	for (i = 0, lines = 0; i < b.len; i++)
		lines += b.data[i] == '\n';
	CHECK(lines == 10 && b.data[0] == '{' && strstr(b.data, "\"fail_stage\":\"transport\""));
	buf_release(&b);
	remove_dir(dir);
}

/* Every format of the table is found by its name, once; others are not;
 * each has a writer, and the JUnit one folds the journal's testcases. */
static void test_format_table(void)
{
	char dir[T_FIXTURE_PATH_MAX + 1];
	struct buf b;
	struct diag d;
	size_t i, k;

	for (i = 0; i < REPORT_NFORMATS; i++) {
		CHECK(report_format_named(report_formats[i].name) == &report_formats[i]);
		CHECK(report_formats[i].write != NULL);
		for (k = 0; k < i; k++)
			CHECK(strcmp(report_formats[i].name, report_formats[k].name) != 0);
	}
	CHECK(report_format_named("nope") == NULL && report_format_named("") == NULL);
	snprintf(dir, sizeof(dir), "%s", t_fixture("results/a"));
	buf_init(&b, 1 << 20);
	diag_init(&d);
	CHECK(format_out(dir, "junit", &b, &d) == ERR_OK);
	CHECK(strstr(b.data, "<testsuites name=\"needle\" tests=\"10\"") != NULL);
	buf_release(&b);
}

static int exists(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* report_write writes the whole set or none: a summary.md that cannot be
 * staged leaves no summary.json and no staged file behind. */
static void test_write_set(void)
{
	char dir[] = "/tmp/needle-test-report-XXXXXX", p[512];
	struct buf b;
	struct diag d;
	struct report_sum s;

	CHECK(mkdtemp(dir) != NULL);
	buf_init(&b, 1 << 20);
	diag_init(&d);
	CHECK(io_read_file(t_fixture("results/a/results.jsonl"), &b, &d) == ERR_OK);
	snprintf(p, sizeof(p), "%s/results.jsonl", dir);
	CHECK(io_write_file(p, b.data, b.len, &d) == ERR_OK);
	snprintf(p, sizeof(p), "%s/summary.md.staged.%ld", dir, (long)getpid());
	CHECK(mkdir(p, 0700) == 0); /* staging summary.md will fail */
	CHECK(report_write(dir, NULL, &d) == ERR_IO);
	CHECK(strstr(d.msg, "summary.md") != NULL);
	CHECK(!exists(dir, "summary.json") && !exists(dir, "recall.png") && !exists(dir, "summary.md"));
	snprintf(p, sizeof(p), "summary.json.staged.%ld", (long)getpid());
	CHECK(!exists(dir, p));
	snprintf(p, sizeof(p), "%s/summary.md.staged.%ld", dir, (long)getpid());
	CHECK(rmdir(p) == 0);
	diag_init(&d);
	CHECK(report_write(dir, &s, &d) == ERR_OK && s.s != NULL && s.cases.n == 4);
	CHECK(exists(dir, "summary.json") && exists(dir, "summary.md") && exists(dir, "recall.png"));
	snprintf(p, sizeof(p), "%s/summary.json", dir);
	buf_reset(&b);
	CHECK(io_read_file(p, &b, &d) == ERR_OK && strstr(b.data, "\"needle_summary\":") != NULL);
	report_sum_release(&s);
	buf_release(&b);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(system(p) == 0);
}

int main(void)
{
	T_RUN(test_summary_a);
	T_RUN(test_format_table);
	T_RUN(test_torn_and_bad);
	T_RUN(test_diff);
	T_RUN(test_gates);
	T_RUN(test_heatmap);
	T_RUN(test_length_labels);
	T_RUN(test_render);
	T_RUN(test_failures);
	T_RUN(test_advice);
	T_RUN(test_rows);
	T_RUN(test_write_set);
	return T_DONE();
}
