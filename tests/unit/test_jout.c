/*
 * Unit tests of jout: its text is cJSON_Print's byte for byte, with a list
 * printed in place of its array, into a buffer or through a file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "t.h"

static const char doc[] =
	"{\"a\":1,\"b\":-2.5,\"c\":1e300,\"d\":0.1,\"e\":123456789012,\"s\":\"tab\\there \\\"q\\\" \\u00e9 \\u0001\","
	"\"n\":null,\"t\":true,\"f\":false,\"eo\":{},\"ea\":[],\"o\":{\"x\":{\"y\":[1,{\"z\":[]},{}],\"w\":{}}},"
	"\"arr\":[{\"k\":\"v\",\"m\":{\"n\":[2,3]}},[],\"s\",[{}]],\"ke\\ny\":0}";

/* jout's text of `v` with `n` lists, into a string the caller frees. */
static char *print(const cJSON *v, const struct jout_list *l, size_t n)
{
	struct buf b;
	struct diag d;
	char *s;

	buf_init(&b, 1 << 24);
	diag_init(&d);
	CHECK(jout_print(v, l, n, 0, &b, NULL, "a value", &d) == ERR_OK);
	s = malloc(b.len + 1);
	memcpy(s, b.data, b.len);
	s[b.len] = '\0';
	buf_release(&b);
	return s;
}

/* With no list, every shape prints as cJSON prints it. */
static void test_same_as_cjson(void)
{
	cJSON *v = cJSON_Parse(doc);
	char *want, *got;

	CHECK(v != NULL);
	want = cJSON_Print(v);
	got = print(v, NULL, 0);
	CHECK_STR(got, want);
	free(got);
	cJSON_free(want);
	cJSON_Delete(v);
}

/* A small xorshift, fixed seed: the random trees are the same every run. */
static unsigned long long rnd(void)
{
	static unsigned long long x = 0x9e3779b97f4a7c15ULL;

	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

/* A number hard to print: edges of int and of %.15g, -0, subnormals, NaN,
 * infinities, or any double at all (random bits). */
static double hard_number(void)
{
	static const double edge[] = {
		0, -0.0, 1e-7, 1e21, 0.1, 1.0 / 3, 9007199254740993.0, 1e308, 4.9e-324,
		2.2250738585072014e-308, 2147483647.0, 2147483648.0, -2147483648.0,
		-2147483649.0, 1e15, 999999999999999.0, 1e15 + 1, 123456789012345678.0,
		-1e300, 0.30000000000000004, 1e-300, 5e-324 * 3, 2.5, -7,
	};
	unsigned long long r = rnd(), bits = rnd();
	double v;

	if (r % 4)
		return edge[r / 4 % (sizeof(edge) / sizeof(edge[0]))];
	if (r / 4 % 8 == 0)
		return r / 32 % 2 ? NAN : (r / 64 % 2 ? INFINITY : -INFINITY);
	memcpy(&v, &bits, sizeof(v));
	return v != v ? (double)(long long)bits / 1000 : v; /* NaN made above */
}

/* A string of quotes, backslashes, control bytes, DEL, UTF-8 and plain text. */
static void hard_string(char *s, size_t cap)
{
	static const char *piece[] = {"\"", "\\", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f",
				      "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "/",
				      "plain text ", "\xff", "\x1b[0m", "u0000"};
	size_t n = rnd() % 8, len = 0;

	s[0] = '\0';
	while (n--) {
		const char *p = piece[rnd() % (sizeof(piece) / sizeof(piece[0]))];
		if (len + strlen(p) + 1 > cap)
			break;
		memcpy(s + len, p, strlen(p) + 1);
		len += strlen(p);
	}
}

/* A random value: scalars at any depth, arrays and objects above `depth` 0. */
static cJSON *hard_tree(int depth)
{
	char s[64], key[64];
	unsigned kind = (unsigned)(rnd() % (depth > 0 ? 9 : 6));
	cJSON *v;
	size_t n;

	hard_string(s, sizeof(s));
	switch (kind) {
	case 0: return cJSON_CreateNull();
	case 1: return cJSON_CreateBool(rnd() % 2);
	case 2: return cJSON_CreateString(s);
	case 3: return cJSON_CreateRaw("[1,\"raw\"]");
	case 4:
	case 5: return cJSON_CreateNumber(hard_number());
	case 6: v = cJSON_CreateArray(); break;
	default: v = cJSON_CreateObject();
	}
	for (n = rnd() % 5; n > 0; n--) {
		if (kind == 6) {
			cJSON_AddItemToArray(v, hard_tree(depth - 1));
			continue;
		}
		hard_string(key, sizeof(key));
		cJSON_AddItemToObject(v, key, hard_tree(depth - 1));
	}
	return v;
}

/* Random trees of hard numbers and strings print as cJSON_Print prints them. */
static void test_random_trees(void)
{
	int i, same = 0;

	for (i = 0; i < 3000; i++) {
		cJSON *v = hard_tree(1 + i % 4);
		char *want = cJSON_Print(v), *got = print(v, NULL, 0);

		if (!strcmp(got, want))
			same++;
		else
			CHECK_STR(got, want);
		free(got);
		cJSON_free(want);
		cJSON_Delete(v);
	}
	CHECK(same == 3000);
}

static cJSON *item(void *ctx, size_t i)
{
	char text[128];

	snprintf(text, sizeof(text), "{\"id\":\"c%zu\",\"n\":%zu,\"r\":{\"k\":[%zu]},\"e\":{}}", i,
		 i * *(size_t *)ctx, i);
	return cJSON_Parse(text);
}

/* A list prints as the same array built in full would, at any depth. */
static void test_list(void)
{
	size_t mul = 3, i;
	cJSON *v = cJSON_Parse("{\"top\":[],\"in\":{\"deep\":{\"cases\":[]},\"after\":1}}");
	cJSON *full = cJSON_Duplicate(v, 1);
	cJSON *top = cJSON_GetObjectItem(full, "top");
	cJSON *deep = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(full, "in"), "deep"), "cases");
	struct jout_list l[2] = {
		{cJSON_GetObjectItem(v, "top"), 3, item, &mul},
		{cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "in"), "deep"), "cases"), 2, item, &mul},
	};
	char *want, *got;

	for (i = 0; i < 3; i++)
		cJSON_AddItemToArray(top, item(&mul, i));
	for (i = 0; i < 2; i++)
		cJSON_AddItemToArray(deep, item(&mul, i));
	want = cJSON_Print(full);
	got = print(v, l, 2);
	CHECK_STR(got, want);
	free(got);
	cJSON_free(want);
	l[0].n = 0; /* an empty list is [] */
	got = print(v, l, 1);
	want = cJSON_Print(v);
	CHECK_STR(got, want);
	free(got);
	cJSON_free(want);
	cJSON_Delete(full);
	cJSON_Delete(v);
}

