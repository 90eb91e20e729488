/*
 * Unit tests of chart: where categories and values land in a panel, and
 * what a series draws (a min-max bar only past its style's span, caps, a
 * missing median breaking the line).
 */
#include <math.h>
#include <string.h>

#include "report/chart.h"
#include "t.h"

static const unsigned char red[3] = {200, 0, 0};

static int is(const struct canvas *cv, int x, int y, const unsigned char rgb[3])
{
	return !memcmp(cv->px + ((size_t)y * (size_t)cv->w + (size_t)x) * 3, rgb, 3);
}

/* Categories at the centres of equal slices; 0 at the bottom, top at the
 * area's top; the scale is canvas_scale's. */
static void test_place(void)
{
	struct chart_panel p = {10, 110, 100, 100, 4, 0, 0};

	chart_scale(&p, 7.5, 5);
	CHECK(p.step == 2 && p.top == 8);
	CHECK_EQ_LONG(chart_x(&p, 0), 22);
	CHECK_EQ_LONG(chart_x(&p, 3), 97);
	CHECK_EQ_LONG(chart_y(&p, 0), 110);
	CHECK_EQ_LONG(chart_y(&p, 8), 10);
	CHECK_EQ_LONG(chart_y(&p, 4), 60);
}

/* Point 0 has a bar of 50 px with caps, point 1 no median (no square, the
 * line broken), point 2 a bar narrower than bar_px (not drawn), point 3 a
 * median joined to point 2's. */
static void test_series(void)
{
	struct chart_panel p = {0, 100, 80, 100, 4, 1, 10};
	const struct chart_style s = {red, 0, 1, 2, 1};
	struct chart_point pt[4] = {{0, 5, 2.5, 7.5, NULL}, {1, NAN, NAN, NAN, NULL},
				    {2, 5, 5, 5.05, NULL}, {3, 8, NAN, NAN, NULL}};
	struct canvas *cv = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(canvas_new(80, 110, chart_white, &cv, &d) == ERR_OK);
	chart_series(cv, &p, pt, 4, &s);
	CHECK(is(cv, 10, 25, red) && is(cv, 10, 75, red));      /* the bar, from 7.5 to 2.5 */
	CHECK(is(cv, 5, 25, red) && is(cv, 15, 75, red));       /* its caps */
	CHECK(is(cv, 10, 50, red));                             /* the square at 5 */
	CHECK(is(cv, 30, 60, chart_white) && is(cv, 20, 50, chart_white)); /* no square, no line */
	CHECK(is(cv, 50, 50, red) && is(cv, 50, 44, chart_white)); /* point 2: square, no bar */
	CHECK(is(cv, 70, 20, red) && is(cv, 60, 35, red));      /* point 3, joined to point 2 */
	canvas_free(cv);
}

int main(void)
{
	T_RUN(test_place);
	T_RUN(test_series);
	return T_DONE();
}
