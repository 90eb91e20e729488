/*
 * Unit tests of diffplot: a hand-made diff "load" array drawn, the PNG read
 * back, and each run's marks looked for where the header says they are:
 * A left of a level's tick and B right of it, bars spanning min to max on
 * one scale for both runs, verdicts colouring level labels, the legend
 * naming both runs.
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

int main(void)
{
	T_RUN(test_picture);
	T_RUN(test_empty);
	return T_DONE();
}
