/* Unit tests of the progress line: durations, the line with and without an
 * attempt in flight, the estimate, and the pacing. */
#include <string.h>

#include "cli/progress.h"
#include "t.h"

static void test_duration(void)
{
	char b[32];

	progress_duration(0, b, sizeof(b));
	CHECK_STR(b, "0:00");
	progress_duration(59.6, b, sizeof(b));
	CHECK_STR(b, "1:00");
	progress_duration(3599.4, b, sizeof(b));
	CHECK_STR(b, "59:59");
	progress_duration(3600 * 25 + 61, b, sizeof(b));
	CHECK_STR(b, "25:01:01");
}

static void test_line(void)
{
	struct progress_state st = {0, 40, 0, 0, 3, NULL, 0, 0};
	char b[256];

	progress_line(&st, b, sizeof(b));
	CHECK_STR(b, "0/40  pass 0  fail 0  elapsed 0:03  eta ?");
	st.done = 10, st.pass = 9, st.fail = 1, st.elapsed_s = 65;
	st.slow_id = "json-3", st.slow_repeat = 2, st.slow_s = 41;
	progress_line(&st, b, sizeof(b));
	/* eta = 65 s / 10 done * 30 left */
	CHECK_STR(b, "10/40  pass 9  fail 1  elapsed 1:05  eta 3:15  slowest json-3#2 0:41");
	progress_line(&st, b, 12); /* cut, still terminated */
	CHECK_STR(b, "10/40  pass");
	/* weighed by prompt size: a quarter of the weight done in 65 s leaves
	 * 195 s, whatever the count says */
	st.weight_done = 1000, st.weight_total = 4000;
	progress_line(&st, b, sizeof(b));
	CHECK(strstr(b, "  eta 3:15  ") != NULL);
	st.weight_done = 3000;
	progress_line(&st, b, sizeof(b));
	CHECK(strstr(b, "  eta 0:22  ") != NULL);
}

/* The line is cut to one column less than the terminal, never mid-character;
 * a wide character counts two. */
static void test_fit(void)
{
	char b[64];

	snprintf(b, sizeof(b), "%s", "0123456789");
	progress_fit(b, 6);
	CHECK_STR(b, "01234");
	snprintf(b, sizeof(b), "%s", "ab\xc3\xa9" "cd");
	progress_fit(b, 4);
	CHECK_STR(b, "ab\xc3\xa9");
	snprintf(b, sizeof(b), "%s", "a\xe6\x97\xa5\xe6\x9c\xac");
	progress_fit(b, 4);
	CHECK_STR(b, "a\xe6\x97\xa5");
	snprintf(b, sizeof(b), "%s", "short");
	progress_fit(b, 80);
	CHECK_STR(b, "short");
}

static void test_pace(void)
{
	struct progress p = {0};

	CHECK(progress_due(&p, 1000, 0));
	CHECK(!progress_due(&p, 1100, 0));
	CHECK(progress_due(&p, 1100, 1));
	CHECK(!progress_due(&p, 1349, 0));
	CHECK(progress_due(&p, 1350, 0));
}

int main(void)
{
	T_RUN(test_duration);
	T_RUN(test_line);
	T_RUN(test_fit);
	T_RUN(test_pace);
	return T_DONE();
}
