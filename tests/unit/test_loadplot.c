/*
 * Unit tests of loadplot: the picture's size, where a case's points land
 * (normalised to its lowest level), a missing figure, and the summary path
 * (closed-loop cells only), read back with libpng's simplified API.
 */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "report/loadplot.h"
#include "t.h"
#include "tpng.h"

static const unsigned char *at(const unsigned char *px, int w, int x, int y)
{
	return px + ((size_t)y * (size_t)w + (size_t)x) * 3;
}

/* The centre of the point at level k of n in `panel`, at `multiple` on a
 * 0..2 scale (every ratio here is <= 2). */
static void point(int panel, int k, int n, double multiple, int *x, int *y)
{
	*x = panel * (LOADPLOT_LEFT + LOADPLOT_PANEL_W) + LOADPLOT_LEFT +
	     (int)((k + 0.5) * LOADPLOT_PANEL_W / n);
	*y = LOADPLOT_TOP + LOADPLOT_PANEL_H - (int)lround(multiple / 2 * LOADPLOT_PANEL_H);
}

/* Case a at C1, C8: throughput 100 -> 150 (1.5X), TTFT P95 200 -> 400 (2X);
 * case b only at C8, its TTFT missing: b's throughput is 1X at C8 and it has
 * no TTFT point. */
static void test_points(void)
{
	static const double ca[2] = {1, 8}, ta[2] = {100, 150}, fa[2] = {200, 400};
	static const double cb[1] = {8}, tb[1] = {50}, fb[1] = {NAN};
	static const unsigned char orange[3] = {230, 120, 20}, purple[3] = {120, 60, 170};
	struct loadplot_case c[2] = {{"a", 2, ca, ta, fa}, {"b", 1, cb, tb, fb}};
	struct buf png;
	struct diag d;
	unsigned char *px;
	int w = 0, h = 0, ww, wh, x, y;

	buf_init(&png, 1 << 22);
	diag_init(&d);
	CHECK(loadplot_png(c, 2, "MODEL M  RUN R", &png, &d) == ERR_OK);
	CHECK(png.len > 8 && !memcmp(png.data, "\x89PNG\r\n\x1a\n", 8));
	px = tpng_decode(&png, &w, &h);
	CHECK(px != NULL);
	loadplot_size(2, &ww, &wh);
	CHECK(w == ww && h == wh);
	if (px && w == ww && h == wh) {
		point(0, 0, 2, 1, &x, &y);
		CHECK(!memcmp(at(px, w, x, y), orange, 3));
		point(0, 1, 2, 1.5, &x, &y);
		CHECK(!memcmp(at(px, w, x, y), orange, 3));
		point(1, 1, 2, 2, &x, &y);
		CHECK(!memcmp(at(px, w, x + 2, y + 2), orange, 3));
		point(0, 1, 2, 1, &x, &y);  /* b's throughput at C8: its own 1X */
		CHECK(!memcmp(at(px, w, x, y), purple, 3));
		point(1, 1, 2, 1, &x, &y);  /* b has no TTFT: nothing there */
		CHECK(memcmp(at(px, w, x, y), purple, 3) && memcmp(at(px, w, x, y), orange, 3));
	}
	free(px);
	buf_release(&png);
}

/* Each panel has its own scale (issue 25.7): TTFT growing 300 times
 * (0..300X) leaves throughput's 2X at the top of its own 0..2 panel, not
 * flat at the bottom of a shared 0..300 one. */
static void test_own_scale(void)
{
	static const double cc[2] = {1, 64}, tc[2] = {100, 200}, fc[2] = {10, 3000};
	static const unsigned char orange[3] = {230, 120, 20};
	struct loadplot_case c[1] = {{"c", 2, cc, tc, fc}};
	struct buf png;
	struct diag d;
	unsigned char *px;
	int w = 0, h = 0, x, y;

	buf_init(&png, 1 << 22);
	diag_init(&d);
	CHECK(loadplot_png(c, 1, NULL, &png, &d) == ERR_OK);
	px = tpng_decode(&png, &w, &h);
	CHECK(px != NULL);
	if (px) {
		point(0, 1, 2, 2, &x, &y); /* throughput 2X at the top of 0..2 */
		CHECK(!memcmp(at(px, w, x, y + 2), orange, 3));
		point(1, 1, 2, 2, &x, &y); /* TTFT 300X: the top of its 0..300 panel */
		CHECK(!memcmp(at(px, w, x, y + 2), orange, 3));
	}
	free(px);
	buf_release(&png);
}

