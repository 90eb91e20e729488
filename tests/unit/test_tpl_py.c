/*
 * test_tpl_py — Python's printing as the servers' templates see it:
 * json.dumps(ensure_ascii=False) of numbers, strings and containers, and
 * str.strip()'s whitespace set. Expected strings are CPython 3's output.
 */
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "jinja/pyfmt.h"
#include "tpl/tpl_py.h"
#include "t.h"

/* Expected strings are what CPython 3's json.dumps(x, ensure_ascii=False)
 * prints for the same JSON input. */
static void test_pyjson(void)
{
	static const char *const cases[][2] = {
		{"2.5", "2.5"},
		{"1e16", "1e+16"},
		{"1e-5", "1e-05"},
		{"0.0001", "0.0001"},
		{"123456789.123", "123456789.123"},
		{"1.5e300", "1.5e+300"},
		{"-0.5", "-0.5"},
		{"0.1", "0.1"},
		{"0.3333333333333333", "0.3333333333333333"},
		{"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"9007199254740992.0", "9007199254740992.0"},
		{"1000000000000000.5", "1000000000000000.5"},
		{"-1e-7", "-1e-07"},
		{"42", "42"},
		{"-17", "-17"},
		{"{\"a\":[1,\"x\\u0001\\\"\\\\\\n\",null,true],\"\xc3\xa9\":{}}",
		 "{\"a\": [1, \"x\\u0001\\\"\\\\\\n\", null, true], \"\xc3\xa9\": {}}"},
		{"[]", "[]"},
		{"\"\\u00e9\\/\\t\"", "\"\xc3\xa9/\\t\""},
	};
	struct buf b;
	size_t i;

	buf_init(&b, 1 << 16);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *v = cJSON_Parse(cases[i][0]);

		buf_reset(&b);
		CHECK(v != NULL);
		CHECK(tpl_pyjson(v, &b) == ERR_OK);
		CHECK_STR(b.data, cases[i][1]);
		cJSON_Delete(v);
	}
	buf_release(&b);
}

static void test_py_string(void)
{
	struct buf b;

	buf_init(&b, 1 << 10);
	CHECK(pyfmt_json_string("a\"b\\c\x1f\x7f\xc3\xa9", 9, 0, &b) == ERR_OK);
	CHECK_STR(b.data, "\"a\\\"b\\\\c\\u001f\x7f\xc3\xa9\"");
	buf_release(&b);
}

/* str.strip(): U+0085, U+001C..U+001F, U+3000 and U+2029 are whitespace,
 * U+FEFF and U+200B are not; inner whitespace stays. */
/* tpl_py_parse keeps what json.loads reads: expected strings are CPython 3's
 * json.dumps(json.loads(x), ensure_ascii=False); json_print gives the
 * lexemes back as written. */
static void test_parse_lexemes(void)
{
	static const char *const in = "[0.0, 1e5, 1E+5, -0.0, 1.50, -0, 12345678901234567890, "
				      "1e400, 9007199254740993, 1e-7, 100, {\"a\": 1, \"b\": 2, \"a\": 3.0}]";
	struct buf b;
	cJSON *v = NULL;
	double x = 0;

	buf_init(&b, 1 << 12);
	CHECK(tpl_py_parse(in, strlen(in), &v, "the case", NULL) == ERR_OK);
	CHECK(tpl_pyjson(v, &b) == ERR_OK);
	CHECK_STR(b.data, "[0.0, 100000.0, 100000.0, -0.0, 1.5, 0, 12345678901234567890, Infinity, "
		  "9007199254740993, 1e-07, 100, {\"a\": 3.0, \"b\": 2}]");
	buf_reset(&b);
	CHECK(json_print(v, 0, &b, "the case", NULL) == ERR_OK);
	CHECK_STR(b.data, "[0.0,1e5,1E+5,-0.0,1.50,-0,12345678901234567890,1e400,9007199254740993,"
		  "1e-7,100,{\"a\":3.0,\"b\":2}]");
	CHECK(tpl_py_number(cJSON_GetArrayItem(v, 1), &x) && x == 1e5);
	CHECK(!tpl_py_number(cJSON_GetArrayItem(v, 11), &x));
	cJSON_Delete(v);
	buf_release(&b);
}

/* Numbers json.loads refuses although cJSON takes them are input errors. */
static void test_parse_refuses(void)
{
	static const char *const bad[] = {"[01]", "[1.]", "{\"a\": -01.5}", "[1.e5]"};
	struct diag d;
	cJSON *v;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		diag_init(&d);
		v = (cJSON *)1;
		CHECK(tpl_py_parse(bad[i], strlen(bad[i]), &v, "the case", &d) == ERR_INPUT);
		CHECK(v == NULL);
		CHECK(strstr(d.msg, "is not a JSON number") != NULL);
	}
}

/* A request built with cJSON numbers reads as the body cJSON prints for it:
 * 1e15 goes out as "1e+15", which json.loads makes a float. */
static void test_as_sent(void)
{
	cJSON *v = cJSON_CreateArray(), *sent = NULL, *same = NULL;
	struct buf b;

	buf_init(&b, 1 << 10);
	CHECK(v != NULL);
	cJSON_AddItemToArray(v, cJSON_CreateNumber(1e15));
	cJSON_AddItemToArray(v, cJSON_CreateNumber(3));
	CHECK(tpl_py_as_sent(v, &sent, "the tools", NULL) == ERR_OK);
	CHECK(sent != NULL);
	CHECK(tpl_pyjson(sent, &b) == ERR_OK);
	CHECK_STR(b.data, "[1000000000000000.0, 3]");
	CHECK(tpl_py_as_sent(sent, &same, "the tools", NULL) == ERR_OK);
	CHECK(same == NULL); /* already as json.loads reads it */
	cJSON_Delete(sent);
	cJSON_Delete(v);
	buf_release(&b);
}

static void test_py_strip(void)
{
	static const char *const cases[][2] = {
		{"\xc2\x85\x1c \xe3\x80\x80hi there\xe2\x80\xa9\x0b", "hi there"},
		{"\xef\xbb\xbfhi\xef\xbb\xbf", "\xef\xbb\xbfhi\xef\xbb\xbf"},
		{"\xe2\x80\x8bx\xe2\x80\x8b", "\xe2\x80\x8bx\xe2\x80\x8b"},
		{" \n\t ", ""},
		{"", ""},
		{"a \t b", "a \t b"},
		{"\xf0\x9f\x98\x80 ", "\xf0\x9f\x98\x80"},
	};
	struct buf b;
	size_t i;

	buf_init(&b, 1 << 10);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		buf_reset(&b);
		CHECK(tpl_py_strip(cases[i][0], &b) == ERR_OK);
		CHECK_STR(b.len ? b.data : "", cases[i][1]);
	}
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_pyjson);
	T_RUN(test_py_string);
	T_RUN(test_parse_lexemes);
	T_RUN(test_parse_refuses);
	T_RUN(test_as_sent);
	T_RUN(test_py_strip);
	return T_DONE();
}
