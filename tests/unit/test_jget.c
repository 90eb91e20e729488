/*
 * Unit tests of jget: present, missing and mistyped keys, and NULL parents.
 */
#include <cjson/cJSON.h>

#include "base/jget.h"
#include "t.h"

static void test_reads(void)
{
	cJSON *o = cJSON_Parse("{\"a\": {\"b\": 2.5, \"s\": \"x\"}, \"A\": 1, \"n\": null}");

	CHECK(o != NULL);
	CHECK(jget(o, "a") != NULL && jget(o, "A") != NULL && jget(o, "a") != jget(o, "A"));
	CHECK(jget(o, "zz") == NULL && jget(NULL, "a") == NULL);
	CHECK(jget2(o, "a", "b") != NULL && jget2(o, "a", "b")->valuedouble == 2.5);
	CHECK(jget2(o, "zz", "b") == NULL && jget2(o, "a", "zz") == NULL);
	CHECK(jget_num(jget(o, "a"), "b") == 2.5);
	CHECK(jget_num(o, "A") == 1);
	CHECK(jget_num(jget(o, "a"), "s") == 0); /* a string is not a number */
	CHECK(jget_num(o, "n") == 0 && jget_num(o, "zz") == 0 && jget_num(NULL, "b") == 0);
	cJSON_Delete(o);
}

int main(void)
{
	T_RUN(test_reads);
	return T_DONE();
}
