/* Unit tests of jdoc: whatever it reads, cJSON reads into the same tree. */
#include <math.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/json.h"
#include "jsame.h"
#include "t.h"

/* jdoc reads `text` as cJSON does (1), or leaves it to cJSON (0); -1 when
 * it reads what cJSON refuses or reads otherwise. */
static int compare(const char *text, size_t len)
{
	cJSON *mine = NULL, *ref = cJSON_ParseWithLength(text, len);
	enum err e = jdoc_parse(text, len, &mine);
	int r = e == ERR_UNSUPPORTED ? 0 : !e && ref && same_tree(mine, ref) ? 1 : -1;

	if (r < 0)
		fprintf(stderr, "jdoc and cJSON differ on: %.*s\n", (int)len, text);
	cJSON_Delete(mine);
	cJSON_Delete(ref);
	return r;
}

static void test_read_as_cjson(void)
{
	static const char *const docs[] = {
		"[]", "{}", " \t\r\n[ ]\n", "0", "-0", "1", "-1", "1.5", "-0.0", "1e5", "1E+5", "2e-3",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "12345678901234567890",
		"1e400", "-1e400", "4.9e-324", "0.1", "123456789012345678901234567890123456789012345678901234567890123",
		"true", "false", "null", "\"\"", "\"a\"", "\"caf\xc3\xa9 \xe6\x97\xa5\"",
		"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u0041\\u00e9\\u20ac\\uFFFF\\ud83d\\ude00x\"",
		"{\"a\":1,\"a\":2,\"b\":[true,false,null,{\"c\":\"d\"}]}",
		"[{\"role\":\"user\",\"content\":\"hi\\nthere\"},{\"role\":\"assistant\",\"content\":\"\"}]",
		"{ \"k\" : [ 1 , 2 ] , \"\\u00e9\" : { } }", "[[[[[[[[[[1]]]]]]]]]]",
		"\"\xff\xfe raw bytes\"", "[1,[2,[3,[4]]],{\"x\":{\"y\":[]}}]",
	};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(*docs); i++)
		CHECK(compare(docs[i], strlen(docs[i])) == 1);
}

/* What jdoc leaves to cJSON: cJSON's own reading (a cut string, a number
 * split by its buffer, a lenient whitespace) or its refusal then stands. */
static void test_left_to_cjson(void)
{
	static const char *const docs[] = {
		"", " ", "\xef\xbb\xbf[]", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{1:2}", "01", "1.",
		".5", "+1", "-", "1e", "1e+", "tru", "nul", "fals", "[", "{", "\"abc", "\"a\\", "[]x",
		"\"a\\u0000b\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\uZZZZ\"",
		"\"\\x\"", "\"tab\there\"", "\x01[]", "[1]\x01", "\"\\u00e\"",
		"1234567890123456789012345678901234567890123456789012345678901234",
	};
	struct buf deep;
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(*docs); i++)
		CHECK(compare(docs[i], strlen(docs[i])) == 0);
	buf_init(&deep, BUF_MAX_DEFAULT);
	for (i = 0; i < JDOC_MAX_DEPTH; i++)
		buf_putc(&deep, '[');
	CHECK(compare(deep.data, deep.len) == 0);
	buf_reset(&deep);
	for (i = 0; i < 2 * (JDOC_MAX_DEPTH + 1); i++)
		buf_putc(&deep, i <= JDOC_MAX_DEPTH ? '[' : ']');
	CHECK(compare(deep.data, deep.len) == 0);
	buf_reset(&deep);
	for (i = 0; i < 2 * JDOC_MAX_DEPTH; i++)
		buf_putc(&deep, i < JDOC_MAX_DEPTH ? '[' : ']');
	CHECK(compare(deep.data, deep.len) == 1);
	buf_release(&deep);
}

static unsigned next(unsigned *x)
{
	return (*x = *x * 1103515245u + 12345u) >> 16;
}

/* A random document of every kind of value, escapes and whitespace. */
static void random_value(struct buf *b, unsigned *x, int depth)
{
	static const char *const atoms[] = {
		"0", "-7", "3.25", "1e-7", "6.02E23", "99999999999", "-0.5e+2", "true", "false", "null",
		"\"\"", "\"plain text\"", "\"a\\nb\\t\\\"q\\\" \\\\ \\/\"", "\"\\u00e9\\u4e2d\\ud83d\\ude00\"",
		"\"caf\xc3\xa9\"",
	};
	static const char *const ws[] = {"", " ", "\n", "\t", "\r\n  "};
	unsigned k = next(x) % (depth < 6 ? 20 : 15), n, i;

	buf_puts(b, ws[next(x) % 5]);
	if (k < 15) {
		buf_puts(b, atoms[k]);
	} else {
		int obj = k >= 18;

		buf_putc(b, obj ? '{' : '[');
		for (n = next(x) % 5, i = 0; i < n; i++) {
			if (i)
				buf_putc(b, ',');
			if (obj)
				buf_printf(b, "%s\"k%u\\u00e9\"%s:", ws[next(x) % 5], next(x) % 4, ws[next(x) % 5]);
			random_value(b, x, depth + 1);
		}
		buf_puts(b, ws[next(x) % 5]);
		buf_putc(b, obj ? '}' : ']');
	}
	buf_puts(b, ws[next(x) % 5]);
}

/* Random documents, then each with one byte changed: jdoc never reads one
 * otherwise than cJSON. */
static void test_random(void)
{
	static const char bytes[] = "[]{},:\"\\u0e+-. \x01\xff" "9a";
	struct buf b;
	unsigned x = 2024, i, m;
	int agreed = 0, bad = 0;

	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; i < 3000; i++) {
		buf_reset(&b);
		random_value(&b, &x, 0);
		agreed += compare(b.data, b.len) == 1;
		for (m = 0; m < 4 && b.len; m++) {
			size_t at = next(&x) % b.len;
			char was = b.data[at];

			b.data[at] = bytes[next(&x) % (sizeof(bytes) - 1)];
			bad += compare(b.data, b.len) < 0;
			b.data[at] = was;
		}
	}
	CHECK_EQ_LONG(agreed, 3000);
	CHECK_EQ_LONG(bad, 0);
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_read_as_cjson);
	T_RUN(test_left_to_cjson);
	T_RUN(test_random);
	return T_DONE();
}
