/* Unit tests of generators/cases: determinism, the strict-JSON tasks' answers
 * (checked against their own stated types and recomputed independently from
 * the prompt text), unique tool results, valid UTF-8, image-order twins. */
#include <png.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/evp.h>
#include <utf8proc.h>

#include "generators/cases.h"
#include "generators/image.h"
#include "t.h"

static cJSON *suite_of(uint64_t seed, unsigned kinds)
{
	cJSON *s = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(cases_suite(seed, kinds, "t", "d", &s, &d) == ERR_OK);
	if (d.code)
		fprintf(stderr, "%s\n", d.msg);
	return s;
}

static cJSON *case_by_id(cJSON *suite, const char *id)
{
	cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(suite, "cases"))
		if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id))
			return c;
	return NULL;
}

static void test_determinism(void)
{
	cJSON *a = suite_of(1, CASES_ALL), *b = suite_of(1, CASES_ALL), *c = suite_of(2, CASES_ALL);
	char *ta = cJSON_PrintUnformatted(a), *tb = cJSON_PrintUnformatted(b);
	char *tc = cJSON_PrintUnformatted(c);

	CHECK(ta && tb && tc);
	CHECK(ta && tb && !strcmp(ta, tb));
	CHECK(ta && tc && strcmp(ta, tc) != 0);
	/* the seed-report examples do not move with the seed */
	CHECK(cJSON_Compare(case_by_id(a, "json-order-total"), case_by_id(c, "json-order-total"), 1));
	/* every id is unique and every case has messages and an expectation */
	{
		cJSON *x, *y;
		int n = 0;

		cJSON_ArrayForEach(x, cJSON_GetObjectItem(a, "cases")) {
			n++;
			CHECK(cJSON_IsArray(cJSON_GetObjectItem(x, "messages")));
			CHECK(cJSON_IsObject(cJSON_GetObjectItem(x, "expect")));
			cJSON_ArrayForEach(y, cJSON_GetObjectItem(a, "cases"))
				CHECK(x == y || strcmp(cJSON_GetObjectItem(x, "id")->valuestring,
						       cJSON_GetObjectItem(y, "id")->valuestring));
		}
		CHECK_EQ_LONG(n, CASES_JSON_TASKS + 5 + 4 + 4);
	}
	cJSON_free(ta);
	cJSON_free(tb);
	cJSON_free(tc);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

/* Each task's expected value has its stated types, and the prompt names
 * every top-level key in quotes, so the types are in the wording. */
static void test_tasks_typed(void)
{
	uint64_t seed;
	int i;

	for (seed = 0; seed < 20; seed++)
		for (i = 0; i < CASES_JSON_TASKS; i++) {
			struct cases_task t;
			cJSON *types, *k;
			char why[256], key[64];

			CHECK(cases_json_task(seed, i, &t, NULL) == ERR_OK);
			types = cJSON_Parse(t.types);
			CHECK(types != NULL);
			if (cases_types_match(t.expected, types, why, sizeof(why)) != 1) {
				fprintf(stderr, "task %s: %s\n", t.id, why);
				CHECK(0);
			}
			cJSON_ArrayForEach(k, types) {
				snprintf(key, sizeof(key), "\"%s\"", k->string);
				CHECK(strstr(t.prompt, key) != NULL);
			}
			cJSON_Delete(types);
			cases_task_release(&t);
		}
}

/* The type checker rejects what the seed report's model answered. */
static void test_types_reject(void)
{
	cJSON *types = cJSON_Parse("{\"items\":\"integer\",\"total\":\"integer\"}");
	cJSON *v = cJSON_Parse("{\"items\":[\"apple\",\"book\"],\"total\":34}");
	cJSON *nul = cJSON_Parse("{\"a\":\"string|null\"}"), *x;
	char why[256];

	CHECK(cases_types_match(v, types, why, sizeof(why)) == 0);
	CHECK_STR(why, "key 'items': expected integer, got array");
	cJSON_Delete(v);
	v = cJSON_Parse("{\"items\":5,\"total\":34.5}");
	CHECK(cases_types_match(v, types, why, sizeof(why)) == 0);
	cJSON_Delete(v);
	v = cJSON_Parse("{\"items\":5,\"total\":34,\"extra\":1}");
	CHECK(cases_types_match(v, types, why, sizeof(why)) == 0);
	CHECK(strstr(why, "unexpected key 'extra'") != NULL);
	x = cJSON_Parse("{\"a\":null}");
	CHECK(cases_types_match(x, nul, why, sizeof(why)) == 1);
	cJSON_Delete(x);
	x = cJSON_Parse("{\"a\":3}");
	CHECK(cases_types_match(x, nul, why, sizeof(why)) == 0);
	cJSON_Delete(x);
	x = cJSON_Parse("\"bogus\"");
	CHECK(cases_types_match(v, x, why, sizeof(why)) == -1);
	cJSON_Delete(x);
	cJSON_Delete(v);
	cJSON_Delete(nul);
	cJSON_Delete(types);
}

static struct cases_task task_named(uint64_t seed, const char *id)
{
	struct cases_task t;
	int i;

	for (i = 0; i < CASES_JSON_TASKS; i++) {
		CHECK(cases_json_task(seed, i, &t, NULL) == ERR_OK);
		if (!strcmp(t.id, id))
			return t;
		cases_task_release(&t);
	}
	memset(&t, 0, sizeof(t));
	CHECK(0);
	return t;
}

static long num(const cJSON *obj, const char *key)
{
	return (long)cJSON_GetObjectItem(obj, key)->valuedouble;
}

/* Answers recomputed from the prompt text by other means than cases.c. */
static void test_tasks_recomputed(void)
{
	uint64_t seed;

	for (seed = 0; seed < 30; seed++) {
		struct cases_task t;
		const char *p;
		long a, b, y, m, dd, n, sum, i;
		char want[16];
		struct tm tm;
		time_t when;
		cJSON *arr, *x;

		t = task_named(seed, "divide-remainder");
		CHECK(sscanf(t.prompt, "Divide %ld by %ld", &a, &b) == 2);
		CHECK(num(t.expected, "quotient") * b + num(t.expected, "remainder") == a);
		CHECK(num(t.expected, "remainder") >= 0 && num(t.expected, "remainder") < b);
		cases_task_release(&t);

		t = task_named(seed, "date-add");
		CHECK(sscanf(t.prompt, "What date is %ld days after %ld-%ld-%ld", &n, &y, &m, &dd) == 4);
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = (int)y - 1900;
		tm.tm_mon = (int)m - 1;
		tm.tm_mday = (int)(dd + n);
		tm.tm_hour = 12;
		when = timegm(&tm);
		gmtime_r(&when, &tm);
		strftime(want, sizeof(want), "%Y-%m-%d", &tm);
		CHECK_STR(cJSON_GetObjectItem(t.expected, "date")->valuestring, want);
		strftime(want, sizeof(want), "%A", &tm); /* C locale */
		CHECK_STR(cJSON_GetObjectItem(t.expected, "weekday")->valuestring, want);
		cases_task_release(&t);

		t = task_named(seed, "sort-ascending");
		arr = cJSON_GetObjectItem(t.expected, "sorted");
		CHECK_EQ_LONG(cJSON_GetArraySize(arr), 6);
		a = -1;
		cJSON_ArrayForEach(x, arr) {
			char needle[16];

			CHECK(x->valueint > a);
			a = x->valueint;
			snprintf(needle, sizeof(needle), " %d", x->valueint);
			CHECK(strstr(t.prompt, needle) != NULL);
		}
		cases_task_release(&t);

		t = task_named(seed, "count-word");
		p = strchr(t.prompt, ':');
		for (n = 0; p && (p = strstr(p, "blue")); p += 4)
			n++;
		CHECK_EQ_LONG(num(t.expected, "count"), n);
		cases_task_release(&t);

		t = task_named(seed, "expense-total");
		p = strchr(t.prompt, ':');
		for (sum = 0, i = 0; p && *p && *p != '.'; p++) {
			long e, c;

			if (sscanf(p, "%ld.%ld", &e, &c) == 2 && p[-1] == ' ') {
				sum += e * 100 + c;
				i++;
				p = strchr(p, '.') + 2;
			}
		}
		CHECK(i >= 3);
		CHECK_EQ_LONG((long)(cJSON_GetObjectItem(t.expected, "total_eur")->valuedouble * 100 + 0.5),
			      sum);
		cases_task_release(&t);
	}
}

static void collect_strings(const cJSON *v, void (*fn)(const char *, void *), void *ctx)
{
	const cJSON *c;

	if (cJSON_IsString(v))
		fn(v->valuestring, ctx);
	if (v->string)
		fn(v->string, ctx);
	for (c = v->child; c; c = c->next)
		collect_strings(c, fn, ctx);
}

struct utf8_stats {
	int strings, bad, cjk;
};

static void check_utf8(const char *s, void *ctx)
{
	struct utf8_stats *st = ctx;
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	utf8proc_ssize_t left = (utf8proc_ssize_t)strlen(s);
	int has_cjk = 0;

	st->strings++;
	while (left > 0) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);

		if (n < 0) {
			st->bad++;
			return;
		}
		has_cjk |= cp >= 0x4e00 && cp <= 0x9fff;
		p += n;
		left -= n;
	}
	st->cjk += has_cjk;
}

