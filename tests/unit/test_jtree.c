/* Unit tests of jtree: the tree it builds is the tree cJSON_Parse builds
 * (values, member order, numbers to the bit, decoded strings, the first
 * child's prev), blocks are kept and reused across documents of any size,
 * strings are ended in place, and what is not one JSON value is refused with
 * jscan's message. */
#include <math.h>
#include <stdint.h>

#include "base/jget.h"
#include "base/jscan.h"
#include "base/jscan.h"
#include "base/mem.h"
#include "t.h"

/* Whether trees `a` (jtree) and `b` (cJSON) hold the same values, numbers
 * compared bit for bit, and `a` links its children as cJSON does. */
static int same(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;

	if ((a->type & 0xFF) != (b->type & 0xFF) || (!a->string) != (!b->string) ||
	    (a->string && strcmp(a->string, b->string)))
		return 0;
	if (cJSON_IsNumber(a))
		return !memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) &&
		       a->valueint == b->valueint;
	if (cJSON_IsString(a))
		return !strcmp(a->valuestring, b->valuestring);
	for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
		if (!same(x, y))
			return 0;
	if (x || y)
		return 0;
	for (x = a->child; x && x->next; x = x->next)
		;
	return !a->child || a->child->prev == x; /* the first child's prev is the last */
}

/* Parses `text` both ways and compares. */
static void agrees(struct jtree *t, const char *text)
{
	char *copy = mem_strndup(text, strlen(text));
	cJSON *want = cJSON_Parse(text), *got = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(copy && want);
	if (!copy || !want)
		goto out;
	CHECK(jtree_parse(t, copy, strlen(copy), "a test", &got, &d) == ERR_OK);
	if (got && !same(got, want))
		fprintf(stderr, "jtree differs from cJSON on: %.200s\n", text);
	CHECK(got && same(got, want));
out:
	cJSON_Delete(want);
	mem_free(copy);
}

static void test_like_cjson(void)
{
	static const char *const docs[] = {
		"{\"case\":\"c0\",\"kind\":\"chat\",\"repeat\":1,\"seed\":null,\"verdict\":\"pass\","
		"\"transport\":{\"ok\":true,\"failures\":[],\"messages\":[]},"
		"\"timing\":{\"first_byte_ms\":2.082,\"ttft_ms\":2.082,\"e2e_ms\":2.127,\"tpot_ms\":null},"
		"\"usage\":{\"prompt_tokens\":5},\"content\":\"ok\",\"raw\":\"raw/c0-r1.sse\"}",
		" [ 1 , -0 , 0.5 , -2.5e-3 , 1E+2 , 123456789012345678901234567890 , 9007199254740993 ,"
		" 2147483648 , -2147483649 , 1e400 , 0.1 , 3.141592653589793 , 1e-22 , 12345678901234.5 ] ",
		"{\"s\":\"tab\\there \\\"quoted\\\" \\\\ \\/ \\u00e9 \\ud83d\\ude00 \\u4e2d\",\"e\":\"\",\"a\":[[],{},[{}]]}",
		"{\"dup\":1,\"dup\":2,\"\":true,\"f\":false}",
		"\"just a string\"", "42", "null", "true",
	};
	struct jtree t;
	size_t i;

	jtree_init(&t);
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		agrees(&t, docs[i]);
	jtree_release(&t);
}

/* Numbers of every shape: the fast path and strtod give the same bits. */
static void test_numbers(void)
{
	unsigned long long x = 0x9E3779B97F4A7C15ULL;
	char text[64];
	struct jtree t;
	int i;

	jtree_init(&t);
	for (i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 4) {
		case 0:
			snprintf(text, sizeof(text), "%llu.%03llu", x % 100000, (x >> 20) % 1000);
			break;
		case 1:
			snprintf(text, sizeof(text), "-0.%0*llu", (int)(x % 20) + 1, (x >> 8) % 1000000007);
			break;
		case 2:
			snprintf(text, sizeof(text), "%llu", x >> (x % 64));
			break;
		default:
			snprintf(text, sizeof(text), "%.17g", (double)(x >> 11) * pow(10, (double)(x % 40) - 20));
		}
		agrees(&t, text);
	}
	jtree_release(&t);
}

