/*
 * Unit tests of jget: present, missing and mistyped keys, and NULL parents;
 * jget_type against the library's type tests; an indexed object.
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

/* jget_type agrees with the library's cJSON_IsX on every kind of value, a
 * reference and NULL. */
static void test_type(void)
{
	cJSON *o = cJSON_Parse("{\"o\": {}, \"a\": [], \"s\": \"x\", \"n\": 1, \"t\": true, "
			       "\"f\": false, \"z\": null}");
	cJSON *ref = cJSON_CreateStringReference("r");
	static const char *const keys[] = {"o", "a", "s", "n", "t", "f", "z"};
	size_t i;

	CHECK(o != NULL && ref != NULL);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = jget(o, keys[i]);
		int t = jget_type(v);

		CHECK(v != NULL);
		CHECK((t == cJSON_Object) == !!cJSON_IsObject(v) && (t == cJSON_Array) == !!cJSON_IsArray(v));
		CHECK((t == cJSON_String) == !!cJSON_IsString(v) && (t == cJSON_Number) == !!cJSON_IsNumber(v));
		CHECK((t == cJSON_True) == !!cJSON_IsTrue(v) && (t == cJSON_False) == !!cJSON_IsFalse(v));
		CHECK((t == cJSON_NULL) == !!cJSON_IsNull(v));
	}
	CHECK(jget_type(jget(o, "s")) == cJSON_String && jget_type(jget(o, "t")) == cJSON_True);
	CHECK(jget_type(ref) == cJSON_String && cJSON_IsString(ref)); /* the flag bits masked */
	CHECK(jget_type(NULL) == cJSON_Invalid && jget_type(jget(o, "zz")) == cJSON_Invalid);
	cJSON_Delete(ref);
	cJSON_Delete(o);
}

/* An indexed object reads as a walked one: the first of duplicate names,
 * absent names, the index built at its first jget (none after a forget),
 * another object beside it, and jget_numv of a value found. */
static void test_index(void)
{
	cJSON *o = cJSON_Parse("{\"ab\": 1, \"ab\": 2, \"abc\": 3, \"b\": 4, \"\": 5}");
	cJSON *p = cJSON_Parse("{\"ab\": 7}");

	CHECK(o != NULL && p != NULL);
	jget_index(o);
	jget_forget(o); /* before any lookup: nothing is built */
	CHECK(jget_num(o, "ab") == 1 && jget_num(o, "abc") == 3);
	jget_index(o);
	CHECK(jget_num(o, "ab") == 1 && jget_num(o, "abc") == 3 && jget_num(o, "b") == 4);
	CHECK(jget_num(o, "") == 5 && jget(o, "a") == NULL && jget(o, "abcd") == NULL);
	CHECK(jget_num(p, "ab") == 7); /* another object is walked */
	jget_index(p);
	CHECK(jget_num(o, "ab") == 1 && jget_num(p, "ab") == 7);
	jget_forget(p);
	CHECK(jget_num(p, "ab") == 7 && jget(p, "b") == NULL);
	CHECK(jget_numv(jget(o, "b")) == 4 && jget_numv(NULL) == 0 && jget_numv(p) == 0);
	cJSON_Delete(p);
	cJSON_Delete(o);
}

int main(void)
{
	T_RUN(test_reads);
	T_RUN(test_type);
	T_RUN(test_index);
	return T_DONE();
}