/* Every string in every suite is valid UTF-8, and the Chinese cases are
 * really Chinese. */
static void test_utf8(void)
{
	struct utf8_stats st = {0, 0, 0};
	uint64_t seed;

	for (seed = 0; seed < 5; seed++) {
		cJSON *s = suite_of(seed, CASES_ALL);

		if (s)
			collect_strings(s, check_utf8, &st);
		cJSON_Delete(s);
	}
	CHECK(st.strings > 500);
	CHECK_EQ_LONG(st.bad, 0);
	CHECK(st.cjk >= 5 * 15); /* zh task, two zh scripts with 7 turns + answers */
}

static void cat_messages(const cJSON *c, struct buf *out)
{
	const cJSON *m;

	buf_reset(out);
	cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "messages")) {
		char *t = cJSON_PrintUnformatted(m);

		buf_puts(out, t);
		cJSON_free(t);
	}
}

/* Every value the final answer must contain is unique, sits in a tool result,
 * and never in the prompt. */
static void test_tool_results_unique(void)
{
	uint64_t seed;

	for (seed = 0; seed < 20; seed++) {
		cJSON *s = suite_of(seed, CASES_TOOL), *c, *v;
		const char *seen[16];
		int n = 0, i, none = 0, parallel = 0;
		struct buf prompt;

		buf_init(&prompt, 1 << 20);
		cJSON_ArrayForEach(c, cJSON_GetObjectItem(s, "cases")) {
			cJSON *ex = cJSON_GetObjectItem(c, "expect");
			char *results = cJSON_PrintUnformatted(ex);

			CHECK_STR(cJSON_GetObjectItem(c, "kind")->valuestring, "tool_call");
			CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(c, "tools")) >= 1);
			cat_messages(c, &prompt);
			none += cJSON_IsTrue(cJSON_GetObjectItem(ex, "no_tool_call"));
			parallel += cJSON_GetArraySize(cJSON_GetObjectItem(ex, "tool_calls")) == 2;
			cJSON_ArrayForEach(v, cJSON_GetObjectItem(ex, "final_contains")) {
				CHECK(strlen(v->valuestring) >= 6);
				CHECK(strstr(prompt.data, v->valuestring) == NULL);
				CHECK(strstr(results, v->valuestring) != NULL);
				for (i = 0; i < n; i++)
					CHECK(strcmp(seen[i], v->valuestring) != 0);
				if (n < 16)
					seen[n++] = v->valuestring;
			}
			/* expected arguments name a tool that is offered */
			if (cJSON_GetObjectItem(ex, "tool_call")) {
				const char *name = cJSON_GetObjectItem(cJSON_GetObjectItem(ex, "tool_call"),
								       "name")->valuestring;
				char *tools = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "tools"));
				char q[64];

				snprintf(q, sizeof(q), "\"name\":\"%s\"", name);
				CHECK(strstr(tools, q) != NULL);
				CHECK(cJSON_IsString(cJSON_GetObjectItem(ex, "tool_result")));
				cJSON_free(tools);
			}
			cJSON_free(results);
		}
		CHECK(n >= 5);
		CHECK_EQ_LONG(none, 1);
		CHECK_EQ_LONG(parallel, 1);
		buf_release(&prompt);
		cJSON_Delete(s);
	}
}