/* A document larger than a block, then small ones: the blocks are kept and
 * the trees stay right; a string without escapes is ended in place. */
static void test_blocks_and_in_place(void)
{
	struct buf big;
	struct jtree t;
	cJSON *v = NULL;
	char small[] = "{\"k\":\"view\",\"e\":\"a\\nb\"}";
	struct diag d;
	int i;

	buf_init(&big, BUF_MAX_DEFAULT);
	CHECK(buf_putc(&big, '[') == ERR_OK);
	for (i = 0; i < 20000; i++)
		CHECK(buf_printf(&big, "%s{\"n\":%d,\"s\":\"x%d\"}", i ? "," : "", i, i) == ERR_OK);
	CHECK(buf_putc(&big, ']') == ERR_OK);
	jtree_init(&t);
	agrees(&t, big.data);
	agrees(&t, "[1,2,3]");
	agrees(&t, big.data);
	diag_init(&d);
	CHECK(jtree_parse(&t, small, strlen(small), "a test", &v, &d) == ERR_OK);
	CHECK(v && !strcmp(cJSON_GetObjectItem(v, "k")->valuestring, "view"));
	CHECK(v && cJSON_GetObjectItem(v, "k")->valuestring == small + 6);
	CHECK(v && !strcmp(cJSON_GetObjectItem(v, "e")->valuestring, "a\nb"));
	jtree_release(&t);
	buf_release(&big);
}

static void refused(const char *text, const char *why)
{
	char *copy = mem_strndup(text, strlen(text));
	struct jtree t;
	cJSON *v = (cJSON *)1;
	struct diag d;

	diag_init(&d);
	jtree_init(&t);
	CHECK(jtree_parse(&t, copy, strlen(copy), "a test", &v, &d) == ERR_INPUT);
	CHECK(v == NULL);
	if (!strstr(d.msg, why))
		fprintf(stderr, "'%s': %s\n", text, d.msg);
	CHECK(strstr(d.msg, "cannot parse 'a test': line 1, column") && strstr(d.msg, why));
	CHECK(jtree_parse(&t, copy, strlen(copy), "a test", &v, NULL) == ERR_INPUT);
	jtree_release(&t);
	mem_free(copy);
}

static void test_refused(void)
{
	refused("", "expected a value");
	refused("{", "expected a member name");
	refused("[1,]", "expected a value");
	refused("{\"a\" 1}", "expected ':'");
	refused("{\"a\":1", "expected ',' or '}'");
	refused("tru", "expected a value");
	refused("\"\\x\"", "bad escape");
	refused("\"\\ud800\"", "lone high surrogate");
	refused("\"a\tb\"", "control character");
	refused("1 2", "expected the end after the value");
	refused("[1.]", "bad number");
	refused("{\"a\":1}}", "expected the end after the value");
}

/* JSCAN_MAX_DEPTH arrays around a number or a string are read; one more is
 * refused where the innermost value starts, whatever that value is. */
static void test_depth(void)
{
	static const char *const inner[] = {"1", "\"s\"", "true", "[]", "{}"};
	char text[2 * JSCAN_MAX_DEPTH + 16], want[32];
	struct jtree t;
	size_t i, k;

	jtree_init(&t);
	for (i = 0; i < sizeof(inner) / sizeof(inner[0]); i++) {
		for (k = JSCAN_MAX_DEPTH; k <= JSCAN_MAX_DEPTH + 1; k++) {
			size_t n = 0, m;

			for (m = 0; m < k; m++)
				text[n++] = '[';
			n += (size_t)sprintf(text + n, "%s", inner[i]);
			for (m = 0; m < k; m++)
				text[n++] = ']';
			text[n] = '\0';
			if (k == JSCAN_MAX_DEPTH && i < 3) {
				agrees(&t, text);
				continue;
			}
			if (k == JSCAN_MAX_DEPTH)
				continue; /* a container inside is one level deeper */
			snprintf(want, sizeof(want), "column %zu", k + 1);
			refused(text, want);
			refused(text, "nested too deeply");
		}
	}
	jtree_release(&t);
}