/* Through a file, in chunks, the text is the same and `out` ends empty. */
static void test_file(void)
{
	size_t mul = 7, i, n;
	cJSON *v = cJSON_Parse("{\"cases\":[]}"), *full = cJSON_Duplicate(v, 1);
	struct jout_list l = {cJSON_GetObjectItem(v, "cases"), 5000, item, &mul};
	FILE *f = tmpfile();
	struct buf b;
	struct diag d;
	char *want, *got;

	for (i = 0; i < 5000; i++)
		cJSON_AddItemToArray(cJSON_GetObjectItem(full, "cases"), item(&mul, i));
	want = cJSON_Print(full);
	CHECK(strlen(want) > 3 * 65536);
	buf_init(&b, 1 << 24);
	diag_init(&d);
	CHECK(f != NULL);
	CHECK(jout_print(v, &l, 1, 1, &b, f, "a value", &d) == ERR_OK && b.len == 0);
	n = (size_t)ftell(f);
	CHECK(n == strlen(want) + 1);
	got = calloc(1, n + 1);
	rewind(f);
	CHECK(fread(got, 1, n, f) == n);
	CHECK(got[n - 1] == '\n');
	got[n - 1] = '\0';
	CHECK_STR(got, want);
	free(got);
	fclose(f);
	buf_release(&b);
	cJSON_free(want);
	cJSON_Delete(full);
	cJSON_Delete(v);
}

static cJSON *no_item(void *ctx, size_t i)
{
	(void)ctx;
	(void)i;
	return NULL;
}

/* An item that cannot be made is ERR_NOMEM, named. */
static void test_nomem(void)
{
	cJSON *v = cJSON_Parse("{\"cases\":[]}");
	struct jout_list l = {cJSON_GetObjectItem(v, "cases"), 1, no_item, NULL};
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 20);
	diag_init(&d);
	CHECK(jout_print(v, &l, 1, 1, &b, NULL, "the thing", &d) == ERR_NOMEM);
	CHECK(strstr(d.msg, "the thing") != NULL);
	buf_release(&b);
	cJSON_Delete(v);
}

int main(void)
{
	T_RUN(test_same_as_cjson);
	T_RUN(test_random_trees);
	T_RUN(test_list);
	T_RUN(test_file);
	T_RUN(test_nomem);
	return T_DONE();
}
