/*
 * Unit tests of diffplot: a hand-made diff "load" array drawn, the PNG read
 * back, and each run's marks looked for where the header says they are:
 * A left of a level's tick and B right of it, bars spanning min to max on
 * one scale for both runs, verdicts colouring level labels, the legend
 * naming both runs. The decision picture: each cell's value and interval
 * in its verdict's colour on the right side of its gate's threshold line,
 * the side beyond the threshold tinted, panels wrapped into bands.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "report/diffplot.h"
#include "t.h"
#include "tpng.h"

/* Two cases: "short" at c1 and c8 (c8 failed its gate; B has half A's
 * throughput there), "long" at r0.3 (underpowered, B absent). */
static const char load_json[] =
	"[{\"case\":\"short\",\"level\":\"c8\",\"concurrency\":8,\"verdict\":\"fail\","
	"  \"a\":{\"output_tps\":1000,\"output_tps_min\":900,\"output_tps_max\":1100,"
	"        \"ttft_p50_ms\":50,\"ttft_p50_ms_min\":40,\"ttft_p50_ms_max\":60,"
	"        \"ttft_p95_ms\":80,\"ttft_p95_ms_min\":70,\"ttft_p95_ms_max\":90},"
	"  \"b\":{\"output_tps\":500,\"output_tps_min\":450,\"output_tps_max\":550,"
	"        \"ttft_p50_ms\":100,\"ttft_p50_ms_min\":90,\"ttft_p50_ms_max\":110,"
	"        \"ttft_p95_ms\":160,\"ttft_p95_ms_min\":150,\"ttft_p95_ms_max\":170}},"
	" {\"case\":\"short\",\"level\":\"c1\",\"concurrency\":1,\"verdict\":\"pass\","
	"  \"a\":{\"output_tps\":200,\"output_tps_min\":190,\"output_tps_max\":210,"
	"        \"ttft_p50_ms\":20,\"ttft_p50_ms_min\":19,\"ttft_p50_ms_max\":21,"
	"        \"ttft_p95_ms\":25,\"ttft_p95_ms_min\":24,\"ttft_p95_ms_max\":26},"
	"  \"b\":{\"output_tps\":200,\"output_tps_min\":195,\"output_tps_max\":205,"
	"        \"ttft_p50_ms\":20,\"ttft_p50_ms_min\":19,\"ttft_p50_ms_max\":21,"
	"        \"ttft_p95_ms\":25,\"ttft_p95_ms_min\":24,\"ttft_p95_ms_max\":26}},"
	" {\"case\":\"long\",\"level\":\"r0.3\",\"rate\":0.3,\"verdict\":\"underpowered\","
	"  \"a\":{\"output_tps\":40,\"output_tps_min\":30,\"output_tps_max\":50,"
	"        \"ttft_p50_ms\":3000,\"ttft_p50_ms_min\":null,\"ttft_p50_ms_max\":null,"
	"        \"ttft_p95_ms\":null},"
	"  \"b\":null}]";

struct pic {
	unsigned char *px;
	int w, h;
};

static int is(const struct pic *p, int x, int y, const unsigned char rgb[3])
{
	return x >= 0 && y >= 0 && x < p->w && y < p->h &&
	       !memcmp(p->px + ((size_t)y * (size_t)p->w + (size_t)x) * 3, rgb, 3);
}

/* The topmost and bottommost rows of column x, between y0 and y1, of colour
 * rgb; 0 when it has none. */
static int extent(const struct pic *p, int x, int y0, int y1, const unsigned char rgb[3],
		  int *top, int *bottom)
{
	int y, n = 0;

	for (y = y0; y <= y1; y++)
		if (is(p, x, y, rgb)) {
			if (!n++)
				*top = y;
			*bottom = y;
		}
	return n > 0;
}

/* Pixels of colour rgb in the box. */
static int count(const struct pic *p, int x0, int y0, int w, int h, const unsigned char rgb[3])
{
	int x, y, n = 0;

	for (y = y0; y < y0 + h; y++)
		for (x = x0; x < x0 + w; x++)
			n += is(p, x, y, rgb);
	return n;
}

static int panel_x0(int panel)
{
	return panel * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + DIFFPLOT_LEFT;
}

static int panel_bottom(int row)
{
	return DIFFPLOT_TOP + row * DIFFPLOT_ROW + DIFFPLOT_HEAD + DIFFPLOT_PANEL_H;
}