/* Each planted fact is in the turn "recall" names; a corrected one is not
 * its earlier value; the conversation ends with the user's question. */
static void test_multi_turn(void)
{
	cJSON *s = suite_of(4, CASES_MULTITURN), *c, *r;
	int zh = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(s, "cases")) {
		cJSON *msgs = cJSON_GetObjectItem(c, "messages");
		cJSON *ex = cJSON_GetObjectItem(c, "expect");
		cJSON *answer = cJSON_GetObjectItem(ex, "json");
		int n = cJSON_GetArraySize(msgs), keys = 0;

		zh += strstr(cJSON_GetObjectItem(c, "id")->valuestring, "-zh-") != NULL;
		CHECK(n >= 5);
		CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, n - 1), "role")->valuestring,
			  "user");
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(ex, "recall")) {
			const char *key = cJSON_GetObjectItem(r, "key")->valuestring;
			cJSON *val = cJSON_GetObjectItem(answer, key), *sup;
			int at = cJSON_GetObjectItem(r, "message")->valueint;
			const char *text = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, at),
							       "content")->valuestring;
			char want[64];

			keys++;
			CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, at), "role")->valuestring,
				  "user");
			if (cJSON_IsString(val))
				snprintf(want, sizeof(want), "%s", val->valuestring);
			else
				snprintf(want, sizeof(want), "%d", val ? val->valueint : -1);
			CHECK(strstr(text, want) != NULL);
			sup = cJSON_GetObjectItem(r, "superseded");
			if (sup)
				CHECK(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, sup->valueint),
								 "content")->valuestring, want) == NULL);
		}
		CHECK_EQ_LONG(keys, cJSON_GetArraySize(answer));
	}
	CHECK_EQ_LONG(zh, 2);
	cJSON_Delete(s);
}

