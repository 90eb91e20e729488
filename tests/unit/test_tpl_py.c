/*
 * test_tpl_py — Python's printing as the servers' templates see it:
 * json.dumps(ensure_ascii=False) of numbers, strings and containers, and
 * str.strip()'s whitespace set. Expected strings are CPython 3's output.
 */
#include <string.h>

#include "buf.h"
#include "pyfmt.h"
#include "tpl_py.h"
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
/* Numbers cJSON would print unlike json.dumps are told apart; digits inside
 * strings and escaped quotes do not confuse the scan. */
static void test_numbers_exact(void)
{
	CHECK(tpl_py_numbers_exact("{\"a\": 1, \"b\": -2.5, \"c\": 1.5e-7, \"d\": 9007199254740991}"));
	CHECK(tpl_py_numbers_exact("{\"s\": \"1.0 \\\" 12345678901234567890\"}"));
	CHECK(!tpl_py_numbers_exact("{\"a\": 59.0}"));
	CHECK(!tpl_py_numbers_exact("[-0.0]"));
	CHECK(!tpl_py_numbers_exact("[1e3]"));
	CHECK(!tpl_py_numbers_exact("{\"n\": 12345678901234567890}"));
	CHECK(tpl_py_numbers_exact("[1e+20]"));
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
	T_RUN(test_numbers_exact);
	T_RUN(test_py_strip);
	return T_DONE();
}
