/*
 * Unit tests of diffplot: hand-made comparison cells drawn, the PNG read
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

/* A run's cell of case `id` at `level`: output throughput, TTFT P50 and
 * P95 as {median, min, max} (a median below 0: no figure). */
static struct loadcells_cell run_cell(const char *id, int open_loop, double level, const double tps[3],
				      const double p50[3], const double p95[3])
{
	struct loadcells_cell c;

	memset(&c, 0, sizeof(c));
	c.case_id = (char *)id;
	c.open_loop = open_loop;
	c.level_value = level;
	if (tps[0] >= 0)
		c.s.output_tps = (struct loadstat_fig){3, tps[0], tps[1], tps[2]};
	if (p50[0] >= 0)
		c.s.ttft_p50_ms = (struct loadstat_fig){3, p50[0], p50[1], p50[2]};
	if (p95[0] >= 0)
		c.s.ttft_p95_ms = (struct loadstat_fig){3, p95[0], p95[1], p95[2]};
	return c;
}

/* Two cases: "short" at c8 and c1 (c8 failed its gate; B has half A's
 * throughput there), "long" at r0.3 (underpowered, B absent, A without a
 * TTFT P95). */
static struct loadcells_cell runs[5];
static struct diff_cell cells[3];

static void make_cells(void)
{
	static const double none[3] = {-1, 0, 0};

	runs[0] = run_cell("short", 0, 8, (const double[3]){1000, 900, 1100}, (const double[3]){50, 40, 60},
			   (const double[3]){80, 70, 90});
	runs[1] = run_cell("short", 0, 8, (const double[3]){500, 450, 550}, (const double[3]){100, 90, 110},
			   (const double[3]){160, 150, 170});
	runs[2] = run_cell("short", 0, 1, (const double[3]){200, 190, 210}, (const double[3]){20, 19, 21},
			   (const double[3]){25, 24, 26});
	runs[3] = run_cell("short", 0, 1, (const double[3]){200, 195, 205}, (const double[3]){20, 19, 21},
			   (const double[3]){25, 24, 26});
	runs[4] = run_cell("long", 1, 0.3, (const double[3]){40, 30, 50}, (const double[3]){3000, 3000, 3000},
			   none);
	memset(cells, 0, sizeof(cells));
	cells[0] = (struct diff_cell){.a = &runs[0], .b = &runs[1], .named = &runs[0], .judged = 1,
				      .verdict = GATE_FAIL};
	cells[1] = (struct diff_cell){.a = &runs[2], .b = &runs[3], .named = &runs[2], .judged = 1,
				      .verdict = GATE_PASS};
	cells[2] = (struct diff_cell){.a = &runs[4], .named = &runs[4], .judged = 1,
				      .verdict = GATE_UNDERPOWERED};
}

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
	struct buf png;
	struct diag d;
	int w, h;

	buf_init(&png, 1 << 24);
	diag_init(&d);
	p->px = NULL;
	make_cells();
	CHECK(diffplot_png(cells, 3, "results/before (model m)", "results/after", &png, &d) == ERR_OK);
	CHECK(png.len > 8 && (p->px = tpng_decode(&png, &p->w, &p->h)) != NULL);
	diffplot_size(2, &w, &h);
	CHECK(p->px && p->w == w && p->h == h);
	buf_release(&png);
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

/* No cell: nothing appended. */
static void test_empty(void)
{
	struct buf png;
	struct diag d;

	buf_init(&png, 1 << 20);
	diag_init(&d);
	CHECK(diffplot_png(cells, 0, "a", "b", &png, &d) == ERR_OK && png.len == 0);
	buf_release(&png);
}

/* Four cells, four gates (two bands): output_tps_ratio>=0.9 passes at 1.0,
 * fails at 0.5, is underpowered at 0.95 over a wide interval, and has no
 * value on the fourth cell. */
static struct diff_judgement judged(const char *gate, enum gate_verdict v, double value, double threshold,
				    double lo, double hi)
{
	struct diff_judgement j = {gate, v, !isnan(value), value, threshold, lo, hi, NAN, "x"};

	return j;
}

static struct diff_judgement dec_p[4], dec_q[1], dec_r[1], dec_s[1];
static struct loadcells_cell dec_runs[4];
static struct diff_cell dec_cells[4];

static void make_decision(void)
{
	static const double none[3] = {-1, 0, 0};
	static const char *const ids[] = {"p", "p", "q", "q"};
	static const double levels[] = {1, 8, 0.3, 2};
	static const enum gate_verdict verdicts[] = {GATE_PASS, GATE_FAIL, GATE_UNDERPOWERED, GATE_FAIL};
	struct diff_judgement *gates[] = {dec_p, dec_q, dec_r, dec_s};
	static const size_t ngates[] = {4, 1, 1, 1};
	int i;

	dec_p[0] = judged("output_tps_ratio>=0.9", GATE_PASS, 1.0, 0.9, 0.95, 1.05);
	dec_p[1] = judged("ttft_p50_ratio<=1.1", GATE_PASS, 1.02, 1.1, 0.98, 1.06);
	dec_p[2] = judged("success_rate>=1", GATE_PASS, 1, 1, NAN, NAN);
	dec_p[3] = judged("ttft_p95_ratio<=1.15", GATE_PASS, 1.0, 1.15, 0.9, 1.1);
	dec_q[0] = judged("output_tps_ratio>=0.9", GATE_FAIL, 0.5, 0.9, 0.4, 0.6);
	dec_r[0] = judged("output_tps_ratio>=0.9", GATE_UNDERPOWERED, 0.95, 0.9, 0.7, 1.2);
	dec_s[0] = judged("output_tps_ratio>=0.9", GATE_FAIL, NAN, 0.9, NAN, NAN);
	snprintf(dec_s[0].advice, sizeof(dec_s[0].advice), "no output_tps");
	for (i = 0; i < 4; i++) {
		dec_runs[i] = run_cell(ids[i], i == 2, levels[i], none, none, none);
		dec_cells[i] = (struct diff_cell){.a = &dec_runs[i], .named = &dec_runs[i], .gates = gates[i],
						  .ngates = ngates[i], .judged = 1, .verdict = verdicts[i]};
	}
}

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
	struct diff_cell bare;
	struct buf png;
	struct diag d;
	struct pic p;
	int w, h;

	buf_init(&png, 1 << 24);
	diag_init(&d);
	make_decision();
	CHECK(diffplot_decision_png(dec_cells, 4, "a", "b", &png, &d) == ERR_OK);
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
	bare = (struct diff_cell){.a = &dec_runs[0], .named = &dec_runs[0]};
	CHECK(diffplot_decision_png(&bare, 1, "a", "b", &png, &d) == ERR_OK && png.len == 0);
	buf_release(&png);
}

int main(void)
{
	T_RUN(test_picture);
	T_RUN(test_empty);
	T_RUN(test_decision);
	return T_DONE();
}
