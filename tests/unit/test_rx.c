/* Unit tests of the PCRE2 wrapper: compile errors as diagnostics, whole-
 * subject matching, leftmost search from an offset, match errors. */
#include <string.h>

#include "base/rx.h"
#include "t.h"

/* Whether `pat` (compiled with `flags`) finds a match in `s` from `from`;
 * the match in span. */
static int find(const char *pat, unsigned flags, const char *s, size_t from,
		size_t span[2])
{
	struct rx *re = NULL;
	struct diag d;
	int found = 0;

	diag_init(&d);
	CHECK(rx_compile(pat, strlen(pat), flags, &re, &d) == ERR_OK);
	if (re)
		CHECK(rx_find(re, NULL, s, strlen(s), from, span, &found, &d) == ERR_OK);
	rx_free(re);
	return found;
}

static void test_compile_error(void)
{
	struct rx *re = (struct rx *)&re;
	struct diag d;

	diag_init(&d);
	CHECK(rx_compile("ab(c", 4, RX_WHOLE, &re, &d) == ERR_INPUT);
	CHECK(re == NULL);
	CHECK(strstr(d.msg, "bad regex at offset 4") != NULL);
	CHECK(strstr(d.msg, "missing closing parenthesis") != NULL);
	diag_init(&d);
	CHECK(rx_compile("a[", 2, RX_UCP | RX_FAST, &re, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "offset 2") != NULL);
	rx_free(NULL);
	rx_match_free(NULL);
}

static void test_whole(void)
{
	size_t span[2];

	CHECK(find("[0-9]+", RX_WHOLE, "12345", 0, span));
	CHECK(!find("[0-9]+", RX_WHOLE, "12345x", 0, span));
	CHECK(!find("[0-9]+", RX_WHOLE, "x12345", 0, span));
	CHECK(find("[0-9]+", 0, "x12345y", 0, span));
	CHECK_EQ_LONG(span[0], 1);
	CHECK_EQ_LONG(span[1], 6);
	/* UTF mode: one character, not one byte */
	CHECK(find("^.$", 0, "\xc3\xa9", 0, span));
}

static void test_search_from(void)
{
	struct rx *re;
	struct rx_match *m;
	struct diag d;
	const char *s = "ab  cd \xe4\xb8\xad";
	size_t span[2], at = 0, n = strlen(s), got = 0;
	int found = 1;

	diag_init(&d);
	CHECK(rx_compile("\\w+", 3, RX_UCP | RX_FAST, &re, &d) == ERR_OK);
	CHECK(rx_match_new(&m, &d) == ERR_OK);
	while (re && m && found) {
		CHECK(rx_find(re, m, s, n, at, span, &found, &d) == ERR_OK);
		if (found) {
			got++;
			at = span[1];
		}
	}
	CHECK_EQ_LONG(got, 3); /* "ab", "cd" and U+4E2D (a letter under UCP) */
	CHECK_EQ_LONG(at, n);
	/* a lookbehind sees the subject before `from` */
	rx_free(re);
	CHECK(rx_compile("(?<=b)\\s", 8, RX_UCP | RX_FAST, &re, &d) == ERR_OK);
	CHECK(rx_find(re, m, s, n, 2, span, &found, &d) == ERR_OK);
	CHECK(found && span[0] == 2);
	rx_free(re);
	rx_match_free(m);
}

static void test_match_error(void)
{
	struct rx *re;
	struct diag d;
	size_t span[2];
	int found = 1;

	diag_init(&d);
	CHECK(rx_compile("a", 1, RX_WHOLE, &re, &d) == ERR_OK);
	CHECK(rx_find(re, NULL, "\xff", 1, 0, span, &found, &d) == ERR_INPUT);
	CHECK(!found);
	CHECK(strstr(d.msg, "regex match failed at byte 0: UTF-8 error") != NULL);
	rx_free(re);
}

static void test_unicode_version(void)
{
	char v[RX_VERSION_MAX];

	rx_unicode_version(v);
	CHECK(strlen(v) >= 5 && strchr(v, '.') != NULL);
}

int main(void)
{
	T_RUN(test_compile_error);
	T_RUN(test_whole);
	T_RUN(test_search_from);
	T_RUN(test_match_error);
	T_RUN(test_unicode_version);
	return T_DONE();
}