/* The colour at the shape's centre of a data-URL PNG. */
static int centre_colour(const char *url, unsigned char rgb[3])
{
	const char *b64 = url + strlen("data:image/png;base64,");
	size_t n = strlen(b64);
	unsigned char *bytes = malloc(n), *px = NULL;
	png_image img;
	int len, ok = 0;

	len = EVP_DecodeBlock(bytes, (const unsigned char *)b64, (int)n);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (len > 0 && png_image_begin_read_from_memory(&img, bytes, (size_t)len)) {
		img.format = PNG_FORMAT_RGB;
		px = malloc(PNG_IMAGE_SIZE(img));
		if (px && png_image_finish_read(&img, NULL, px, 0, NULL)) {
			/* the centre of an unlabelled or labelled shape is on this column,
			 * and 2/5 down is inside both layouts */
			size_t at = ((size_t)(img.height * 2 / 5) * img.width + img.width / 2) * 3;

			memcpy(rgb, px + at, 3);
			ok = 1;
		} else {
			png_image_free(&img);
		}
	}
	free(px);
	free(bytes);
	return ok;
}

static const char *image_url(cJSON *c, int i)
{
	cJSON *content = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "messages"), 0),
					     "content");

	return cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(content, i), "image_url"),
				   "url")->valuestring;
}

/* Each twin shows the same images swapped and expects the answer reversed;
 * each image really has the colour the answer names. */
