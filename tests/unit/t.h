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
#include <string.h>

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