/* The same of objects, the innermost value after a space: refused where
 * the value starts, past the space; a bad name at that depth is refused
 * as a bad name first. */
static void test_depth_objects(void)
{
	char text[6 * JSCAN_MAX_DEPTH + 32], want[32];
	struct jtree t;
	size_t k, n, m;

	jtree_init(&t);
	for (k = JSCAN_MAX_DEPTH; k <= JSCAN_MAX_DEPTH + 1; k++) {
		for (n = 0, m = 0; m < k; m++)
			n += (size_t)sprintf(text + n, "{\"a\":");
		n += (size_t)sprintf(text + n, " 1");
		for (m = 0; m < k; m++)
			text[n++] = '}';
		text[n] = '\0';
		if (k == JSCAN_MAX_DEPTH) {
			agrees(&t, text);
			continue;
		}
		snprintf(want, sizeof(want), "column %zu", 5 * k + 2);
		refused(text, want);
		refused(text, "nested too deeply");
		for (n = 0, m = 0; m < k; m++)
			n += (size_t)sprintf(text + n, m + 1 < k ? "{\"a\":" : "{a:1");
		for (m = 0; m < k; m++)
			text[n++] = '}';
		text[n] = '\0';
		refused(text, "expected a member name");
	}
	jtree_release(&t);
}

/* Strings whose escape, quote or control byte falls at every offset of the
 * eight-byte steps of the scan: decoded as cJSON decodes them, or refused. */
static void test_string_stops(void)
{
	static const char *const stops[] = {"\\n", "\\\"", "\\u00e9", "\"", "\x01", "\x1f"};
	struct jtree t;
	char text[96], pad[40];
	size_t i, k;

	jtree_init(&t);
	for (i = 0; i < 24; i++)
		for (k = 0; k < sizeof(stops) / sizeof(stops[0]); k++) {
			memset(pad, 'a', i);
			pad[i] = '\0';
			snprintf(text, sizeof(text), "[\"%s%s\xc3\xa9\x7f b\"]", pad, stops[k]);
			if (k < 3) {
				agrees(&t, text);
			} else {
				cJSON *v;
				struct diag d;

				diag_init(&d);
				CHECK(jtree_parse(&t, text, strlen(text), "a test", &v, &d) == ERR_INPUT);
			}
		}
	jtree_release(&t);
}

/* The root of the tree parsed last is indexed for jget: every member found
 * (the first of duplicate names), absent names not; forgotten at the next
 * parse. */