static void test_image_twins(void)
{
	cJSON *s = suite_of(9, CASES_IMAGE), *c;
	int n = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(s, "cases")) {
		cJSON *ex = cJSON_GetObjectItem(c, "expect"), *io = cJSON_GetObjectItem(ex, "image_order");
		cJSON *tw = case_by_id(s, cJSON_GetObjectItem(io, "twin")->valuestring);
		cJSON *tex, *objs, *tobjs, *first, *second;
		unsigned char rgb[3], want[3];
		int k;

		n++;
		CHECK_STR(cJSON_GetObjectItem(c, "kind")->valuestring, "image_order");
		CHECK(tw != NULL && tw != c);
		if (!tw)
			continue;
		tex = cJSON_GetObjectItem(tw, "expect");
		CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(tex, "image_order"), "twin")->valuestring,
			  cJSON_GetObjectItem(c, "id")->valuestring);
		first = cJSON_GetObjectItem(cJSON_GetObjectItem(ex, "json"), "first");
		second = cJSON_GetObjectItem(cJSON_GetObjectItem(ex, "json"), "second");
		CHECK(!cJSON_Compare(first, second, 1));
		CHECK(cJSON_Compare(first, cJSON_GetObjectItem(cJSON_GetObjectItem(tex, "json"), "second"), 1));
		CHECK(cJSON_Compare(second, cJSON_GetObjectItem(cJSON_GetObjectItem(tex, "json"), "first"), 1));
		objs = cJSON_GetObjectItem(io, "objects");
		tobjs = cJSON_GetObjectItem(cJSON_GetObjectItem(tex, "image_order"), "objects");
		CHECK_STR(cJSON_GetArrayItem(objs, 0)->valuestring, cJSON_GetArrayItem(tobjs, 1)->valuestring);
		CHECK_STR(cJSON_GetArrayItem(objs, 1)->valuestring, cJSON_GetArrayItem(tobjs, 0)->valuestring);
		CHECK_STR(image_url(c, 0), image_url(tw, 1));
		CHECK_STR(image_url(c, 1), image_url(tw, 0));
		CHECK(strcmp(image_url(c, 0), image_url(c, 1)) != 0);
		for (k = 0; k < 2; k++) {
			const char *colour = cJSON_GetObjectItem(k ? second : first, "colour")->valuestring;
			int i, found = 0;
			char text[64];

			snprintf(text, sizeof(text), "%s %s", colour,
				 cJSON_GetObjectItem(k ? second : first, "shape")->valuestring);
			CHECK_STR(cJSON_GetArrayItem(objs, k)->valuestring, text);
			CHECK(centre_colour(image_url(c, k), rgb));
			for (i = 0; i < IMAGE_NCOLOURS; i++)
				if (!strcmp(image_colour_name((enum image_colour)i), colour)) {
					image_colour_rgb((enum image_colour)i, want);
					found = 1;
				}
			CHECK(found && !memcmp(rgb, want, 3));
		}
	}
	CHECK_EQ_LONG(n, 4);
	cJSON_Delete(s);
}

static void test_json_task_cases(void)
{
	cJSON *s = suite_of(1, CASES_JSON), *c;
	int n = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(s, "cases")) {
		n++;
		CHECK_STR(cJSON_GetObjectItem(c, "kind")->valuestring, "chat");
		CHECK(cJSON_GetObjectItem(c, "temperature")->valuedouble == 1.0);
		CHECK(cJSON_GetObjectItem(c, "top_p")->valuedouble == 1.0);
		CHECK_EQ_LONG(cJSON_GetObjectItem(c, "repeat")->valueint, 3);
		CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "expect"), "json") != NULL);
		CHECK_EQ_LONG(cJSON_GetArraySize(cJSON_GetObjectItem(c, "expect")), 1);
	}
	CHECK_EQ_LONG(n, CASES_JSON_TASKS);
	{
		cJSON *o = case_by_id(s, "json-order-total");
		cJSON *want = cJSON_Parse("{\"items\":5,\"total\":34}");

		CHECK(o && cJSON_Compare(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "expect"), "json"),
					 want, 1));
		cJSON_Delete(want);
	}
	cJSON_Delete(s);
}

static void test_parse_kinds(void)
{
	unsigned k = 0;
	struct diag d;

	diag_init(&d);
	CHECK(cases_parse_kinds("all", &k, &d) == ERR_OK && k == CASES_ALL);
	CHECK(cases_parse_kinds("json,image", &k, &d) == ERR_OK && k == (CASES_JSON | CASES_IMAGE));
	CHECK(cases_parse_kinds("json,imag", &k, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "unknown case kind 'imag'") != NULL);
	diag_init(&d);
	CHECK(cases_parse_kinds("", &k, &d) == ERR_USAGE);
}

int main(void)
{
	T_RUN(test_determinism);
	T_RUN(test_tasks_typed);
	T_RUN(test_types_reject);
	T_RUN(test_tasks_recomputed);
	T_RUN(test_utf8);
	T_RUN(test_tool_results_unique);
	T_RUN(test_multi_turn);
	T_RUN(test_image_twins);
	T_RUN(test_json_task_cases);
	T_RUN(test_parse_kinds);
	return T_DONE();
}
