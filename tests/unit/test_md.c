/*
 * Unit tests of md: cell escaping, values as text, and sections run in order
 * until the first error.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/md.h"
#include "t.h"

static void test_cell(void)
{
	struct buf b;

	buf_init(&b, 1 << 10);
	CHECK(md_cell(&b, "a|b\nc\rd") == ERR_OK);
	CHECK_STR(b.data, "a\\|b c d");
	buf_release(&b);
	buf_init(&b, 4); /* the cap stops it: an error, not a silent cut */
	CHECK(md_cell(&b, "||||") != ERR_OK);
	buf_release(&b);
}

static void test_values(void)
{
	cJSON *o = cJSON_Parse("{\"n\": 0.25, \"i\": 131072, \"s\": \"x|y\", \"t\": true,"
			       " \"f\": false, \"z\": null, \"a\": [1]}");
	char tmp[32];

	CHECK(o != NULL);
	CHECK_STR(md_number(cJSON_GetObjectItem(o, "n"), "%+.3f", tmp, sizeof(tmp)), "+0.250");
	CHECK_STR(md_number(cJSON_GetObjectItem(o, "s"), "%.0f", tmp, sizeof(tmp)), "-");
	CHECK_STR(md_number(NULL, "%.0f", tmp, sizeof(tmp)), "-");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "i"), tmp, sizeof(tmp)), "131072");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "n"), tmp, sizeof(tmp)), "0.25");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "s"), tmp, sizeof(tmp)), "x|y");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "t"), tmp, sizeof(tmp)), "true");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "f"), tmp, sizeof(tmp)), "false");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "z"), tmp, sizeof(tmp)), "-");
	CHECK_STR(md_value(cJSON_GetObjectItem(o, "a"), tmp, sizeof(tmp)), "-");
	CHECK_STR(md_value(NULL, tmp, sizeof(tmp)), "-");
	cJSON_Delete(o);
}

static enum err sec_one(const cJSON *doc, struct buf *out)
{
	return buf_printf(out, "[%s]", cJSON_GetObjectItem(doc, "k")->valuestring);
}

static enum err sec_fail(const cJSON *doc, struct buf *out)
{
	(void)doc;
	(void)out;
	return ERR_NOMEM;
}

static void test_render(void)
{
	static const md_section ok[] = {sec_one, sec_one};
	static const md_section bad[] = {sec_one, sec_fail, sec_one};
	cJSON *o = cJSON_Parse("{\"k\": \"v\"}");
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 10);
	diag_init(&d);
	CHECK(md_render(o, ok, 2, "thing", &b, &d) == ERR_OK);
	CHECK_STR(b.data, "[v][v]");
	buf_reset(&b);
	CHECK(md_render(o, bad, 3, "thing", &b, &d) == ERR_NOMEM);
	CHECK_STR(b.data, "[v]");
	CHECK(strstr(d.msg, "out of memory rendering the thing") != NULL);
	buf_release(&b);
	cJSON_Delete(o);
}

int main(void)
{
	T_RUN(test_cell);
	T_RUN(test_values);
	T_RUN(test_render);
	return T_DONE();
}