/* The min-max bar over rounds: at C8 throughput 150 (1.5X) whose rounds
 * ranged 120..180 (1.2X..1.8X) has ink at 1.7X above the point and at 1.3X
 * below it, none at 1.9X; the same case without bounds has none at 1.7X. */
static void test_bars(void)
{
	static const double cc[2] = {1, 8}, tc[2] = {100, 150}, fc[2] = {10, 20};
	static const double lo[2] = {100, 120}, hi[2] = {100, 180};
	static const unsigned char orange[3] = {230, 120, 20};
	struct loadplot_case c[1] = {{"c", 2, cc, tc, fc, lo, hi, NULL, NULL}};
	struct buf png;
	struct diag d;
	unsigned char *px;
	int w = 0, h = 0, x, y, pass;

	diag_init(&d);
	for (pass = 0; pass < 2; pass++) {
		buf_init(&png, 1 << 22);
		if (pass)
			c[0].tps_min = c[0].tps_max = NULL;
		CHECK(loadplot_png(c, 1, NULL, &png, &d) == ERR_OK);
		px = tpng_decode(&png, &w, &h);
		CHECK(px != NULL);
		if (px) {
			point(0, 1, 2, 1.7, &x, &y);
			CHECK(!memcmp(at(px, w, x, y), orange, 3) == !pass);
			point(0, 1, 2, 1.3, &x, &y);
			CHECK(!memcmp(at(px, w, x, y), orange, 3) == !pass);
			point(0, 1, 2, 1.9, &x, &y);
			CHECK(memcmp(at(px, w, x, y), orange, 3));
		}
		free(px);
		buf_release(&png);
	}
}

static void test_summary(void)
{
	/* x at C8 and C1, y at a rate of 0.5 */
	struct loadcells_cell cells[3] = {
		{.case_id = "x", .level_value = 8}, {.case_id = "x", .level_value = 1},
		{.case_id = "y", .open_loop = 1, .level_value = 0.5}};
	static const double tps[3] = {300, 100, 10}, ttft[3] = {90, 60, 5};
	struct loadcells lc = {cells, 3, NULL, NULL, 0}, none = {cells + 2, 1, NULL, NULL, 0};
	struct buf png;
	struct diag d;
	unsigned char *px;
	int w = 0, h = 0, ww, wh, i;

	for (i = 0; i < 3; i++) {
		cells[i].s.output_tps = (struct loadstat_fig){1, tps[i], tps[i], tps[i]};
		cells[i].s.ttft_p95_ms = (struct loadstat_fig){1, ttft[i], ttft[i], ttft[i]};
	}
	buf_init(&png, 1 << 22);
	diag_init(&d);
	CHECK(loadplot_summary(&lc, NULL, &png, &d) == ERR_OK && png.len > 0);
	px = tpng_decode(&png, &w, &h);
	loadplot_size(1, &ww, &wh); /* one case: the rate cell is not drawn */
	CHECK(px && w == ww && h == wh);
	free(px);
	buf_release(&png);
	buf_init(&png, 1 << 22);
	CHECK(loadplot_summary(&none, NULL, &png, &d) == ERR_OK && png.len == 0);
	none.n = 0;
	CHECK(loadplot_summary(&none, NULL, &png, &d) == ERR_OK && png.len == 0);
	buf_release(&png);
}

int main(void)
{
	T_RUN(test_points);
	T_RUN(test_own_scale);
	T_RUN(test_bars);
	T_RUN(test_summary);
	return T_DONE();
}