static void test_root_indexed(void)
{
	char a[] = "{\"repeat\":1,\"reasoning\":2,\"request\":3,\"r\":4,\"\":5,"
		   "\"started_at\":6,\"started_unix_ms\":7,\"repeat\":8,\"o\":{\"x\":9}}";
	char b[] = "{\"x\":1}";
	static const char *const names[] = {"repeat", "reasoning", "request", "r", "", "started_at",
					    "started_unix_ms"};
	struct jtree t;
	cJSON *v, *w;
	size_t i;

	jtree_init(&t);
	CHECK(jtree_parse(&t, a, strlen(a), "a test", &v, NULL) == ERR_OK);
	for (i = 0; v && i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(jget(v, names[i]) && jget(v, names[i])->valuedouble == (double)(i + 1));
	CHECK(v && !jget(v, "repeats") && !jget(v, "rep") && !jget(v, "x") && !jget(v, "started"));
	CHECK(v && jget2(v, "o", "x") && jget2(v, "o", "x")->valuedouble == 9);
	CHECK(jtree_parse(&t, b, strlen(b), "a test", &w, NULL) == ERR_OK);
	CHECK(w && jget_num(w, "x") == 1);
	jtree_release(&t);
}

/* An object of more members than the index holds is walked: every member
 * still found. */
static void test_wide_root(void)
{
	struct buf text;
	struct jtree t;
	cJSON *v = NULL;
	char name[16];
	int i, found = 0;

	buf_init(&text, 1 << 20);
	jtree_init(&t);
	for (i = 0; i < 300; i++)
		CHECK(buf_printf(&text, "%s\"m%d\":%d", i ? "," : "{", i, i) == ERR_OK);
	CHECK(buf_putc(&text, '}') == ERR_OK);
	CHECK(jtree_parse(&t, text.data, text.len, "a test", &v, NULL) == ERR_OK);
	for (i = 0; v && i < 300; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		found += jget_num(v, name) == i && jget(v, name);
	}
	CHECK(found == 300 && !jget(v, "m300"));
	jtree_release(&t);
	buf_release(&text);
}

/* The exact message of each refusal, wherever the inline paths hand the
 * byte to jscan: after a name, a ',' or a value, in a name, in a number,
 * across lines. */
static void test_messages(void)
{
	static const char *const cases[][2] = {
		{"{\"a\":1,}", "line 1, column 8 (byte 7): expected a member name"},
		{"{\"a\" :1,\"b\":}", "line 1, column 13 (byte 12): expected a value"},
		{"{\"a\":1 \"b\":2}", "line 1, column 8 (byte 7): expected ',' or '}'"},
		{"[1,2 3]", "line 1, column 6 (byte 5): expected ',' or ']'"},
		{"{\"a\":[1,{\"b\":tru}]}", "line 1, column 14 (byte 13): expected a value"},
		{"{\"k\\q\":1}", "line 1, column 5 (byte 4): bad escape in a string"},
		{"{\"k\x01\":1}", "line 1, column 4 (byte 3): control character in a string"},
		{"{\"a\":\"\\ud800\"}", "line 1, column 8 (byte 7): lone high surrogate in a string"},
		{"{\"a\":\"\\udc00x\"}", "line 1, column 8 (byte 7): lone low surrogate in a string"},
		{"{\"a\":-}", "line 1, column 7 (byte 6): bad number"},
		{"{\"a\":1.}", "line 1, column 8 (byte 7): bad number"},
		{"{\"a\":1e}", "line 1, column 8 (byte 7): bad number"},
		{"{\"a\":01x}", "line 1, column 8 (byte 7): expected ',' or '}'"},
		{"{\"a\":1}\n{", "line 2, column 1 (byte 8): expected the end after the value"},
		{" \n {\"a\":\n1,\n\"b\"\n}", "line 5, column 1 (byte 16): expected ':'"},
		{"{\"a\"", "line 1, column 5 (byte 4): unexpected end of file, expected ':'"},
		{"{\"a\":\"x", "line 1, column 8 (byte 7): unexpected end of file, inside a string"},
		{"[\"\\u12\"]", "line 1, column 4 (byte 3): bad \\u escape in a string"},
		{"{1:2}", "line 1, column 2 (byte 1): expected a member name"},
		{"{\"a\":1} x", "line 1, column 9 (byte 8): expected the end after the value"},
		{"{\"a\":nul}", "line 1, column 6 (byte 5): expected a value"},
		{"{\"a\":truex}", "line 1, column 10 (byte 9): expected ',' or '}'"},
	};
	char text[64], want[160];
	struct jtree t;
	cJSON *v;
	struct diag d;
	size_t i;

	jtree_init(&t);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s", cases[i][0]);
		snprintf(want, sizeof(want), "cannot parse 'a test': %s", cases[i][1]);
		diag_init(&d);
		CHECK(jtree_parse(&t, text, strlen(text), "a test", &v, &d) == ERR_INPUT);
		if (strcmp(d.msg, want))
			fprintf(stderr, "'%s': got '%s', want '%s'\n", cases[i][0], d.msg, want);
		CHECK(!strcmp(d.msg, want));
	}
	jtree_release(&t);
}

