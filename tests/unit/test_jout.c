/*
 * Unit tests of jout: its text is cJSON_Print's byte for byte, with a list
 * printed in place of its array, into a buffer or through a file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jout.h"
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
	T_RUN(test_list);
	T_RUN(test_file);
	T_RUN(test_nomem);
	return T_DONE();
}