static int tick(int panel, int k, int n)
{
	return panel_x0(panel) + (int)((k + 0.5) * DIFFPLOT_PANEL_W / n);
}

/* Height in pixels above a panel's bottom. */
static int above(int row, int y)
{
	return panel_bottom(row) - y;
}

static void draw(struct pic *p)
{
	cJSON *load = cJSON_Parse(load_json);
	struct buf png;
	struct diag d;
	int w, h;

	buf_init(&png, 1 << 24);
	diag_init(&d);
	p->px = NULL;
	CHECK(load != NULL);
	CHECK(diffplot_png(load, "results/before (model m)", "results/after", &png, &d) == ERR_OK);
	CHECK(png.len > 8 && (p->px = tpng_decode(&png, &p->w, &p->h)) != NULL);
	diffplot_size(2, &w, &h);
	CHECK(p->px && p->w == w && p->h == h);
	buf_release(&png);
	cJSON_Delete(load);
}

/* Throughput at c8 (level 1 of 2 once sorted): each run's bar spans its min
 * to max on the one scale, so B's top is half as high as A's. */
static void test_bars_one_scale(const struct pic *p)
{
	int xa = tick(0, 1, 2) - DIFFPLOT_OFFSET, xb = tick(0, 1, 2) + DIFFPLOT_OFFSET;
	int y0 = panel_bottom(0) - DIFFPLOT_PANEL_H, y1 = panel_bottom(0) - 1;
	int ta = 0, ba = 0, tb = 0, bb = 0;

	CHECK(extent(p, xa, y0, y1, diffplot_rgb_a, &ta, &ba));
	CHECK(extent(p, xb, y0, y1, diffplot_rgb_b, &tb, &bb));
	/* max over min: 1100/900 for A, 550/450 for B, as heights above 0 */
	CHECK(fabs((double)above(0, ta) / above(0, ba) - 1100.0 / 900) < 0.03);
	CHECK(fabs((double)above(0, tb) / above(0, bb) - 550.0 / 450) < 0.03);
	CHECK(fabs((double)above(0, tb) / above(0, ta) - 0.5) < 0.02);
	/* the other run's marks are not in a run's bar (its line may cross the column) */
	CHECK(count(p, xa - 1, ta, 3, ba - ta + 1, diffplot_rgb_b) == 0);
	CHECK(count(p, xb - 1, tb, 3, bb - tb + 1, diffplot_rgb_a) == 0);
}

/* TTFT P95 at c8: B above A (slower), both inside the panel. */
static void test_ttft(const struct pic *p)
{
	int xa = tick(2, 1, 2) - DIFFPLOT_OFFSET, xb = tick(2, 1, 2) + DIFFPLOT_OFFSET;
	int y0 = panel_bottom(0) - DIFFPLOT_PANEL_H, y1 = panel_bottom(0) - 1;
	int ta = 0, ba = 0, tb = 0, bb = 0;

	CHECK(extent(p, xa, y0, y1, diffplot_rgb_a, &ta, &ba));
	CHECK(extent(p, xb, y0, y1, diffplot_rgb_b, &tb, &bb));
	CHECK(fabs((double)above(0, tb) / above(0, ta) - 170.0 / 90) < 0.05);
}

/* Verdicts colour the level labels; a run without a cell draws nothing
 * there; the legend has both runs' colours. */
static void test_verdicts_legend(const struct pic *p)
{
	int lab = panel_bottom(0) + 6;
	int xl = tick(0, 0, 1) - DIFFPLOT_OFFSET;

	CHECK(count(p, tick(0, 1, 2) - 12, lab, 24, 12, diffplot_rgb_fail) > 0);  /* c8 */
	CHECK(count(p, tick(0, 0, 2) - 12, lab, 24, 12, diffplot_rgb_fail) == 0); /* c1 */
	CHECK(count(p, tick(1, 0, 1) - 15, panel_bottom(1) + 6, 30, 12, diffplot_rgb_underpowered) > 0);
	/* "long": A's throughput bar, no B anywhere in its row */
	CHECK(count(p, xl - 1, panel_bottom(1) - DIFFPLOT_PANEL_H, 3, DIFFPLOT_PANEL_H, diffplot_rgb_a) > 0);
	CHECK(count(p, 0, panel_bottom(1) - DIFFPLOT_PANEL_H, p->w, DIFFPLOT_PANEL_H, diffplot_rgb_b) == 0);
	/* its TTFT P95 is null in A: nothing drawn in that panel */
	CHECK(count(p, panel_x0(2), panel_bottom(1) - DIFFPLOT_PANEL_H, DIFFPLOT_PANEL_W, DIFFPLOT_PANEL_H,
		    diffplot_rgb_a) == 0);
	CHECK(count(p, 0, 0, p->w, DIFFPLOT_TOP, diffplot_rgb_a) >= 20 * 9);
	CHECK(count(p, 0, 0, p->w, DIFFPLOT_TOP, diffplot_rgb_b) >= 20 * 9);
}