/* Names read inline or by jscan: bytes from 0x80 up, escapes, quotes and
 * control bytes at every offset of a 16-byte step, whitespace around the
 * ':', a name ending the text. */
static void test_names(void)
{
	static const char *const stops[] = {"", "\\n", "\\\"", "\\u00e9", "\xc3\xa9\xff\x80", "\x7f"};
	struct jtree t;
	char text[128], pad[40];
	size_t i, k;

	jtree_init(&t);
	for (i = 0; i < 34; i++)
		for (k = 0; k < sizeof(stops) / sizeof(stops[0]); k++) {
			memset(pad, 'k', i);
			pad[i] = '\0';
			snprintf(text, sizeof(text), "{\"%s%s\":%zu,\"%s\" : \"v\",\"x\"\t:\n[]}", pad,
				 stops[k], i, stops[k]);
			agrees(&t, text);
		}
	agrees(&t, "{\"\xe4\xb8\xad\xe6\x96\x87\":\"\xf0\x9f\x98\x80\",\"\\u4e2d\":1}");
	refused("{\"a\"", "unexpected end of file, expected ':'");
	refused("{\"a\x1f\":1}", "control character in a string");
	jtree_release(&t);
}

/* Numbers at each edge of the inline conversion (15 digits, with or without
 * a fraction, leading zeros, -0, an exponent after them, a number ending
 * the text or followed by whitespace): the bits strtod gives. */
static void test_number_edges(void)
{
	static const char *const nums[] = {
		"0", "-0", "-0.0", "00", "007.50", "123456789012345", "1234567890123456",
		"999999999999999", "9999999999999999", "12345678901234.5", "1234567890123.45",
		"0.00000000000001", "0.000000000000001", "0.0000000000000001", "-99999999999999.9",
		"1796185612298", "3.402", "2147483647", "2147483648", "-2147483648", "-2147483649",
		"1e5", "1E5", "2.5e-3", "1e400", "-1e400", "123456789012345678901234567890",
		"0.1", "0.7", "9007199254740993", "4.35", "1.7976931348623157e308",
	};
	static const char *const around[] = {"%s", "[%s]", "{\"n\":%s}", "[ %s ]", "[%s\n,%s]"};
	char text[160], copy[160];
	struct jtree t;
	size_t i, k;

	jtree_init(&t);
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		double want = strtod(nums[i], NULL);

		for (k = 0; k < sizeof(around) / sizeof(around[0]); k++) {
			const cJSON *v = NULL, *n;

			snprintf(text, sizeof(text), around[k], nums[i], nums[i]);
			agrees(&t, text);
			memcpy(copy, text, strlen(text) + 1);
			CHECK(jtree_parse(&t, copy, strlen(copy), "a test", (cJSON **)&v, NULL) == ERR_OK);
			n = !v ? NULL : cJSON_IsObject(v) ? v->child : cJSON_IsArray(v) ? v->child : v;
			CHECK(n && cJSON_IsNumber(n) && !memcmp(&n->valuedouble, &want, sizeof(want)));
		}
	}
	jtree_release(&t);
}

int main(void)
{
	T_RUN(test_string_stops);
	T_RUN(test_root_indexed);
	T_RUN(test_wide_root);
	T_RUN(test_like_cjson);
	T_RUN(test_numbers);
	T_RUN(test_blocks_and_in_place);
	T_RUN(test_refused);
	T_RUN(test_depth);
	T_RUN(test_depth_objects);
	T_RUN(test_messages);
	T_RUN(test_names);
	T_RUN(test_number_edges);
	return T_DONE();
}
