/* schema: the keywords structured outputs use, checked against the official
 * JSON Schema Test Suite (draft 7; Debian's json-schema-test-suite, installed
 * by tests/setup.sh): every group whose schema needle accepts must agree with
 * every one of its tests, and the groups it refuses are counted. Then the
 * reasons an answer gets, and the schemas refused when a suite is read. */
#include <dirent.h>
#include <math.h>

#include "base/io.h"
#include "run/schema.h"
#include "t.h"

#define SUITE_DIR "/usr/share/json-schema-test-suite/tests/draft7"

static int groups, refused, agreed;

static void run_file(const char *path)
{
	struct buf text;
	struct diag d;
	cJSON *root, *g, *t;
	char where[SCHEMA_WHERE_MAX], why[SCHEMA_WHY_MAX];

	buf_init(&text, (size_t)16 << 20);
	diag_init(&d);
	CHECK(!io_read_file(path, &text, &d));
	root = cJSON_ParseWithLength(text.data, text.len);
	CHECK(cJSON_IsArray(root));
	cJSON_ArrayForEach(g, root) {
		const cJSON *schema = cJSON_GetObjectItemCaseSensitive(g, "schema");

		groups++;
		if (schema_check(schema, where, why, sizeof(why))) {
			refused++;
			continue;
		}
		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(g, "tests")) {
			int want = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "valid"));
			int got = schema_valid(schema, cJSON_GetObjectItemCaseSensitive(t, "data"), why, sizeof(why));

			CHECK(got == want);
			if (got != want)
				fprintf(stderr, "  %s: %s / %s: expected %s (%s)\n", path,
					cJSON_GetObjectItemCaseSensitive(g, "description")->valuestring,
					cJSON_GetObjectItemCaseSensitive(t, "description")->valuestring,
					want ? "valid" : "invalid", why);
			agreed += got == want;
		}
	}
	cJSON_Delete(root);
	buf_release(&text);
}

static void test_official_suite(void)
{
	DIR *dir = opendir(SUITE_DIR);
	struct dirent *e;
	char path[1024];

	if (!dir) {
		fprintf(stderr, "%s is missing: run sh tests/setup.sh system (as root)\n", SUITE_DIR);
		CHECK(dir != NULL);
		return;
	}
	while ((e = readdir(dir))) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", SUITE_DIR, e->d_name);
		run_file(path);
	}
	closedir(dir);
	printf("draft 7: %d groups, %d refused (keywords needle does not check), %d tests agree\n", groups,
	       refused, agreed);
	/* most of the suite is within what structured outputs use */
	CHECK(groups > 100 && groups - refused >= 80 && agreed >= 300);
}

static cJSON *parse(const char *s)
{
	cJSON *v = cJSON_Parse(s);

	CHECK(v != NULL);
	return v;
}

/* The first violation, named by its place in the answer. */
static void test_reasons(void)
{
	static const char schema_text[] =
		"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"name\", \"items\"],"
		" \"properties\": {\"name\": {\"type\": \"string\", \"pattern\": \"^[A-Z]\"},"
		"  \"color\": {\"enum\": [\"red\", \"green\"]},"
		"  \"items\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/item\"}}},"
		" \"$defs\": {\"item\": {\"type\": \"object\", \"required\": [\"price\"],"
		"  \"properties\": {\"price\": {\"type\": \"integer\", \"minimum\": 0}}}}}";
	static const struct { const char *answer, *why; } cases[] = {
		{"{\"name\": \"Ann\", \"items\": [{\"price\": 3}, {\"price\": 4.0}]}", ""},
		{"{\"name\": \"Ann\", \"items\": [{\"price\": 3}, {\"price\": \"4\"}]}",
		 "/items/1/price: \"4\" is a string, not of type integer"},
		{"{\"name\": \"Ann\", \"items\": [{\"price\": -1}]}", "/items/0/price: -1 is below the minimum 0"},
		{"{\"name\": \"Ann\"}", "/: lacks the required property 'items'"},
		{"{\"name\": \"ann\", \"items\": []}", "/name: \"ann\" does not match /^[A-Z]/"},
		{"{\"name\": \"Ann\", \"items\": [], \"color\": \"blue\"}",
		 "/color: \"blue\" is not one of the 2 values of enum"},
		{"{\"name\": \"Ann\", \"items\": [], \"note\": 1}",
		 "/note: is not a property the schema allows (additionalProperties false)"},
		{"[1]", "/: [1] is an array, not of type object"},
	};
	cJSON *schema = parse(schema_text);
	char where[SCHEMA_WHERE_MAX], why[SCHEMA_WHY_MAX];
	size_t i;

	CHECK(!schema_check(schema, where, why, sizeof(why)));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *v = parse(cases[i].answer);
		int ok = schema_valid(schema, v, why, sizeof(why));

		CHECK(ok == !cases[i].why[0]);
		CHECK_STR(why, cases[i].why);
		cJSON_Delete(v);
	}
	cJSON_Delete(schema);
}

/* What needle does not check is refused where the schema says it, never
 * passed unchecked. */
static void test_refused(void)
{
	static const struct { const char *schema, *where, *why; } cases[] = {
		{"{\"type\": \"string\", \"format\": \"date-time\"}", "/format", "'format' is not a keyword"},
		{"{\"properties\": {\"a\": {\"if\": {}}}}", "/properties/a/if", "'if' is not a keyword"},
		{"{\"$ref\": \"#/$defs/x\", \"type\": \"object\", \"$defs\": {\"x\": {}}}", "/type", "beside $ref"},
		{"{\"$ref\": \"#/$defs/y\"}", "/$ref", "is not a JSON pointer"},
		{"{\"type\": \"text\"}", "/type", "unknown type 'text'"},
		{"{\"pattern\": \"(\"}", "/pattern", "bad regex"},
		{"{\"minItems\": -1}", "/minItems", "whole number"},
		{"{\"anyOf\": []}", "/anyOf", "non-empty"},
		{"3", "", "expected a schema"},
	};
	char where[SCHEMA_WHERE_MAX], why[SCHEMA_WHY_MAX];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *s = parse(cases[i].schema);

		CHECK(schema_check(s, where, why, sizeof(why)) == 1);
		CHECK_STR(where, cases[i].where);
		CHECK(strstr(why, cases[i].why) != NULL);
		if (!strstr(why, cases[i].why))
			fprintf(stderr, "  %s: %s\n", cases[i].schema, why);
		cJSON_Delete(s);
	}
}

int main(void)
{
	T_RUN(test_reasons);
	T_RUN(test_refused);
	T_RUN(test_official_suite);
	return T_DONE();
}