static void test_picture(void)
{
	struct pic p;

	draw(&p);
	if (!p.px)
		return;
	test_bars_one_scale(&p);
	test_ttft(&p);
	test_verdicts_legend(&p);
	free(p.px);
}

/* No entry with a case: nothing appended. */
static void test_empty(void)
{
	cJSON *none = cJSON_Parse("[{\"level\":\"c1\"}]");
	struct buf png;
	struct diag d;

	buf_init(&png, 1 << 20);
	diag_init(&d);
	CHECK(diffplot_png(none, "a", "b", &png, &d) == ERR_OK && png.len == 0);
	buf_release(&png);
	cJSON_Delete(none);
}

/* Four cells, four gates (two bands): output_tps_ratio>=0.9 passes at 1.0,
 * fails at 0.5, is underpowered at 0.95 over a wide interval, and has no
 * value on the fourth cell; items carry members the picture ignores. */
static const char decision_json[] =
	"[{\"case\":\"p\",\"level\":\"c1\",\"verdict\":\"pass\",\"gates\":["
	"  {\"gate\":\"output_tps_ratio>=0.9\",\"verdict\":\"pass\",\"value\":1.0,\"threshold\":0.9,"
	"   \"ci_low\":0.95,\"ci_high\":1.05,\"mde\":0.05,\"advice\":\"x\",\"rounds\":6,\"stopped\":\"power\"},"
	"  {\"gate\":\"ttft_p50_ratio<=1.1\",\"verdict\":\"pass\",\"value\":1.02,\"threshold\":1.1,"
	"   \"ci_low\":0.98,\"ci_high\":1.06,\"mde\":0.05,\"advice\":\"x\"},"
	"  {\"gate\":\"success_rate>=1\",\"verdict\":\"pass\",\"value\":1,\"threshold\":1,"
	"   \"ci_low\":null,\"ci_high\":null,\"mde\":null,\"advice\":\"x\"},"
	"  {\"gate\":\"ttft_p95_ratio<=1.15\",\"verdict\":\"pass\",\"value\":1.0,\"threshold\":1.15,"
	"   \"ci_low\":0.9,\"ci_high\":1.1,\"mde\":0.1,\"advice\":\"x\"}]},"
	" {\"case\":\"p\",\"level\":\"c8\",\"verdict\":\"fail\",\"gates\":["
	"  {\"gate\":\"output_tps_ratio>=0.9\",\"verdict\":\"fail\",\"value\":0.5,\"threshold\":0.9,"
	"   \"ci_low\":0.4,\"ci_high\":0.6,\"mde\":0.1,\"advice\":\"x\"}]},"
	" {\"case\":\"q\",\"level\":\"r0.3\",\"verdict\":\"underpowered\",\"gates\":["
	"  {\"gate\":\"output_tps_ratio>=0.9\",\"verdict\":\"underpowered\",\"value\":0.95,\"threshold\":0.9,"
	"   \"ci_low\":0.7,\"ci_high\":1.2,\"mde\":0.3,\"advice\":\"x\"}]},"
	" {\"case\":\"q\",\"level\":\"c2\",\"verdict\":\"fail\",\"gates\":["
	"  {\"gate\":\"output_tps_ratio>=0.9\",\"verdict\":\"fail\",\"value\":null,\"threshold\":0.9,"
	"   \"ci_low\":null,\"ci_high\":null,\"mde\":null,\"advice\":\"no output_tps\"}]}]";

/* The centre of row r of band k. */
static int dec_row_y(int k, int r)
{
	int band = DIFFPLOT_DEC_HEAD + 4 * DIFFPLOT_DEC_ROW + DIFFPLOT_DEC_FOOT;

	return DIFFPLOT_DEC_TOP + k * band + DIFFPLOT_DEC_HEAD + r * DIFFPLOT_DEC_ROW + DIFFPLOT_DEC_ROW / 2;
}

/* Mean x of colour rgb on line y between x0 and x0 + w; -1 when none. */
static double mean_x(const struct pic *p, int x0, int w, int y, const unsigned char rgb[3])
{
	double sum = 0;
	int x, n = 0;

	for (x = x0; x < x0 + w; x++)
		if (is(p, x, y, rgb))
			sum += x, n++;
	return n ? sum / n : -1;
}

static void check_decision(const struct pic *p)
{
	static const unsigned char black[3] = {0, 0, 0}, white[3] = {255, 255, 255};
	int x0 = DIFFPLOT_DEC_LABEL, w = DIFFPLOT_DEC_W, gap = dec_row_y(0, 0) - DIFFPLOT_DEC_ROW / 2 + 1;
	double thr = mean_x(p, x0, w, gap, black), pass = mean_x(p, x0, w, dec_row_y(0, 0), diffplot_rgb_pass);
	double fail = mean_x(p, x0, w, dec_row_y(0, 1), diffplot_rgb_fail);
	int top = 0, bottom = 0;

	/* the threshold between the failed and the passed cell; 0 at the left
	 * edge, so the passed value (1.0) is twice as far as the failed (0.5) */
	CHECK(thr > 0 && fail > 0 && pass > thr && thr > fail);
	CHECK(fabs((pass - x0) / (fail - x0) - 2) < 0.05);
	CHECK(mean_x(p, x0, w, dec_row_y(0, 1), diffplot_rgb_pass) < 0);
	/* the underpowered interval, 0.7 to 1.2, is a third of the 0..1.5 axis */
	CHECK(count(p, x0, dec_row_y(0, 2), w, 1, diffplot_rgb_underpowered) > w / 3 - 6);
	CHECK(count(p, x0, dec_row_y(0, 2), w, 1, diffplot_rgb_fail) == 0);
	/* no value: a short red bar at the left edge */
	CHECK(count(p, x0, dec_row_y(0, 3), 12, 1, diffplot_rgb_fail) == 12);
	/* >= gate: tinted left of its threshold, white right of it */
	CHECK(!is(p, x0 + 2, gap, white) && !is(p, x0 + 2, gap, black) && is(p, x0 + w - 3, gap, white));
	/* <= gate (TTFT P50, panel 1): tinted right of its threshold */
	CHECK(is(p, x0 + w + DIFFPLOT_DEC_GAP + 2, gap, white) && !is(p, x0 + 2 * w + DIFFPLOT_DEC_GAP - 3, gap, white));
	/* the fourth gate wraps into the second band, its first row green */
	CHECK(count(p, x0, dec_row_y(1, 0), w, 1, diffplot_rgb_pass) > 7);
	CHECK(count(p, x0, dec_row_y(1, 1), w, 1, diffplot_rgb_pass) == 0);
	/* row labels in the cells' verdict colours */
	CHECK(extent(p, 14, dec_row_y(0, 1) - 4, dec_row_y(0, 1) + 4, diffplot_rgb_fail, &top, &bottom));
	CHECK(count(p, 0, dec_row_y(0, 2) - 4, x0 - 20, 9, diffplot_rgb_underpowered) > 0);
}

static void test_decision(void)
{
	cJSON *load = cJSON_Parse(decision_json), *bare = cJSON_Parse("[{\"case\":\"p\",\"gates\":[]}]");
	struct buf png;
	struct diag d;
	struct pic p;
	int w, h;

	buf_init(&png, 1 << 24);
	diag_init(&d);
	CHECK(load && bare);
	CHECK(diffplot_decision_png(load, "a", "b", &png, &d) == ERR_OK);
	CHECK(png.len > 8 && (p.px = tpng_decode(&png, &p.w, &p.h)) != NULL);
	diffplot_decision_size(4, 4, &w, &h);
	CHECK(w == DIFFPLOT_DEC_LABEL + 3 * (DIFFPLOT_DEC_W + DIFFPLOT_DEC_GAP) + 12);
	if (png.len > 8 && p.px && p.w == w && p.h == h)
		check_decision(&p);
	else
		CHECK(0);
	if (png.len > 8)
		free(p.px);
	png.len = 0;
	CHECK(diffplot_decision_png(bare, "a", "b", &png, &d) == ERR_OK && png.len == 0);
	buf_release(&png);
	cJSON_Delete(load);
	cJSON_Delete(bare);
}

int main(void)
{
	T_RUN(test_picture);
	T_RUN(test_empty);
	T_RUN(test_decision);
	return T_DONE();
}
